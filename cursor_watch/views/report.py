"""``cursor-watch --report``: one table over every run in a set of logs (ccusage-style).

Each file is read through the same decoder and model as every other view (so its figures are
those of ``--summary``), one file at a time; only a small record per run is kept
(:class:`RunStats`), so memory stays flat over any number of files. Runs are grouped by
``day`` (the run's recorded start, UTC), ``model``, ``agent`` or ``cwd``, with a total row:
runs, outcomes, total and median duration, tokens by kind, cost (reported by the agent and
estimated from the price table, kept apart), tool calls and failures, and per tool its failure
rate and durations; the slowest calls are listed after. The ``waste`` column counts the tool calls
that repeated one before them (:mod:`cursor_watch.core.loops`: re-reads of an unchanged file, retried
failures, other repeats), and the runs that looped are listed with what repeated.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import msgspec
import orjson
from rich.cells import cell_len, set_cell_size

from ..core.costs import TOKEN_KINDS, run_cost, usage_of
from ..core.rules import RunRules
from .names import call_summary, middle, shared_ends, short_name
from ..stream.watch import Monitor
from ..stream.sources import STREAM_SUFFIXES
from ..core.tools import STATUS_FAILURE, STATUS_REJECTED

GROUPS = ("day", "model", "agent", "cwd")
CHUNK = 4 << 20  # bytes read at a time
SLOWEST = 10  # calls listed as the slowest
SLOW_COLUMN = 50  # cells of the slowest calls' call and run columns
UNKNOWN = "(unknown)"


class ReportError(Exception):
    """A path that can't be read as logs (one line)."""


@dataclass
class CallStat:
    """One tool call, as far as the report needs it (durations in ms)."""

    tool: str
    status: str
    duration_ms: int | None
    summary: str
    kind: str = ""  # its canonical kind (``read``, ``shell``...): how its summary is cut (a path keeps its name)


@dataclass
class RunStats:
    """What the report keeps of one run.

    Attributes:
        started_ms: the run's first ``timestamp_ms`` (epoch ms), None when the stream has none.
        duration_ms: ``result.duration_ms``, else the span of its timestamps, else None.
        tokens: by kind (``input_tokens``, cached ones included, ``output_tokens``,
            ``cache_read_tokens``, ``cache_write_tokens``, ``reasoning_tokens``: the canonical
            meaning, :class:`cursor_watch.core.canonical.Usage`; a kind not reported counts 0).
        cost_reported: USD the agent reported; cost_estimate: exact decimal estimate; price_note:
            why there is no figure.
    """

    source: str
    index: int
    started_ms: int | None
    model: str
    agent: str
    cwd: str
    status: str
    duration_ms: int | None
    tokens: dict[str, int]
    cost_reported: float | None
    cost_estimate: Decimal | None
    price_note: str
    calls: list[CallStat] = field(default_factory=list)
    # calls that repeated one before them (cursor_watch.core.loops): re-reads, retried failures, other repeats
    waste: dict[str, int] = field(default_factory=lambda: {"rereads": 0, "retries": 0, "repeats": 0})
    looping: list[str] = field(default_factory=list)  # labels of what looped (--max-repeats, default 3)


def stream_files(paths: list[str]) -> list[str]:
    """The files to read: FILEs as given, and every stream file under each DIR (recursively,
    ``*.jsonl``, ``*.ndjson``, ``*.log``), sorted.

    Raises:
        ReportError: a path that does not exist.
    """
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = []
            for root, dirs, names in os.walk(path):
                dirs.sort()
                found += [os.path.join(root, n) for n in names if n.endswith(STREAM_SUFFIXES)]
            out += sorted(found)
        elif os.path.exists(path):
            out.append(path)
        else:
            raise ReportError(f"no such file or directory: {path}")
    return out


def _agent(session: Any) -> str:
    agent = getattr(session, "agent", None)
    return agent if isinstance(agent, str) and agent else "cursor"


