#!/usr/bin/env python3
"""The README's picture of an explained quiet (``screenshots/quiet-compacting.svg`` and ``.png``).

    python screenshots/make_quiet_screenshot.py

A Claude Code run of the shared capture littlebearapps/untether ``claude_autocompact_2.1.285.jsonl``
(its third run, up to its ``system/status`` ``compacting``) is read live, as from a pipe, and the
app's clocks are moved on 4 minutes: the header says ``quiet 4m: compacting``. The clocks are
the app's own (frozen, then moved), so the picture only changes when the app does. Chromium draws
the PNG (``make_screenshots.svg_to_png``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from cursor_watch.stream.watch import Watch  # noqa: E402
from cursor_watch.tui.app import make_app  # noqa: E402
from cursor_watch.stream.sources import QueueSource  # noqa: E402
from make_screenshots import svg_to_png, until  # noqa: E402

CAPTURE = (ROOT.parent / "shared" / "streams" / "agents" / "claude"
           / "littlebearapps__untether__tests__fixtures__claude_autocompact_2.1.285.jsonl")
T0 = 1_790_000_000_000.0


async def quiet_compacting(name: str, size: tuple[int, int]) -> Path:
    now = [1000.0]  # monotonic seconds, moved by hand
    src = QueueSource("claude -p --output-format stream-json --verbose 'Summarise big3.txt'")
    app = make_app(Watch(src, clock=lambda: T0 + (now[0] - 1000.0) * 1000.0, install_signals=False),
                   monotonic=lambda: now[0])
    lines = CAPTURE.read_bytes().splitlines(keepends=True)[17:22]  # the third run's init .. compacting
    async with app.run_test(size=size) as pilot:
        await src.push(b"".join(lines))
        await until(pilot, lambda: app.session.events >= len(lines) and app.session.notes
                    and app.session.notes[-1].text == "status: compacting")
        now[0] += 245.0
        run = app.watch.runs()[0]
        await until(pilot, lambda: (q := app.quiet_of(run)) is not None and q.label() == "quiet 4m: compacting")
        app.save_screenshot(f"{name}.svg", path=str(HERE))
    return HERE / f"{name}.svg"


async def main() -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    for name, size in (("quiet-compacting", (160, 24)),):
        svg = await quiet_compacting(name, size)
        print(svg.relative_to(ROOT), "+ png" if svg_to_png(svg) else "(no chromium: svg only)")


if __name__ == "__main__":
    asyncio.run(main())
