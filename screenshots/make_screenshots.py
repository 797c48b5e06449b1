"""Re-make the README's screenshots: the app on the shipped samples, 160x48 (and one at 80x24).

    python screenshots/make_screenshots.py [agents | runs-list | context]

Writes ``screenshots/*.svg`` and, when headless Chromium is installed (Debian's
``chromium``), ``*.png`` beside them: Chromium draws the SVG as a browser does
(``rsvg-convert`` dropped runs of spaces, "shellpytest"). Clocks are frozen so the
images only change when the app does.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import shutil
import tempfile
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from cursor_watch.stream.watch import Watch  # noqa: E402
from cursor_watch.tui.app import CursorWatchApp, make_app  # noqa: E402
from cursor_watch.tui.screens.detail import ToolDetailScreen  # noqa: E402
from cursor_watch.stream.sources import FileSource, QueueSource  # noqa: E402
from cursor_watch.tui.widgets.tool_table import ToolTable  # noqa: E402

SAMPLES = ROOT / "sample_streams"
SIZE = (160, 48)


def frozen(source) -> CursorWatchApp:
    return make_app(Watch(source, clock=lambda: 1_790_000_000_000.0, install_signals=False), monotonic=lambda: 1000.0)


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


async def finished(name: str, sample: str, keys: tuple[str, ...] = (), detail_row: int | None = None,
                   size: tuple[int, int] = SIZE) -> None:
    app = frozen(FileSource(str(SAMPLES / f"{sample}.jsonl")))
    async with app.run_test(size=size) as pilot:
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


async def searched(name: str, sample: str, query: str, keys: tuple[str, ...] = ()) -> None:
    """A finished run with a search typed in the bar (matches highlighted, ``i/N``)."""
    app = frozen(FileSource(str(SAMPLES / f"{sample}.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.ended)
        await pilot.press("slash")
        for ch in query:
            await pilot.press("space" if ch == " " else ch)
        screen = app.run_view()
        await until(pilot, lambda: screen.search is not None and screen.search.done
                    and screen.search.query.text == query)
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.3)
        app.save_screenshot(f"{name}.svg", path=str(HERE))


def live_feed(app: CursorWatchApp, source):
    return next(f for f in app.watch.feeds if f.source is source)


async def runs_list(name: str) -> None:
    """Several logs and a live agent: the runs list (a directory watched with -f looks like this)."""
    tmp = Path(tempfile.mkdtemp(prefix="cw-shots-"))
    samples = ["plain-tools", "partial-output", "parallel-failed-rejected", "failed-no-result", "partial-interaction"]
    for sample in samples:
        (tmp / f"{sample}.jsonl").write_bytes((SAMPLES / f"{sample}.jsonl").read_bytes())
    # a loop log: two runs in one file
    (tmp / "nightly-loop.jsonl").write_bytes((SAMPLES / "plain-tools.jsonl").read_bytes()
                                             + (SAMPLES / "partial-output.jsonl").read_bytes())
    # other agents' runs beside them (real captures, when they are beside the clone)
    for log, capture in (("claude-subagent.ndjson", CLAUDE_SUBAGENT), ("codex-mcp.jsonl", CODEX_MCP)):
        if capture.exists():
            (tmp / log).write_bytes(capture.read_bytes())
    live = QueueSource("worktree-b (live)")
    sources = [FileSource(str(p)) for p in sorted([*tmp.glob("*.jsonl"), *tmp.glob("*.ndjson")])] + [live]
    lines = (SAMPLES / "parallel-failed-rejected.jsonl").read_bytes().splitlines(keepends=True)
    first_ts = min(int(t) for t in re.findall(rb'"timestamp_ms":(\d+)', b"".join(lines[:12])))
    app = make_app(Watch(sources, clock=lambda: first_ts + 74_000.0, install_signals=False), monotonic=lambda: 1000.0)
    async with app.run_test(size=(160, 22)) as pilot:
        files = [f for f in app.watch.feeds if f.source is not live]
        await until(pilot, lambda: all(f.ended for f in files))
        await live.push(b"".join(lines[:12]))
        await until(pilot, lambda: live_feed(app, live).monitor.session.events == 12)
        app.save_screenshot(f"{name}.svg", path=str(HERE))
    shutil.rmtree(tmp, ignore_errors=True)


AGENTS = ROOT.parent / "shared" / "streams" / "agents"  # real captures of other agents (README: provenance)
CLAUDE_SUBAGENT = AGENTS / "claude" / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson"
CODEX_MCP = AGENTS / "codex" / "mccorvie__TauCetiWorker__tests__fixtures__codex_exec_mcp_0_160.jsonl"


async def agent_run(name: str, path: Path, detail_row: int | None = None) -> None:
    """Another agent's real capture in the run view (or a call's detail)."""
    app = frozen(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.ended)
        if detail_row is not None:
            table = app.run_view().query_one(ToolTable)
            table.focus()
            table.move_cursor(row=detail_row)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        await pilot.pause(0.3)
        app.save_screenshot(f"{name}.svg", path=str(HERE))


async def agents() -> None:
    """The README's "Other agents" screenshots (skipped when the captures are not beside the clone)."""
    if not CLAUDE_SUBAGENT.exists() or not CODEX_MCP.exists():
        print(f"agent captures not found under {AGENTS}: their screenshots are not re-made")
        return
    await agent_run("claude-subagent", CLAUDE_SUBAGENT)
    await agent_run("claude-subagent-detail", CLAUDE_SUBAGENT, detail_row=0)
    await agent_run("codex-run", CODEX_MCP)


