"""Find things in a run: search (``/``, ``n``, ``N``), tool-call filters (``x``, ``F``), problems (``p``, ``P``).

An object the run view (:class:`~cursor_watch.tui.screens.run.RunScreen`) holds: the screen
composes the bars and the panes and hands its keys over; the finder runs the queries and moves
the panes to what they found. The
matching rules are in :mod:`cursor_watch.query.search` and :mod:`cursor_watch.query.filters`; here is
only the bookkeeping of what is shown: the current match (``i/N`` in stream order,
wrapping), the table's filter, the transcript's highlights and dimmed markers.

A search runs on the event loop a slice (a few ms) at a time, so keys and frames go on
while it reads a gigabyte of payloads; its first match is shown as soon as it is found.
Filters and search combine: a match inside a tool call the filter hides is skipped.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text

from ...fmt import plural
from ...query.filters import CallFilter, FilteredCalls, FilterError, PROBLEM_STATUSES, is_problem_note
from ...query.search import Hit, Query, QueryError, Search, timeline_position
from ...safe import view_redaction
from ..messages import DetailRequested
from ..widgets.query_bar import QueryBar
from ..widgets.tool_table import ToolTable
from ..widgets.transcript import Transcript

if TYPE_CHECKING:
    from ...core.model import Session
    from ...core.runs import Run
    from ...stream.watch import Feed

DEBOUNCE_S = 0.08  # typing: a search starts when the keys pause this long
STATUS_EVERY_S = 0.1  # the bar's status while a search runs
HIGHLIGHT_EVERY_S = 0.5  # the transcript's payload-match badges while a search runs
MANY_HITS = 2_000  # more pieces with matches than this: "i/N" waits for the end of the search
LIVE_REFRESH_S = 0.5  # a streaming run is searched again at most this often


class FinderScreen(Protocol):
    """What the finder needs of its screen (:class:`~cursor_watch.tui.screens.run.RunScreen`):
    the run shown, its model and feed, and the screen's Textual methods."""

    run: Run
    feed: Feed

    @property
    def session(self) -> Session: ...

    def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def set_timer(self, delay: float, callback: Any = None, *, name: str | None = None,
                  pause: bool = False) -> Any: ...

    def post_message(self, message: Any) -> bool: ...


