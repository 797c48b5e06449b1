"""`--plain` and `--summary --json` print exactly the stored bytes on every real capture and sample.

The expectations in ``tests/expected/`` were written by the code before the plain printer and the
model were made faster: a speed-up must not change one byte. Regenerate them only for an
intended change of output, and say so in the commit:
``CURSOR_WATCH_UPDATE_EXPECTED=1 python -m pytest tests/unit/views/test_expected_output.py``.

Each stream runs in every mode twice over: off a terminal (no colour, as in a pipe or CI) and with
colour forced the way Rich decides it (``FORCE_COLOR=1`` makes it treat stdout as a terminal,
``TERM=xterm-256color`` picks the colour system), so the SGR sequences are pinned too; once more
with ``NO_COLOR`` on that forced terminal (Rich then keeps bold, dim and italic but drops colours).
``tests/streams/hostile-text.jsonl`` holds what is hardest to render the same way: tabs after wide
and combining characters (Rich expands tabs by cell width), control characters and escape
sequences, bidi overrides, line separators, invalid lines, an unknown event, a second run and a
cut last line. Multi-run inputs: two streams concatenated on stdin, two files, a directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REAL_DIR, ROOT, SAMPLES, real_captures

EXPECTED = ROOT / "tests" / "expected"
STREAMS = ROOT / "tests" / "streams"
MODES = {"plain": ["--plain"], "plain-thinking": ["--plain", "--thinking"], "json": ["--summary", "--json"],
         "summary": ["--summary"], "report": ["report", "--json"]}
# the colour decision is Rich's: drop everything it reads, then set what each case wants
_RICH_ENV = ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM", "COLORTERM", "TTY_COMPATIBLE",
             "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES")
ENV = {k: v for k, v in os.environ.items() if k not in _RICH_ENV}
ENV |= {"CURSOR_WATCH_NO_TUI": "1", "COLUMNS": "120", "TERM": "dumb", "TZ": "UTC"}  # (a rate limit's reset: local time)
ENV_COLOR = ENV | {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
ENV_NO_COLOR_TTY = ENV_COLOR | {"NO_COLOR": "1"}
# expectation suffix -> (arguments, environment)
VARIANTS = {mode: (args, ENV) for mode, args in MODES.items()}
VARIANTS |= {"color-plain": (MODES["plain"], ENV_COLOR), "color-plain-thinking": (MODES["plain-thinking"], ENV_COLOR),
             "color-summary": (MODES["summary"], ENV_COLOR), "color-json": (MODES["json"], ENV_COLOR),
             "nocolor-tty-plain-thinking": (MODES["plain-thinking"], ENV_NO_COLOR_TTY),
             "nocolor-tty-summary": (MODES["summary"], ENV_NO_COLOR_TTY)}
MULTI_VARIANTS = ("plain", "plain-thinking", "json", "summary", "color-plain", "color-summary")
UPDATE = bool(os.environ.get("CURSOR_WATCH_UPDATE_EXPECTED"))

_SKIP_REAL = pytest.mark.skip(reason=f"real captures not found at {REAL_DIR} (a user's clone has none)")


def _real(name: str) -> Path:
    return REAL_DIR / name


def cases():
    streams = [("sample", p) for p in sorted(SAMPLES.glob("*.jsonl"))]
    streams += [("hostile", p) for p in sorted(STREAMS.glob("*.jsonl"))]
    real = real_captures()
    streams += [("real", p) for p in real]
    out = [pytest.param(p, variant, id=f"{kind}-{p.name[:40]}-{variant}") for kind, p in streams for variant in VARIANTS]
    if not real:
        out.append(pytest.param(None, None, marks=_SKIP_REAL))
    return out


def _check(name: str, variant: str, files: list[str], stdin: bytes | None = None) -> None:
    args, env = VARIANTS[variant]
    p = subprocess.run([sys.executable, "-m", "cursor_watch", *args, *files], capture_output=True,
                       input=stdin if stdin is not None else b"", env=env, cwd=ROOT, timeout=60)
    got = p.stdout + f"\n[exit {p.returncode}]\n".encode()
    want = EXPECTED / f"{name}.{variant}"
    if UPDATE:
        want.write_bytes(got)
    assert want.exists(), f"no stored expectation {want.name}: run with CURSOR_WATCH_UPDATE_EXPECTED=1"
    assert got == want.read_bytes()


@pytest.mark.parametrize("path,variant", cases())
def test_output_is_byte_for_byte_the_stored_one(path: Path, variant: str):
    # relative to the repository: a file of several runs prints its path (and a clone can be anywhere)
    _check(path.name, variant, [os.path.relpath(path, ROOT)])


# several runs: (name, files given as arguments (relative to the repository: they are printed),
# streams concatenated on stdin, needs the real captures)
SHELL_CALL = "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__02_shell_tool_call.jsonl"
DSH = "cagase__dsh-cursor__fixtures__live__stream-json-force.jsonl"
REJECTED = "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__05_rejected_shell.jsonl"
PARALLEL = "reifying__cursor-hack__experiments__parallel-sleep.jsonl"
MULTI = [
    ("multi-concat-samples", [], ["plain-tools.jsonl", "partial-interaction.jsonl", "failed-no-result.jsonl"], False),
    ("multi-concat-real", [], [SHELL_CALL, DSH], True),
    ("multi-files-samples", ["sample_streams/plain-tools.jsonl", "sample_streams/failed-no-result.jsonl"], [], False),
    ("multi-files-real", [os.path.relpath(_real(REJECTED), ROOT), os.path.relpath(_real(PARALLEL), ROOT)], [], True),
    ("multi-dir-samples", ["sample_streams"], [], False),
]


def multi_cases():
    out = []
    for name, files, concat, real in MULTI:
        for variant in MULTI_VARIANTS:
            marks = [_SKIP_REAL] if real and not real_captures() else []
            out.append(pytest.param(name, files, concat, real, variant, id=f"{name}-{variant}", marks=marks))
    return out


@pytest.mark.parametrize("name,files,concat,real,variant", multi_cases())
def test_several_runs_are_byte_for_byte_the_stored_ones(name: str, files: list[str], concat: list[str], real: bool,
                                                         variant: str):
    stdin = None
    if concat:
        base = REAL_DIR if real else SAMPLES
        stdin = b"".join((base / f).read_bytes() for f in concat)
    _check(name, variant, files, stdin)
