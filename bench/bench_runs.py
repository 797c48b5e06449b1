#!/usr/bin/env python3
"""Benchmark many runs at once: a directory of logs, and many followed files growing together.

    python bench/bench_runs.py [--files 200] [--total 1GB] [--follow 20] [--rate 500]
                               [--seconds 15] [--cache DIR] [--pkg-root DIR] [--quick]

Two parts, each the TUI headless (160x48, frames rendered into a null terminal, as
``bench_tui.py`` does) in a child process:

1. **A directory.** ``--files`` logs totalling ``--total`` (``gen_stream.py``, one seed each,
   cached in ``bench/out/``), opened as ``cursor-watch DIR``. Timed from process start: the
   first screen of the runs list (a row per file, the reading progress in the summary
   line), and the moment every file has been read and every row is final. Meanwhile and
   after: key presses in the list (``down``), and Enter on rows (a run opens: the run
   view drawn with its tool-call rows), Escape back. Peak RSS of the child (``ru_maxrss``).
2. **Followed files.** ``--follow`` files in a temporary directory, opened as
   ``cursor-watch -f DIR``; a producer process appends a looped partial-output stream to
   each at ``--rate`` events/s for ``--seconds``. Every 0.5 s, each row's lag: (events the
   producer had written to that file - events its run has applied) / rate; key presses
   (``down``/``up`` in the list) spread over the run.

Targets: first screen < 1 s, peak RSS < 300 MB, a run opens < 0.5 s; every row
keeps up (lag < 1 s), key press to screen < 100 ms median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mmap
import os
import resource
import struct
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_tui import FrameProbe, NullTerminal, StallMonitor, fmt_ms, log, press, stats_ms  # noqa: E402

SIZE = (160, 48)
TARGET_FIRST_S = 1.0
TARGET_RSS_MB = 300.0
TARGET_OPEN_S = 0.5
TARGET_LAG_S = 1.0
TARGET_KEY_MS = 100.0
T0_ENV = "BENCH_RUNS_T0"
LIVE_TEMPLATE = dict(size=2 << 20, partial=True, payload_min=512, payload_max=8 << 10, seed=11)


def _process_t0() -> float:
    return float(os.environ.get(T0_ENV, time.monotonic()))


def _out(obj: dict) -> None:
    os.write(1, (json.dumps(obj) + "\n").encode())


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# --------------------------------------------------------------------------- part 1: a directory


def driver_dir(a) -> int:
    """Child: ``cursor-watch DIR`` headless; first screen, full read, keys, opening runs."""
    t_proc = _process_t0()
    NullTerminal.install()
    probe = FrameProbe()
    probe.install()
    from cursor_watch.stream.watch import Watch
    from cursor_watch.tui.app import make_app
    from cursor_watch.tui.screens.run import RunScreen
    from cursor_watch.tui.screens.runs import RunsScreen
    from cursor_watch.stream.sources import open_sources
    from cursor_watch.tui.widgets.runs_table import RunsTable
    from cursor_watch.tui.widgets.tool_table import ToolTable

    sources, dirs = open_sources([a.dir], None)
    app = make_app(Watch(sources, directories=dirs, install_signals=False))
    n_files = len(sources)

    def table() -> RunsTable:
        return app.screen.query_one(RunsTable)

    async def main() -> None:
        async with app.run_test(headless=True, size=SIZE):
            stall = StallMonitor()
            stall.start()
            loop = asyncio.get_running_loop()
            from bench_tui import Waiter

            first = Waiter(lambda: isinstance(app.screen, RunsScreen) and table().row_count >= n_files,
                           lambda: (table(),), 0.0, loop.create_future())
            probe.waiters.append(first)
            t_first = await asyncio.wait_for(first.fut, 60)
            res = {"files": n_files, "first_screen_s": t_first - t_proc}
            # key presses in the list while the files are read
            lat: list[float] = []
            t_a = time.monotonic()
            for _ in range(a.keys):
                if app.ended:
                    break
                tbl = table()
                want = tbl.rows[min(tbl.cursor_row + 1, tbl.row_count - 1)].key  # rows re-sort as files are read
                dt = await press(app, probe, "down", lambda w=want: table().selected_key() == w, lambda: (table(),))
                if dt is not None:
                    lat.append(dt)
                await asyncio.sleep(0.05)
            res["keys_while_reading"] = stats_ms(lat)
            res["stall_while_reading_ms"] = stall.max_between(t_a, time.monotonic()) * 1000.0
            # a run opened while the others are still read
            opens: list[float] = []
            if not app.ended:
                dt = await press(app, probe, "enter", lambda: isinstance(app.screen, RunScreen)
                                 and app.screen.query_one(ToolTable).row_count == len(app.session.tool_calls),
                                 lambda: tuple(app.screen.walk_children()), timeout=10)
                res["open_while_reading_s"] = dt
                await press(app, probe, "escape", lambda: isinstance(app.screen, RunsScreen), lambda: (table(),))
            while not app.ended:
                await asyncio.sleep(0.02)
            final = Waiter(lambda: all(r.state in ("success", "error", "incomplete") for r in table().rows),
                           lambda: (table(),), 0.0, loop.create_future())
            probe.waiters.append(final)
            t_final = await asyncio.wait_for(final.fut, 600)
            res["all_read_s"] = t_final - t_proc
            res["runs"] = table().row_count
            res["events"] = sum(r.session.events for r in app.all_runs())
            res["tool_calls"] = sum(len(r.session.tool_calls) for r in app.all_runs())
            # open runs after the read: Enter, the run view with every tool-call row, Escape
            for i in range(a.opens):
                table().move_cursor((i * 37) % table().row_count)
                await asyncio.sleep(0.05)
                dt = await press(app, probe, "enter", lambda: isinstance(app.screen, RunScreen)
                                 and app.screen.query_one(ToolTable).row_count == len(app.session.tool_calls),
                                 lambda: tuple(app.screen.walk_children()), timeout=10)
                if dt is not None:
                    opens.append(dt)
                await press(app, probe, "escape", lambda: isinstance(app.screen, RunsScreen), lambda: (table(),))
                await asyncio.sleep(0.05)
            res["open"] = stats_ms(opens)
            res["frames"] = stats_ms([d for _, d in probe.frames])
            res["rss_mb"] = _maxrss_mb()
            _out(res)
            os._exit(0)

    asyncio.run(main())
    return 1


# --------------------------------------------------------------------------- part 2: followed files

COUNT = struct.Struct("<d")


def produce(directory: Path, template: Path, files: int, rate: float, seconds: float, counter: Path) -> int:
    """Producer child: append the template's events to ``files`` files at ``rate``/s each."""
    from gen_stream import looped

    head, body, result = looped(template.read_bytes())
    outs = [open(directory / f"agent-{i:02d}.jsonl", "ab", buffering=0) for i in range(files)]
    bodies = [body]  # one endless body shared: each file gets the next lines (unique call_ids per loop)
    fd = os.open(counter, os.O_RDWR)
    mm = mmap.mmap(fd, 8 * (files + 2))
    sent = [0] * files
    t0 = time.monotonic()
    for i, out in enumerate(outs):
        out.write(b"".join(head))
        sent[i] = len(head)
    mm[0:8] = COUNT.pack(t0)
    while (elapsed := time.monotonic() - t0) < seconds:
        due = int(elapsed * rate) + len(head)
        for i, out in enumerate(outs):
            n = due - sent[i]
            if n > 0:
                out.write(b"".join(next(bodies[0]) for _ in range(n)))
                sent[i] += n
                mm[8 * (i + 2): 8 * (i + 3)] = struct.pack("<q", sent[i])
        time.sleep(0.01)
    for i, out in enumerate(outs):
        out.write(result)
        sent[i] += 1
        mm[8 * (i + 2): 8 * (i + 3)] = struct.pack("<q", sent[i])
        out.close()
    mm[8:16] = COUNT.pack(time.monotonic())
    return 0


