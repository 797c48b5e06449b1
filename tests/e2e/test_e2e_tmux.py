"""End to end: the real command in tmux (160x48 unless a test says otherwise; the narrow sizes add
200x60, 80x24 and 60x20), read with capture-pane, driven by keys."""

from __future__ import annotations

import os
import shlex
import time

import pytest

from conftest import ROOT, SAMPLES, gone, wait_for
from tmux import PY, Tmux, python_pids

pytestmark = pytest.mark.e2e  # needs tmux: skipped without it, a failure under CI=true (conftest.BACKENDS)


SIZES = [(200, 60), (80, 24), (60, 20)]  # wide, the classic terminal, a narrow split


@pytest.fixture
def tmux_factory():
    sessions = []

    def make(command: str, size: tuple[int, int] = (160, 48)) -> Tmux:
        t = Tmux(command, size)
        sessions.append(t)
        return t

    yield make
    for t in sessions:
        t.close()



@pytest.mark.parametrize("size", [(160, 48), *SIZES], ids=lambda s: f"{s[0]}x{s[1]}")
def test_pipe_into_the_tui(tmux_factory, size):
    sample = shlex.quote(str(SAMPLES / "plain-tools.jsonl"))
    t = tmux_factory(f"cat {sample} | {PY} -m cursor_watch", size)
    t.wait_for("success")
    t.wait_for("discounts.")  # the final text (its last word), followed
    screen = t.wait_for("Composer 2.5")
    assert "pytest -q" in screen and "✖ failure" in screen
    assert all(len(line) <= size[0] for line in screen.splitlines())
    t.keys("Home", "Down", "Down", "Enter")  # the failing shell call (the cursor followed to the last row)
    screen = t.wait_for("command")
    assert "pytest -q" in screen and "exit code" in screen
    t.keys("Escape")
    t.wait_for("⏎ Detail")  # the run view's footer (its end, "q Quit", is cut on narrow terminals)
    assert t.alternate_screen()
    t.keys("q")
    screen = t.wait_for("EXIT=0")
    assert not t.alternate_screen()  # the terminal is restored


def test_spawned_emitter_streams_and_quits(tmux_factory):
    sample = shlex.quote(str(SAMPLES / "parallel-failed-rejected.jsonl"))
    emitter = shlex.quote(str(ROOT / "tests" / "fixtures" / "emitter.py"))
    t = tmux_factory(f"{PY} -m cursor_watch -- {PY} {emitter} {sample} --delay 0.05 --stderr oops --exit 3")
    t.wait_for("streaming")
    screen = t.wait_for("success · exit 3", timeout=30)
    assert "⊘ rejected" in screen and "webSearch" in screen and "⚠" not in screen
    t.keys("d")
    t.wait_for("stderr: oops")
    t.keys("q")
    t.wait_for("EXIT=3")
    assert not t.alternate_screen()


def test_quit_terminates_a_running_child(tmux_factory, tmp_path):
    pidfile = tmp_path / "pid"
    sample = shlex.quote(str(SAMPLES / "failed-no-result.jsonl"))
    child = f"sh -c 'echo $$ > {shlex.quote(str(pidfile))}; head -n 12 {sample}; exec sleep 120'"
    t = tmux_factory(f"{PY} -m cursor_watch -- {child}")
    t.wait_for("running: shell alembic")
    pid = int(pidfile.read_text())
    t.keys("q")
    t.wait_for("EXIT=1")  # no result: 1, and we stopped the child ourselves
    wait_for(lambda: gone(pid), f"the child ({pid}) to be gone")


@pytest.mark.parametrize("sig, code", [("TERM", 143), ("HUP", 129), ("INT", 130)])
def test_signal_to_the_tui_terminates_the_child_and_restores_the_terminal(tmux_factory, tmp_path, sig, code):
    pidfile, saved = tmp_path / "pid", tmp_path / "saved.jsonl"
    sample = SAMPLES / "failed-no-result.jsonl"
    child = f"sh -c 'echo $$ > {shlex.quote(str(pidfile))}; head -n 12 {shlex.quote(str(sample))}; exec sleep 120'"
    t = tmux_factory(f"{PY} -m cursor_watch --save {shlex.quote(str(saved))} -- {child}")
    t.wait_for("running: shell alembic")
    pids = python_pids(f"cursor_watch --save {saved}")
    assert len(pids) == 1, "cursor-watch process not found"
    for pid in pids:
        os.kill(pid, getattr(__import__("signal"), f"SIG{sig}"))
    t.wait_for(f"EXIT={code}")
    assert not t.alternate_screen()
    child_pid = int(pidfile.read_text())
    wait_for(lambda: gone(child_pid), f"the child ({child_pid}) to be gone")
    head = b"".join(sample.read_bytes().splitlines(keepends=True)[:12])
    assert saved.read_bytes() == head


