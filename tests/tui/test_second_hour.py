"""A new user's second hour: what scripts read is whole, what the screen shows is
readable at 80 and 60 columns, and the exports say what the run was.

Streams here are the shared real captures where one shows the case, else a real capture with
one field changed (the change is named at each test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import REAL_DIR, ROOT

REJECTED = REAL_DIR / "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__05_rejected_shell.jsonl"
ENV = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TERM", "COLUMNS")}

# a rejection's reason as long as a real one (~800 characters) that ends with what matters
LONG_REASON = ("The user rejected this command. " + "It would change files outside the workspace and the "
               "policy of this repository forbids that without a review. " * 9
               + "INSTEAD: ask the user to run `make clean` themselves and wait for their answer.")


def cw(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cursor_watch", *args], capture_output=True, cwd=cwd,
                          env=ENV, timeout=120)


def need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"shared capture {path.name} not found (../shared is not part of a user's clone)")


def with_long_reason(tmp_path: Path) -> Path:
    """The maestro 05 capture (two rejected ``uname -a`` calls, reason "") with the first
    rejection's reason replaced by :data:`LONG_REASON`."""
    need(REJECTED)
    out = []
    done = False
    for line in REJECTED.read_bytes().splitlines():
        obj = orjson.loads(line)
        if not done and obj.get("type") == "tool_call" and obj.get("subtype") == "completed":
            obj["tool_call"]["shellToolCall"]["result"]["rejected"]["reason"] = LONG_REASON
            done = True
        out.append(orjson.dumps(obj))
    path = tmp_path / "long-reason.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


# -- 1. a reason is never cut where scripts read it; text views cut it and say where it is whole

def test_summary_json_gives_a_long_reason_whole(tmp_path):
    p = cw("--summary", "--json", str(with_long_reason(tmp_path)))
    calls = json.loads(p.stdout)["tool_calls"]
    assert LONG_REASON in calls[0]["detail"]  # whole, its last instruction included
    assert calls[0]["detail"].endswith("wait for their answer.")


def test_plain_and_summary_cut_a_long_reason_and_say_where_it_is(tmp_path):
    path = with_long_reason(tmp_path)
    for mode in ("--plain", "--summary"):
        out = " ".join(cw(mode, str(path)).stdout.decode().split())  # (the summary's table wraps)
        assert "wait for their answer" not in out, mode  # cut...
        assert "The user rejected this command." in out, mode
        assert "more chars: --summary --json]" in out, mode  # ...saying where the whole text is


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_export_table_cuts_a_long_reason_and_the_call_gives_it_whole(tmp_path, fmt):
    path = with_long_reason(tmp_path)
    out = tmp_path / f"run.{fmt}"
    p = cw("--export", str(out), str(path))
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "892 more chars: call 1 below" in text  # the table row (Markdown escapes the brackets)
    assert text.count("wait for their answer") == 1  # once: the call's own block


# -- 9. a rejection's reason is said once in its detail

def test_detail_says_a_rejection_reason_once(tmp_path):
    from cursor_watch.stream.payloads import call_detail
    from cursor_watch.stream.watch import Monitor
    from cursor_watch.tui.screens.detail import call_header
    from rich.console import Console

    path = with_long_reason(tmp_path)
    mon = Monitor(live=False)
    mon.feed(path.read_bytes())
    mon.finish()
    s = mon.session
    call = s.tool_calls.at(1)
    console = Console(width=100, record=True, file=open(os.devnull, "w"))
    console.print(call_header(call))
    sections, _note = call_detail(call, lambda o, n: path.read_bytes()[o:o + n], raw=False, agent=s.agent)
    for section in sections:
        console.print(section.title)
        console.print(str(section.body))
    text = " ".join(console.export_text().split())
    assert text.count("The user rejected this command.") == 1  # not the status line and a block
    assert "INSTEAD: ask the user" in text


# -- 4. the detail view wraps long paths and commands at 80 and 60 columns

