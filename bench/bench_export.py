#!/usr/bin/env python3
"""Benchmark ``--export`` (HTML and Markdown) against ``--summary --json`` on the same stream.

    python bench/bench_export.py [--streams 100MB:20000,100MB] [--repeat 3] [--quick]

For each stream (``gen_stream.py``, cached under ``bench/out/`` as ``bench_summary.py`` does),
these child processes run one after the other, in rounds (one of each per round, so a
change in the machine's load touches them alike), each timed on the wall clock from
process start to exit, best of ``--repeat``:

* ``summary``: ``python -m cursor_watch --summary --json FILE`` (the baseline);
* ``html``: ``python -m cursor_watch --summary --json --export OUT.html FILE``: the same
  watch and JSON, then the export (every payload re-read from the file by offset). (The
  text ``--summary`` is not used: its table of 20,000 rows alone takes longer than the watch.)
* ``md``: the same with ``OUT.md``;
* ``md 65536``: ``--export OUT.md --export-max-chars 65536`` (several passes; shown, no target).

Each export is checked: exit status 0; the HTML has one ``data-call-id`` per tool call and
the CSP meta tag; the Markdown holds one ``<details>`` per tool call (``md 65536``: fewer
than 65,536 characters). Peak RSS comes from ``/usr/bin/time -v`` when it is there.
The target: each export of a stream of many tool calls (100 MB, 20,000 calls) at
most 3x the summary's time; other streams are shown for information.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_summary import Measure, Stream, code_version, fmt_ratio, fmt_rss, fmt_s, log, machine_info, warm  # noqa: E402
from gen_stream import parse_size  # noqa: E402

TARGET_RATIO = 3.0
GITHUB_CHARS = 65_536
CHECKS = {"html": "html", "md": "md", "md 65536": "md-max"}


def check_export(kind: str, path: Path, rc: int, tool_calls: int) -> str:
    """``ok``, or what is wrong with the export at ``path``."""
    if rc != 0:
        return f"exit {rc}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return f"unreadable ({err})"
    problems = []
    if kind == "html":
        ids = len(re.findall(r"<details class=\"call [^\"]*\" id=\"[^\"]+\" data-call-id=", text))
        if ids != tool_calls:
            problems.append(f"{ids} tool-call elements, not {tool_calls}")
        if "Content-Security-Policy" not in text:
            problems.append("no CSP")
    elif kind == "md":
        n = len(re.findall(r"^<a id=\"r\d+-c\d+\"></a>\n<details>$", text, re.M))
        if n != tool_calls:
            problems.append(f"{n} tool-call blocks, not {tool_calls}")
    elif len(text) >= GITHUB_CHARS:
        problems.append(f"{len(text):,} characters")
    return "ok" if not problems else "; ".join(problems)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--streams", default="100MB:20000,100MB",
                   help="SIZE[:TOOL_CALLS],... (default 100MB:20000,100MB)")
    p.add_argument("--repeat", type=int, default=3, help="rounds; each figure is the best of them (default 3)")
    p.add_argument("--quick", action="store_true", help="CI smoke: a 2 MB stream with 400 tool calls, one round")
    p.add_argument("--out", type=Path, default=HERE / "out", help="where streams and exports go (default bench/out)")
    p.add_argument("--rss", choices=("auto", "time", "rusage"), default="auto")
    a = p.parse_args(argv)
    if a.quick:
        a.streams, a.repeat = "2MB:400", 1
    a.out.mkdir(parents=True, exist_ok=True)
    measure = Measure(a.rss)
    info = machine_info()
    started = time.time()
    rows = []
    failed = False
    for spec in a.streams.split(","):
        size, _, calls = spec.partition(":")
        stream = Stream(parse_size(size), False, int(calls) if calls else None, 1, a.out)
        stream.ensure()
        warm(stream.path)
        n_calls = stream.meta["tool_calls"]
        outs = {"summary": a.out / "export-summary.json", "html": a.out / "export.html", "md": a.out / "export.md",
                "md 65536": a.out / "export-65536.md"}
        base = [sys.executable, "-m", "cursor_watch", "--summary", "--json"]
        argvs = {
            "summary": base + [str(stream.path)],
            "html": base + ["--export", str(outs["html"]), str(stream.path)],
            "md": base + ["--export", str(outs["md"]), str(stream.path)],
            "md 65536": base + ["--export", str(outs["md 65536"]), "--export-max-chars", str(GITHUB_CHARS),
                                str(stream.path)],
        }
        best: dict[str, tuple[float, int | None]] = {}
        checks: dict[str, str] = {}
        for round_no in range(a.repeat):
            for kind, cmd in argvs.items():
                log(f"  {stream.label}: {kind} (round {round_no + 1})")
                stdout = outs["summary"] if kind == "summary" else None
                dt, rss, rc = measure.run(cmd, stdout, cwd=REPO)
                if kind == "summary":
                    checks[kind] = "ok" if rc == 0 else f"exit {rc}"
                else:
                    checks[kind] = check_export(CHECKS[kind], outs[kind], rc, n_calls)
                if kind not in best or dt < best[kind][0]:
                    best[kind] = (dt, rss)
        summary_s = best["summary"][0]
        for kind in argvs:
            dt, rss = best[kind]
            size_out = outs[kind].stat().st_size if outs[kind].exists() else 0
            rows.append((stream.label, stream.meta["bytes"], n_calls, kind, dt, fmt_ratio(dt, summary_s), rss,
                         size_out, checks[kind]))
            failed = failed or checks[kind] != "ok"
    print(f"machine: {info.get('cpu', '?')}, {info['nproc']} CPUs, {info.get('memory', '?')} RAM; "
          f"Python {info['python']}; best of {a.repeat}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}")
    print(f"cursor_watch: {REPO} at {code_version(REPO)}")
    print()
    print("| stream | size | tool calls | command | s | x summary | peak RSS | output | check |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---|")
    for label, size, calls, kind, dt, ratio, rss, size_out, check in rows:
        print(f"| {label} | {size / (1 << 20):.1f} MB | {calls:,} | {kind} | {fmt_s(dt)} | {ratio} | {fmt_rss(rss)} "
              f"| {size_out / (1 << 20):.1f} MB | {check} |")
    print()
    for label, _size, _calls, kind, _dt, ratio, *_ in rows:
        if kind in ("html", "md") and "calls" in label:  # the target: a stream of many tool calls
            value = float(ratio.rstrip("x")) if ratio != "n/a" else float("inf")
            verdict = "meets" if value <= TARGET_RATIO else "misses"
            print(f"target {label} {kind}: {ratio} the summary's time ({verdict} <= {TARGET_RATIO:g}x)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
