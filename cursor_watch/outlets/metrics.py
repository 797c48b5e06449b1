"""``--metrics [HOST:]PORT``: Prometheus metrics of every run the watch sees (an outlet, like ``--otlp``).

The outlet (:class:`MetricsOutlet`) reads the model's changes like any view (``Watch`` calls
:meth:`MetricsOutlet.observe` with each batch of each run, live or replayed) and counts them in
a ``prometheus_client`` registry of its own; :class:`MetricsServer` serves that registry over
HTTP (``GET /metrics``, Prometheus's text format) from threads of its own. ``prometheus-client``
is an optional extra (``pip install 'cursor-watch[metrics]'``); without it ``--metrics`` says so
on one line and exits 2.

**What is counted, and when.** A run is counted once, when it ends: at its ``result`` (the run
end the agent reports), else at the end of its input (outcome ``incomplete``); a run cursor-watch
stopped watching while it went on (``Run.observed_until_stop``) is not counted: it did not end. A
tool call is counted when it stops running. Tokens, cost and the run's duration are counted with
the run, from the figures the summary gives (``--summary --json``'s ``result``; see below):

===================================================  =========  ==========================  ==============================
metric                                               type       labels                      what
===================================================  =========  ==========================  ==============================
``cursor_watch_runs_total``                          counter    agent, model, outcome       runs that ended: ``success``,
                                                                                            ``error``, ``incomplete``
``cursor_watch_tool_calls_total``                    counter    agent, tool, outcome        tool calls that ended:
                                                                                            ``success``, ``failure``,
                                                                                            ``rejected``, ``incomplete``
``gen_ai_invoke_agent_duration_seconds``             histogram  agent, model, outcome       a run's duration (its reported
                                                                                            ``duration_ms``, else its
                                                                                            stream's times)
``gen_ai_execute_tool_duration_seconds``             histogram  agent, tool                 a tool call's duration
``gen_ai_client_token_usage``                        histogram  agent, model, type          a run's tokens of each type
``cursor_watch_cost_reported_usd_total``             counter    agent, model                the cost the agent reported
``cursor_watch_cost_estimated_usd_total``            counter    agent, model                the estimate (usage x prices)
                                                                                            of runs that reported none
``cursor_watch_runs_live``                           gauge      agent                       live runs now
``cursor_watch_runs_waiting``                        gauge      agent                       ... waiting for an answer
``cursor_watch_runs_stalled``                        gauge      agent                       ... stalled (guard.stall_of)
===================================================  =========  ==========================  ==============================

The ``gen_ai_*`` names are OpenTelemetry's GenAI metrics turned into Prometheus names (dots to
underscores, the unit ``s`` as ``_seconds``, an annotation unit like ``{token}`` dropped):
``gen_ai.client.token.usage`` of semantic conventions :data:`TOKENS_SEMCONV_VERSION`
(``docs/gen-ai/gen-ai-metrics.md``), ``gen_ai.invoke_agent.duration`` and
``gen_ai.execute_tool.duration`` of open-telemetry/semantic-conventions-genai
(``docs/gen-ai/gen-ai-metrics.md``, status Development), with their advised bucket boundaries,
extended by doublings to cover runs of hours and tool calls of minutes. The labels are short
names for the conventions' attributes: ``agent`` is ``gen_ai.agent.name`` (``cursor``,
``claude-code``, ``codex``, ``gemini-cli``), ``model`` ``gen_ai.request.model``, ``tool``
``gen_ai.tool.name``, ``type`` ``gen_ai.token.type``.

**Token types** have the canonical meaning (:class:`cursor_watch.core.canonical.Usage`): ``input``
(every prompt token, cached ones included) and ``output`` (generated tokens, reasoning included:
a Gemini CLI run's thinking, which it counts apart, is added, as it is billed as output) are the
convention's two; ``cache_read`` and ``cache_write`` are parts of ``input``, ``reasoning`` a part
of ``output``, where the agent reports them. ``input`` + ``output`` is every token once
(:attr:`~cursor_watch.core.canonical.Usage.total_tokens`); never add the parts to them. The figures
are the run's usage as budgets and the views read it (:func:`cursor_watch.core.costs.usage_of`: its
result's ``usage``, the summary's, else the usage the agent reported as it went), under the
run's model (Claude Code's per-model ``modelUsage`` is a session's running total, so it is not
added run by run).

**Cost** reported and estimated are two metrics, never one: a run that reports its cost (Claude
Code's ``total_cost_usd``) adds to ``..._reported_...``, one that does not adds its estimate
(:func:`cursor_watch.core.costs.run_cost`: usage x the price table) to ``..._estimated_...`` when its
model has a price. Their sum counts each run once.

**Label values are bounded**: the agent, the model and the tool name as the agent writes them
(MCP tools by server and tool), outcomes from closed lists: no prompt, session id, call id, path
or time. Each is cut to :data:`LABEL_CHARS` characters (control characters replaced), and a
label takes at most :data:`MAX_VALUES` distinct values per watch (more become ``_other``), so a
week of ``-f logs/`` keeps the series count flat whatever the logs hold.

**A scraper never holds the watch up**: the server answers from its own threads (the watch
only adds to counters); each connection has :data:`REQUEST_TIMEOUT_S` to send its request and
take the answer, at most :data:`MAX_CONNECTIONS` are served at once (more are closed at once),
and a connection's errors are counted, never printed (a traceback would break the TUI).
"""

