"""Re-make the README's browser pictures: the HTML export (light, dark, a phone) and --serve.

    python screenshots/make_web_screenshots.py

Headless Chromium (Debian's ``chromium``) driven by Playwright for Python, as in
``tests/e2e/test_browser.py``; nothing is downloaded and the pages reach nothing but this
machine. Writes ``screenshots/export-light.png``, ``export-dark.png``, ``export-phone.png``
and ``serve.png``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from cursor_watch.views.export import export_runs  # noqa: E402
from cursor_watch.stream.watch import Watch  # noqa: E402
from cursor_watch.stream.sources import open_sources  # noqa: E402
from webhelpers import CHROMIUM, CHROMIUM_ARGS, serving  # noqa: E402

SAMPLE = Path("sample_streams") / "plain-tools.jsonl"  # relative: the page shows the path as given


def export(path: Path, out: Path) -> None:
    sources, _dirs = open_sources([str(path)], None)

    async def go() -> list:
        watch = Watch(sources, install_signals=False)
        await watch.run(lambda run, changes: None, close=False)
        return watch.runs()

    export_runs(str(out), asyncio.run(go()))


def only_local(route) -> None:
    url = route.request.url
    if url.startswith(("file://", "http://127.0.0.1", "ws://127.0.0.1")):
        route.continue_()
    else:
        route.abort()


def export_shots(browser, page_url: str) -> None:
    for scheme, name, opened in (("light", "export-light", ["r1-c1"]), ("dark", "export-dark", ["r1-c4"])):
        context = browser.new_context(viewport={"width": 1280, "height": 1000}, color_scheme=scheme,
                                      device_scale_factor=1)
        page = context.new_page()
        page.route("**/*", only_local)
        page.goto(page_url)
        for anchor in opened:
            page.evaluate(f"document.getElementById('{anchor}').open = true")
        if scheme == "dark":
            page.evaluate("document.getElementById('r1-c4').scrollIntoView()")
        page.screenshot(path=str(HERE / f"{name}.png"))
        context.close()
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="light", is_mobile=True,
                                  has_touch=True, device_scale_factor=2)
    page = context.new_page()
    page.route("**/*", only_local)
    page.goto(page_url)
    page.evaluate("document.getElementById('r1-c3').open = true; document.getElementById('r1-c3').scrollIntoView()")
    page.screenshot(path=str(HERE / "export-phone.png"))
    context.close()


def serve_shot(browser) -> None:
    with serving(str(SAMPLE)) as port:
        context = browser.new_context(viewport={"width": 1400, "height": 860}, device_scale_factor=1)
        page = context.new_page()
        page.route("**/*", only_local)
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("body.-first-byte", timeout=30_000)
        page.wait_for_timeout(4_000)  # the replay ends and the screen settles
        page.screenshot(path=str(HERE / "serve.png"))
        context.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    os.chdir(ROOT)

    if CHROMIUM is None:
        raise SystemExit("no chromium: apt-get install chromium")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "plain-tools.html"
        export(SAMPLE, out)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, "--hide-scrollbars"])
            export_shots(browser, out.as_uri())
            serve_shot(browser)
            browser.close()
    for name in ("export-light", "export-dark", "export-phone", "serve"):
        print(f"screenshots/{name}.png")


if __name__ == "__main__":
    main()
