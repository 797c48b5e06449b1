"""Pilot tests: search (/, n, N, Ctrl+R; a call's detail says how many matches it holds), filters
(x, F), problems (p, P), the runs list's /."""

from __future__ import annotations

from apphelpers import make_app, screen_text, wait_until
from captures import REJECTED, need
from conftest import SAMPLES, run_bytes
from cursor_watch.tui.screens.detail import ToolDetailScreen
from cursor_watch.query.search import Query, Search
from cursor_watch.stream.sources import FileSource
from cursor_watch.tui.widgets.query_bar import QueryBar
from cursor_watch.tui.widgets.tool_table import ToolTable
from cursor_watch.tui.widgets.transcript import Transcript

SIZE = (160, 48)
PLAIN = SAMPLES / "plain-tools.jsonl"
PARALLEL = SAMPLES / "parallel-failed-rejected.jsonl"


def expected_total(path, text: str, regex: bool = False) -> int:
    raw = path.read_bytes()
    mon = run_bytes(raw)
    search = Search(mon.session, lambda off, size: raw[off: off + size], Query(text, regex=regex))
    while not search.step(1.0):
        pass
    return search.total


def status(app) -> str:
    bar = app.run_view().query_one("#search-bar", QueryBar)
    return str(bar.query_one(".query-bar--status").content)


async def type_text(pilot, text: str) -> None:
    for ch in text:
        await pilot.press("space" if ch == " " else ch)


async def open_search(app, pilot, text: str) -> None:
    await pilot.press("slash")
    await type_text(pilot, text)
    screen = app.run_view()
    await wait_until(pilot, lambda: screen.search is not None and screen.search.query.text == text
                     and screen.search.done)