def run_stats(run: Any) -> RunStats:
    """The report's record of one finished run (a :class:`~cursor_watch.core.runs.Run`)."""
    s = run.session
    usage = usage_of(s)
    tokens = {key: (getattr(usage, key) or 0 if usage is not None else 0) for key in TOKEN_KINDS}
    cost = run_cost(s)
    duration = s.duration_ms()
    status = s.status if s.status != "running" else "incomplete"
    calls = [CallStat(c.tool, c.status, c.duration_ms, c.summary, c.kind) for c in s.tool_calls.values()]
    loops = s.loops
    return RunStats(run.source, run.index, s.first_ts_ms, s.model or UNKNOWN, _agent(s), s.cwd or UNKNOWN, status,
                    duration, tokens, cost.reported, cost.estimate, cost.note if usage else "", calls,
                    {"rereads": loops.rereads, "retries": loops.retries, "repeats": loops.repeats},
                    [f.label() for f in loops.findings()])


# -- reading fast: a tool call's payloads are not what a report counts ------------------------
#
# In a log of 1 GB almost every byte is a tool call's payload (a command's output, a file's
# content) inside a few hundred thousand ``tool_call`` lines; decoding those strings is most of
# the time ``--summary`` takes. The report keeps what the model reads of such a line (the scalars of
# a call's arguments and outcome, and a to-do list), cuts each string longer than SLIM_STRING to
# its first SLIM_KEEP bytes (more than the report shows of it: a call's summary is one line of at
# most 300 characters, a detail 200) and leaves out long objects and lists, then gives the
# model that smaller line in its place. One msgspec pass finds the fields without building the
# payload strings. A line of another shape (spaces, a tool name not listed, a result that is not
# an object of objects) goes to the model unchanged, so the figures never depend on the path.

SLIM_MIN = 32 << 10  # tool_call lines at least this long (bytes) are slimmed
SLIM_STRING = 4 << 10  # strings longer than this (bytes, as written) are cut...
SLIM_KEEP = 2 << 10  # ...to about this many bytes
TOOL_LINE = b'{"type":"tool_call",'
VARIANTS = ("askQuestion", "await", "createPlan", "delete", "edit", "getMcpTools", "glob", "grep", "listDir", "ls", "mcp",
            "multiEdit", "prManagement", "readLints", "read", "recordScreen", "search", "semSearch", "shell",
            "switchMode", "task", "terminal", "todo", "updateTodos", "webFetch", "webSearch", "write")  # reference 2.5


ABSENT = msgspec.Raw()  # a field the line does not have (msgspec.Raw can't be in a union with None)


class _Variant(msgspec.Struct):
    args: dict[str, msgspec.Raw] | None = None
    # outcome -> its payload's fields; beside it scalar siblings (isBackground, pid: tools.RESULT_SIBLINGS)
    result: dict[str, dict[str, msgspec.Raw] | bool | int | float | str | None] | None = None
    description: msgspec.Raw = ABSENT


_ToolCallObject = msgspec.defstruct(
    "_ToolCallObject",
    [(f"{name}ToolCall", _Variant | None, None) for name in VARIANTS]
    + [("startedAtMs", msgspec.Raw, ABSENT), ("completedAtMs", msgspec.Raw, ABSENT), ("toolCallId", msgspec.Raw, ABSENT)])


class _ToolEvent(msgspec.Struct):
    type: str
    subtype: msgspec.Raw = ABSENT
    call_id: msgspec.Raw = ABSENT
    tool_call: _ToolCallObject | None = None  # type: ignore[valid-type]
    model_call_id: msgspec.Raw = ABSENT
    session_id: msgspec.Raw = ABSENT
    timestamp_ms: msgspec.Raw = ABSENT


_decode_tool_event = msgspec.json.Decoder(_ToolEvent).decode
_decode_raw = msgspec.json.decode


_DROP = object()


def _slim_value(raw: msgspec.Raw, key: str = "") -> Any:
    """A Raw value decoded; a long string cut to its first SLIM_KEEP bytes or so; a long object
    or list left out (``_DROP``), but for ``todos``: the model reads only scalars of a call's
    arguments and outcome, and its to-do list (``tools.summarize``)."""
    view = memoryview(raw)
    if len(view) <= SLIM_STRING:
        return _decode_raw(raw)
    if view[0] != 34:  # not a string ('"')
        return _decode_raw(raw) if key == "todos" else _DROP
    head = bytes(view[1 : SLIM_KEEP + 1])
    for cut in range(8):  # not inside an escape or a UTF-8 sequence
        try:
            return orjson.loads(b'"' + head[: len(head) - cut] + b'"') + "…"
        except orjson.JSONDecodeError:
            continue
    return _decode_raw(raw)


