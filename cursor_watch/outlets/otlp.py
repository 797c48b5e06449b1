"""``--otlp``: every run as an OpenTelemetry trace (an outlet: a view that leaves the machine).

The outlet reads model changes like any view (:meth:`OtlpOutlet.observe` is called by
:class:`~cursor_watch.stream.watch.Watch` with each batch) and turns them into span records: plain
dicts, no SDK objects. A background process (``python -m cursor_watch.outlets.otlp_sdk``) turns the
records into spans with the official OpenTelemetry Python SDK and sends them with its OTLP
exporter (``http/protobuf`` by default, ``grpc`` when ``OTEL_EXPORTER_OTLP_PROTOCOL`` says so).
The SDK's encoding costs ~100 us a span (measured: 1.45, upb protobuf), so it runs on the other
core, not under the reader's GIL; the reader only builds a record and hands its bytes over.

What leaves the machine follows the OpenTelemetry GenAI semantic conventions **v0.1.0**
(open-telemetry/semantic-conventions-genai, their first release after they left the main
repository at v1.41.0: ``model/gen-ai/registry.yaml``; :data:`GENAI_SEMCONV_VERSION`; the
scope's ``schemaUrl`` names semantic conventions :data:`SEMCONV_VERSION`, which it depends on),
with the OpenInference attributes Arize Phoenix reads (``openinference.span.kind``,
``llm.*``, ``input.value``/``output.value``, ``session.id``):

* one ``invoke_agent {agent}`` span per run (kind CLIENT: the agent is another process that
  works through a remote service; OpenInference AGENT), with ``gen_ai.operation.name``,
  ``gen_ai.provider.name``, ``gen_ai.agent.name``, ``gen_ai.conversation.id`` and ``session.id``
  (the session id), ``gen_ai.request.model``, and the run's notes (interaction queries, retries,
  reconnections) as span events; it ends at the run's end and starts at the earlier of its
  first event and the end minus the duration the agent reports (:func:`run_times`);
* one ``chat {model}`` span per model (kind CLIENT, OpenInference LLM), a child of the run
  span as long as it, carrying the run's usage (``gen_ai.usage.*`` and ``llm.token_count.*``)
  and the cost the agent reported (``llm.cost.total``, ``gen_ai.usage.cost``): the only spans
  with usage, so a backend that sums a trace counts each token once (:func:`llm_records`);
* one ``execute_tool {tool}`` span per tool call (kind INTERNAL, OpenInference TOOL), a child of
  the run span (or of its parent call's span for a sub-agent's call), with ``gen_ai.tool.name``
  (an MCP tool as ``server.tool``: :func:`mcp_names`), ``gen_ai.tool.call.id`` (the
  ``call_id``), ``gen_ai.tool.type``, ``process.exit.code`` for shell calls; status ERROR with
  ``error.type`` for failed, rejected and incomplete calls.

The ``chat`` span is not a timed model call: the stream says when a model call's output arrived,
never when the call began or ended. ``model_call_id`` is kept on each tool span
(``cursor_watch.model_call_id``): a backend can group the calls of one model call.

**Ids are derived, not random** (:func:`trace_id_of`, :func:`run_span_id_of`,
:func:`tool_span_id_of`): SHA-256 over the run key and the ``call_id``. The key (:func:`run_key`,
:func:`key_of`) is ``<session id>/<run index>/<opening digest>`` (``source:<path>`` stands in for
a stream without a session id): the run's index in its source, and a digest of its opening
(:func:`opening_digest` of ``Session.opening``: its first recorded time, its prompt and its
first ``call_id``, as they stood when its first tool call ended, its first result came or it
ended). The opening tells apart runs of one session that the session id and index don't (a chat
resumed with ``--resume`` into a new log is run 1 of the same session again) and is the same
however the run is read. Sending the same log twice gives the same ids, and a run followed live
and later replayed is one trace.

**When spans are sent**: a tool span when its call ends; the run span at the run's ``result``
for a followed file or a pipe (the source may stay open for long after), at its end for a
replayed file or a spawned command. A run cursor-watch stopped watching while it went on gets
no run span (see :class:`OtlpOutlet`): a later replay of its finished log completes its trace.

**Content is opt-in** (``--otlp-content`` or
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``): the prompt and the final text as the
run span's ``input.value``/``output.value`` (Phoenix's Input and Output panes), the prompt,
thinking and each assistant segment as ``gen_ai.input.messages`` / ``gen_ai.output.messages``,
each call's one-line summary, and its arguments and result as ``input.value``/``output.value``
and ``gen_ai.tool.call.arguments`` / ``.result``. Each content attribute is at most
:data:`CONTENT_CAP` characters, a cut one ending with a note of how much was not sent
(JSON-valued ones stay valid JSON: :func:`_json_within`), terminal escape sequences removed and
other control characters shown escaped. Without it, no stream text leaves the machine beyond
ids, names, the model, cwd, statuses, exit codes, counts and times.

**Secrets are redacted** unless ``--no-redact``: content, a rejected call's reason and
an error result's text pass through :mod:`cursor_watch.outlets.redact` (each secret becomes
``[redacted: KIND]``), the payloads before they are cut, and a JSON key that names a secret
(``password``, ``api_key``, ``token``) hides its value (:meth:`cursor_watch.outlets.redact.Redactor.field`).
Ids (``call_id``, the session id) are sent as they are.

**A dead backend never hurts the watch**: records wait in a bounded buffer
(:data:`MAX_PENDING_BYTES`; beyond it new spans are dropped and counted), the export runs in
the child process, and at the end the watch waits for it only while it makes progress
(:data:`FLUSH_STALL_S` without a span delivered, :data:`EXIT_WAIT_S` in all, the exporter's own
start included), then stops it and reports on stderr how many spans could not be sent (the TUI
also counts them in the diagnostics pane as the watch goes: :meth:`OtlpOutlet.status`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import orjson

from ..core.costs import usage_of
from ..core.model import CLOCK_RECEIVED
from ..safe import visible_doc
from ..core.tools import STATUS_FAILURE, STATUS_INCOMPLETE, STATUS_REJECTED, STATUS_RUNNING, STATUS_SUCCESS

GENAI_SEMCONV_VERSION = "0.1.0"  # open-telemetry/semantic-conventions-genai release followed here
SEMCONV_VERSION = "1.45.0"  # the semantic-conventions release GenAI v0.1.0 depends on (its CHANGELOG)
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
SCOPE = "cursor_watch.outlets.otlp"

CONTENT_CAP = 16_384  # characters per content attribute, a cut one's note included (prompt, text, args, result)
LINE_CAP = 256  # characters of a one-line attribute (a call_id, a tool name, a model)
DETAIL_CAP = 200  # characters of a status description
MAX_EVENTS = 128  # span events (notes) per run span (the SDK's default limit)
MAX_PENDING_BYTES = 64 * 1024 * 1024  # records waiting for the exporter process
FLUSH_STALL_S = 3.0  # at the end: stop waiting after this long without a span delivered
EXIT_WAIT_S = 5.0  # ... and after this long in all, the exporter's start (importing the SDK) included
STOP_S = 0.5  # then the exporter is terminated, and killed if it is still there after this long
SCHEDULE_DELAY_MS = 1000  # the exporter sends what it has at least this often (OTEL_BSP_SCHEDULE_DELAY)
EXPORT_TIMEOUT_S = 5.0  # per export request, unless OTEL_EXPORTER_OTLP[_TRACES]_TIMEOUT says
PROTOCOLS = ("http/protobuf", "grpc")

# agent label (Session.agent; "cursor" for a run without one) -> gen_ai.provider.name (v1.41.0
# well-known values where the agent's vendor has one; Cursor has none, so its own name)
PROVIDERS = {"cursor": "cursor", "claude-code": "anthropic", "claude": "anthropic", "codex": "openai",
             "gemini-cli": "gcp.gemini", "gemini": "gcp.gemini"}
EXTENSION_TOOLS = frozenset({"mcp", "getMcpTools"})  # run against an external server: gen_ai.tool.type extension

# CSI, OSC (ended by BEL or ST), and two-character escapes: removed from content
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_MAX_MS = (1 << 64) // 1_000_000 - 1  # a time in ms that still fits OTLP's fixed64 nanoseconds


class OtlpUnavailable(Exception):
    """The ``[otel]`` extra is missing or the protocol is not supported (the message is one line)."""


# -- configuration ---------------------------------------------------------------------------

def protocol() -> str:
    """The OTLP protocol from ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL``
    (the SDK's variables), default ``http/protobuf``."""
    value = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    return (value or "http/protobuf").strip().lower()


def content_from_env() -> bool:
    """``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (the GenAI instrumentations' switch)."""
    return os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"


def check_available(proto: str | None = None, need_exporter: bool = True) -> None:
    """Raise :class:`OtlpUnavailable` when the SDK (and the exporter for ``proto``) can't be imported.

    Looks the modules up without importing them (``importlib.util.find_spec``).
    """
    proto = proto or protocol()
    if proto not in PROTOCOLS:
        raise OtlpUnavailable(f"OTLP protocol {proto!r} is not supported: use http/protobuf (the default) or grpc")
    modules = ["opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.common"]
    if need_exporter:
        modules.append("opentelemetry.exporter.otlp.proto.grpc.trace_exporter" if proto == "grpc"
                       else "opentelemetry.exporter.otlp.proto.http.trace_exporter")
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise OtlpUnavailable("OpenTelemetry export needs the SDK and its OTLP exporter: "
                                  "pip install 'cursor-watch[otel]'")


def traces_endpoint(url: str, proto: str) -> str:
    """A base URL as the traces endpoint, the same for ``--otlp-endpoint`` and
    ``OTEL_EXPORTER_OTLP_ENDPOINT``: for HTTP, ``/v1/traces`` is appended to the base (with or
    without a path of its own: Langfuse's documented base is ``https://cloud.langfuse.com/api/public/otel``),
    and a URL that already ends in ``/v1/traces`` is kept; for gRPC the URL is used as given."""
    if proto == "grpc":
        return url
    trimmed = url.rstrip("/")
    if trimmed.endswith("/v1/traces"):
        return trimmed
    return trimmed + "/v1/traces"


def endpoint_env(env: dict[str, str], endpoint: str | None, proto: str) -> dict[str, str]:
    """The exporter process's environment with the traces endpoint made explicit: ``--otlp-endpoint``,
    else ``OTEL_EXPORTER_OTLP_ENDPOINT`` through :func:`traces_endpoint` (the SDK would append
    ``/v1/traces`` even to a URL that has it), unless ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set
    (the SDK uses that one as given). Returns ``env`` changed in place."""
    if endpoint:
        env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = traces_endpoint(endpoint, proto)
    elif proto != "grpc" and env.get("OTEL_EXPORTER_OTLP_ENDPOINT") and not env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = traces_endpoint(env["OTEL_EXPORTER_OTLP_ENDPOINT"], proto)
    return env


def describe_endpoint(endpoint: str | None, proto: str) -> str:
    """Where spans go, for messages: ``--otlp-endpoint``, else the SDK's variables, else its default."""
    if endpoint:
        return traces_endpoint(endpoint, proto)
    env = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if env:
        return env
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if proto == "grpc":
        return base or "http://localhost:4317"
    return traces_endpoint(base, proto) if base else "http://localhost:4318/v1/traces"


# -- ids ---------------------------------------------------------------------------------------

def _digest(*parts: str) -> bytes:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.digest()


def opening_digest(opening: tuple | None) -> str:
    """16 hex digits naming a run's opening (``Session.opening``: its first recorded
    ``timestamp_ms``, its prompt and its first ``call_id``, as they stood when its first tool call
    ended, its first result came or it ended): the first 8 bytes of SHA-256("cursor-watch opening",
    time, prompt, call_id), each part NUL-terminated, a missing one as the empty string."""
    ts, prompt, call_id = opening if opening is not None else (None, None, None)
    parts = ["" if ts is None else str(ts), prompt or "", call_id or ""]
    return _digest("cursor-watch opening", *parts)[:8].hex()


def run_key(session_id: str | None, run_index: int, source: str, opening: tuple | None = None) -> str:
    """The key every id of a run derives from: ``<session id>/<run index>/<opening digest>``, or
    ``source:<source>/<run index>/<opening digest>`` when the stream has no session id
    (:func:`opening_digest`; without ``opening``, the key has no third part).

    The session id and run index alone are not enough: ``--resume`` keeps the session id, so a
    resumed chat's first run in a new log would be run 1 of the same session again. The opening
    tells such runs apart (another prompt, other times, other call ids) and is the same wherever
    the run is read from: the same log twice, a run followed live and its log replayed later.
    """
    base = f"{session_id}/{run_index}" if session_id else f"source:{source}/{run_index}"
    return base if opening is None else f"{base}/{opening_digest(opening)}"


def key_of(run: Any) -> str:
    """The key of a :class:`~cursor_watch.core.runs.Run` (:func:`run_key` with its session's opening)."""
    s = run.session
    opening = s.opening
    if opening is None:  # not fixed yet (a run read so far): what its opening is now
        opening = s.opening_now()
    return run_key(s.session_id, run.index, run.source, opening)


def trace_id_of(key: str) -> int:
    """128-bit trace id: the first 16 bytes of SHA-256("cursor-watch trace", key) (never 0)."""
    return int.from_bytes(_digest("cursor-watch trace", key)[:16], "big") or 1


def run_span_id_of(key: str) -> int:
    """64-bit id of the run span: the first 8 bytes of SHA-256("cursor-watch run", key) (never 0)."""
    return int.from_bytes(_digest("cursor-watch run", key)[:8], "big") or 1


def tool_span_id_of(key: str, call_id: str) -> int:
    """64-bit id of a tool call's span: SHA-256("cursor-watch tool", key, call_id), 8 bytes (never 0)."""
    return int.from_bytes(_digest("cursor-watch tool", key, call_id)[:8], "big") or 1


# -- text --------------------------------------------------------------------------------------

def clean_line(text: Any, cap: int = LINE_CAP) -> str:
    """A one-line attribute: escapes removed, other controls and lone surrogates shown escaped, cut at ``cap``."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if len(text) > cap * 4:
        text = text[: cap * 4]
    if not text.isprintable():
        text = visible_doc(_ESCAPES.sub("", text), line=True)
    return text if len(text) <= cap else text[:cap] + "…"


def clean_id(text: Any, cap: int = LINE_CAP) -> str:
    """An id as the stream wrote it (a ``call_id`` holds a newline: reference 1), but terminal
    escapes removed, other controls and lone surrogates shown escaped, cut at ``cap``."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if len(text) > cap * 4:
        text = text[: cap * 4]
    if not text.isprintable():
        text = visible_doc(_ESCAPES.sub("", text))
    return text if len(text) <= cap else text[:cap] + "…"


def _cut_note(extra: int) -> str:
    return f"… [{extra} more characters not sent]"


def clean_content(text: Any, cap: int = CONTENT_CAP) -> str:
    """Content: terminal escapes removed, controls (but newlines and tabs) escaped; at most
    ``cap`` characters in all: a longer text is cut and ends with ``… [N more characters not
    sent]`` (N counted in the text as the stream gave it), the note within the ``cap``."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)

    def shown(part: str) -> str:
        return part if part.isprintable() else visible_doc(_ESCAPES.sub("", part))

    out = shown(text[:cap])
    if len(text) <= cap and len(out) <= cap:
        return out
    keep = max(0, cap - len(_cut_note(len(text))))
    while True:  # escaping only lengthens a text: shrink the part kept until it fits with its note
        out = shown(text[:keep])
        note = _cut_note(len(text) - keep)
        if len(out) + len(note) <= cap or keep == 0:
            return (out + note)[:cap]
        keep = max(0, min(keep - 1, keep * (cap - len(note)) // max(1, len(out))))


def _ns(ms: Any) -> int | None:
    """Epoch ms -> ns, or None when it can't be an OTLP time (negative, absurd, not a number)."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        return None
    if not 0 <= ms <= _MAX_MS:
        return None
    return int(ms) * 1_000_000


def _int64(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if _INT64[0] <= value <= _INT64[1] else None


def _json(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


def _json_within(build: Callable[[int], Any], cap: int = CONTENT_CAP) -> str:
    """A JSON-valued content attribute of at most ``cap`` characters.

    ``build(n)`` makes the value with each string in it cut to ``n`` characters
    (:func:`clean_content`); ``n`` shrinks until the JSON text fits, so the attribute stays valid
    JSON. When even short strings don't fit (a huge structure), the JSON text itself is cut
    (:func:`clean_content`: no longer valid JSON, and it says how much was not sent)."""
    n = cap
    text = _json(build(n))
    for _ in range(6):
        if len(text) <= cap:
            return text
        n = min(n - 1, n * cap // len(text) - 64)
        if n < 64:
            break
        text = _json(build(n))
    return text if len(text) <= cap else clean_content(text, cap)


def _capped_json(value: Any, cap: int = CONTENT_CAP) -> str:
    """A payload as a JSON string of at most ``cap`` characters: every string inside it cleaned
    and cut, the structure kept (:func:`_json_within`)."""
    def walk(v: Any, depth: int, n: int) -> Any:
        if isinstance(v, str):
            return clean_content(v, n)
        if depth > 32:
            return "…"
        if isinstance(v, dict):
            return {clean_line(k): walk(x, depth + 1, n) for k, x in list(v.items())[:200]}
        if isinstance(v, list):
            return [walk(x, depth + 1, n) for x in v[:200]]
        if isinstance(v, int) and not isinstance(v, bool) and _int64(v) is None:
            return str(v)
        return v
    return _json_within(lambda n: walk(value, 0, n), cap)


# -- records -----------------------------------------------------------------------------------

class RunIds:
    """The ids of one run, fixed when its first span is recorded (a session id that shows up
    later does not move a trace already begun)."""

    __slots__ = ("key", "trace_id", "span_id", "min_start_ms", "max_end_ms", "first_seen_ms", "sent", "ended", "seen",
                 "spans")

    def __init__(self, key: str, first_seen_ms: float) -> None:
        self.key = key
        self.trace_id = trace_id_of(key)
        self.span_id = run_span_id_of(key)
        self.min_start_ms: int | None = None
        self.max_end_ms: int | None = None
        self.first_seen_ms = first_seen_ms
        self.sent = 0
        self.ended = False
        # when the outlet saw each call begin (epoch ms): a call of a stream without times is timed
        # by when its events were read (no more than the running calls are kept)
        self.seen: dict[str, float] = {}
        self.spans: dict[str, tuple[int, int]] = {}  # call_id -> its recorded span's (start, end) ns

    def saw(self, start_ms: int | None, end_ms: int | None) -> None:
        if start_ms is not None and (self.min_start_ms is None or start_ms < self.min_start_ms):
            self.min_start_ms = start_ms
        if end_ms is not None and (self.max_end_ms is None or end_ms > self.max_end_ms):
            self.max_end_ms = end_ms


def agent_of(session: Any) -> str:
    """The agent label (``Session.agent``; ``cursor`` for a model without one)."""
    agent = getattr(session, "agent", None)
    return clean_line(agent, 64) if isinstance(agent, str) and agent else "cursor"


def _version_of(session: Any) -> str | None:
    for name in ("agent_version", "cli_version", "version"):
        value = getattr(session, name, None)
        if isinstance(value, str) and value:
            return clean_line(value, 64)
    return None


def _status_error(error_type: str, description: str) -> list:
    return ["error", clean_line(description, DETAIL_CAP)]


def _same(text: Any) -> Any:
    return text


def tool_record(run: Any, call: Any, ids: RunIds, *, content: bool = False, now_ms: float | None = None,
                stream_times: bool = True, redact: Any = None) -> dict:
    """The span record of one finished tool call (see :mod:`cursor_watch.outlets.otlp_sdk` for its fields).

    Args:
        run: the :class:`~cursor_watch.core.runs.Run` (``reread`` gives the payloads in content mode).
        call: its :class:`~cursor_watch.core.model.ToolCall` (no longer running).
        ids: the run's ids.
        content: add the summary, arguments and result (re-read from the source by offset).
        now_ms: epoch ms standing in for a missing end time.
        stream_times: False when the stream carries no times (the times are when events were read).
        redact: a :class:`~cursor_watch.outlets.redact.Redactor` for the texts (None: ``--no-redact``).
    """
    r = redact.text if redact is not None else _same
    tool = clean_line(call.tool, 128) or "unknown"
    call_id = call.call_id if isinstance(call.call_id, str) else str(call.call_id)
    server, mcp_tool = mcp_names(call)
    if mcp_tool:
        tool = clean_line(f"{server}.{mcp_tool}" if server else mcp_tool, 128)
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": clean_id(call_id),
        "gen_ai.tool.type": "extension" if getattr(call, "kind", call.tool) in EXTENSION_TOOLS else "function",
        "cursor_watch.tool.status": clean_line(call.status, 32),
        "openinference.span.kind": "TOOL",
        "tool.name": tool,
    }
    if mcp_tool:
        attrs["cursor_watch.mcp.tool"] = clean_line(mcp_tool, 128)
        if server:
            attrs["cursor_watch.mcp.server"] = clean_line(server, 128)
        if call.tool != tool:
            attrs["cursor_watch.tool.agent_name"] = clean_line(call.tool, 128)
    session_id = getattr(getattr(run, "session", None), "session_id", None)
    if session_id:
        attrs["session.id"] = clean_id(session_id)
    if call.outcome:
        attrs["cursor_watch.tool.outcome"] = clean_line(call.outcome, 64)
    code = _int64(call.exit_code)
    if code is not None:
        attrs["process.exit.code"] = code
    if call.model_call_id:
        attrs["cursor_watch.model_call_id"] = clean_line(call.model_call_id)
    start, end = _call_times(run, call, ids, call_id, stream_times, now_ms)
    if not stream_times or getattr(call, "start_clock", None) == CLOCK_RECEIVED:
        attrs["cursor_watch.time_source"] = "received"
    parent = ids.span_id
    parent_call = getattr(call, "parent_call_id", None)
    if isinstance(parent_call, str) and parent_call and parent_call != call_id:
        parent = tool_span_id_of(ids.key, parent_call)
        extent = ids.spans.get(parent_call)
        if extent is not None:  # its parent's span went out already: inside it
            start = min(max(start, extent[0]), extent[1])
            end = min(max(end, start), extent[1])
    ids.spans[call_id] = (start, end)
    status = call.status
    if status == STATUS_SUCCESS:
        st: list = ["unset", ""]
    else:
        outcome = call.outcome if call.outcome and call.outcome not in ("success", "failure", "rejected") else ""
        error_type = clean_line(outcome, 64) if outcome else (status if status != STATUS_RUNNING else "incomplete")
        attrs["error.type"] = error_type
        if status == STATUS_INCOMPLETE or status == STATUS_RUNNING:
            desc = "still running when the run ended"
        elif status == STATUS_REJECTED or content:
            desc = r(call.detail) if call.detail else status
        elif code is not None and code != 0:
            desc = f"exit {code}"
        else:
            desc = outcome or status
        st = _status_error(error_type, desc)
    if content:
        if call.summary:
            attrs["cursor_watch.tool.summary"] = clean_line(r(call.summary), DETAIL_CAP)
        args, result = _payloads(run, call, redact)
        if args is not None:
            attrs["gen_ai.tool.call.arguments"] = attrs["input.value"] = _capped_json(args)
            attrs["input.mime_type"] = "application/json"
        if result is not None:
            attrs["gen_ai.tool.call.result"] = _capped_json(result)
            if isinstance(result, str):
                attrs["output.value"] = clean_content(result)
                attrs["output.mime_type"] = "text/plain"
            else:
                attrs["output.value"] = attrs["gen_ai.tool.call.result"]
                attrs["output.mime_type"] = "application/json"
    return {
        "n": f"execute_tool {tool}",
        "t": f"{ids.trace_id:032x}",
        "s": f"{tool_span_id_of(ids.key, call_id):016x}",
        "p": f"{parent:016x}",
        "k": "internal",
        "b": start,
        "e": end,
        "a": attrs,
        "st": st,
        "ev": [],
    }


def mcp_names(call: Any) -> tuple[str, str]:
    """``(server, tool)`` of an MCP call, ``("", "")`` for another call; the server is "" where the
    stream does not name it apart.

    Where each agent names them: Codex ``mcp_tool_call`` items carry ``server`` and ``tool``
    (``codex_exec_mcp_0_160.jsonl``: ``lean_beam`` / ``lean_sync``), which its adapter names the
    call ``SERVER.TOOL``; Claude Code names the tool
    ``mcp__SERVER__TOOL`` (``claude_stream_mcp_2_1.jsonl``); Cursor's ``mcpToolCall`` args have
    ``providerIdentifier`` and ``toolName``; Gemini CLI writes ``mcp_SERVER_TOOL`` with no way to
    tell where the server ends (the whole rest is the tool).
    """
    if getattr(call, "kind", None) != "mcp":
        return "", ""
    name = call.tool if isinstance(call.tool, str) else ""
    args = call.args if isinstance(call.args, dict) else {}
    server, tool = args.get("server"), args.get("tool")
    if isinstance(server, str) and isinstance(tool, str) and tool:
        return server, tool
    if name.startswith("mcp__"):
        parts = name.split("__", 2)
        if len(parts) == 3 and parts[2]:
            return parts[1], parts[2]
    tool = args.get("toolName") or args.get("name")
    if isinstance(tool, str) and tool:
        server = args.get("providerIdentifier")
        return (server if isinstance(server, str) else ""), tool
    if name.startswith("mcp_") and len(name) > 4:
        return "", name[4:]
    if "." in name:  # the Codex adapter's SERVER.TOOL (formats/codex.py), when the arguments are not kept
        server, _, tool = name.partition(".")
        if server and tool:
            return server, tool
    return "", name


def _call_times(run: Any, call: Any, ids: RunIds, call_id: str, stream_times: bool,
                now_ms: float | None) -> tuple[int, int]:
    """A tool span's ``(start, end)`` in ns, from one clock and never outside its run.

    The call's own times where known (the model keeps one clock per call). In a run whose stream
    gives times, a missing end is the run's last recorded time and a missing start its end (a
    span's place in its run, not a time the call was seen). In a run without times (Codex), the
    times the events were read live, else when this outlet saw the call begin and end (a
    replay: when it was read), else now (an export after the fact): never 0, never 1970.
    The run's span takes in what is recorded here (:meth:`RunIds.saw`).
    """
    now = now_ms if now_ms is not None else time.time() * 1000.0
    start, end = call.started_ms, call.completed_ms
    s = getattr(run, "session", None)
    if end is None:
        if stream_times:
            known = [t for t in (getattr(s, "last_ts_ms", None), ids.max_end_ms) if t is not None]
            end = max(known) if known else now
        elif call.status in (STATUS_RUNNING, STATUS_INCOMPLETE):
            known = [t for t in (getattr(s, "last_received_ms", None), ids.max_end_ms) if t is not None]
            end = max(known) if known else now
        else:
            end = now  # it ended when this was read (the outlet records a call as it ends)
    if start is None:
        start = ids.seen.pop(call_id, None) if not stream_times else None
        if start is None or start > end:
            start = end
    else:
        ids.seen.pop(call_id, None)
    end = max(start, end)
    b, e = _ns(start), _ns(end)
    if b is None or e is None:  # a time beyond what a span can hold (a hostile stream's): when read
        b = e = _ns(now) or 0
        start = end = now
    ids.saw(int(start), int(end))
    return b, max(b, e)


def _payloads(run: Any, call: Any, redact: Any = None) -> tuple[Any, Any]:
    """The call's full arguments and result, re-read from the source (None where not available),
    redacted with ``redact`` when given."""
    reread = getattr(run, "reread", None)
    if reread is None:
        return (redact.value(call.args) if redact is not None else call.args), None
    try:
        from ..stream.payloads import load_call_events

        args, result, _note = load_call_events(call, reread, getattr(run.session, "agent", None), redact)
    except Exception:  # noqa: BLE001 - a source that can't be read back: what the model kept
        return (redact.value(call.args) if redact is not None else call.args), None
    return args, result


def run_times(run: Any, ids: RunIds, now_ms: float) -> tuple[int, int]:
    """The run span's ``(start, end)`` in epoch ns: the run's true latency.

    In a stream with times, the end is the last time the stream recorded (its result's, where it
    has one) and the start the earlier of its first recorded time and ``end - duration_ms``, the
    duration the agent reports on its result (Cursor's and Claude Code's ``duration_ms``: a Cursor
    run's events carry times only near its end, so the first event's time alone gave 3 ms for a
    9.4 s run). In a run without times (Codex), when its events were read (live), else when this
    outlet saw it (a replay, an export), the start again no later than the end minus the reported
    duration. Always around every tool span of the run (:meth:`RunIds.saw`).
    """
    s = run.session
    if s.first_ts_ms is not None:
        starts = [t for t in (s.first_ts_ms, ids.min_start_ms) if t is not None]
        ends = [t for t in (s.last_ts_ms, ids.max_end_ms) if t is not None]
    else:
        starts = [t for t in (s.first_received_ms, ids.min_start_ms, ids.first_seen_ms) if t is not None]
        ends = [t for t in (s.last_received_ms, ids.max_end_ms, now_ms) if t is not None]
    duration = _int64(getattr(s.result, "duration_ms", None)) if s.result is not None else None
    if ends and duration is not None and duration > 0:
        starts.append(max(ends) - duration)
    start = _ns(min(starts)) if starts else None
    if start is None:  # (a time beyond what a span can hold: a hostile stream's)
        start = _ns(ids.first_seen_ms) or _ns(now_ms) or 0
    end = _ns(max(ends)) if ends else None
    return start, max(start, end if end is not None else start)


def final_text(session: Any) -> str | None:
    """The run's final text: the text its result reports (Cursor's ``result``, Claude Code's
    ``result``, Codex's last agent message), else its last assistant segment; None when it has
    neither."""
    result = session.result
    if result is not None and isinstance(result.text, str) and result.text:
        return result.text
    for seg in reversed(session.segments):
        if seg.text:
            return seg.text
    return None


def llm_span_id_of(key: str, model: str) -> int:
    """64-bit id of a run's ``chat {model}`` span: SHA-256("cursor-watch llm", key, model), 8 bytes (never 0)."""
    return int.from_bytes(_digest("cursor-watch llm", key, model)[:8], "big") or 1


def usage_attrs(usage: Any) -> dict[str, int]:
    """A :class:`~cursor_watch.core.canonical.Usage` as GenAI (``gen_ai.usage.*``) and OpenInference
    (``llm.token_count.*``) attributes, each count where known.

    GenAI v0.1.0 (``model/gen-ai/registry.yaml``): ``input_tokens`` includes the cached ones
    (cache read and cache creation are parts of it), ``output_tokens`` includes the reasoning ones
    (``reasoning.output_tokens`` is a part of it): Gemini CLI counts its thinking apart from its
    output, so there the output sent is output + thinking. OpenInference: ``prompt`` and
    ``completion`` the same, ``total`` every token once
    (:attr:`~cursor_watch.core.canonical.Usage.total_tokens`), ``prompt_details.cache_read`` /
    ``cache_write``, ``completion_details.reasoning``.
    """
    out: dict[str, int] = {}
    inp = _int64(usage.input_tokens)
    output = _int64(usage.output_tokens)
    reasoning = _int64(usage.reasoning_tokens)
    if output is not None and reasoning is not None and usage.reasoning_in_output is False:
        output = _int64(output + reasoning)
    for value, names in ((inp, ("gen_ai.usage.input_tokens", "llm.token_count.prompt")),
                         (output, ("gen_ai.usage.output_tokens", "llm.token_count.completion")),
                         (_int64(usage.cache_read_tokens), ("gen_ai.usage.cache_read.input_tokens",
                                                            "llm.token_count.prompt_details.cache_read")),
                         (_int64(usage.cache_write_tokens), ("gen_ai.usage.cache_creation.input_tokens",
                                                             "llm.token_count.prompt_details.cache_write")),
                         (reasoning, ("gen_ai.usage.reasoning.output_tokens",
                                      "llm.token_count.completion_details.reasoning"))):
        if value is not None and value >= 0:
            for name in names:
                out[name] = value
    total = _int64(usage.total_tokens)
    if total is not None and total >= 0:
        out["llm.token_count.total"] = total
    return out


def llm_records(run: Any, ids: RunIds, start: int, end: int) -> list[dict]:
    """The run's ``chat {model}`` spans (kind CLIENT, OpenInference kind LLM), children of the
    run span and as long as it: one per model where the agent reports usage per model (Claude
    Code's ``modelUsage``), else one for the run's model; none when the run reports neither usage nor a cost.

    The usage (:func:`usage_attrs`) is on these spans only, never on the run span, so a backend
    that sums a trace's tokens (Phoenix counts spans of kind LLM) counts each token once. The
    cost the agent reported goes with it as ``llm.cost.total`` (OpenInference) and
    ``gen_ai.usage.cost`` (Langfuse's name); where none is reported, an estimate from the price
    table (:func:`cursor_watch.core.costs.estimate`) goes only under ``cursor_watch.cost.estimate_usd``.
    """
    from ..core.costs import estimate, reported_cost

    s = run.session
    agent = agent_of(s)
    provider = PROVIDERS.get(agent, agent)
    result = s.result
    per_model = getattr(result, "model_usage", None) if result is not None else None
    entries: list[tuple[str, Any, float | None]] = []
    if per_model:
        for model, (usage, cost) in per_model.items():
            if usage is not None:
                entries.append((model, usage, cost if isinstance(cost, (int, float)) and cost >= 0 else None))
        if len(entries) == 1 and entries[0][2] is None:
            entries[0] = (entries[0][0], entries[0][1], reported_cost(s))
    if not entries:
        usage, cost = usage_of(s), reported_cost(s)
        if usage is None and cost is None:
            return []
        entries.append((s.model or "", usage, cost))  # (a cost without usage: Claude Code's mcp capture)
    out = []
    for model, usage, cost in entries:
        name = clean_line(model, 128) if model else ""
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "openinference.span.kind": "LLM",
            "llm.provider": provider,
        }
        if name:
            attrs["gen_ai.request.model"] = attrs["llm.model_name"] = name
        if s.session_id:
            attrs["session.id"] = clean_id(s.session_id)
        if usage is not None:
            attrs.update(usage_attrs(usage))
        if cost is not None:
            attrs["llm.cost.total"] = attrs["gen_ai.usage.cost"] = float(cost)
        elif usage is not None:
            guess = estimate(usage, model or None, s.rules.prices)
            if guess.estimate is not None:
                attrs["cursor_watch.cost.estimate_usd"] = float(guess.estimate)
                attrs["cursor_watch.cost.price_source"] = clean_line(guess.source, DETAIL_CAP)
        out.append({
            "n": f"chat {name}" if name else "chat",
            "t": f"{ids.trace_id:032x}",
            "s": f"{llm_span_id_of(ids.key, model):016x}",
            "p": f"{ids.span_id:016x}",
            "k": "client",
            "b": start,
            "e": end,
            "a": attrs,
            "st": ["unset", ""],
            "ev": [],
        })
    return out


def run_record(run: Any, ids: RunIds, *, content: bool = False, now_ms: float | None = None,
               redact: Any = None) -> dict:
    """The span record of a run (``invoke_agent``), built when it ends (see :func:`tool_record`)."""
    r = redact.text if redact is not None else _same
    s = run.session
    now_ms = now_ms if now_ms is not None else time.time() * 1000.0
    agent = agent_of(s)
    stream_times = s.first_ts_ms is not None
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": PROVIDERS.get(agent, agent),
        "gen_ai.agent.name": agent,
        "cursor_watch.run.index": int(run.index),
        "cursor_watch.run.status": s.status,
        "cursor_watch.source": clean_line(getattr(run, "source_label", "")),
        "cursor_watch.tool_calls": len(s.tool_calls),
        "cursor_watch.time_source": "stream" if stream_times else "received",
        "openinference.span.kind": "AGENT",
    }
    if s.session_id:
        attrs["gen_ai.conversation.id"] = clean_id(s.session_id)
    if s.model:
        attrs["gen_ai.request.model"] = clean_line(s.model)
    version = _version_of(s)
    if version:
        attrs["gen_ai.agent.version"] = version
    if s.cwd:
        attrs["cursor_watch.cwd"] = clean_line(s.cwd, 1024)
    if s.permission_mode:
        attrs["cursor_watch.permission_mode"] = clean_line(s.permission_mode, 64)
    for status in (STATUS_FAILURE, STATUS_REJECTED, STATUS_INCOMPLETE):
        n = s.tool_counts.get(status, 0)
        if n:
            attrs[f"cursor_watch.tool_calls.{status}"] = n
    if s.invalid_lines:
        attrs["cursor_watch.invalid_lines"] = s.invalid_lines
    code = _int64(s.exit_status)
    if code is not None:
        attrs["process.exit.code"] = code
    result = s.result
    if result is not None:
        if result.subtype:
            attrs["cursor_watch.result.subtype"] = clean_line(result.subtype, 64)
        if _int64(result.duration_ms) is not None:
            attrs["cursor_watch.result.duration_ms"] = result.duration_ms
        if result.request_id:
            attrs["cursor_watch.request_id"] = clean_line(result.request_id)
    if s.session_id:
        attrs["session.id"] = clean_id(s.session_id)
    start, end = run_times(run, ids, now_ms)
    if s.status == "success":
        st: list = ["unset", ""]
    elif s.status == "error":
        error_type = clean_line(result.subtype, 64) if result is not None and result.subtype else "error"
        attrs["error.type"] = error_type
        desc = (clean_content(r(result.text), DETAIL_CAP) if content and result is not None and result.text
                else "the run ended with an error result")
        st = _status_error(error_type, desc)
    else:
        attrs["error.type"] = "no_result"
        st = _status_error("no_result", f"the stream ended without a result after {s.events} events")
    events = []
    for note in _notes(s):
        ts = _ns(note.ts_ms)
        ev_attrs: dict[str, Any] = {"cursor_watch.note.kind": clean_line(note.kind, 64)}
        if note.subtype:
            ev_attrs["cursor_watch.note.subtype"] = clean_line(note.subtype, 64)
        if note.call_id:
            ev_attrs["gen_ai.tool.call.id"] = clean_id(note.call_id)
        if content or note.kind in ("retry", "connection", "source", "session"):
            ev_attrs["cursor_watch.note.text"] = clean_line(r(note.text), DETAIL_CAP)
        if ts is None:  # no time of its own, and not read live (a replay): OTLP's "unknown", 0
            ev_attrs["cursor_watch.time_source"] = "none"
        events.append([clean_line(note.kind, 64) or "note", ts if ts is not None else 0, ev_attrs])
    if content:
        prompt = r(s.prompt) if s.prompt is not None else None
        if prompt is not None:
            attrs["gen_ai.input.messages"] = _json_within(
                lambda n: [{"role": "user", "parts": [{"type": "text", "content": clean_content(prompt, n)}]}])
            attrs["input.value"] = clean_content(prompt)
            attrs["input.mime_type"] = "text/plain"
        thinking = r(s.thinking_text)
        segments = [r(seg.text) for seg in s.segments if seg.text]
        final = final_text(s)
        if final is not None:
            attrs["output.value"] = clean_content(r(final))
            attrs["output.mime_type"] = "text/plain"
        finish = None if result is None else ("error" if result.is_error else "stop")

        def output(n: int) -> list:
            parts = []
            if thinking:
                parts.append({"type": "reasoning", "content": clean_content(thinking, n)})
            for text in segments or [""]:  # each assistant segment a part of its own
                parts.append({"type": "text", "content": clean_content(text, n)})
            message: dict[str, Any] = {"role": "assistant", "parts": parts}
            if finish is not None:
                message["finish_reason"] = finish
            return [message]

        attrs["gen_ai.output.messages"] = _json_within(output)
    return {
        "n": f"invoke_agent {agent}",
        "t": f"{ids.trace_id:032x}",
        "s": f"{ids.span_id:016x}",
        "p": None,
        "k": "client",
        "b": start,
        "e": end,
        "a": attrs,
        "st": st,
        "ev": events,
    }


def _notes(session: Any) -> list:
    notes = session.notes
    n = len(notes)
    return list(notes[: min(n, MAX_EVENTS)]) if n else []


def run_records(run: Any, *, content: bool = False, now_ms: float | None = None, redact: Any = None) -> list[dict]:
    """Every span record of a finished run, tool calls first and the run span last (the
    ``--export PATH.otlp.json`` path, which reads the final model; ``redact``: see :func:`tool_record`)."""
    s = run.session
    now_ms = now_ms if now_ms is not None else time.time() * 1000.0
    ids = RunIds(key_of(run), now_ms)
    stream_times = s.first_ts_ms is not None
    calls = list(s.tool_calls.values())
    out = [tool_record(run, call, ids, content=content, now_ms=now_ms, stream_times=stream_times, redact=redact)
           for call in calls]
    record = run_record(run, ids, content=content, now_ms=now_ms, redact=redact)
    out.extend(llm_records(run, ids, record["b"], record["e"]))
    out.append(record)
    return out


# -- the outlet --------------------------------------------------------------------------------

class OtlpOutlet:
    """The ``--otlp`` view: model changes in, span records out to a sink (see module doc).

    A tool span is recorded when its call stops running (``tool_done``), the run span when
    the run ends: at its ``result`` for a run that ``ends_at_result`` says is live and goes on
    being read (a followed file, a pipe: the stream may stay open long after), else at its
    ``end`` (a replayed file; a spawned command, whose exit status comes with its end). A run
    cursor-watch stopped watching while it went on (``Run.observed_until_stop``) gets no run
    span, and its calls still running no span either: it has not ended, and the spans a later
    replay of its finished log sends (the same ids) complete the trace; an ERROR span saying it
    ended without a result would be false. ``observe`` never raises and never blocks: a record
    that can't be built is counted in :attr:`errors`.

    Args:
        sink: takes each record (:class:`ProcessSink` in use, an in-process one in tests).
        content: record content (see module doc).
        clock: epoch-ms clock (tests freeze it).
        ends_at_result: ``run -> bool``: send the run span at its result (None: never, at its end).
        redact: a :class:`~cursor_watch.outlets.redact.Redactor` for the texts sent (None: ``--no-redact``).
    """

    def __init__(self, sink: Any, content: bool = False, clock: Callable[[], float] | None = None,
                 ends_at_result: Callable[[Any], bool] | None = None, endpoint: str | None = None,
                 redact: Any = None) -> None:
        self.sink = sink
        self.endpoint = endpoint  # --otlp-endpoint, for messages (None: the SDK's variables)
        self.content = content
        self.redact = redact
        self._clock = clock or (lambda: time.time() * 1000.0)
        self.ends_at_result = ends_at_result
        self._runs: dict[int, tuple[Any, RunIds]] = {}
        self.records = 0
        self.errors = 0
        self.last_error = ""
        self.runs = 0  # run spans recorded
        self.first_run_ms: int | None = None  # the earliest and latest start of those runs (epoch ms)
        self.last_run_ms: int | None = None

    def ids_of(self, run: Any) -> RunIds:
        """The run's ids (fixed at its first span)."""
        got = self._runs.get(id(run))
        if got is not None and got[0] is run:
            return got[1]
        ids = RunIds(key_of(run), self._clock())
        self._runs[id(run)] = (run, ids)
        return ids

    loop_free = False  # its exporter process is fed by a thread; a replay without a loop never has it
    tick_s = 1.0

    def tick(self) -> None:
        """Nothing between events: spans are recorded as the runs change."""

    def observe(self, run: Any, changes: list[tuple[str, Any]]) -> None:
        """Take a batch of the run's changes (``Watch`` calls it after the views)."""
        for change in changes:
            kind = change[0]
            if kind == "tool_started":
                try:
                    self.ids_of(run).seen.setdefault(change[1], self._clock())
                except Exception as err:  # noqa: BLE001 - the outlet must never stop the watch
                    self.errors += 1
                    self.last_error = f"{type(err).__name__}: {err}"
            elif kind == "tool_done" or kind == "end" or kind == "result":
                try:
                    if kind == "end":
                        self._end(run)
                    elif kind == "result":
                        self._result(run)
                    else:
                        self._tool_done(run, change[1])
                except Exception as err:  # noqa: BLE001 - the outlet must never stop the watch
                    self.errors += 1
                    self.last_error = f"{type(err).__name__}: {err}"

    def _result(self, run: Any) -> None:
        if self.ends_at_result is not None and self.ends_at_result(run):
            self._end(run)

    def _tool_done(self, run: Any, call_id: str) -> None:
        call = run.session.tool_calls.get(call_id)
        if call is None:
            return
        if call.status == STATUS_INCOMPLETE and run.cut_short:
            return  # still running when we stopped watching: not incomplete, its end is not known
        ids = self.ids_of(run)
        record = tool_record(run, call, ids, content=self.content, now_ms=self._clock(),
                             stream_times=run.session.first_ts_ms is not None, redact=self.redact)
        ids.sent += 1
        self._put(record)

    def _end(self, run: Any) -> None:
        s = run.session
        if not s.events and not s.invalid_lines and not s.tool_calls:
            return  # nothing was read (an empty file, a command that printed nothing): no trace
        if run.cut_short:
            return  # we stopped watching while it went on: it did not end (see the class doc)
        ids = self.ids_of(run)
        if ids.ended:
            return
        ids.ended = True
        record = run_record(run, ids, content=self.content, now_ms=self._clock(), redact=self.redact)
        for llm in llm_records(run, ids, record["b"], record["e"]):
            self._put(llm)
        self._put(record)
        self.runs += 1
        begin = record["b"] // 1_000_000
        self.first_run_ms = begin if self.first_run_ms is None else min(self.first_run_ms, begin)
        self.last_run_ms = begin if self.last_run_ms is None else max(self.last_run_ms, begin)

    def _put(self, record: dict) -> None:
        self.records += 1
        self.sink.put(record)

    def status(self) -> dict:
        """How the export is going, while it goes (the TUI's diagnostics read it each second).

        Returns:
            ``{"records": spans recorded, "unsent": of those, spans known not sent so far (the
            exporter's failed exports, spans dropped while it was behind), "dropped": the
            latter, "errors": spans that could not be built (not recorded), "error": the last
            reason or ""}``: the counts of :func:`report_line`'s report, so far.
        """
        sink = self.sink
        dropped = int(getattr(sink, "dropped", 0))
        return {"records": self.records, "unsent": int(getattr(sink, "failed", 0)) + dropped, "dropped": dropped,
                "errors": self.errors, "error": getattr(sink, "error", "") or (self.last_error if self.errors else "")}

    def close(self) -> dict:
        """End the export (bounded, see :class:`ProcessSink`); returns the sink's report."""
        report = self.sink.close()
        report["records"] = self.records
        report["errors"] = self.errors
        report["runs"] = self.runs
        report["first_run_ms"] = self.first_run_ms
        report["last_run_ms"] = self.last_run_ms
        if self.errors and not report.get("error"):
            report["error"] = self.last_error
        return report


def _date(ms: int) -> str:
    from datetime import datetime, timezone

    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):  # a hostile stream's timestamp_ms
        return f"timestamp_ms {ms} (not a date)"


