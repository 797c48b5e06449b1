"""The command: modes, --save, spawn, and the exit-status contract (run as a subprocess)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import orjson
import pytest

from conftest import ROOT, SAMPLES, Watcher, gone, real_params, wait_for

CMD = [sys.executable, "-m", "cursor_watch"]
ENV = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}


def run(args, stdin=None, timeout=60, **kw):
    return subprocess.run(CMD + args, input=stdin, capture_output=True, timeout=timeout, env=ENV, cwd=ROOT, **kw)


def summary(args, stdin=None):
    p = run(["--summary", "--json", *args], stdin=stdin)
    return p, orjson.loads(p.stdout)


def one_clear_line(p):
    err = p.stderr.decode()
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("cursor-watch: ")


def test_plain_transcript_of_a_sample():
    p = run(["--plain", str(SAMPLES / "plain-tools.jsonl")])
    out = p.stdout.decode()
    assert p.returncode == 0
    assert "Composer 2.5" in out and "> Find why" in out
    assert "▶ [3] shell  pytest -q" in out and "✖ [3] shell  pytest -q  failure" in out
    assert out.rstrip().splitlines()[-1].startswith("■ success")
    assert "\x1b[" not in out  # not a terminal: no colour


@pytest.mark.parametrize("path", real_params())
def test_pipe_with_save_is_byte_identical(tmp_path, path):
    out = tmp_path / "out.jsonl"
    data = path.read_bytes()
    p = run(["--plain", "--save", str(out)], stdin=data)
    assert out.read_bytes() == data
    assert p.stdout and "Traceback" not in p.stderr.decode()


def test_save_keeps_invalid_lines_byte_identical(tmp_path):
    out = tmp_path / "out.jsonl"
    data = (SAMPLES / "failed-no-result.jsonl").read_bytes() + b"\xff\xfe garbage\r\n\x00\n{\"half\":"
    p = run(["--plain", "--save", str(out)], stdin=data)
    assert out.read_bytes() == data
    assert p.returncode == 1


def test_spawn_shows_transcript_and_stderr_and_passes_exit_status():
    capture = SAMPLES / "plain-tools.jsonl"
    p = run(["--plain", "--", "sh", "-c", f"cat '{capture}'; echo oops >&2; exit 3"])
    out = p.stdout.decode()
    assert "stderr: oops" in out and "■ success" in out
    assert p.returncode == 3


def test_spawn_without_result_and_exit_zero_is_1():
    p = run(["--plain", "--", "sh", "-c", "echo '{\"type\":\"user\"}'"])
    assert p.returncode == 1


def test_spawn_killed_by_signal_passes_128_plus_n():
    p = run(["--plain", "--", "sh", "-c", "kill -9 $$"])
    assert p.returncode == 137


def test_spawn_that_never_exits_after_result_is_stopped():
    capture = SAMPLES / "plain-tools.jsonl"
    t0 = time.monotonic()
    p = run(["--plain", "--result-grace", "0.5", "--", "sh", "-c", f"cat '{capture}'; exec sleep 60"])
    assert time.monotonic() - t0 < 20
    assert p.returncode == 0  # the stream succeeded; we stopped the child ourselves


def test_command_not_found_is_2():
    p = run(["--plain", "--", "no-such-command-xyz"])
    assert p.returncode == 2
    one_clear_line(p)


@pytest.mark.parametrize("args", [["/no/such/file.jsonl"], ["--bogus"], ["--json"], ["--speed", "-1", "x"],
                                  ["--sample", "nope"], ["--"], ["--follow"]])
def test_usage_errors_are_one_line_and_2(args):
    p = run(args, stdin=b"")
    assert p.returncode == 2
    one_clear_line(p)


def test_empty_file(tmp_path):
    f = tmp_path / "empty.jsonl"
    f.write_bytes(b"")
    p, j = summary([str(f)])
    assert p.returncode == 1 and j["status"] == "incomplete" and j["counts"]["lines"] == 0


def test_garbage_is_counted_and_exit_1(tmp_path):
    f = tmp_path / "g"
    f.write_bytes(b"hello\n\x1b[31mred\n[1]\n\xff\xfe\n")
    p, j = summary([str(f)])
    assert p.returncode == 1
    assert j["counts"]["invalid_lines"] == 4
    assert [d["line"] for d in j["diagnostics"]] == [1, 2, 3, 4]
    assert "Traceback" not in p.stderr.decode()


def test_64mb_line(tmp_path):
    f = tmp_path / "big.jsonl"
    big = orjson.dumps({"type": "tool_call", "subtype": "completed", "call_id": "c",
                        "tool_call": {"readToolCall": {"args": {"path": "x"}, "result": {"success": {"content": "a" * (64 << 20)}}}}})
    f.write_bytes(big + b"\n" + (SAMPLES / "plain-tools.jsonl").read_bytes().splitlines()[-1] + b"\n")
    p, j = summary([str(f)])
    assert p.returncode == 0
    assert j["tool_calls"][0]["status"] == "success" and j["counts"]["events"] == 2


def test_bad_utf8_inside_an_event(tmp_path):
    f = tmp_path / "u.jsonl"
    f.write_bytes(b'{"type":"assistant","message":{"content":[{"type":"text","text":"\xff"}]}}\n')
    p, j = summary([str(f)])
    assert p.returncode == 1
    assert j["diagnostics"] == [{"line": 1, "message": j["diagnostics"][0]["message"]}]
    assert j["diagnostics"][0]["message"].startswith("invalid UTF-8")


def test_error_result_is_1(tmp_path):
    f = tmp_path / "e.jsonl"
    f.write_bytes(b'{"type":"result","subtype":"error","is_error":true,"result":"Rate limit exceeded"}\n')
    p, j = summary([str(f)])
    assert p.returncode == 1 and j["status"] == "error" and j["result"]["is_error"] is True


def test_summary_json_keys():
    p, j = summary([str(SAMPLES / "plain-tools.jsonl")])
    assert p.returncode == 0
    assert set(j) >= {"session", "status", "result", "assistant_text", "thinking_text", "tool_calls", "counts",
                      "diagnostics", "exit_status", "stalls", "budget"}
    assert set(j["session"]) == {"agent", "agent_version", "session_id", "model", "cwd", "api_key_source",
                                 "permission_mode", "prompt", "mcp_servers"}
    assert j["session"]["agent"] == "cursor"
    assert set(j["result"]) == {"subtype", "is_error", "duration_ms", "duration_api_ms", "request_id", "text", "usage",
                                "cost_usd", "cost_usd_estimate", "price_source", "cost_note", "model_usage"}
    assert set(j["result"]["usage"]) == {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                                         "uncached_input_tokens"}
    assert set(j["counts"]) == {"lines", "events", "invalid_lines", "unknown_events", "tool_calls"}
    for call in j["tool_calls"]:
        assert set(call) >= {"call_id", "tool", "status", "summary", "started_ms", "completed_ms", "duration_ms",
                             "kind", "parent_call_id"}
    assert j["assistant_text"] == j["result"]["text"]
    assert j["exit_status"] is None


@pytest.mark.parametrize("path", real_params())
def test_summary_json_on_real_captures(path):
    p, j = summary([str(path)])
    result = next((orjson.loads(l) for l in path.read_bytes().splitlines() if b'"type":"result"' in l), None)
    if result is not None and "full_session" not in path.name:
        assert j["assistant_text"] == result["result"]
        assert p.returncode == 0
    assert all(c["status"] in ("success", "failure", "rejected", "incomplete") for c in j["tool_calls"])


def test_summary_text_and_spawn_exit_status_in_json():
    capture = SAMPLES / "parallel-failed-rejected.jsonl"
    p = run(["--summary", "--", "sh", "-c", f"cat '{capture}'; echo warn >&2"])
    out = p.stdout.decode()
    assert p.returncode == 0
    assert "rejected" in out and "webSearch" in out and "stderr: warn" in out and "Final text:" in out
    p, j = summary(["--", "sh", "-c", f"cat '{capture}'; echo warn >&2; exit 4"])
    assert p.returncode == 4 and j["exit_status"] == 4 and j["stderr"] == ["warn"]


def test_sample_option_and_listing():
    p = run(["samples"])
    assert "plain-tools" in p.stdout.decode().split()
    p = run(["--plain", "--sample", "partial-output"])
    assert p.returncode == 0 and "cat pyproject.toml" in p.stdout.decode()


def test_escape_sequences_never_reach_the_output(tmp_path):
    f = tmp_path / "esc.jsonl"
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]0;title\x07\x9b31m"
    lines = [{"type": "system", "subtype": "init", "session_id": "s", "model": evil, "cwd": evil},
             {"type": "user", "message": {"content": [{"type": "text", "text": evil}]}},
             {"type": "tool_call", "subtype": "started", "call_id": evil, "tool_call": {"shellToolCall": {"args": {"command": evil}}}},
             {"type": "assistant", "message": {"content": [{"type": "text", "text": evil}]}},
             {"type": "result", "subtype": "success", "is_error": False, "result": evil}]
    f.write_bytes(b"".join(orjson.dumps(l) + b"\n" for l in lines) + evil.encode() + b"\n")
    for args in (["--plain"], ["--summary"], ["--summary", "--json"]):
        p = run([*args, str(f)])
        assert b"\x1b" not in p.stdout and b"\x07" not in p.stdout and "\x9b" not in p.stdout.decode()


def test_sigterm_stops_the_child_and_exits_143(tmp_path):
    pidfile = tmp_path / "pid"
    init = SAMPLES / "plain-tools.jsonl"  # its first line: Cursor's init
    watch = Watcher(CMD + ["--plain", "--", "sh", "-c", f"echo $$ > '{pidfile}'; head -n 1 '{init}'; exec sleep 60"],
                    env=ENV)
    try:
        watch.wait_for("cursor-agent Composer 2.5")  # the child's line is shown: the watch runs, its handlers are set
        child = int(pidfile.read_text())
    finally:
        watch.signal(signal.SIGTERM)
        code = watch.finish()
    assert code == 143, bytes(watch.err)
    wait_for(lambda: gone(child), f"the child ({child}) to be gone")


def test_help_names_every_agent_it_reads_and_how_to_choose():
    """--help once described a monitor for cursor-agent only: it names every agent read."""
    p = subprocess.run(CMD + ["--help"], capture_output=True, timeout=60, env={**ENV, "COLUMNS": "200"}, cwd=ROOT)
    assert p.returncode == 0
    out = " ".join(p.stdout.decode().split())
    description = out[out.index("[FILE|DIR ...]"):out.index("positional arguments")]
    for agent, command in (("Cursor", "cursor-agent"), ("Claude Code", "claude -p"), ("Codex", "codex exec --json"),
                           ("Gemini CLI", "gemini -p")):
        assert agent in description and command in description, agent
    assert "--format" in description
    for name in ("cursor", "claude", "codex", "gemini"):
        assert f"{name} (" in out[out.index("--format {"):]  # its help names each choice's agent


# -- subcommands: cursor-watch [watch] ..., report, compare, serve, samples, prices -----------------

def _help(*args: str) -> str:
    p = subprocess.run(CMD + [*args, "--help"], capture_output=True, timeout=60, env={**ENV, "COLUMNS": "200"},
                       cwd=ROOT)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    return p.stdout.decode()


def _options(help_text: str) -> set[str]:
    """The long options a --help lists."""
    import re

    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", help_text)) - {"--help"}


@pytest.mark.parametrize(("name", "own"), [
    ("report", {"--by", "--since", "--until", "--format", "--prices", "--json"}),
    ("compare", {"--fail-if", "--format", "--prices", "--json"}),
    ("serve", {"--speed", "--format", "--host", "--port", "--no-redact", "--prices", "--stall",
               "--stall-explained", "--max-duration", "--max-tool-calls", "--max-failures", "--max-tokens",
               "--max-cost", "--max-repeats"}),
])
def test_a_subcommands_help_lists_only_its_own_options(name, own):
    text = _help(name)
    assert text.startswith(f"usage: cursor-watch {name} ")
    usage = text.split("\n\n", 1)[0]
    assert _options(usage) == own, _options(usage) ^ own
    assert (" -f, --follow " in text) == (name == "serve")
    listed = {word.rstrip(",") for line in text.splitlines() if line.startswith("  -") for word in line.split()[:2]
              if word.startswith("--")} - {"--help"}
    assert listed == own | ({"--follow"} if name == "serve" else set()), listed


def test_the_default_commands_help_names_the_subcommands_and_hides_their_options():
    text = _help()
    for name in ("report", "compare", "serve", "samples", "prices"):
        assert f"cursor-watch {name}" in " ".join(text.split())
    usage = text.split("\n\n", 1)[0]
    listed = {line.split()[0].rstrip(",") for line in text.splitlines() if line.startswith("  -")}
    assert not (_options(usage) | listed) & {"--report", "--compare", "--serve", "--list-samples", "--prices-path", "--by",
                                 "--since", "--until", "--fail-if", "--host", "--port"}
    assert _help("watch") == text


@pytest.mark.parametrize(("new", "old"), [
    (["report", "--json", str(SAMPLES)], ["--report", "--json", str(SAMPLES)]),
    (["report", str(SAMPLES), "--by", "agent"], ["--report", str(SAMPLES), "--by", "agent"]),
    (["compare", str(SAMPLES / "plain-tools.jsonl"), str(SAMPLES / "failed-no-result.jsonl"), "--json"],
     ["--compare", str(SAMPLES / "plain-tools.jsonl"), str(SAMPLES / "failed-no-result.jsonl"), "--json"]),
    (["compare", str(SAMPLES / "plain-tools.jsonl"), str(SAMPLES / "failed-no-result.jsonl"), "--fail-if",
      "failures>0"],
     ["--compare", str(SAMPLES / "plain-tools.jsonl"), str(SAMPLES / "failed-no-result.jsonl"), "--fail-if",
      "failures>0"]),
    (["samples"], ["--list-samples"]),
    (["prices"], ["--prices-path"]),
])
def test_an_old_mode_flag_does_what_its_subcommand_does_and_says_once_what_to_type(new, old):
    a, b = run(new), run(old)
    assert a.returncode == b.returncode and a.stdout == b.stdout and a.stdout
    lines = b.stderr.decode().splitlines()
    extra = [line for line in lines if line not in a.stderr.decode().splitlines()]
    assert len(extra) == 1 and f"type 'cursor-watch {new[0]}" in extra[0] and old[0] in extra[0], lines


def test_watch_is_the_default_command():
    path = str(SAMPLES / "plain-tools.jsonl")
    a, b = run(["watch", "--summary", "--json", path]), run(["--summary", "--json", path])
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr) and a.stdout


@pytest.mark.parametrize(("args", "words"), [
    (["report", "--plain", str(SAMPLES)], "unrecognized arguments: --plain (see cursor-watch report --help)"),
    (["report"], "the following arguments are required: FILE|DIR (see cursor-watch report --help)"),
    (["compare", "a.jsonl"], "the following arguments are required: B (see cursor-watch compare --help)"),
    (["serve", "--summary", str(SAMPLES)], "unrecognized arguments: --summary (see cursor-watch serve --help)"),
    (["samples", "extra"], "unrecognized arguments: extra (see cursor-watch samples --help)"),
])
def test_a_subcommands_bad_option_is_one_line_naming_its_help(args, words):
    p = run(args)
    assert p.returncode == 2 and p.stdout == b""
    one_clear_line(p)
    assert words in p.stderr.decode()
