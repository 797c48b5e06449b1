#!/usr/bin/env python3
"""Benchmark ``--metrics``: what counting every run for Prometheus adds to ``--summary --json``.

    python bench/bench_metrics.py --size 1GB --tool-calls 100000 [--repeat 5]
    python bench/bench_metrics.py --one FILE        # one `metrics` run (for an outside timer)

The stream comes from ``gen_stream.py`` (cached under ``bench/out/`` like bench_summary's).
Then, paired (A B A B ...), each a child process:

* ``summary``: ``python -m cursor_watch --summary --json FILE``;
* ``metrics``: ``python bench/bench_metrics.py --one FILE``: starts ``python -m cursor_watch
  --summary --json --metrics 127.0.0.1:0 FILE``, waits for its stderr line saying the replay
  has ended (it then serves on), scrapes ``/metrics`` once, checks the figures against the
  generator's (one run, every tool call by outcome: the ``.meta.json`` sidecar), sends SIGINT
  and waits for the exit. Its time is the watch's from start to exit, a scrape and the
  wrapper's own start (~0.05 s) included; stdout must be identical to ``summary``'s.

Wall clock and CPU time (user + system of the command and its children) are reported, each as
the median of the runs, with ratios to ``summary``. Progress goes to stderr, a Markdown table to
stdout.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench_otlp import timed  # noqa: E402  (the same whole-process timer)
sys.path.insert(0, str(HERE))
from bench_summary import Stream, log, machine_info, warm  # noqa: E402
from gen_stream import format_size, parse_size  # noqa: E402

ENDED = b"the replay has ended; serving its metrics on "


def samples(text: str, name: str) -> Counter:
    """``{frozenset(labels): value}`` of one sample name in Prometheus's text format."""
    out: Counter = Counter()
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) == name:
            out[frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))] += float(m.group(3))
    return out


def one(path: Path, stdout_path: Path | None = None) -> int:
    """One ``metrics`` run: the watch, one scrape once the replay has ended, SIGINT; 0 when the
    scrape's figures are the generator's and the watch exits with its own status (0)."""
    meta = orjson.loads(Path(str(path) + ".meta.json").read_bytes())
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "cursor_watch", "--summary", "--json", "--metrics",
                                 "127.0.0.1:0", str(path)], stdout=out, stderr=err, cwd=REPO)
        while True:
            err.seek(0)
            text = err.read()
            if ENDED in text or proc.poll() is not None:
                break
            time.sleep(0.01)
        if proc.poll() is not None:
            sys.stderr.write(f"the watch exited ({proc.returncode}) before serving: {text[-500:]!r}\n")
            return 1
        url = re.search(rb"serving its metrics on (\S+)", text).group(1).decode()
        with urllib.request.urlopen(url, timeout=30) as r:
            scraped = r.read().decode()
        proc.send_signal(signal.SIGINT)
        code = proc.wait()
    problems = []
    runs = samples(scraped, "cursor_watch_runs_total")
    if sum(runs.values()) != 1:
        problems.append(f"runs: {dict(runs)}")
    calls = Counter()
    for labels, value in samples(scraped, "cursor_watch_tool_calls_total").items():
        calls[dict(labels)["outcome"]] += int(value)
    if calls != Counter({k: v for k, v in meta["statuses"].items() if v}):
        problems.append(f"tool calls {dict(calls)} != the generator's {meta['tool_status']}")
    if code != 0:
        problems.append(f"exit status {code}")
    for problem in problems:
        sys.stderr.write(f"PROBLEM: {problem}\n")
    return 1 if problems else 0




def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=parse_size, default=parse_size("1GB"))
    p.add_argument("--tool-calls", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=5, help="pairs of runs (median reported)")
    p.add_argument("--out", type=Path, default=HERE / "out")
    p.add_argument("--one", type=Path, metavar="FILE", help="one `metrics` run on FILE (see the module doc)")
    p.add_argument("--stdout", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        return one(args.one, args.stdout)
    args.out.mkdir(parents=True, exist_ok=True)
    stream = Stream(args.size, False, args.tool_calls, 1, args.out)
    stream.ensure()
    warm(stream.path)
    outs = {k: args.out / f"metrics-bench-{k}.json" for k in ("summary", "metrics")}
    commands = {"summary": [sys.executable, "-m", "cursor_watch", "--summary", "--json", str(stream.path)],
                "metrics": [sys.executable, __file__, "--one", str(stream.path), "--stdout", str(outs["metrics"])]}
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
    problems: list[str] = []
    for round_ in range(args.repeat):
        for name, argv_ in commands.items():
            wall, cpu, rc, err = timed(argv_, outs["summary"] if name == "summary" else args.out / "metrics-bench.log")
            results[name].append((wall, cpu))
            log(f"  round {round_ + 1} {name:8} {wall:7.2f} s wall {cpu:7.2f} s CPU rc={rc}")
            if name == "metrics":
                if rc != 0 or err:
                    problems.append(f"metrics: rc={rc} {err[-300:]!r}")
                if outs["metrics"].read_bytes() != outs["summary"].read_bytes():
                    problems.append("metrics: stdout differs from summary's")
    info = machine_info()
    print(f"stream: {stream.path.name}, {format_size(stream.meta['bytes'])}, {stream.meta['tool_calls']:,} tool calls, "
          f"{stream.meta['events']:,} events")
    print(f"machine: {info.get('cpu', '?')}, {os.cpu_count()} CPUs; load average at the end "
          f"{os.getloadavg()[0]:.2f}; medians of {args.repeat} paired runs")
    print()
    print("| command | wall s | CPU s | wall ratio | CPU ratio |")
    print("|---|---|---|---|---|")
    base_wall = statistics.median(w for w, _ in results["summary"])
    base_cpu = statistics.median(c for _, c in results["summary"])
    ratios = [m[0] / s[0] for m, s in zip(results["metrics"], results["summary"])]
    for name, rows in results.items():
        wall = statistics.median(w for w, _ in rows)
        cpu = statistics.median(c for _, c in rows)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x |")
    ratio = statistics.median(ratios)
    print()
    print(f"target: --metrics within 1.5x of --summary --json: {ratio:.2f}x wall, median of the pairs' ratios "
          f"({'meets' if ratio <= 1.5 else 'misses'})")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