def sent_line(report: dict, where: str) -> str:
    """What the watch sent, said when it ends: ``--otlp: N spans of M runs sent to URL (runs dated
    FROM to TO)`` (N: spans the backend accepted; the runs' start times, UTC to the minute):
    a backend's trace list opens on a recent time range, and runs replayed from old logs are
    where their dates put them."""
    line = f"--otlp: {report.get('ok', 0)} spans of {report.get('runs', 0)} runs sent to {where}"
    first, last = report.get("first_run_ms"), report.get("last_run_ms")
    if first is not None and last is not None:
        line += f" (runs dated {_date(first)} to {_date(last)})"
    return line


def report_line(report: dict, where: str) -> str | None:
    """The stderr line for a report (None when every span was sent)."""
    return unsent_line(report.get("records", 0) - report.get("ok", 0), report, where)


def status_line(status: dict, where: str) -> str | None:
    """The diagnostics line for :meth:`OtlpOutlet.status` while the watch goes on (None when
    nothing is known to be unsent): ``--otlp: 3 of 12 spans could not be sent to URL so far (reason)``."""
    return unsent_line(status.get("unsent", 0), status, where, so_far=True)


def unsent_line(unsent: int, counts: dict, where: str, so_far: bool = False) -> str | None:
    """``--otlp: N of M spans could not be sent to WHERE[ so far]; K dropped while the exporter
    was behind; E could not be built (reason)``: ``unsent`` of ``counts["records"]``, with its
    ``dropped``, ``errors`` and ``error``; None when nothing is unsent and nothing failed to build."""
    errors = counts.get("errors") or 0
    if unsent <= 0 and not errors:
        return None
    bits = [f"--otlp: {unsent} of {counts.get('records', 0)} spans could not be sent to {where}"
            + (" so far" if so_far else "")]
    if counts.get("dropped"):
        bits.append(f"{counts['dropped']} dropped while the exporter was behind")
    if errors:
        bits.append(f"{errors} could not be built")
    line = "; ".join(bits)
    if counts.get("error"):
        line += f" ({clean_line(counts['error'], 300)})"
    return line


