"""--export: HTML and Markdown documents of runs, hostile input, size limits, the CLI; payloads as
written (carriage returns folded as a terminal shows them, JSON and Markdown inside strings decoded),
a long reason cut in the table and whole in its call, the agent's version, the last message once.

The HTML is parsed by html5lib in strict mode (a parse error fails the test, as a browser
would have to recover from it); the Markdown by markdown-it-py (CommonMark, raw HTML on, as a
permissive renderer would read it).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from captures import AUTOCOMPACT, CLAUDE_PARTIAL, GEMINI_TOOLS, SIMPLE, crew_capture, need, with_long_reason
from command import cw
from conftest import REAL_DIR, ROOT, SAMPLES, real_params
from cursorstreams import INIT, RESULT, SHELL_CRLF, mcp_stream, plan_stream, shell_stream
from replays import replayed, watch_runs
from hypothesis import given, settings
from hypothesis import strategies as st

from cursor_watch.views.export import export_file_name, export_run_to, export_runs
from cursor_watch.views.export.html import MARKDOWN_MESSAGE_CHARS, SCRIPT, Renderer, markdown_renderer, render_markdown
from cursor_watch.views.export.markdown import GITHUB_COMMENT_CHARS, _Messages, payload_cap
from cursor_watch.stream.payloads import call_detail
from cursor_watch.stream.watch import Monitor
from cursor_watch.safe import visible_doc
from cursor_watch.core.tools import AGENT_MARKDOWN

html5lib = pytest.importorskip("html5lib")
from markdown_it import MarkdownIt  # noqa: E402

PAYLOAD_KINDS = ("text", "code", "diff", "markdown")


# -- helpers -----------------------------------------------------------------------------------

def parse_html(data: bytes):
    """The document as an ElementTree; html5lib strict raises on any parse error."""
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(data)


def text_of(element) -> str:
    return " ".join("".join(element.itertext()).split())


def fences(markdown: str) -> list[str]:
    """The contents of every fenced code block, as CommonMark reads the document."""
    md = MarkdownIt("commonmark", {"html": True})
    return [tok.content for tok in md.parse(markdown) if tok.type == "fence"]


def assert_fences_closed(markdown: str) -> None:
    """Every fenced code block ends with its closing fence (none runs to the end of the document)."""
    lines = markdown.split("\n")
    for tok in MarkdownIt("commonmark", {"html": True}).parse(markdown):
        if tok.type == "fence":
            closing = lines[tok.map[1] - 1].strip()
            assert tok.map[1] - tok.map[0] >= 2 and closing.startswith(tok.markup) and set(closing) == {"`"}, tok.map


def payloads_of(run) -> list[str]:
    """Every payload the documents must show in a code block of its own (as shown: controls escaped)."""
    out = []
    s = run.session
    if s.prompt:
        out.append(s.prompt)
    out += [b.text for b in s.thinking if b.text.strip()]
    for call in s.tool_calls.values():
        sections, _note = call_detail(call, run.reread, raw=False, agent=run.session.agent)
        for section in sections:
            if section.kind in PAYLOAD_KINDS and section.language != AGENT_MARKDOWN:
                out.append(section.body)  # (the agent's own Markdown, a plan, stays Markdown like its messages)
    return [visible_doc(p) for p in out]


def assert_every_payload_fenced(markdown: str, payloads: list[str]) -> None:
    blocks = fences(markdown)
    for payload in payloads:
        want = payload if payload.endswith("\n") else payload + "\n"
        assert want in blocks, f"payload not in a code block of its own: {payload[:80]!r}"


def assert_html_has_every_call_and_segment(html_bytes: bytes, runs) -> list:
    """One ``<details data-call-id>`` per tool call, in order, and every segment's rendered text
    on the page; returns the details elements (in the calls' order)."""
    doc = parse_html(html_bytes)
    calls = [c for run in runs for c in run.session.tool_calls.values()]
    details = doc.findall(".//details[@data-call-id]")
    assert [d.get("data-call-id") for d in details] == [c.call_id for c in calls]
    page = text_of(doc)
    for run in runs:
        for seg in run.session.segments:
            if seg.text.strip():
                rendered = html5lib.parseFragment(render_markdown(seg.text), namespaceHTMLElements=False)
                assert text_of(rendered) in page
    return details


# -- real captures -----------------------------------------------------------------------------

@pytest.mark.parametrize("path", real_params())
def test_real_capture_html_parses_with_one_details_per_tool_call_and_every_segment(path, tmp_path):
    runs = watch_runs(path)
    out = tmp_path / "run.html"
    export_runs(str(out), runs)
    assert_html_has_every_call_and_segment(out.read_bytes(), runs)


@pytest.mark.parametrize("path", real_params())
def test_real_capture_markdown_has_every_payload_in_its_own_code_block(path, tmp_path):
    runs = watch_runs(path)
    out = tmp_path / "run.md"
    export_runs(str(out), runs)
    text = out.read_text()
    assert_every_payload_fenced(text, [p for run in runs for p in payloads_of(run)])
    assert_fences_closed(text)
    assert text.count("\n<details>\n<summary>") >= sum(len(r.session.tool_calls) for r in runs)


AGENTS_DIR = ROOT.parent / "shared" / "streams" / "agents"
AGENT_CAPTURES = [AGENTS_DIR / "claude" / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson",
                  AGENTS_DIR / "claude" / "mccorvie__TauCetiWorker__tests__fixtures__claude_stream_mcp_2_1.jsonl",
                  AGENTS_DIR / "codex" / "Davedat-110105__adk-harness__tests__fixtures__codex_exec_real.jsonl",
                  AGENTS_DIR / "codex" / "mccorvie__TauCetiWorker__tests__fixtures__codex_exec_mcp_0_160.jsonl"]


def agent_params():
    """Claude Code and Codex captures, or one skipped case saying why."""
    if not all(p.exists() for p in AGENT_CAPTURES):
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"agent captures not found at {AGENTS_DIR} (a user's clone has none)"))]
    return [pytest.param(p, id=f"{p.parent.name}-{p.name[:40]}") for p in AGENT_CAPTURES]


