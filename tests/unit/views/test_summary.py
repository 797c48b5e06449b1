"""--summary, run as the command: the summary JSON scripts read gives what the stream recorded,
whole (a long reason is never cut there), and no time it did not (a replay's calls without times
have none; read live, their arrival)."""

from __future__ import annotations

import json

import orjson

from captures import LONG_REASON, _untimed_sample, with_long_reason
from command import cw


def test_replayed_calls_without_times_have_no_invented_durations(tmp_path):
    f = tmp_path / "untimed.jsonl"
    f.write_bytes(_untimed_sample())
    summary = orjson.loads(cw("--summary", "--json", str(f)).stdout)
    calls = summary["tool_calls"]
    assert len(calls) == 6 and all(c["duration_ms"] is None and c["started_ms"] is None for c in calls)
    plain = cw("--plain", str(f)).stdout.decode()
    assert "success" in plain and " ms" not in plain and " s\n" not in plain  # no "0 ms" per call
    # the same stream read live (stdin): the calls ran then, so arrival times are real times
    live = orjson.loads(cw("--summary", "--json", "-", stdin=f.read_bytes()).stdout)
    assert all(c["started_ms"] is not None for c in live["tool_calls"])


# -- a reason is never cut where scripts read it ---------------------------------------------------

def test_summary_json_gives_a_long_reason_whole(tmp_path):
    p = cw("--summary", "--json", str(with_long_reason(tmp_path)))
    calls = json.loads(p.stdout)["tool_calls"]
    assert LONG_REASON in calls[0]["detail"]  # whole, its last instruction included
    assert calls[0]["detail"].endswith("wait for their answer.")
