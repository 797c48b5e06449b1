"""Keys and wording: Ctrl+C ends the app, ``e`` never overwrites, the footer offers
only what exists and says where every key is, and the words are right (plurals, one line per
rejection, counts)."""

from __future__ import annotations

import os
import stat

import orjson

from apphelpers import make_app, wait_ticks, wait_until
from captures import REJECTED, need
from conftest import SAMPLES
from cursor_watch.output import write_private_new
from cursor_watch.stream.sources import FileSource

SIZE = (160, 48)


def ev(**kw) -> bytes:
    kw.setdefault("session_id", "resumed-1")
    return orjson.dumps(kw) + b"\n"


def a_run(text: str, t0: int) -> bytes:
    return (ev(type="system", subtype="init", model="Composer 2.5", cwd="/w", timestamp_ms=t0)
            + ev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": text}]},
                 timestamp_ms=t0 + 10)
            + ev(type="result", subtype="success", is_error=False, duration_ms=10, result=text, timestamp_ms=t0 + 20))


# -- item 9: Ctrl+C, and the footer -----------------------------------------------------------------

async def test_ctrl_c_ends_the_app_with_sigint_status():
    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("ctrl+c")
        await wait_exit(pilot, app)  # the key was handled: it quit, not (Textual's own) told to press ctrl+q
    assert app.return_code == 130
    assert not any("ctrl+q" in n.message for n in app._notifications)


async def test_ctrl_c_in_the_search_bar_ends_the_app_too():
    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("slash", "p", "y")
        await pilot.press("ctrl+c")
        await wait_exit(pilot, app)
    assert app.return_code == 130


async def wait_exit(pilot, app) -> None:
    """Wait until the app has begun to exit (its return code is set)."""
    await wait_until(pilot, lambda: app.return_code is not None or not app.is_running)


def footer_keys(screen) -> dict[str, str]:
    """The footer's key -> description, as drawn."""
    keys = {}
    for key in screen.query("FooterKey"):
        keys[key.key_display or key.key] = key.description
    return keys


async def test_escape_runs_is_in_the_footer_only_when_there_are_runs_to_go_back_to(tmp_path):
    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and {"e", "q"} <= footer_keys(app.screen).keys())
        keys = footer_keys(app.screen)  # the run view's footer is drawn: Escape would be in it by now
        assert "Runs" not in keys.values() and "e" in keys and "q" in keys
        # escape still clears a search
        await pilot.press("slash", "p", "y", "enter")
        await wait_until(pilot, lambda: app.run_view().search is not None)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.run_view().search is None)
        assert app.run_view() is app.screen
    for name in ("plain-tools", "partial-output"):
        (tmp_path / f"{name}.jsonl").write_bytes((SAMPLES / f"{name}.jsonl").read_bytes())
    app = make_app([FileSource(str(tmp_path / "plain-tools.jsonl")), FileSource(str(tmp_path / "partial-output.jsonl"))])
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.run_view() is not None and footer_keys(app.screen).get("esc") == "Runs")


# -- item 10: e never overwrites -----------------------------------------------------------------------

async def test_e_twice_and_on_a_resumed_run_writes_new_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "resume.jsonl"  # a run and its --resume: one session id, two runs
    log.write_bytes(a_run("first run", 1_790_000_000_000) + a_run("after --resume", 1_790_000_100_000))
    app = make_app(FileSource(str(log)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.all_runs()) == 2)
        first, second = app.all_runs()
        app.open_run(first)
        await wait_until(pilot, lambda: app.shown_run is first)
        base = tmp_path / "cursor-watch-resumed-1.html"
        base.write_text("a file someone keeps")
        await pilot.press("e")
        await wait_until(pilot, lambda: (tmp_path / "cursor-watch-resumed-1-2.html").exists())
        await pilot.press("e")
        await wait_until(pilot, lambda: (tmp_path / "cursor-watch-resumed-1-3.html").exists())
        app.open_run(second, replace=True)
        await wait_until(pilot, lambda: app.shown_run is second)
        await pilot.press("e")
        await wait_until(pilot, lambda: (tmp_path / "cursor-watch-resumed-1-4.html").exists())
        notices = [n.message for n in app._notifications if "Exported to" in n.message]
    assert base.read_text() == "a file someone keeps"
    assert notices[-3:] == [f"Exported to {tmp_path}/cursor-watch-resumed-1-{n}.html" for n in (2, 3, 4)]
    assert "first run" in (tmp_path / "cursor-watch-resumed-1-2.html").read_text()
    assert "after --resume" in (tmp_path / "cursor-watch-resumed-1-4.html").read_text()


