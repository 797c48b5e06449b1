"""Print a stream file line by line with delays, like a live cursor-agent.

Usage: python emitter.py FILE [--delay S] [--pause-after N --pause S] [--stderr TEXT] [--exit N]

``--pause-after N --pause S`` goes silent for S seconds after line N (a long tool
run), so a monitor can be seen to say "idle" with the running tool named.
"""

from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--delay", type=float, default=0.02, help="seconds between lines")
    p.add_argument("--pause-after", type=int, default=0, help="go silent after this line")
    p.add_argument("--pause", type=float, default=0.0, help="seconds of silence")
    p.add_argument("--stderr", default="", help="a line to print on stderr first")
    p.add_argument("--exit", type=int, default=0, help="exit status")
    args = p.parse_args()
    if args.stderr:
        print(args.stderr, file=sys.stderr, flush=True)
    out = sys.stdout.buffer
    with open(args.file, "rb") as f:
        for n, line in enumerate(f, 1):
            out.write(line)
            out.flush()
            time.sleep(args.delay)
            if n == args.pause_after:
                time.sleep(args.pause)
    return args.exit


if __name__ == "__main__":
    raise SystemExit(main())
