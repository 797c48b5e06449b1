"""Shared test helpers: paths to real captures and samples, and a model runner."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import orjson
import pytest

# a config directory of the tests' own: a user's prices.toml (cursor_watch.costs) never changes a result
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="cursor-watch-test-config-")

from cursor_watch.runner import Monitor

ROOT = Path(__file__).resolve().parent.parent
REAL_DIR = ROOT.parent / "shared" / "streams" / "real"
SAMPLES = ROOT / "sample_streams"
# A trimmed, hand-edited fixture: its result text ("done") was written by hand and
# does not match the assistant events (see shared/streams/real/README.md).
EDITED_FIXTURES = {"reifying__cursor-hack__internal__events__testdata__full_session.jsonl"}


def real_captures() -> list[Path]:
    """Real captures from ../shared/streams/real/ (empty when the folder is absent)."""
    if not REAL_DIR.is_dir():
        return []
    return sorted(p for p in REAL_DIR.iterdir() if p.suffix in (".jsonl", ".ndjson"))


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


def wait_opened(pid: int, path, timeout: float = 30.0) -> None:
    """Wait until process ``pid`` has ``path`` open (a followed file: the watch is reading it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd")):
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the watch never opened {path}")