@pytest.mark.parametrize("path", agent_params())
def test_agent_capture_exports_to_html_and_markdown_with_every_call_and_payload(path, tmp_path):
    """Another agent's run exports as a Cursor run does: one details element per call (its
    own tool name shown), every segment, every payload fenced in the Markdown."""
    runs = watch_runs(path)
    calls = [c for run in runs for c in run.session.tool_calls.values()]
    assert calls and all(run.session.agent in ("claude-code", "codex") for run in runs)
    html = tmp_path / "run.html"
    export_runs(str(html), runs)
    details = assert_html_has_every_call_and_segment(html.read_bytes(), runs)
    for d, call in zip(details, calls):
        assert call.tool in text_of(d.find("summary"))
    md = tmp_path / "run.md"
    export_runs(str(md), runs)
    text = md.read_text()
    assert_every_payload_fenced(text, [p for run in runs for p in payloads_of(run)])
    assert_fences_closed(text)
    assert text.count("\n<details>\n<summary>") >= len(calls)


# -- hostile input -----------------------------------------------------------------------------

EVIL = ("<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) "
        "<a href=\"javascript:alert(4)\">a</a> </details></summary> ``` ```` \x1b[31mred\x1b]52;c;Zm9v\x07 "
        "\x9b2J &#106;avascript:alert(5) <!-- [x]: javascript:alert(6) \u202e")
EVIL_ID = "call\n<script>\"'&\x1b]0;title\x07</details>"
EVIL_PATH = "/tmp/<img src=x onerror=alert(7)>.py"


def _ev(**kw) -> bytes:
    return orjson.dumps(kw) + b"\n"


