"""In a real browser: the HTML export, and the TUI served by ``--serve``.

Headless Chromium from Debian's ``chromium`` package, driven by Playwright for Python through
that executable: no browser is ever downloaded. Without Playwright or Chromium every test here
skips and says which is missing; under ``CI=true`` it fails (``.ci/run`` installs ``chromium``).

Nothing leaves the machine: the export's page may only load itself (any other request fails the
test); the served page may only talk to 127.0.0.1 (textual-serve's page asks for a web font from
the internet: cursor-watch serves its own page, whose fonts come from the local server).
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import SAMPLES, real_params

from cursor_watch.views.export import export_runs
from cursor_watch.views.export.common import final_text
from cursor_watch.views.export.html import render_markdown

from replays import watch_runs
from webhelpers import CHROMIUM, CHROMIUM_ARGS, serving

try:
    from playwright import sync_api
except ImportError:  # the browser marker says so: each test skips, or fails under CI=true
    sync_api = None
html5lib = pytest.importorskip("html5lib")

pytestmark = pytest.mark.browser  # needs Chromium and Playwright (conftest.BACKENDS)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Page:
    """A page that records console errors, page errors and every request it makes."""

    def __init__(self, browser, allow: re.Pattern, **context) -> None:
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.refused: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(r):
            if allow.match(r.request.url):
                r.continue_()
            else:
                self.refused.append(r.request.url)
                r.abort()

        self.page.route("**/*", route)

    def close(self) -> None:
        self.context.close()


def _export(paths, tmp_path, name="run.html"):
    """The runs of ``paths`` and their HTML export (made in a thread: Playwright's sync API
    keeps an event loop running in this one)."""
    out = tmp_path / name

    def work():
        runs = watch_runs(*paths)
        export_runs(str(out), runs)
        return runs

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result(), out


def _words(text: str) -> str:
    return " ".join(text.split())


def _rendered_words(markdown: str) -> str:
    return _words("".join(html5lib.parseFragment(render_markdown(markdown), namespaceHTMLElements=False).itertext()))


@pytest.mark.parametrize("path", real_params())
def test_html_export_of_a_real_capture_opens_offline_with_every_call_and_the_final_text(browser, path, tmp_path):
    runs, out = _export([path], tmp_path)
    view = Page(browser, re.compile(re.escape(out.as_uri()) + "$"))
    try:
        view.page.goto(out.as_uri())
        ids = view.page.eval_on_selector_all("details[data-call-id]", "els => els.map(e => e.dataset.callId)")
        assert ids == [c.call_id for run in runs for c in run.session.tool_calls.values()]
        segments = [s.text for run in runs for s in run.session.segments if s.text.strip()]
        if segments:  # the last thing the agent said, as the page shows it
            message = view.page.locator(".transcript .msg").last
            assert _words(message.inner_text()) == _rendered_words(segments[-1]) and message.is_visible()
        final = [final_text(run.session) for run in runs if final_text(run.session)]
        if final:  # a result whose text is not the segments (a hand-edited log): shown on its own
            assert _words(view.page.locator(".msg").last.inner_text()) == _rendered_words(final[-1])
        assert view.errors == [] and view.refused == []
    finally:
        view.close()


def test_html_export_filters_opens_a_linked_call_and_fits_a_phone(browser, tmp_path):
    _runs, out = _export([SAMPLES / "plain-tools.jsonl"], tmp_path)
    view = Page(browser, re.compile(re.escape(out.as_uri()) + "(#.*)?$"), viewport={"width": 390, "height": 844},
                color_scheme="dark", is_mobile=True, has_touch=True)
    page = view.page
    try:
        page.goto(out.as_uri())
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(13, 17, 23)"
        page.fill(".filter input", "grep")
        assert page.locator("details.call:visible").count() == 1
        assert page.locator(".filter .dim").inner_text() == "1 of 6 tool calls"
        page.fill(".filter input", "")
        page.select_option(".filter select", "failure")
        assert page.locator("details.call:visible").count() == 1
        page.select_option(".filter select", "")
        page.locator("table.calls a").nth(3).click()  # the table links to each call, which opens
        assert page.locator("details.call").nth(1).evaluate("d => d.open")
        page.click("text=Expand all")
        # nothing wider than the phone: long lines scroll inside their own block
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert view.errors == [] and view.refused == []
    finally:
        view.close()


# Every byte the server sends the page (the app's terminal output) kept as text for the test.
RECORD_SOCKET = """
(() => {
  const Native = window.WebSocket;
  const decoder = new TextDecoder();
  window.__cwText = "";
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", async (event) => {
        const data = event.data;
        if (typeof data === "string") { window.__cwText += data; }
        else if (data instanceof ArrayBuffer) { window.__cwText += decoder.decode(data, {stream: true}); }
        else if (data && data.arrayBuffer) { window.__cwText += decoder.decode(await data.arrayBuffer(), {stream: true}); }
      });
    }
  };
})();
"""
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[P^_][^\x1b]*\x1b\\|\x1b.")


def _screen_text(page) -> str:
    return ANSI.sub("", page.evaluate("window.__cwText"))


def _wait_for(page, predicate, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = _screen_text(page)
        if predicate(text):
            return text
        page.wait_for_timeout(200)
    raise AssertionError(f"the served app never showed it; it drew: {text[-500:]!r}")


def test_serve_shows_the_run_in_a_browser_and_keys_work(browser):
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (pip install '.[web]')")
    with serving(str(SAMPLES / "plain-tools.jsonl")) as port:
        view = Page(browser, re.compile(rf"(http|ws)://127\.0\.0\.1:{port}/"), viewport={"width": 1400, "height": 900})
        try:
            page = view.page
            page.add_init_script(RECORD_SOCKET)
            page.goto(f"http://127.0.0.1:{port}/")
            _wait_for(page, lambda text: "Composer 2.5" in text)  # the run's model, in the header
            assert page.locator("#terminal canvas").count() >= 1  # drawn by xterm.js
            page.evaluate("window.__cwText = ''")
            page.locator(".xterm-helper-textarea").focus()
            page.keyboard.press("?")
            _wait_for(page, lambda text: _help_marker() in text)
            assert view.refused == []  # nothing left the machine (not even a web font)
        finally:
            view.close()


def _help_marker() -> str:
    """A line only the help screen draws: the ``t`` key's description, else the word help."""
    try:
        from cursor_watch.tui.screens.help import KEYS

        return dict(KEYS)["t"]
    except (ImportError, KeyError, TypeError, ValueError):  # the help screen is being redone
        return "help"