EDIT = REAL_DIR / "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__03_edit_tool_call.jsonl"


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_detail_wraps_a_long_path_instead_of_cutting_it(size):
    """maestro 03's edit names a 118-character path: its ``path`` field and message were cut
    with "…" at 80 and 60 columns."""
    from textual.widgets import Static

    from apphelpers import make_app, wait_until
    from cursor_watch.tui.screens.detail import ToolDetailScreen
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.tool_table import ToolTable

    need(EDIT)
    app = make_app(FileSource(str(EDIT)))
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.ended)
        path = next(iter(app.session.tool_calls.values())).summary
        assert len(path) > size[0]
        app.run_view().query_one(ToolTable).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))

        def drawn() -> list[str]:
            lines = []
            for w in app.screen.query(Static):
                if w.region.width:
                    lines += [strip.text for strip in w.render_lines(w.region.reset_offset)]
            return lines

        await wait_until(pilot, lambda: any(line.lstrip().startswith("path ") for line in drawn()))  # laid out
        lines = drawn()
        at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("path "))
        shown = "".join(line.strip().removeprefix("path").strip() for line in lines[at:at + 4])
        assert path in shown, lines[at:at + 4]
        assert not any("…" in line for line in lines[at:at + 8]), lines[at:at + 8]


# -- 5. a run that ended on a line that is not stream-json names that line in its end note

SIMPLE = REAL_DIR / "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__01_simple_no_tool.jsonl"
CLI_ERROR = "RetriableError: [invalid_argument] unknown option '--system-prompt'"


def ended_on_an_error(tmp_path: Path) -> Path:
    """maestro 01's init and prompt, then the CLI's own error line (as cursor-agent prints one
    for a bad option) and nothing more."""
    need(SIMPLE)
    path = tmp_path / "cli-error.jsonl"
    path.write_bytes(b"\n".join(SIMPLE.read_bytes().splitlines()[:2]) + f"\n{CLI_ERROR}\n".encode())
    return path


def test_end_note_names_the_line_that_ended_the_run(tmp_path):
    out = cw("--plain", str(ended_on_an_error(tmp_path))).stdout.decode()
    end = next(line for line in out.splitlines() if line.startswith("· stream ended without a result"))
    assert f'then line 3 is not stream-json: "{CLI_ERROR}"' in end


def test_end_note_leaves_out_an_invalid_line_that_came_before_the_last_event(tmp_path):
    need(SIMPLE)
    lines = SIMPLE.read_bytes().splitlines()
    path = tmp_path / "early-error.jsonl"
    path.write_bytes(b"\n".join([lines[0], CLI_ERROR.encode(), *lines[1:3]]) + b"\n")
    out = cw("--plain", str(path)).stdout.decode()
    end = next(line for line in out.splitlines() if line.startswith("· stream ended without a result"))
    assert "not stream-json" not in end  # the stream went on after it: it is a diagnostic, not the end


async def test_tui_end_note_names_the_cli_error(tmp_path):
    from apphelpers import make_app, screen_text, wait_ticks, wait_until
    from cursor_watch.stream.sources import FileSource

    app = make_app(FileSource(str(ended_on_an_error(tmp_path))))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await wait_ticks(pilot, app)  # the end is drawn
        text = screen_text(app.screen)
        assert "RetriableError: [invalid_argument]" in text, text


# -- 6. the header keeps what matters by priority; the footer says where every key is

CLAUDE_PARTIAL = (REAL_DIR.parent / "agents" / "claude"
                  / "sunholo-data__ailang__internal__executor__claude__testdata__claude_stream_partial.ndjson")
CLAUDE_A001 = REAL_DIR.parent / "agents" / "claude" / "dungle-scrubs__harness-cli-normalizer__test__fixtures__a001-raw.ndjson"


def replayed(path: Path, extra: bytes = b""):
    from cursor_watch.stream.watch import Monitor

    need(path)
    mon = Monitor(live=False)
    mon.feed(path.read_bytes() + extra)
    mon.finish()
    return mon.runs[-1].session if extra else mon.runs[0].session  # (extra lines: in the last run)