def hostile_stream() -> bytes:
    """A run where every string a document shows comes from an attacker."""
    sid = "sess/../../<b>\x1b[2J"
    lines = [
        _ev(type="system", subtype="init", session_id=sid, model="<script>m</script>\x1b[31m",
            cwd="/w/<img src=x onerror=alert(8)>", permissionMode="<i>x</i>", apiKeySource="login"),
        _ev(type="user", message={"role": "user", "content": [{"type": "text", "text": "prompt " + EVIL}]},
            session_id=sid),
        _ev(type="thinking", subtype="delta", text="think " + EVIL, session_id=sid, timestamp_ms=1),
        _ev(type="thinking", subtype="completed", session_id=sid, timestamp_ms=2),
        _ev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": "said " + EVIL}]},
            session_id=sid, timestamp_ms=3, model_call_id="m"),
        _ev(type="tool_call", subtype="started", call_id=EVIL_ID,
            tool_call={"shellToolCall": {"args": {"command": "echo " + EVIL}}}, session_id=sid, timestamp_ms=4),
        _ev(type="tool_call", subtype="completed", call_id=EVIL_ID,
            tool_call={"shellToolCall": {"args": {"command": "echo " + EVIL},
                                         "result": {"failure": {"exitCode": 1, "stdout": "out " + EVIL,
                                                                "stderr": "err ```\n" + EVIL}}}},
            session_id=sid, timestamp_ms=5),
        _ev(type="tool_call", subtype="completed", call_id="r<1>",
            tool_call={"readToolCall": {"args": {"path": EVIL_PATH},
                                        "result": {"success": {"content": "x = '</pre></code></details>'\n" + EVIL}}}},
            session_id=sid, timestamp_ms=6),
        _ev(type="tool_call", subtype="completed", call_id="e1",
            tool_call={"editToolCall": {"args": {"path": "/a.py"},
                                        "result": {"success": {"diffString": "--- a\n+++ b\n+" + EVIL + "\n-```"}}}},
            session_id=sid, timestamp_ms=7),
        _ev(type="tool_call", subtype="completed", call_id="w1",
            tool_call={"webFetchToolCall": {"args": {"url": "javascript:alert(9)"},
                                            "result": {"success": {"markdown": "# page\n" + EVIL}}}},
            session_id=sid, timestamp_ms=8),
        _ev(type="tool_call", subtype="completed", call_id="t1",
            tool_call={"<svg onload=alert(10)>ToolCall": {"args": {"q": EVIL}, "result": {"success": {"v": EVIL}}}},
            session_id=sid, timestamp_ms=9),
        _ev(type="interaction_query", subtype="request", query_type="webFetchRequestQuery<script>",
            query={"id": 0, "webFetchRequestQuery": {"args": {"url": EVIL, "toolCallId": "w1"}}}, session_id=sid,
            timestamp_ms=10),
        b"<script>alert('invalid line')</script>\x1b[31m\n",
        _ev(type="<img src=x onerror=alert(11)>", subtype="x", session_id=sid),
        _ev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": "end " + EVIL}]},
            session_id=sid),
        _ev(type="result", subtype="success", is_error=False, result="said end", duration_ms=10, session_id=sid),
    ]
    return b"".join(lines)


@pytest.fixture
def hostile_runs(tmp_path):
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(hostile_stream())
    return watch_runs(path)


def test_hostile_stream_exports_to_html_with_nothing_active_from_the_stream(hostile_runs, tmp_path):
    out = tmp_path / "h.html"
    export_runs(str(out), hostile_runs)
    raw = out.read_bytes()
    doc = parse_html(raw)  # strict: no parse error (no raw control character either)
    scripts = doc.findall(".//script")
    assert len(scripts) == 1 and scripts[0].text == SCRIPT
    for el in doc.iter():
        for name, value in el.attrib.items():
            assert not name.lower().startswith("on"), (el.tag, name)
            if name in ("href", "src", "action", "formaction"):
                assert not re.match(r"\s*(javascript|data|vbscript):", value, re.I), value
    assert not doc.findall(".//img") and not doc.findall(".//iframe") and not doc.findall(".//svg")
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", raw)
    session = hostile_runs[0].session
    ids = [d.get("data-call-id") for d in doc.findall(".//details[@data-call-id]")]
    assert ids == [visible_doc(c.call_id) for c in session.tool_calls.values()]
    assert EVIL_ID.replace("\x1b", "\\e").replace("\x07", "\\x07") in ids
    page = text_of(doc)
    for shown in ("<script>alert(1)</script>", "\\e[31mred", "<script>m</script>\\e[31m", "/w/<img src=x onerror=alert(8)>",
                  "<svg onload=alert(10)>", "<script>alert('invalid line')</script>\\e[31m"):
        assert shown in page  # shown as text, for the reader to see


