"""The OpenTelemetry SDK side of ``--otlp`` (imported only where the ``[otel]`` extra is installed).

A span record (built by :mod:`cursor_watch.outlets.otlp`) is a dict:

* ``n`` name, ``k`` kind (``client`` / ``internal``);
* ``t`` trace id (32 hex digits), ``s`` span id (16 hex digits), ``p`` parent span id or None;
* ``b``, ``e`` start and end, epoch nanoseconds (the stream's times);
* ``a`` attributes (str, int, float, bool values); ``st`` ``[status, description]`` with status
  ``unset`` or ``error``; ``ev`` events ``[[name, epoch ns, attributes], ...]``.

:func:`emit` starts and ends one SDK span for a record through an ordinary ``Tracer`` whose
:class:`StreamIdGenerator` hands out the record's ids (the SDK asks its id generator for a
new span's ids; a parent is given as a non-recording span context). Everything else is the
SDK's own: sampler, span limits, resource (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``),
batching (``BatchSpanProcessor``), the OTLP exporters and their variables
(``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, ``_HEADERS``, ``_PROTOCOL``, ``_TIMEOUT``, ...).

``python -m cursor_watch.outlets.otlp_sdk`` is the exporter process: records arrive as JSON lines on
stdin; progress goes to stdout: ``{"ready": true}`` once the SDK is set up, ``{"ok": n, "failed": n,
"error": text}`` after each export (and each warning the SDK logs), and ``{"done": true, ...}`` when
stdin has ended and everything was flushed.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

import orjson
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from .. import __version__
from .otlp import EXPORT_TIMEOUT_S, SCHEDULE_DELAY_MS, SCHEMA_URL, SCOPE, protocol, run_records

_KINDS = {"client": SpanKind.CLIENT, "internal": SpanKind.INTERNAL, "server": SpanKind.SERVER}
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
FLUSH_EVERY = 2048  # spans created between flushes (the exporter keeps up: nothing is dropped in here)


class StreamIdGenerator(IdGenerator):
    """Gives the SDK the ids derived from the stream (see :mod:`cursor_watch.outlets.otlp`).

    :func:`emit` sets :attr:`next_trace_id` / :attr:`next_span_id` right before it starts a span;
    the ids are SHA-256 prefixes, uniformly distributed, but not random: the same log gives
    the same ids (so ``is_trace_id_random`` stays False).
    """

    def __init__(self) -> None:
        self.next_trace_id = 0
        self.next_span_id = 0

    def generate_span_id(self) -> int:
        return self.next_span_id

    def generate_trace_id(self) -> int:
        return self.next_trace_id


def resource() -> Resource:
    """``service.name`` ``cursor-watch``, ``service.version``, ``host.name``; then the SDK's
    variables (``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_SERVICE_NAME``), which win."""
    base = Resource.create({"service.name": "cursor-watch", "service.version": __version__,
                            "host.name": socket.gethostname()})
    return base.merge(OTELResourceDetector().detect())


def make_tracer(processors: Iterable[Any]) -> tuple[trace.Tracer, StreamIdGenerator, TracerProvider]:
    """A tracer whose spans carry the records' ids, through ``processors``."""
    ids = StreamIdGenerator()
    provider = TracerProvider(resource=resource(), id_generator=ids)
    for processor in processors:
        provider.add_span_processor(processor)
    tracer = provider.get_tracer(SCOPE, __version__, schema_url=SCHEMA_URL)
    return tracer, ids, provider


def emit(tracer: trace.Tracer, ids: StreamIdGenerator, record: dict) -> None:
    """Start and end one span for ``record`` (times, ids, status, events as recorded)."""
    trace_id = int(record["t"], 16)
    parent = record.get("p")
    ids.next_trace_id = trace_id
    ids.next_span_id = int(record["s"], 16)
    if parent:
        ctx = trace.set_span_in_context(NonRecordingSpan(SpanContext(trace_id, int(parent, 16), False, _SAMPLED)))
    else:
        ctx = Context()  # a root: a new trace, whatever context is current
    span = tracer.start_span(record["n"], context=ctx, kind=_KINDS.get(record.get("k"), SpanKind.INTERNAL),
                             attributes=record.get("a") or None, start_time=record["b"])
    for name, ts, attrs in record.get("ev") or ():
        span.add_event(name, attrs or None, timestamp=ts)
    status, description = record.get("st") or ("unset", "")
    if status == "error":
        span.set_status(Status(StatusCode.ERROR, description or None))
    span.end(end_time=record["e"])