from __future__ import annotations

import importlib.util
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from ..core.costs import reported_cost, run_cost, usage_of
from ..core.limits import DISPLAY_STALL_S, RunTimes, stall_of
from ..core.tools import STATUS_INCOMPLETE

TOKENS_SEMCONV_VERSION = "1.41.0"  # semantic conventions of gen_ai.client.token.usage and gen_ai.token.type here
DEFAULT_HOST = "127.0.0.1"  # loopback unless HOST says otherwise
LABEL_CHARS = 128  # characters of a label value
MAX_VALUES = {"agent": 16, "model": 64, "tool": 256}  # distinct values per label (beyond: OTHER)
OTHER = "_other"  # the value past the bound (OpenTelemetry's error.type fallback is `_OTHER`)
UNKNOWN = "unknown"  # an agent or model the stream does not name
TICK_S = 1.0  # the live, waiting and stalled gauges are recomputed at most this often
REQUEST_TIMEOUT_S = 10.0  # a connection's socket timeout: to send its request, and to take the answer
MAX_CONNECTIONS = 16  # connections served at once (more are closed at once)
POLL_S = 0.1  # the server's loop checks for shutdown this often (the exit waits at most this)

# gen_ai.invoke_agent.duration's advised boundaries (s), then doublings to ~1.8 h
RUN_BUCKETS = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6, 819.2, 1638.4, 3276.8,
               6553.6)
# gen_ai.execute_tool.duration's advised boundaries (s), then doublings to ~11 min
TOOL_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84,
                327.68, 655.36)
# gen_ai.client.token.usage's advised boundaries (tokens)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
TOKEN_TYPES = ("input", "output", "cache_read", "cache_write", "reasoning")

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ADDRESS = re.compile(r"^(?:(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]+)):)?(?P<port>\d{1,5})$")


class MetricsUnavailable(Exception):
    """``prometheus-client`` (the ``[metrics]`` extra) is not installed; the message is one line."""


class MetricsListenError(Exception):
    """The server can't listen on the address (in use, not this machine's, not allowed): one line."""


def parse_address(text: str) -> tuple[str, int]:
    """``--metrics``'s ``[HOST:]PORT``: ``9464``, ``0.0.0.0:9464``, ``[::1]:9464`` -> ``(host, port)``;
    the host is :data:`DEFAULT_HOST` when not given; port 0 asks for any free port.

    Raises:
        ValueError: not ``[HOST:]PORT``, or a port past 65535 (the message is one line).
    """
    match = _ADDRESS.match(text.strip())
    if match is None:
        raise ValueError(f"--metrics: {text!r} is not [HOST:]PORT (e.g. 9464, 127.0.0.1:9464, [::1]:9464)")
    port = int(match["port"])
    if port > 65535:
        raise ValueError(f"--metrics: port {port} is past 65535")
    return match["v6"] or match["host"] or DEFAULT_HOST, port


