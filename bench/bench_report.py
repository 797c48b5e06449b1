#!/usr/bin/env python3
"""Benchmark ``cursor-watch --report`` against ``--summary --json`` on the same stream.

    python bench/bench_report.py [--size 1GB] [--partial] [--repeat 3]

The stream is made by ``gen_stream.py`` (cached under ``bench/out/``, like ``bench_summary.py``).
Both commands run as child processes, in turn (report, summary, report, summary, ...), each
with its output to a file; for each the CPU time (user + system, the children's rusage) and
the wall clock are taken, best of ``--repeat``, and the report/summary ratios printed (the CPU
ratio is the one to quote on a shared machine). The report's totals are checked against the
summary's: runs, tool calls by status, tokens. Exit status 1 if they differ.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_summary import Stream  # noqa: E402
from gen_stream import parse_size  # noqa: E402


def timed(cmd: list[str], out: Path) -> tuple[float, float]:
    """(cpu s, wall s) of one child run, its stdout to ``out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(out, "wb") as f:
        subprocess.run(cmd, stdout=f, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", default="1GB")
    p.add_argument("--partial", action="store_true")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    stream = Stream(parse_size(args.size), args.partial, None, 1, out)
    stream.ensure()
    path = stream.path
    with open(path, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    py = [sys.executable, "-m", "cursor_watch"]
    cmds = {"report": py + ["report", "--json", str(path)], "summary": py + ["--summary", "--json", str(path)]}
    best = {name: (float("inf"), float("inf")) for name in cmds}
    for _ in range(args.repeat):
        for name, cmd in cmds.items():
            cpu, wall = timed(cmd, out / f"last-{name}.json")
            best[name] = (min(best[name][0], cpu), min(best[name][1], wall))
            print(f"  {name}: cpu {cpu:.2f} s, wall {wall:.2f} s", file=sys.stderr)
    report = orjson.loads((out / "last-report.json").read_bytes())["total"]
    summary = orjson.loads((out / "last-summary.json").read_bytes())
    calls = summary["tool_calls"]
    checks = {
        "runs": report["runs"] == 1,
        "tool calls": report["tool_calls"] == len(calls),
        "failed": report["failed_tool_calls"] == sum(c["status"] == "failure" for c in calls),
        "rejected": report["rejected_tool_calls"] == sum(c["status"] == "rejected" for c in calls),
        "tokens": report["tokens"] == {k: v or 0 for k, v in (summary["result"]["usage"] or {}).items()},
    }
    size = path.stat().st_size
    print("| stream | size | report cpu s | summary cpu s | report/summary cpu | report wall s | summary wall s | check |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {stream.label} | {size / 1e6:,.0f} MB | {best['report'][0]:.2f} | {best['summary'][0]:.2f} | "
          f"{best['report'][0] / best['summary'][0]:.2f}x | {best['report'][1]:.2f} | {best['summary'][1]:.2f} | "
          f"{'ok' if all(checks.values()) else 'FAILED: ' + ', '.join(k for k, v in checks.items() if not v)} |")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