def test_header_at_160_keeps_model_cwd_session_and_permission_before_a_long_file_name():
    """The capture's own 90-character name took the room of the model's facts at 160 columns."""
    from cursor_watch.tui.widgets.header import LiveState, render_header

    s = replayed(CLAUDE_PARTIAL)
    line = render_header(s, LiveState(source=CLAUDE_PARTIAL.name, state="success"), 160).renderables[0].plain
    assert len(line) <= 160
    for fact in (s.model, s.cwd, "session 25a4559b", "permission default"):
        assert fact in line, (fact, line)
    assert "← sun…" in line and line.rstrip().endswith(".ndjson")  # the name gives way, its ends kept


@pytest.mark.parametrize("width", [80, 60])
def test_header_keeps_a_long_model_name_whole(width):
    """a001's model ``claude-opus-5[1m]`` was cut to ``claude…pus-5[1m]`` at 80 columns."""
    from cursor_watch.tui.widgets.header import LiveState, render_header

    s = replayed(CLAUDE_A001)
    assert s.model == "claude-opus-5[1m]"
    line = render_header(s, LiveState(source=CLAUDE_A001.name, state="success"), width).renderables[0].plain
    assert "claude-opus-5[1m]" in line and len(line) <= width, line


@pytest.mark.parametrize("width", [80, 60])
def test_state_line_keeps_the_cost_and_the_diagnostics_count(width):
    """At 80 columns the tokens pushed the cost and ``⚠ N diagnostics`` off the line."""
    from cursor_watch.tui.widgets.header import LiveState, render_header

    s = replayed(CLAUDE_PARTIAL, b"not json\n")
    line = render_header(s, LiveState(source=CLAUDE_PARTIAL.name, state="success", elapsed_ms=13_900), width)
    state = line.renderables[1].plain
    assert len(state) <= width and "$0.13" in state and "⚠ 1" in state and "(d)" in state, state
    assert "13.9 s" in state and "success" in state


async def test_footer_at_80_columns_shows_where_every_key_is():
    from textual.widgets._footer import FooterKey

    from apphelpers import make_app, wait_until
    from cursor_watch.tui.screens.help import FIND_KEYS, KEYS
    from cursor_watch.stream.sources import FileSource

    need(REJECTED)
    app = make_app(FileSource(str(REJECTED)))
    async with app.run_test(size=(80, 24)) as pilot:
        # the footer of the stacked panes, laid out (it is composed again once the screen knows it
        # is stacked: 's' is in it from then on)
        def footer_drawn() -> bool:
            keys = list(app.screen.query(FooterKey))
            return "s" in {k.key_display or k.key for k in keys} and any(k.region.width for k in keys)

        await wait_until(pilot, lambda: app.ended and footer_drawn())
        shown = [k for k in app.screen.query(FooterKey) if k.region.width and k.region.right <= 80]
        labels = [str(k.description) for k in shown]
        assert "All keys" in labels, labels  # on screen at 80 columns, saying what it opens
        helped = " ".join(k for k, _ in KEYS + FIND_KEYS)
        for binding in app.screen.BINDINGS:
            key = {"question_mark": "?", "slash": "/", "left_square_bracket": "[", "right_square_bracket": "]",
                   "escape": "Escape"}.get(binding.key, binding.key)
            assert key in helped, key  # every key of the run screen is in the help


# -- 7. paths are cut in the middle everywhere, keeping the file name

CODEX_FILE_CHANGE = REAL_DIR.parent / "agents" / "codex" / \
    "shane-kercheval__switchboard__crates__harness__tests__fixtures__codex__file-change.jsonl"


