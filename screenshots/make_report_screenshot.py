"""Re-make the README's screenshot of ``--report``: the real captures in ../shared/streams/real/,
grouped by model, drawn by Rich as an SVG and by headless Chromium as a PNG.

    python screenshots/make_report_screenshot.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from rich.console import Console  # noqa: E402

from cursor_watch.core.costs import PriceTable  # noqa: E402
from cursor_watch.core.rules import RunRules  # noqa: E402
from cursor_watch.views.report import build_report, render_report  # noqa: E402
from make_screenshots import svg_to_png  # noqa: E402

REAL = ROOT.parent / "shared" / "streams" / "real"


def main() -> None:
    if not REAL.is_dir():
        raise SystemExit(f"the real captures are not at {REAL}")
    rules = RunRules(prices=PriceTable(user_file=False))  # the shipped prices only
    console = Console(record=True, width=150, force_terminal=True, color_system="truecolor", file=open("/dev/null", "w"))
    render_report(build_report([str(REAL)], by="model", rules=rules), console, width=150)  # as at a 150-column terminal
    svg = HERE / "report.svg"
    console.save_svg(str(svg), title="cursor-watch --report --by model ../shared/streams/real")
    print(svg.relative_to(ROOT), "+ png" if svg_to_png(svg) else "(no chromium: svg only)")


if __name__ == "__main__":
    main()
