"""``cursor-watch --compare A B``: two runs side by side, their differences, and gates for CI.

A and B are two runs of any agents: a file, or ``FILE#N`` for the N-th run (1-based) of a log
that holds several (:mod:`cursor_watch.core.runs`). Each is read through the same decoder and model
as every other view, so its figures are those of ``--summary`` (a long tool call's payload is cut
before the model sees it, as ``--report`` does). The comparison holds:

* the figures: outcome, duration, tokens by kind, cost (reported or estimated, as ``--summary``),
  tool calls, failures, rejections, loops; each with its change from A to B;
* tool calls by canonical kind and outcome;
* the two tool-call sequences aligned by canonical kind and main argument (the call's summary:
  a shell command, a path, a pattern) with :class:`difflib.SequenceMatcher`: each row is
  ``equal``, ``changed`` (same kind, another argument or another outcome), ``removed`` (in A
  only) or ``inserted`` (in B only);
* the gates of ``--fail-if`` (:func:`parse_gates`), each on the change from A to B; one that
  holds makes the exit status :data:`EXIT_GATE` (4).

Loops come from :func:`run_loops`: the loop detector's findings
(:mod:`cursor_watch.core.loops`); with :data:`LOOPS_KNOWN` False a run's loops are unknown and there
is no loops line.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.costs import TOKEN_KINDS, run_cost, total_tokens, usage_of
from ..core.rules import RunRules
from ..fmt import format_ms, usd
from ..core.tools import STATUS_FAILURE, STATUS_INCOMPLETE, STATUS_REJECTED, STATUS_RUNNING, STATUS_SUCCESS

EXIT_GATE = 4  # a --fail-if gate holds
CHUNK = 4 << 20  # bytes read at a time
RUN_SUFFIX = re.compile(r"^(.*)#(\d+)$")
OUTCOMES = (STATUS_SUCCESS, STATUS_FAILURE, STATUS_REJECTED, STATUS_INCOMPLETE)
TOKEN_LABELS = {"input_tokens": "tokens in", "output_tokens": "tokens out", "cache_read_tokens": "cache read",
                "cache_write_tokens": "cache write", "reasoning_tokens": "reasoning"}


class CompareError(Exception):
    """A run that can't be read or found (one line, for stderr: exit 2)."""


@dataclass(frozen=True)
class CallKey:
    """One tool call as the alignment sees it.

    Attributes:
        index: its 1-based position in the run's tool calls.
        kind: canonical kind (``shell``, ``read``, ``edit``, ``task``...: :class:`cursor_watch.core.model.ToolCall`).
        tool: the agent's own name for it (``Bash``, ``shell``).
        arg: its main argument: the call's one-line summary (a command, a path, a pattern).
        status: ``success``, ``failure``, ``rejected``, ``incomplete`` (or ``running``).
        duration_ms: its duration, None when not recorded.
    """

    index: int
    kind: str
    tool: str
    arg: str
    status: str
    duration_ms: int | None

    @property
    def key(self) -> tuple[str, str]:
        """What two calls must share to be the same call: canonical kind and main argument."""
        return (self.kind, self.arg)

    def to_json(self) -> dict:
        return {"index": self.index, "kind": self.kind, "tool": self.tool, "arg": self.arg, "status": self.status,
                "duration_ms": self.duration_ms}


