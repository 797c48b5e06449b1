"""Parse lines into events: one object per NDJSON line, never raising.

A line becomes one of:

* :class:`Event`: a JSON object, an agent's native event (its adapter, :mod:`cursor_watch.formats`,
  decides what it means; one it doesn't read is kept and counted as unknown);
* an adapter's typed event, when the decoder is given that adapter's typed decoder (its fast
  path: a msgspec struct of a line's hot fields; :class:`Decoder`);
* :class:`Invalid`: anything else (bad JSON, bad UTF-8, a JSON non-object, a text
  line such as ``Error: ...``), with its 1-based line number and a short reason.

Raw newlines: a maestro report (``stream-json-reference.md`` section 1) says a raw
LF was seen inside a ``call_id``, splitting one event over two physical lines. A
line that fails to parse is therefore held, and joined with the next one to three
lines; if a join parses, the pieces are one event. A following line that parses on
its own is never swallowed into a join.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
import orjson

from .framing import LineFramer, RawLine

MAX_JOIN = 3  # physical lines that may follow a broken first piece
PREVIEW_CHARS = 160


class Event:
    """A parsed native event: one JSON object of an agent's stream.

    Attributes:
        type: the event's ``type`` string ("" when absent or not a string).
        subtype: its ``subtype`` ("" when absent).
        data: the decoded JSON object (dict).
        line: 1-based physical line number of its first line.
        offset: byte offset of its line in the stream.
        size: bytes its line(s) occupy in the stream, newlines included.
    """

    __slots__ = ("type", "subtype", "data", "line", "offset", "size")

    def __init__(self, data: dict, line: int, offset: int, size: int) -> None:
        t = data.get("type")
        st = data.get("subtype")
        self.type = t if type(t) is str else ""
        self.subtype = st if type(st) is str else ""
        self.data = data
        self.line = line
        self.offset = offset
        self.size = size

    def __repr__(self) -> str:
        return f"Event({self.type}/{self.subtype} line={self.line})"


class Invalid:
    """A line that is not an event: a diagnostic.

    Attributes:
        line: 1-based physical line number.
        offset: byte offset of the line in the stream.
        size: bytes of the line, newline included.
        reason: short reason ("not JSON", "invalid UTF-8", "JSON array, not an object", ...).
        text: a preview of the line, decoded with replacement, at most 160 characters.
    """

    __slots__ = ("line", "offset", "size", "reason", "text")

    def __init__(self, line: int, offset: int, size: int, reason: str, text: str) -> None:
        self.line = line
        self.offset = offset
        self.size = size
        self.reason = reason
        self.text = text

    @property
    def message(self) -> str:
        """``reason: preview`` as one line."""
        return f"{self.reason}: {self.text}" if self.text else self.reason

    def __repr__(self) -> str:
        return f"Invalid(line={self.line}, {self.reason!r})"


Item = Event | Invalid  # a Decoder with typed decoding on also gives an adapter's typed events

# what a typed decoder raises for a line it leaves to the generic path (UnicodeDecodeError: bad
# UTF-8 in a string it reads, which orjson then calls invalid)
_TYPED_REFUSED = (msgspec.ValidationError, msgspec.DecodeError, RecursionError, UnicodeDecodeError)


def _preview(data: bytes) -> str:
    text = data[: PREVIEW_CHARS * 4].decode("utf-8", "replace")
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + "…"
    return text


def _reason(data: bytes, err: Exception | None, value: object = None) -> str:
    if err is None:
        kind = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}.get(
            type(value), "null"
        )
        return f"JSON {kind}, not an object"
    msg = str(err)
    if "utf-8" in msg.lower() or "surrogate" in msg.lower():
        return "invalid UTF-8"
    first = data.lstrip()[:1]
    if first not in (b"{", b"["):
        return "not JSON (text line)"
    return "invalid JSON"


def _loads(data: bytes) -> tuple[dict | None, Exception | None, object]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        return None, err, None
    if isinstance(value, dict):
        return value, None, value
    return None, None, value


class StreamParser:
    """Turns :class:`RawLine` into events and diagnostics, in stream order.

    Feed lines with :meth:`feed_line`; call :meth:`finish` at end of input.
    Never raises on any input. A line that fails to parse is held until the next
    line arrives (to try the raw-newline join), so its diagnostic comes one line
    late; :meth:`flush` releases held lines (call it when the stream goes idle).
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: list[RawLine] = []

    def feed_line(self, raw: RawLine) -> list[Item]:
        """Parse one line; returns the items it completes (possibly none)."""
        data = raw.data
        if data[0] in b" \t\r\x0b\x0c" and data.isspace():  # whitespace-only: a blank line
            return []
        value, err, other = _loads(data)
        if value is not None:
            event = Event(value, raw.number, raw.offset, raw.size)
            if not self._held:
                return [event]
            out = self._settle(final=True)
            out.append(event)
            return out
        if err is None and not self._held:  # valid JSON, not an object: nothing to join
            return [Invalid(raw.number, raw.offset, raw.size, _reason(data, None, other), _preview(data))]
        self._held.append(raw)
        return self._settle(final=False)

    def _settle(self, final: bool) -> list[Item]:
        """Join held lines where a join parses; release heads that can't join.

        A head is released as a diagnostic when it has been tried with
        ``MAX_JOIN`` following lines, or at once when ``final``.
        """
        out: list[Item] = []
        held = self._held
        while held:
            for n in range(2, len(held) + 1):
                joined = _join(held[:n])
                if joined is not None:
                    first, last = held[0], held[n - 1]
                    # the span runs to the end of the last piece, blank lines between included
                    out.append(Event(joined, first.number, first.offset, last.offset + last.size - first.offset))
                    del held[:n]
                    break
            else:
                if final or len(held) > MAX_JOIN:
                    out.append(_invalid(held.pop(0)))
                    continue
                break
        return out

    def flush(self) -> list[Item]:
        """Release held lines (joining what joins): idle stream or end of input."""
        return self._settle(final=True)

    def finish(self) -> list[Item]:
        """End of input."""
        return self._settle(final=True)


