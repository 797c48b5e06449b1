#!/usr/bin/env python3
"""``--summary --json`` on Claude Code and Codex streams against the ``orjson.loads`` line loop.

    python bench/bench_agents.py [--size 200MB] [--rounds 5] [--quick] [--out DIR] [--pkg-root DIR]
                                 [--bytecode-cache DIR]

Generates (and caches under ``bench/out/``) a Claude Code stream with partial messages and a
Codex stream of ``--size`` each (``gen_stream.py --agent``), then runs the two commands of each
pair in turn, ``--rounds`` times (orjson loop, summary, orjson loop, summary...): pairing keeps
the ratio meaningful on a machine whose speed drifts. Each child's CPU time (user + system, from
``getrusage``) and wall time are taken; the table gives the medians and the median of the
per-pair ratios (the target: summary within 3x the loop). The summary's JSON is checked
once per stream: exit 0, the final text and the tool-call counts the generator wrote.
``--pkg-root DIR`` measures another copy of ``cursor_watch`` (another work tree: "before" figures),
``--out DIR`` caches the streams elsewhere than ``bench/out/``. ``--bytecode-cache DIR`` lets the
summary's process keep its compiled modules in DIR (``PYTHONPYCACHEPREFIX``, with
``PYTHONDONTWRITEBYTECODE`` unset; warmed by the check run), as an installed package has them:
by default the environment decides, and where ``PYTHONDONTWRITEBYTECODE`` is set every start
compiles the package's sources again.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench_summary import ORJSON_LOOP  # noqa: E402
from gen_stream import GENERATOR_VERSION, format_size, generate_agent, parse_size  # noqa: E402

TARGET = 3.0


def timed(argv: list[str], stdout, cwd: Path = REPO, env: dict | None = None) -> tuple[float, float, int]:
    """(cpu seconds, wall seconds, exit status) of one child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    rc = subprocess.run(argv, stdout=stdout, cwd=cwd, env=env).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, rc


def ensure(out: Path, agent: str, size: int, partial: bool) -> tuple[Path, dict]:
    path = out / f"agent-{agent}-{'partial-' if partial else ''}{size}-v{GENERATOR_VERSION}.jsonl"
    meta_path = Path(str(path) + ".meta.json")
    if not (path.exists() and meta_path.exists()):
        sys.stderr.write(f"generating {path.name}\n")
        generate_agent(path, agent, size, partial)
    return path, orjson.loads(meta_path.read_bytes())


def check(summary: dict, meta: dict) -> str:
    problems = []
    if summary["result"] is None or summary["result"]["text"] != meta["final_text"]:
        problems.append("final text differs")
    if summary["counts"]["tool_calls"] != meta["tool_calls"]:
        problems.append(f"{summary['counts']['tool_calls']} tool calls, generated {meta['tool_calls']}")
    failed = sum(1 for c in summary["tool_calls"] if c["status"] == "failure")
    if failed != meta["failed"]:
        problems.append(f"{failed} failed, generated {meta['failed']}")
    if summary["counts"]["events"] != meta["events"] or summary["counts"]["invalid_lines"]:
        problems.append("event counts differ")
    return "; ".join(problems) or "ok"


def _commit(root: Path) -> str:
    """The short commit of the work tree at ``root`` (``+`` when it has changes), or ``?``."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+" if dirty else "")


def _bytecode(env: dict) -> str:
    """How the summary's process gets its compiled modules without --bytecode-cache."""
    if env.get("PYTHONDONTWRITEBYTECODE"):
        return "compiled at every start (PYTHONDONTWRITEBYTECODE is set)"
    return "Python's usual __pycache__"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=parse_size, default=parse_size("200MB"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="2MB streams, 2 rounds (a smoke test)")
    p.add_argument("--out", type=Path, default=HERE / "out")
    p.add_argument("--pkg-root", type=Path, default=REPO,
                   help="the directory holding the cursor_watch package to measure (default: this work tree)")
    p.add_argument("--bytecode-cache", type=Path, default=None,
                   help="keep the summary process's compiled modules in this directory (PYTHONPYCACHEPREFIX)")
    a = p.parse_args(argv)
    a.pkg_root, a.out = a.pkg_root.resolve(), a.out.resolve()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(a.pkg_root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if a.bytecode_cache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(a.bytecode_cache.resolve())
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    if a.quick:
        a.size, a.rounds = parse_size("2MB"), 2
    a.out.mkdir(parents=True, exist_ok=True)
    loop = [sys.executable, "-c", ORJSON_LOOP]
    rows = []
    ok = True
    for agent, partial in (("claude", True), ("codex", False)):
        path, meta = ensure(a.out, agent, a.size, partial)
        subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL)  # page cache
        summary_cmd = [sys.executable, "-m", "cursor_watch", "--summary", "--json", str(path)]
        with tempfile.TemporaryFile() as f:
            _cpu, _wall, rc = timed(summary_cmd, f, a.pkg_root, env)
            f.seek(0)
            verdict = check(orjson.loads(f.read()), meta) if rc == 0 else f"exit {rc}"
        ok &= verdict == "ok"
        cpu_ratios, wall_ratios, loop_cpu, summ_cpu = [], [], [], []
        for _ in range(a.rounds):
            lc, lw, _rc = timed([*loop, str(path)], subprocess.DEVNULL)
            sc, sw, _rc = timed(summary_cmd, subprocess.DEVNULL, a.pkg_root, env)
            loop_cpu.append(lc)
            summ_cpu.append(sc)
            cpu_ratios.append(sc / lc)
            wall_ratios.append(sw / lw)
        ratio = statistics.median(cpu_ratios)
        ok &= ratio <= TARGET
        rows.append((f"{agent}{' (partial messages)' if partial else ''}", format_size(meta["bytes"]),
                     meta["lines"], statistics.median(loop_cpu), statistics.median(summ_cpu), ratio,
                     statistics.median(wall_ratios), verdict))
    print(f"cursor_watch: {a.pkg_root} at {_commit(a.pkg_root)}; load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}, "
          f"{os.cpu_count()} cores, {a.rounds} paired rounds; compiled modules: "
          f"{'cached in ' + str(a.bytecode_cache) if a.bytecode_cache else _bytecode(env)}")
    print("| stream | size | lines | orjson loop CPU s | --summary --json CPU s | ratio (CPU, median of pairs) "
          "| ratio (wall) | check |")
    print("|---|---|---|---|---|---|---|---|")
    for name, size, lines, lc, sc, ratio, wall, verdict in rows:
        print(f"| {name} | {size} | {lines:,} | {lc:.2f} | {sc:.2f} | {ratio:.2f}x | {wall:.2f}x | {verdict} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
