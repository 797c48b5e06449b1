"""How the agent's Markdown is parsed for a terminal: text that looks like HTML stays text.

The agent writes Markdown for a chat view, but its text is full of things CommonMark reads
as raw HTML: ``tasks set <id> --status plan``, ``Vec<String>``, ``<file>``, ``<br>``.
Rich's and Textual's Markdown parse with raw HTML on and then drop every ``html_inline`` and
``html_block`` token (checked on rich 15 / textual 8.2), so those words vanished from the
TUI. The parser here has raw HTML **off** (a tag is text, shown as written),
character references off (``&amp;`` is shown as the agent wrote it, not as ``&``), and
a single newline is a line break (``breaks``): the agent's lines, often quoted command
output (``HTTP/2 200`` then ``DONE``), are never joined into one.

:func:`text_parser` is the factory Textual's ``Markdown`` widget takes (the tool-call
detail: a plan, a fetched page, a sub-agent's text), the HTML export's parser, and, through
:func:`shared_parser`, the transcript's (``widgets/transcript.py``: Rich's ``Markdown`` on it).
Only markdown-it is imported here (the exports and ``--plain`` load no Rich Markdown).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt


def text_parser() -> MarkdownIt:
    """A new markdown-it parser: CommonMark with tables and strikethrough, no raw HTML, no
    character references, single newlines as line breaks (see the module docstring)."""
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(["table", "strikethrough"])
    md.disable("entity")
    md.core.ruler.push("hard_breaks", _hard_breaks)
    return md


def _hard_breaks(state: Any) -> None:
    """Make every soft line break a hard one. ``breaks`` only changes markdown-it's own HTML
    renderer; Rich and Textual read the tokens, and render a ``softbreak`` as a space."""
    for token in state.tokens:
        if token.type == "inline" and token.children:
            for child in token.children:
                if child.type == "softbreak":
                    child.type = "hardbreak"


@lru_cache(maxsize=1)
def shared_parser() -> MarkdownIt:
    """One :func:`text_parser` for every message (parsing keeps no state in the parser)."""
    return text_parser()