async def test_60x20_claude_read_paths_keep_their_file_names():
    """Claude Code's ``Read`` calls (kind ``read``) were cut at their end (``/Users/agent/dev/
    sunholo-…``) in the transcript and the table at 60 columns: the path rules went by the
    agent's tool name, not the canonical kind."""
    from apphelpers import make_app, wait_ticks, wait_until
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.tool_table import ToolTable

    need(CLAUDE_PARTIAL)
    app = make_app(FileSource(str(CLAUDE_PARTIAL)))
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await wait_ticks(pilot, app)  # the end is drawn
        names = [c.summary.rsplit("/", 1)[1] for c in app.session.tool_calls.values()]
        transcript = app.screen.query_one("#transcript").rendered_text()
        table = app.screen.query_one(ToolTable)
        rows = "\n".join("".join(seg.text for seg in table.render_line(y)) for y in range(table.size.height))
        for name in names[-3:]:  # the newest, on screen in both
            assert f"/{name} · success" in transcript, (name, transcript)
            assert f"/{name}  " in rows, (name, rows)


def test_a_marker_keeps_its_outcome_when_the_summary_is_no_path():
    """Codex's failed ``git status``: ``failure (exit 12…)`` at 60 columns."""
    from cursor_watch.tui.widgets.transcript import marker_text

    s = replayed(CODEX_FILE_CHANGE)
    call = s.tool_calls.at(1)
    for width in (56, 58, 70):  # (the transcript is 56-58 cells wide at 60 columns)
        line = marker_text(call, width=width, cwd=s.cwd).plain
        assert line.endswith("· failure (exit 128)") and len(line) <= width, line


# -- 8. the run's start is its first event with a time, a leading thinking-only message too

AUTOCOMPACT = REAL_DIR.parent / "agents" / "claude" / "littlebearapps__untether__tests__fixtures__claude_autocompact_2.1.285.jsonl"


def test_started_is_the_leading_thinking_message(tmp_path):
    """The capture's first timed line is line 2, an assistant message with only a thinking
    block (15:53:29.432); the run's start was taken from line 3's tool_use (15:53:30.709)."""
    from cursor_watch.views.export.common import format_when
    from cursor_watch.formats.common import iso_ms

    need(AUTOCOMPACT)
    line2 = orjson.loads(AUTOCOMPACT.read_bytes().splitlines()[1])
    assert [c["type"] for c in line2["message"]["content"]] == ["thinking"]
    first = iso_ms(line2["timestamp"])
    html = tmp_path / "run.html"
    assert cw("--export", str(html), str(AUTOCOMPACT)).returncode == 0
    assert format_when(first) == "2026-09-30 15:53:29.432 UTC" and format_when(first) in html.read_text()
    otlp = tmp_path / "run.otlp.json"
    assert cw("--export", str(otlp), str(AUTOCOMPACT)).returncode == 0
    spans = [sp for rs in json.loads(otlp.read_text())["resourceSpans"] for ss in rs["scopeSpans"]
             for sp in ss["spans"]]
    runs = sorted(int(sp["startTimeUnixNano"]) for sp in spans if "parentSpanId" not in sp or not sp["parentSpanId"])
    s = replayed(AUTOCOMPACT)
    assert s.first_ts_ms == first  # what the header's elapsed time counts from
    # the run span starts at the first timed event or earlier, where the reported duration says the
    # run began before it (the trace's latency is the run's duration)
    assert runs[0] == min(first, s.last_ts_ms - s.result.duration_ms) * 1_000_000


# -- 10. exports name the agent's version and don't repeat the last message

CODEX_MCP = REAL_DIR.parent / "agents" / "codex" / "mccorvie__TauCetiWorker__tests__fixtures__codex_exec_mcp_0_160.jsonl"
GEMINI_TOOLS = REAL_DIR.parent / "agents" / "gemini" / \
    "shane-kercheval__switchboard__crates__harness__tests__fixtures__gemini__tool-use.stream.jsonl"


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


# -- 11. Codex: the command's output is labelled as what it is; an error item is never an error

CODEX_REAL = REAL_DIR.parent / "agents" / "codex" / "Davedat-110105__adk-harness__tests__fixtures__codex_exec_real.jsonl"


def test_codex_command_output_is_labelled_output_not_stdout():
    """``aggregated_output`` is stdout and stderr together (codex-rs exec_events.rs)."""
    from cursor_watch.stream.payloads import call_detail

    s = replayed(CODEX_REAL)
    call = s.tool_calls.at(1)
    sections, _ = call_detail(call, lambda o, n: CODEX_REAL.read_bytes()[o:o + n], raw=False, agent=s.agent)
    fields = [label for sec in sections if sec.kind == "fields" for label, _v in sec.body]
    titles = [sec.title for sec in sections]
    assert "stdout" not in fields + titles, (fields, titles)
    assert any("output" in t for t in titles + fields), (fields, titles)


