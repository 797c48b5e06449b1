"""A new user's defects (tool summaries, notes, files that are not stream-json, --report's width)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from rich.cells import cell_len

from conftest import ROOT, agent_captures, real_captures

from cursor_watch.core.limits import RunTimes, stall_of
from cursor_watch.stream.watch import Monitor
from cursor_watch.core.tools import summarize

CMD = [sys.executable, "-m", "cursor_watch"]
ENV = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "TERM")}
ENV |= {"CURSOR_WATCH_NO_TUI": "1", "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "TZ": "UTC"}
STREAMS = ROOT.parent / "shared" / "streams"
AGENTS = STREAMS / "agents"
CLAUDE_MCP = AGENTS / "claude" / "mccorvie__TauCetiWorker__tests__fixtures__claude_stream_mcp_2_1.jsonl"
GEMINI_TOOLS = AGENTS / "gemini" / "shane-kercheval__switchboard__crates__harness__tests__fixtures__gemini__tool-use.stream.jsonl"
CREW = STREAMS / "real" / "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl"
needs_streams = pytest.mark.skipif(not AGENTS.is_dir(), reason=f"shared captures not found at {STREAMS}")
T0 = 1_790_000_000_000.0


def cw(args: list[str], env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + args, capture_output=True, env=env or ENV, cwd=ROOT, timeout=timeout)


def line(**kw) -> bytes:
    return orjson.dumps(kw) + b"\n"


# -- item 13: a tool's summary never repeats its name -----------------------------------------


def test_a_summary_from_the_first_argument_does_not_repeat_the_tool_name():
    assert summarize("ToolSearch", {"query": "select:a,b", "max_results": 5}) == "query=select:a,b"
    assert summarize("update_topic", {"strategic_intent": "Read it"}) == "strategic_intent=Read it"
    assert summarize("Weird", {"nested": {"a": 1}}) == "nested=…"
    assert summarize("Weird", {}) == ""  # nothing to say: not the name again


def test_get_mcp_tools_keeps_its_pattern():
    """Cursor's getMcpToolsToolCall searches the tools with ``args.pattern`` (GetMcpToolsArgs)."""
    assert summarize("getMcpTools", {"pattern": "wowc"}) == "pattern=wowc"
    assert summarize("getMcpTools", {"server": "cursor", "toolName": "TodoWrite", "toolCallId": "x"}) == "cursor TodoWrite"
    assert summarize("getMcpTools", {"server": "s", "pattern": "lint*"}) == "s pattern=lint*"


@needs_streams
def test_views_show_the_tool_name_once_beside_its_summary():
    plain = cw(["--plain", str(CLAUDE_MCP)]).stdout.decode()
    assert "▶ [1] ToolSearch  query=select:mcp__lean_beam__lean_sync" in plain
    assert "ToolSearch ToolSearch" not in plain and "ToolSearch  ToolSearch" not in plain
    summary = " ".join(cw(["--summary", str(GEMINI_TOOLS)], env={**ENV, "COLUMNS": "200"}).stdout.decode().split())
    assert "success update_topic strategic_intent=Read MARKER.txt" in summary  # the table's row, spaces folded
    plain = cw(["--plain", str(GEMINI_TOOLS)]).stdout.decode()
    assert "▶ [1] update_topic  strategic_intent=Read MARKER.txt" in plain


@needs_streams
def test_a_stall_notice_names_the_tool_once():
    """``stalled 6m: ToolSearch query=…`` (was ``ToolSearch ToolSearch query=…``)."""
    first_two = b"".join(CLAUDE_MCP.read_bytes().splitlines(keepends=True)[:2])  # init, the ToolSearch call
    m = Monitor(clock=lambda: T0)
    times = RunTimes(T0)
    times.observe(m.session, m.feed(first_two), T0, True)
    stall = stall_of(m.session, times, T0 + 360_000, 360)
    assert stall is not None
    assert stall.label() == ("stalled 6m: ToolSearch query=select:mcp__lean_beam__lean_sync,mcp__lean_beam__lean_goals "
                             "(unexplained: no heartbeat)")


@needs_streams
def test_the_crew_get_mcp_tools_call_reads_server_and_tool():
    plain = cw(["--plain", str(CREW)]).stdout.decode()
    assert "getMcpTools  cursor TodoWrite" in plain


