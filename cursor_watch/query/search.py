"""Search a run: its model and its tool payloads, a slice at a time, matches in stream order.

The matching rule (smart case, literal or regular expression, what a payload is) is in
:mod:`cursor_watch.query.match`. What a run's search covers, each piece text as shown after JSON
decoding: the prompt, assistant segments (the text rebuilt from deltas, so a match may span deltas), thinking
blocks, notes (``interaction_query``, ``retry``, ``connection``...), tool-call summaries and
failure details, and tool **payloads**: every string value inside a call's ``args`` (from its
``started`` event, else its ``completed`` one, as the detail view shows them) and its
``result``: shell output, file contents, diffs, fetched pages. A match never spans two
strings.

Design (measured on this machine, 2 cores; ``bench/bench_search.py``): payloads stay in
the stream (the model keeps byte spans, not payloads), and the stream is usually far bigger
than the model, so a search reads the run's bytes in chunks and looks for the query in its
**JSON-escaped form** in the raw bytes first (``bytes.find``, ~3 GB/s; ASCII-lowered with
``bytes.lower`` for a case-insensitive query, ~1 GB/s), decoding only the tool-call lines
where it could occur (plus those holding a ``\\uXXXX`` or ``\\/`` escape of a character the
query needs, and the four non-ASCII characters that ``re.IGNORECASE`` folds to ASCII
letters: the prefilter is sound, never only fast). Decoding every line instead costs about
twice as much before any matching, and case-insensitive ``re`` over decoded text runs at
~100 MB/s. Regular expressions and non-ASCII case-insensitive queries take that slower path
(every tool-call line decoded). SQLite's FTS5 was not used: it indexes tokens (no substrings,
no regular expressions, no text spanning a JSON ``\\n``), and indexing 1 GB takes far longer
than scanning it. The scan of the stream's bytes runs in a second process
(:class:`cursor_watch.query.scan.ScanWorker`: the other core does it, and the event loop that
draws the screen never waits on it); the model's records (text, thinking, notes,
summaries, the calls' byte spans) are searched on the event loop in slices of a few
milliseconds (:meth:`Search.step`). Records moved to disk (:mod:`cursor_watch.core.spill`) are
read back like any others.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any


from ..formats import line_object, payload_markers, payload_reader
from ..core.tools import marker_detail
from .match import Query, QueryError, RawFilter, payload_count, payload_strings  # noqa: F401 (re-exported)

SLICE_S = 0.008  # seconds of search work per step (the UI runs between steps)


def _payload_of(raw: bytes, with_args: bool, with_result: bool, agent: str | None) -> tuple[Any, Any]:
    """A line's tool payloads as ``agent`` wrote them (each a list, or None), for counting."""
    data = line_object(raw)
    if data is None:
        return None, None
    pairs = payload_reader(agent)(data)
    args = [a for a, _r in pairs if a is not None] if with_args else []
    results = [r for _a, r in pairs if r is not None] if with_result else []
    return (args or None), (results or None)


KIND_RANK = {"prompt": 0, "thinking": 1, "segment": 2, "note": 3, "tool": 4}
FIELD_RANK = {"text": 0, "summary": 1, "payload": 2}


class Hit:
    """Matches of a query in one searched piece of a run.

    Attributes:
        line: the stream line where the piece's transcript entry begins (stream order).
        kind: ``prompt``, ``segment``, ``thinking``, ``note`` or ``tool``.
        key: None (prompt), the segment / thinking block / note index, or the call_id.
        field: ``text``, ``summary`` (a tool call's summary and failure detail) or
            ``payload`` (its arguments and result).
        count: matches in it.
        call_index: the tool call's 1-based index (its table row + 1); 0 for other kinds.
    """

    __slots__ = ("line", "kind", "key", "field", "count", "call_index")

    def __init__(self, line: int, kind: str, key: Any, field: str, count: int, call_index: int = 0) -> None:
        self.line = line
        self.kind = kind
        self.key = key
        self.field = field
        self.count = count
        self.call_index = call_index

    def order(self) -> tuple:
        """Sort key: stream order, then the order of fields within an entry."""
        return (self.line, KIND_RANK.get(self.kind, 9), self.call_index, FIELD_RANK.get(self.field, 9),
                self.key if isinstance(self.key, int) else 0)

    def __repr__(self) -> str:
        return f"Hit({self.kind}:{self.key!r} {self.field} x{self.count} line {self.line})"


WORKER_MIN_BYTES = 4 << 20  # a smaller run is scanned in-process (starting a process costs ~0.1 s)