async def test_incremental_count_and_smart_case():
    app = make_app(FileSource(str(PLAIN)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await open_search(app, pilot, "disc")
        assert status(app).startswith(f"1/{expected_total(PLAIN, 'disc')}")
        await type_text(pilot, "ount")
        screen = app.run_view()
        await wait_until(pilot, lambda: screen.search is not None and screen.search.query.text == "discount" and screen.search.done)
        total = expected_total(PLAIN, "discount")
        assert status(app) == f"1/{total}"
        # a capital letter makes it case-sensitive
        for _ in range(8):
            await pilot.press("backspace")
        await type_text(pilot, "Decimal")
        await wait_until(pilot, lambda: screen.search is not None and screen.search.query.text == "Decimal" and screen.search.done)
        sensitive = expected_total(PLAIN, "Decimal")
        assert status(app) == f"1/{sensitive}"
        assert sensitive < expected_total(PLAIN, "decimal")
        # nothing found
        await type_text(pilot, "zzz")
        await wait_until(pilot, lambda: screen.search is not None and screen.search.query.text == "Decimalzzz" and screen.search.done)
        assert status(app) == "no matches"


async def test_n_and_shift_n_go_in_stream_order_and_wrap():
    app = make_app(FileSource(str(PLAIN)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await open_search(app, pilot, "pricing")
        await pilot.press("enter")  # keep it; the focus goes back to the panes
        screen = app.run_view()
        total = expected_total(PLAIN, "pricing")
        assert total > 4 and status(app) == f"1/{total}"
        seen = [screen.finder._cur]
        for i in range(2, total + 1):
            await pilot.press("n")
            assert status(app) == f"{i}/{total}"
            seen.append(screen.finder._cur)
        assert len(set(seen)) == total  # every match visited once
        hits = screen.search.hits
        order = {(h.kind, h.key, h.field): j for j, h in enumerate(hits)}
        assert [order[c[:3]] for c in seen] == sorted(order[c[:3]] for c in seen)  # stream order
        await pilot.press("n")
        assert status(app) == f"1/{total}"  # wraps
        await pilot.press("N")
        assert status(app) == f"{total}/{total}"
        assert screen.finder._cur == seen[-1]


def filter_applied(app, text: str | None = None) -> bool:
    """The run view's tool-call filter (``x``, or ``text`` typed in the filter bar) is in effect:
    the bar's text taken, the table's rows chosen to the end."""
    screen = app.run_view()
    table = screen.query_one(ToolTable)
    return ((text is None or screen.finder._filter_text == text) and table.filtered is not None and table.filtered.done)


async def test_a_transcript_match_scrolls_the_transcript_and_is_highlighted():
    app = make_app(FileSource(str(PLAIN)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await open_search(app, pilot, "regression test")
        transcript = app.run_view().query_one(Transcript)
        await wait_until(pilot, lambda: any(e.hits for e in transcript._entries))  # the jump has lit its entry
        lit = [e for e in transcript._entries if e.hits]
        assert lit and lit[-1].kind == "segment"
        assert not transcript.following  # a jump holds the view still


async def test_regex_and_an_invalid_regex():
    app = make_app(FileSource(str(PLAIN)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("slash")
        await pilot.press("ctrl+r")
        await type_text(pilot, r"apply_\w+")
        screen = app.run_view()
        await wait_until(pilot, lambda: screen.search is not None and screen.search.done
                         and screen.search.query.text == r"apply_\w+")
        assert screen.search.query.regex
        total = expected_total(PLAIN, r"apply_\w+", regex=True)
        assert status(app) == f"1/{total} · regex"
        await pilot.press("backspace", "backspace", "backspace")
        await type_text(pilot, "discount(")
        await wait_until(pilot, lambda: screen.search is None and screen.finder.search_error)
        assert "invalid regular expression" in status(app)
        assert app.is_running and isinstance(app.screen, type(screen))
        await pilot.press("ctrl+r")  # literal again: "(" is just a character
        await wait_until(pilot, lambda: screen.search is not None and screen.search.done)
        assert status(app) == f"1/{expected_total(PLAIN, 'apply_discount(')}"
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.search is None and not screen.query_one("#search-bar", QueryBar).shown)


async def test_a_match_in_shell_stdout_selects_the_call_and_opens_its_detail_at_the_match():
    app = make_app(FileSource(str(PLAIN)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await open_search(app, pilot, "FAILURES")  # only in the failing pytest call's output
        assert status(app) == "1/1"
        table = app.run_view().query_one(ToolTable)
        assert table.row_plain(table.cursor_row)[2:4] == ["shell", "pytest -q (exit 1)"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        detail = app.screen
        assert detail.call.tool == "shell" and detail.match == 0
        assert "search: 1 match for FAILURES" in screen_text(detail)
        widget, line = detail._target
        body = detail.query_one("#detail-body")

        def match_on_screen() -> bool:
            y = widget.virtual_region.y + line
            return body.scroll_y <= y < body.scroll_y + body.size.height

        await wait_until(pilot, match_on_screen)  # it scrolls to the match
        assert "FAILURES" in widget.content.plain


async def test_x_shows_only_problems_and_the_header_counts_them():
    app = make_app(FileSource(str(PARALLEL)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        table = app.run_view().query_one(ToolTable)
        total = table.row_count
        await pilot.press("x")
        await wait_until(pilot, lambda: filter_applied(app))
        statuses = [table.row_plain(i)[1] for i in range(table.row_count)]
        assert statuses and all(s.split()[-1] in ("failure", "rejected", "incomplete") for s in statuses)
        line = str(app.run_view().query_one("#filter-line").content)
        assert "problems only" in line and f"{table.row_count} of {total} calls" in line
        await pilot.press("x")
        await wait_until(pilot, lambda: table.filtered is None)
        assert table.row_count == total and not app.run_view().query_one("#filter-line").display


async def test_filter_bar_status_tool_and_words():
    app = make_app(FileSource(str(PARALLEL)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        table = app.run_view().query_one(ToolTable)
        bar = app.run_view().query_one("#filter-bar", QueryBar)

        async def filt(text: str) -> list[list[str]]:
            bar.set_value(text)
            await wait_until(pilot, lambda: filter_applied(app, text))
            return [table.row_plain(i) for i in range(table.row_count)]

        await pilot.press("F")
        assert bar.shown
        rows = await filt("status:rejected")
        assert rows and all(r[1] == "⊘ rejected" for r in rows)
        rows = await filt("tool:webFetch")
        assert [r[2] for r in rows] == ["webFetch"]
        rows = await filt("curl")
        assert len(rows) == 1 and "curl" in rows[0][3]
        rows = await filt("tool:shell status:success mypy")
        assert len(rows) == 1 and rows[0][3].startswith("mypy app")
        rows = await filt("status:nonsense")
        assert "unknown status" in str(bar.query_one(".query-bar--status").content)
        await pilot.press("escape")
        await wait_until(pilot, lambda: table.filtered is None and not bar.shown)


async def test_markers_of_filtered_out_calls_are_dim():
    app = make_app(FileSource(str(PARALLEL)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("x")
        await wait_until(pilot, lambda: filter_applied(app))
        transcript = app.run_view().query_one(Transcript)
        session = app.session
        for entry in transcript._entries:
            if entry.kind == "tool":
                transcript._render(entry, session)
                dim = all(seg.style is not None and seg.style.dim for seg in entry.lines[0] if seg.text.strip())
                assert dim == (session.tool_calls[entry.key].status not in ("failure", "rejected", "incomplete"))


async def test_p_jumps_to_each_problem_in_stream_order_and_selects_its_row():
    app = make_app(FileSource(str(PARALLEL)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        screen = app.run_view()
        table = screen.query_one(ToolTable)
        problems = screen.finder.problems()
        kinds = [p[1] for p in problems]
        assert "note" in kinds and kinds.count("tool") == 4  # reconnecting/retry; 3 rejected + 1 failed
        lines = []
        for p in problems:
            await pilot.press("p")
            lines.append(screen.finder._problem_line)
            if p[1] == "tool":
                assert table.cursor_row == table.row_of(p[3])
                assert table.row_plain(table.cursor_row)[1].split()[-1] in ("failure", "rejected")
        assert lines == [p[0] for p in problems] == sorted(lines)
        await pilot.press("p")
        assert screen.finder._problem_line == problems[0][0]  # wraps
        await pilot.press("P")
        assert screen.finder._problem_line == problems[-1][0]


async def test_search_and_filter_combine():
    app = make_app(FileSource(str(PARALLEL)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await open_search(app, pilot, "passed")  # in the successful shell calls' output
        everything = expected_total(PARALLEL, "passed")
        assert status(app) == f"1/{everything}"
        await pilot.press("enter")  # the first match is in a call's output: its detail opens
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        await pilot.press("escape")
        await pilot.press("x")  # problems only: the successful calls' matches are hidden
        await wait_until(pilot, lambda: filter_applied(app))
        screen = app.run_view()
        hidden = sum(h.count for h in screen.search.hits if h.kind == "tool")
        shown = everything - hidden
        assert hidden > 0
        text = status(app)
        assert (text.startswith(f"1/{shown}") if shown else text.startswith("no matches"))
        assert f"({hidden} in filtered-out calls)" in text


async def test_runs_list_slash_filters_runs(tmp_path):
    for name in ("plain-tools", "partial-output", "parallel-failed-rejected"):
        (tmp_path / f"{name}.jsonl").write_bytes((SAMPLES / f"{name}.jsonl").read_bytes())
    from cursor_watch.stream.sources import open_sources
    from cursor_watch.tui.widgets.runs_table import RunsTable

    sources, dirs = open_sources([str(tmp_path)], None)
    app = make_app(sources, directories=dirs)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and app.screen.query_one(RunsTable).row_count == 3)
        await pilot.press("slash")
        await type_text(pilot, "parallel")
        runs, table = app.screen, app.screen.query_one(RunsTable)
        await wait_until(pilot, lambda: runs._query is not None and runs._query.text == "parallel")  # applied
        assert [r.source for r in table.rows] == ["parallel-failed-rejected.jsonl"]
        bar = app.screen.query_one("#runs-filter", QueryBar)
        assert "1 of 3 runs" in str(bar.query_one(".query-bar--status").content)
        bar.set_value("Composer")  # a model: capital, case-sensitive
        await wait_until(pilot, lambda: runs._query is not None and runs._query.text == "Composer")
        assert len(table.rows) == 2
        await pilot.press("escape")
        await wait_until(pilot, lambda: runs._query is None)
        assert len(table.rows) == 3


async def test_the_palette_lists_search_filter_and_jump_actions():
    app = make_app(FileSource(str(PLAIN)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        for title in ("Search the run", "Next match", "Previous match", "Clear the search", "Problems only",
                      "Filter tool calls", "Clear the tool-call filter", "Next problem", "Previous problem",
                      "Regular expression search on/off"):
            assert title in titles


async def test_e_exports_the_shown_run_as_html(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(FileSource(str(PLAIN)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("e")
        want = tmp_path / f"cursor-watch-{app.session.session_id}.html"
        await wait_until(pilot, lambda: want.exists())
        html = want.read_text()
        assert html.count("data-call-id=") >= len(app.session.tool_calls)
        assert (want.stat().st_mode & 0o777) == 0o600
        assert any("Exported to" in n.message for n in app._notifications)


async def test_escape_in_the_panes_clears_a_kept_search_before_leaving_the_run(tmp_path):
    for name in ("plain-tools", "partial-output"):
        (tmp_path / f"{name}.jsonl").write_bytes((SAMPLES / f"{name}.jsonl").read_bytes())
    from cursor_watch.tui.screens.run import RunScreen
    from cursor_watch.tui.screens.runs import RunsScreen
    from cursor_watch.stream.sources import open_sources

    sources, dirs = open_sources([str(tmp_path)], None)
    app = make_app(sources, directories=dirs)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        await open_search(app, pilot, "the")
        await pilot.press("enter")
        if not isinstance(app.screen, RunScreen):  # a match in a payload opened its detail
            await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        assert app.run_view().search is not None
        await pilot.press("escape")  # clears the search, stays in the run
        await wait_until(pilot, lambda: app.run_view().search is None)
        assert isinstance(app.screen, RunScreen)
        await pilot.press("escape")  # then back to the list
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))


# -- a search counts an occurrence once, where the screen shows it ---------------------------------

async def test_detail_lists_the_matches_the_search_counted():
    from apphelpers import make_app, screen_text, wait_until
    from cursor_watch.tui.screens.detail import ToolDetailScreen
    from cursor_watch.stream.sources import FileSource

    need(REJECTED)
    app = make_app(FileSource(str(REJECTED)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("slash", *"uname", "enter")
        screen = app.screen
        await wait_until(pilot, lambda: screen.search is not None and screen.search.done)
        await pilot.press("slash", "enter")  # on the first payload match: its call's detail
        for _ in range(6):
            if isinstance(app.screen, ToolDetailScreen):
                break
            await pilot.press("n")
            await pilot.press("slash", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        said = "1 match for uname in this call's arguments and result"
        await wait_until(pilot, lambda: said in screen_text(app.screen))