def _slim_fields(fields: dict[str, msgspec.Raw] | None) -> dict | None:
    if fields is None:
        return None
    out = {}
    for key, raw in fields.items():
        value = _slim_value(raw, key)
        if value is not _DROP:
            out[key] = value
    return out


def slim_line(line: bytes) -> bytes | None:
    """The smaller line the model reads in place of a long ``tool_call`` line, or None when the
    line is not of the shape this knows (it then goes to the model unchanged)."""
    try:
        ev = _decode_tool_event(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    tc = ev.tool_call
    if tc is None:
        return None
    variant = name = None
    for vname in VARIANTS:
        variant = getattr(tc, f"{vname}ToolCall")
        if variant is not None:
            name = f"{vname}ToolCall"
            break
    if variant is None:
        return None
    try:
        body: dict[str, Any] = {}
        if variant.args is not None:
            body["args"] = _slim_fields(variant.args)
        if variant.result is not None:
            body["result"] = {key: _slim_fields(payload) if isinstance(payload, dict) else payload
                              for key, payload in variant.result.items()}
        if variant.description:
            body["description"] = _slim_value(variant.description)
        tool_call: dict[str, Any] = {name: body}
        for key in ("startedAtMs", "completedAtMs", "toolCallId"):
            value = getattr(tc, key)
            if value:
                tool_call[key] = _decode_raw(value)
        out: dict[str, Any] = {"type": ev.type}
        for key in ("subtype", "call_id", "model_call_id", "session_id", "timestamp_ms"):
            value = getattr(ev, key)
            if value:
                out[key] = _decode_raw(value)
        out["tool_call"] = tool_call
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return orjson.dumps(out)


def feed_slimmed(buf: bytearray | bytes, stop: int, feed: Callable[[bytes], Any], min_size: int = SLIM_MIN) -> int:
    """Give ``feed`` the bytes of ``buf[:stop]`` up to its last whole line, each long ``tool_call``
    line slimmed (:func:`slim_line`, read in place: a payload is never copied); returns how many
    bytes were given (the rest is a partial line)."""
    view = memoryview(buf)
    find = buf.find
    cut = buf.rfind(b"\n", 0, stop) + 1
    last = pos = 0
    while (i := find(TOOL_LINE, pos, cut)) >= 0:
        end = find(b"\n", i, cut)
        if end - i >= min_size and (i == 0 or buf[i - 1] == 10):
            slim = slim_line(view[i:end])
            if slim is not None:
                if i > last:
                    feed(bytes(view[last:i]))
                feed(slim)
                last = end  # its newline goes with what follows
        pos = end
    if cut > last:
        feed(bytes(view[last:cut]))
    return cut


def slim_lines(data: bytes, min_size: int = SLIM_MIN) -> bytes:
    """``data`` (whole lines) with each long ``tool_call`` line slimmed, as one string (tests)."""
    out: list[bytes] = []
    done = feed_slimmed(data, len(data), out.append, min_size)
    return b"".join(out) + data[done:]


def read_runs(path: str, slim_min: int | None = SLIM_MIN, rules: RunRules | None = None) -> Iterator[RunStats]:
    """Every run of one file, read to its end (``slim_min`` None: every line as it is), judged by
    ``rules`` (:class:`~cursor_watch.core.rules.RunRules`; None: the defaults).

    The file is read into one buffer (grown for a line longer than it); long ``tool_call`` lines
    are slimmed where they lie (:func:`feed_slimmed`), the rest is fed as it is.

    Raises:
        ReportError: the file can't be read.
    """
    monitor = Monitor(source=path, source_label=os.path.basename(path), live=False,  # a replay: no times invented
                      rules=rules)
    buf = bytearray(CHUNK)
    filled = 0
    try:
        with open(path, "rb", buffering=0) as f:
            while True:
                if filled == len(buf):
                    buf.extend(bytes(len(buf)))  # one line longer than the buffer: grow it
                n = f.readinto(memoryview(buf)[filled:])
                if not n:
                    break
                filled += n
                if slim_min is None:
                    monitor.feed(bytes(buf[:filled]))
                    filled = 0
                    continue
                done = feed_slimmed(buf, filled, monitor.feed, slim_min)
                if done:
                    buf[: filled - done] = buf[done:filled]  # the partial line to the front
                    filled -= done
    except OSError as err:
        raise ReportError(f"cannot read {path}: {err.strerror or err}") from None
    if filled:
        monitor.feed(bytes(buf[:filled]))
    monitor.finish()
    for run in monitor.runs:
        yield run_stats(run)
        run.session.spill.close()


def group_key(stats: RunStats, by: str) -> str:
    """The run's group: its start day (UTC, ``YYYY-MM-DD``; unknown for a time no date has),
    model, agent or cwd."""
    if by == "day":
        if stats.started_ms is None:
            return UNKNOWN
        try:
            return dt.datetime.fromtimestamp(stats.started_ms / 1000, dt.UTC).strftime("%Y-%m-%d")
        except (OverflowError, OSError, ValueError):  # a hostile stream's timestamp_ms
            return UNKNOWN
    return {"model": stats.model, "agent": stats.agent, "cwd": stats.cwd}[by]


@dataclass
class Totals:
    """Sums over a group of runs (durations ms, costs USD)."""

    runs: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: {"success": 0, "error": 0, "incomplete": 0})
    durations: list[int] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=lambda: {key: 0 for key in TOKEN_KINDS})
    cost_reported: float = 0.0
    reported_runs: int = 0
    cost_estimate: Decimal = Decimal(0)
    estimated_runs: int = 0
    unpriced_runs: int = 0
    tool_calls: int = 0
    failed_calls: int = 0
    rejected_calls: int = 0
    waste: dict[str, int] = field(default_factory=lambda: {"rereads": 0, "retries": 0, "repeats": 0})
    looping_runs: int = 0

    @property
    def wasted_calls(self) -> int:
        """Tool calls that repeated one before them: re-reads + retried failures + other repeats."""
        return sum(self.waste.values())

    def add(self, r: RunStats) -> None:
        self.runs += 1
        self.outcomes[r.status] = self.outcomes.get(r.status, 0) + 1
        if r.duration_ms is not None:
            self.durations.append(r.duration_ms)
        for key, value in r.tokens.items():
            self.tokens[key] = self.tokens.get(key, 0) + value
        if r.cost_reported is not None:
            self.cost_reported += r.cost_reported
            self.reported_runs += 1
        elif r.cost_estimate is not None:
            self.cost_estimate += r.cost_estimate
            self.estimated_runs += 1
        elif r.price_note:
            self.unpriced_runs += 1
        self.tool_calls += len(r.calls)
        self.failed_calls += sum(1 for c in r.calls if c.status == STATUS_FAILURE)
        self.rejected_calls += sum(1 for c in r.calls if c.status == STATUS_REJECTED)
        for key, value in r.waste.items():
            self.waste[key] = self.waste.get(key, 0) + value
        self.looping_runs += bool(r.looping)

    def to_json(self) -> dict:
        return {
            "runs": self.runs,
            "outcomes": dict(self.outcomes),
            "duration_ms": sum(self.durations) if self.durations else None,  # none recorded: unknown, not 0
            "median_duration_ms": statistics.median(self.durations) if self.durations else None,
            "tokens": dict(self.tokens),
            "cost_usd_reported": self.cost_reported if self.reported_runs else None,
            "cost_usd_estimate": float(self.cost_estimate) if self.estimated_runs else None,
            "runs_reporting_cost": self.reported_runs,
            "runs_estimated": self.estimated_runs,
            "runs_without_price": self.unpriced_runs,
            "tool_calls": self.tool_calls,
            "failed_tool_calls": self.failed_calls,
            "rejected_tool_calls": self.rejected_calls,
            "waste": {"total": self.wasted_calls, **self.waste},
            "runs_looping": self.looping_runs,
        }