class ProcessSink:
    """Hands records to the exporter process (``python -m cursor_watch.outlets.otlp_sdk``).

    :meth:`put` serialises a record (orjson) into a bounded buffer and returns at once; a
    writer thread feeds the child's stdin; a reader thread takes the child's progress lines
    (``{"ok": n, "failed": n, "error": text}``) from its stdout. The child runs in its own
    session (a Ctrl+C in the terminal reaches only the watch, which then flushes it).

    Args:
        endpoint: ``--otlp-endpoint`` (None: the SDK's variables and defaults).
        env: environment of the child (default ``os.environ``).
        max_pending: bytes of records that may wait (beyond: dropped and counted).
    """

    def __init__(self, endpoint: str | None = None, env: dict[str, str] | None = None,
                 max_pending: int = MAX_PENDING_BYTES, stall_s: float = FLUSH_STALL_S,
                 max_s: float = EXIT_WAIT_S) -> None:
        env = dict(os.environ if env is None else env)
        proto = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                 or "http/protobuf").strip().lower()
        endpoint_env(env, endpoint, proto)
        self.max_pending = max_pending
        self.stall_s = stall_s
        self.max_s = max_s
        self._buf: deque[bytes] = deque()
        self._pending = 0
        self._cond = threading.Condition()
        self._closing = False
        self.dropped = 0
        self.written = 0  # records handed to the child
        self.ok = 0
        self.failed = 0
        self.error = ""
        self.done = False
        self.ready = False  # the exporter process has set the SDK up
        self._progress_at = time.monotonic()
        self._stderr: deque[str] = deque(maxlen=20)
        pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the folder cursor_watch/ is in
        env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cursor_watch.outlets.otlp_sdk"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, start_new_session=True, close_fds=True)
        self._writer = threading.Thread(target=self._write_loop, name="otlp-writer", daemon=True)
        self._reader = threading.Thread(target=self._read_loop, name="otlp-reader", daemon=True)
        self._errors = threading.Thread(target=self._stderr_loop, name="otlp-stderr", daemon=True)
        self._writer.start()
        self._reader.start()
        self._errors.start()

    def put(self, record: dict) -> None:
        """Queue one record (never blocks; dropped and counted when the buffer is full)."""
        data = orjson.dumps(record) + b"\n"
        with self._cond:
            if self._closing or self._pending + len(data) > self.max_pending:
                self.dropped += 1
                return
            self._buf.append(data)
            self._pending += len(data)
            self._cond.notify()

    def _write_loop(self) -> None:
        stdin = self.proc.stdin
        try:
            while True:
                with self._cond:
                    while not self._buf and not self._closing:
                        self._cond.wait()
                    if not self._buf and self._closing:
                        break
                    batch = list(self._buf)
                    self._buf.clear()
                    self._pending = 0
                stdin.write(b"".join(batch))
                stdin.flush()
                self.written += len(batch)
        except (OSError, ValueError):  # the child died (or was stopped): the rest is unsent
            with self._cond:
                self._buf.clear()
                self._pending = 0
        finally:
            try:
                stdin.close()
            except (OSError, ValueError):
                pass

    def _read_loop(self) -> None:
        for line in self.proc.stdout:
            try:
                msg = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(msg, dict):
                continue
            ok, failed = int(msg.get("ok", self.ok)), int(msg.get("failed", self.failed))
            if ok > self.ok or msg.get("done"):
                # progress is spans delivered: failures and retry warnings are not (a dead
                # backend with a backlog would otherwise hold the exit for EXIT_WAIT_S)
                self._progress_at = time.monotonic()
            self.ok, self.failed = ok, failed
            if msg.get("error"):
                self.error = str(msg["error"])
            if msg.get("ready"):
                self.ready = True
                self._progress_at = time.monotonic()
            if msg.get("done"):
                self.done = True

    def _stderr_loop(self) -> None:
        for line in self.proc.stderr:
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def close(self) -> dict:
        """Send what is queued, let the child flush, stop it (bounded), and report.

        Waits while the child delivers spans: at most ``stall_s`` without a delivery (counted
        from when it is ready: importing the SDK may take seconds) and ``max_s`` in all, its
        start included (:data:`EXIT_WAIT_S`: a few seconds, whatever the backend does); then the
        child is terminated (killed after :data:`STOP_S`). What it had not sent by then is
        reported as unsent.

        Returns:
            ``{"ok", "failed", "dropped", "written", "error", "done"}``.
        """
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        start = time.monotonic()
        self._progress_at = max(self._progress_at, start)
        while True:
            if self.proc.poll() is not None:
                self._reader.join(1.0)
                break
            now = time.monotonic()
            if now - start > self.max_s:
                break
            if self.ready and now - self._progress_at > self.stall_s:
                break
            time.sleep(0.02)
        stopped = self.proc.poll() is None
        if stopped:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.done and not self.error:
            tail = [line for line in self._stderr if line.strip()]
            if stopped:
                what = "sending" if self.ready else "starting (importing the SDK)"
                self.error = f"the exporter was still {what} when the {self.max_s:g} s exit wait ended"
            elif tail:
                self.error = tail[-1]
            elif self.proc.returncode not in (0, None):
                self.error = "the exporter stopped before it finished"
        return {"ok": self.ok, "failed": self.failed, "dropped": self.dropped, "written": self.written,
                "error": self.error, "done": self.done}