def looping_stream() -> Path:
    """The plain-tools sample with loops planted (tests/fixtures/loopstreams.py): ``pytest -q`` failing 4
    times before the fix, ``app/pricing.py`` read 3 times; written to a temporary file."""
    sys.path.insert(0, str(ROOT / "tests"))
    import orjson
    from loopstreams import joined, lines_of, plant

    lines = lines_of(SAMPLES / "plain-tools.jsonl")
    ids = [orjson.loads(x)["call_id"] for x in lines if b'"subtype":"started"' in x and b'"type":"tool_call"' in x]
    lines = plant(lines, ids[0], 2)  # the read of app/pricing.py
    lines = plant(lines, ids[2], 3)  # the failing pytest -q
    path = Path(tempfile.mkdtemp(prefix="cw-shot-")) / "fix-discount.jsonl"
    path.write_bytes(joined(lines))
    return path


async def looping(name: str) -> None:
    """A run that looped: the header's ``↻ looping`` part."""
    app = frozen(FileSource(str(looping_stream())))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.ended)
        app.save_screenshot(f"{name}.svg", path=str(HERE))
CLAUDE_AUTOCOMPACT = AGENTS / "claude" / "littlebearapps__untether__tests__fixtures__claude_autocompact_2.1.285.jsonl"


async def context_view() -> None:
    """The README's "Context and compaction" screenshots: the third run of a real Claude Code capture
    that auto-compacted mid-turn (its lines 18-30 alone), the run view (the header's gauge, the
    compaction marker in the transcript) and its context view (``w``)."""
    if not CLAUDE_AUTOCOMPACT.exists():
        print(f"{CLAUDE_AUTOCOMPACT.name} not found under {AGENTS}: the context screenshots are not re-made")
        return
    from cursor_watch.tui.screens.context import ContextScreen

    tmp = Path(tempfile.mkdtemp())
    one = tmp / "claude-autocompact.jsonl"
    one.write_text("".join(CLAUDE_AUTOCOMPACT.read_text(encoding="utf-8").splitlines(keepends=True)[17:30]))
    app = frozen(FileSource(str(one)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.ended)
        app.save_screenshot("context-compaction.svg", path=str(HERE))
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        app.save_screenshot("context-view.svg", path=str(HERE))
    shutil.rmtree(tmp, ignore_errors=True)


async def main() -> None:
    os.environ["TZ"] = "UTC"  # the runs list shows local times
    time.tzset()
    if sys.argv[1:] == ["looping"]:  # only the loop's screenshot
        await looping("looping")
        svg_to_png(HERE / "looping.svg")
        return
    if sys.argv[1:] == ["agents"]:  # only the other agents' screenshots
        await agents()
        for svg in sorted(HERE.glob("c*-*.svg")):
            if svg.stem.startswith(("claude-", "codex-")):
                print(svg.relative_to(ROOT), "+ png" if svg_to_png(svg) else "(no chromium: svg only)")
        return
    if sys.argv[1:] == ["context"]:  # only the context screenshots
        await context_view()
        for name in ("context-compaction", "context-view"):
            if (HERE / f"{name}.svg").exists():
                print(name, "+ png" if svg_to_png(HERE / f"{name}.svg") else "(no chromium: svg only)")
        return
    if sys.argv[1:] == ["runs-list"]:  # only the runs list (it shows every agent's label)
        await runs_list("runs-list")
        svg_to_png(HERE / "runs-list.svg")
        return
    await agents()
    await context_view()
    await runs_list("runs-list")
    await live_mid_stream("live-mid-stream")
    await finished("finished-run", "plain-tools")
    await finished("tool-detail-shell", "plain-tools", detail_row=2)
    await finished("tool-detail-edit", "plain-tools", detail_row=3)
    await finished("failed-run-diagnostics", "failed-no-result", keys=("d",))
    await finished("finished-run-80x24", "plain-tools", size=(80, 24))  # stacked panes (a narrow terminal)
    await searched("search", "plain-tools", "discount")
    await searched("search-detail", "plain-tools", "discount", keys=("enter",))
    await looping("looping")
    for svg in sorted(HERE.glob("*.svg")):
        done = svg_to_png(svg)
        print(svg.relative_to(ROOT), "+ png" if done else "(no chromium: svg only)")


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def svg_to_png(svg: Path, width: int = 1600) -> bool:
    """Render ``svg`` to a PNG beside it with headless Chromium; False when there is none."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return False
    box = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg.read_text()[:2000])
    height = math.ceil(width * float(box.group(2)) / float(box.group(1))) if box else 1000
    png = svg.with_suffix(".png")
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        p = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                            f"--screenshot={png}", svg.as_uri()], capture_output=True, timeout=120)
    if not png.exists():
        raise SystemExit(f"chromium wrote no {png.name}: {p.stderr.decode(errors='replace')[-500:]}")
    return True


if __name__ == "__main__":
    asyncio.run(main())