def test_codex_error_items_are_warnings_and_a_reroute_a_notice():
    from cursor_watch.stream.watch import Monitor

    lines = [{"type": "thread.started", "thread_id": "t0"},
             {"type": "item.completed", "item": {"id": "item_0", "type": "error",
                                                 "message": "model rerouted: gpt-5.5 -> gpt-5.5-mini (HighRiskCyberActivity)"}},
             {"type": "item.completed", "item": {"id": "item_1", "type": "error",
                                                 "message": "Falling back from WebSockets to HTTPS transport"}},
             {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}}]
    mon = Monitor(live=False)
    mon.feed(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    mon.finish()
    notes = [(n.kind, n.text) for n in mon.session.notes]
    assert ("model", "model rerouted: gpt-5.5 -> gpt-5.5-mini (HighRiskCyberActivity)") in notes, notes
    assert ("warning", "warning: Falling back from WebSockets to HTTPS transport") in notes, notes
    assert not any(k == "error" or t.startswith("warning: model rerouted") for k, t in notes), notes
    assert mon.session.model == "gpt-5.5-mini"


# -- 12. the runs list: columns sized to what rows hold, a filter that [ ] keep, skipped files said

COMPACTION = REAL_DIR.parent / "agents" / "claude" / "littlebearapps__untether__tests__fixtures__claude_compaction_2.1.285.jsonl"


async def test_runs_list_gives_an_empty_prompt_columns_room_to_the_model_and_titles_align():
    """The compaction capture's 12 runs have no prompt in the stream (Claude Code echoes none)
    but one: the model ``claude-haiku-4-5-20251001`` was cut to ``claude-haiku-…``."""
    from apphelpers import make_app, text_of, wait_ticks, wait_until
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.runs_table import RunsTable, RunsTableHeader

    need(COMPACTION)
    app = make_app([FileSource(str(COMPACTION)), FileSource(str(GEMINI_TOOLS))])
    async with app.run_test(size=(160, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.screen.query_one(RunsTable).rows) == 13)
        await wait_ticks(pilot, app)  # the rows are rebuilt from the ended runs
        table = app.screen.query_one(RunsTable)
        lines = ["".join(seg.text for seg in table.render_line(y)) for y in range(13)]
        assert all("claude-haiku-4-5-20251001" in line for line in lines if " claude " in line), lines
        assert any("gemini-3-flash-preview" in line for line in lines), lines
        titles = text_of(app.screen.query_one(RunsTableHeader)).splitlines()[0]
        row = next(line for line in lines if "claude-haiku" in line)
        # each title stands over its column (the header and the rows are laid out alike)
        assert titles.index("model") == row.index("claude-haiku"), (titles, row)


async def test_brackets_step_through_the_runs_the_filter_keeps(tmp_path):
    from apphelpers import make_app, wait_until
    from cursor_watch.tui.screens.run import RunScreen
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.runs_table import RunsTable

    need(COMPACTION)
    app = make_app([FileSource(str(COMPACTION)), FileSource(str(GEMINI_TOOLS)), FileSource(str(CODEX_REAL))])
    async with app.run_test(size=(160, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.screen.query_one(RunsTable).rows) == 14)
        await pilot.press("slash")
        await pilot.press(*"haiku")  # the compaction capture's runs, not Gemini's nor Codex's
        await pilot.press("enter")
        table = app.screen.query_one(RunsTable)
        await wait_until(pilot, lambda: 0 < len(table.rows) < 14)
        kept = [row.key[:2] for row in table.rows]
        assert len(kept) >= 3
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        seen = [app.shown_run.key]
        for _ in kept[1:]:  # each ] shows the next run the filter keeps, in the list's order, no other
            before = app.shown_run.key
            await pilot.press("right_square_bracket")
            await wait_until(pilot, lambda: app.shown_run.key != before)
            seen.append(app.shown_run.key)
        assert seen == kept, (seen, kept)


async def test_runs_list_says_how_many_files_of_a_directory_it_skips(tmp_path):
    from apphelpers import make_app, text_of, wait_ticks, wait_until
    from cursor_watch.tui.screens.runs import RunsSummary
    from cursor_watch.stream.sources import open_sources
    from cursor_watch.tui.widgets.runs_table import RunsTable

    need(GEMINI_TOOLS)
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(GEMINI_TOOLS.read_bytes())
    (tmp_path / "README.md").write_text("notes")
    (tmp_path / "run.stderr.txt").write_text("an error")
    sources, directories = open_sources([str(tmp_path)], None)
    app = make_app(sources, directories=directories)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.screen.query_one(RunsTable).rows) == 2)
        await wait_ticks(pilot, app)  # the top line is rebuilt from the ended runs
        line = text_of(app.screen.query_one(RunsSummary))
        assert "2 skipped: not .jsonl/.ndjson/.log" in line, line