@dataclass
class ToolTotals:
    """One tool over every run: calls, failures, durations (ms)."""

    calls: int = 0
    failed: int = 0
    rejected: int = 0
    durations: list[int] = field(default_factory=list)

    def to_json(self, tool: str) -> dict:
        d = self.durations
        return {"tool": tool, "calls": self.calls, "failed": self.failed, "rejected": self.rejected,
                "failure_rate": self.failed / self.calls if self.calls else None,
                "median_ms": statistics.median(d) if d else None, "max_ms": max(d) if d else None,
                "total_ms": sum(d) if d else None}


@dataclass
class Report:
    """The report's figures: groups (sorted by key), the total, tools, the slowest calls, notes."""

    by: str
    groups: dict[str, Totals]
    total: Totals
    tools: dict[str, ToolTotals]
    slowest: list[dict]
    files: int
    unreadable: list[str]
    notes: dict[str, int]
    looping: list[dict] = field(default_factory=list)  # {"source", "run", "waste", "loops": [labels]}, worst first

    def to_json(self) -> dict:
        """The ``--report --json`` object."""
        return {
            "group_by": self.by,
            "files": self.files,
            "unreadable": self.unreadable,
            "groups": [{"key": k, **self.groups[k].to_json()} for k in sorted(self.groups)],
            "total": self.total.to_json(),
            "tools": [t.to_json(name) for name, t in sorted(self.tools.items(), key=lambda kv: (-kv[1].calls, kv[0]))],
            "slowest_calls": self.slowest,
            "price_notes": dict(sorted(self.notes.items())),
            "looping_runs": self.looping,
        }