class Search:
    """One query over one run's model and payloads, run a slice at a time.

    Call :meth:`step` until it returns True (each call works about ``budget_s``);
    :attr:`hits` fills as it goes, in stream order, so the first match can be shown as
    soon as it is found. For a run that is still streaming, :meth:`refresh` looks at
    what arrived or changed since (new records, the open segment, calls that were running)
    and further steps search it.

    Args:
        session: the run's model.
        reread: ``(offset, size) -> bytes`` re-reading the source (the payloads).
        query: the compiled query.
        file: ``(path, fd, base)`` of a file holding the stream's bytes (a replayed file,
            the spool of a pipe), so a second process can scan it; None scans in-process.
        byte_range: ``(start, end)`` of the run in the stream (``end`` None: to the end).

    Attributes:
        done: everything known so far has been searched.
        total: matches found.
        waiting: the last :meth:`step` ended early, waiting on the scan process (the
            caller may sleep a little before the next one).
    """

    def __init__(self, session: Any, reread: Callable[[int, int], bytes], query: Query,
                 file: tuple[str | None, int | None, int] | None = None,
                 byte_range: tuple[int, int | None] = (0, None)) -> None:
        self.session = session
        self.reread = reread
        self.query = query
        self.filter = query.prefilter()
        self.file = file
        self.done = False
        self.waiting = False
        self.total = 0
        self._hits: dict[tuple[str, Any, str], Hit] = {}
        self._sorted: list[Hit] | None = []
        self._prefix: list[int] = []
        self._marks = {"prompt": 0, "segments": 0, "thinking": 0, "notes": 0, "calls": 0}
        self._running: dict[str, int] = {}  # call_id -> index of calls searched while running
        self._phase = 0
        self._calls_iter: Iterator[Any] | None = None
        # the calls' payload spans not yet passed by the scan, a heap by stream offset:
        # (offset, size, call_id, index, line, args?, result?)
        self._spans: list[tuple[int, int, str, int, int, bool, bool]] = []
        self._ready: deque[tuple[int, int, str, int, int, bool, bool]] = deque()  # in order, below _known
        self._known = -1  # every span below this offset is known (calls are read in stream order)
        self._known_calls = -1  # the same, from the calls read so far (after a refresh)
        self._records: list[tuple[int, int, int]] = []  # scan records (in offset order) not yet matched
        self._payload: dict[str, int] = {}  # call_id -> payload matches
        self._payload_parts: dict[str, list[int]] = {}  # call_id -> [started, completed] matches
        self._range = byte_range
        self._scanned = byte_range[0]  # stream offset scanned up to
        self._scan_end = byte_range[1]
        self._worker: Any = None
        self._inproc: Iterator[list] | None = None
        self._start_scan(byte_range[0], byte_range[1])

    # -- results ----------------------------------------------------------------------------

    @property
    def hits(self) -> list[Hit]:
        """Pieces with matches, in stream order."""
        if self._sorted is None:
            self._sorted = sorted(self._hits.values(), key=Hit.order)
            prefix, n = [], 0
            for hit in self._sorted:
                prefix.append(n)
                n += hit.count
            self._prefix = prefix
        return self._sorted

    def locate(self, i: int) -> tuple[Hit, int] | None:
        """The ``i``-th match (0-based, stream order): its hit and its index within the hit."""
        hits = self.hits
        if not hits or not 0 <= i < self.total:
            return None
        j = bisect.bisect_right(self._prefix, i) - 1
        return hits[j], i - self._prefix[j]

    def payload_hits(self) -> dict[str, int]:
        """``call_id -> matches`` inside each call's payload."""
        return dict(self._payload)

    @property
    def progress(self) -> float:
        """Share of the work done (0 to 1; the payload scan is most of it)."""
        if self.done:
            return 1.0
        start, end = self._range
        if end is None:
            end = max(self._scanned, start + 1)
            with contextlib.suppress(Exception):
                if self.file is not None and self.file[0] is not None:
                    end = max(end, os.path.getsize(self.file[0]) - self.file[2])
        scan = (self._scanned - start) / max(1, end - start)
        return min(0.99, 0.2 * min(1.0, self._phase / 5) + 0.8 * scan)

    def close(self) -> None:
        """Stop the scan process (a new query replaces this one)."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    # -- work -------------------------------------------------------------------------------

    def _agent(self) -> str | None:
        return getattr(self.session, "agent", None)

    def _markers(self) -> tuple[bytes, ...]:
        return payload_markers(self._agent())

    def _start_scan(self, start: int, end: int | None) -> None:
        from .scan import ScanWorker, scan

        self.close()
        self._inproc = None
        size = None
        if self.file is not None and self.file[0] is not None:
            with contextlib.suppress(OSError):
                size = os.path.getsize(self.file[0]) - self.file[2]
        elif self.file is not None and self.file[1] is not None:
            with contextlib.suppress(OSError):
                size = os.fstat(self.file[1]).st_size - self.file[2]
        big = size is not None and (end if end is not None else size) - start >= WORKER_MIN_BYTES
        if self.file is not None and big:
            try:
                self._worker = ScanWorker(self.file[0], self.file[1], self.file[2], start, end, self.query,
                                          self._markers(), self._agent())
                return
            except OSError:
                self._worker = None
        self._inproc = scan(self.reread, start, end, self.query, markers=self._markers(), agent=self._agent())

    def _set(self, line: int, kind: str, key: Any, field: str, count: int, call_index: int = 0) -> None:
        k = (kind, key, field)
        old = self._hits.get(k)
        if old is not None:
            self.total -= old.count
            if count:
                old.count = count
                old.line = line
            else:
                del self._hits[k]
            self.total += count
            self._sorted = None
            return
        if count:
            self._hits[k] = Hit(line, kind, key, field, count, call_index)
            self.total += count
            self._sorted = None

    def refresh(self) -> None:
        """The run grew: search what is new or changed since (call while it streams)."""
        marks = self._marks
        marks["segments"] = max(0, marks["segments"] - 1)  # the last segment may have grown
        marks["thinking"] = max(0, marks["thinking"] - 1)
        self._phase = 0
        self._calls_iter = None
        self.done = False
        self._known = self._known_calls  # new calls' spans are not known yet
        if self._range[1] is None and self._worker is None and self._inproc is None:
            self._start_scan(self._scanned, None)  # the bytes that arrived since

    def step(self, budget_s: float = SLICE_S) -> bool:
        """Search for about ``budget_s`` seconds; True when everything known is searched.

        The tool calls come first (their spans let the scan's matches be placed, the
        payloads being where most of a big run is), then the texts.
        """
        deadline = time.monotonic() + budget_s
        s = self.session
        q = self.query
        marks = self._marks
        self.waiting = False
        while time.monotonic() < deadline:
            self._collect(time.monotonic() + budget_s / 4)
            self._match_records()
            phase = self._phase
            if phase == 0:  # the prompt
                if not marks["prompt"] and s.prompt is not None:
                    self._set(0, "prompt", None, "text", q.count(s.prompt))
                    marks["prompt"] = 1
                self._phase = 1
            elif phase == 1:  # tool calls: summaries, and their payload spans
                if not self._more_calls(deadline):
                    self._known = 1 << 62  # every span is known now (until the run grows)
                    self._phase = 2
            elif phase in (2, 3, 4):  # segments, thinking blocks, notes
                name = ("segments", "thinking", "notes")[phase - 2]
                kind = ("segment", "thinking", "note")[phase - 2]
                records = getattr(s, name)
                n = len(records)
                i = marks[name]
                while i < n and time.monotonic() < deadline:
                    stop = min(n, i + 200)
                    for j, rec in enumerate(records[i:stop], i):
                        self._set(rec.line, kind, j, "text", q.count(rec.text))
                    i = stop
                marks[name] = i
                if i >= n:
                    self._phase += 1
            elif phase == 5:  # the rest of the scan
                if self._worker is None and self._inproc is None and not self._records:
                    self._phase = 6
                elif self._worker is not None:
                    self.waiting = True
                    return False  # the other process is scanning: give the event loop back
            else:
                self.done = True
                return True
        return False

    def _collect(self, deadline: float) -> None:
        """Take the scan's records (from the other process, or a chunk scanned here)."""
        worker = self._worker
        if worker is not None:
            records = worker.poll()
            if worker.ended:
                failed = worker.failed
                self._worker = None
                if failed:  # scan the rest here
                    from .scan import scan

                    self._inproc = scan(self.reread, self._scanned, self._scan_end, self.query,
                                        markers=self._markers(), agent=self._agent())
            self._take(records)
            return
        while self._inproc is not None and time.monotonic() < deadline:
            try:
                self._take(next(self._inproc))
            except StopIteration:
                self._inproc = None

    def _take(self, records: list[tuple[int, int, int]]) -> None:
        from .scan import DONE

        for rec in records:
            if rec[1] == DONE:
                self._scanned = rec[0]
            else:
                self._records.append(rec)

    def _more_calls(self, deadline: float) -> bool:
        """Search call summaries until ``deadline``; False when every call is done."""
        s = self.session
        q = self.query
        calls = s.tool_calls
        if self._calls_iter is None:
            start = self._marks["calls"]
            rerun = [cid for cid in list(self._running)]
            self._running = {}
            again = [c for c in (calls.get(cid) for cid in rerun) if c is not None]
            self._calls_iter = _chain(again, calls.values(start + 1))  # paged: old calls come from disk
        spans = self._spans
        for call in self._calls_iter:
            if call is None:
                continue
            line = call.started_line or call.completed_line
            cid = call.call_id
            # what its transcript line shows: the summary and the start of the reason (the whole
            # reason is in the result, a payload match)
            shown = marker_detail(call.detail, call.interaction) if call.done else ""
            text = call.summary + ("\n" + shown if shown else "")
            self._set(line, "tool", cid, "summary", q.count(text), call.index)
            if call.status == "running":
                self._running[cid] = call.index
            has_start = call.start_span is not None
            if has_start:
                off, size = call.start_span
                heapq.heappush(spans, (off, size, cid, call.index, line, True, False))
            if call.end_span is not None:
                off, size = call.end_span
                heapq.heappush(spans, (off, size, cid, call.index, line, not has_start, True))
            if call.index > self._marks["calls"]:
                self._marks["calls"] = call.index
                first = call.start_span or call.end_span
                if first is not None:
                    # a later call first appears after this one: no unknown span lies below
                    self._known_calls = max(self._known_calls, first[0])
                    self._known = max(self._known, self._known_calls)
            if time.monotonic() >= deadline:
                return True
        self._calls_iter = None
        return False

    def _match_records(self) -> None:
        """Add the scan's matches (below the known spans) to the calls whose spans hold them.

        Records and spans are both in stream order: a merge, each span passed once.
        """
        from .scan import UNDECODED

        records = self._records
        if not records:
            return
        known = self._known
        spans, ready = self._spans, self._ready
        while spans and spans[0][0] < known:
            ready.append(heapq.heappop(spans))
        n = 0
        decoded = None
        for off, n_args, n_result in records:
            if off >= known:
                break
            n += 1
            while ready and ready[0][0] + ready[0][1] <= off:
                ready.popleft()
            if not ready or off < ready[0][0]:
                continue  # not in a tool call of this run (another run's line, or no call)
            span = ready[0]
            span_off, size, cid, index, line, with_args, with_result = span
            if n_args == UNDECODED:
                if decoded == span_off:
                    continue  # the same broken event, a second piece
                decoded = span_off
                args, result = _payload_of(self.reread(span_off, size), with_args, with_result, self._agent())
                count = payload_count(self.query, args, result)
            else:
                count = (n_args if with_args else 0) + (n_result if with_result else 0)
            if count or cid in self._payload_parts:
                self._add_payload(cid, index, line, count, with_result)
        del records[:n]

    def _add_payload(self, cid: str, index: int, line: int, n: int, completed: bool) -> None:
        # a call's payload is its started span (args) plus its completed span (result, and
        # args when it had no started event); they are counted separately and added
        parts = self._payload_parts.setdefault(cid, [0, 0])
        parts[1 if completed else 0] = n
        total = parts[0] + parts[1]
        if total:
            self._payload[cid] = total
        else:
            self._payload.pop(cid, None)
        self._set(line, "tool", cid, "payload", total, index)


