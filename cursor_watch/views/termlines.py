"""Styled lines written in batches, byte for byte what Rich's ``Console.print`` writes.

The plain printer prints tens of thousands of short lines; through ``Console.print`` each
costs about 100 µs (render, segment, style, write and flush one line), two thirds of the
time of ``--plain`` on an event-dense stream. :class:`LineWriter` produces the
same bytes for the only shape the printer uses, a ``rich.text.Text`` made of a base style
and appended pieces, printed with ``soft_wrap=True`` (no wrapping, no cropping), and writes
them once per batch.

What Rich does with such a Text, and so what this module reproduces (rich 13-15,
``Text.render`` and ``Console._render_buffer``):

* the text is cut into lines at ``\\n``; each line's pieces are segments, cut at every
  piece boundary, except that neighbouring unstyled pieces form one segment;
* a segment's style is the base style combined with its piece's style; it is written as
  ``<SGR>text<reset>`` when that style has SGR codes for the console's colour system,
  else as bare text (the ``\\n`` between lines and at the end is always bare);
* without a colour system (not a terminal, ``TERM=dumb``) nothing is styled.

The codes of each (base, piece style) pair come from Rich itself, rendered once through
``Console.capture`` (so ``NO_COLOR``, the colour system and the theme are Rich's
decisions). Text holding what Rich changes (a tab, which it expands by cell width and
splits the segment at; a control code it strips) is rendered by Rich, through the same
capture. Stream text reaches this module already escaped (:mod:`cursor_watch.safe`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from ..output import OutputClosed

Piece = tuple[str, "str | None"]  # (text, style or None)

# what Rich's Text changes in the text itself: tabs (expanded) and the control codes
# strip_control_codes removes (BEL, BS, VT, FF, CR)
_RICH_CHANGES = re.compile("[\t\x07\x08\x0b\x0c\r]")
_MARK = "\x00"  # kept by Rich's Text; splits a captured render into codes and text


def rich_text(base: str | None, pieces: Sequence[Piece]) -> Text:
    """The ``Text`` these pieces stand for: base style ``base``, each piece appended with its style."""
    text = Text(style=base or "")
    for piece, style in pieces:
        text.append(piece, style=style)
    return text


class LineWriter:
    """Lines for ``console``'s file, buffered until :meth:`flush`.

    Args:
        console: the Console the lines would be printed on; it decides colour (its
            colour system, ``NO_COLOR``) and is used for the rare line Rich must render.

    Raises :class:`~cursor_watch.output.OutputClosed` from :meth:`flush` when the reader
    closed the output (a ``BrokenPipeError``), as the stream console does.
    """

    __slots__ = ("console", "colour", "_buffer", "_codes")

    def __init__(self, console: Console) -> None:
        self.console = console
        self.colour = console.color_system is not None
        self._buffer: list[str] = []
        self._codes: dict[tuple[str | None, str | None], tuple[str, str] | None] = {}

    def line(self, pieces: Sequence[Piece], base: str | None = None) -> None:
        """Add one printed item: ``pieces`` on base style ``base``, then a newline."""
        if not self.colour:
            text = pieces[0][0] if len(pieces) == 1 else "".join([p[0] for p in pieces])
            if _RICH_CHANGES.search(text) is None:
                self._buffer.append(text + "\n")
                return
        elif not any(_RICH_CHANGES.search(p[0]) for p in pieces):
            self._buffer.append(self._styled(pieces, base))
            return
        self._buffer.append(self._render(rich_text(base, pieces)))

    def _styled(self, pieces: Sequence[Piece], base: str | None) -> str:
        segments: list[list] = []  # [text, style]: neighbouring unstyled pieces are one segment
        for text, style in pieces:
            if not text:
                continue
            style = style or None
            if style is None and segments and segments[-1][1] is None:
                segments[-1][0] += text
            else:
                segments.append([text, style])
        out = []
        codes = self._codes
        base = base or None
        for text, style in segments:
            key = (base, style)
            sgr = codes[key] if key in codes else self._codes_for(key)
            if sgr is None:
                out.append(text)
            elif "\n" in text:
                start, end = sgr
                out.append("\n".join([start + part + end if part else "" for part in text.split("\n")]))
            else:
                out.append(sgr[0] + text + sgr[1])
        out.append("\n")
        return "".join(out)

    def _codes_for(self, key: tuple[str | None, str | None]) -> tuple[str, str] | None:
        """The codes Rich writes around a segment of style base + piece style (None: bare)."""
        rendered = self._render(rich_text(key[0], [(_MARK, key[1])]))
        start, _, end = rendered[:-1].partition(_MARK)
        codes = (start, end) if start or end else None
        self._codes[key] = codes
        return codes

    def _render(self, text: Text) -> str:
        with self.console.capture() as capture:
            self.console.print(text)
        return capture.get()

    def flush(self) -> None:
        """Write the buffered lines with one write and one flush."""
        if not self._buffer:
            return
        data = "".join(self._buffer)
        self._buffer.clear()
        file = self.console.file
        try:
            file.write(data)
            file.flush()
        except BrokenPipeError:
            raise OutputClosed() from None