@dataclass
class Side:
    """What the comparison keeps of one run (durations ms, costs USD).

    Attributes:
        label: how the run was named (``a.jsonl``, ``a.jsonl#2``).
        status: ``success``, ``error`` or ``incomplete``.
        tokens: by kind (:data:`cursor_watch.core.costs.TOKEN_KINDS`), None each when the stream
            reports no usage (Cursor without a ``usage`` on its result: never guessed);
            total_tokens: every token once (:func:`cursor_watch.core.costs.total_tokens`), or None.
        cost_usd: reported, else estimated, else None; cost_kind ``reported``/``estimate``/"";
            cost_note: why there is no figure.
        loops: ``(what repeats, times)`` pairs from :func:`run_loops`; None while there is no
            loop detector (:data:`LOOPS_KNOWN`).
    """

    label: str
    agent: str
    model: str
    status: str
    duration_ms: int | None
    tokens: dict[str, int | None]
    cost_usd: float | None
    cost_kind: str
    cost_note: str
    calls: list[CallKey] = field(default_factory=list)
    loops: list[tuple[str, int]] | None = None
    total_tokens: int | None = None  # every token once (costs.total_tokens: what --max-tokens counts)

    def count(self, status: str) -> int:
        """Tool calls ending with ``status``."""
        return sum(1 for c in self.calls if c.status == status)

    def by_kind(self) -> dict[str, dict[str, int]]:
        """``{kind: {outcome: calls}}`` (outcomes of :data:`OUTCOMES`; a running call counts as incomplete)."""
        out: dict[str, dict[str, int]] = {}
        for c in self.calls:
            status = STATUS_INCOMPLETE if c.status == STATUS_RUNNING else c.status
            counts = out.setdefault(c.kind, {o: 0 for o in OUTCOMES})
            counts[status] = counts.get(status, 0) + 1
        return out

    def to_json(self) -> dict:
        return {"run": self.label, "agent": self.agent, "model": self.model, "status": self.status,
                "duration_ms": self.duration_ms, "tokens": dict(self.tokens), "total_tokens": self.total_tokens,
                "cost_usd": self.cost_usd, "cost_kind": self.cost_kind or None, "cost_note": self.cost_note or None,
                "tool_calls": len(self.calls), "failures": self.count(STATUS_FAILURE),
                "rejected": self.count(STATUS_REJECTED), "tool_calls_by_kind": self.by_kind(),
                "loops": None if self.loops is None else [{"what": w, "times": n} for w, n in self.loops]}


LOOPS_KNOWN = True  # run_loops gives the loop detector's findings


def run_loops(run: Any) -> list[tuple[str, int]]:
    """The run's loops as ``(what repeats, times)`` pairs (``("Read src/app.py", 6)``,
    ``("npm test failed", 4)``): the findings of :mod:`cursor_watch.core.loops` at the display limit
    (``--max-repeats``, else 3), the most repeated first; [] for a run without them."""
    tracker = getattr(run.session, "loops", None)
    return [(f.what(), f.count) for f in tracker.findings()] if tracker is not None else []


def side_of(run: Any, label: str | None = None) -> Side:
    """The comparison's record of one run (a :class:`~cursor_watch.core.runs.Run`, finished or live)."""
    s = run.session
    usage = usage_of(s)
    tokens: dict[str, int | None] = {k: (getattr(usage, k) if usage is not None else None) for k in TOKEN_KINDS}
    cost = run_cost(s)
    kind = "reported" if cost.reported is not None else ("estimate" if cost.estimate is not None else "")
    calls = [CallKey(c.index, c.kind, c.tool, " ".join(c.summary.split()), c.status, c.duration_ms)
             for c in s.tool_calls.values()]
    status = s.status if s.status != "running" else "incomplete"
    side = Side(label or run.label(run.index > 1), s.agent or "cursor", s.model or "", status, s.duration_ms(),
                tokens, cost.usd, kind, cost.note if usage is not None else "no token usage in the stream", calls,
                list(run_loops(run)) if LOOPS_KNOWN else None, total_tokens(usage))
    return side


def split_spec(spec: str) -> tuple[str, int | None]:
    """``FILE`` or ``FILE#N`` -> ``(path, N or None)``. A path that exists as written is a file
    (a name may hold ``#``).

    Raises:
        CompareError: no such file.
    """
    if spec == "-":
        raise CompareError("--compare reads two files, not stdin (--save FILE keeps a live stream)")
    if os.path.exists(spec):
        return spec, None
    m = RUN_SUFFIX.match(spec)
    if m and os.path.exists(m.group(1)):
        return m.group(1), int(m.group(2))
    raise CompareError(f"--compare: no such file: {m.group(1) if m else spec}")


