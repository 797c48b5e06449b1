"""The matching rule of search, and the raw-bytes test that finds where it could match.

The rule lives here and only here (the transcript, the tool-call detail, the runs list, the
payload scan and the tests all use :class:`Query`):

* **smart case**: case-insensitive unless the query has a capital letter (in a regular
  expression, escapes such as ``\\S`` or ``\\W`` don't count);
* a literal query, or a regular expression (Python's ``re``, with ``MULTILINE``);
  an invalid pattern raises :class:`QueryError` with a one-line reason;
* matches are non-empty and don't overlap (``re.finditer``; empty matches are skipped).

A tool call's **payload** is every string value inside its ``args`` and its ``result``
(:func:`payload_strings`), as shown after JSON decoding; a match never spans two strings.
:class:`RawFilter` finds where a literal could match in raw NDJSON bytes, soundly (JSON
escapes and case folding included), so most of a stream never has to be decoded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..core.tools import DUPLICATE_OUTPUT

_FOLDS_TO_ASCII = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
_JSON_ESCAPE = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


_ODD_FOLDS = "".join(_FOLDS_TO_ASCII.values())


def _folds_oddly(text: str) -> bool:
    """True when ``text`` holds a character that ``re.IGNORECASE`` matches to an ASCII letter
    and ``str.lower`` does not turn into it (or turns into more than it)."""
    return any(ch in text for ch in _ODD_FOLDS)


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

    __slots__ = ("text", "regex", "ignore_case", "pattern", "_literal", "_lower", "redact")

    def __init__(self, text: str, regex: bool = False, redact: Any = None) -> None:
        if not text:
            raise QueryError("empty query")
        self.text = text
        self.regex = regex
        # a view that redacts (--serve): texts are matched as shown, their secrets replaced, so a
        # search can't find (or count) what the page never shows (a Redactor, or None)
        self.redact = redact
        self.ignore_case = not _has_capital(text, regex)
        flags = re.MULTILINE | (re.IGNORECASE if self.ignore_case else 0)
        try:
            self.pattern = re.compile(text if regex else re.escape(text), flags)
        except (re.error, OverflowError, RecursionError) as err:
            raise QueryError(f"invalid regular expression: {err}") from None
        # a case-sensitive literal counts with str.count (the same non-overlapping matches); an
        # ASCII case-insensitive one on the lower-cased text, which gives the same count as
        # re.IGNORECASE unless the text holds one of the four characters that fold to ASCII
        # differently (checked over every code point: see _FOLDS_TO_ASCII)
        self._literal = text if not regex and not self.ignore_case else None
        self._lower = text.lower() if not regex and self.ignore_case and text.isascii() else None

    def __repr__(self) -> str:
        return f"Query({self.text!r}, regex={self.regex}, ignore_case={self.ignore_case})"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character offsets of every match in ``text``, in order (with
        ``redact``: in the redacted text, which is ``text`` itself for one shown already)."""
        if self.redact is not None:
            text = self.redact(text)
        return [m.span() for m in self.pattern.finditer(text) if m.end() > m.start()]

    def count(self, text: str) -> int:
        """Number of matches in ``text`` (with ``redact``: in the redacted text)."""
        if not text:
            return 0
        if self.redact is not None:
            text = self.redact(text)
        return self._count(text)

    def _count(self, text: str) -> int:
        if not text:
            return 0
        if self._literal is not None:
            return text.count(self._literal)
        if self._lower is not None and (text.isascii() or not _folds_oddly(text)):
            return text.lower().count(self._lower)
        if not self.pattern.search(text):
            return 0
        return sum(1 for m in self.pattern.finditer(text) if m.end() > m.start())

    def matches(self, text: str) -> bool:
        """True when ``text`` holds at least one match (with ``redact``: the redacted text)."""
        if self.redact is not None:
            text = self.redact(text)
        if self._literal is not None:
            return self._literal in text
        if self._lower is not None and (text.isascii() or not _folds_oddly(text)):
            return self._lower in text.lower()
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
    query's characters as a ``\\uXXXX`` escape (or ``/`` as ``\\/``), or (case-insensitive)
    the text has a non-ASCII character that ``re.IGNORECASE`` folds to an ASCII letter.
    :meth:`positions` reports the needle's positions and those of every such escape or
    character, so no match can be missed.

    Args:
        text: the query (lower-cased and ASCII when ``ignore_case``).
        ignore_case: compare against ASCII-lowered bytes.
    """

    __slots__ = ("needle", "ignore_case", "_specials", "_escapes")

    def __init__(self, text: str, ignore_case: bool) -> None:
        self.ignore_case = ignore_case
        self.needle = "".join(_JSON_ESCAPE.get(ch, ch) for ch in text).encode("utf-8", "surrogatepass")
        chars = set(text)
        if ignore_case:
            chars |= {ch.upper() for ch in text}
            for ch in text:
                chars |= set(_FOLDS_TO_ASCII.get(ch, ""))
        specials = {s for ch in text for s in _FOLDS_TO_ASCII.get(ch, "")} if ignore_case else set()
        self._specials = sorted(s.encode() for s in specials)
        # one expression for the escapes that could stand for a character of the query: the
        # common ones (an ANSI ESC, \u001b, in shell output) fail at once, in C
        codes = sorted({f"{ord(ch):04x}".encode() for ch in chars if ord(ch) <= 0xFFFF})
        alts = [rb"u(?:" + b"|".join(codes) + rb")"] if codes else []
        if any(ord(ch) > 0xFFFF for ch in text):
            alts.append(rb"u[dD][89abAB][0-9a-fA-F]{2}")  # a surrogate pair's first half
        if "/" in chars:
            alts.append(rb"/")
        self._escapes = re.compile(rb"\\(?:" + b"|".join(alts) + rb")", re.IGNORECASE) if alts else None

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
            if special[:1] in chunk:  # one byte: a memchr, far cheaper than the whole search
                i = chunk.find(special)
                while i >= 0:
                    out.append(i)
                    i = chunk.find(special, i + 1)
        if self._escapes is not None and b"\\" in chunk:
            out.extend(m.start() for m in self._escapes.finditer(chunk))
        return out


def payload_strings(value: Any) -> Iterator[str]:
    """Every string value inside ``value`` (dicts and lists, any depth), in order; keys are not.

    A shell result's ``interleavedOutput`` is skipped when its ``stdout`` or ``stderr`` is
    there: it is the same text again (:data:`cursor_watch.core.tools.DUPLICATE_OUTPUT`).
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


