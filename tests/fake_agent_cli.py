"""A stand-in for an agent CLI (``claude -p ...``, ``codex exec --json ...``) in spawn-mode tests.

It ignores its arguments and replays the capture named by ``FAKE_AGENT_CAPTURE`` on stdout, one
line at a time with ``FAKE_AGENT_DELAY`` seconds between lines (flushing each), as the real CLI
writes its stream while it works; then exits 0.
"""

import os
import sys
import time

delay = float(os.environ.get("FAKE_AGENT_DELAY", "0.01"))
with open(os.environ["FAKE_AGENT_CAPTURE"], "rb") as f:
    for line in f:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
        time.sleep(delay)
