"""Search a run: the matching rule, and a search over the model and the tool payloads.

The matching rule lives here and only here (the transcript, the tool-call detail, the
runs list and the tests all use :class:`Query`):

* **smart case**: case-insensitive unless the query has a capital letter (in a regular
  expression, escapes such as ``\\S`` or ``\\W`` don't count);
* a literal query, or a regular expression (Python's ``re``, with ``MULTILINE``);
  an invalid pattern raises :class:`QueryError` with a one-line reason;
* matches are non-empty and don't overlap (``re.finditer``; empty matches are skipped).

What a run's search covers, each piece text as shown after JSON decoding: the prompt,
assistant segments (the text rebuilt from deltas, so a match may span deltas), thinking
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
than scanning it. The search runs on the event loop in slices of a few milliseconds
(:meth:`Search.step`), so the UI never waits on it; records moved to disk
(:mod:`cursor_watch.spill`) are read back like any others.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from .tools import DUPLICATE_OUTPUT, find_variant

SLICE_S = 0.008  # seconds of search work per step (the UI runs between steps)
CHUNK = 4 << 20  # bytes of the stream read and scanned at a time
_SCAN_ESCAPES = re.compile(rb"\\u([0-9a-fA-F]{4})|\\/")
# characters that re.IGNORECASE matches to an ASCII letter (checked over every code point)
_FOLDS_TO_ASCII = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
_JSON_ESCAPE = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


class QueryError(ValueError):
    """The query can't be used (an invalid regular expression); the message is one line."""


def _has_capital(text: str, regex: bool) -> bool:
    if regex:
        text = re.sub(r"\\.", "", text)  # \S, \W, \D, \B, \A, \Z are not capitals
    return any(ch.isupper() for ch in text)


class Query:
    """A compiled search query.

    Args:
        text: what the user typed (must not be empty).
        regex: a regular expression (Python ``re``) rather than a literal.

    Attributes:
        ignore_case: True when smart case makes it case-insensitive (no capital letter).
        pattern: the compiled expression (``MULTILINE``; ``IGNORECASE`` per smart case).

    Raises:
        QueryError: an empty query or an invalid regular expression.
    """

    __slots__ = ("text", "regex", "ignore_case", "pattern", "_literal")

    def __init__(self, text: str, regex: bool = False) -> None:
        if not text:
            raise QueryError("empty query")
        self.text = text
        self.regex = regex
        self.ignore_case = not _has_capital(text, regex)
        flags = re.MULTILINE | (re.IGNORECASE if self.ignore_case else 0)
        try:
            self.pattern = re.compile(text if regex else re.escape(text), flags)
        except (re.error, OverflowError, RecursionError) as err:
            raise QueryError(f"invalid regular expression: {err}") from None
        # a case-sensitive literal counts with str.count (the same non-overlapping matches)
        self._literal = text if not regex and not self.ignore_case else None

    def __repr__(self) -> str:
        return f"Query({self.text!r}, regex={self.regex}, ignore_case={self.ignore_case})"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character offsets of every match in ``text``, in order."""
        return [m.span() for m in self.pattern.finditer(text) if m.end() > m.start()]

    def count(self, text: str) -> int:
        """Number of matches in ``text``."""
        if not text:
            return 0
        if self._literal is not None:
            return text.count(self._literal)
        if not self.pattern.search(text):
            return 0
        return sum(1 for m in self.pattern.finditer(text) if m.end() > m.start())

    def matches(self, text: str) -> bool:
        """True when ``text`` holds at least one match."""
        if self._literal is not None:
            return self._literal in text
        return any(m.end() > m.start() for m in self.pattern.finditer(text))

    # -- the raw-bytes prefilter ----------------------------------------------------------

    def prefilter(self) -> RawFilter | None:
        """A sound test on raw stream bytes, or None when every line must be decoded."""
        if self.regex:
            return None
        text = self.text.lower() if self.ignore_case else self.text
        if self.ignore_case and not text.isascii():
            return None  # non-ASCII case folding: decode every payload line
        return RawFilter(text, self.ignore_case)


class RawFilter:
    """Finds where a literal query could match after JSON decoding, in raw NDJSON bytes.

    A decoded string holds the query only if its raw JSON holds the query's escaped form
    (``"`` as ``\\"``, a newline as ``\\n``...), unless the encoder wrote one of the
    query's characters as a ``\\uXXXX`` (or ``/`` as ``\\/``) escape, or (case-insensitive)
    the text has a non-ASCII character that ``re.IGNORECASE`` folds to an ASCII letter.
    :meth:`positions` reports the needle's positions and those of every such escape or
    character, so no match can be missed.

    Args:
        text: the query (lower-cased and ASCII when ``ignore_case``).
        ignore_case: compare against ASCII-lowered bytes.
    """

    __slots__ = ("needle", "ignore_case", "_chars", "_specials", "_astral", "_slash")

    def __init__(self, text: str, ignore_case: bool) -> None:
        self.ignore_case = ignore_case
        self.needle = "".join(_JSON_ESCAPE.get(ch, ch) for ch in text).encode("utf-8", "surrogatepass")
        chars = set(text)
        if ignore_case:
            chars |= {ch.upper() for ch in text}
            for ch in text:
                chars |= set(_FOLDS_TO_ASCII.get(ch, ""))
        self._chars = chars
        self._specials = [s.encode() for ch in text for s in _FOLDS_TO_ASCII.get(ch, "")] if ignore_case else []
        self._astral = any(ord(ch) > 0xFFFF for ch in text)
        self._slash = "/" in text

    def positions(self, chunk: bytes) -> list[int]:
        """Byte offsets in ``chunk`` where a match may begin or lie (unsorted, may repeat)."""
        hay = chunk.lower() if self.ignore_case else chunk
        needle = self.needle
        out: list[int] = []
        find = hay.find
        i = find(needle)
        while i >= 0:
            out.append(i)
            i = find(needle, i + len(needle))
        for special in self._specials:
            i = chunk.find(special)
            while i >= 0:
                out.append(i)
                i = chunk.find(special, i + 1)
        if b"\\u" in chunk or (self._slash and b"\\/" in chunk):
            chars, astral = self._chars, self._astral
            for m in _SCAN_ESCAPES.finditer(chunk):
                code = m.group(1)
                if code is None:
                    if self._slash:
                        out.append(m.start())
                    continue
                cp = int(code, 16)
                if (0xD800 <= cp <= 0xDFFF and astral) or chr(cp) in chars:
                    out.append(m.start())
        return out


def payload_strings(value: Any) -> Iterator[str]:
    """Every string value inside ``value`` (dicts and lists, any depth), in order; keys are not.

    A shell result's ``interleavedOutput`` is skipped when its ``stdout`` or ``stderr`` is
    there: it is the same text again (:data:`cursor_watch.tools.DUPLICATE_OUTPUT`).
    """
    dup_key, originals = DUPLICATE_OUTPUT
    stack = [value]
    while stack:
        v = stack.pop()
        if v.__class__ is str:
            yield v
        elif isinstance(v, dict):
            if dup_key in v and any(k in v for k in originals):
                stack.extend(reversed([x for k, x in v.items() if k != dup_key]))
            else:
                stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))


def payload_count(query: Query, args: Any, result: Any) -> int:
    """Matches of ``query`` in a call's payload (the strings of ``args`` and ``result``)."""
    n = 0
    for part in (args, result):
        if part is not None:
            for s in payload_strings(part):
                n += query.count(s)
    return n