def _all_strings(value: Any, out: list[str]) -> None:
    """The strings of :func:`payload_strings`, in no particular order (for counting: faster)."""
    dup_key, originals = DUPLICATE_OUTPUT
    stack = [value]
    pop, push, add = stack.pop, stack.extend, out.append
    while stack:
        v = pop()
        cls = v.__class__
        if cls is str:
            add(v)
        elif cls is dict:
            if dup_key in v and any(k in v for k in originals):
                push([x for k, x in v.items() if k != dup_key])
            else:
                push(v.values())
        elif cls is list:
            push(v)


def payload_count(query: Query, args: Any, result: Any) -> int:
    """Matches of ``query`` in a call's payload (the strings of ``args`` and ``result``).

    A literal query is counted once over the strings joined by a character it doesn't hold
    (a literal can't match across it), rather than once per string. A query that redacts
    counts in the payload as a redacting view shows it (each string redacted, a value under a
    secret-sounding key hidden: :meth:`cursor_watch.outlets.redact.Redactor.value`).
    """
    redact = query.redact
    if redact is not None:
        value = getattr(redact, "value", None)
        if value is not None:
            args, result = value(args), value(result)
    strings: list[str] = []
    for part in (args, result):
        if part is not None:
            _all_strings(part, strings)
    if not strings:
        return 0
    if redact is not None and getattr(redact, "value", None) is None:
        strings = [redact(x) for x in strings]
    if not query.regex:
        sep = next(c for c in "\x00\x01\x02\x03" if c not in query.text)
        return query._count(sep.join(strings))
    return sum(query._count(x) for x in strings)
