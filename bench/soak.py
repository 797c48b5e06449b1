#!/usr/bin/env python3
"""Soak: stream for a configured time at a high rate, and watch cursor-watch keep up.

    python bench/soak.py --minutes 10 --rate 2000

Runs two watches side by side, each fed by its own producer at ``--rate`` events/s:

* **pipe + TUI**: ``producer | cursor-watch`` in a real terminal (a tmux window,
  160x48), the full app with widgets; skipped with a note when tmux is missing;
* **spawned**: ``cursor-watch --summary --json -- producer``, the child's stdout
  read through the process source.

Both write ``--json-out`` at the end, so events seen are compared with events sent.
RSS (VmRSS of the cursor-watch process) is sampled every ``--every`` seconds. The
producer replays a generated partial-output stream (``gen_stream.py``: deltas,
thinking, tool calls with 1-16 KB payloads) with every ``call_id`` made unique per
loop, after one ``init``; it ends with a ``result``.

Prints a Markdown report (events sent/seen, diagnostics, RSS over time, growth after
warm-up); ``bench/README.md`` keeps the latest one.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def produce(template: Path, rate: float, seconds: float, count_file: Path) -> None:
    """Write events to stdout at ``rate`` per second for ``seconds``; record the count."""
    from gen_stream import looped, pace

    head, body, result = looped(template.read_bytes())
    out = sys.stdout.buffer
    sent = 0
    try:
        sent = pace(out, head, body, rate, seconds, nap=0.01)
        out.write(result)
        out.flush()
        sent += 1
    finally:
        count_file.write_text(str(sent))


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def find_pid(marker: str) -> int | None:
    """The cursor-watch process whose command line contains ``marker``."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (any(marker.encode() in c for c in cmd) and b"cursor_watch" in cmd and
                Path(cmd[0].decode(errors="replace")).name.startswith("python")):
            return int(d.name)
    return None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--rate", type=float, default=2000.0, help="events per second, per producer")
    p.add_argument("--every", type=float, default=30.0, help="seconds between RSS samples")
    p.add_argument("--produce", nargs=2, metavar=("TEMPLATE", "COUNT_FILE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    seconds = args.minutes * 60
    if args.produce:
        produce(Path(args.produce[0]), args.rate, seconds, Path(args.produce[1]))
        return 0

    from gen_stream import generate

    work = Path(tempfile.mkdtemp(prefix="cw-soak-"))
    template = work / "template.jsonl"
    meta = generate(template, size=4 << 20, partial=True, payload_min=1024, payload_max=16 << 10, seed=7)
    py = shlex.quote(sys.executable)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def producer_cmd(tag: str) -> str:
        return (f"{py} {shlex.quote(str(Path(__file__)))} --minutes {args.minutes} --rate {args.rate} "
                f"--produce {shlex.quote(str(template))} {shlex.quote(str(work / (tag + '.sent')))}")

    runs: dict[str, dict] = {}
    # spawned command, summary view
    spawn_json = work / "spawn.json"
    spawn = subprocess.Popen(
        [sys.executable, "-m", "cursor_watch", "--summary", "--json", "--json-out", str(spawn_json), "--",
         "sh", "-c", producer_cmd("spawn")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    runs["spawned, --summary"] = {"pid": spawn.pid, "json": spawn_json, "sent": work / "spawn.sent", "rss": []}
    # pipe into the TUI, in tmux
    tmux = shutil.which("tmux")
    sock = f"cw-soak-{os.getpid()}"
    if tmux:
        tui_json = work / "tui.json"
        shell = (f"cd {shlex.quote(str(ROOT))} && {producer_cmd('tui')} | PYTHONPATH={shlex.quote(str(ROOT))} "
                 f"{py} -m cursor_watch --json-out {shlex.quote(str(tui_json))}; sleep 5")
        subprocess.run([tmux, "-L", sock, "new-session", "-d", "-s", "soak", "-x", "160", "-y", "48", shell],
                       check=True, env={k: v for k, v in env.items() if k != "TMUX"})
        time.sleep(2)
        runs["pipe, TUI (tmux 160x48)"] = {"pid": find_pid(str(tui_json)), "json": tui_json,
                                           "sent": work / "tui.sent", "rss": []}
    else:
        print("tmux not found: the TUI run is skipped", file=sys.stderr)

    t0 = time.monotonic()
    next_sample = 0.0
    while time.monotonic() - t0 < seconds + 5:
        now = time.monotonic() - t0
        if now >= next_sample:
            for run in runs.values():
                if run["pid"]:
                    value = rss_mb(run["pid"])
                    if value is not None:
                        run["rss"].append((round(now), round(value, 1)))
            next_sample += args.every
        time.sleep(0.5)
    if tmux:
        # the producer has ended with a result; quit the TUI
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not Path(work / "tui.sent").exists():
            time.sleep(0.5)
        time.sleep(3)
        subprocess.run([tmux, "-L", sock, "send-keys", "-t", "soak", "q"], env={k: v for k, v in env.items() if k != "TMUX"})
    spawn.wait(timeout=120)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(r["json"].exists() for r in runs.values()):
        time.sleep(0.5)
    if tmux:
        subprocess.run([tmux, "-L", sock, "kill-server"], capture_output=True)

    print(f"## Soak: {args.minutes:g} min at {args.rate:g} events/s per producer\n")
    print(f"Template: {meta['bytes']:,} bytes, {meta['events']:,} events (partial output), looped with unique call_ids.\n")
    print("| run | events sent | events seen | invalid lines | unknown | tool calls | status | RSS samples (s: MB) | growth after warm-up |")
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    for name, run in runs.items():
        sent = int(run["sent"].read_text()) if run["sent"].exists() else None
        seen = data = None
        if run["json"].exists():
            data = json.loads(run["json"].read_text())
            seen = data["counts"]["events"]
        rss = run["rss"]
        warm = [v for t, v in rss if t >= 60] or [v for _, v in rss]
        growth = f"{warm[-1] - warm[0]:+.1f} MB" if len(warm) >= 2 else "n/a"
        samples = ", ".join(f"{t}: {v}" for t, v in rss)
        c = data["counts"] if data else {}
        print(f"| {name} | {sent} | {seen} | {c.get('invalid_lines')} | {c.get('unknown_events')} | "
              f"{c.get('tool_calls')} | {data['status'] if data else None} | {samples} | {growth} |")
        ok = ok and sent is not None and sent == seen
    print(f"\nEvents seen {'equal' if ok else 'DO NOT equal'} events sent.")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
