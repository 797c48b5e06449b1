"""Terminal safety: make untrusted stream text visible, never active.

Tool results carry arbitrary file contents and command output. Control
characters and escape sequences (ANSI colours, cursor movement, OSC 52 clipboard
writes, title changes, hyperlinks, bells) must never reach the user's terminal
raw: every view passes stream text through :func:`visible` first. Neither Rich
nor Textual strips ESC, CSI (0x9b) or OSC from text they render (checked on
rich 15 / textual 8.2).

The same two functions are where the browser view (``serve``) redacts: a process that
textual-serve runs for a browser tab runs its app inside :func:`redacting_views`, and every text
the TUI shows through :func:`visible` or :func:`visible_line` has its secrets replaced first. The
TUI on the user's own terminal runs without it. The redactor is a context variable, set for the
extent of that ``with`` block (the app's event loop and its tasks inherit it), not a setting of
the module.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

# C0 controls except TAB and LF, DEL, C1 controls; plus bidi overrides that can
# disguise text (Trojan Source) are shown too.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Documents (HTML, Markdown) also can't carry lone surrogates (UTF-8 can't encode them) or
# noncharacters (an HTML parse error): those are shown too.
_DOC_EXTRA = "\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
_UNSAFE_DOC = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069{_DOC_EXTRA}]")
_UNSAFE_DOC_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069{_DOC_EXTRA}]")


_view_redactor: ContextVar[Callable[[str], str] | None] = ContextVar("cursor_watch_view_redactor", default=None)
_view_redact = _view_redactor.get  # (the hot path's lookup, bound once)


@contextlib.contextmanager
def redacting_views(redactor: Callable[[str], str] | None) -> Iterator[None]:
    """Within the block, every text :func:`visible` and :func:`visible_line` return is redacted
    first (``redactor``: a :class:`~cursor_watch.outlets.redact.Redactor`, or any ``str -> str``;
    None: nothing is). A browser tab's app runs inside it (``serve``); the event loop started in
    the block and its tasks see it."""
    token = _view_redactor.set(redactor)
    try:
        yield
    finally:
        _view_redactor.reset(token)


def view_redaction() -> Any:
    """The view redactor of :func:`redacting_views` in effect (None: the views show everything)."""
    return _view_redact()


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code == 0x1B:
        return "\\e"
    if code == 0x0D:
        return "\\r"
    if code == 0x0A:
        return "\\n"
    if code == 0x09:
        return "\\t"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def fold_cr(text: str) -> str:
    """Carriage returns the way a terminal shows them: ``\\r\\n`` is a line end, and a lone
    ``\\r`` returns to the start of the line, whose later text overwrites the earlier
    (``"10%\\r20%\\r100%"`` shows ``100%``; ``"abcdef\\rXY"`` shows ``XYcdef``).

    Tool output from Windows shells ends lines with CRLF; progress bars redraw one line with
    lone CRs. Characters, not terminal cells, are overwritten (a wide character counts as one).
    """
    if "\r" not in text:
        return text
    text = text.replace("\r\n", "\n")
    if "\r" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "\r" in line:
            parts = line.split("\r")
            shown = parts[0]
            for part in parts[1:]:
                shown = part + shown[len(part):]
            lines[i] = shown
    return "\n".join(lines)


def visible(text: str) -> str:
    """Escape control characters (keeping newlines and tabs) as ``\\e``, ``\\x07``, ...

    ``"\\x1b[31mred"`` becomes the 8 visible characters ``\\e[31mred``. Carriage returns are
    first applied as a terminal would (:func:`fold_cr`): text of many lines is shown as it
    would look on a terminal, never with a literal ``\\r``. With a view redactor set
    (:func:`redacting_views`), secrets are replaced first.
    """
    redact = _view_redact()
    if redact is not None:
        text = redact(text)
    if text.isprintable() or not _UNSAFE.search(text):
        return text
    if "\r" in text:
        text = fold_cr(text)
        if not _UNSAFE.search(text):
            return text
    return _UNSAFE.sub(_escape, text)


def visible_line(text: str) -> str:
    """Like :func:`visible`, and newlines/tabs too: for one-line fields (a ``call_id``)."""
    redact = _view_redact()
    if redact is not None:
        text = redact(text)
    if text.isprintable():
        return text
    return _UNSAFE_LINE.sub(_escape, text)


def visible_doc(text: str, line: bool = False) -> str:
    """:func:`visible` (or, with ``line``, :func:`visible_line`) for documents (HTML, Markdown).

    Also shows lone surrogates and the noncharacters U+FDD0-U+FDEF, U+FFFE and U+FFFF
    (``\\udc80``, ``\\ufffe``), which UTF-8 can't encode or an HTML parser rejects. Text of
    many lines gets its carriage returns applied (:func:`fold_cr`), as :func:`visible` does.
    """
    if text.isprintable():
        return text
    if not line and "\r" in text:
        text = fold_cr(text)
    return (_UNSAFE_DOC_LINE if line else _UNSAFE_DOC).sub(_escape, text)
