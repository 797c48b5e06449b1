"""Instruction counts of the decoder and the model, for a loaded machine (typed decoding's measure).

Wall-clock and CPU-time ratios swing with other work on the machine; an instruction count
from ``valgrind --tool=callgrind`` does not. This harness feeds a stream to one part:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python bench/icount_feed.py PKG_ROOT STREAM MODE

MODE: ``none`` (start-up and reading only: subtract it), ``orjson`` (``orjson.loads`` per
line), ``decode`` (``events.Decoder.feed`` alone), ``feed`` (``runner.Monitor.feed``: decoding
and the model). The stream is read whole and fed in 64 KiB chunks (as ``runner.pump`` does).
PKG_ROOT is the directory holding the ``cursor_watch`` to measure (another work tree for a
"before" figure). The "Collected" line of valgrind's output is the count.
"""

from __future__ import annotations

import gc
import sys

if __name__ == "__main__":
    root, path, mode = sys.argv[1:4]
    sys.path.insert(0, root)
    import orjson

    from cursor_watch.core.decode import Decoder
    from cursor_watch.stream.watch import Monitor

    data = open(path, "rb").read()
    chunks = [data[i : i + (1 << 16)] for i in range(0, len(data), 1 << 16)]
    if mode == "orjson":
        rest = b""
        for chunk in chunks:
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                if line:
                    orjson.loads(line)
    elif mode == "decode":
        gc.disable()
        decoder = Decoder()
        for chunk in chunks:
            decoder.feed(chunk)
    elif mode == "feed":
        monitor = Monitor()
        for chunk in chunks:
            monitor.feed(chunk)
    elif mode != "none":
        sys.exit(f"icount_feed.py: unknown mode {mode!r} (none, orjson, decode, feed)")