# -- 16. a search counts an occurrence once, where the screen shows it

def test_search_counts_a_command_once_not_in_every_field_that_repeats_it():
    """maestro 05's ``uname -a``: the arguments' ``command``, the CLI's parse of it
    (``simpleCommands``, ``parsingResult``: ``uname``, ``uname -a``) and the rejection's copy
    of the command were 5 matches for the one the detail view shows."""
    from cursor_watch.query.match import Query
    from cursor_watch.query.search import Search

    need(REJECTED)
    data = REJECTED.read_bytes()
    s = replayed(REJECTED)
    search = Search(s, lambda off, size: data[off: off + size], Query("uname"))
    while not search.step(0.5):
        pass
    first = s.tool_calls.at(1)
    assert search.payload_hits()[first.call_id] == 1  # the command, in the arguments


async def test_detail_lists_the_matches_the_search_counted():
    from apphelpers import make_app, screen_text, wait_until
    from cursor_watch.tui.screens.detail import ToolDetailScreen
    from cursor_watch.stream.sources import FileSource

    need(REJECTED)
    app = make_app(FileSource(str(REJECTED)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("slash", *"uname", "enter")
        screen = app.screen
        await wait_until(pilot, lambda: screen.search is not None and screen.search.done)
        await pilot.press("slash", "enter")  # on the first payload match: its call's detail
        for _ in range(6):
            if isinstance(app.screen, ToolDetailScreen):
                break
            await pilot.press("n")
            await pilot.press("slash", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        said = "1 match for uname in this call's arguments and result"
        await wait_until(pilot, lambda: said in screen_text(app.screen))


def test_tool_table_keeps_the_end_of_an_mcp_tool_name_that_tells_it_apart():
    """At 80 and 60 columns the tool column is 14 cells: two MCP tools of one server
    (``mcp__lean_beam__lean_sync``, ``mcp__lean_beam__lean_goals``, the Claude Code MCP capture)
    were both ``mcp__lean_bea…``; their ends are what differ."""
    from cursor_watch.tui.widgets.tool_table import Widths, column_widths, row_pieces
    session = replayed(REAL_DIR.parent / "agents" / "claude" / "mccorvie__TauCetiWorker__tests__fixtures__claude_stream_mcp_2_1.jsonl")
    names = [c.tool for c in session.tool_calls.values() if c.tool.startswith("mcp__")]
    assert len(set(names)) >= 2
    shown = set()
    for call in session.tool_calls.values():
        if not call.tool.startswith("mcp__"):
            continue
        widths = column_widths(60, Widths(len(session.tool_calls), 9, len(call.tool)))
        cell = row_pieces(call, 0.0, widths)[6][0]  # (pad, index, gap), (status, pad, gap), tool
        assert cell.endswith(call.tool[-(widths[2] - 4):]), cell
        assert cell.startswith("mcp…"), cell
        shown.add(cell)
    assert len(shown) == len(set(names))
