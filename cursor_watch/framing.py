"""Bytes to lines: the NDJSON framing of a cursor-agent stream.

Rules (Cursor's docs: "one JSON object per line"; the rest from real captures and
``stream-json-reference.md`` section 1):

* lines end with ``\\n``; a ``\\r`` before it (CRLF) is removed;
* blank lines are skipped but still counted and numbered;
* a UTF-8 byte-order mark at the start of a line is removed (files saved with one
  and concatenated, ``cat a.jsonl b.jsonl``, put it at the start of a later line);
* there is no line-length cap: tool results carry whole files, and a 64 MB line
  must frame as one line.

The framer never decodes or parses anything; it only cuts bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class RawLine:
    """One physical line of the stream.

    Attributes:
        number: 1-based physical line number (blank lines count).
        offset: byte offset of the line's first byte in the stream (BOM included).
        size: bytes the line occupies in the stream, its ``\\n`` included.
        data: the line's bytes without ``\\n``, trailing ``\\r`` or leading BOM.
    """

    number: int
    offset: int
    size: int
    data: bytes


class LineFramer:
    """Cuts a byte stream, delivered in chunks of any size, into :class:`RawLine`.

    Feeding the same bytes in any chunking gives the same lines. Memory is the
    longest partial line held, never more.
    """

    __slots__ = ("_parts", "_offset", "_number", "lines_seen", "bytes_seen")

    def __init__(self, start_offset: int = 0, start_line: int = 0) -> None:
        self._parts: list[bytes] = []  # pieces of the current unfinished line
        self._offset = start_offset  # offset of the current line's first byte
        self._number = start_line
        self.lines_seen = start_line
        self.bytes_seen = start_offset

    def feed(self, chunk: bytes) -> list[RawLine]:
        """Add ``chunk`` and return the lines it completes (blank ones excluded)."""
        if not chunk:
            return []
        self.bytes_seen += len(chunk)
        if b"\n" not in chunk:
            self._parts.append(chunk)
            return []
        pieces = chunk.split(b"\n")
        if self._parts:
            self._parts.append(pieces[0])
            pieces[0] = b"".join(self._parts)
            self._parts = []
        tail = pieces.pop()
        if tail:
            self._parts.append(tail)
        out: list[RawLine] = []
        append = out.append
        offset = self._offset
        number = self._number
        for piece in pieces:
            number += 1
            size = len(piece) + 1
            data = piece
            if data and data[0] == 0xEF and data.startswith(BOM):
                data = data[3:]
            if data and data[-1] == 13:  # CR of a CRLF
                data = data[:-1]
            if data:
                append(RawLine(number, offset, size, data))
            offset += size
        self._offset = offset
        self._number = number
        self.lines_seen = number
        return out

    def finish(self) -> list[RawLine]:
        """End of input: return the last line if it had no ``\\n``."""
        if not self._parts:
            return []
        data = b"".join(self._parts)
        self._parts = []
        self._number += 1
        self.lines_seen = self._number
        size = len(data)
        if data.startswith(BOM):
            data = data[3:]
        if data.endswith(b"\r"):
            data = data[:-1]
        line = RawLine(self._number, self._offset, size, data)
        self._offset += size
        return [line] if data else []

    def restart(self) -> None:
        """The input starts over (a followed file was truncated or replaced).

        Call :meth:`finish` first. Offsets restart at 0; line numbers go on.
        """
        self._parts = []
        self._offset = 0
        self.bytes_seen = 0

    @property
    def pending_bytes(self) -> int:
        """Bytes of an unfinished line held (0 when at a line boundary)."""
        return sum(len(p) for p in self._parts)