def driver_follow(a) -> int:
    """Child: ``cursor-watch -f DIR`` while a producer appends to every file; lag and keys."""
    import subprocess

    NullTerminal.install()
    probe = FrameProbe()
    probe.install()
    from cursor_watch.stream.watch import Watch
    from cursor_watch.tui.app import make_app
    from cursor_watch.stream.sources import open_sources
    from cursor_watch.tui.widgets.runs_table import RunsTable

    directory = Path(a.dir)
    files = a.follow
    for i in range(files):  # the files exist (empty) when the watch starts
        (directory / f"agent-{i:02d}.jsonl").write_bytes(b"")
    counter = Path(a.counter)
    counter.write_bytes(b"\0" * 8 * (files + 2))
    mm = mmap.mmap(os.open(counter, os.O_RDONLY), 8 * (files + 2), prot=mmap.PROT_READ)
    sources, dirs = open_sources([str(directory)], None, follow=True)
    app = make_app(Watch(sources, directories=dirs, follow=True, install_signals=False))

    def table() -> RunsTable:
        return app.screen.query_one(RunsTable)

    def written(i: int) -> int:
        return struct.unpack("<q", mm[8 * (i + 2): 8 * (i + 3)])[0]

    def applied() -> dict[str, int]:
        out = {}
        for feed in app.watch.feeds:
            out[os.path.basename(feed.source.label)] = sum(r.session.events for r in feed.runs)
        return out

    async def main() -> None:
        async with app.run_test(headless=True, size=SIZE):
            stall = StallMonitor()
            stall.start()
            await asyncio.sleep(0.5)
            prod = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--produce", str(directory),
                                     a.template, str(files), str(a.rate), str(a.seconds), str(counter)])
            while COUNT.unpack(mm[0:8])[0] == 0.0 and prod.poll() is None:
                await asyncio.sleep(0.01)
            t0 = COUNT.unpack(mm[0:8])[0]
            lags: list[float] = []
            samples = []

            async def sampler() -> None:
                while True:
                    await asyncio.sleep(0.5)
                    got = applied()
                    worst = 0.0
                    for i in range(files):
                        behind = written(i) - got.get(f"agent-{i:02d}.jsonl", 0)
                        worst = max(worst, behind / a.rate)
                    lags.append(worst)
                    samples.append({"t": time.monotonic() - t0, "worst_lag_s": worst})

            st = asyncio.get_running_loop().create_task(sampler())
            lat: list[float] = []
            timeouts = 0
            for k in range(a.keys):
                at = t0 + (k + 0.5) * a.seconds / a.keys
                await asyncio.sleep(max(0.0, at - time.monotonic()))
                key = "down" if k % 2 == 0 else "up"
                tbl = table()
                want = tbl.rows[max(0, min(tbl.cursor_row + (1 if key == "down" else -1), tbl.row_count - 1))].key
                dt = await press(app, probe, key, lambda w=want: table().selected_key() == w, lambda: (table(),))
                if dt is None:
                    timeouts += 1
                else:
                    lat.append(dt)
            t_keys = time.monotonic()
            while prod.poll() is None:
                await asyncio.sleep(0.05)
            total = sum(written(i) for i in range(files))
            deadline = time.monotonic() + 10
            while sum(applied().values()) < total and time.monotonic() < deadline:
                await asyncio.sleep(0.05)  # the last appends, read at the next poll
            st.cancel()
            during = [s["worst_lag_s"] for s in samples if s["t"] <= a.seconds]
            _out({"files": files, "rate": a.rate, "seconds": a.seconds,
                  "written": sum(written(i) for i in range(files)), "applied": sum(applied().values()),
                  "max_lag_s": max(during, default=None), "keys": stats_ms(lat), "timeouts": timeouts,
                  "frames": stats_ms(probe.frames_between(t0, t_keys)),
                  "stall_ms": stall.max_between(t0, t_keys) * 1000.0, "rss_mb": _maxrss_mb(),
                  "rows": table().row_count})
            os._exit(0)

    asyncio.run(main())
    return 1


