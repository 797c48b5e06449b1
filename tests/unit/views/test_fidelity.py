"""Nothing dropped: what the stream holds is what the screen shows.

Item 1: text that looks like HTML (``<id>``, ``Vec<String>``, ``<br>``, ``&amp;``) is shown as
text wherever Markdown is rendered (transcript, detail, plan), and a line of the agent's text is
never joined to the next. Item 2: carriage returns are shown as a terminal would. Item 3: JSON
and Markdown inside strings are shown decoded.
"""

from __future__ import annotations

import io
import re

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from apphelpers import make_app, wait_until
from cursor_watch.stream.sources import FileSource
from cursor_watch.tui.widgets.transcript import Transcript, markdown

SIZE = (160, 48)


def ev(**kw) -> bytes:
    kw.setdefault("session_id", "sess-18")
    return orjson.dumps(kw) + b"\n"


INIT = ev(type="system", subtype="init", apiKeySource="login", cwd="/home/dev/acme", model="Composer 2.5",
          permissionMode="default", timestamp_ms=1_790_000_000_000)
RESULT = ev(type="result", subtype="success", is_error=False, duration_ms=1200, result="", timestamp_ms=1_790_000_001_200)


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


# -- item 1: HTML-looking text is text ------------------------------------------------------------

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


# -- item 2: carriage returns, as a terminal shows them ------------------------------------------

def test_fold_cr_keeps_what_a_terminal_would_show():
    from cursor_watch.safe import fold_cr, visible, visible_doc

    assert fold_cr("a\r\nb\r\n") == "a\nb\n"
    assert fold_cr("10%\r50%\r100%\ndone") == "100%\ndone"
    assert fold_cr("abcdef\rXY") == "XYcdef"  # a shorter redraw leaves the end of the longer line
    assert fold_cr("progress\r") == "progress"
    assert fold_cr("a\r\r\nb") == "a\nb"
    for view in (visible, visible_doc):
        assert view("ok\r\nfine\r\n\x1b[31m") == "ok\nfine\n\\e[31m"
    assert visible_doc("id\r1", line=True) == "id\\r1"  # a one-line field shows it


SHELL_CRLF = {"stdout": "HTTP/2 200\r\ncontent-type: text/html\r\n", "stderr": "  0%\r 45%\r100%\r\n",
              "exitCode": 0}


def shell_stream(result_payload: dict, outcome: str = "success", call_id: str = "c1") -> bytes:
    return (ev(type="tool_call", subtype="started", call_id=call_id, timestamp_ms=1_790_000_000_100,
               tool_call={"shellToolCall": {"args": {"command": "curl -sI https://example.com"}}})
            + ev(type="tool_call", subtype="completed", call_id=call_id, timestamp_ms=1_790_000_000_300,
                 tool_call={"shellToolCall": {"args": {"command": "curl -sI https://example.com"},
                                              "result": {outcome: result_payload}}}))


async def detail_text(app, pilot, call_id: str, raw: bool = False) -> str:
    """Every line the detail screen of ``call_id`` draws (its Markdown rendered), as plain text;
    the folded raw JSON only with ``raw``."""
    from textual.widgets import Collapsible, Markdown, Static

    from apphelpers import text_of
    from cursor_watch.tui.screens.detail import ToolDetailScreen

    if isinstance(app.screen, ToolDetailScreen):
        app.pop_screen()
        await wait_until(pilot, lambda: not isinstance(app.screen, ToolDetailScreen))
    app.open_detail(call_id)
    await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
    screen = app.screen
    parts = []
    for w in screen.query("*"):
        if isinstance(w, Markdown):
            continue  # its blocks are Statics, below
        if isinstance(w, Static) and (raw or not any(isinstance(a, Collapsible) for a in w.ancestors)):
            parts.append(text_of(w))
    return "\n".join(parts)