def test_write_private_new_takes_the_next_free_name(tmp_path):
    path = str(tmp_path / "x.html")
    names = [write_private_new(path, lambda f: f.write(b"%d" % n)) for n in range(3)]
    assert names == [path, str(tmp_path / "x-2.html"), str(tmp_path / "x-3.html")]
    assert [open(n, "rb").read() for n in names] == [b"0", b"1", b"2"]
    assert all(stat.S_IMODE(os.stat(n).st_mode) == 0o600 for n in names)
    assert sorted(os.listdir(tmp_path)) == ["x-2.html", "x-3.html", "x.html"]  # no temporary file left


# -- item 11: the light theme has no dark bands ---------------------------------------------------------

def _dark_cells(widget) -> list[tuple[int, str]]:
    """``(line, text)`` of every cell run the widget draws on a dark background (luminance < 0.35)."""
    out = []
    for y in range(widget.scrollable_content_region.height):
        for seg in widget.render_line(y):
            bg = seg.style.bgcolor if seg.style is not None else None
            if bg is None or not seg.text.strip():
                continue
            r, g, b = bg.get_truecolor()
            if (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255 < 0.35:
                out.append((y, seg.text))
    return out


async def test_the_light_theme_has_no_dark_bands():
    from cursor_watch.tui.widgets.tool_table import ToolTable
    from cursor_watch.tui.widgets.transcript import Transcript

    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))  # inline code, thinking, a prompt, rows
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        view = app.run_view()
        transcript, table = view.query_one(Transcript), view.query_one(ToolTable)
        transcript.scroll_home(animate=False)
        # the dark theme draws inline code on black: the check can see it
        await wait_until(pilot, lambda: transcript.scroll_y == 0 and _dark_cells(transcript))
        app.theme = "textual-light"  # as from the command palette, after everything was drawn
        await wait_until(pilot, lambda: _dark_cells(transcript) == [] and _dark_cells(table) == [],
                         what="no dark cells in the light theme")
        await wait_ticks(pilot, app)  # and it stays so
        assert _dark_cells(transcript) == [] and _dark_cells(table) == []


# -- item 11: wording -------------------------------------------------------------------------------------

def test_plurals_and_tool_call_counts():
    from cursor_watch.fmt import plural, tool_calls_phrase

    assert [plural(n, "event") for n in (0, 1, 2, 1234)] == ["0 events", "1 event", "2 events", "1,234 events"]
    assert plural(1, "earlier entry", "earlier entries") == "1 earlier entry"
    assert tool_calls_phrase(3, {"success": 2, "failure": 1, "rejected": 0}) == "3 tool calls (2 success, 1 failed)"
    assert tool_calls_phrase(1, {"running": 1}) == "1 tool call (1 running)"
    assert tool_calls_phrase(0, {}) == "0 tool calls"


def probe_capture():
    import pytest

    from conftest import REAL_DIR

    path = REAL_DIR / "dungle-scrubs__harness-cli-normalizer__test__fixtures__cursor-2026.09.15-d2fe57e__probe-15s.ndjson"
    if not path.exists():
        pytest.skip(f"real captures not found at {REAL_DIR}")
    return path


def test_a_rejection_says_its_reason_once_in_plain_and_the_exports(tmp_path):
    import subprocess
    import sys

    from cursor_watch.views.export import export_runs
    from replays import watch_runs

    path = probe_capture()  # webFetch rejected through an interaction_query: "User Rejected"
    env = dict(os.environ, CURSOR_WATCH_NO_TUI="1", NO_COLOR="1")
    out = subprocess.run([sys.executable, "-m", "cursor_watch", "--plain", str(path)], capture_output=True, text=True,
                         env=env).stdout
    assert out.count("User Rejected") == 1, out
    assert "· webFetch response: rejected (User Rejected)" in out
    assert "⊘ [3] webFetch  https://example.com  rejected  241 ms" in out
    assert "3 tool calls (3 rejected)" in out
    runs = watch_runs(path)
    export_runs(str(tmp_path / "run.md"), runs)
    md = (tmp_path / "run.md").read_text()
    call3 = md.split('<a id="r1-c3"></a>')[1].split("</details>")[0]
    assert call3.count("User Rejected") == 1, call3
    assert "**approval**: `webFetch response: rejected`" in call3
    for n in (1, 2):  # rejected with an empty reason: the status says it, no "outcome: rejected / outcome" pair
        call = md.split(f'<a id="r1-c{n}"></a>')[1].split("</details>")[0]
        assert "outcome: rejected" not in call and "⊘ rejected" in call
    assert "| **tool calls** | `3 tool calls (3 rejected)` |" in md