def _join(lines: list[RawLine]) -> dict | None:
    if len(lines) < 2:
        return None
    for sep in (b"\n", b"\\n"):
        parts = [lines[0].data]
        for prev, cur in zip(lines, lines[1:]):
            parts.append(sep * (cur.number - prev.number))  # a skipped blank line was a newline too
            parts.append(cur.data)
        value, _err, _ = _loads(b"".join(parts))
        if value is not None:
            return value
    return None


def _invalid(raw: RawLine) -> Invalid:
    return invalid_item(raw.data, raw.number, raw.offset, raw.size)


def invalid_item(data: bytes, line: int, offset: int, size: int) -> Invalid:
    """The :class:`Invalid` for a line that is not an event (its reason found by orjson)."""
    _value, err, other = _loads(data)
    return Invalid(line, offset, size, _reason(data, err, other), _preview(data))


class Decoder:
    """Bytes in, items out: :class:`LineFramer` plus :class:`StreamParser`.

    ``feed(chunk)`` accepts any chunking of the byte stream; ``finish()`` ends it.
    ``lines`` counts physical lines framed so far.

    Args:
        typed: the typed (msgspec) decoding of a format adapter's hot lines, each adapter's own
            fast path: a ``msgspec.json.Decoder``
            (:attr:`cursor_watch.formats.common.Adapter.typed_decoder`: Cursor's decodes
            ``assistant``, ``thinking`` and ``tool_call`` lines), or None for none. A line the
            decoder refuses (another kind, a shape its structs don't fit:
            ``msgspec.ValidationError``, ``DecodeError``) takes the generic path, as does every
            line when it is off; the adapter and the model give the same result either way.
            Attribute ``typed`` may be changed between feeds (the runner sets it to the
            detected adapter's).
    """

    __slots__ = ("framer", "parser", "typed")

    def __init__(self, typed: Any = None) -> None:
        self.framer = LineFramer()
        self.parser = StreamParser()
        self.typed = typed

    @property
    def lines(self) -> int:
        """Physical lines framed so far (blank lines included)."""
        return self.framer.lines_seen

    def feed(self, chunk: bytes) -> list[Item]:
        """Frame and parse ``chunk``; returns the completed items in order."""
        framer = self.framer
        pieces = framer.split(chunk)
        if not pieces:
            return []
        out: list[Item] = []
        append = out.append
        parser = self.parser
        held = parser._held  # the list itself: the parser only ever changes it in place
        loads = orjson.loads
        typed = self.typed
        tdecode = typed.decode if typed else None
        number = framer.line_number
        offset = framer.offset
        for piece in pieces:
            number += 1
            size = len(piece) + 1
            # the common line (LineFramer.split): an object on its own, no BOM, no CR, no
            # broken line waiting for a join; parsed here without a RawLine and a parser
            # call. Anything else goes the long way (framing rules, joins, diagnostics)
            if piece and piece[0] == 0x7B and piece[-1] != 13 and not held:
                if tdecode is not None:
                    try:
                        event = tdecode(piece)
                    except _TYPED_REFUSED:
                        event = None  # another kind, or a shape for the generic path
                    # msgspec does not check UTF-8 in what it skips: a line it read that is not
                    # ASCII is checked after (cursor_typed's notes), so the many lines of other
                    # kinds are never decoded twice; a line that is not UTF-8 gets orjson's verdict
                    if event is not None and (piece.isascii() or _utf8(piece)):
                        event.line = number
                        event.offset = offset
                        event.raw = piece  # (its size is len(raw) + 1)
                        append(event)
                        offset += size
                        continue
                try:
                    value = loads(piece)
                except orjson.JSONDecodeError:
                    value = None
                if value is not None:  # it starts with "{": a valid value is an object
                    append(Event(value, number, offset, size))
                    offset += size
                    continue
            raw = framer.frame(piece, number, offset)
            if raw is not None:
                out.extend(parser.feed_line(raw))
            offset += size
        framer.advance(number, offset)
        return out

    def flush(self) -> list[Item]:
        """Release a held broken line as a diagnostic (idle stream)."""
        return self.parser.flush()

    def finish(self) -> list[Item]:
        """End of input: the last unterminated line, then held lines."""
        out: list[Item] = []
        for raw in self.framer.finish():
            out.extend(self.parser.feed_line(raw))
        out.extend(self.parser.finish())
        return out


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode_all(chunks: Iterable[bytes], typed: Any = None) -> list[Item]:
    """Decode a whole stream given as chunks; convenience for tests and tools.

    Generic :class:`Event` objects unless ``typed`` (see :class:`Decoder`)."""
    dec = Decoder(typed)
    out: list[Item] = []
    for chunk in chunks:
        out.extend(dec.feed(chunk))
    out.extend(dec.finish())
    return out
