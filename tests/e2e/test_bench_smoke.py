"""Smoke test of the benchmark harness (bench/): correctness only, nothing is timed.

A ~1 MB generated stream must summarize to exactly what the generator wrote
(assistant text equal to ``result.text``, same tool calls and statuses), the
generator must be deterministic, and ``bench_summary.py --quick`` (summary, plain, pipe, colour) and
``bench_tui.py --quick`` must run and print their tables.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

BENCH = ROOT / "bench"
GEN = BENCH / "gen_stream.py"


def _generate(path, *args: str) -> dict:
    p = subprocess.run([sys.executable, str(GEN), str(path), *args], capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    meta = json.loads(p.stdout)
    assert meta == json.loads((path.parent / (path.name + ".meta.json")).read_text())
    return meta


def _summary(path) -> dict:
    p = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", str(path)],
                       capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


@pytest.mark.parametrize("partial", [False, True], ids=["plain", "partial"])
def test_generated_stream_summarizes_to_what_was_written(tmp_path, partial):
    path = tmp_path / "stream.jsonl"
    meta = _generate(path, "--size", "1MB", "--seed", "5", *(["--partial"] if partial else []))
    assert 0.9 * (1 << 20) < meta["bytes"] == path.stat().st_size < 1.2 * (1 << 20)
    s = _summary(path)
    assert s["status"] == "success"
    assert s["assistant_text"] == s["result"]["text"]
    assert len(s["assistant_text"]) == meta["assistant_chars"] > 0
    assert len(s["segments"]) == meta["segments"]
    assert s["counts"]["tool_calls"] == len(s["tool_calls"]) == meta["tool_calls"] > 0
    assert s["counts"]["events"] == s["counts"]["lines"] == meta["events"]
    assert s["counts"]["invalid_lines"] == s["counts"]["unknown_events"] == 0
    statuses: dict[str, int] = {}
    for call in s["tool_calls"]:
        statuses[call["status"]] = statuses.get(call["status"], 0) + 1
        assert "\n" in call["call_id"] and call["call_id"].startswith("call-")
        assert call["tool"] in ("shell", "read", "edit", "grep")
    assert statuses == {k: v for k, v in meta["statuses"].items() if v}


def test_generator_is_deterministic_and_honours_tool_calls(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _generate(a, "--size", "300KB", "--seed", "9", "--partial")
    _generate(b, "--size", "300KB", "--seed", "9", "--partial")
    assert a.read_bytes() == b.read_bytes()
    c = tmp_path / "c.jsonl"
    meta = _generate(c, "--size", "1MB", "--tool-calls", "150", "--seed", "2")
    assert meta["tool_calls"] == 150
    s = _summary(c)
    assert s["counts"]["tool_calls"] == 150
    assert s["assistant_text"] == s["result"]["text"]
    d = tmp_path / "d.jsonl"  # the issue-10 form: N calls, partial output, about K KB per call
    meta = _generate(d, "300", "--content-kb", "3", "--seed", "4")
    assert meta["tool_calls"] == 300 and meta["partial"] and 0.7 * 300 * 3072 < meta["bytes"] < 1.5 * 300 * 3072
    s = _summary(d)
    assert s["counts"]["tool_calls"] == 300 and s["assistant_text"] == s["result"]["text"]


def test_bench_quick_prints_a_table(tmp_path):
    p = subprocess.run([sys.executable, str(BENCH / "bench_summary.py"), "--quick", "--out", str(tmp_path)],
                       capture_output=True, cwd=ROOT, timeout=120)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode() + out
    assert "| stream | size | events |" in out and "summary/orjson" in out and "plain/orjson" in out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| stream | summary/orjson"))
    rows = []
    for line in lines[start + 2:]:  # the ratio table, up to the blank line after it
        if not line.startswith("| "):
            break
        rows.append(line)
    # 2 MB with and without partial output, 2 MB with 400 calls both ways, and --gen 400 (event-dense)
    assert len(rows) == 5 and all(row.rstrip().endswith("| ok |") for row in rows), out
    assert "target gen 400 " in out, out


def test_bench_tui_quick_prints_its_table(tmp_path):
    report = tmp_path / "report.md"
    # a key press whose effect is not on screen in time fails the run: a loaded machine gets 60 s
    # (the benchmark's own 5 s is a measure of speed, not asked here), so a timeout is the app's
    p = subprocess.run([sys.executable, str(BENCH / "bench_tui.py"), "--quick", "--cache", str(tmp_path),
                        "--out", str(report), "--key-timeout", "60"], capture_output=True, cwd=ROOT, timeout=900)
    out = p.stdout.decode()
    err = p.stderr.decode()
    assert p.returncode == 0, err[-3000:] + out

    def column(header: str, name: str) -> list[str]:
        """The cells of column ``name`` in the table whose header line starts with ``header``."""
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith(header))
        index = [cell.strip() for cell in lines[start].split("|")].index(name)
        rows = []
        for line in lines[start + 2:]:
            if not line.startswith("| "):
                break
            rows.append(line.split("|")[index].strip())
        return rows

    for header in ("| scenario | keys |", "| rate ev/s |"):  # no key press timed out, after a replay or live
        timeouts = column(header, "timeouts")
        assert timeouts and set(timeouts) == {"0"}, out
    for header in ("| stream | size | events | tool calls | summary s | TUI final s | TUI/summary |",
                   "| scenario | keys | n | latency median |", "| rate ev/s | achieved ev/s | max lag s |"):
        assert header in out, out
    replays = [line for line in out.splitlines() if line.startswith("| 2MB")]
    assert len(replays) == 2 and all(line.rstrip().endswith("| ok |") for line in replays), out
    assert report.read_text() == out


@pytest.mark.parametrize("agent,label", [("claude", "claude-code"), ("codex", "codex"), ("gemini", "gemini-cli")])
def test_generated_agent_stream_summarizes_to_what_was_written(tmp_path, agent, label):
    """``gen_stream.py --agent``: each agent's stream is read as that agent's, with
    the final text, tool calls, failures and events the generator wrote."""
    path = tmp_path / f"{agent}.jsonl"
    meta = _generate(path, "--agent", agent, "--size", "512KB", "--seed", "7", "--payload-max", "8KB")
    assert meta["agent"] == agent and meta["tool_calls"] > 10 and meta["failed"] > 0
    summary = _summary(path)
    assert summary["session"]["agent"] == label and summary["status"] == "success"
    assert summary["result"]["text"] == meta["final_text"] and summary["assistant_text"].endswith(meta["final_text"])
    assert summary["counts"]["tool_calls"] == meta["tool_calls"]
    assert sum(1 for c in summary["tool_calls"] if c["status"] == "failure") == meta["failed"]
    assert (summary["counts"]["events"], summary["counts"]["invalid_lines"]) == (meta["events"], 0)
