"""Re-make the README's screenshots: the app on the shipped samples, 160x48.

    python screenshots/make_screenshots.py

Writes ``screenshots/*.svg`` and, when ``rsvg-convert`` is installed (Debian:
``librsvg2-bin``), ``*.png`` beside them. Clocks are frozen so the images only
change when the app does.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from cursor_watch.app import CursorWatchApp  # noqa: E402
from cursor_watch.screens.detail import ToolDetailScreen  # noqa: E402
from cursor_watch.sources import FileSource, QueueSource  # noqa: E402
from cursor_watch.widgets.tool_table import ToolTable  # noqa: E402

SAMPLES = ROOT / "sample_streams"
SIZE = (160, 48)


def frozen(source) -> CursorWatchApp:
    return CursorWatchApp(source, clock=lambda: 1_790_000_000_000.0, monotonic=lambda: 1000.0, install_signals=False)


async def until(pilot, predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("screenshot: the app did not reach the expected state")
        await pilot.pause(0.05)
    await pilot.pause(0.3)


async def live_mid_stream(name: str) -> None:
    src = QueueSource("cursor-agent -p 'Run the unit tests, mypy and ruff in parallel…'")
    app = frozen(src)
    lines = (SAMPLES / "parallel-failed-rejected.jsonl").read_bytes().splitlines(keepends=True)
    async with app.run_test(size=SIZE) as pilot:
        await src.push(b"".join(lines[:12]))
        await until(pilot, lambda: app.session.events == 12)
        app.save_screenshot(f"{name}.svg", path=str(HERE))


async def finished(name: str, sample: str, keys: tuple[str, ...] = (), detail_row: int | None = None) -> None:
    app = frozen(FileSource(str(SAMPLES / f"{sample}.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.ended)
        if detail_row is not None:
            table = app.run_view().query_one(ToolTable)
            table.focus()
            table.move_cursor(row=detail_row)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.3)
        app.save_screenshot(f"{name}.svg", path=str(HERE))


async def main() -> None:
    await live_mid_stream("live-mid-stream")
    await finished("finished-run", "plain-tools")
    await finished("tool-detail-shell", "plain-tools", detail_row=2)
    await finished("tool-detail-edit", "plain-tools", detail_row=3)
    await finished("failed-run-diagnostics", "failed-no-result", keys=("d",))
    converter = shutil.which("rsvg-convert")
    for svg in sorted(HERE.glob("*.svg")):
        if converter:
            subprocess.run([converter, "-w", "1600", str(svg), "-o", str(svg.with_suffix(".png"))], check=True)
        print(svg.relative_to(ROOT), "+ png" if converter else "(no rsvg-convert: svg only)")


if __name__ == "__main__":
    asyncio.run(main())
