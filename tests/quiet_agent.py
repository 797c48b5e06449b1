"""A fake Claude Code for the explained-quiet tests (spawn mode): it replays one run of a shared
real capture (littlebearapps/untether's ``claude_autocompact_2.1.285.jsonl``) and, at one point,
goes quiet for QUIET seconds in the way SCENARIO says, then writes the rest of the run and exits 0.

    python tests/quiet_agent.py SCENARIO QUIET

SCENARIO:

* ``heartbeat``: after the ``Read`` tool_use (line 3), a ``tool_progress`` heartbeat of that call
  every 0.5 s (the shape of ``docs/formats.md``'s ``tool_progress`` row; Claude Code beats every 30 s);
* ``compaction``: the capture's third run, quiet after its ``system/status`` ``compacting``
  (line 22), before the line that ends the compaction;
* ``rate_limit``: after the ``init``, the capture's ``rate_limit_event`` (line 4) with its status
  ``rejected`` and ``resetsAt`` QUIET seconds from now, then quiet;
* ``busy``: after the tool_use, a child process that spins on the CPU for QUIET seconds (no heartbeat);
* ``wedged``: after the tool_use, nothing: it sleeps, using no CPU.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

CAPTURE = Path(os.environ.get("CW_SHARED_STREAMS", "/work/shared/streams")) / "agents" / "claude" / \
    "littlebearapps__untether__tests__fixtures__claude_autocompact_2.1.285.jsonl"
DELAY = 0.02  # between lines, as an agent writes them while it works


def write(lines: list[bytes]) -> None:
    for line in lines:
        sys.stdout.buffer.write(line if line.endswith(b"\n") else line + b"\n")
        sys.stdout.buffer.flush()
        time.sleep(DELAY)


def main() -> int:
    scenario, quiet = sys.argv[1], float(sys.argv[2])
    lines = CAPTURE.read_bytes().splitlines(keepends=True)
    first = lines[:10]  # the first run: init, thinking, Read tool_use, rate limit, tool_result, ..., result
    if scenario == "compaction":
        write(lines[17:22])  # the third run's init .. its status: compacting
        time.sleep(quiet)
        write(lines[22:30])
        return 0
    if scenario == "rate_limit":
        event = json.loads(lines[3])
        event["rate_limit_info"]["status"] = "rejected"
        event["rate_limit_info"]["resetsAt"] = int(time.time() + quiet)
        write(first[:1] + [json.dumps(event).encode()])
        time.sleep(quiet)
        write(first[1:3] + first[4:])
        return 0
    write(first[:3])  # init, thinking, the Read tool_use
    call_id = json.loads(first[2])["message"]["content"][0]["id"]
    session = json.loads(first[0])["session_id"]
    if scenario == "heartbeat":
        start = time.monotonic()
        n = 0
        while time.monotonic() - start < quiet:
            time.sleep(0.5)
            n += 1
            write([json.dumps({"type": "tool_progress", "tool_use_id": f"{call_id}-heartbeat-{n}", "tool_name": "Read",
                               "parent_tool_use_id": call_id, "elapsed_time_seconds": n * 0.5,
                               "session_id": session}).encode()])
    elif scenario == "busy":
        subprocess.run([sys.executable, "-c", f"import time\nend = time.monotonic() + {quiet}\n"
                        "while time.monotonic() < end: pass\n"], check=True)
    elif scenario == "wedged":
        time.sleep(quiet)
    else:
        print(f"quiet_agent: unknown scenario {scenario}", file=sys.stderr)
        return 2
    write(first[3:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
