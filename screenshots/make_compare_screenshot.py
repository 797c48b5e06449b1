"""Re-make the README's screenshot of ``--compare``: a real Cursor run and a real Claude Code run
of the same kind of task (a sub-agent runs a shell command), with gates, drawn by Rich as an SVG
and by headless Chromium as a PNG.

    python screenshots/make_compare_screenshot.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from rich.console import Console  # noqa: E402

from cursor_watch.views.compare import compare, load_side, parse_gates, print_comparison  # noqa: E402
from cursor_watch.core.costs import PriceTable  # noqa: E402
from cursor_watch.core.rules import RunRules  # noqa: E402
from make_screenshots import svg_to_png  # noqa: E402

STREAMS = ROOT.parent / "shared" / "streams"
A = STREAMS / "real" / "reifying__cursor-hack__experiments__subagent-sleep-v2.jsonl"
B = STREAMS / "agents" / "claude" / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson"
GATES = "duration>+50%,failures>0,tool_calls>+1"
WIDTH = 110


def main() -> None:
    if not STREAMS.is_dir():
        raise SystemExit(f"the shared captures are not at {STREAMS}")
    rules = RunRules(prices=PriceTable(user_file=False))  # the shipped prices only
    console = Console(record=True, width=WIDTH, force_terminal=True, color_system="truecolor",
                      file=open("/dev/null", "w"))
    comp = compare(load_side(str(A), rules=rules), load_side(str(B), rules=rules), parse_gates(GATES))
    print_comparison(comp, console, WIDTH)
    svg = HERE / "compare.svg"
    console.save_svg(str(svg), title=f"cursor-watch --compare CURSOR.jsonl CLAUDE.ndjson --fail-if '{GATES}'")
    print(svg.relative_to(ROOT), "+ png" if svg_to_png(svg) else "(no chromium: svg only)")


if __name__ == "__main__":
    main()
