"""The floor for any Python consumer of a stream: read a file in 1 MiB chunks, split its lines,
``orjson.loads`` each one (what bench_summary.py and bench_agents.py call the orjson loop).

Usage: ``python bench/orjson_loop.py FILE`` prints the number of lines parsed."""

import sys

import orjson

loads = orjson.loads
n = 0
parts: list[bytes] = []
with open(sys.argv[1], "rb", buffering=0) as f:
    while chunk := f.read(1 << 20):
        lines = chunk.split(b"\n")
        if parts:
            parts.append(lines[0])
            lines[0] = b"".join(parts)
            parts = []
        tail = lines.pop()
        if tail:
            parts.append(tail)
        for line in lines:
            if line:
                loads(line)
                n += 1
if parts:
    loads(b"".join(parts))
    n += 1
print(n)