def test_html_csp_forbids_loads_and_allows_only_the_pages_own_script_and_styles(hostile_runs, tmp_path):
    out = tmp_path / "h.html"
    export_runs(str(out), hostile_runs)
    doc = parse_html(out.read_bytes())
    meta = doc.find(".//meta[@http-equiv='Content-Security-Policy']")
    policy = dict(part.strip().split(" ", 1) for part in meta.get("content").split(";"))
    digest = lambda text: "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"  # noqa: E731
    assert policy["default-src"] == "'none'" and policy["base-uri"] == "'none'" and policy["form-action"] == "'none'"
    assert policy["script-src"] == digest(doc.find(".//script").text)
    assert policy["style-src"] == digest(doc.find(".//style").text)
    assert "unsafe" not in meta.get("content")
    assert list(doc.find(".//head"))[1] is meta  # before anything that could load


def test_hostile_stream_exports_to_markdown_with_no_fence_broken_and_no_stream_html(hostile_runs, tmp_path):
    out = tmp_path / "h.md"
    export_runs(str(out), hostile_runs)
    text = out.read_text()
    assert_every_payload_fenced(text, payloads_of(hostile_runs[0]))
    assert_fences_closed(text)
    # the only raw HTML is the document's own: anchors, details and summary lines
    own = re.compile(r'^(<a id="r?\d+(-c\d+)?"></a>|<details>|</details>|<summary>[^<>]*(<b>[^<>]*</b>[^<>]*)?</summary>)$')
    md = MarkdownIt("commonmark", {"html": True})
    md.validateLink = lambda url: True
    for tok in md.parse(text):
        if tok.type == "html_block":
            for line in tok.content.strip("\n").split("\n"):
                assert own.match(line), line
        for child in tok.children or []:
            if child.type == "html_inline":  # only the document's anchors
                assert re.fullmatch(r'<a id="(run-\d+|r\d+-c\d+)">|</a>', child.content), child.content
            if child.type == "link_open":
                assert not child.attrGet("href").lower().startswith(("javascript", "data", "vbscript")), child
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    assert "*Shown as source: it holds raw HTML" in text


def test_the_agents_markdown_renders_safely_in_html():
    html = render_markdown("[a](javascript:alert(1)) [b](JaVaScRiPt:x) [c](data:text/html,x) [d](vbscript:x) "
                           "[e](&#106;avascript:x) ![i](http://example.com/t.png) [ok](https://example.com/p?q=1) "
                           "<https://example.com/auto> <b>raw</b>\n\n| a | b |\n|--:|:-:|\n| 1 | 2 |\n")
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs == ["http://example.com/t.png", "https://example.com/p?q=1", "https://example.com/auto"]
    assert html.count('rel="noopener noreferrer"') == 3 and "<img" not in html and "style=" not in html
    assert '<span class="url">(https://example.com/p?q=1)</span>' in html  # the URL is shown
    assert "(https://example.com/auto)" not in html  # an autolink's text already is its URL
    assert "&lt;b&gt;raw&lt;/b&gt;" in html and 'class="al-right"' in html


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list("ab 日\n.,:;-+#*_`<>[]()!|~&\\=\t1)") + ["\n\n", "  \n", "word"]),
                max_size=30).map("".join))
def test_plain_text_shortcut_renders_as_markdown_it_does(text):
    assert render_markdown(text) == markdown_renderer().render(visible_doc(text), {})


# -- caps and sizes ----------------------------------------------------------------------------

