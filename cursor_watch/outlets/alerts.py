"""Alerts that reach the user: one stream of alerts, read by the TUI's notifications, ``--notify``,
``--plain``, and sent out by Apprise (``--alert URL``) and a command (``--alert-cmd``).

Kinds: ``waiting`` (an ``interaction_query`` waits for an answer), ``stalled`` (an unexplained
quiet past ``--stall``, an explained one past ``--stall-explained``: :mod:`cursor_watch.core.quiet`)
and ``budget`` (:mod:`cursor_watch.core.limits`), ``loop`` (a tool call repeated ``--max-repeats`` times:
:mod:`cursor_watch.core.loops`), ``failed`` (a run ended in error, or without a result) and ``ended``
(a run ended with a successful result). A run still in progress when cursor-watch stopped
watching it (``Run.observed_until_stop``: a followed file or a pipe, stopped by a signal or a
quit) raises neither: it did not end, we stopped looking. :class:`AlertRules` turns the runs' states into alerts,
each once per run and kind (a stall that ends and starts again is a new one; so is each new
question). Only live runs raise them (a pipe, a spawned command, a followed file once its
backlog is read): replaying saved logs is not news, unless ``--alert-replay``.

:class:`Deliverer` sends alerts in the background: one daemon thread per alert and target,
each bounded by a timeout, at most :data:`MAX_IN_FLIGHT` at once (more are dropped and counted).
A slow or dead receiver never blocks the watch; at exit, deliveries still under way get
:data:`EXIT_WAIT_S` seconds, then are abandoned and counted as failed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..core.limits import DISPLAY_STALL_S, Limits, RunTimes, breaches, quiet_now, remember, stall_of
from ..core.loops import loop_label
from ..core.quiet import QUIET_SHOW_S, CpuSampler, Quiet
from ..core.runs import RESTART_REASONS
from ..safe import visible_line

KINDS = ("waiting", "stalled", "budget", "failed", "ended", "loop")
DEFAULT_KINDS = frozenset(KINDS) - {"ended"}
ENFORCED = frozenset({"budget", "loop"})  # the kinds --enforce stops a spawned command on (exit 3)
WAIT_NOTICE_S = 0.5  # print mode answers its own queries within milliseconds: a query open this long waits
SEND_TIMEOUT_S = 10.0  # one delivery (an HTTP request, the --alert-cmd command) at most this long
NET_TIMEOUT_S = 5.0  # Apprise's connect and read timeouts, unless the URL sets cto=/rto=
EXIT_WAIT_S = 3.0  # deliveries still under way when the watch ends get this long
MAX_IN_FLIGHT = 32


class AlertSetupError(Exception):
    """An alert option that can't work (Apprise missing, a URL it doesn't know): one line."""


def run_name(run: Any) -> str:
    """How an alert names a run: its prompt's first words, then its file and cwd.

    ``"fix the failing tests in…" (agent.jsonl, /home/me/proj)``; stream text escaped.
    """
    s = run.session
    words = " ".join((s.prompt or "").split()[:8])
    if len(words) > 60:
        words = words[:59] + "…"
    elif s.prompt and len(s.prompt.split()) > 8:
        words += "…"
    label = run.source_label if len(run.source_label) <= 40 else run.source_label[:39] + "…"  # a spawned command
    where = [label if getattr(run, "index", 1) == 1 else f"{label} run {run.index}"]
    if s.cwd:
        where.append(s.cwd)
    name = f'"{words}" ({", ".join(where)})' if words else f"({', '.join(where)})"
    return visible_line(name)


@dataclass
class Alert:
    """One alert.

    Attributes:
        kind: one of :data:`KINDS`.
        run: the run's name (:func:`run_name`); label: its short label (the TUI's list).
        session_id: the run's session id, or None.
        text: the state in a few words (``stalled 6m: shell npm test``, ``ended: error``...).
        time: when it was raised (ISO 8601, UTC).
        details: the kind's facts (``stall``, ``budget``, ``question``, ``status``...).
        source_run: the :class:`~cursor_watch.core.runs.Run` (not sent).
    """

    kind: str
    run: str
    label: str
    session_id: str | None
    text: str
    time: str
    details: dict = field(default_factory=dict)
    source_run: Any = None

    @property
    def message(self) -> str:
        """The one line an alert says: ``<run name>: <state>`` (and, for ``waiting``, the question)."""
        msg = f"{self.run}: {self.text}"
        question = self.details.get("question")
        if question:
            msg += f": {question}"
        return msg

    def to_json(self) -> dict:
        """What ``--alert-cmd`` reads on stdin."""
        return {"kind": self.kind, "run": self.run, "session_id": self.session_id, "message": self.message,
                "time": self.time, **self.details}


RESTART_TEXT = "the file started over (truncated or replaced): its run was cut, a new run follows"
TEXT = {"success": "ended: success", "error": "ended: error", "incomplete": "ended without a result",
        "waiting": "waits for an answer (interaction_query)"}


class AlertRules:
    """Turns the runs' states into alerts, once per run and kind (see the module doc).

    Args:
        limits: stall duration and budgets; without a ``stall_s`` the display default
            (:data:`~cursor_watch.core.limits.DISPLAY_STALL_S`) is used.
        clock: epoch-ms clock (tests freeze it).
        replay: ``--alert-replay``: replayed files raise alerts too.
    """

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] | None = None,
                 replay: bool = False) -> None:
        self.limits = limits or Limits()
        self.stall_s = self.limits.stall_s or DISPLAY_STALL_S
        self.quiet_show_s = min(QUIET_SHOW_S, self.stall_s)  # a quiet this long says why
        self._clock = clock or (lambda: time.time() * 1000.0)
        self.replay = replay
        self._times: dict[int, tuple[Any, RunTimes]] = {}
        self._raised: dict[int, set[str]] = {}
        self._waits: dict[int, int] = {}  # run -> queries already alerted
        self._cpu: dict[int, CpuSampler] = {}  # pid -> its sampler (one process may write several runs)
        self._said: dict[int, tuple[float, str]] = {}  # run -> (since_ms, reason) of the quiet last told

    def times_of(self, run: Any) -> RunTimes:
        """The run's arrival times (made on first use)."""
        entry = self._times.get(id(run))
        if entry is None:
            times = RunTimes(self._clock())
            times.quiet.prime(run.session, times.seen_ms)  # what a followed file's backlog said
            entry = self._times[id(run)] = (run, times)
            remember(run.session, times)
        return entry[1]

    def observe(self, run: Any, changes: list[tuple[str, Any]], live: bool, pid: int | None = None) -> None:
        """A batch of the run's changes arrived (``live``: from a live source; ``pid``: the spawned
        command's process, whose CPU time explains a quiet)."""
        times = self.times_of(run)
        if pid is not None and times.cpu is None:
            sampler = self._cpu.get(pid)
            if sampler is None:
                try:
                    sampler = self._cpu[pid] = CpuSampler(pid, self._clock)
                except ImportError:  # psutil is a dependency; an odd install explains less
                    sampler = None
            times.cpu = sampler
        times.observe(run.session, changes, self._clock(), live or self.replay)

    def quiet(self, run: Any, now_ms: float | None = None) -> Quiet | None:
        """The run's quiet now when it has lasted :data:`~cursor_watch.core.quiet.QUIET_SHOW_S`, or the
        stall duration if shorter (what the views show), else None."""
        entry = self._times.get(id(run))
        if entry is None:
            return None
        q = quiet_now(run.session, entry[1], self._clock() if now_ms is None else now_ms)
        return q if q is not None and q.for_ms >= self.quiet_show_s * 1000.0 else None

    def quiet_news(self, now_ms: float | None = None) -> list[tuple[Any, Quiet]]:
        """``(run, quiet)`` for each live run whose quiet reached its showing time (:meth:`quiet`) or
        changed reason since last asked (``--plain`` prints them)."""
        now = self._clock() if now_ms is None else now_ms
        out = []
        for key, (run, times) in list(self._times.items()):
            if not times.live:
                continue
            q = self.quiet(run, now)
            if q is None:
                continue
            mark = (q.since_ms, q.reason + str(q.explained))
            if self._said.get(key) != mark:
                self._said[key] = mark
                out.append((run, q))
        return out

    def stall(self, run: Any, now_ms: float | None = None) -> Any:
        """The run's :class:`~cursor_watch.core.limits.Stall` now, or None (what the views show)."""
        entry = self._times.get(id(run))
        if entry is None:
            return None
        return stall_of(run.session, entry[1], self._clock() if now_ms is None else now_ms, self.stall_s,
                        self.limits.stall_explained_s)

    def check(self, now_ms: float | None = None) -> list[Alert]:
        """The alerts to raise now, in run order."""
        now = self._clock() if now_ms is None else now_ms
        out: list[Alert] = []
        for sampler in self._cpu.values():
            sampler.sample(now)
        for key, (run, times) in list(self._times.items()):
            if not times.live:
                continue
            s = run.session
            raised = self._raised.setdefault(key, set())
            times.quiet.track(quiet_now(s, times, now), now, self.quiet_show_s)
            stall = stall_of(s, times, now, self.stall_s, self.limits.stall_explained_s)
            if times.track(stall, now):
                out.append(self._alert("stalled", run, now, stall.label(), {"stall": stall.to_json()}))
            if self.limits.budgets and "budget" not in raised:
                over = breaches(s, self.limits, times, now)
                if over:
                    raised.add("budget")
                    out.append(self._alert("budget", run, now, "; ".join(b.label() for b in over),
                                           {"budget": [b.to_json() for b in over]}))
            if self.limits.max_repeats and "loop" not in raised and s.loops.peak >= self.limits.max_repeats:
                raised.add("loop")
                out.append(self._alert("loop", run, now, loop_label(s.loops, self.limits.max_repeats),
                                       {"loops": [f.to_json() for f in s.loops.findings(self.limits.max_repeats)]}))
            if run.cut_short:
                continue  # we stopped watching while it went on: not an outcome, no alert
            if s.result is not None or s.ended:
                status = s.status if s.status in ("success", "error") else "incomplete"
                kind = "ended" if status == "success" else "failed"
                text = TEXT[status]
                if s.result is None and getattr(run, "end_reason", None) in RESTART_REASONS:
                    text = RESTART_TEXT  # a followed file started over: its run was cut
                if kind not in raised:
                    raised.add(kind)
                    out.append(self._alert(kind, run, now, text, {"status": status}))
            elif (times.open_queries and times.waiting_since_ms is not None
                  and now - times.waiting_since_ms >= WAIT_NOTICE_S * 1000
                  and self._waits.get(key, 0) < times.queries):
                self._waits[key] = times.queries
                out.append(self._alert("waiting", run, now, TEXT["waiting"], {"question": self._question(s)}))
        return out

    @staticmethod
    def _question(session: Any) -> str:
        for i in range(len(session.notes) - 1, max(-1, len(session.notes) - 50), -1):
            note = session.notes[i]
            if note.kind == "interaction_query" and note.subtype == "request":
                return visible_line(note.text)
        return ""

    def _alert(self, kind: str, run: Any, now: float, text: str, details: dict) -> Alert:
        when = dt.datetime.fromtimestamp(now / 1000, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        several = getattr(run, "index", 1) > 1
        return Alert(kind, run_name(run), run.label(several), run.session.session_id, visible_line(text), when,
                     details, run)


# -- delivery ---------------------------------------------------------------------------


class _LastError(logging.Handler):
    """Keeps the last warning Apprise logged in each thread (its reason for a failed send)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a log record must never break a delivery
            message = "(unreadable log message)"
        self.local.last = message
        self.last = message  # Apprise may send from a pool thread of its own

    def reason(self) -> str:
        """This thread's last warning, else the last one of any thread."""
        return getattr(self.local, "last", "") or getattr(self, "last", "")


_apprise_log = _LastError()


def _target_label(url: str) -> str:
    """A URL without its secrets, for messages: ``json://127.0.0.1:8080/…``."""
    scheme, _, rest = url.partition("://")
    host = rest.split("@")[-1].split("/")[0].split("?")[0]
    return f"{scheme}://{host}/…" if rest else url[:20]


class Deliverer:
    """Sends alerts to Apprise URLs and a shell command, in the background (see the module doc).

    Args:
        urls: Apprise URLs (``--alert``).
        command: ``--alert-cmd``: run through the shell with the alert as JSON on stdin.
        timeout_s: one delivery's limit.

    Raises:
        AlertSetupError: URLs given but Apprise is not installed, or a URL Apprise doesn't know.

    Attributes:
        sent, failed, dropped: counts of deliveries (one per alert and target).
        failures: ``(alert, target, reason)`` of failed deliveries not yet taken (:meth:`take_failures`).
    """

    def __init__(self, urls: list[str] | None = None, command: str | None = None,
                 timeout_s: float = SEND_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self.command = command
        self._targets: list[tuple[str, Callable[[Alert], None]]] = []
        if urls:
            try:
                import apprise
            except ImportError:
                raise AlertSetupError("--alert needs Apprise: pip install 'cursor-watch[alerts]'") from None
            log = logging.getLogger("apprise")
            if _apprise_log not in log.handlers:
                log.addHandler(_apprise_log)
                log.propagate = False  # never onto the terminal (the TUI owns it)
            for url in urls:
                ap = apprise.Apprise()
                if not ap.add(url):
                    raise AlertSetupError(f"--alert: Apprise doesn't know this URL: {_target_label(url)}")
                label = _target_label(url)
                for server in ap:
                    if "cto=" not in url:
                        server.socket_connect_timeout = NET_TIMEOUT_S
                    if "rto=" not in url:
                        server.socket_read_timeout = NET_TIMEOUT_S
                    with contextlib.suppress(Exception):  # the URL with its secrets masked
                        label = server.url(privacy=True).split("?")[0]
                self._targets.append((label, self._apprise_sender(ap, apprise)))
        if command:
            self._targets.append(("--alert-cmd", self._run_command))
        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self.failures: list[tuple[Alert, str, str]] = []
        self.last_failure = ""
        self._lock = threading.Lock()
        self._threads: list[tuple[threading.Thread, Alert, str]] = []

    @property
    def active(self) -> bool:
        """True when there is anywhere to send to."""
        return bool(self._targets)

    def _apprise_sender(self, ap: Any, apprise: Any) -> Callable[[Alert], None]:
        types = {"ended": apprise.NotifyType.SUCCESS, "failed": apprise.NotifyType.FAILURE}

        def send(alert: Alert) -> None:
            _apprise_log.local.last = ""
            ok = ap.notify(body=alert.message, title=f"cursor-watch: {alert.kind}",
                           notify_type=types.get(alert.kind, apprise.NotifyType.WARNING))
            if not ok:
                raise RuntimeError(_apprise_log.reason() or "Apprise could not deliver it")

        return send

    def _run_command(self, alert: Alert) -> None:
        env = {**os.environ, "CW_ALERT_KIND": alert.kind, "CW_RUN": alert.run, "CW_SESSION_ID": alert.session_id or "",
               "CW_MESSAGE": alert.message}
        proc = subprocess.Popen(self.command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        try:
            proc.communicate(orjson.dumps(alert.to_json()) + b"\n", timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the shell and whatever it started
            except OSError:
                pass
            proc.wait()
            raise RuntimeError(f"still running after {self.timeout_s:g} s (killed)") from None
        if proc.returncode:
            raise RuntimeError(f"exited with status {proc.returncode}")

    def send(self, alert: Alert) -> None:
        """Start delivering ``alert`` to every target; returns at once."""
        for label, sender in self._targets:
            with self._lock:
                self._threads = [entry for entry in self._threads if entry[0].is_alive()]
                if len(self._threads) >= MAX_IN_FLIGHT:
                    self.dropped += 1
                    self.failures.append((alert, label, "dropped: too many alerts under way"))
                    continue
                thread = threading.Thread(target=self._deliver, args=(alert, label, sender), daemon=True,
                                          name=f"cursor-watch alert {alert.kind}")
                self._threads.append((thread, alert, label))
            thread.start()

    def _deliver(self, alert: Alert, label: str, sender: Callable[[Alert], None]) -> None:
        done = threading.Event()
        error: list[str] = []

        def attempt() -> None:
            try:
                sender(alert)
            except Exception as err:  # noqa: BLE001 - any failure of a receiver is counted, never raised
                error.append(str(err) or type(err).__name__)
            finally:
                done.set()

        worker = threading.Thread(target=attempt, daemon=True)
        worker.start()
        if not done.wait(self.timeout_s + 1.0):
            error.append(f"no answer within {self.timeout_s:g} s")
        with self._lock:
            if error:
                self.failed += 1
                reason = visible_line(error[0])[:200]
                self.failures.append((alert, label, reason))
                self.last_failure = f"{label}: {reason}"
            else:
                self.sent += 1

    def take_failures(self) -> list[tuple[Alert, str, str]]:
        """The failures since the last call (the watch notes them on their runs)."""
        with self._lock:
            out, self.failures = self.failures, []
        return out

    def close(self, wait_s: float = EXIT_WAIT_S) -> int:
        """Wait up to ``wait_s`` for deliveries under way; returns how many were abandoned
        (counted as failed)."""
        deadline = time.monotonic() + wait_s
        with self._lock:
            threads = list(self._threads)
        for thread, _, _ in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        left = 0
        with self._lock:
            for thread, alert, label in threads:
                if thread.is_alive():
                    left += 1
                    self.failed += 1
                    self.failures.append((alert, label, "still under way when the watch ended (abandoned)"))
                    self.last_failure = f"{label}: still under way when the watch ended"
            self._threads = []
        return left


class AlertOutlet:
    """The alert stream of one watch: rules, the deliverer and the views that show alerts.

    Args:
        rules: :class:`AlertRules`.
        deliverer: where alerts go out (may have no targets).
        kinds: kinds sent out (``--alert-on``); ``stalled`` only when ``send_stalls`` (``--stall`` given).
        on_alert: a view's callback for every alert (the TUI's notification, ``--plain``'s line).
        on_budget: called with an alert of kind ``budget`` or ``loop`` (``--enforce`` stops the command),
            and of kind ``stalled`` when ``enforce_stalls`` (``--enforce`` with ``--stall``).
        on_quiet: called with ``(run, quiet)`` when a live run's quiet reaches
            :data:`~cursor_watch.core.quiet.QUIET_SHOW_S` or changes reason (``--plain``'s line).
        on_note: called with ``(run, changes)`` when a failed delivery is noted on a run (the
            view shows the note like any other).
    """

    def __init__(self, rules: AlertRules, deliverer: Deliverer, kinds: frozenset[str] = DEFAULT_KINDS,
                 send_stalls: bool = False, on_alert: Callable[[Alert], None] | None = None,
                 on_budget: Callable[[Alert], None] | None = None,
                 on_note: Callable[[Any, list], None] | None = None, enforce_stalls: bool = False,
                 on_quiet: Callable[[Any, Quiet], None] | None = None) -> None:
        self.rules = rules
        self.enforce_stalls = enforce_stalls
        self.on_quiet = on_quiet
        self.on_note = on_note
        self.deliverer = deliverer
        self.kinds = kinds if send_stalls else kinds - {"stalled"}
        self.on_alert = on_alert
        self.on_budget = on_budget
        self.raised: list[Alert] = []

    def observe(self, run: Any, changes: list[tuple[str, Any]], live: bool, pid: int | None = None) -> None:
        """A batch of changes: update the rules and raise what they now say (a budget at once).
        A replayed run costs nothing here unless ``--alert-replay`` (it raises no alert).
        ``pid``: the spawned command's process (its CPU explains a quiet)."""
        if not (live or self.rules.replay):
            return
        self.rules.observe(run, changes, live, pid)
        if changes:
            self.check()

    def check(self, now_ms: float | None = None) -> list[Alert]:
        """Raise the alerts due now: to the view, the receivers, the budget hook; note failed
        deliveries on their runs."""
        alerts = self.rules.check(now_ms)
        if self.on_quiet is not None:  # why it is quiet, before what that makes it
            for run, quiet in self.rules.quiet_news(now_ms):
                self.on_quiet(run, quiet)
        for alert in alerts:
            self.raised.append(alert)
            if self.on_alert is not None:
                self.on_alert(alert)
            if alert.kind in self.kinds:
                self.deliverer.send(alert)
            if self.on_budget is not None and (alert.kind in ENFORCED or (alert.kind == "stalled"
                                                                          and self.enforce_stalls)):
                self.on_budget(alert)
        self.note_failures()
        return alerts

    def note_failures(self) -> None:
        """Each failed delivery becomes a note of its run (kind ``alert``), passed to ``on_note``."""
        for alert, target, reason in self.deliverer.take_failures():
            run = alert.source_run
            if run is not None:
                changes = run.session.add_note("alert", "failed", f"{alert.kind} alert to {target} failed: {reason}")
                if self.on_note is not None:
                    self.on_note(run, changes)

    def close(self, wait_s: float = EXIT_WAIT_S) -> str | None:
        """End of the watch: wait for deliveries (bounded); one line for stderr when some failed."""
        left = self.deliverer.close(wait_s)
        self.note_failures()
        d = self.deliverer
        if not d.failed and not d.dropped:
            return None
        total = d.sent + d.failed + d.dropped
        bit = f" ({d.last_failure})" if d.last_failure else (f" ({left} still under way at exit)" if left else "")
        return f"{d.failed + d.dropped} of {total} alert deliveries failed{bit}"
