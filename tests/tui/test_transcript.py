"""The transcript (its Markdown renderable and the widget, Pilot): the agent's text is drawn as
written. Text that looks like HTML (``<id>``, ``Vec<String>``, ``<br>``, ``&amp;``) is shown as
text, every character of the source is drawn, and a line of the agent's text is never joined to
the next; a hook's output is shown under its note."""

from __future__ import annotations

import io
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from apphelpers import make_app, wait_until
from cursorstreams import INIT, RESULT, ev
from streamlines import claude_init, claude_text, line
from cursor_watch.stream.sources import FileSource
from cursor_watch.tui.widgets.transcript import Transcript, markdown

SIZE = (160, 48)


def assistant(text: str, ts: int = 1_790_000_000_500) -> bytes:
    return ev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": text}]},
              timestamp_ms=ts)


def rendered(text: str, width: int = 60) -> str:
    """What the transcript draws for a segment of ``text`` (its Markdown renderable), as plain text."""
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    lines = console.render_lines(markdown(text), console.options.update_width(width), pad=False)
    return "\n".join("".join(seg.text for seg in line) for line in lines)


def in_order(needle: str, haystack: str) -> bool:
    """Every character of ``needle`` occurs in ``haystack``, in the same order."""
    it = iter(haystack)
    return all(ch in it for ch in needle)


# -- HTML-looking text is text ---------------------------------------------------------------------

REJECTION = "Rejected: run `tasks set <id> --status plan` first, then read <file> into a Vec<String>.<br>Done & dusted"


def test_html_looking_text_is_shown_as_written():
    out = rendered(REJECTION, width=200)
    for part in ("tasks set <id> --status plan", "<file>", "Vec<String>", "<br>", "& dusted"):
        assert part in out, (part, out)
    # a block of "HTML" too, and character references as the agent wrote them
    out = rendered("<div class=\"x\">\n<b>bold?</b>\n</div>\n\nAT&amp;T &lt;tag&gt;", width=200)
    for part in ('<div class="x">', "<b>bold?</b>", "</div>", "AT&amp;T &lt;tag&gt;"):
        assert part in out, (part, out)


def test_each_line_of_the_agent_text_stays_a_line():
    # quoted shell output: "HTTP/2 200 " (a trailing space) then "DONE" was drawn as one line
    lines = [line.strip() for line in rendered("The status line:\nHTTP/2 200 \nDONE", width=80).splitlines()]
    assert lines[:3] == ["The status line:", "HTTP/2 200", "DONE"]


# Random text of words, tag-like fragments, ampersands and character references, backtick runs
# and fences. Backticks are Markdown syntax (code spans and fences) and may be consumed; every
# other non-space character must be drawn, in order. The alphabet has no other syntax character
# that CommonMark would consume (no *, _, #, [, |, \, no "-", "=" or ">" at a line start, no ":").
_pieces = st.one_of(
    st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True),
    st.sampled_from(["<id>", "</b>", "<br>", "<br/>", "<file>", "Vec<String>", "<div class=\"x\">", "</div>",
                     "<a href=\"x\">", "<!-- c -->", "<?php", "<![CDATA[", "&", "&amp;", "&lt;", "&#60;", "a&b",
                     "<", "x>y", "a >", "a<b", "`", "``", "```", "`<id>`", "a=b", "\"q\"", "'s"]),
)
_separators = st.sampled_from([" ", " ", " ", "\n", "\n\n", "\n```\n", "\n    ", "  \n"])


@st.composite
def agent_text(draw) -> str:
    pieces = draw(st.lists(_pieces, min_size=1, max_size=30))
    out = [pieces[0]]
    for piece in pieces[1:]:
        out.append(draw(_separators))
        out.append(piece)
    return "".join(out)


def without_fence_info(text: str) -> str:
    """``text`` without the info strings of its fences (```` ```python ````: the code's language,
    which names the highlighting and is not drawn), found by the transcript's own parser."""
    from cursor_watch.views.mdtext import text_parser

    lines = text.split("\n")
    for token in text_parser().parse(text):
        if token.type == "fence" and token.info and token.map:
            n = token.map[0]
            lines[n] = lines[n][: len(lines[n]) - len(lines[n].lstrip(" "))] + token.markup
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=agent_text(), width=st.sampled_from([30, 60, 120]))
def test_property_every_character_of_the_source_is_drawn(text, width):
    want = re.sub(r"[\s`]", "", without_fence_info(text))
    got = re.sub(r"[\s`]", "", rendered(text, width))
    assert in_order(want, got), (text, rendered(text, width))


async def test_transcript_shows_angle_brackets_from_a_stream(tmp_path):
    path = tmp_path / "rejected.jsonl"
    path.write_bytes(INIT + assistant(REJECTION + "\n\nStatus:\nHTTP/2 200 \nDONE") + RESULT)
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        text = app.run_view().query_one(Transcript).rendered_text()
        assert "tasks set <id> --status plan" in text and "Vec<String>.<br>Done & dusted" in text
        lines = [line.strip() for line in text.splitlines()]
        assert "HTTP/2 200" in lines and "DONE" in lines


# -- a hook's output under its note ----------------------------------------------------------------

async def test_the_transcript_shows_a_hooks_output_under_its_note(tmp_path):
    from apphelpers import make_app, wait_until
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.transcript import Transcript

    f = tmp_path / "run.jsonl"
    f.write_bytes(claude_init()
                  + line(type="system", subtype="hook_response", hook_id="h1", hook_name="UserPromptSubmit",
                         hook_event="UserPromptSubmit", stdout="one\ntwo\nthree\nfour\nfive", stderr="", exit_code=0,
                         outcome="success", session_id="s1")
                  + claude_text("done"))
    app = make_app(FileSource(str(f)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        text = app.run_view().query_one(Transcript).rendered_text()
        lines = [line.strip() for line in text.splitlines()]
        at = lines.index("· hook UserPromptSubmit: success")
        assert lines[at + 1: at + 4] == ["one", "two", "three"] and lines[at + 4].startswith("… 2 more lines")
        assert "four" not in lines