def test_follow_a_directory_of_logs(tmux_factory, tmp_path):
    import re

    names = ["plain-tools", "partial-output", "parallel-failed-rejected"]
    for name in names:
        (tmp_path / f"{name}.jsonl").write_bytes((SAMPLES / f"{name}.jsonl").read_bytes())
    (tmp_path / "notes.txt").write_text("not a log")
    t = tmux_factory(f"{PY} -m cursor_watch -f {shlex.quote(str(tmp_path))}")
    screen = t.wait_for("3 runs in 3 sources")
    for name in names:
        assert (name + ".jsonl")[-14:] in screen  # names are cut in the middle, their end kept
    # a fourth log appears: a row within 2 s
    growing = SAMPLES.joinpath("partial-interaction.jsonl").read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(growing) if b'"type":"result"' in line)
    new = tmp_path / "agent-4.jsonl"
    new.write_bytes(b"".join(growing[:cut]))
    start = time.monotonic()
    screen = t.wait_for("4 runs in 4 sources", timeout=2.5)
    assert time.monotonic() - start <= 2.5
    row = next(line for line in screen.splitlines() if "agent-4.jsonl" in line)
    assert re.search(r"streaming|idle \d+ s", row), row
    # it grows: its result arrives and its row says success
    with new.open("ab") as f:
        f.write(b"".join(growing[cut:]))
    t.wait_screen(lambda screen: any("agent-4.jsonl" in line and "success" in line for line in screen.splitlines()),
                  "agent-4.jsonl's row saying success")
    t.keys("q")
    t.wait_for("EXIT=")
    assert not t.alternate_screen()


CREW = "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl"


def test_search_a_tool_output_and_filter_problems_on_a_real_capture(tmux_factory):
    from conftest import REAL_DIR

    capture = REAL_DIR / CREW
    if not capture.exists():
        pytest.skip(f"real captures not found at {REAL_DIR} (a user's clone has none)")
    t = tmux_factory(f"{PY} -m cursor_watch {shlex.quote(str(capture))}")
    t.wait_for("incomplete")  # crew's capture has neither init nor result
    # a word that appears only in the failing shell call's stderr
    t.keys("/")
    t.wait_for("search the run")
    t.keys("-l", "wrapModuleLoad")  # deep in the stack trace: past the summary line's failure detail
    screen = t.wait_for("1/1")
    assert "/ wrapModuleLoad" in screen
    t.keys("Enter")  # the match is inside a tool call's output: its detail opens at it
    screen = t.wait_for("Esc back")
    assert "npm test" in screen and "wrapModuleLoad" in screen  # the call, scrolled to the match in its stderr
    t.keys("Escape")
    t.wait_for("/ wrapModuleLoad")
    t.keys("x")  # problems only: the failed shell call is the only problem in this capture
    screen = t.wait_for("problems only")
    assert "1 of 10 calls" in screen
    rows = [line.split("│")[-1] for line in screen.splitlines() if "│" in line]
    listed = [r for r in rows if any(s in r for s in ("✔ success", "✖ failure", "⊘ rejected", "… incomplete"))]
    assert listed and all(("failure" in r or "rejected" in r) for r in listed), listed
    t.keys("q")
    t.wait_for("EXIT=")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_real_capture_cut_short_at_every_size(tmux_factory, size):
    """Outcome, why it ended, the newest calls and the file name, at any size."""
    from conftest import REAL_DIR

    capture = REAL_DIR / CREW
    if not capture.exists():
        pytest.skip(f"real captures not found at {REAL_DIR} (a user's clone has none)")
    width, height = size
    t = tmux_factory(f"{PY} -m cursor_watch {shlex.quote(str(capture))}", size)
    screen = t.wait_for("stream ended without a result")
    lines = screen.splitlines()
    assert lines[1].lstrip().startswith("incomplete")  # the header's outcome
    # the file name's distinctive end (at 60 columns the session comes first: its end only)
    assert "tools.jsonl" in lines[0]
    assert "Count math.js lines" in screen  # the newest tool call, in the table
    if width < 100:  # stacked: the transcript above, full width; s gives the tool calls the room
        rule = next(i for i, line in enumerate(lines) if line.startswith("─" * 20))
        before = sum(1 for line in lines[rule:] if "✔ success" in line)
        t.keys("s")

        def rule_of(screen: str) -> int:
            return next((i for i, line in enumerate(screen.splitlines()) if line.startswith("─" * 20)), rule)

        after_lines = t.wait_screen(lambda screen: rule_of(screen) < rule, "the pane rule moved up").splitlines()
        rule2 = rule_of("\n".join(after_lines))
        assert sum(1 for line in after_lines[rule2:] if "✔ success" in line) > before, after_lines
    else:
        assert "│" in screen  # side by side
    t.keys("q")
    t.wait_for("EXIT=1")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_runs_list_at_every_size(tmux_factory, size):
    """The runs list keeps name, state, tool counts and elapsed time."""
    paths = [SAMPLES / "plain-tools.jsonl", SAMPLES / "failed-no-result.jsonl", SAMPLES / "parallel-failed-rejected.jsonl"]
    t = tmux_factory(f"{PY} -m cursor_watch " + " ".join(shlex.quote(str(p)) for p in paths), size)
    rows = (("plain-tools", "success"), ("failed-no-result", "incomplete"), ("parallel-failed-rejected", "success"))

    def row_ok(screen: str, name: str, state: str) -> bool:
        row = next((line for line in screen.splitlines() if (name + ".jsonl")[-10:] in line), "")  # the name's end
        return state in row and "▶0" in row and " s " in row + " "

    # each replay ends in its state: the three rows say so, with their counts and elapsed times
    t.wait_screen(lambda screen: "3 runs in 3 sources" in screen and all(row_ok(screen, *row) for row in rows),
                  "the three runs' rows with their end states, counts and times")
    t.keys("q")
    t.wait_for("EXIT=")