async def test_crlf_and_progress_output_in_the_detail(tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(INIT + shell_stream(SHELL_CRLF) + RESULT)
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        text = await detail_text(app, pilot, "c1")
        assert "\\r" not in text and "\r" not in text
        assert "HTTP/2 200\ncontent-type: text/html" in text
        assert "100%" in text and "45%" not in text


def test_crlf_and_progress_output_in_the_exports(tmp_path):
    from cursor_watch.views.export import export_runs
    from replays import watch_runs

    path = tmp_path / "crlf.jsonl"
    path.write_bytes(INIT + shell_stream(SHELL_CRLF) + RESULT)
    for ext in ("html", "md"):
        out = tmp_path / f"run.{ext}"
        export_runs(str(out), watch_runs(path))
        doc = out.read_text()
        assert "\\r" not in doc and "\r" not in doc, ext
        assert "HTTP/2 200\ncontent-type: text/html" in doc and "100%" in doc and "45%" not in doc, ext


# -- item 3: JSON and Markdown inside strings ------------------------------------------------------

def crew_capture():
    from conftest import REAL_DIR

    path = REAL_DIR / "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl"
    if not path.exists():
        pytest.skip(f"real captures not found at {REAL_DIR}")
    return path


async def test_mcp_tool_listing_is_shown_decoded_with_the_raw_form_one_key_away():
    from textual.widgets import Collapsible

    path = crew_capture()  # getMcpToolsToolCall: the tool's schema is JSON written into a string
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        call = next(c for c in app.session.tool_calls.values() if c.tool == "getMcpTools")
        text = await detail_text(app, pilot, call.call_id)
        assert "tool description (JSON)" in text
        assert '"tool": "TodoWrite",' in text and '"minItems": 2,' in text  # decoded, one key a line
        assert '\\n' not in text.split("tool description (JSON)")[1]  # no escapes left in the decoded view
        folds = list(app.screen.query(Collapsible))
        assert folds and all(c.collapsed for c in folds)
        await pilot.press("r")  # the raw form: the string as the stream has it
        await wait_until(pilot, lambda: not any(c.collapsed for c in folds))
        raw = await detail_text(app, pilot, call.call_id, raw=True)
        assert '"content": "{\\n  \\"tool\\": \\"TodoWrite\\"' in raw


def test_mcp_tool_listing_in_the_exports():
    from cursor_watch.views.export import export_runs
    from replays import watch_runs

    path = crew_capture()
    runs = watch_runs(path)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        export_runs(f"{d}/run.md", runs)
        export_runs(f"{d}/run.html", runs)
        md = open(f"{d}/run.md").read()
        page = open(f"{d}/run.html").read()
    assert '```json\n{\n  "tool": "TodoWrite",\n' in md
    assert '\\"tool\\"' not in md and '\\"tool\\"' not in page
    assert "pg-" in page.split("tool description (JSON)")[1][:3000]  # highlighted


PLAN = "# Fix the adder\n\n1. Read `src/math.js`\n2. Make `add` return a + b\n\n- [ ] run `npm test`"


def plan_stream() -> bytes:
    args = {"name": "Fix add", "overview": "add returns the difference", "plan": PLAN,
            "todos": [{"id": "1", "content": "Fix add", "status": "TODO_STATUS_PENDING"}]}
    return (ev(type="tool_call", subtype="started", call_id="plan-1", timestamp_ms=1_790_000_000_100,
               tool_call={"createPlanToolCall": {"args": args}})
            + ev(type="tool_call", subtype="completed", call_id="plan-1", timestamp_ms=1_790_000_000_200,
                 tool_call={"createPlanToolCall": {"args": args, "result": {"success": {}}}}))


MCP_JSON = {"text": {"text": '{"issues": [{"id": 18, "title": "first hour"}], "total": 1}'}}


def mcp_stream() -> bytes:
    args = {"name": "linear-list_issues", "args": {"team": "cw"}, "toolCallId": "m1", "providerIdentifier": "linear",
            "toolName": "list_issues"}
    return ev(type="tool_call", subtype="completed", call_id="m1", timestamp_ms=1_790_000_000_400,
              tool_call={"mcpToolCall": {"args": args, "result": {"success": {"content": [MCP_JSON], "isError": False}}}})


async def test_plan_renders_as_markdown_and_mcp_json_is_decoded_in_the_detail(tmp_path):
    from textual.widgets import Markdown

    path = tmp_path / "plan.jsonl"
    path.write_bytes(INIT + plan_stream() + mcp_stream() + RESULT)
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        text = await detail_text(app, pilot, "plan-1")
        [md] = [m for m in app.screen.query(Markdown)]
        assert md.source == PLAN
        assert "Fix the adder" in text and "Read src/math.js" in text and "\\n" not in text
        assert "# Fix the adder" not in text  # a heading, not its source
        assert "Fix add" in text and "☐" in text  # the todos as a checklist
        text = await detail_text(app, pilot, "m1")
        assert '"total": 1' in text and '"title": "first hour"' in text and '\\"' not in text


def test_plan_in_the_exports_is_markdown(tmp_path):
    from cursor_watch.views.export import export_runs
    from replays import watch_runs

    path = tmp_path / "plan.jsonl"
    path.write_bytes(INIT + plan_stream() + mcp_stream() + RESULT)
    runs = watch_runs(path)
    export_runs(str(tmp_path / "run.md"), runs)
    export_runs(str(tmp_path / "run.html"), runs)
    md = (tmp_path / "run.md").read_text()
    page = (tmp_path / "run.html").read_text()
    assert "\n# Fix the adder\n\n1. Read `src/math.js`\n" in md  # Markdown in the document, not a string
    assert "Fix the adder\\n" not in md and "Fix the adder\\n" not in page
    assert "<h1>Fix the adder</h1>" in page and "<code>src/math.js</code>" in page
    assert '"title": "first hour"' in md


def test_a_reason_of_several_lines_in_the_markdown_export(tmp_path):
    from cursor_watch.views.export import export_runs
    from replays import watch_runs

    short = "Not allowed by the policy:\nnetwork access is off"
    long = "Denied.\n" + "the sandbox forbids this command; " * 10 + "\nask an admin"
    path = tmp_path / "rejected.jsonl"
    path.write_bytes(INIT + shell_stream({"command": "curl x", "reason": short}, outcome="rejected")
                     + shell_stream({"command": "curl y", "reason": long}, outcome="rejected", call_id="c2") + RESULT)
    export_runs(str(tmp_path / "run.md"), watch_runs(path))
    md = (tmp_path / "run.md").read_text()
    assert "policy:\\n" not in md and "Denied.\\n" not in md  # never a literal \n
    # each reason once, whole, on its call's status line (a long reason
    # is no longer cut there and repeated below), its whitespace folded
    details = md.split("<details>")[1].split("</details>")[0]
    assert details.count("Not allowed by the policy") == 1
    assert "rejected: Not allowed by the policy: network access is off" in details
    second = md.split("<details>")[2].split("</details>")[0]
    assert second.count("Denied.") == 1
    assert "rejected: " + " ".join(long.split()) + "`" in second