def _chain(*iterables: Any) -> Iterator[Any]:
    for it in iterables:
        yield from it


def timeline_position(session: Any, hit: Hit) -> int:
    """The position of ``hit``'s entry in ``session.timeline`` (-1 when not found).

    The timeline is in stream order and every entry knows the line it began on, so a
    binary search over lines finds it with a few record reads (old records are on disk).
    """
    if hit.kind == "prompt":
        tl = session.timeline
        for i in range(min(len(tl), 8)):
            if tl[i][0] == "prompt":
                return i
        return -1
    want = (hit.kind, hit.key)
    tl = session.timeline

    def line_at(pos: int) -> int:
        kind, key = tl[pos]
        try:
            if kind == "segment":
                return session.segments[key].line
            if kind == "thinking":
                return session.thinking[key].line
            if kind == "note":
                return session.notes[key].line
            if kind == "tool":
                call = session.tool_calls.get(key)
                return (call.started_line or call.completed_line) if call is not None else 0
        except (IndexError, KeyError):
            return 0
        return 0

    lo, hi = 0, len(tl)
    while lo < hi:
        mid = (lo + hi) // 2
        if line_at(mid) < hit.line:
            lo = mid + 1
        else:
            hi = mid
    for pos in range(max(0, lo - 4), min(len(tl), lo + 16)):
        if tuple(tl[pos]) == want:
            return pos
    for pos in range(len(tl)):  # out of order (a note added by the watch itself): look everywhere
        if tuple(tl[pos]) == want:
            return pos
    return -1
