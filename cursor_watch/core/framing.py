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
        pieces = self.split(chunk)
        if not pieces:
            return []
        out: list[RawLine] = []
        append = out.append
        offset = self._offset
        number = self._number
        frame = self.frame
        for piece in pieces:
            number += 1
            line = frame(piece, number, offset)
            if line is not None:
                append(line)
            offset += len(piece) + 1
        self.advance(number, offset)
        return out

    def split(self, chunk: bytes) -> list[bytes]:
        """Add ``chunk``; return the pieces of the lines it completes, in order.

        A piece is a whole physical line without its ``\n`` (BOM and CR still in it,
        blank ones included). The caller numbers them from ``line_number + 1`` and
        places them from ``offset`` (each takes ``len(piece) + 1`` bytes), turns each
        into a line with :meth:`frame`, then calls :meth:`advance` with the number and
        offset after the last one. A piece that starts with ``{`` and does not end with
        CR is its own line's data (no BOM, not blank, no CR to remove): every line of a
        well-formed stream is, and the decoder parses those without a RawLine.
        """
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
        return pieces

    @staticmethod
    def frame(piece: bytes, number: int, offset: int) -> RawLine | None:
        """The :class:`RawLine` of one piece from :meth:`split` (None for a blank line):
        a leading BOM and a trailing CR are removed."""
        size = len(piece) + 1
        data = piece
        if data and data[0] == 0xEF and data.startswith(BOM):
            data = data[3:]
        if data and data[-1] == 13:  # CR of a CRLF
            data = data[:-1]
        return RawLine(number, offset, size, data) if data else None

    def advance(self, number: int, offset: int) -> None:
        """The pieces from :meth:`split` were consumed up to line ``number``, ending at ``offset``."""
        self._offset = offset
        self._number = number
        self.lines_seen = number

    @property
    def line_number(self) -> int:
        """Physical lines framed so far (the number of the last one)."""
        return self._number

    @property
    def offset(self) -> int:
        """Byte offset where the next line begins."""
        return self._offset

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
