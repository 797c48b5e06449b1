"""Terminal safety: make untrusted stream text visible, never active.

Tool results carry arbitrary file contents and command output. Control
characters and escape sequences (ANSI colours, cursor movement, OSC 52 clipboard
writes, title changes, hyperlinks, bells) must never reach the user's terminal
raw: every view passes stream text through :func:`visible` first. Neither Rich
nor Textual strips ESC, CSI (0x9b) or OSC from text they render (checked on
rich 15 / textual 8.2).
"""

from __future__ import annotations

import re

# C0 controls except TAB and LF, DEL, C1 controls; plus bidi overrides that can
# disguise text (Trojan Source) are shown too.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Documents (HTML, Markdown) also can't carry lone surrogates (UTF-8 can't encode them) or
# noncharacters (an HTML parse error): those are shown too.
_DOC_EXTRA = "\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
_UNSAFE_DOC = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069{_DOC_EXTRA}]")
_UNSAFE_DOC_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069{_DOC_EXTRA}]")


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


def visible(text: str) -> str:
    """Escape control characters (keeping newlines and tabs) as ``\\e``, ``\\x07``, ...

    ``"\\x1b[31mred"`` becomes the 8 visible characters ``\\e[31mred``.
    """
    if text.isprintable() or not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_escape, text)


def visible_line(text: str) -> str:
    """Like :func:`visible`, and newlines/tabs too: for one-line fields (a ``call_id``)."""
    if text.isprintable():
        return text
    return _UNSAFE_LINE.sub(_escape, text)


def visible_doc(text: str, line: bool = False) -> str:
    """:func:`visible` (or, with ``line``, :func:`visible_line`) for documents (HTML, Markdown).

    Also shows lone surrogates and the noncharacters U+FDD0-U+FDEF, U+FFFE and U+FFFF
    (``\\udc80``, ``\\ufffe``), which UTF-8 can't encode or an HTML parser rejects.
    """
    if text.isprintable():
        return text
    return (_UNSAFE_DOC_LINE if line else _UNSAFE_DOC).sub(_escape, text)