class Finder:
    """Search, filter and problem jumps over one run view: the screen holds one
    (``screen.finder``) and gives it its keys and its query bars' messages.

    Args:
        screen: the run view (:class:`FinderScreen`): its widgets (the transcript, the tool table,
            the search and filter bars) are found through it.
    """

    def __init__(self, screen: FinderScreen) -> None:
        self.screen = screen
        self.search: Search | None = None
        self.search_error = ""
        self._regex = False
        self._search_text = ""
        self._search_task: asyncio.Task | None = None
        self._debounce: Any = None
        self._cur: tuple[str, Any, str, int] | None = None  # (kind, key, field, match within the hit)
        self._visible_key: tuple | None = None
        self._visible: tuple[list[Hit], list[int], int, dict] = ([], [], 0, {})
        self._last_status = 0.0
        self._last_highlight = 0.0
        self._live_dirty = False
        self._last_live = 0.0
        self._payload_shown: dict[str, int] = {}
        self.call_filter = CallFilter()
        self._filter_text = ""
        self._problems_only = False
        self._collapsed: set[str] = set()  # sub-agent calls whose inner calls are folded (c)
        self._filter_version = 0
        self._filter_task: asyncio.Task | None = None
        self._problem_line: int | None = None
        self._problems_cache: tuple[tuple, list] | None = None

    # -- widgets ----------------------------------------------------------------------------

    def _search_bar(self) -> QueryBar:
        return self.screen.query_one("#search-bar", QueryBar)

    def _filter_bar(self) -> QueryBar:
        return self.screen.query_one("#filter-bar", QueryBar)

    # -- search -----------------------------------------------------------------------------

    def open_search(self) -> None:
        """``/``: open the search bar (again, with the last search)."""
        self._filter_bar().close()
        self._search_bar().open()

    def bar_changed(self, event: QueryBar.Changed) -> None:
        event.stop()
        if event.bar.id == "search-bar":
            self._search_text = event.value
            if self._debounce is not None:
                self._debounce.stop()
            self._debounce = self.screen.set_timer(DEBOUNCE_S, self._start_search)
        elif event.bar.id == "filter-bar":
            self._filter_text = event.value
            self._apply_filter()

    def regex_toggled(self, event: QueryBar.RegexToggled) -> None:
        event.stop()
        self._regex = event.regex
        self._start_search()

    def bar_submitted(self, event: QueryBar.Submitted) -> None:
        """Enter keeps the query; on a match inside a tool call's payload it opens its detail."""
        event.stop()
        if event.bar.id == "search-bar":
            if self._debounce is not None:
                self._debounce.stop()
                self._debounce = None
                if self.search is None or self.search.query.text != self._search_text:
                    self._start_search()
            self._focus_panes()
            if self._cur is not None and self._cur[2] == "payload":
                self.open_current_match()
        else:
            event.bar.close()
            self._focus_panes()

    def bar_cleared(self, event: QueryBar.Cleared) -> None:
        event.stop()
        if event.bar.id == "search-bar":
            self.clear_search()
        else:
            self._filter_text = ""
            self._apply_filter()
        self._focus_panes()

    def _focus_panes(self) -> None:
        self.screen.query_one(ToolTable).focus()

    def clear_search(self) -> None:
        """Escape in the search bar: no search, no highlights."""
        self._stop_search()
        self.search = None
        self.search_error = ""
        self._cur = None
        self._search_text = ""
        self._payload_shown = {}
        self.screen.query_one(Transcript).set_search(None)
        bar = self._search_bar()
        bar.set_status("")
        bar.close()

    def _stop_search(self) -> None:
        if self._search_task is not None:
            self._search_task.cancel()
            self._search_task = None
        if self.search is not None:
            self.search.close()

    def _start_search(self) -> None:
        """Run the typed query from the start (typing, Ctrl+R)."""
        self._debounce = None
        self._stop_search()
        self._cur = None
        self._visible_key = None
        text = self._search_text
        bar = self._search_bar()
        transcript = self.screen.query_one(Transcript)
        if not text:
            self.search = None
            self.search_error = ""
            self._payload_shown = {}
            transcript.set_search(None)
            bar.set_status("")
            return
        try:
            query = Query(text, regex=self._regex, redact=view_redaction())
        except QueryError as err:
            self.search = None
            self.search_error = str(err)
            self._payload_shown = {}
            transcript.set_search(None)
            bar.set_status(str(err), error=True)
            return
        self.search_error = ""
        run = self.screen.run
        self.search = Search(self.screen.session, run.reread, query, file=self.screen.feed.source.byte_file(),
                             byte_range=(run.first_offset, run.end_offset))
        self._payload_shown = {}
        transcript.set_search(query, {})
        bar.set_status("searching…")
        self._search_task = asyncio.create_task(self._run_search(self.search))

    async def _run_search(self, search: Search) -> None:
        try:
            while True:
                done = search.step()
                now = time.monotonic()
                if done or now - self._last_status >= STATUS_EVERY_S:
                    self._last_status = now
                    self._search_progress(search)
                if done:
                    return
                await asyncio.sleep(0.01 if search.waiting else 0)
        except asyncio.CancelledError:
            raise
        finally:
            if self._search_task is asyncio.current_task():
                self._search_task = None

    def _search_progress(self, search: Search) -> None:
        """Show what the running search found so far (status, highlights, the first match)."""
        if search is not self.search:
            return
        now = time.monotonic()
        if search.done or now - self._last_highlight >= HIGHLIGHT_EVERY_S:
            self._last_highlight = now
            payload = search.payload_hits()
            if payload != self._payload_shown:
                self._payload_shown = payload
                self.screen.query_one(Transcript).set_search(search.query, payload)
        if self._cur is None and search.total and self.visible_matches()[2]:
            self.go_to_match(0)
        else:
            self.update_search_status()

    def visible_matches(self) -> tuple[list[Hit], list[int], int, dict]:
        """``(hits, prefix, total, position of each hit)``: the search's matches the filter leaves."""
        search = self.search
        if search is None:
            return [], [], 0, {}
        flt = self.screen.query_one(ToolTable).filtered
        key = (id(search), len(search._hits), search.total, self._filter_version,
               len(flt.rows) if flt is not None else -1)
        if key == self._visible_key:
            return self._visible
        hits = search.hits
        if flt is not None:
            hits = [h for h in hits if h.kind != "tool" or flt.row_of(h.call_index) is not None
                    or not flt.done and h.call_index >= flt._next]
        prefix, n = [], 0
        where = {}
        for j, h in enumerate(hits):
            prefix.append(n)
            where[(h.kind, h.key, h.field)] = j
            n += h.count
        self._visible = (hits, prefix, n, where)
        self._visible_key = key
        return self._visible

    def current_match_index(self) -> int | None:
        """The index (0-based, stream order) of the current match among the visible ones."""
        if self._cur is None:
            return None
        hits, prefix, total, where = self.visible_matches()
        j = where.get(self._cur[:3])
        if j is None:
            return None
        return prefix[j] + min(self._cur[3], hits[j].count - 1)

    def update_search_status(self) -> None:
        """``3/17``, ``no matches``, ``searching 40%`` in the search bar."""
        search = self.search
        bar = self._search_bar()
        if search is None:
            if self.search_error:
                bar.set_status(self.search_error, error=True)
            return
        if not search.done and len(search._hits) > MANY_HITS:
            # ordering this many hits ten times a second would cost the UI more than it shows
            bar.set_status(Text(f"{search.total:,} so far  searching {search.progress:.0%}"))
            return
        _hits, _prefix, total, _where = self.visible_matches()
        i = self.current_match_index()
        t = Text()
        if total:
            t.append(f"{(i if i is not None else 0) + 1}/{total:,}", style="bold")
        elif search.done:
            t.append("no matches", style="bold")
        if not search.done:
            t.append(("  " if total else "") + f"searching {search.progress:.0%}")
        flt = self.screen.query_one(ToolTable).filtered
        if flt is not None and search.total != total:
            t.append(f"  ({search.total - total:,} in filtered-out calls)", style="dim")
        bar.set_status(t)

    def next_match(self, delta: int) -> None:
        """``n`` / ``N``: the next / previous match, in stream order, wrapping."""
        if self.search is None:
            self.screen.notify("No search: press / to search", timeout=2)
            return
        total = self.visible_matches()[2]
        if not total:
            self.update_search_status()
            return
        i = self.current_match_index()
        i = (0 if delta > 0 else total - 1) if i is None else (i + delta) % total
        self.go_to_match(i)

    def go_to_match(self, i: int) -> None:
        """Show match ``i``: its transcript entry, and a tool call's row selected."""
        hits, prefix, total, _where = self.visible_matches()
        if not 0 <= i < total:
            return
        j = bisect.bisect_right(prefix, i) - 1
        hit, k = hits[j], i - prefix[j]
        self._cur = (hit.kind, hit.key, hit.field, k)
        session = self.screen.session
        pos = timeline_position(session, hit)
        transcript = self.screen.query_one(Transcript)
        table = self.screen.query_one(ToolTable)
        if hit.kind == "tool":
            row = table.row_of(hit.call_index)
            if row is not None:
                table.move_cursor(row)
            if pos >= 0:
                transcript.show_entry(session, pos, match=k if hit.field == "summary" else -1,
                                      mark=hit.field == "payload")
        elif pos >= 0:
            transcript.show_entry(session, pos, match=k)
        self.update_search_status()

    def current_payload_match(self, call_id: str) -> int:
        """The current match's index within ``call_id``'s payload, or -1."""
        if self._cur is not None and self._cur[0] == "tool" and self._cur[1] == call_id and self._cur[2] == "payload":
            return self._cur[3]
        return -1

    def open_current_match(self) -> None:
        """Open the detail of the tool call holding the current match (at the match)."""
        if self._cur is not None and self._cur[0] == "tool":
            self.screen.post_message(DetailRequested(self._cur[1]))

    def changed(self, changes: list) -> None:
        """The run grew (the 15 Hz tick): keep a finished search and the problems up to date."""
        if not changes:
            return
        self._live_dirty = True
        self._problems_cache = None
        search = self.search
        if search is None or not search.done:
            return
        now = time.monotonic()
        if now - self._last_live >= LIVE_REFRESH_S:
            self._last_live = now
            self._live_dirty = False
            search.refresh()
            self._search_task = asyncio.create_task(self._run_search(search))

    # -- filters ----------------------------------------------------------------------------

    def open_filter(self) -> None:
        """``F``: open the filter bar (``status:NAME``, ``tool:NAME``, free text)."""
        self._search_bar().close()
        self._filter_bar().open()

    def clear_filter(self) -> None:
        """Every tool call again (the palette's "Clear the tool-call filter")."""
        self._problems_only = False
        self._filter_text = ""
        bar = self._filter_bar()
        bar.set_value("")
        bar.close()
        self._apply_filter()

    def toggle_problems(self) -> None:
        """``x``: only the calls that failed, were rejected or are incomplete (again: all)."""
        self._problems_only = not self._problems_only
        self._apply_filter()

    def toggle_subagent(self) -> None:
        """``c``: fold (again: unfold) the calls that ran inside the sub-agent call under the
        cursor, or inside the sub-agent of the inner call under it."""
        cid = self.screen.query_one(ToolTable).selected_call_id()
        call = self.screen.session.tool_calls.get(cid) if cid is not None else None
        if call is None:
            return
        parent = call.parent_call_id or (call.call_id if call.kind == "task" else "")
        if not parent:
            return
        if parent in self._collapsed:
            self._collapsed.discard(parent)
        else:
            self._collapsed.add(parent)
        self._apply_filter()
        parent_call = self.screen.session.tool_calls.get(parent)
        row = self.screen.query_one(ToolTable).row_of(parent_call.index) if parent_call is not None else None
        if row is not None:
            self.screen.query_one(ToolTable).move_cursor(row)

    def _apply_filter(self) -> None:
        bar = self._filter_bar()
        table = self.screen.query_one(ToolTable)
        try:
            flt = CallFilter(self._filter_text, problems_only=self._problems_only,
                             collapsed=frozenset(self._collapsed))
        except FilterError as err:
            bar.set_status(str(err), error=True)
            return
        self.call_filter = flt
        self._filter_version += 1
        if self._filter_task is not None:
            self._filter_task.cancel()
            self._filter_task = None
        transcript = self.screen.query_one(Transcript)
        if not flt.active:
            table.set_filter(None)
            transcript.set_dimmed(None)
            bar.set_status("")
        else:
            filtered = FilteredCalls(self.screen.session, flt)
            filtered.step(0.02)
            table.set_filter(filtered)
            transcript.set_dimmed(lambda call, f=flt: not f.passes(call))
            if not filtered.done:
                self._filter_task = asyncio.create_task(self._build_filter(filtered))
        self.show_filter_line()
        self._visible_key = None
        if self.search is not None:
            self.update_search_status()

    async def _build_filter(self, filtered: FilteredCalls) -> None:
        table = self.screen.query_one(ToolTable)
        last = 0.0
        while not filtered.step():
            if time.monotonic() - last >= STATUS_EVERY_S:
                last = time.monotonic()
                table.set_filter(filtered)
                self.show_filter_line()
            await asyncio.sleep(0)
        table.set_filter(filtered)
        self.show_filter_line()
        if self.search is not None:
            self._visible_key = None
            self.update_search_status()

    def show_filter_line(self) -> None:
        """The line above the table's titles: the filter and ``N of M calls``."""
        from textual.widgets import Static

        line = self.screen.query_one("#filter-line", Static)
        table = self.screen.query_one(ToolTable)
        flt = table.filtered
        if flt is None:
            line.display = False
            return
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" filter ", style="bold reverse")
        t.append(" " + flt.filter.describe(), style="bold")
        total = len(self.screen.session.tool_calls)
        t.append(f"  {len(flt.rows):,} of {plural(total, 'call')}", style="")
        if not flt.done:
            t.append(f"  filtering {flt.progress:.0%}", style="dim")
        line.update(t, layout=False)
        line.display = True
        bar = self._filter_bar()
        if bar.shown:
            bar.set_status(f"{len(flt.rows):,} of {plural(total, 'call')}")

    def tick(self) -> None:
        """Once a second: the filter line's counts (calls arrive in a live run)."""
        if self.screen.query_one(ToolTable).filtered is not None:
            self.show_filter_line()

    # -- problems ---------------------------------------------------------------------------

    def problems(self) -> list[tuple[int, str, Any, int]]:
        """``(line, kind, key, call index)`` of every problem in stream order: failed, rejected
        and incomplete tool calls, and error notes (:func:`~cursor_watch.query.filters.is_problem_note`)."""
        s = self.screen.session
        key = (len(s.tool_calls), tuple(s.tool_counts.values()), len(s.notes))
        if self._problems_cache is not None and self._problems_cache[0] == key:
            return self._problems_cache[1]
        out = []
        if any(s.tool_counts[st] for st in PROBLEM_STATUSES):
            for call in s.tool_calls.values():
                if call.status in PROBLEM_STATUSES:
                    out.append((call.started_line or call.completed_line, "tool", call.call_id, call.index))
        for i, note in enumerate(s.notes):
            if is_problem_note(note):
                out.append((note.line, "note", i, 0))
        out.sort(key=lambda p: (p[0], p[1] != "tool"))
        self._problems_cache = (key, out)
        return out

    def next_problem(self, delta: int) -> None:
        """``p`` / ``P``: the next / previous problem in the transcript, its row selected."""
        problems = self.problems()
        if not problems:
            self.screen.notify("No problems in this run: no failed, rejected or incomplete call, no error note.",
                        timeout=2.5)
            return
        line = self._problem_line
        if delta > 0:
            nxt = next((p for p in problems if line is None or p[0] > line), None)
            if nxt is None:
                nxt = problems[0]
                self.screen.notify("Back to the first problem", timeout=1.5)
        else:
            prev = [p for p in problems if line is None or p[0] < line]
            nxt = prev[-1] if prev else problems[-1]
            if not prev:
                self.screen.notify("Back to the last problem", timeout=1.5)
        self._problem_line = nxt[0]
        line_no, kind, key, index = nxt
        session = self.screen.session
        pos = timeline_position(session, Hit(line_no, kind, key, "text", 1, index))
        transcript = self.screen.query_one(Transcript)
        if pos >= 0:
            transcript.show_entry(session, pos, mark=True)
        if kind == "tool":
            table = self.screen.query_one(ToolTable)
            row = table.row_of(index)
            if row is not None:
                table.move_cursor(row)