class CountingExporter(SpanExporter):
    """Wraps an exporter; counts the spans it sent and failed, and reports after each export.

    Args:
        inner: the OTLP exporter.
        report: called with ``{"ok", "failed", "error"}`` after each export.
    """

    def __init__(self, inner: SpanExporter, report: Callable[[dict], None]) -> None:
        self.inner = inner
        self.report = report
        self.ok = 0
        self.failed = 0
        self.error = ""

    def export(self, spans: Any) -> SpanExportResult:
        n = len(spans)
        try:
            result = self.inner.export(spans)
        except Exception as err:  # noqa: BLE001 - counted and reported, never raised into the SDK
            result = SpanExportResult.FAILURE
            self.error = f"{type(err).__name__}: {err}"
        if result == SpanExportResult.SUCCESS:
            self.ok += n
        else:
            self.failed += n
            self.error = self.error or "export failed"
        self.report({"ok": self.ok, "failed": self.failed, "error": self.error})
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def make_exporter() -> SpanExporter:
    """The OTLP exporter for the configured protocol (``http/protobuf`` or ``grpc``), with the
    SDK's variables; the request timeout is :data:`~cursor_watch.outlets.otlp.EXPORT_TIMEOUT_S` unless
    ``OTEL_EXPORTER_OTLP[_TRACES]_TIMEOUT`` sets it."""
    timeout = None
    if not (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")):
        timeout = EXPORT_TIMEOUT_S
    if protocol() == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter(timeout=timeout)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

    return HttpExporter(timeout=timeout)


_ERRNO = re.compile(r"\[Errno -?\d+\][^\"')\]]+")


class _LastError(logging.Handler):
    """Keeps the last warning the SDK logged (why an export failed), for the report."""

    def __init__(self, exporter: CountingExporter) -> None:
        super().__init__(logging.WARNING)
        self.exporter = exporter

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage().splitlines()[0][:300]
            cause = _ERRNO.search(text)
            if cause:  # "[Errno 111] Connection refused" says more than the retry loop's wrapping
                text = cause.group(0).strip()
            elif self.exporter.error and "due to timeout, max retries or shutdown" in text:
                return  # the generic end of a retry loop: keep the cause reported before it
            self.exporter.error = text
            self.exporter.report({"ok": self.exporter.ok, "failed": self.exporter.failed, "error": text})
        except Exception:  # noqa: BLE001
            pass


def main() -> int:
    """The exporter process (see the module doc)."""
    out = sys.stdout.buffer
    lock = threading.Lock()

    def report(msg: dict) -> None:
        with lock:
            out.write(orjson.dumps(msg) + b"\n")
            out.flush()

    counting = CountingExporter(make_exporter(), report)
    root = logging.getLogger("opentelemetry")
    root.addHandler(_LastError(counting))
    root.propagate = False  # the watch's terminal is no place for the SDK's tracebacks
    delay = os.environ.get("OTEL_BSP_SCHEDULE_DELAY")
    processor = BatchSpanProcessor(counting, max_queue_size=FLUSH_EVERY * 2, max_export_batch_size=512,
                                   schedule_delay_millis=None if delay else SCHEDULE_DELAY_MS)
    tracer, ids, provider = make_tracer([processor])
    report({"ok": 0, "failed": 0, "ready": True})  # the SDK is imported: the watch's stall clock starts
    n = 0
    for line in sys.stdin.buffer:
        try:
            record = orjson.loads(line)
            emit(tracer, ids, record)
        except Exception as err:  # noqa: BLE001 - one bad record is counted, not fatal
            counting.failed += 1
            counting.error = f"a span could not be built ({type(err).__name__}: {err})"
            continue
        n += 1
        if n % FLUSH_EVERY == 0:
            processor.force_flush()
    processor.force_flush()
    report({"ok": counting.ok, "failed": counting.failed, "error": counting.error, "done": True})
    processor.shutdown()
    return 0


class LocalSink:
    """An in-process sink for :class:`~cursor_watch.outlets.otlp.OtlpOutlet`: each record becomes a span at
    once, handed to ``exporter`` (tests use the SDK's ``InMemorySpanExporter``)."""

    def __init__(self, exporter: SpanExporter) -> None:
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.tracer, self.ids, self.provider = make_tracer([SimpleSpanProcessor(exporter)])
        self.count = 0

    def put(self, record: dict) -> None:
        emit(self.tracer, self.ids, record)
        self.count += 1

    def close(self) -> dict:
        self.provider.force_flush()
        return {"ok": self.count, "failed": 0, "dropped": 0, "written": self.count, "error": "", "done": True}


# -- OTLP JSON (the offline file) ----------------------------------------------------------------

class _Keep(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Any) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(obj: Any) -> None:
    """proto3 JSON writes bytes as base64; OTLP JSON wants trace and span ids as hex."""
    import base64

    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in _ID_KEYS and isinstance(value, str):
                obj[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(obj, list):
        for value in obj:
            _hex_ids(value)


def otlp_json_lines(records: Iterable[dict], batch: int = 512) -> Iterable[bytes]:
    """Spans for ``records`` in the OTLP JSON encoding: one ``ExportTraceServiceRequest`` object
    per line (what the Collector's ``file`` exporter writes and ``otlpjsonfile`` receiver reads),
    ``batch`` spans a line. Ids are hex, enums integers (OTLP/JSON, not plain proto3 JSON)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    keep = _Keep()
    tracer, ids, provider = make_tracer([SimpleSpanProcessor(keep)])
    for record in records:
        emit(tracer, ids, record)
        if len(keep.spans) >= batch:
            yield _json_line(keep.spans, encode_spans, MessageToDict)
            keep.spans = []
    if keep.spans:
        yield _json_line(keep.spans, encode_spans, MessageToDict)
    provider.shutdown()


def write_otlp_json(runs: list, write: Callable[[bytes], Any], content: bool = False, redact: Any = None) -> None:
    """``--export PATH.otlp.json``: every run's spans (the same records as ``--otlp``, built from
    the final model) in the OTLP JSON encoding (see :func:`otlp_json_lines`); ``redact``: a
    :class:`~cursor_watch.outlets.redact.Redactor` for the texts (None: ``--no-redact``)."""
    def records() -> Iterable[dict]:
        for run in runs:
            yield from run_records(run, content=content, redact=redact)

    for line in otlp_json_lines(records()):
        write(line)


def _json_line(spans: list, encode: Callable, to_dict: Callable) -> bytes:
    obj = to_dict(encode(spans), use_integers_for_enums=True)
    _hex_ids(obj)
    return orjson.dumps(obj) + b"\n"


if __name__ == "__main__":
    sys.exit(main())