def make_outlet(endpoint: str | None, content: bool, redact: Any = None) -> OtlpOutlet:
    """The ``--otlp`` outlet with its exporter process started (``redact``: see :class:`OtlpOutlet`).

    Raises:
        OtlpUnavailable: the ``[otel]`` extra is missing, or the protocol is not supported.
    """
    check_available()
    return OtlpOutlet(ProcessSink(endpoint), content=content, endpoint=endpoint, redact=redact)


def start_for(endpoint: str | None, redact: bool, watch: Any) -> OtlpOutlet:
    """``--otlp`` for a watch (any mode): start the outlet (its exporter process) for ``watch``'s
    runs; :func:`cursor_watch.outlets.wiring.start_outlets` attaches it.

    ``endpoint``: ``--otlp-endpoint`` (None: the SDK's variables); ``redact``: False with
    ``--no-redact``.
    """
    from .redact import redactor_for

    outlet = make_outlet(endpoint, content_from_env(), redactor_for(redact))

    def ends_at_result(run: Any) -> bool:
        feed = watch.feed_of(run)
        return feed is not None and feed.source.kind in ("follow", "stdin")

    outlet.ends_at_result = ends_at_result
    return outlet


def finish_for(endpoint: str | None, outlet: OtlpOutlet | None, error: Callable[[str], None] | None = None) -> None:
    """End the export (bounded) and say on stderr what was sent (:func:`sent_line`), then how many
    spans could not be sent, and why (:func:`report_line`, only when some were not)."""
    if outlet is None:
        return
    report = outlet.close()
    where = describe_endpoint(endpoint, protocol())
    if error is None:
        from ..output import error_line as error
    error(sent_line(report, where))
    line = report_line(report, where)
    if line:
        error(line)
