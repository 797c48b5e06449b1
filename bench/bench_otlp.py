#!/usr/bin/env python3
"""Benchmark ``--otlp``: what sending every run as a trace adds to ``--summary --json``.

    python bench/bench_otlp.py --size 1GB --tool-calls 100000 [--repeat 2] [--dead]

The stream comes from ``gen_stream.py`` (cached under ``bench/out/`` like bench_summary's). A
local OTLP/HTTP receiver runs in its own process (it parses each request with the OTLP
protobuf classes, counts the spans and answers 200). Then, paired (A B A B ...), each a child
process:

* ``summary``: ``python -m cursor_watch --summary --json FILE``;
* ``otlp``: the same with ``--otlp-endpoint`` the receiver; checked: stdout identical to
  ``summary``'s, nothing on stderr (every span sent), the receiver got tool calls + 1 spans;
* with ``--dead``, also ``dead``: ``--otlp-endpoint`` a port where nothing listens (its
  stderr must say how many spans could not be sent).

Wall clock and CPU time (user + system of the command and its children, the exporter process
included) are reported, each as the median of the runs, with ratios to ``summary``.
Progress goes to stderr, a Markdown table to stdout.
"""

from __future__ import annotations

import argparse
import http.server
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench_summary import Stream, log, machine_info, warm  # noqa: E402
from gen_stream import format_size, parse_size  # noqa: E402


# --------------------------------------------------------------------------- the receiver

def serve_receiver(port_file: str) -> None:
    """A minimal OTLP/HTTP traces receiver: counts spans, answers 200 (run in its own process)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    count = [0, 0]  # spans, requests
    lock = threading.Lock()
    reply = ExportTraceServiceResponse().SerializeToString()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            req = ExportTraceServiceRequest()
            req.ParseFromString(body)
            n = sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)
            with lock:
                count[0] += n
                count[1] += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def do_GET(self) -> None:  # noqa: N802
            with lock:
                body = f"{count[0]} {count[1]}".encode()
                if self.path == "/reset":
                    count[0] = count[1] = 0
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Path(port_file).write_text(str(server.server_address[1]))
    server.serve_forever()


class Receiver:
    def __init__(self) -> None:
        fd, self.port_file = tempfile.mkstemp(prefix="otlp-port-")
        os.close(fd)
        os.unlink(self.port_file)
        self.proc = subprocess.Popen([sys.executable, __file__, "--receiver", self.port_file])
        for _ in range(300):
            if os.path.exists(self.port_file) and Path(self.port_file).read_text():
                break
            time.sleep(0.1)
        self.url = f"http://127.0.0.1:{Path(self.port_file).read_text()}"

    def count(self, reset: bool = False) -> tuple[int, int]:
        with urllib.request.urlopen(self.url + ("/reset" if reset else "/count"), timeout=10) as r:
            spans, requests = r.read().split()
        return int(spans), int(requests)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()
        Path(self.port_file).unlink(missing_ok=True)


# --------------------------------------------------------------------------- measuring

def timed(argv: list[str], stdout_path: Path) -> tuple[float, float, int, bytes]:
    """Run ``argv``; returns (wall s, CPU s of it and its children, exit status, stderr)."""
    with open(stdout_path, "wb") as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, proc.returncode, err.read()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=parse_size, default=parse_size("1GB"))
    p.add_argument("--tool-calls", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=2, help="pairs of runs (median reported)")
    p.add_argument("--dead", action="store_true", help="also run against an endpoint where nothing listens")
    p.add_argument("--out", type=Path, default=HERE / "out")
    p.add_argument("--receiver", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.receiver:
        serve_receiver(args.receiver)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    stream = Stream(args.size, False, args.tool_calls, 1, args.out)
    stream.ensure()
    warm(stream.path)
    expected = stream.meta["tool_calls"] + 1
    receiver = Receiver()
    dead = f"http://127.0.0.1:{free_port()}"
    base_cmd = [sys.executable, "-m", "cursor_watch", "--summary", "--json"]
    commands = {"summary": base_cmd + [str(stream.path)],
                "otlp": base_cmd + ["--otlp-endpoint", receiver.url, str(stream.path)]}
    if args.dead:
        commands["dead"] = base_cmd + ["--otlp-endpoint", dead, str(stream.path)]
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
    problems: list[str] = []
    outs = {k: args.out / f"otlp-bench-{k}.json" for k in commands}
    try:
        for round_ in range(args.repeat):
            for name, argv_ in commands.items():
                receiver.count(reset=True)
                wall, cpu, rc, err = timed(argv_, outs[name])
                results[name].append((wall, cpu))
                log(f"  round {round_ + 1} {name:8} {wall:7.2f} s wall {cpu:7.2f} s CPU rc={rc}")
                if name == "otlp":
                    spans, requests = receiver.count()
                    if spans != expected or err:
                        problems.append(f"otlp: receiver got {spans} of {expected} spans; stderr {err[:300]!r}")
                    log(f"           receiver: {spans} spans in {requests} requests")
                if name == "dead" and b"could not be sent" not in err:
                    problems.append(f"dead: no report on stderr ({err[:200]!r})")
                if name != "summary" and outs[name].read_bytes() != outs["summary"].read_bytes():
                    problems.append(f"{name}: stdout differs from summary's")
    finally:
        receiver.close()
    info = machine_info()
    print(f"stream: {stream.path.name}, {format_size(stream.meta['bytes'])}, {stream.meta['tool_calls']:,} tool calls, "
          f"{stream.meta['events']:,} events")
    print(f"machine: {info.get('cpu', '?')}, {os.cpu_count()} CPUs; load average at the end "
          f"{os.getloadavg()[0]:.2f}; medians of {args.repeat} paired runs")
    print()
    print("| command | wall s | CPU s | wall ratio | CPU ratio |")
    print("|---|---|---|---|---|")
    base_wall = statistics.median(w for w, _ in results["summary"])
    base_cpu = statistics.median(c for _, c in results["summary"])
    for name, rows in results.items():
        wall = statistics.median(w for w, _ in rows)
        cpu = statistics.median(c for _, c in rows)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x |")
    otlp_wall = statistics.median(w for w, _ in results["otlp"])
    verdict = "meets" if otlp_wall / base_wall <= 1.5 else "misses"
    print()
    print(f"target: --otlp adds at most 1.5x to --summary --json: {otlp_wall / base_wall:.2f}x wall ({verdict})")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
