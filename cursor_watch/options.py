"""The parsed command line as plain data, and the services started from it.

:class:`Options` is made once by :func:`cursor_watch.cli.parse_args` and never changed after:
frozen, typed, lists as tuples. What is started from the options and lives while the watch runs
(the alert senders, the metrics server) is not in them: :class:`Services` travels beside them,
made by :func:`cursor_watch.cli.main` once the options are checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .outlets.wiring import OutletOptions
from .stream.watch import RESULT_EXIT_GRACE_S

if TYPE_CHECKING:
    from .core.limits import Limits
    from .core.rules import RunRules
    from .outlets.alerts import Deliverer
    from .outlets.metrics import Metrics
    from .views.compare import Gate


@dataclass(frozen=True)
class Options:
    """The command line of one ``cursor-watch`` (see ``cursor-watch --help`` for each option).

    Times are in seconds (``speed``: a pace factor, 0 as fast as possible), except
    ``since_ms``/``until_ms`` (epoch ms). ``limits`` are the per-run budgets and the stall duration
    (:class:`~cursor_watch.core.limits.Limits`); ``gates`` the ``--fail-if`` gates of ``compare``.
    """

    files: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    follow: bool = False
    save: str | None = None
    plain: bool = False
    summary: bool = False
    json: bool = False
    speed: float = 0.0
    thinking: bool = False
    result_grace: float = RESULT_EXIT_GRACE_S
    json_out: str | None = None
    export: str | None = None
    export_max_chars: int | None = None
    notify: bool = False
    serve: bool = False
    host: str = "127.0.0.1"
    port: int = 8000
    format: str = "auto"
    prices: str | None = None
    report: bool = False
    compare: tuple[str, str] | None = None  # compare A B
    gates: tuple[Gate, ...] = ()  # --fail-if
    by: str = "day"
    since_ms: float | None = None
    until_ms: float | None = None
    stall_s: float | None = None
    limits: Limits | None = None
    enforce: bool = False
    alerts: tuple[str, ...] = ()
    alert_on: frozenset[str] | None = None
    alert_cmd: str | None = None
    alert_replay: bool = False
    otlp: bool = False
    otlp_endpoint: str | None = None
    otlp_content: bool = False
    redact: bool = True  # --no-redact turns it off: exports, serve, --otlp-content
    metrics: tuple[str, int] | None = None  # --metrics (host, port)

    @property
    def alerting(self) -> bool:
        """True when something watches the runs for alerts beyond the views' own display."""
        return bool(self.alerts or self.alert_cmd or self.enforce or (self.limits and self.limits.budgets)
                    or self.stall_s is not None)

    @property
    def file(self) -> str | None:
        """The one FILE given (None for stdin, a command, or several files)."""
        return self.files[0] if len(self.files) == 1 else None

    @property
    def outlets(self) -> OutletOptions:
        """What the watch's outlets are (:func:`cursor_watch.outlets.wiring.start_outlets`)."""
        return OutletOptions(otlp=self.otlp, otlp_endpoint=self.otlp_endpoint, redact=self.redact,
                             limits=self.limits, stall_s=self.stall_s, alert_on=self.alert_on,
                             alert_replay=self.alert_replay, enforce=self.enforce)


@dataclass(frozen=True)
class Services:
    """What was made from the options once they were checked, alive while the watch runs: the
    alert senders (``--alert``, ``--alert-cmd``; None: no target), the ``--metrics`` server (None:
    not asked for) and the rules every run is judged by (the price files read, the summary's
    limits, ``--max-repeats``: :class:`~cursor_watch.core.rules.RunRules`; None: the defaults)."""

    deliverer: Deliverer | None = None
    metrics: Metrics | None = None
    rules: RunRules | None = None