def test_code_beyond_the_highlighting_budget_is_shown_plain_with_a_note():
    render = Renderer(code_budget=20)
    first = render.code("x = 1\ny = 2\n", "a.py")
    assert 'class="pg-' in first and "Not coloured" not in first
    second = render.code("z = 3 < 4 and more\n", "b.py")
    assert "Not coloured" in second and "z = 3 &lt; 4 and more" in second and 'class="pg-' not in second
    assert '<pre class="gutter" aria-hidden="true">1\n2</pre>' in first


def test_markdown_beyond_its_budget_or_too_long_is_shown_as_text_with_a_note():
    render = Renderer(markdown_budget=30)
    assert render.markdown(("plain words, no syntax at all " * 10).strip()).startswith("<p>plain")  # costs nothing
    assert render.markdown("**bold** and `code`") == "<p><strong>bold</strong> and <code>code</code></p>\n"
    past = render.markdown("**bold** again, past the budget of thirty")
    assert "Shown as text" in past and "<pre class=\"text\">**bold** again" in past
    hostile = "[" * (MARKDOWN_MESSAGE_CHARS + 1)  # markdown-it takes seconds on this: never parsed
    assert "Shown as text" in Renderer().markdown(hostile)
    block = _Messages().block(hostile).text  # the Markdown export: shown as its source, unparsed
    assert block.startswith("*Shown as source: it is too long to check.*") and fences(block) == [hostile + "\n"]


def test_a_payload_over_the_cap_is_cut_with_a_note_in_both_formats(tmp_path):
    big = "".join(f"line {i}\n" for i in range(50_000))  # 538,890 characters, 50,000 lines
    path = tmp_path / "big.jsonl"
    path.write_bytes(
        _ev(type="user", message={"role": "user", "content": [{"type": "text", "text": big}]}, session_id="s")
        + _ev(type="thinking", subtype="delta", text=big, session_id="s", timestamp_ms=1)
        + _ev(type="thinking", subtype="completed", session_id="s", timestamp_ms=1)
        + _ev(type="tool_call", subtype="completed", call_id="c",
              tool_call={"shellToolCall": {"args": {"command": "seq"}, "result": {"success": {"stdout": big}}}},
              session_id="s", timestamp_ms=1))
    runs = watch_runs(path)
    for name in ("big.html", "big.md"):
        export_runs(str(tmp_path / name), runs)
        text = (tmp_path / name).read_text()
        assert "line 998\n" in text and "line 1000\n" not in text
        # the prompt, the thinking and the output: each cut, each with its note
        assert text.count("… 49,000 more lines (530,001 characters) not shown") == 3


@pytest.mark.parametrize("max_chars", [1_000, 3_000, 10_000, GITHUB_COMMENT_CHARS])
def test_markdown_stays_under_max_chars_cutting_payloads_first(max_chars, tmp_path):
    runs = watch_runs(SAMPLES / "plain-tools.jsonl", SAMPLES / "parallel-failed-rejected.jsonl")
    out = tmp_path / "a.md"
    export_runs(str(out), runs, max_chars=max_chars)
    text = out.read_text()
    assert len(text) < max_chars
    full = tmp_path / "full.md"
    export_runs(str(full), runs)
    if len(full.read_text()) < max_chars:
        assert text == full.read_text()
    elif "left out to stay under" not in text:
        assert "not shown" in text  # payloads were cut, the rest kept
        assert text.count("\n<details>\n<summary>") == full.read_text().count("\n<details>\n<summary>")
    else:
        assert f"left out to stay under {max_chars:,} characters" in text
    assert_fences_closed(text)


def test_payload_cap_is_the_largest_that_fits():
    assert payload_cap(100, [10, 20, 1000], 10_000) == 1000
    cap = payload_cap(100, [10, 20, 1000], 400)
    assert 100 + 10 + 20 + cap + 60 <= 400 < 100 + 10 + 20 + cap + 1 + 60
    assert payload_cap(1000, [5], 500) == 0


# -- several runs, JSON, files -----------------------------------------------------------------

