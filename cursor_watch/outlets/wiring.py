"""The outlets of one watch, built and ended in one place for every mode.

An outlet takes the runs' changes somewhere beyond the view on screen: OpenTelemetry spans
(``--otlp``, :mod:`cursor_watch.outlets.otlp`), Prometheus metrics (``--metrics``,
:mod:`cursor_watch.outlets.metrics`) and the alert stream (stall, budget and loop rules, alerts
sent by ``--alert``/``--alert-cmd``, ``--enforce``: :mod:`cursor_watch.outlets.alerts`).

Every mode (the TUI, ``--plain``, ``--summary``, the replays without an event loop, each browser
tab of ``serve``) does the same four steps, with :class:`Outlets`:

1. :func:`start_outlets` builds the outlets the options ask for and attaches them to the watch
   (``watch.outlets``: the watch gives them every batch of changes, after the view);
2. :meth:`Outlets.start_ticks` checks them between events on the event loop (stalls happen in
   silence), or the TUI calls :meth:`Outlets.tick` from its own timer;
3. :meth:`Outlets.stop` when the watch has ended: the last alert check, the deliveries waited
   for (bounded), their failures said;
4. :meth:`Outlets.finish` after the view's last output: the spans still queued sent (bounded), and
   what was sent said on stderr; a slow backend never delays the summary.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ..lazy import lazy_module
from ..output import OutputClosed
from ..output import error_line

if TYPE_CHECKING:
    from ..core.limits import Limits
    from ..core.quiet import Quiet
    from ..core.runs import Run
    from ..stream.watch import Watch
    from .alerts import Alert, AlertOutlet, Deliverer
    from .metrics import Metrics, MetricsOutlet
    from .otlp import OtlpOutlet

asyncio = lazy_module("asyncio")  # a replay without an event loop never imports it

ALERT_TICK_S = 0.25  # stall and budget rules are checked this often between events
Changes = list[tuple[str, Any]]


class Outlet(Protocol):
    """What :class:`Outlets` asks of each outlet.

    ``observe`` gets each batch of a run's changes (``(kind, value)`` pairs, after the view); it
    must never raise nor block. ``tick`` is called every ``tick_s`` seconds between events (and
    may do nothing). ``loop_free``: it needs no event loop (a replay read in the calling thread,
    :meth:`cursor_watch.stream.watch.Watch.replay`, may run with it)."""

    loop_free: bool
    tick_s: float

    def observe(self, run: Run, changes: Changes) -> None: ...

    def tick(self) -> None: ...


@dataclass(frozen=True)
class OutletOptions:
    """What the outlets of a watch are, from the command line.

    Attributes:
        otlp: ``--otlp`` (or ``--otlp-endpoint``): send spans.
        otlp_endpoint: ``--otlp-endpoint URL`` (None: the OpenTelemetry SDK's variables).
        redact: what leaves is redacted (False: ``--no-redact``).
        limits: the stall duration and budgets the alert rules check (``--stall``, ``--max-*``).
        stall_s: ``--stall`` in seconds (None: not given; stalls are shown but not sent).
        alert_on: the kinds of alert sent (``--alert-on``; None: the default kinds).
        alert_replay: replayed files raise alerts too (``--alert-replay``).
        enforce: a budget, a loop (and with ``--stall`` a stall) stops a spawned command.
    """

    otlp: bool = False
    otlp_endpoint: str | None = None
    redact: bool = True
    limits: Limits | None = None
    stall_s: float | None = None
    alert_on: frozenset[str] | None = None
    alert_replay: bool = False
    enforce: bool = False


class AlertStream:
    """The alert stream (:class:`~cursor_watch.outlets.alerts.AlertOutlet`) as an outlet of a watch:
    each batch goes to the rules with whether its run is live (a pipe, a spawned command, a followed
    file once its backlog is read) and the spawned command's process id (its CPU explains a quiet);
    each tick checks the rules between events."""

    loop_free = False
    tick_s = ALERT_TICK_S

    def __init__(self, outlet: AlertOutlet, watch: Watch) -> None:
        self.outlet = outlet
        self.watch = watch

    def observe(self, run: Run, changes: Changes) -> None:
        feed = self.watch.feed_of(run)
        if feed is not None:
            from ..core.quiet import process_id

            self.outlet.observe(run, changes, feed.live, process_id(feed))

    def tick(self) -> None:
        self.outlet.check()

    def stall(self, run: Run) -> Any:
        """The run's stall now (:meth:`~cursor_watch.outlets.alerts.AlertRules.stall`), or None."""
        return self.outlet.rules.stall(run)

    def quiet(self, run: Run) -> Quiet | None:
        """Why the run is quiet now (:meth:`~cursor_watch.outlets.alerts.AlertRules.quiet`), or None."""
        return self.outlet.rules.quiet(run)


class Outlets:
    """Every outlet of one watch, in the order they get each batch: spans, metrics, alerts.

    Attributes:
        otlp: the ``--otlp`` outlet (:class:`~cursor_watch.outlets.otlp.OtlpOutlet`), or None.
        metrics: the ``--metrics`` outlet (:class:`~cursor_watch.outlets.metrics.MetricsOutlet`), or None.
        alerts: the alert stream (:class:`AlertStream`), or None (a ``--summary`` without alert
            options, a replay).
    """

    def __init__(self, watch: Watch, otlp_endpoint: str | None = None,
                 say: Callable[[str], None] = error_line) -> None:
        self.watch = watch
        self.otlp: OtlpOutlet | None = None
        self.metrics: MetricsOutlet | None = None
        self.alerts: AlertStream | None = None
        self.otlp_endpoint = otlp_endpoint
        self._say = say
        self._task: Any = None
        self._stopped = False

    @property
    def outlets(self) -> list[Outlet]:
        """The outlets there are, in delivery order."""
        return [o for o in (self.otlp, self.metrics, self.alerts) if o is not None]

    @property
    def loop_free(self) -> bool:
        """No outlet needs the event loop (a replay in the calling thread may run with them)."""
        return all(o.loop_free for o in self.outlets)

    def observe(self, run: Run, changes: Changes) -> None:
        """A batch of a run's changes, to each outlet (the watch calls it after the view)."""
        for outlet in self.outlets:
            outlet.observe(run, changes)

    def tick(self) -> None:
        """Every outlet's check between events (the alert rules, the metrics' gauges)."""
        for outlet in self.outlets:
            outlet.tick()

    def start_ticks(self) -> None:
        """Call :meth:`tick` on the running event loop every ``tick_s`` of the most frequent outlet."""
        outlets = self.outlets
        if outlets and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._ticks(min(o.tick_s for o in outlets)))

    async def _ticks(self, period_s: float) -> None:
        while True:
            self.tick()
            await asyncio.sleep(period_s)

    def stop(self, quiet: bool = False) -> None:
        """The watch has ended: the ticks stop, the alert rules are checked a last time (not when
        ``quiet``: the output is gone), deliveries are waited for (bounded) and their failures said
        in one line. Once; later calls do nothing."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._stopped:
            return
        self._stopped = True
        if self.alerts is not None:
            if not quiet:
                with contextlib.suppress(OutputClosed):
                    self.alerts.tick()
            line = self.alerts.outlet.close()
            if line:
                self._say(line)

    def finish(self) -> None:
        """After the view's last output: the spans still queued are sent (bounded), and what was
        sent, and what could not be and why, said on stderr (:func:`cursor_watch.outlets.otlp.finish_for`);
        then :meth:`stop` (quiet), when not done yet."""
        otlp, self.otlp = self.otlp, None
        if otlp is not None:
            from .otlp import finish_for

            finish_for(self.otlp_endpoint, otlp, self._say)
        self.stop(quiet=True)  # (when the view did not: the TUI, whose screen is gone)


def start_outlets(watch: Watch, options: OutletOptions, *, deliverer: Deliverer | None = None,
                  metrics: Metrics | None = None, alerts: bool = True, linger: bool = True,
                  clock: Callable[[], float] | None = None,
                  on_alert: Callable[[Alert], None] | None = None,
                  on_note: Callable[[Any, list], None] | None = None,
                  on_quiet: Callable[[Any, Quiet], None] | None = None,
                  on_enforced: Callable[[Alert], None] | None = None,
                  say: Callable[[str], None] = error_line) -> Outlets:
    """Build the outlets ``options`` ask for and attach them to ``watch`` (``watch.outlets``).

    Args:
        deliverer: the alert senders made from the options (None: a deliverer with no target).
        metrics: the ``--metrics`` server and outlet (made before the watch, so a port in use is
            said before anything is read), or None.
        alerts: build the alert stream (the TUI and ``--plain`` always do: stalls are shown; a
            ``--summary`` only with alert options; a replay without an event loop never).
        linger: a replay that ends by itself serves its metrics on (not the TUI's).
        clock: epoch-ms clock of the alert rules (None: the wall clock; the TUI's is monotonic).
        on_alert, on_note, on_quiet: the view's callbacks (see
            :class:`~cursor_watch.outlets.alerts.AlertOutlet`).
        on_enforced: ``--enforce`` stopped the command for this alert (the view says so).
        say: one line on stderr (the outlets' problems and reports).
    """
    outlets = Outlets(watch, options.otlp_endpoint, say)
    if options.otlp:
        from .otlp import start_for

        outlets.otlp = start_for(options.otlp_endpoint, options.redact, watch)
    if metrics is not None:
        outlets.metrics = metrics.attach(watch, linger=linger)
    if alerts:
        from .alerts import DEFAULT_KINDS, AlertOutlet, AlertRules, Deliverer

        def stop_command(alert: Alert) -> None:
            if watch.stop_for_budget(alert.text) and on_enforced is not None:
                on_enforced(alert)

        rules = AlertRules(options.limits, clock=clock, replay=options.alert_replay)
        send_stalls = options.stall_s is not None
        outlet = AlertOutlet(rules, deliverer or Deliverer(), options.alert_on or DEFAULT_KINDS,
                             send_stalls=send_stalls, on_alert=on_alert, on_note=on_note,
                             on_budget=stop_command if options.enforce else None,
                             enforce_stalls=options.enforce and send_stalls, on_quiet=on_quiet)
        outlets.alerts = AlertStream(outlet, watch)
    watch.outlets = outlets
    return outlets