async def test_a_rejection_says_its_reason_once_in_the_tui():
    from cursor_watch.tui.widgets.transcript import Transcript

    app = make_app(FileSource(str(probe_capture())))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        text = app.run_view().query_one(Transcript).rendered_text()
        assert text.count("User Rejected") == 1, text


async def test_one_event_is_one_event(tmp_path):
    from apphelpers import text_of
    from cursor_watch.tui.widgets.header import SessionHeader

    path = tmp_path / "init-only.jsonl"
    path.write_bytes(ev(type="system", subtype="init", model="Composer 2.5", cwd="/w", timestamp_ms=1_790_000_000_000))
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and "event" in text_of(app.run_view().query_one(SessionHeader)))
        header = text_of(app.run_view().query_one(SessionHeader))
        assert "1 event " in header or header.rstrip().endswith("1 event") or "1 event ·" in header, header
        assert "1 events" not in header


async def test_quit_and_help_are_on_screen_in_the_footer_at_80_columns():
    """The footer lists a screen's keys first and cuts the rest: at 80x24 (stacked panes) a new
    user still sees how to quit, where the help is and how to swap the stacked panes (they were
    cut after 'x' before)."""
    from textual.widgets._footer import FooterKey

    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=(80, 24)) as pilot:
        shown: dict = {}

        def stacked_footer_drawn() -> bool:
            """The footer of the stacked panes is laid out (it is composed again once the screen
            knows it is stacked: ``s`` is in it from then on); its keys' regions, kept."""
            keys = {k.key_display or k.key: k.region for k in app.screen.query(FooterKey)}
            if not (app.ended and "s" in keys and any(region.width > 0 for region in keys.values())):
                return False
            shown.clear()
            shown.update(keys)
            return True

        await wait_until(pilot, stacked_footer_drawn, what="the stacked footer, 's' in it, laid out")
        for key in ("q", "?", "s"):  # s swaps the stacked panes: the narrow terminal's own key
            assert key in shown, list(shown)
            region = shown[key]
            assert region.width > 0 and region.right <= 80 - len("^p palette"), (key, region)


# -- the footer says where every key is ------------------------------------------------------------

async def test_footer_at_80_columns_shows_where_every_key_is():
    from textual.widgets._footer import FooterKey

    from apphelpers import make_app, wait_until
    from cursor_watch.tui.screens.help import FIND_KEYS, KEYS
    from cursor_watch.stream.sources import FileSource

    need(REJECTED)
    app = make_app(FileSource(str(REJECTED)))
    async with app.run_test(size=(80, 24)) as pilot:
        # the footer of the stacked panes, laid out (it is composed again once the screen knows it
        # is stacked: 's' is in it from then on)
        def footer_drawn() -> bool:
            keys = list(app.screen.query(FooterKey))
            return "s" in {k.key_display or k.key for k in keys} and any(k.region.width for k in keys)

        await wait_until(pilot, lambda: app.ended and footer_drawn())
        shown = [k for k in app.screen.query(FooterKey) if k.region.width and k.region.right <= 80]
        labels = [str(k.description) for k in shown]
        assert "All keys" in labels, labels  # on screen at 80 columns, saying what it opens
        helped = " ".join(k for k, _ in KEYS + FIND_KEYS)
        for binding in app.screen.BINDINGS:
            key = {"question_mark": "?", "slash": "/", "left_square_bracket": "[", "right_square_bracket": "]",
                   "escape": "Escape"}.get(binding.key, binding.key)
            assert key in helped, key  # every key of the run screen is in the help