def test_several_runs_make_one_document_with_a_table_of_contents(tmp_path):
    loop = tmp_path / "loop.jsonl"
    loop.write_bytes((SAMPLES / "plain-tools.jsonl").read_bytes() + (SAMPLES / "partial-output.jsonl").read_bytes())
    runs = watch_runs(loop, SAMPLES / "failed-no-result.jsonl")
    assert len(runs) == 3
    export_runs(str(tmp_path / "all.html"), runs)
    doc = parse_html((tmp_path / "all.html").read_bytes())
    toc = [a.get("href") for a in doc.findall(".//nav/ol/li/a")]
    assert toc == ["#run-1", "#run-2", "#run-3"]
    assert [s.get("id") for s in doc.findall(".//section")] == ["run-1", "run-2", "run-3"]
    export_runs(str(tmp_path / "all.md"), runs)
    md = (tmp_path / "all.md").read_text()
    assert "## Runs" in md and md.count('<a id="run-') == 3 and "](#run-3)" in md


def test_json_export_is_exactly_the_summary_json(tmp_path):
    out = tmp_path / "s.json"
    p = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", "--export", str(out),
                        str(SAMPLES / "plain-tools.jsonl"), str(SAMPLES / "failed-no-result.jsonl")],
                       capture_output=True, cwd=ROOT)
    assert p.returncode == 1  # one of the runs has no result
    assert out.read_bytes() == p.stdout


def test_export_file_name_is_safe_for_any_session_id():
    assert export_file_name("6abf07c0-2ec0") == "cursor-watch-6abf07c0-2ec0.html"
    assert export_file_name("../../etc/passwd\n\x1b") == "cursor-watch-etc-passwd.html"
    assert export_file_name(None) == export_file_name("") == export_file_name("/..") == "cursor-watch-unknown.html"
    assert len(export_file_name("x" * 500)) == len("cursor-watch-.html") + 80


