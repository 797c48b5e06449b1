"""A local OTLP/HTTP traces receiver for tests: it parses each request with the OTLP protobuf
classes (installed with the ``[otel]`` extra's exporter) and keeps every span with its resource.

    with Receiver() as r:
        ... cursor-watch --otlp-endpoint r.url ...
        spans = r.wait(lambda spans: len(spans) >= 3)

``delay_s`` makes each answer wait that long (a slow but working backend); ``keep=False`` only
counts them (``received``). ``python tests/otlp_receiver.py [PORT]`` runs one for benchmarks.
"""

from __future__ import annotations

import http.server
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Span:
    """One received span (ids as hex, attributes as plain values, its resource's attributes)."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    start_ns: int
    end_ns: int
    status_code: int  # 0 unset, 1 ok, 2 error
    status_message: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    received_at: float = field(default=0.0)  # time.monotonic() when it arrived


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


class Receiver:
    """An OTLP/HTTP receiver on a free loopback port (``url`` is its base URL)."""

    def __init__(self, delay_s: float = 0.0, keep: bool = True, port: int = 0) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        self.spans: list[Span] = []
        self.bodies: list[bytes] = []  # each request as received (protobuf: strings are plain UTF-8 in it)
        self.requests = 0
        self.received = 0  # spans received (kept in spans unless keep=False)
        lock = threading.Lock()
        outer = self
        reply = ExportTraceServiceResponse().SerializeToString()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if delay_s:
                    time.sleep(delay_s)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                now = time.monotonic()
                got = []
                for rs in request.resource_spans:
                    resource = _attrs(rs.resource.attributes)
                    for ss in rs.scope_spans:
                        for s in ss.spans:
                            got.append(Span(s.name, s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(),
                                            s.start_time_unix_nano, s.end_time_unix_nano, s.status.code,
                                            s.status.message, _attrs(s.attributes), resource, now))
                with lock:
                    if keep:
                        outer.spans.extend(got)
                        outer.bodies.append(body)
                    outer.received += len(got)
                    outer.requests += 1
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/x-protobuf")
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:  # the exporter was stopped while we waited: nobody reads the answer
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def wait(self, done: Callable[[list[Span]], bool], timeout: float = 60.0) -> list[Span]:
        """Wait until ``done(spans)`` (raises AssertionError on timeout); returns the spans."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            spans = list(self.spans)
            if done(spans):
                return spans
            time.sleep(0.05)
        raise AssertionError(f"not received within {timeout} s: {[(s.name, s.status_code) for s in self.spans]}")

    def names(self) -> list[str]:
        return sorted(s.name for s in self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Receiver:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


SENT = re.compile(rb"cursor-watch: --otlp: (\d+) spans of (\d+) runs sent to (\S+)"
                  rb"(?: \(runs dated (\d{4}-\d\d-\d\d \d\d:\d\d UTC) to (\d{4}-\d\d-\d\d \d\d:\d\d UTC)\))?\n")


def sent_only(stderr: bytes) -> re.Match:
    """The watch's stderr is exactly its ``--otlp: N spans of M runs sent to URL (runs dated ...)``
    line (every span sent, nothing else said); returns the match (groups: spans, runs, URL, from, to)."""
    m = SENT.fullmatch(stderr)
    assert m, stderr
    return m


if __name__ == "__main__":  # a receiver for benchmarks: python tests/otlp_receiver.py [PORT]; counts, keeps nothing
    import signal
    import sys

    r = Receiver(keep=False, port=int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(r.url, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        signal.pause()
    finally:
        print(f"{r.received} spans in {r.requests} requests", flush=True)
