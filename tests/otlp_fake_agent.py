"""A fake cursor-agent for the live --otlp test: one tool call, then it waits before its result.

Usage: python otlp_fake_agent.py GO_FILE

Prints ``system/init``, the prompt and a shell call (started, then completed 0.3 s later) with
the current times, then waits (up to 120 s) until GO_FILE exists before it prints its answer
and ``result``: the test sees the finished tool's span in the backend while the run goes on.
"""

from __future__ import annotations

import json
import os
import sys
import time

SID = "live-0000-1111-2222-333344445555"


def emit(**event) -> None:
    event["session_id"] = SID
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def now() -> int:
    return int(time.time() * 1000)


def main() -> int:
    go = sys.argv[1]
    emit(type="system", subtype="init", model="Composer 2.5", cwd="/w", permissionMode="default", apiKeySource="login")
    emit(type="user", message={"role": "user", "content": [{"type": "text", "text": "list files"}]})
    started = now()
    call = {"shellToolCall": {"args": {"command": "ls"}}, "toolCallId": "call_live\nfc_1", "startedAtMs": str(started)}
    emit(type="tool_call", subtype="started", call_id="call_live\nfc_1", tool_call=call, timestamp_ms=started)
    time.sleep(0.3)
    done = now()
    call = dict(call, completedAtMs=str(done))
    call["shellToolCall"] = {"args": {"command": "ls"}, "result": {"success": {"exitCode": 0, "stdout": "a\n"}}}
    emit(type="tool_call", subtype="completed", call_id="call_live\nfc_1", tool_call=call, timestamp_ms=done)
    deadline = time.monotonic() + 120
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.05)
    emit(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": "a"}]})
    emit(type="result", subtype="success", is_error=False, result="a", duration_ms=500, request_id="r-live")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
