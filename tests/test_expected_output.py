"""`--plain` and `--summary --json` print exactly the stored bytes on every real capture and sample.

The expectations in ``tests/expected/`` were written by the code before the plain printer and the
model were made faster (issue 10): a speed-up must not change one byte. Regenerate them only for an
intended change of output, and say so in the commit:
``CURSOR_WATCH_UPDATE_EXPECTED=1 python -m pytest tests/test_expected_output.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REAL_DIR, ROOT, SAMPLES, real_captures

EXPECTED = ROOT / "tests" / "expected"
MODES = {"plain": ["--plain"], "plain-thinking": ["--plain", "--thinking"], "json": ["--summary", "--json"],
         "summary": ["--summary"]}
ENV = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
ENV |= {"CURSOR_WATCH_NO_TUI": "1", "COLUMNS": "120"}
UPDATE = bool(os.environ.get("CURSOR_WATCH_UPDATE_EXPECTED"))


def cases():
    streams = [("sample", p) for p in sorted(SAMPLES.glob("*.jsonl"))]
    real = real_captures()
    streams += [("real", p) for p in real]
    out = [pytest.param(p, mode, id=f"{kind}-{p.name[:40]}-{mode}") for kind, p in streams for mode in MODES]
    if not real:
        out.append(pytest.param(None, None, marks=pytest.mark.skip(
            reason=f"real captures not found at {REAL_DIR} (a user's clone has none)")))
    return out


@pytest.mark.parametrize("path,mode", cases())
def test_output_is_byte_for_byte_the_stored_one(path: Path, mode: str):
    p = subprocess.run([sys.executable, "-m", "cursor_watch", *MODES[mode], str(path)], capture_output=True,
                       env=ENV, cwd=ROOT, timeout=60)
    got = p.stdout + f"\n[exit {p.returncode}]\n".encode()
    want = EXPECTED / f"{path.name}.{mode}"
    if UPDATE:
        want.write_bytes(got)
    assert want.exists(), f"no stored expectation {want.name}: run with CURSOR_WATCH_UPDATE_EXPECTED=1"
    assert got == want.read_bytes()