def load_side(spec: str, fmt: str = "auto", rules: RunRules | None = None) -> Side:
    """Read ``FILE`` or ``FILE#N`` to its end and keep the run (see :func:`split_spec`), judged
    by ``rules`` (:class:`~cursor_watch.core.rules.RunRules`; None: the defaults).

    A file of several runs needs ``#N``.

    Raises:
        CompareError: a missing or unreadable file, a directory, stdin, a run number out of range,
            a file of several runs without one, a file with no events or in a format no agent writes.
    """
    from ..stream.watch import Monitor

    path, number = split_spec(spec)
    if os.path.isdir(path):
        raise CompareError(f"--compare: {path} is a directory: give a stream file (FILE or FILE#N)")
    from .report import feed_slimmed

    monitor = Monitor(source=path, source_label=os.path.basename(path), fmt=fmt, live=False, rules=rules)
    buf = bytearray()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                buf += chunk
                # as --report reads: a long tool call's payload is cut before the model sees it
                # (a call's summary, all the comparison keeps of it, is the same)
                done = feed_slimmed(buf, len(buf), monitor.feed)
                buf = bytearray(buf[done:])  # (a new buffer: a view of the old one may live on in a traceback)
    except OSError as err:
        raise CompareError(f"--compare: cannot read {path}: {err.strerror or err}") from None
    if buf:
        monitor.feed(bytes(buf))
    monitor.flush()
    monitor.finish()
    runs = [r for r in monitor.runs if r.session.events or r.has_init]
    try:
        if not runs:
            raise CompareError(f"--compare: {path} holds no events")
        if number is None:
            if len(runs) > 1:
                raise CompareError(f"--compare: {path} holds {len(runs)} runs: name one as {path}#N (1-{len(runs)})")
            number = 1
        if not 1 <= number <= len(runs):
            raise CompareError(f"--compare: {path} holds {len(runs)} run{'s' if len(runs) != 1 else ''}: "
                               f"#{number} is not one of them")
        run = runs[number - 1]
        if run.session.unread:
            raise CompareError(f"--compare: {path}: no agent events: {run.session.unread_words()}")
        return side_of(run, f"{path}#{number}" if len(runs) > 1 else path)
    finally:
        for r in monitor.runs:
            r.session.spill.close()


# -- the figures and their changes ------------------------------------------------------------

# metric name -> (label, value of a side); values in their unit (ms, USD, count)
METRICS: dict[str, tuple[str, Callable[[Side], float | None]]] = {
    "duration": ("duration", lambda s: s.duration_ms),
    "tokens": ("tokens", lambda s: s.total_tokens),
    **{k: (TOKEN_LABELS[k], (lambda k: lambda s: s.tokens.get(k))(k)) for k in TOKEN_KINDS},
    "cost": ("cost", lambda s: s.cost_usd),
    "tool_calls": ("tool calls", lambda s: len(s.calls)),
    "failures": ("failures", lambda s: s.count(STATUS_FAILURE)),
    "rejected": ("rejected", lambda s: s.count(STATUS_REJECTED)),
    "loops": ("loops", lambda s: None if s.loops is None else len(s.loops)),
}


@dataclass(frozen=True)
class Change:
    """One figure of both runs: ``a``, ``b`` (None: unknown), ``delta`` = b - a, ``ratio`` =
    delta / a (None when either is unknown; ``inf`` when a is 0 and b is not)."""

    metric: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def ratio(self) -> float | None:
        if self.a is None or self.b is None:
            return None
        if self.a == 0:
            return 0.0 if self.b == 0 else float("inf") * (1 if self.b > 0 else -1)
        return (self.b - self.a) / abs(self.a)

    def to_json(self) -> dict:
        ratio = self.ratio
        return {"metric": self.metric, "a": self.a, "b": self.b, "delta": self.delta,
                "change_pct": None if ratio is None or ratio in (float("inf"), float("-inf")) else round(ratio * 100, 2)}