# -- item 2: --report at 80 and 60 columns, and into a file: every figure whole ---------------


def report_in_terminal(path: Path, columns: int) -> str:
    """``--report PATH`` on a pseudo-terminal ``columns`` wide (Rich reads COLUMNS), as printed."""
    import pty

    master, slave = pty.openpty()
    env = {**ENV, "COLUMNS": str(columns), "LINES": "24", "TERM": "xterm-256color"}
    proc = subprocess.Popen(CMD + ["report", str(path)], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                            env=env, cwd=ROOT)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal (EIO)
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) == 0
    text = b"".join(chunks).decode()
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", text).replace("\r\n", "\n")


def figures(path: Path) -> dict[str, list[str]]:
    """What must appear whole, read from ``--report --json`` (not from the table): each tool's
    calls and times, each slowest call's time and status, the total's time and token counts."""
    from cursor_watch.fmt import format_ms
    from cursor_watch.views.report import _tokens

    rep = orjson.loads(cw(["report", "--json", str(path)]).stdout)
    out: dict[str, list[str]] = {"slowest": [], "tools": [], "total": []}
    for c in rep["slowest_calls"]:
        out["slowest"].append(f"{format_ms(c['duration_ms'])} {c['status']}")
    for t in rep["tools"]:
        out["tools"] += [format_ms(t[k]) for k in ("median_ms", "max_ms", "total_ms") if t[k] is not None]
    total = rep["total"]
    out["total"] += [format_ms(total[k]) for k in ("duration_ms", "median_duration_ms") if total[k] is not None]
    out["total"] += [_tokens(total["tokens"][k]) for k in ("input_tokens", "output_tokens", "cache_read_tokens")
                     if total["tokens"][k]]
    return out


def words(text: str) -> str:
    """The text with its runs of spaces folded (a figure's words stay together)."""
    return " ".join(text.split())


REPORT_DIRS = ["real", "agents/claude", "agents/codex", "agents/gemini", "every agent read"]


def report_dir(where: str, tmp_path: Path) -> Path:
    """A folder of ``STREAMS``, or for "every agent read" a folder of links to every capture of
    every agent cursor-watch reads (the shared tree also holds agents' stores and other agents)."""
    if where != "every agent read":
        return STREAMS / where
    path = tmp_path / "captures"
    path.mkdir()
    for capture in real_captures() + agent_captures():
        (path / f"{capture.parent.name}__{capture.name}").symlink_to(capture)
    return path


@needs_streams
@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("where", REPORT_DIRS)
def test_report_in_a_narrow_terminal_keeps_every_figure_whole(where, columns, tmp_path):
    path = report_dir(where, tmp_path)
    out = report_in_terminal(path, columns)
    assert "Traceback" not in out
    for line in out.splitlines():
        assert cell_len(line) <= columns, line
    flat = words(out)
    want = figures(path)
    # a slowest call's time, and its status on the same row
    rows = [line for line in out.splitlines() if re.match(r"^\s+\d", line)]
    for pair in want["slowest"]:
        time, status = pair.rsplit(" ", 1)
        assert any(re.search(rf"(^|\s){re.escape(time)}\s.*\s{status}(\s|$)", row) for row in rows), (pair, out)
    for figure in want["tools"] + want["total"]:
        assert re.search(rf"(^|\s){re.escape(figure)}(\s|$)", flat), (figure, out)
    assert not re.search(r"\d…|\b(?:s|su|suc|succ|succe|succes)…", out), out  # nothing cut like "7.…", "succe…"
    runs = [line for line in out.splitlines() if re.search(r"\.(jsonl|ndjson) #", line)]
    assert len(runs) == len(want["slowest"]) and all(re.search(r" #\d+\s*$", line) for line in runs), out