def test_export_run_to_writes_a_live_run_as_it_is_now(tmp_path):
    data = (SAMPLES / "parallel-failed-rejected.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    mon = Monitor(clock=lambda: 1_790_000_000_000.0, reread=lambda o, n: data[o:o + n])
    mon.feed(b"".join(lines[:12]))  # mid-stream: calls still running, no result
    run = mon.run
    path = export_run_to(run, str(tmp_path))
    assert path == str(tmp_path / export_file_name(run.session.session_id))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    doc = parse_html(Path(path).read_bytes())
    statuses = [d.get("data-status") for d in doc.findall(".//details[@data-call-id]")]
    assert "running" in statuses and len(statuses) == len(run.session.tool_calls)


# -- payloads as written: carriage returns folded, JSON and Markdown inside strings decoded --------

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


# -- a long reason cut in the table, whole in its call; the agent's version, the last message once

@pytest.mark.parametrize("fmt", ["html", "md"])
def test_export_table_cuts_a_long_reason_and_the_call_gives_it_whole(tmp_path, fmt):
    path = with_long_reason(tmp_path)
    out = tmp_path / f"run.{fmt}"
    p = cw("--export", str(out), str(path))
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "892 more chars: call 1 below" in text  # the table row (Markdown escapes the brackets)
    assert text.count("wait for their answer") == 1  # once: the call's own block


CODEX_MCP = REAL_DIR.parent / "agents" / "codex" / "mccorvie__TauCetiWorker__tests__fixtures__codex_exec_mcp_0_160.jsonl"


@pytest.mark.parametrize("fmt", ["html", "md"])
@pytest.mark.parametrize("path", [AUTOCOMPACT, CODEX_MCP, GEMINI_TOOLS, CLAUDE_PARTIAL], ids=lambda p: p.name[:40])
def test_export_names_the_agent_version_and_shows_the_last_message_once(tmp_path, fmt, path):
    need(path)
    out = tmp_path / f"run.{fmt}"
    assert cw("--export", str(out), str(path)).returncode == 0
    text = out.read_text()
    assert "Final text" not in text  # the result's text is the last message, already shown
    s = replayed(path)
    if s.agent_version:
        assert f"{s.agent_version}" in text and "agent" in text


def test_export_shows_a_result_text_the_transcript_does_not_have(tmp_path):
    """A Cursor result whose text is not its segments joined (an edited log): shown on its own."""
    need(SIMPLE)
    lines = []
    for line in SIMPLE.read_bytes().splitlines():
        obj = orjson.loads(line)
        if obj.get("type") == "result":
            obj["result"] = "A different closing text."
        lines.append(orjson.dumps(obj))
    path = tmp_path / "edited.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "run.md"
    assert cw("--export", str(out), str(path)).returncode == 0
    text = out.read_text()
    assert "Final text" in text and "A different closing text." in text


# -- the command ----------------------------------------------------------------------------

def _cw(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cursor_watch", *args], input=stdin, capture_output=True, cwd=ROOT,
                          timeout=60, env={**os.environ, "CURSOR_WATCH_NO_TUI": "1"})


@pytest.mark.parametrize("mode", ["--plain", "--summary"])
def test_export_from_a_pipe_rereads_payloads_from_its_spool(mode, tmp_path):
    out = tmp_path / "p.html"
    p = _cw(mode, "--export", str(out), stdin=(SAMPLES / "plain-tools.jsonl").read_bytes())
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "could not be read back" not in text and "apply_discount" in text
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


@pytest.mark.parametrize("args, message", [
    (["--export", "out.txt"], "--export out.txt: the file name must end in .html, .md, .json or .otlp.json (the format)"),
    (["--export", "a.html", "--export-max-chars", "5000"], "--export-max-chars goes with --export FILE.md"),
    (["--export", "a.md", "--export-max-chars", "10"], "--export-max-chars must be at least 1000"),
    (["--export", "a.html", "--serve"], "--serve doesn't go with --export"),
])
def test_export_usage_errors_are_one_line_and_exit_2(args, message):
    p = _cw(*args, str(SAMPLES / "plain-tools.jsonl"))
    assert p.returncode == 2
    lines = p.stderr.decode().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_an_unwritable_export_is_one_line_and_keeps_the_watchs_status(tmp_path):
    p = _cw("--summary", "--json", "--export", str(tmp_path / "missing" / "a.html"), str(SAMPLES / "plain-tools.jsonl"))
    assert p.returncode == 0 and orjson.loads(p.stdout)["status"] == "success"
    assert p.stderr.decode() == f"cursor-watch: cannot write --export {tmp_path / 'missing' / 'a.html'}: " \
                                "No such file or directory\n"
    assert not list(tmp_path.iterdir())


def test_exporting_from_the_headless_path_does_not_import_textual(tmp_path):
    code = (
        "import sys; from cursor_watch.cli import main;"
        f"rc = main(['--summary', '--json', '--export', {str(tmp_path / 'a.html')!r}, "
        f"{str(SAMPLES / 'plain-tools.jsonl')!r}]);"
        "assert 'textual' not in sys.modules, 'textual imported'; assert rc == 0"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    assert (tmp_path / "a.html").stat().st_size > 10_000


def test_bench_export_quick_runs_and_checks_its_exports():
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_export.py"), "--quick", "--out",
                        str(ROOT / "bench" / "out")], capture_output=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stdout.decode() + p.stderr.decode()
    out = p.stdout.decode()
    assert "| 2MB 400 calls |" in out and out.count("| ok |") == 4 and "target 2MB 400 calls html:" in out


@pytest.mark.e2e
def test_the_tui_writes_the_export_when_it_quits_payloads_read_from_the_pipes_spool(tmp_path):
    from tmux import PY, Tmux

    out = tmp_path / "tui.html"
    t = Tmux(f"cat {shlex.quote(str(SAMPLES / 'plain-tools.jsonl'))} | {PY} -m cursor_watch --export {shlex.quote(str(out))}")
    try:
        t.wait_for("100% discounts.")
        t.keys("q")
        t.wait_for("EXIT=0")
    finally:
        t.close()
    doc = parse_html(out.read_bytes())
    assert len(doc.findall(".//details[@data-call-id]")) == 6
    assert "could not be read back" not in text_of(doc) and "apply_discount" in text_of(doc)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
