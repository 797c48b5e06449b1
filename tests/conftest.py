"""Shared test helpers: paths to real captures and samples, a model runner, waits for a
condition, and what a test needs from the machine (a tool, a backend): skipped with the reason
on a developer's machine, a failure in CI (``CI=true``)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import TypeVar
from pathlib import Path

import orjson
import pytest

# the tests' helpers (app and web helpers, fake agents, stream generators) and their streams live in
# tests/fixtures/: importable by name from every test folder
sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

# a config directory of the tests' own: a user's prices.toml (cursor_watch.core.costs) never changes a result
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="cursor-watch-test-config-")

from cursor_watch.stream.watch import Monitor

ROOT = Path(__file__).resolve().parent.parent
REAL_DIR = ROOT.parent / "shared" / "streams" / "real"
AGENTS_DIR = ROOT.parent / "shared" / "streams" / "agents"
READ_AGENTS = ("claude", "codex", "cursor", "gemini")
"""The folders of ``AGENTS_DIR`` whose agents cursor-watch reads; the others (OpenCode, Antigravity)
wait for their adapters, and their captures are no agent's stream to cursor-watch yet."""
SAMPLES = ROOT / "sample_streams"
# A trimmed, hand-edited fixture: its result text ("done") was written by hand and
# does not match the assistant events (see shared/streams/real/README.md).
EDITED_FIXTURES = {"reifying__cursor-hack__internal__events__testdata__full_session.jsonl"}

# -- what a test needs from the machine ------------------------------------------------------------

IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
"""``CI`` set (``CI=true``, as GitHub Actions and ``.ci/run``'s callers set it): a test that needs
a tool or backend the machine lacks fails instead of skipping (``.ci/run`` installs them)."""