def call_payload(start: bytes | None, end: bytes | None) -> tuple[Any, Any]:
    """``(args, result)`` of a call from the raw bytes of its ``started`` and ``completed`` lines.

    The arguments come from ``started``, else from ``completed`` (as the detail view shows
    them); the result from ``completed``. Either is None when absent or unreadable.
    """
    args = result = None
    for raw, which in ((start, "started"), (end, "completed")):
        if not raw:
            continue
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        _tool, body = find_variant(data.get("tool_call"))
        if args is None and isinstance(body.get("args"), dict):
            args = body["args"]
        if which == "completed" and "result" in body:
            result = body["result"]
    return args, result


def _decode_line(raw: bytes) -> dict | None:
    """One event from its raw bytes (a rejoined event spans lines: the decoder's rule)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        from .events import Event, decode_all

        items = [i for i in decode_all([raw]) if isinstance(i, Event)]
        return items[0].data if items else None
    return data if isinstance(data, dict) else None


def _payload_of(raw: bytes, with_args: bool, with_result: bool) -> tuple[Any, Any]:
    data = _decode_line(raw)
    if data is None:
        return None, None
    _tool, body = find_variant(data.get("tool_call"))
    args = body.get("args") if with_args and isinstance(body.get("args"), dict) else None
    result = body.get("result") if with_result else None
    return args, result


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

    Attributes:
        done: everything known so far has been searched.
        total: matches found.
    """

    def __init__(self, session: Any, reread: Callable[[int, int], bytes], query: Query) -> None:
        self.session = session
        self.reread = reread
        self.query = query
        self.filter = query.prefilter()
        self.done = False
        self.total = 0
        self._hits: dict[tuple[str, Any, str], Hit] = {}
        self._sorted: list[Hit] | None = []
        self._prefix: list[int] = []
        self._marks = {"prompt": 0, "segments": 0, "thinking": 0, "notes": 0, "calls": 0}
        self._running: dict[str, int] = {}  # call_id -> index of calls searched while running
        self._spans: list[tuple[int, int, str, int, int, bool, bool]] = []  # payload spans to scan
        self._phase = 0
        self._calls_iter: Iterator[Any] | None = None
        self._to_scan = 0  # spans found so far (for progress)
        self._scanned = 0
        self._payload: dict[str, int] = {}  # call_id -> payload matches
        self._payload_parts: dict[str, list[int]] = {}  # call_id -> [started, completed] matches

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

    def index_of(self, hit: Hit) -> int:
        """The index of ``hit``'s first match among all matches."""
        hits = self.hits
        j = hits.index(hit)
        return self._prefix[j]

    def payload_hits(self) -> dict[str, int]:
        """``call_id -> matches`` inside each call's payload."""
        return dict(self._payload)

    @property
    def progress(self) -> float:
        """Share of the work done (0 to 1; the payload scan is most of it)."""
        if self.done:
            return 1.0
        if self._phase < 5:
            return 0.05 * self._phase
        return 0.25 + 0.75 * (self._scanned / max(1, self._to_scan))

    # -- work -------------------------------------------------------------------------------

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
        if self.session.prompt is not None and not marks["prompt"]:
            marks["prompt"] = 0
        self._phase = 0
        self._calls_iter = None
        self.done = False

    def step(self, budget_s: float = SLICE_S) -> bool:
        """Search for about ``budget_s`` seconds; True when everything known is searched."""
        deadline = time.monotonic() + budget_s
        s = self.session
        q = self.query
        marks = self._marks
        while time.monotonic() < deadline:
            phase = self._phase
            if phase == 0:  # the prompt
                if not marks["prompt"] and s.prompt is not None:
                    self._set(0, "prompt", None, "text", q.count(s.prompt))
                    marks["prompt"] = 1
                self._phase = 1
            elif phase in (1, 2, 3):  # segments, thinking blocks, notes
                name = ("segments", "thinking", "notes")[phase - 1]
                kind = ("segment", "thinking", "note")[phase - 1]
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
            elif phase == 4:  # tool calls: summaries now, payload spans for the scan
                if not self._more_calls(deadline):
                    self._spans.sort()
                    self._to_scan = max(self._to_scan, self._scanned + len(self._spans))
                    self._phase = 5
            elif phase == 5:  # payloads, in stream order
                if not self._scan(deadline):
                    self._phase = 6
            else:
                self.done = True
                return True
        return False

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
            self._calls_iter = _chain(again, (calls.at(i) for i in range(start + 1, len(calls) + 1)))
        for call in self._calls_iter:
            if call is None:
                continue
            line = call.started_line or call.completed_line
            cid = call.call_id
            text = call.summary + ("\n" + call.detail if call.detail else "")
            self._set(line, "tool", cid, "summary", q.count(text), call.index)
            if call.status == "running":
                self._running[cid] = call.index
            has_start = call.start_span is not None
            if has_start:
                off, size = call.start_span
                self._spans.append((off, size, cid, call.index, line, True, False))
            if call.end_span is not None:
                off, size = call.end_span
                self._spans.append((off, size, cid, call.index, line, not has_start, True))
            if call.index > self._marks["calls"]:
                self._marks["calls"] = call.index
            if time.monotonic() >= deadline:
                return True
        self._calls_iter = None
        return False

    def _scan(self, deadline: float) -> bool:
        """Scan payload spans until ``deadline``; False when none are left."""
        spans = self._spans
        q = self.query
        filt = self.filter
        while spans and time.monotonic() < deadline:
            # one read covers the spans that follow each other closely, up to CHUNK bytes
            first = spans[0][0]
            k = 1
            end = first + spans[0][1]
            while k < len(spans) and spans[k][0] - end < 65536 and spans[k][0] + spans[k][1] - first <= CHUNK:
                end = max(end, spans[k][0] + spans[k][1])
                k += 1
            group, self._spans = spans[:k], spans[k:]
            spans = self._spans
            data = self.reread(first, end - first)
            positions = sorted(filt.positions(data)) if filt is not None else None
            for off, size, cid, index, line, with_args, with_result in group:
                a, b = off - first, off - first + size
                if positions is not None:
                    i = bisect.bisect_left(positions, a)
                    if i >= len(positions) or positions[i] >= b:
                        continue
                args, result = _payload_of(data[a:b], with_args, with_result)
                n = payload_count(q, args, result)
                if n or cid in self._payload_parts:
                    self._add_payload(cid, index, line, n, with_result)
            self._scanned += len(group)
        return bool(spans)

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