def test_serve_page_load_requests_nothing_but_the_local_server(browser):
    """Every request of a page load (documents, scripts, styles, fonts, the
    websocket) goes to the local server; the terminal's font is loaded from it."""
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (pip install '.[web]')")
    with serving(str(SAMPLES / "plain-tools.jsonl")) as port:
        local = re.compile(rf"(http|ws)://127\.0\.0\.1:{port}/")
        view = Page(browser, re.compile(r".*"), viewport={"width": 1200, "height": 800})  # record, refuse nothing
        seen: list[str] = []
        try:
            page = view.page
            page.on("request", lambda r: seen.append(r.url))
            page.on("websocket", lambda ws: seen.append(ws.url))
            page.add_init_script(RECORD_SOCKET)
            page.goto(f"http://127.0.0.1:{port}/", wait_until="load")
            _wait_for(page, lambda text: "Composer 2.5" in text)
            page.wait_for_load_state("networkidle")
            assert seen and [url for url in seen if not local.match(url)] == []
            assert any(url.endswith("/static/fonts/RobotoMono-VariableFont_wght.ttf") for url in seen)
            assert page.evaluate("document.fonts.check(\"16px 'Roboto Mono'\")")
            assert page.evaluate("[...document.fonts].some(f => f.family.includes('Roboto Mono') && f.status == 'loaded')")
            assert view.errors == []
        finally:
            view.close()


@pytest.mark.parametrize("redact", [True, False], ids=["redacted", "no-redact"])
def test_serve_shows_no_secret_unless_no_redact(browser, tmp_path, redact):
    """The served page (the run screen, then a tool call's detail: a printed
    .env file) never receives a secret of the hostile stream, not even in a piece; with
    --no-redact the same page shows them."""
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (pip install '.[web]')")
    from fake_secrets import AWS_KEY_ID, GITHUB_CLASSIC, leaks, secret_stream

    path = tmp_path / "secrets.jsonl"
    path.write_bytes(secret_stream())
    with serving(str(path), *([] if redact else ["--no-redact"])) as port:
        view = Page(browser, re.compile(rf"(http|ws)://127\.0\.0\.1:{port}/"), viewport={"width": 1600, "height": 1000})
        try:
            page = view.page
            page.add_init_script(RECORD_SOCKET)
            page.goto(f"http://127.0.0.1:{port}/")
            _wait_for(page, lambda text: "Deploy the shop" in text and "git push origin main" in text)
            page.locator(".xterm-helper-textarea").focus()
            page.keyboard.press("Home")  # the first tool call ...
            page.keyboard.press("Enter")  # ... its detail: cat .env
            text = _wait_for(page, lambda text: "DATABASE_URL" in text)
            if redact:
                assert leaks(text) == []
                assert "[redacted: GitHub Token]" in text and "[redacted: AWS Access Key]" in text
            else:
                assert {GITHUB_CLASSIC, AWS_KEY_ID} <= set(leaks(text)) and "[redacted" not in text
        finally:
            view.close()