def build_report(paths: list[str], by: str = "day", since_ms: float | None = None, until_ms: float | None = None,
                 on_error: Callable[[str], None] | None = None, slim_min: int | None = SLIM_MIN,
                 rules: RunRules | None = None) -> Report:
    """Read every run under ``paths`` and sum them (see the module doc).

    ``since_ms``/``until_ms`` (epoch ms, ``until`` exclusive) keep the runs whose recorded start
    falls in the range; a run with no recorded start is then left out. Unreadable files are
    named in ``unreadable`` (and passed to ``on_error``) and skipped. ``slim_min``: see
    :func:`read_runs` (tests compare both ways).

    Raises:
        ReportError: a path that does not exist.
    """
    files = stream_files(paths)
    groups: dict[str, Totals] = {}
    total = Totals()
    tools: dict[str, ToolTotals] = {}
    slowest: list[tuple[int, dict]] = []
    unreadable: list[str] = []
    notes: dict[str, int] = {}
    looping: list[dict] = []
    for path in files:
        try:
            runs = list(read_runs(path, slim_min, rules))
        except ReportError as err:
            unreadable.append(str(err))
            if on_error is not None:
                on_error(str(err))
            continue
        for r in runs:
            if since_ms is not None or until_ms is not None:
                if r.started_ms is None:
                    continue
                if (since_ms is not None and r.started_ms < since_ms) or (until_ms is not None and r.started_ms >= until_ms):
                    continue
            groups.setdefault(group_key(r, by), Totals()).add(r)
            total.add(r)
            if r.price_note:
                notes[r.price_note] = notes.get(r.price_note, 0) + 1
            if r.looping:
                looping.append({"source": r.source, "run": r.index, "waste": sum(r.waste.values()), "loops": r.looping})
            for c in r.calls:
                t = tools.setdefault(c.tool, ToolTotals())
                t.calls += 1
                t.failed += c.status == STATUS_FAILURE
                t.rejected += c.status == STATUS_REJECTED
                if c.duration_ms is not None:
                    t.durations.append(c.duration_ms)
                    slowest.append((c.duration_ms, {"tool": c.tool, "kind": c.kind, "summary": c.summary,
                                                    "duration_ms": c.duration_ms, "status": c.status,
                                                    "source": r.source, "run": r.index}))
                    if len(slowest) > 4 * SLOWEST:
                        slowest.sort(key=lambda x: -x[0])
                        del slowest[SLOWEST:]
    slowest.sort(key=lambda x: -x[0])
    looping.sort(key=lambda d: -d["waste"])
    return Report(by, groups, total, tools, [d for _, d in slowest[:SLOWEST]], len(files), unreadable, notes,
                  looping[:SLOWEST])


def parse_when(text: str) -> float:
    """``2026-11-25`` or an ISO date-time (UTC unless it says otherwise) -> epoch ms.

    Raises:
        ValueError: not a date.
    """
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"not a date: {text!r} (e.g. 2026-11-25 or 2026-11-25T14:00)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp() * 1000.0


def _tokens(n: int) -> str:
    """``812``, ``17.6k``, ``1.23M`` (the table; ``--json`` has exact counts)."""
    if not n:
        return "·"
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1e6:.2f}M"


# -- the table as text: every figure whole, at any width ------------------------------------------

NO_LIMIT = 100_000  # cells of a line when the report is not written to a terminal (a file, a pipe)
KEY_MIN = 10  # cells the first column (a group, a tool) keeps when columns are stacked (a date)
EMPTY = "·"  # a figure with nothing to count