def need(available: object, reason: str) -> None:
    """Go on when ``available`` is true; else skip the test with ``reason`` (a developer's
    machine without the tool) or, under ``CI=true``, fail it with ``reason`` (CI must run it)."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"{reason}; CI=true: a test that needs it may not skip", pytrace=False)
    pytest.skip(reason)


def need_tool(name: str, install: str) -> str:
    """The path of command ``name`` (:func:`need`: skip, or fail under ``CI=true``, without it);
    ``install`` says how to get it (``apt-get install tmux``)."""
    path = shutil.which(name)
    need(path, f"{name} is not installed ({install})")
    return path


def _chromium() -> str | None:
    from webhelpers import CHROMIUM

    return CHROMIUM


def _phoenix() -> str | None:
    local = os.path.join(os.path.dirname(sys.executable), "phoenix")
    return local if os.access(local, os.X_OK) else shutil.which("phoenix")


# marker -> (what is missing, or None when everything is there). A test with one of these markers
# runs only with its backend: conftest checks before it starts (pytest_runtest_setup), and under
# CI=true any skip of such a test, whatever raised it, is reported as a failure.
BACKENDS: dict[str, Callable[[], str | None]] = {
    "e2e": lambda: None if shutil.which("tmux") else "tmux is not installed (Debian: apt-get install tmux)",
    "browser": lambda: ("Chromium not found (Debian: apt-get install chromium)" if _chromium() is None
                        else None if importlib.util.find_spec("playwright") is not None
                        else "Playwright for Python is not installed (pip install '.[test]')"),
    "phoenix": lambda: None if _phoenix() else "arize-phoenix is not installed (pip install '.[test]' installs it)",
    "prometheus": lambda: None if shutil.which("prometheus") else
    "prometheus is not installed (Debian: apt-get install prometheus)",
}


# -- which build is tested (the suite runs on the compiled install and on the pure source) --

TEST_BUILD = os.environ.get("CURSOR_WATCH_TEST_BUILD", "")
"""``compiled`` or ``pure``: the build this run must test (README's test command sets it for each of
its two runs); a run that would test the other one stops before it starts. Unset: either."""


# The pure run (CURSOR_WATCH_TEST_BUILD=pure, after the whole suite ran on the compiled install) runs
# these: every module imported and the two builds compared (test_build), every expected output, and
# the tests of the compiled modules themselves (model, decoding, adapters, spill, properties, faults)
PURE_RUN = {
    "test_build.py", "test_expected_output.py", "test_agents.py", "test_shapes_from_cli_source.py", "test_canonical.py",
    "test_model.py", "test_decode.py", "test_framing.py", "test_typed.py", "test_spill.py", "test_properties.py",
    "test_faults.py", "test_payloads.py",
}
# ... but not this one: it runs both builds itself (the wheel and the source tree, on every capture),
# whichever the run imports, and the compiled run ran it on the same source and the same wheel
PURE_RUN_LEAVES = {("test_build.py", "test_outputs_identical_compiled_and_pure")}
# ... and these tests of other files: times never invented, runs that end without a result, and text
# shown as the stream holds it (the model's output through every view, on the pure source too)
PURE_RUN_TESTS = {
    ("test_app.py", "test_a_replayed_file_that_stops_after_init_never_ticks"),
    ("test_app.py", "test_tool_table_says_a_replayed_duration_is_unknown"),
    ("test_detail_app.py", "test_crlf_and_progress_output_in_the_detail"),
    ("test_detail_app.py", "test_mcp_tool_listing_is_shown_decoded_with_the_raw_form_one_key_away"),
    ("test_detail_app.py", "test_plan_renders_as_markdown_and_mcp_json_is_decoded_in_the_detail"),
    ("test_diagnostics_app.py", "test_diagnostics_pane_lists_rejected_lines_of_a_text_only_stream"),
    ("test_export.py", "test_a_reason_of_several_lines_in_the_markdown_export"),
    ("test_export.py", "test_crlf_and_progress_output_in_the_exports"),
    ("test_export.py", "test_mcp_tool_listing_in_the_exports"),
    ("test_export.py", "test_plan_in_the_exports_is_markdown"),
    ("test_plain.py", "test_a_run_without_a_result_shows_its_recorded_span_outside_the_tui"),
    ("test_plain.py", "test_a_run_without_times_says_so_outside_the_tui"),
    ("test_runs.py", "test_a_child_killed_by_a_signal_is_the_reason"),
    ("test_runs.py", "test_a_new_run_is_the_reason_a_run_ended"),
    ("test_runs.py", "test_a_timestamp_no_date_has_is_named_not_a_crash"),
    ("test_runs.py", "test_crew_capture_without_init_or_result_says_so"),
    ("test_runs.py", "test_cut_real_capture_names_its_last_event_and_time"),
    ("test_runs.py", "test_elapsed_rules"),
    ("test_runs.py", "test_empty_input_and_text_only_input_say_so"),
    ("test_runs.py", "test_init_only_real_capture_says_it_ended_without_a_result_in_plain_and_summary"),
    ("test_runs.py", "test_strip_escapes"),
    ("test_runs.py", "test_the_first_bad_line_is_quoted_without_its_byte_order_mark"),
    ("test_runs.py", "test_truncation_ends_the_cut_run_and_starts_a_new_one"),
    ("test_runs_app.py", "test_followed_file_truncated_and_rewritten_is_announced_as_a_restart"),
    ("test_runs_app.py", "test_followed_old_capture_shows_no_live_age"),
    ("test_runs_app.py", "test_local_time_shows_the_year_for_other_years"),
    ("test_runs_app.py", "test_runs_list_started_is_recorded_or_the_files_time_marked"),
    ("test_safe.py", "test_fold_cr_keeps_what_a_terminal_would_show"),
    ("test_sources.py", "test_paced_replay_progress_follows_the_replay_clock"),
    ("test_summary.py", "test_replayed_calls_without_times_have_no_invented_durations"),
    ("test_transcript.py", "test_each_line_of_the_agent_text_stays_a_line"),
    ("test_transcript.py", "test_html_looking_text_is_shown_as_written"),
    ("test_transcript.py", "test_property_every_character_of_the_source_is_drawn"),
    ("test_transcript.py", "test_transcript_shows_angle_brackets_from_a_stream"),
}


def pytest_collection_modifyitems(config, items) -> None:
    if TEST_BUILD != "pure":
        return
    def pure(item) -> bool:
        key = (item.path.name, getattr(item, "originalname", item.name))
        return key not in PURE_RUN_LEAVES and (item.path.name in PURE_RUN or key in PURE_RUN_TESTS)

    keep = [item for item in items if pure(item)]
    config.hook.pytest_deselected(items=[item for item in items if not pure(item)])
    items[:] = keep


def pytest_report_header(config) -> str:
    import cursor_watch
    from cursor_watch.buildinfo import describe

    return f"cursor-watch: {describe()}, from {Path(cursor_watch.__file__).parent}"


def pytest_sessionstart(session) -> None:
    from cursor_watch.buildinfo import build_kind, describe

    if TEST_BUILD and build_kind() != TEST_BUILD:
        raise pytest.UsageError(f"CURSOR_WATCH_TEST_BUILD={TEST_BUILD}, but the cursor_watch imported is "
                                f"{describe()} (the compiled run imports the installed package: PYTHONSAFEPATH=1 "
                                "keeps the source tree off sys.path)")


def pytest_configure(config) -> None:
    for marker, text in (("e2e", "end-to-end: the real command in tmux (needs tmux)"),
                         ("browser", "drives Debian's Chromium through Playwright (needs both)"),
                         ("phoenix", "sends to a real Arize Phoenix it starts (needs arize-phoenix)"),
                         ("prometheus", "scraped by a real Prometheus it starts (needs prometheus)")):
        config.addinivalue_line("markers", f"{marker}: {text}; skips without it, fails under CI=true")


def pytest_runtest_setup(item) -> None:
    for mark in item.iter_markers():
        if mark.name in BACKENDS:
            missing = BACKENDS[mark.name]()
            need(missing is None, missing or "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        backends = sorted({m.name for m in item.iter_markers() if m.name in BACKENDS})
        if backends:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            report.outcome = "failed"
            report.longrepr = f"skipped under CI=true, but it needs {', '.join(backends)}: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Under CI=true a test module skipped as a whole (a module-level importorskip: an extra the
    [test] install should have brought) is a collection error, not a quiet skip."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and isinstance(collector, pytest.Module):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"{collector.nodeid} skipped as a whole under CI=true: {reason}"


# -- waiting for a condition ------------------------------------------------------------------------

T = TypeVar("T")
WAIT_S = 30.0
"""The bound of every wait for a condition: generous, so a loaded machine only makes a test slower."""


def wait_for(predicate: Callable[[], T], what: str, timeout: float = WAIT_S, interval: float = 0.02) -> T:
    """Poll ``predicate`` until it returns a true value (returned) or ``timeout`` seconds pass.

    Raises:
        AssertionError: ``timed out after N s waiting for WHAT``; ``what`` may be a callable
            returning the text (to show the state at the timeout).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            text = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:g} s waiting for {text}")
        time.sleep(interval)