@needs_streams
@pytest.mark.parametrize("where", REPORT_DIRS)
def test_report_into_a_file_has_no_width_limit(where, tmp_path):
    """Piped or written to a file, the report ignores COLUMNS: every run's name whole, every
    figure whole (it was cut to 150 columns: ``1.8…``, ``succe…``)."""
    path = report_dir(where, tmp_path)
    p = cw(["report", str(path)], env={**ENV, "COLUMNS": "80"})
    out = p.stdout.decode()
    assert p.returncode == 0
    assert "…" not in out.replace("✔ ✖ …", "")  # nothing cut anywhere
    rep = orjson.loads(cw(["report", "--json", str(path)]).stdout)
    for c in rep["slowest_calls"]:
        name = f"{os.path.basename(c['source'])} #{c['run']}"
        assert any(name in line and c["status"] in line for line in out.splitlines()), name
    flat = words(out)
    for figure in figures(path)["tools"]:
        assert f" {figure} " in f" {flat} "


def test_plan_columns_stacks_by_priority_and_never_narrows_a_figure():
    from cursor_watch.views.report import KEY_MIN, plan_columns, table_width

    widths = [4, 6, 6, 6, 8, 16, 5, 8]
    assert plan_columns(None, 40, widths) == (40, [list(range(8))])
    assert plan_columns(200, 12, widths) == (12, [list(range(8))])
    key, stacks = plan_columns(80, 12, widths, order=[0, 1, 2, 5, 3, 4, 6, 7])
    assert sorted(i for s in stacks for i in s) == list(range(8)) and len(stacks) == 2
    assert stacks[0][:4] == [0, 1, 2, 5]  # the first table gets the first columns of the order
    for stack in stacks:
        assert table_width([key, *(widths[i] for i in stack)]) <= 80
    key, stacks = plan_columns(40, 30, [5, 5])  # a long name beside two figures: the name gives way
    assert stacks == [[0, 1]] and key == 40 - table_width([0, 5, 5]) and key >= KEY_MIN


# -- item 14: notes: rate limits, hooks, MCP servers ---------------------------------------------

SUNHOLO = AGENTS / "claude" / "sunholo-data__ailang__internal__executor__claude__testdata__claude_stream_partial.ndjson"
A001 = AGENTS / "claude" / "dungle-scrubs__harness-cli-normalizer__test__fixtures__a001-raw.ndjson"
COMPACTION = AGENTS / "claude" / "shane-kercheval__switchboard__crates__harness__tests__fixtures__claude__compaction-success.jsonl"
T_ISO = "2026-11-27T10:00:00.000Z"  # epoch 1_795_773_600 s


def claude_init(**kw) -> bytes:
    return line(type="system", subtype="init", session_id="s1", model="claude-x", cwd="/w", tools=[],
                claude_code_version="2.1.300", uuid="u0", **kw)