def check_available() -> None:
    """Raise :class:`MetricsUnavailable` when ``prometheus_client`` can't be imported (looked up
    with ``importlib.util.find_spec``, not imported)."""
    if importlib.util.find_spec("prometheus_client") is None:
        raise MetricsUnavailable("--metrics needs prometheus-client: pip install 'cursor-watch[metrics]'")


def is_loopback(host: str) -> bool:
    """``127.0.0.0/8``, ``::1`` and ``localhost``: only this machine can connect."""
    return host in ("localhost", "::1") or host.startswith("127.")


def url_of(host: str, port: int) -> str:
    """``http://HOST:PORT/metrics`` (an IPv6 address in brackets)."""
    return f"http://[{host}]:{port}/metrics" if ":" in host else f"http://{host}:{port}/metrics"


class _Bounded:
    """Label values as the metrics take them: cleaned, cut, and at most ``MAX_VALUES[label]``
    distinct ones (then :data:`OTHER`)."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, str]] = {name: {} for name in MAX_VALUES}

    def value(self, label: str, raw: Any) -> str:
        known = self.seen[label]
        text = raw if isinstance(raw, str) and raw else UNKNOWN
        got = known.get(text)
        if got is not None:
            return got
        clean = _CONTROLS.sub("?", text)[:LABEL_CHARS].strip() or UNKNOWN
        if len(known) >= MAX_VALUES[label]:
            return OTHER  # (not remembered: the map stays bounded too)
        known[text] = clean
        return clean


def _seconds(ms: Any) -> float | None:
    return ms / 1000.0 if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms >= 0 else None


class _Live:
    """A run read from a live source, until it ends: its arrival times (:class:`guard.RunTimes`)."""

    __slots__ = ("run", "times", "from_start")

    def __init__(self, run: Any, times: RunTimes, from_start: bool) -> None:
        self.run = run
        self.times = times
        self.from_start = from_start  # live from its first batch: the watcher's clock spans it all


class MetricsOutlet:
    """The ``--metrics`` view: model changes in, Prometheus counters out (see the module doc).

    ``observe`` never raises and never blocks (a batch that can't be counted is counted in
    :attr:`errors`); ``tick`` recomputes the live, waiting and stalled gauges and must be called
    from the thread that applies the changes (the event loop: a run's model is not read from
    the server's threads).

    Args:
        registry: the ``prometheus_client.CollectorRegistry`` the metrics go into (a new one
            by default: the process's global registry is not touched).
        clock: epoch-ms clock (tests freeze it).
        stall_s: seconds that make a live run stalled (``--stall``; default the display's 5 min).
        live_of: ``run -> bool``: the run is read from a live source now (a pipe, a spawned
            command, a followed file once caught up); None: every run is a replay.
    """

    loop_free = True  # observe needs no event loop: Watch.replay may run with it
    tick_s = TICK_S

    def __init__(self, registry: Any = None, clock: Callable[[], float] | None = None,
                 stall_s: float | None = None, live_of: Callable[[Any], bool] | None = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        from prometheus_client import disable_created_metrics

        disable_created_metrics()  # no `_created` series beside each counter and histogram
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self._clock = clock or (lambda: time.time() * 1000.0)
        self.stall_s = stall_s or DISPLAY_STALL_S
        self.live_of = live_of
        self.errors = 0
        self.last_error = ""
        reg = self.registry
        self.runs = Counter("cursor_watch_runs", "Runs that ended, by agent, model and outcome "
                            "(success, error, incomplete: ended without a result)",
                            ("agent", "model", "outcome"), registry=reg)
        self.tool_calls = Counter("cursor_watch_tool_calls", "Tool calls that ended, by agent, tool (as the agent "
                                  "names it) and outcome (success, failure, rejected, incomplete)",
                                  ("agent", "tool", "outcome"), registry=reg)
        self.run_duration = Histogram("gen_ai_invoke_agent_duration_seconds", "Duration of the runs that ended "
                                      "(gen_ai.invoke_agent.duration): the agent's reported duration, else the span "
                                      "of its stream's times", ("agent", "model", "outcome"), buckets=RUN_BUCKETS,
                                      registry=reg)
        self.tool_duration = Histogram("gen_ai_execute_tool_duration_seconds", "Duration of the tool calls that "
                                       "ended (gen_ai.execute_tool.duration)", ("agent", "tool"),
                                       buckets=TOOL_BUCKETS, registry=reg)
        self.tokens = Histogram("gen_ai_client_token_usage", "Tokens of the runs that ended, by type "
                                "(gen_ai.client.token.usage): input (cached included), output (reasoning "
                                "included); cache_read and cache_write are parts of input, reasoning of output",
                                ("agent", "model", "type"), buckets=TOKEN_BUCKETS, registry=reg)
        self.cost_reported = Counter("cursor_watch_cost_reported_usd", "Cost the agents reported for the runs "
                                     "that ended (USD)", ("agent", "model"), registry=reg)
        self.cost_estimated = Counter("cursor_watch_cost_estimated_usd", "Estimated cost (usage x prices) of the "
                                      "runs that ended without a reported cost (USD)", ("agent", "model"),
                                      registry=reg)
        self.live = Gauge("cursor_watch_runs_live", "Runs read live now (a pipe, a command, a followed file) "
                          "that have not ended", ("agent",), registry=reg)
        self.waiting = Gauge("cursor_watch_runs_waiting", "Live runs waiting for an answer now (an interaction "
                             "query)", ("agent",), registry=reg)
        self.stalled = Gauge("cursor_watch_runs_stalled", "Live runs stalled now (no event, or one tool call "
                             "running, for the stall duration)", ("agent",), registry=reg)
        self._labels = _Bounded()
        self._children: dict[tuple, Any] = {}
        # ids of the runs seen and counted (the watch keeps every run alive: an id is never reused)
        self._seen: set[int] = set()
        self._counted: set[int] = set()
        self._live: dict[int, _Live] = {}
        self._ticked_ms = 0.0
        self._gauge_agents: set[str] = set()

    # -- label children, made once -------------------------------------------------------------

    def _child(self, metric: Any, *values: str) -> Any:
        key = (id(metric), values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def _agent(self, session: Any) -> str:
        return self._labels.value("agent", session.agent)

    # -- changes ---------------------------------------------------------------------------------

    def observe(self, run: Any, changes: list[tuple[str, Any]]) -> None:
        """Take a batch of the run's changes (``Watch`` calls it after the views)."""
        try:
            key = id(run)
            entry = self._live.get(key)
            first = key not in self._seen
            if first:
                self._seen.add(key)
            if entry is None and key not in self._counted and self.live_of is not None and self.live_of(run):
                # live from its first batch: the watcher's clock spans the whole run
                entry = self._live[key] = _Live(run, RunTimes(self._clock()), first)
            if entry is not None:
                entry.times.observe(run.session, changes, self._clock(), True)
            for kind, arg in changes:
                if kind == "tool_done":
                    self._tool_done(run, arg)
                elif kind == "result" or kind == "end":
                    self._run_done(run)
        except Exception as err:  # noqa: BLE001 - the outlet must never stop the watch
            self.errors += 1
            self.last_error = f"{type(err).__name__}: {err}"

    def _tool_done(self, run: Any, call_id: str) -> None:
        call = run.session.tool_calls.get(call_id)
        if call is None:
            return
        if call.status == STATUS_INCOMPLETE and run.cut_short:
            return  # still running when we stopped watching: its end is not known
        agent = self._agent(run.session)
        tool = self._labels.value("tool", call.tool)
        self._child(self.tool_calls, agent, tool, call.status).inc()
        seconds = _seconds(call.duration_ms)
        if seconds is not None:
            self._child(self.tool_duration, agent, tool).observe(seconds)

    def _run_done(self, run: Any) -> None:
        key = id(run)
        if key in self._counted:
            return
        s = run.session
        if s.result is None and not s.ended:
            return
        live = self._live.pop(key, None)
        if run.cut_short:
            return  # we stopped watching while it went on: it did not end
        if not s.events and not s.invalid_lines and not s.tool_calls:
            return  # nothing was read (an empty file, a command that printed nothing)
        self._counted.add(key)
        agent = self._agent(s)
        if agent not in self._gauge_agents:
            self._gauge_agents.add(agent)
            self.tick(force=True)  # its live, waiting and stalled gauges exist from now on (0 in a replay)
        model = self._labels.value("model", s.model)
        outcome = s.status if s.status in ("success", "error") else "incomplete"
        self._child(self.runs, agent, model, outcome).inc()
        seconds = _seconds(s.duration_ms())
        if seconds is None and live is not None and live.from_start:
            seconds = max(0.0, self._clock() - live.times.seen_ms) / 1000.0  # a live run without times
        if seconds is not None:
            self._child(self.run_duration, agent, model, outcome).observe(seconds)
        for kind, count in token_counts(usage_of(s)):
            self._child(self.tokens, agent, model, kind).observe(count)
        reported = reported_cost(s)
        if reported is not None:
            self._child(self.cost_reported, agent, model).inc(reported)
        else:
            cost = run_cost(s)
            if cost.estimate is not None and cost.estimate >= 0:
                self._child(self.cost_estimated, agent, model).inc(float(cost.estimate))

    # -- gauges ----------------------------------------------------------------------------------

    def tick(self, now_ms: float | None = None, force: bool = False) -> None:
        """Recompute the live, waiting and stalled gauges (at most every :data:`TICK_S` unless
        ``force``); call it from the thread that applies the changes."""
        now = self._clock() if now_ms is None else now_ms
        if not force and now - self._ticked_ms < TICK_S * 1000.0:
            return
        self._ticked_ms = now
        try:
            counts: dict[str, list[int]] = {agent: [0, 0, 0] for agent in self._gauge_agents}
            for key, entry in list(self._live.items()):
                run, times = entry.run, entry.times
                s = run.session
                if s.ended or s.result is not None or run.cut_short:
                    continue  # (dropped when its end is observed)
                agent = self._agent(s)
                row = counts.setdefault(agent, [0, 0, 0])
                row[0] += 1
                if times.open_queries:
                    row[1] += 1
                elif stall_of(s, times, now, self.stall_s) is not None:
                    row[2] += 1
            for agent, (live, waiting, stalled) in counts.items():
                self._gauge_agents.add(agent)
                self._child(self.live, agent).set(live)
                self._child(self.waiting, agent).set(waiting)
                self._child(self.stalled, agent).set(stalled)
        except Exception as err:  # noqa: BLE001 - the outlet must never stop the watch
            self.errors += 1
            self.last_error = f"{type(err).__name__}: {err}"


def token_counts(usage: Any) -> list[tuple[str, int]]:
    """``[(type, tokens)]`` of a run's :class:`~cursor_watch.core.canonical.Usage` for
    ``gen_ai_client_token_usage`` (the types the agent reports; see the module doc): ``output``
    includes reasoning an agent counts apart from it (Gemini CLI)."""
    if usage is None:
        return []
    out = []
    output = usage.output_tokens
    if usage.reasoning_tokens is not None and usage.reasoning_in_output is False:
        output = (output or 0) + usage.reasoning_tokens
    for kind, value in (("input", usage.input_tokens), ("output", output), ("cache_read", usage.cache_read_tokens),
                        ("cache_write", usage.cache_write_tokens), ("reasoning", usage.reasoning_tokens)):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out.append((kind, value))
    return out


# -- the server ------------------------------------------------------------------------------------

class MetricsServer:
    """Serves a registry at ``http://HOST:PORT/metrics`` from a daemon thread (``wsgiref`` with a
    thread per connection, ``prometheus_client.make_wsgi_app``), until :meth:`close`.

    Args:
        host, port: where to listen (port 0: any free port; :attr:`port` is the one taken).
        registry: what to serve (the outlet's).

    Raises:
        MetricsListenError: the address is in use, not this machine's, or not allowed (one line).
    """

    def __init__(self, host: str, port: int, registry: Any) -> None:
        from socketserver import ThreadingMixIn
        from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

        from prometheus_client import make_wsgi_app

        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        except socket.gaierror as err:
            raise MetricsListenError(f"--metrics: can't listen on {where}: {err.strerror or err}") from None
        slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        outer = self

        class Handler(WSGIRequestHandler):
            timeout = REQUEST_TIMEOUT_S

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - no access log
                pass

            def get_stderr(self) -> Any:  # an application error is counted, not printed
                return _Null()

        class Server(ThreadingMixIn, WSGIServer):
            daemon_threads = True
            address_family = family

            def process_request(self, request: Any, client_address: Any) -> None:
                if not slots.acquire(blocking=False):
                    outer.refused += 1
                    self.shutdown_request(request)
                    return
                try:
                    super().process_request(request, client_address)
                except BaseException:
                    slots.release()
                    raise

            def process_request_thread(self, request: Any, client_address: Any) -> None:
                try:
                    super().process_request_thread(request, client_address)
                finally:
                    slots.release()

            def handle_error(self, request: Any, client_address: Any) -> None:
                outer.errors += 1  # a reset, a timeout, a malformed request: never a traceback

        self.refused = 0
        self.errors = 0
        try:
            self.httpd = make_server(host, port, make_wsgi_app(registry), Server, handler_class=Handler)
        except OSError as err:
            raise MetricsListenError(f"--metrics: can't listen on {where}: {err.strerror or err}") from None
        self._closed = False
        self.host = host
        self.port = self.httpd.server_address[1]
        self.url = url_of(host, self.port)
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(POLL_S,), name="metrics-server",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving (waits at most :data:`POLL_S` for the server's loop) and release the port;
        a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self.httpd.shutdown()
        self.httpd.server_close()


class _Null:
    def write(self, _text: str) -> None:
        pass

    def flush(self) -> None:
        pass


class Metrics:
    """``--metrics`` for one cursor-watch: the outlet and its server, made before the watch.

    Raises:
        MetricsUnavailable: the extra is missing; MetricsListenError: see :class:`MetricsServer`.
    """

    def __init__(self, host: str, port: int, stall_s: float | None = None) -> None:
        check_available()
        try:
            self.outlet = MetricsOutlet(stall_s=stall_s)
        except ImportError as err:  # found but broken (a partial install): still one line
            raise MetricsUnavailable(f"--metrics: prometheus-client can't be imported ({err}): "
                                     "pip install 'cursor-watch[metrics]'") from None
        self.server = MetricsServer(host, port, self.outlet.registry)
        self.watch: Any = None
        self.linger = False

    def attach(self, watch: Any, linger: bool = False) -> MetricsOutlet:
        """The outlet, counting every run of ``watch`` (:func:`cursor_watch.outlets.wiring.start_outlets`
        attaches it). ``linger``: when the watch is a replay that ends by itself, :meth:`should_linger`
        says serve on."""
        def live_of(run: Any) -> bool:
            feed = watch.feed_of(run)
            return feed is not None and feed.live

        self.outlet.live_of = live_of
        self.watch = watch
        self.linger = linger
        return self.outlet

    def should_linger(self) -> bool:
        """The watch replayed files to their end by itself (no ``-f``, no pipe, no command, no
        signal) and asked to: its metrics stay served until a signal (else no scrape could see them)."""
        watch = self.watch
        return (self.linger and watch is not None and watch.signal_status is None and bool(watch.feeds)
                and all(f.source.kind == "file" for f in watch.feeds))

    def close(self) -> None:
        """Stop the server."""
        self.server.close()