async def wait_for_async(predicate: Callable[[], T], what, timeout: float = WAIT_S, interval: float = 0.02) -> T:
    """:func:`wait_for` inside an event loop: polls with ``asyncio.sleep`` so the watch under test runs."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            text = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:g} s waiting for {text}")
        await asyncio.sleep(interval)


def gone(pid: int) -> bool:
    """Process ``pid`` no longer runs (a zombie left to an init that doesn't reap counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def read_position(pid: int, path) -> int | None:
    """The offset process ``pid`` has read ``path`` up to (its open descriptor's position, from
    /proc/PID/fdinfo), or None when it doesn't have the file open."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    return int(next(line for line in f if line.startswith("pos:")).split()[1])
    except (OSError, StopIteration):
        pass
    return None


def wait_read_to_end(pid: int, path, timeout: float = WAIT_S) -> None:
    """Wait until process ``pid`` has read ``path`` up to its current size (a followed file's
    bytes are all in the watch now)."""
    size = os.path.getsize(path)
    wait_for(lambda: read_position(pid, path) == size,
             lambda: f"the watch to read {path} to its end ({size} bytes; at {read_position(pid, path)})", timeout)


def real_captures() -> list[Path]:
    """Real captures from ../shared/streams/real/ (empty when the folder is absent)."""
    if not REAL_DIR.is_dir():
        return []
    return sorted(p for p in REAL_DIR.iterdir() if p.suffix in (".jsonl", ".ndjson"))


def agent_captures() -> list[Path]:
    """Real captures of the agents cursor-watch reads, from ../shared/streams/agents/<agent>/
    (:data:`READ_AGENTS`; empty when the folder is absent), sorted by agent, then name."""
    if not AGENTS_DIR.is_dir():
        return []
    return sorted(p for agent in READ_AGENTS for p in (AGENTS_DIR / agent).glob("*")
                  if p.suffix in (".jsonl", ".ndjson"))


def real_params():
    """Parametrize over real captures, or one skipped case saying why."""
    caps = real_captures()
    if not caps:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"real captures not found at {REAL_DIR} (a user's clone has none)"))]
    return [pytest.param(p, id=p.name[:60]) for p in caps]


def native_objects(path: Path) -> list[dict]:
    """The JSON objects of a stream file, one per line that is one (what the agent wrote)."""
    out = []
    for line in path.read_bytes().splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def run_bytes(data: bytes, chunk: int | None = None) -> Monitor:
    """Feed ``data`` (optionally in ``chunk``-byte pieces) through a Monitor and finish it."""
    mon = Monitor(clock=lambda: 1_000_000.0)
    if chunk is None:
        mon.feed(data)
    else:
        for i in range(0, len(data), chunk):
            mon.feed(data[i : i + chunk])
    mon.finish()
    return mon


def run_file(path: Path, chunk: int | None = None) -> Monitor:
    """:func:`run_bytes` on a file's bytes."""
    return run_bytes(path.read_bytes(), chunk)


def expected_exit(data: bytes) -> int:
    """The README's exit status for a stream read whole (no child, no signal): 0 when it holds
    runs and every one ended with a successful ``result``, else 1."""
    runs = run_bytes(data).runs
    return 0 if runs and all(run.session.status == "success" for run in runs) else 1


def wait_opened(pid: int, path, timeout: float = WAIT_S) -> None:
    """Wait until process ``pid`` has ``path`` open (a followed file: the watch is reading it)."""
    wait_for(lambda: read_position(pid, path) is not None, f"the watch to open {path}", timeout, 0.05)


class Watcher:
    """A command (``cursor-watch`` mostly) running in the background, its stdout and stderr
    collected live by two threads: :meth:`wait_for` waits until a text is on its stdout."""

    def __init__(self, argv: list[str], env: dict | None = None, stdin=subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     cwd=ROOT)
        self.out = bytearray()
        self.err = bytearray()
        self._threads = [threading.Thread(target=self._pump, args=(self.proc.stdout, self.out), daemon=True),
                         threading.Thread(target=self._pump, args=(self.proc.stderr, self.err), daemon=True)]
        for t in self._threads:
            t.start()

    @staticmethod
    def _pump(stream, buf: bytearray) -> None:
        while chunk := stream.read1(65536):
            buf.extend(chunk)

    def text(self) -> str:
        return bytes(self.out).decode("utf-8", "replace")

    def wait_for(self, needle: str, timeout: float = WAIT_S, count: int = 1) -> None:
        """Wait until ``needle`` is on stdout ``count`` times (AssertionError with both outputs when not)."""
        wait_for(lambda: self.text().count(needle) >= count,
                 lambda: f"{needle!r} in the output; got:\n{self.text()[-3000:]}\nstderr: {bytes(self.err)[-2000:]!r}",
                 timeout)

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def finish(self, timeout: float = WAIT_S) -> int:
        """Wait for the exit (its status) and for both outputs to be read to their end."""
        code = self.proc.wait(timeout=timeout)
        for t in self._threads:
            t.join(timeout=10)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