def claude_text(text: str, ts: str = T_ISO) -> bytes:
    return line(type="assistant", session_id="s1", uuid="u1", timestamp=ts, parent_tool_use_id=None,
                message={"id": "m1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]})


def notes_of(data: bytes, tmp_path: Path, tz: str = "UTC") -> list[dict]:
    f = tmp_path / "run.jsonl"
    f.write_bytes(data)
    p = cw(["--summary", "--json", str(f)], env={**ENV, "TZ": tz})
    assert p.returncode in (0, 1), p.stderr
    return orjson.loads(p.stdout)["notes"]


def test_a_rate_limit_says_its_reset_in_local_time_and_how_soon(tmp_path):
    """``resetsAt`` (epoch seconds) in the machine's time zone and "in 12 min" after the event
    (its time: the run's last stream time, the event has none); ``utilization`` as a percent."""
    info = {"status": "allowed_warning", "resetsAt": 1_795_773_600 + 12 * 60, "rateLimitType": "five_hour",
            "utilization": 0.91, "isUsingOverage": False}
    data = claude_init() + claude_text("hi") + line(type="rate_limit_event", rate_limit_info=info, session_id="s1")
    tokyo = [n["text"] for n in notes_of(data, tmp_path, "Asia/Tokyo") if n["kind"] == "rate_limit"]
    assert tokyo == ["rate limit: allowed_warning (five_hour, 91 % used, resets 19:12 JST, in 12 min)"]
    utc = [n["text"] for n in notes_of(data, tmp_path, "UTC") if n["kind"] == "rate_limit"]
    assert utc == ["rate limit: allowed_warning (five_hour, 91 % used, resets 10:12 UTC, in 12 min)"]
    # no time known before it (a replay, right after the init): the date, no "in"
    data = claude_init() + line(type="rate_limit_event", rate_limit_info=info, session_id="s1")
    assert [n["text"] for n in notes_of(data, tmp_path) if n["kind"] == "rate_limit"] == \
        ["rate limit: allowed_warning (five_hour, 91 % used, resets 2026-11-27 10:12 UTC)"]


@needs_streams
def test_a_rate_limit_reads_its_window_from_unified_windows():
    """The compaction-success capture has no ``utilization`` beside ``status``: its five-hour
    window's is in ``unifiedWindows`` (12 %)."""
    out = cw(["--plain", str(COMPACTION)]).stdout.decode()
    assert "· rate limit: allowed (five_hour, 12 % used, resets 2026-09-17 02:00 UTC)" in out
    assert "resetsAt=" not in out and "1789610400" not in out


@needs_streams
def test_hooks_fold_into_one_note_each_with_their_output_as_detail():
    """sunholo's capture: four SessionStart hooks start, then answer (each by its hook_id): four
    notes, not eight, each with its outcome and output."""
    s = orjson.loads(cw(["--summary", "--json", str(SUNHOLO)]).stdout)
    hooks = [n for n in s["notes"] if n["kind"] == "hook"]
    assert [(n["text"], n.get("detail")) for n in hooks] == \
        [("hook SessionStart:startup: success", "[trimmed for fixture]")] * 4
    plain = cw(["--plain", str(SUNHOLO)]).stdout.decode()
    assert plain.count("· hook SessionStart:startup: success\n    [trimmed for fixture]\n") == 4
    assert "started" not in plain.split("claude 2.1.270")[0]


def test_a_failed_hook_says_its_exit_code_and_its_output_and_one_that_never_answers_says_so(tmp_path):
    stdout = "\n".join(f"line {n}" for n in range(1, 15))
    data = (claude_init()
            + line(type="system", subtype="hook_started", hook_id="h1", hook_name="PreToolUse:Bash", hook_event="PreToolUse",
                   session_id="s1")
            + line(type="system", subtype="hook_response", hook_id="h1", hook_name="PreToolUse:Bash",
                   hook_event="PreToolUse", output=stdout + "\nno", stdout=stdout, stderr="no", exit_code=2,
                   outcome="error", session_id="s1")
            + line(type="system", subtype="hook_started", hook_id="h2", hook_name="Stop", hook_event="Stop",
                   session_id="s1"))
    notes = [n for n in notes_of(data, tmp_path) if n["kind"] == "hook"]
    assert [n["text"] for n in notes] == ["hook PreToolUse:Bash: error (exit 2)", "hook Stop: started, no response"]
    assert notes[0]["detail"] == f"stdout:\n{stdout}\nstderr:\nno"
    f = tmp_path / "run.jsonl"
    plain = cw(["--plain", str(f)]).stdout.decode()
    assert "· hook PreToolUse:Bash: error (exit 2)\n    stdout:\n    line 1\n" in plain
    assert "    … 7 more lines (--summary --json has them all)\n" in plain  # 17 lines, 10 shown


@needs_streams
def test_mcp_servers_not_connected_are_a_note_and_all_are_in_the_header_and_the_json():
    s = orjson.loads(cw(["--summary", "--json", str(A001)]).stdout.splitlines()[0])
    assert s["session"]["mcp_servers"] == [{"name": "claude.ai Google Calendar", "status": "needs-auth"},
                                           {"name": "claude.ai Gmail", "status": "needs-auth"},
                                           {"name": "claude.ai Google Drive", "status": "needs-auth"}]
    assert {"line": 1, "kind": "mcp", "subtype": "mcp_servers",
            "text": "MCP servers not connected: claude.ai Google Calendar (needs-auth), claude.ai Gmail (needs-auth), "
                    "claude.ai Google Drive (needs-auth)"} in s["notes"]
    plain = cw(["--plain", str(CLAUDE_MCP)]).stdout.decode()
    assert plain.splitlines()[0].endswith("(permission bypassPermissions, MCP lean_beam)")  # connected: no note
    assert "MCP servers not connected" not in plain
    summary = cw(["--summary", str(A001)], env={**ENV, "COLUMNS": "300"}).stdout.decode()
    assert "MCP claude.ai Google Calendar (needs-auth), claude.ai Gmail (needs-auth)" in summary.splitlines()[1]


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


# -- item 15: a file that is not stream-json says so once ------------------------------------------


def rows(n: int) -> bytes:
    return b"".join(line(id=i, name=f"row{i}", score=i * 1.5) for i in range(n))


def test_json_objects_of_no_agent_are_said_once_not_a_line_each(tmp_path):
    """17 JSON objects without a "type": one note says what they look like, the end note counts
    them (was 17 '? line N: unknown event /' lines and 'last event  on line 17')."""
    f = tmp_path / "rows.jsonl"
    f.write_bytes(rows(17))
    plain = cw(["--plain", str(f)]).stdout.decode().splitlines()
    assert plain == [
        '· not a stream cursor-watch reads: JSON objects without a "type" (keys id, name, score), not Cursor\'s, '
        "Claude Code's, Codex's or Gemini CLI's events; each line is counted as an unknown event "
        "(--summary --json lists them)",
        "· no agent events: 17 JSON objects (lines 1-17) in a format cursor-watch does not read "
        "(the first: no type, keys id, name, score)",
        "■ incomplete  0 tool calls · no times recorded · 17 unknown events"]
    summary = cw(["--summary", str(f)]).stdout.decode()
    assert "· no agent events: 17 JSON objects (lines 1-17)" in summary and "last event" not in summary
    s = orjson.loads(cw(["--summary", "--json", str(f)]).stdout)  # scripts still get every line
    assert [u["line"] for u in s["unknown_events"]] == list(range(1, 18)) and s["counts"]["unknown_events"] == 17
    md = tmp_path / "rows.md"
    cw(["--summary", "--export", str(md), str(f)])
    assert md.read_text().count("JSON objects (lines 1-17) in a format cursor-watch does not read") == 2
    assert "unknown event" not in md.read_text().split("### Diagnostics")[1]


def test_an_object_without_a_type_in_an_agents_stream_is_named_so(tmp_path):
    """In a Cursor stream, an object without a "type" is 'unknown event (no type)', and the end
    note says 'last event (no type) on line N' (was 'unknown event /', 'last event  on line N')."""
    f = tmp_path / "run.jsonl"
    f.write_bytes(line(type="system", subtype="init", session_id="s", model="m", cwd="/w", apiKeySource="login",
                       permissionMode="default") + line(odd=1))
    out = cw(["--plain", str(f)]).stdout.decode()
    assert "? line 2: unknown event (no type)\n" in out
    assert "last event (no type) on line 2" in out and "unknown event /" not in out


def test_a_text_file_shows_its_first_lines_then_says_how_many_more(tmp_path):
    """A file of text (this README): three lines shown one by one, then one line says how many
    more (was a '! line N' line for each of its hundreds of lines), then the end note."""
    f = tmp_path / "notes.txt"
    f.write_bytes(b"".join(b"text line %d\n" % n for n in range(1, 41)))
    plain = cw(["--plain", str(f)]).stdout.decode().splitlines()
    assert plain == ["! line 1: not JSON (text line): text line 1", "! line 2: not JSON (text line): text line 2",
                     "! line 3: not JSON (text line): text line 3",
                     "! … 37 more lines not stream-json (lines 4-40), not shown: --summary --json lists them",
                     '· no events: 40 lines, none of them stream-json; the first: "text line 1"',
                     "■ incomplete  0 tool calls · 40 invalid lines"]
    summary = cw(["--summary", str(f)]).stdout.decode()
    assert summary.count("! line ") == 3 and "! … 37 more diagnostics (see --summary --json)" in summary
    assert len(orjson.loads(cw(["--summary", "--json", str(f)]).stdout)["diagnostics"]) == 40


def test_lines_before_the_first_event_are_counted_then_the_run_is_shown(tmp_path):
    """A wrapper's banner before the stream: three lines shown, the rest counted in one line
    before the run's first line; lines after an event are each shown, as always."""
    f = tmp_path / "run.jsonl"
    f.write_bytes(b"".join(b"banner %d\n" % n for n in range(1, 6))
                  + line(type="system", subtype="init", session_id="s", model="m", cwd="/w", apiKeySource="login",
                         permissionMode="default")
                  + b"late 1\nlate 2\nlate 3\nlate 4\n")
    plain = cw(["--plain", str(f)]).stdout.decode().splitlines()
    assert plain[:4] == ["! line 1: not JSON (text line): banner 1", "! line 2: not JSON (text line): banner 2",
                         "! line 3: not JSON (text line): banner 3",
                         "! … 2 more lines not stream-json (lines 4-5), not shown: --summary --json lists them"]
    assert plain[4].startswith("cursor-agent m")
    assert [x for x in plain if x.startswith("! line ")][3:] == [f"! line {n}: not JSON (text line): late {n - 6}"
                                                                 for n in range(7, 11)]


async def test_the_diagnostics_pane_says_an_unread_file_once(tmp_path):
    from apphelpers import make_app, wait_until
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane

    f = tmp_path / "rows.jsonl"
    f.write_bytes(rows(17))
    app = make_app(FileSource(str(f)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        lines = [str(x) for x in app.run_view().query_one(DiagnosticsPane).lines]
        assert lines == ["line 1 on: not an agent's events (id, name, score), counted; --summary --json lists them"]


@needs_streams
async def test_a_tool_reference_result_reads_as_lines_in_the_detail():
    """ToolSearch's result is ``tool_reference`` blocks: the detail shows one line per tool found,
    never the JSON string with a literal ``\\n`` (the view before canonical events did)."""
    from apphelpers import make_app, screen_text, wait_until
    from cursor_watch.tui.screens.detail import ToolDetailScreen
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.tool_table import ToolTable

    app = make_app(FileSource(str(CLAUDE_MCP)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        table = app.run_view().query_one(ToolTable)
        table.focus()
        table.move_cursor(0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        lines = [x.strip() for x in screen_text(app.screen).splitlines()]
        at = lines.index("tool_reference: mcp__lean_beam__lean_sync")
        assert lines[at + 1] == "tool_reference: mcp__lean_beam__lean_goals"
        assert not any("\\n" in x for x in lines)


def test_the_reports_slowest_calls_cut_a_path_by_the_calls_kind_keeping_its_file_name(tmp_path):
    """Claude Code's ``Read`` is a ``read``: its path is cut in its directories, the file name
    kept, as in the transcript (the table cut the summary by the tool's own name, at its end)."""
    path = "/home/dev/projects/a-rather-long-project-name/src/package/module/subpackage/target_file.py"
    use = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": path}}
    data = (claude_init()
            + line(type="assistant", session_id="s1", uuid="u1", timestamp="2026-11-27T10:00:00.000Z",
                   parent_tool_use_id=None, message={"id": "m1", "type": "message", "role": "assistant",
                                                     "content": [use]})
            + line(type="user", session_id="s1", uuid="u2", timestamp="2026-11-27T10:00:07.500Z",
                   parent_tool_use_id=None, message={"role": "user", "content": [
                       {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]})
            + line(type="result", subtype="success", is_error=False, duration_ms=8000, result="ok", session_id="s1",
                   uuid="u3", num_turns=1, total_cost_usd=0.01))
    f = tmp_path / "run.jsonl"
    f.write_bytes(data)
    for columns in (80, 60):
        out = report_in_terminal(f, columns)
        row = next(x for x in out.split("slowest tool calls")[1].splitlines() if "7.5 s" in x)
        assert "target_file.py" in row and "…" in row, out  # cut in its directories, its name whole
    [slow] = orjson.loads(cw(["report", "--json", str(f)]).stdout)["slowest_calls"]
    assert (slow["tool"], slow["kind"], slow["duration_ms"]) == ("Read", "read", 7500)


@needs_streams
def test_the_reports_tools_table_leaves_out_its_empty_columns_before_folding_a_name():
    """Codex's captures record no times: at 80 columns the tools table leaves out median, max and
    total time (said under it) rather than fold 'lean_beam.lean_goals' around three empty columns."""
    out = report_in_terminal(STREAMS / "agents" / "codex", 80)
    tools = out.split("\ntools\n")[1]
    assert "lean_beam.lean_goals" in tools and "command_execution" in tools
    assert "median" not in tools.split("(left out")[0]
    assert "(left out at this width, nothing in them: median, max, total time)" in tools
