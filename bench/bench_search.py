#!/usr/bin/env python3
"""Benchmark the search on a big run: first match, full count, key presses meanwhile.

    python bench/bench_search.py [--size 1GB] [--calls 100000] [--seed 21] [--queries Q,...]
                                 [--cache DIR] [--pkg-root DIR] [--quick]

One stream from ``gen_stream.py`` (cached in ``bench/out/``), then two child processes:

1. **core**: the run's model is built from the file (as ``--summary`` does), then each query
   runs through :class:`cursor_watch.query.search.Search` alone (its scan in a second process, as
   in the app), timed from its start: the first match found, and every match counted. For
   comparison, the same literal as a regular expression takes the path without the
   raw-bytes prefilter (every tool-call line decoded).
2. **tui**: the TUI replays the file headless (160x48, frames into a null terminal, as
   ``bench_tui.py``), then a search is started as ``/`` does; timed from then: the first
   match on screen (the current match set, and a frame drawn after it), the full count
   in the bar; meanwhile ``down`` / ``up`` in the tool table every 50 ms, each timed to the
   frame that shows the cursor moved.

Targets: on 1 GB with 100,000 tool calls the first match under 1 s and the full
count under 5 s; the UI never blocks (key presses while a search runs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_tui import FrameProbe, NullTerminal, StallMonitor, fmt_ms, press, stats_ms  # noqa: E402

SIZE = (160, 48)
TARGET_FIRST_S = 1.0
TARGET_ALL_S = 5.0
TARGET_KEY_MS = 100.0
# a case-sensitive word in shell output (~1 in 60 KB), its case-insensitive twin, a word
# also in every line's JSON keys (the prefilter's worst case), a word that is nowhere,
# and a regular expression
QUERIES = ["AssertionError", "assertionerror", "timestamp", "zebra crossing", r"class \w+Error"]
T0_ENV = "BENCH_SEARCH_T0"


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _out(obj: dict) -> None:
    os.write(1, (json.dumps(obj) + "\n").encode())


def _query(text: str):
    from cursor_watch.query.search import Query

    regex = "\\" in text or "(" in text
    return Query(text, regex=regex)


def _timed_search(session, reread, query, file=None) -> dict:
    from cursor_watch.query.search import Search

    t0 = time.monotonic()
    search = Search(session, reread, query, file=file)
    first = None
    steps = 0
    while not search.step():
        steps += 1
        if first is None and search.total:
            first = time.monotonic() - t0
        if search.waiting:
            time.sleep(0.005)
    done = time.monotonic() - t0
    if first is None and search.total:
        first = done
    return {"first_s": first, "all_s": done, "total": search.total, "hits": len(search.hits), "steps": steps,
            "prefilter": search.filter is not None}


# --------------------------------------------------------------------------- children


def driver_core(a) -> int:
    """Child: build the model, then time each query on its own."""
    import re

    from cursor_watch.stream.watch import Monitor
    from cursor_watch.query.search import Query
    from cursor_watch.stream.sources import FileSource

    src = FileSource(a.file)
    mon = Monitor(source=a.file, reread=src.reread)
    t0 = time.monotonic()
    with open(a.file, "rb") as f:
        while chunk := f.read(1 << 20):
            mon.feed(chunk)
    mon.finish()
    res = {"model_s": time.monotonic() - t0, "queries": []}
    session = mon.session
    for text in a.queries:
        q = _query(text)
        r = _timed_search(session, src.reread, q, file=src.byte_file())
        r["query"] = text
        r["regex"] = q.regex
        if not q.regex:  # the same literal, every payload line decoded (no prefilter)
            slow = _timed_search(session, src.reread, Query(re.escape(text), regex=True), file=src.byte_file())
            r["no_prefilter_all_s"] = slow["all_s"]
            r["same_total"] = slow["total"] == r["total"]
        res["queries"].append(r)
    res["rss_mb"] = _maxrss_mb()
    _out(res)
    os._exit(0)


def driver_tui(a) -> int:
    """Child: the TUI replays FILE; then a search from the bar, with key presses meanwhile."""
    NullTerminal.install()
    probe = FrameProbe()
    probe.install()
    from cursor_watch.stream.watch import Watch
    from cursor_watch.tui.app import make_app
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.tool_table import ToolTable

    app = make_app(Watch(FileSource(a.file), install_signals=False))

    async def main() -> None:
        async with app.run_test(headless=True, size=SIZE):
            t_replay = time.monotonic()
            while not app.ended:
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.5)  # the replayed model is frozen after 1 s
            res = {"replay_s": time.monotonic() - t_replay, "queries": []}
            screen = app.run_view()
            table = screen.query_one(ToolTable)
            stall = StallMonitor()
            stall.start()
            for text in a.queries:
                table.focus()
                table.move_cursor(table.row_count // 2)
                await asyncio.sleep(0.3)
                q = _query(text)
                screen._regex = q.regex
                screen._search_text = text
                t0 = time.monotonic()
                screen._start_search()
                first_seen = None
                keys: list[float] = []
                direction = 1
                while screen.search is not None and not screen.search.done:
                    if first_seen is None and screen._cur is not None:
                        first_seen = time.monotonic() - t0
                    row = table.cursor_row
                    want = max(0, min(table.row_count - 1, row + direction))
                    direction = -direction
                    cur = screen._cur
                    # the first match moves the cursor too: a press it overlaps is not counted
                    dt = await press(app, probe, "down" if want > row else "up",
                                     lambda w=want, c=cur: table.cursor_row == w or screen._cur != c,
                                     lambda: (table,), timeout=5.0)
                    if dt is not None and screen._cur == cur:
                        keys.append(dt)
                    await asyncio.sleep(0.05)
                t_all = time.monotonic() - t0
                if first_seen is None and screen._cur is not None:
                    first_seen = t_all
                search = screen.search
                res["queries"].append({
                    "query": text, "first_s": first_seen, "all_s": t_all,
                    "total": search.total if search is not None else None,
                    "status": str(screen.query_one("#search-bar").query_one(".query-bar--status").content),
                    "keys": stats_ms(keys), "stall_ms": stall.max_between(t0, t0 + t_all) * 1000.0,
                    "frames": stats_ms(probe.frames_between(t0, t0 + t_all))})
                screen.clear_search()
                await asyncio.sleep(0.3)
            res["rss_mb"] = _maxrss_mb()
            _out(res)
            os._exit(0)

    asyncio.run(main())
    return 1


def driver_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="bench_search.py --driver")
    p.add_argument("mode", choices=("core", "tui"))
    p.add_argument("file")
    p.add_argument("--queries", type=lambda s: s.split("\x1f"), required=True)
    a = p.parse_args(argv)
    return {"core": driver_core, "tui": driver_tui}[a.mode](a)


# --------------------------------------------------------------------------- the parent


def parse_size(text: str) -> int:
    units = {"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
    for unit, mult in units.items():
        if text.upper().endswith(unit):
            return int(float(text[: -len(unit)]) * mult)
    return int(text)


def ensure_stream(cache: Path, size: int, calls: int, seed: int) -> tuple[Path, dict]:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"search-{size}-tc{calls}-seed{seed}.jsonl"
    meta_path = path.with_name(path.name + ".meta.json")
    if path.exists() and meta_path.exists():
        return path, json.loads(meta_path.read_text())
    print(f"  generate {path.name} ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, str(HERE / "gen_stream.py"), str(path), "--size", str(size),
                    "--tool-calls", str(calls), "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    return path, json.loads(meta_path.read_text())


def run_child(args: list[str], pkg_root: Path, timeout: float) -> dict | None:
    env = dict(os.environ, PYTHONPATH=str(pkg_root))
    p = subprocess.run([sys.executable, __file__, "--driver", *args], capture_output=True, env=env, cwd=pkg_root,
                       timeout=timeout)
    if p.returncode != 0:
        print(p.stderr.decode(errors="replace")[-3000:], file=sys.stderr)
        return None
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def fmt_s(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--driver"]:
        return driver_main(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=parse_size, default=1 << 30)
    p.add_argument("--calls", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--queries", default=",".join(QUERIES).replace(",", "\x1f"),
                   help="queries separated by commas (a query with a backslash or '(' is a regular expression)")
    p.add_argument("--skip", default="", help="core,tui")
    p.add_argument("--cache", type=Path, default=HERE / "out")
    p.add_argument("--pkg-root", type=Path, default=REPO)
    p.add_argument("--quick", action="store_true", help="CI smoke: a 4 MB stream with 500 calls")
    a = p.parse_args(argv)
    if a.quick:
        a.size, a.calls = 4 << 20, 500
    queries = a.queries.replace(",", "\x1f") if "\x1f" not in a.queries else a.queries
    path, meta = ensure_stream(a.cache, a.size, a.calls, a.seed)
    head = (f"{meta['bytes'] / 1e9:.2f} GB, {meta['events']:,} events, {meta['tool_calls']:,} tool calls"
            if meta["bytes"] > 1e8 else f"{meta['bytes'] / 1e6:.1f} MB, {meta['events']:,} events, "
                                         f"{meta['tool_calls']:,} tool calls")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"stream: {path.name} ({head}); load average before: {load}")
    failed = False
    timeout = 1800
    if "core" not in a.skip:
        core = run_child(["core", str(path), "--queries", queries], a.pkg_root, timeout)
        if core is None:
            failed = True
        else:
            print(f"\n## The search alone (model built in {core['model_s']:.1f} s; peak RSS {core['rss_mb']:.0f} MB)\n")
            print("| query | kind | matches | first match s | all counted s | without the prefilter s |")
            print("|---|---|---:|---:|---:|---:|")
            for r in core["queries"]:
                kind = "regex" if r["regex"] else ("literal" if r["prefilter"] else "literal (decoded)")
                slow = fmt_s(r.get("no_prefilter_all_s")) if not r["regex"] else "-"
                if not r["regex"] and not r.get("same_total", True):
                    slow += " (COUNT DIFFERS)"
                    failed = True
                print(f"| `{r['query']}` | {kind} | {r['total']:,} | {fmt_s(r['first_s'])} | {r['all_s']:.2f} | {slow} |")
    if "tui" not in a.skip:
        tui = run_child(["tui", str(path), "--queries", queries], a.pkg_root, timeout)
        if tui is None:
            failed = True
        else:
            print(f"\n## In the TUI (replayed in {tui['replay_s']:.1f} s; peak RSS {tui['rss_mb']:.0f} MB)\n")
            print("| query | matches | first match on screen s | all counted s | key presses | key median ms | "
                  "max | frame max ms | stall max ms | bar says |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
            for r in tui["queries"]:
                k = r["keys"]
                print(f"| `{r['query']}` | {r['total']:,} | {fmt_s(r['first_s'])} | {r['all_s']:.2f} | {k['n']} | "
                      f"{fmt_ms(k['median'])} | {fmt_ms(k['max'])} | {fmt_ms(r['frames']['max'])} | "
                      f"{r['stall_ms']:.1f} | {r['status']} |")
            print()
            for r in tui["queries"]:
                first_ok = r["first_s"] is None or r["first_s"] < TARGET_FIRST_S
                all_ok = r["all_s"] < TARGET_ALL_S
                key_ok = r["keys"]["median"] is None or r["keys"]["median"] < TARGET_KEY_MS
                print(f"target `{r['query']}`: first match {fmt_s(r['first_s'])} s "
                      f"({'meets' if first_ok else 'misses'} < {TARGET_FIRST_S:g} s), all {r['all_s']:.2f} s "
                      f"({'meets' if all_ok else 'misses'} < {TARGET_ALL_S:g} s), key median "
                      f"{fmt_ms(r['keys']['median'])} ms ({'meets' if key_ok else 'misses'} < {TARGET_KEY_MS:g} ms)")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