@dataclass
class _Column:
    """One column of a report table: its header and one cell per row (right-aligned figures)."""

    header: str
    cells: list[str]

    def natural(self) -> int:
        """Cells the column takes with its header on one line."""
        return max([cell_len(self.header), *(cell_len(c) for c in self.cells)])

    def compact(self) -> int:
        """Cells the column takes with its header wrapped at its spaces (a figure never wraps)."""
        return max([*(cell_len(w) for w in self.header.split()), *(cell_len(c) for c in self.cells)])

    def empty(self) -> bool:
        return all(c == EMPTY for c in self.cells)


def table_width(widths: list[int]) -> int:
    """Cells a report table takes (``box.SIMPLE_HEAD``, ``pad_edge=False``): its columns, one
    cell of edge each side and three between columns."""
    return sum(widths) + 3 * (len(widths) - 1) + 2


def plan_columns(width: int | None, key: int, widths: list[int], order: list[int] | None = None
                 ) -> tuple[int, list[list[int]]]:
    """How a table of a key column (``key`` cells wide, a name: it may fold) and figure columns
    (``widths``, never cut) fits ``width`` cells: ``(key column's width, the figure columns of
    each table)``. One table (the columns as given) when they all fit beside the key, or beside
    a key cut to no less than :data:`KEY_MIN` cells; else the columns are stacked: tables one
    under the other, each with the key column and the next columns of ``order`` (by priority;
    default: as given) that fit. ``width`` None: no limit (one table, the key whole)."""
    given = list(range(len(widths)))
    order = given if order is None else order
    if width is None:
        return key, [given]
    total = table_width([key, *widths])
    if total <= width:
        return key, [given]
    room = width - (total - key)  # what the key column can have beside every figure
    if room >= min(key, KEY_MIN):
        return room, [given]
    key_w = min(key, max(KEY_MIN, (width - 2) // 4))
    stacks: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and table_width([key_w, *(widths[j] for j in current), widths[i]]) > width:
            stacks.append(current)
            current = []
        current.append(i)
    stacks.append(current)
    return key_w, stacks


def _print_table(console: Any, key: _Column, columns: list[_Column], width: int | None, styles: list[str],
                 order: list[int] | None = None, total_row: bool = False) -> None:
    """A table of ``key`` and figure ``columns`` fitted to ``width`` (:func:`plan_columns`):
    figures whole (a header wraps at its spaces first), the key folded when it must give way;
    with stacked tables, each after the one before. ``total_row``: the
    last row is a total (after a rule)."""
    from rich import box
    from rich.table import Table

    natural = [c.natural() for c in columns]
    widths = natural
    if width is not None and table_width([key.natural(), *natural]) > width:
        widths = [c.compact() for c in columns]
    key_w, stacks = plan_columns(width, key.natural(), widths, order)
    for stack in stacks:  # (a table's blank edge rows part them)
        over = table_width([key_w, *(widths[i] for i in stack)]) - (width or NO_LIMIT)
        kw = max(1, key_w - over) if over > 0 else key_w  # one column wider than the screen: the key gives way
        table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
        table.add_column(key.header, width=kw, overflow="fold")
        for i in stack:
            table.add_column(columns[i].header, justify="right", width=widths[i], overflow="fold")
        for r, name in enumerate(key.cells):
            if total_row and r == len(key.cells) - 1:
                table.add_section()
            table.add_row(name, *(columns[i].cells[r] for i in stack), style=styles[r])
        console.print(table)


def _without_empty(key: _Column, columns: list[_Column], width: int | None) -> tuple[list[_Column], list[str]]:
    """``(columns, headers left out)``: a table wider than ``width`` first leaves out its columns
    with nothing in them (their headers, for the line that says so); all of them otherwise."""
    if width is None or table_width([key.natural(), *(c.natural() for c in columns)]) <= width:
        return columns, []
    return [c for c in columns if not c.empty()], [c.header for c in columns if c.empty()]


def _slow_table(report: Report, console: Any, width: int | None) -> None:
    """The slowest calls: time, tool, call, status, run, one line each when they fit; else the
    run goes under the call (two lines a call). Times and statuses are never cut; a tool's
    name, the call's summary and the run's name are cut in the middle to their room (not when
    ``width`` is None: no limit)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from ..fmt import format_ms
    from ..safe import visible_line

    runs = [os.path.basename(c["source"]) for c in report.slowest]
    shared = shared_ends(runs)
    times = [format_ms(c["duration_ms"]) for c in report.slowest]
    tools = [visible_line(c["tool"]) for c in report.slowest]
    kinds = [c["kind"] for c in report.slowest]  # a summary is cut by the call's canonical kind, as in the transcript
    statuses = [c["status"] for c in report.slowest]
    names = [visible_line(f"{name} #{c['run']}") for c, name in zip(report.slowest, runs)]
    summaries = [visible_line(c["summary"]) for c in report.slowest]
    time_w = max(cell_len(x) for x in [*times, "time"])
    status_w = max(cell_len(x) for x in [*statuses, "status"])
    tool_n = max(cell_len(x) for x in [*tools, "tool"])
    call_n = max(cell_len(call_summary(k, x, 0)) for k, x in zip(kinds, summaries)) if summaries else 0
    call_n = max(call_n, cell_len("call"))
    run_n = max(cell_len(x) for x in [*names, "run"])
    if width is not None:
        call_n, run_n = min(call_n, SLOW_COLUMN), min(run_n, SLOW_COLUMN)
    stacked = width is not None and table_width([time_w, tool_n, call_n, status_w, run_n]) > width
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
    table.add_column("time", justify="right", width=time_w, no_wrap=True)
    if not stacked:
        tool_w, call_w = tool_n, call_n
        table.add_column("tool", width=tool_w, no_wrap=True)
        table.add_column("call", width=call_w, no_wrap=True)
        table.add_column("status", width=status_w, no_wrap=True)
        table.add_column("run", width=run_n, no_wrap=True)
    else:
        room = max(2, (width or NO_LIMIT) - table_width([time_w, status_w, 0, 0]))  # tool and call share it
        tool_w = min(tool_n, max(min(8, tool_n), room // 3))
        call_w = max(1, room - tool_w)
        table.add_column("tool", width=tool_w, no_wrap=True)
        table.add_column("status", width=status_w, no_wrap=True)
        table.add_column("call · run", width=call_w, no_wrap=True)
    for t, tool, kind, summary, status, name, run in zip(times, tools, kinds, summaries, statuses, runs, names):
        tool_cell = middle(tool, tool_w)
        call = call_summary(kind, summary, call_w)  # a path: cut in its directories
        call = call if cell_len(call) <= call_w else set_cell_size(call, call_w - 1) + "…"  # the rest at its end
        run_cell = short_name(run, run_n if not stacked else call_w, shared.get(name, (0, 0)))
        if not stacked:
            table.add_row(t, tool_cell, call, status, run_cell)
        else:
            cell = Text(call)
            cell.append("\n" + run_cell, style="dim")
            table.add_row(t, tool_cell, status, cell)
    console.print(table)


def render_report(report: Report, console: Any, width: int | None = None) -> None:
    """The report as Rich tables: the groups with a total row, the tools, the slowest calls, then
    notes.

    ``width``: the terminal's width in cells, or None when the report goes to a file or a pipe
    (no limit: every column and name whole, one line a row). At a terminal's width every figure
    stays whole: a table too wide first leaves out its columns with nothing in them (said
    under it), then wraps its headers at their spaces and lets its first column (a day, model,
    cwd, tool) fold, then stacks its columns into several tables, each with the first column
    again; the slowest calls put their run under their call.
    """
    from rich.text import Text

    from ..fmt import plural, usd
    from ..fmt import format_ms
    from ..safe import visible_line

    if width is None:
        console.width = NO_LIMIT  # (Rich still needs a number)

    def say(text: str, style: str = "") -> None:
        console.print(Text(text, style=style), soft_wrap=width is None)

    say(f"cursor-watch report · {plural(report.total.runs, 'run')} in {plural(report.files, 'file')} · by {report.by}",
        "bold")
    keys = sorted(report.groups)
    rows = [(k, report.groups[k]) for k in keys] + [("total", report.total)]

    def failed(t: Totals) -> str:
        return f"{t.failed_calls:,} ({t.failed_calls / t.tool_calls:.0%})" if t.tool_calls else EMPTY

    def waste(t: Totals) -> str:  # repeated calls: "7 (3r 4f)", re-reads r, retried failures f, other repeats x
        n = t.wasted_calls
        if not n:
            return EMPTY if not t.tool_calls else "0"
        bits = [f"{v}{k}" for k, v in (("r", t.waste["rereads"]), ("f", t.waste["retries"]), ("x", t.waste["repeats"]))
                if v]
        return f"{n:,} ({' '.join(bits)})"

    def est(t: Totals) -> str:
        if not t.estimated_runs:
            return EMPTY
        return f"≈ {usd(t.cost_estimate)}" + (f" ({t.estimated_runs}/{t.runs})" if t.estimated_runs != t.runs else "")

    columns = [
        _Column("runs", [f"{t.runs:,}" for _, t in rows]),
        _Column("✔ ✖ …", [f"{t.outcomes.get('success', 0)} {t.outcomes.get('error', 0)} {t.outcomes.get('incomplete', 0)}"
                          for _, t in rows]),
        _Column("time", [format_ms(sum(t.durations)) if t.durations else EMPTY for _, t in rows]),
        _Column("median", [format_ms(statistics.median(t.durations)) if t.durations else EMPTY for _, t in rows]),
        _Column("in", [_tokens(t.tokens["input_tokens"]) for _, t in rows]),
        _Column("out", [_tokens(t.tokens["output_tokens"]) for _, t in rows]),
        _Column("cache r", [_tokens(t.tokens["cache_read_tokens"]) for _, t in rows]),
        _Column("cache w", [_tokens(t.tokens["cache_write_tokens"]) for _, t in rows]),
        _Column("reported", [usd(t.cost_reported) if t.reported_runs else EMPTY for _, t in rows]),
        _Column("est. cost", [est(t) for _, t in rows]),
        _Column("calls", [f"{t.tool_calls:,}" for _, t in rows]),
        _Column("failed", [failed(t) for _, t in rows]),
        _Column("waste", [waste(t) for _, t in rows]),
    ]
    key = _Column(report.by, [visible_line(k) for k, _ in rows])
    styles = [""] * len(keys) + ["bold"]
    columns, left_out = _without_empty(key, columns, width)
    # stacked, the run counts and times come first, then costs and calls, then tokens
    priority = ["runs", "✔ ✖ …", "time", "median", "reported", "est. cost", "calls", "failed", "waste", "in",
                "out", "cache r", "cache w"]
    order = sorted(range(len(columns)), key=lambda i: priority.index(columns[i].header))
    _print_table(console, key, columns, width, styles, order, total_row=True)
    if left_out:
        say(f"(left out at this width, nothing in them: {', '.join(left_out)})", "dim")
    if report.tools:
        items = report.to_json()["tools"]
        tools = [_Column(h, cells) for h, cells in (
            ("calls", [f"{i['calls']:,}" for i in items]),
            ("failed", [f"{i['failed']:,}" for i in items]),
            ("failure rate", [f"{i['failure_rate']:.0%}" if i["failure_rate"] is not None else EMPTY for i in items]),
            ("rejected", [f"{i['rejected']:,}" for i in items]),
            ("median", [format_ms(i["median_ms"]) or EMPTY for i in items]),
            ("max", [format_ms(i["max_ms"]) or EMPTY for i in items]),
            ("total time", [format_ms(i["total_ms"]) or EMPTY for i in items]))]
        console.print()
        say("tools", "bold")
        key = _Column("tool", [visible_line(i["tool"]) for i in items])
        tools, left_out = _without_empty(key, tools, width)
        _print_table(console, key, tools, width, ["red" if i["failure_rate"] else "" for i in items])
        if left_out:
            say(f"(left out at this width, nothing in them: {', '.join(left_out)})", "dim")
    if report.slowest:
        console.print()
        say("slowest tool calls", "bold")
        _slow_table(report, console, width)
    if report.looping:
        console.print()
        say("looping runs (waste: r re-reads of an unchanged file, f retried failures, x other repeats)", "bold")
        for item in report.looping:
            name = os.path.basename(item["source"])
            say(visible_line(f"{name} #{item['run']}: {', '.join(item['loops'])} · waste {item['waste']}"))
    notes = []
    if report.total.estimated_runs:
        notes.append("est. cost: estimated from token usage and the price table (--prices); what a plan bills can "
                     "differ. Reported costs are kept apart.")
    for note, n in sorted(report.notes.items()):
        notes.append(f"{plural(n, 'run')} without a cost: {note}")
    for err in report.unreadable:
        notes.append(f"skipped: {err}")
    for note in notes:
        say(visible_line(note), "dim")