# -- the aligned tool calls ---------------------------------------------------------------------

EQUAL, CHANGED, REMOVED, INSERTED = "equal", "changed", "removed", "inserted"


@dataclass(frozen=True)
class Aligned:
    """One row of the aligned sequences: ``op`` (:data:`EQUAL`, :data:`CHANGED`, :data:`REMOVED`,
    :data:`INSERTED`) with A's call and B's (None on the side that has none)."""

    op: str
    a: CallKey | None
    b: CallKey | None

    def to_json(self) -> dict:
        return {"op": self.op, "a": self.a.to_json() if self.a else None, "b": self.b.to_json() if self.b else None}


def align(a: list[CallKey], b: list[CallKey]) -> list[Aligned]:
    """The two sequences aligned by ``(kind, main argument)`` (difflib, no junk heuristic).

    Same key and same outcome: equal; same key, another outcome: changed. A block the two
    replace is aligned again by kind alone: calls paired there are changed (another argument);
    the rest are removed (A's) and inserted (B's), in order.
    """
    out: list[Aligned] = []
    matcher = difflib.SequenceMatcher(None, [c.key for c in a], [c.key for c in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out += [Aligned(EQUAL if x.status == y.status else CHANGED, x, y) for x, y in zip(a[i1:i2], b[j1:j2])]
            continue
        left, right = a[i1:i2], b[j1:j2]
        # inside a replaced block: aligned again by kind alone, so a call of one kind pairs
        # with the other run's call of that kind (changed), the rest removed and inserted
        inner = difflib.SequenceMatcher(None, [c.kind for c in left], [c.kind for c in right], autojunk=False)
        for op2, k1, k2, l1, l2 in inner.get_opcodes():
            if op2 == "equal":
                out += [Aligned(CHANGED, x, y) for x, y in zip(left[k1:k2], right[l1:l2])]
            else:
                out += [Aligned(REMOVED, x, None) for x in left[k1:k2]]
                out += [Aligned(INSERTED, None, y) for y in right[l1:l2]]
    return out


# -- gates ----------------------------------------------------------------------------------

_GATE = re.compile(r"^\s*([a-z_]+)\s*(>=|<=|>|<)\s*([+-]?)(\d+(?:\.\d+)?)\s*(%|ms|s|m|h|\$)?\s*$")
_OPS: dict[str, Callable[[float, float], bool]] = {">": float.__gt__, ">=": float.__ge__, "<": float.__lt__,
                                                   "<=": float.__le__}
_UNIT_MS = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


@dataclass(frozen=True)
class Gate:
    """One ``--fail-if`` condition on the change from A to B.

    Attributes:
        text: as written (``cost>+20%``).
        metric: a key of :data:`METRICS`.
        op: ``>``, ``>=``, ``<`` or ``<=``.
        threshold: the change it compares with: a fraction (0.2 for ``20%``) when ``relative``,
            else in the metric's unit (ms for a duration, USD for a cost, a count).
        relative: True for a percentage.
    """

    text: str
    metric: str
    op: str
    threshold: float
    relative: bool

    def check(self, change: Change) -> bool | None:
        """True when the gate holds, False when not, None when a figure is unknown."""
        value = change.ratio if self.relative else change.delta
        if value is None:
            return None
        return _OPS[self.op](float(value), self.threshold)


def parse_gates(text: str) -> list[Gate]:
    """``'cost>+20%,duration>+50%,failures>0'`` -> gates.

    Each is ``METRIC OP CHANGE``: METRIC one of :data:`METRICS`; OP ``>``, ``>=``, ``<``, ``<=``;
    CHANGE the change from A to B, as a percentage of A (``+20%``, ``-10%``) or as an amount
    (``0``, ``+5``; a duration with a unit ``30s``, ``2m``, ``500ms``; a bare duration is seconds; a
    cost in USD, ``0.05`` or ``0.05$``). ``failures>0``: B has more failures than A.

    Raises:
        ValueError: a condition that is not one (the message names it).
    """
    gates = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = _GATE.match(part)
        if not m:
            raise ValueError(f"--fail-if: {part.strip()!r} is not METRIC>CHANGE (e.g. cost>+20%, failures>0)")
        metric, op, sign, number, unit = m.groups()
        if metric not in METRICS:
            raise ValueError(f"--fail-if: unknown metric {metric!r} (metrics: {', '.join(METRICS)})")
        value = float(number) * (-1 if sign == "-" else 1)
        if unit == "%":
            gates.append(Gate(part.strip(), metric, op, value / 100, True))
            continue
        if unit in _UNIT_MS or (metric == "duration" and unit is None):
            if metric != "duration":
                raise ValueError(f"--fail-if: {part.strip()!r}: a time unit goes with duration only")
            value *= _UNIT_MS[unit or "s"]
        elif unit == "$" and metric != "cost":
            raise ValueError(f"--fail-if: {part.strip()!r}: $ goes with cost only")
        gates.append(Gate(part.strip(), metric, op, value, False))
    if not gates:
        raise ValueError("--fail-if: no condition given (e.g. 'cost>+20%,failures>0')")
    return gates


# -- the comparison ---------------------------------------------------------------------------

@dataclass
class Comparison:
    """Two runs compared: their figures, the aligned calls, the gates' verdicts."""

    a: Side
    b: Side
    changes: list[Change]
    aligned: list[Aligned]
    gates: list[tuple[Gate, bool | None]]

    @property
    def differences(self) -> int:
        """Figures that differ (unknown on one side only counts) plus aligned calls not equal."""
        figures = sum(1 for c in self.changes if c.a != c.b)
        outcome = int(self.a.status != self.b.status)
        return figures + outcome + sum(1 for row in self.aligned if row.op != EQUAL)

    @property
    def failed_gates(self) -> list[Gate]:
        """The gates that hold (the exit status is :data:`EXIT_GATE` when there is one)."""
        return [g for g, verdict in self.gates if verdict]

    @property
    def unknown_gates(self) -> list[Gate]:
        """The gates a figure unknown on a side leaves unchecked (they don't fail the run: said apart)."""
        return [g for g, verdict in self.gates if verdict is None]

    def change(self, metric: str) -> Change:
        return next(c for c in self.changes if c.metric == metric)

    def to_json(self) -> dict:
        """The ``--compare --json`` object (keys in the README)."""
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "outcome_changed": self.a.status != self.b.status,
            "changes": [c.to_json() for c in self.changes],
            "aligned_calls": [row.to_json() for row in self.aligned],
            "differences": self.differences,
            "gates": [{"gate": g.text, "holds": verdict} for g, verdict in self.gates],
            "failed": bool(self.failed_gates),
        }


def compare(a: Side, b: Side, gates: list[Gate] | None = None) -> Comparison:
    """Compare two runs' records; ``gates`` are checked on the changes."""
    changes = [Change(name, getter(a), getter(b)) for name, (_, getter) in METRICS.items()]
    by_name = {c.metric: c for c in changes}
    return Comparison(a, b, changes, align(a.calls, b.calls), [(g, g.check(by_name[g.metric])) for g in gates or []])


# -- the text ---------------------------------------------------------------------------------

MARKS = {EQUAL: (" ", ""), CHANGED: ("~", "yellow"), REMOVED: ("-", "red"), INSERTED: ("+", "green")}
STATUS_MARK = {STATUS_SUCCESS: ("✔", "green"), STATUS_FAILURE: ("✖", "red"), STATUS_REJECTED: ("⊘", "yellow"),
               STATUS_INCOMPLETE: ("…", "magenta"), STATUS_RUNNING: ("▶", "cyan")}
OUTCOME_STYLE = {"success": "bold green", "error": "bold red", "incomplete": "bold magenta"}
UNKNOWN = "—"


def _figure(metric: str, value: float | None, side: Side | None = None) -> str:
    if value is None:
        return UNKNOWN
    if metric == "duration":
        return format_ms(value)
    if metric == "cost":
        text = usd(value)
        return f"≈ {text}" if side is not None and side.cost_kind == "estimate" else text
    return f"{int(value):,}"


def _change_text(c: Change) -> str:
    delta = c.delta
    if delta is None:
        return "" if c.a is None and c.b is None else "unknown"
    if delta == 0:
        return "="
    sign = "+" if delta > 0 else "-"
    if c.metric == "duration":
        amount = format_ms(abs(delta))
    elif c.metric == "cost":
        amount = usd(abs(delta))
    else:
        amount = f"{int(abs(delta)):,}"
    ratio = c.ratio
    pct = "" if ratio is None or abs(ratio) == float("inf") else f" ({ratio:+.0%})"
    return f"{sign}{amount}{pct}"


def _kind_counts(counts: dict[str, int] | None) -> Any:
    from rich.text import Text

    out = Text()
    if not counts:
        return Text(UNKNOWN, style="dim")
    for outcome in OUTCOMES:
        n = counts.get(outcome, 0)
        if n:
            symbol, style = STATUS_MARK[outcome]
            out.append(f"{symbol}{n} ", style=style)
    out.rstrip()
    return out


def _call_cell(call: CallKey | None, width: int) -> Any:
    from rich.text import Text

    from .names import call_summary
    from ..safe import visible_line

    if call is None:
        return Text("")
    symbol, style = STATUS_MARK.get(call.status, ("?", ""))
    text = Text(f"{symbol} ", style=style)
    text.append(visible_line(call.tool), style="bold")
    room = max(8, width - len(call.tool) - 3)
    if call.arg:
        text.append(" " + call_summary(call.kind, visible_line(call.arg), room))
    return text


def render(comp: Comparison, width: int) -> list[Any]:
    """The comparison as Rich renderables for a ``width``-cell terminal (80 and up read well;
    the aligned calls' columns share what the figures leave)."""
    from rich.table import Table
    from rich.text import Text

    from ..safe import visible_line

    a, b = comp.a, comp.b
    out: list[Any] = []
    title = Text("cursor-watch compare", style="bold")
    n = comp.differences
    title.append(" · no difference" if not n else f" · {n} difference{'s' if n != 1 else ''}",
                 style="green" if not n else "yellow")
    out.append(title)
    from .names import short_name

    for name, side in (("A", a), ("B", b)):
        line = Text(f"{name}  ", style="bold")
        line.append(side.agent, style="dim")
        if side.model:
            line.append(f"  {visible_line(side.model)}", style="cyan")
        room = width - line.cell_len - 2
        label = visible_line(side.label)
        line.append("  " + (short_name(label, room) if room >= 12 else ""), style="bold")
        line.rstrip()
        out.append(line)
    figures = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False, header_style="bold")
    figures.add_column("", no_wrap=True)
    figures.add_column("A", justify="right", no_wrap=True)
    figures.add_column("B", justify="right", no_wrap=True)
    figures.add_column("change", no_wrap=True)
    outcome_changed = a.status != b.status
    figures.add_row("outcome", Text(a.status, style=OUTCOME_STYLE.get(a.status, "")),
                    Text(b.status, style=OUTCOME_STYLE.get(b.status, "")),
                    Text("changed", style="bold yellow") if outcome_changed else Text("=", style="dim"))
    for c in comp.changes:
        if c.metric == "loops" and a.loops is None and b.loops is None:
            continue  # no loop detector yet: no line (run_loops)
        if c.metric.endswith("_tokens") and (c.a is None and c.b is None or c.a in (None, 0) and c.b in (None, 0)
                                             and c.metric not in ("input_tokens", "output_tokens")):
            continue  # a kind neither run reports (the tokens line says unknown)
        change = _change_text(c)
        style = "dim" if change in ("=", "") else "yellow"
        figures.add_row(METRICS[c.metric][0], _figure(c.metric, c.a, a), _figure(c.metric, c.b, b),
                        Text(change, style=style))
    out.append(Text(""))
    out.append(figures)
    for side, name in ((a, "A"), (b, "B")):
        if side.cost_usd is None and side.cost_note:
            out.append(Text(f"cost {name}: {side.cost_note}", style="dim"))
    for side, name in ((a, "A"), (b, "B")):
        for what, times in side.loops or []:
            out.append(Text(f"loop {name}: {visible_line(what)} ×{times}", style="yellow"))

    kinds_a, kinds_b = a.by_kind(), b.by_kind()
    kinds = sorted(set(kinds_a) | set(kinds_b), key=lambda k: (-(sum(kinds_a.get(k, {}).values())
                                                                  + sum(kinds_b.get(k, {}).values())), k))
    if kinds:
        table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False, header_style="bold")
        table.add_column("tool calls by kind", no_wrap=True)
        table.add_column("A", no_wrap=True)
        table.add_column("B", no_wrap=True)
        table.add_column("change", no_wrap=True)
        for kind in kinds:
            na, nb = sum(kinds_a.get(kind, {}).values()), sum(kinds_b.get(kind, {}).values())
            same = kinds_a.get(kind) == kinds_b.get(kind)
            change = "=" if same else (f"{nb - na:+d}" if na != nb else "outcomes")
            table.add_row(visible_line(kind), _kind_counts(kinds_a.get(kind)), _kind_counts(kinds_b.get(kind)),
                          Text(change, style="dim" if same else "yellow"))
        out.append(Text(""))
        out.append(table)

    out.append(Text(""))
    if not comp.aligned:
        out.append(Text("no tool calls in either run", style="dim"))
    else:
        counts = {op: sum(1 for r in comp.aligned if r.op == op) for op in MARKS}
        line = Text("tool calls aligned", style="bold")
        line.append(f"  {counts[EQUAL]} same · ", style="dim")
        line.append(f"~{counts[CHANGED]} changed", style="yellow" if counts[CHANGED] else "dim")
        line.append(" · ", style="dim")
        line.append(f"-{counts[REMOVED]} removed", style="red" if counts[REMOVED] else "dim")
        line.append(" · ", style="dim")
        line.append(f"+{counts[INSERTED]} inserted", style="green" if counts[INSERTED] else "dim")
        out.append(line)
        side_width = max(12, (width - 4) // 2)
        head = Text("  ")
        head.append("A".ljust(side_width + 2) + "B", style="bold")
        out.append(head)
        for row in comp.aligned:
            mark, style = MARKS[row.op]
            line = Text(mark, style=f"bold {style}" if style else "")
            line.append(" ")
            left = _call_cell(row.a, side_width)
            left.truncate(side_width, overflow="ellipsis", pad=True)
            line.append_text(left)
            line.append("  ")
            right = _call_cell(row.b, side_width)
            right.truncate(side_width, overflow="ellipsis")
            line.append_text(right)
            line.rstrip()
            out.append(line)

    if comp.gates:
        out.append(Text(""))
        for gate, verdict in comp.gates:
            c = comp.change(gate.metric)
            line = Text("gate ", style="bold")
            line.append(gate.text)
            if verdict is None:
                which = "A and B" if c.a is None and c.b is None else ("A" if c.a is None else "B")
                line.append(f"  not checked: {gate.metric} unknown for {which}", style="yellow")
            elif verdict:
                line.append(f"  FAILS ({_change_text(c)})", style="bold red")
            else:
                line.append(f"  passes ({_change_text(c) or '='})", style="green")
            out.append(line)
    return out


def print_comparison(comp: Comparison, console: Any, width: int) -> None:
    """Print :func:`render`'s lines on ``console``, ``width`` cells wide."""
    console.width = width
    for part in render(comp, width):
        console.print(part, crop=True, overflow="ellipsis", no_wrap=True)