# =========================================================================== the parent


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--produce"]:
        return produce(Path(argv[1]), Path(argv[2]), int(argv[3]), float(argv[4]), float(argv[5]), Path(argv[6]))
    if argv[:1] == ["--driver"]:
        p = argparse.ArgumentParser(prog="bench_runs.py --driver")
        p.add_argument("mode", choices=("dir", "follow"))
        p.add_argument("dir")
        p.add_argument("--keys", type=int, default=20)
        p.add_argument("--opens", type=int, default=10)
        p.add_argument("--follow", type=int, default=20)
        p.add_argument("--rate", type=float, default=500.0)
        p.add_argument("--seconds", type=float, default=15.0)
        p.add_argument("--template")
        p.add_argument("--counter")
        d = p.parse_args(argv[1:])
        return driver_dir(d) if d.mode == "dir" else driver_follow(d)

    from bench_summary import _loadavg, code_version, machine_info, warm
    from gen_stream import format_size, generate, parse_size

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=200)
    p.add_argument("--total", type=parse_size, default=1 << 30)
    p.add_argument("--follow", type=int, default=20, help="followed files in part 2")
    p.add_argument("--rate", type=float, default=500.0, help="events/s appended to each followed file")
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--skip", default="", help="dir,follow")
    p.add_argument("--cache", type=Path, default=HERE / "out")
    p.add_argument("--pkg-root", type=Path, default=REPO)
    p.add_argument("--quick", action="store_true", help="CI smoke: 6 files of 1 MB, 3 followed files for 2 s")
    a = p.parse_args(argv)
    keys, opens = 20, 10
    if a.quick:
        a.files, a.total, a.follow, a.seconds, keys, opens = 6, 6 << 20, 3, 2.0, 4, 2
    skip = {x.strip() for x in a.skip.split(",") if x.strip()}
    env = dict(os.environ)
    env["PYTHONPATH"] = str(a.pkg_root.resolve()) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    py, me = sys.executable, str(Path(__file__).resolve())
    info = machine_info()
    load_before = _loadavg()
    report = [f"machine: {info}", f"cursor_watch: {code_version(a.pkg_root.resolve())}; load before "
              f"{load_before}"]
    verdicts: list[str] = []
    failed = False

    def run_child(args: list[str]) -> dict:
        e = dict(env)
        e[T0_ENV] = repr(time.monotonic())
        p = __import__("subprocess").run([py, me, "--driver", *args], capture_output=True, env=e, cwd=a.pkg_root,
                                         timeout=1800)
        lines = [ln for ln in p.stdout.decode().splitlines() if ln.startswith("{")]
        if p.returncode != 0 or not lines:
            raise SystemExit(f"driver failed ({p.returncode}): {p.stderr.decode()[-3000:]}")
        return json.loads(lines[-1])

    if "dir" not in skip:
        each = max(64 << 10, a.total // a.files)
        d = a.cache.resolve() / f"runs-{a.files}x{each}"
        d.mkdir(parents=True, exist_ok=True)
        log(f"generating {a.files} logs of {format_size(each)} in {d} (cached) ...")
        for i in range(a.files):
            path = d / f"agent-{i:03d}.jsonl"
            if not path.exists() or not Path(str(path) + ".meta.json").exists():
                generate(path, size=each, seed=1000 + i, partial=i % 2 == 1)
        total = sum(p.stat().st_size for p in d.glob("*.jsonl"))
        for path in d.glob("*.jsonl"):
            warm(path)
        log(f"part 1: cursor-watch DIR ({a.files} files, {format_size(total)}) ...")
        r = run_child(["dir", str(d), "--keys", str(keys), "--opens", str(opens)])
        report += ["", f"## A directory: {r['files']} logs, {format_size(total)}, {r['runs']} runs, "
                   f"{r['events']:,} events, {r['tool_calls']:,} tool calls", "",
                   "| first screen s | all read s | key median ms (while reading) | max | open run median s | max |"
                   " open while reading s | frame max ms | stall max ms (reading) | peak RSS MB |",
                   "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
                   f"| {r['first_screen_s']:.2f} | {r['all_read_s']:.2f} | {fmt_ms(r['keys_while_reading']['median'])} | "
                   f"{fmt_ms(r['keys_while_reading']['max'])} | {(r['open']['median'] or 0) / 1000:.3f} | "
                   f"{(r['open']['max'] or 0) / 1000:.3f} | "
                   f"{r.get('open_while_reading_s') if r.get('open_while_reading_s') is None else round(r['open_while_reading_s'], 3)} | "
                   f"{fmt_ms(r['frames']['max'])} | {r['stall_while_reading_ms']:.1f} | {r['rss_mb']:.0f} |"]
        open_max = max((r["open"]["max"] or 0) / 1000, r.get("open_while_reading_s") or 0)
        for name, ok, text in (
                ("first screen", r["first_screen_s"] < TARGET_FIRST_S, f"{r['first_screen_s']:.2f} s (< {TARGET_FIRST_S} s)"),
                ("peak RSS", r["rss_mb"] < TARGET_RSS_MB, f"{r['rss_mb']:.0f} MB (< {TARGET_RSS_MB:.0f} MB)"),
                ("run opens", open_max < TARGET_OPEN_S, f"slowest {open_max:.3f} s (< {TARGET_OPEN_S} s)")):
            verdicts.append(f"target {name}: {text}: {'meets' if ok else 'MISSES'}")
            failed |= not ok
    if "follow" not in skip:
        from gen_stream import generate as gen

        template = a.cache.resolve() / "runs-live-template.jsonl"
        if not template.exists():
            gen(template, **LIVE_TEMPLATE)
        with tempfile.TemporaryDirectory(prefix="bench-runs-") as tmp:
            log(f"part 2: cursor-watch -f DIR, {a.follow} files at {a.rate:g} events/s each for {a.seconds:g} s ...")
            r = run_child(["follow", tmp, "--follow", str(a.follow), "--rate", str(a.rate), "--seconds",
                           str(a.seconds), "--keys", str(keys), "--template", str(template),
                           "--counter", str(Path(tmp) / ".counter")])
        report += ["", f"## Followed files: {r['files']} files at {r['rate']:g} events/s each for {r['seconds']:g} s "
                   f"({r['files'] * r['rate']:,.0f} events/s in all)", "",
                   "| written | applied | max row lag s | key median ms | p95 | max | timeouts | frame max ms | "
                   "stall max ms | peak RSS MB |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
                   f"| {r['written']:,} | {r['applied']:,} | {r['max_lag_s']:.2f} | {fmt_ms(r['keys']['median'])} | "
                   f"{fmt_ms(r['keys']['p95'])} | {fmt_ms(r['keys']['max'])} | {r['timeouts']} | "
                   f"{fmt_ms(r['frames']['max'])} | {r['stall_ms']:.1f} | {r['rss_mb']:.0f} |"]
        for name, ok, text in (
                ("rows keep up", r["max_lag_s"] is not None and r["max_lag_s"] < TARGET_LAG_S,
                 f"worst row lag {r['max_lag_s']:.2f} s (< {TARGET_LAG_S} s)"),
                ("key press", (r["keys"]["median"] or 1e9) < TARGET_KEY_MS,
                 f"median {fmt_ms(r['keys']['median'])} ms (< {TARGET_KEY_MS:.0f} ms)")):
            verdicts.append(f"target {name}: {text}: {'meets' if ok else 'MISSES'}")
            failed |= not ok
    report += [""] + verdicts + [f"load after {_loadavg()}"]
    print("\n".join(report))
    return 1 if failed and not a.quick else 0


if __name__ == "__main__":
    sys.exit(main())
