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

from .tools import find_variant

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
    """Every string value inside ``value`` (dicts and lists, any depth), in order; keys are not."""
    stack = [value]
    while stack:
        v = stack.pop()
        if v.__class__ is str:
            yield v
        elif isinstance(v, dict):
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
