"""What the adapters share: their interface, and helpers that give canonical events
(:mod:`cursor_watch.core.canonical`) the provenance and times of the native events they come from."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mypy_extensions import mypyc_attr

from ..buildinfo import raise_if_compiled_type_error
from ..core.canonical import TIME_NONE, TIME_RECEIVED, TIME_STREAM, Canonical, Folded, RunStart, Silent, StatusNote, Unknown
from ..core.decode import Event, Invalid
from ..core.tools import one_line  # (the adapters' one-line notes: the tools' rule)

__all__ = ["Adapter", "CallPayloads", "Event", "Invalid", "iso_ms", "one_line", "s", "keys_preview", "when"]


class CallPayloads:
    """A tool call's payloads as the agent wrote them, and what its views show of them.

    Attributes:
        args: the arguments as the agent wrote them (Cursor's ``args``, Claude Code's
            ``tool_use.input``, Codex's item, Gemini CLI's ``parameters``), or None.
        result: the result as the agent wrote it (Cursor's ``result``, Claude Code's
            ``tool_result`` block, Codex's completed item, Gemini CLI's ``tool_result`` event
            without ``type``/``timestamp``), or None.
        extra: more of the agent's own JSON about the call, ``[(title, value)]`` (Claude Code's
            ``tool_use_result``), shown after the raw result.
        view: the canonical fields of the call's own view (:func:`cursor_watch.core.tools.detail_sections`
            reads them: ``command``, ``stdout``, ``path``, ``content``, ``diff``...).
        status: ``success``, ``failure`` or ``rejected`` as the result says, ``running`` when
            no result was read.
        outcome: the agent's word for the outcome (Cursor's outcome key...), "" if none.
        reasons: ``[(label, value)]`` of what the outcome says (``reason``, ``error``,
            ``exitCode``...; values as written: strings or numbers), shown for a call that did
            not succeed.
    """

    __slots__ = ("args", "result", "extra", "view", "status", "outcome", "reasons")

    def __init__(self, args: Any = None, result: Any = None, view: dict | None = None, status: str = "running",
                 outcome: str = "", reasons: list[tuple[str, Any]] | None = None,
                 extra: list[tuple[str, Any]] | None = None) -> None:
        self.args = args
        self.result = result
        self.view = view or {}
        self.status = status
        self.outcome = outcome
        self.reasons = reasons or []
        self.extra = extra or []


HELD = ()  # Adapter.convert's answer for a native event held back (counted where it is given)


class Batch:
    """The canonical events of one batch, as an adapter's :meth:`Adapter.adapt` builds them.

    Attributes:
        out: the events in order (invalid lines among them, as they are).
        last: the newest canonical event of ``out`` (None before the first): a native event
            that gives none is folded into it (:meth:`silent`).
        lead, lead_src: the native events that gave none before ``last`` had a value (how
            many, the last one): one :class:`~cursor_watch.core.canonical.Silent` at the batch's
            start stands for them (:meth:`events`).

    An adapter's hot path may append to ``out`` and set ``last`` itself.
    """

    __slots__ = ("out", "last", "lead", "lead_src")

    def __init__(self) -> None:
        self.out: list = []
        self.last: Any = None
        self.lead = 0
        self.lead_src: Any = None

    def silent(self, item: Any) -> None:
        """``item`` (a native event) gives no canonical event: it counts with the newest one."""
        last = self.last
        if last is None:
            self.lead += 1
            self.lead_src = item
        else:
            last.natives += 1
            last.src = Folded(item)

    def add(self, item: Any, got: list) -> None:
        """The events the adapter made of the native event ``item`` (its ``convert``: each
        counting what it stands for), added; none: ``item`` counts with the newest event."""
        if not got:
            self.silent(item)
            return
        self.out.extend(got)
        if type(got[0]) is not Invalid:
            last = got[-1]
            i = len(got) - 1
            while type(last) is Invalid:  # (got[0] is not one)
                i -= 1
                last = got[i]
            self.last = last

    def events(self) -> list:
        """The batch's events, the :class:`~cursor_watch.core.canonical.Silent` of its lead first."""
        out = self.out
        if self.lead:
            out.insert(0, Silent(self.lead_src, self.lead))
        return out


@mypyc_attr(allow_interpreted_subclasses=True)  # the other agents' adapters are not compiled
class Adapter:
    """The interface of an agent's adapter (one instance per source: adapters keep state).

    Attributes:
        name: the ``--format`` name (``cursor``, ``claude``, ``codex``, ``gemini``).
        agent: the runs' ``agent`` label (``cursor``, ``claude-code``, ...).
        live: events are read as the agent writes them (a pipe, a spawned agent, a followed
            file once caught up): an event without a time of its own gets the time it was
            read (:data:`~cursor_watch.core.canonical.TIME_RECEIVED`); else (a replay) none.
        typed_decoder: the adapter's typed decoding (its fast path), given to the decoder once
            the format is known (:class:`cursor_watch.core.decode.Decoder`'s ``typed``): a
            ``msgspec.json.Decoder`` or None (every line generic). Its typed events reach this
            adapter's :meth:`adapt` and nothing else.
    """

    name = "cursor"
    agent = "cursor"
    typed_decoder: Any = None

    def __init__(self) -> None:
        self.live = True

    def adapt(self, items: list, now: int | None) -> list:
        """Canonical events for ``items`` (in order; invalid lines passed on as they are).

        ``now``: the time (epoch ms) the batch was read in a live watch, else None. Each native
        event gives the events :meth:`convert` makes (the first counts it: ``natives`` 1; the
        others 0); one that gives none is folded into the event before it (or a
        :class:`~cursor_watch.core.canonical.Silent` at the batch's start). A native event whose
        shape breaks :meth:`convert` is a diagnostic (counted, shown with its line, kept by
        ``--save``), never a crash.
        """
        batch = Batch()
        convert = self.convert
        for item in items:
            if type(item) is Invalid:
                batch.out.append(item)
                continue
            try:
                got = convert(item, now)
            except Exception as err:  # noqa: BLE001 - any shape an agent could write: a diagnostic
                got = [self.unreadable(item, err)]
            if len(got) > 1 and type(got[0]) is not Invalid:
                for ev in got[1:]:
                    ev.natives = 0
            batch.add(item, got)
        return batch.events()

    def convert(self, item: Any, now: int | None) -> list:
        """The canonical events of one native event (an :class:`~cursor_watch.core.decode.Event`,
        or the adapter's typed event); [] when it shows nothing."""
        return [self.unknown(item, now)]

    def finish(self, now: int | None) -> list:
        """End of input: events held back (a tool call whose message never completed...)."""
        return []

    def unreadable(self, item: Any, err: Exception) -> Invalid:
        """The diagnostic of a native event whose shape :meth:`convert` could not read
        (:class:`~cursor_watch.buildinfo.CompiledTypeError` if a compiled module's type check
        failed: a defect of ours must not pass as a diagnostic of the stream)."""
        raise_if_compiled_type_error(err)
        return Invalid(item.line, item.offset, item.size,
                       f"event could not be read as {self.agent}'s ({type(err).__name__}: {err})",
                       f"{item.type}/{item.subtype}".strip("/"))

    def unknown(self, item: Any, now: int | None, ts: int | None = None) -> Unknown:
        """The :class:`~cursor_watch.core.canonical.Unknown` of a native event no rule reads."""
        t, st = item.type, item.subtype
        return Unknown(item, *when(ts, now), t if type(t) is str else "", st if type(st) is str else "",
                       keys_preview(item.data))

    @staticmethod
    def mcp_note(start: RunStart) -> StatusNote | None:
        """A warning for the MCP servers a run starts with that are not connected (Claude Code's
        ``init``: ``needs-auth``, ``pending``, ``failed``, ``disabled``; dungle-scrubs' a001 capture:
        three ``needs-auth``): ``MCP servers not connected: claude.ai Gmail (needs-auth), ...``
        at the run start's line (it counts no native event); None when all are connected."""
        down = [(name, status) for name, status in start.mcp_servers or () if status != "connected"]
        if not down:
            return None
        text = "MCP servers not connected: " + ", ".join(f"{name or '?'} ({status or 'no status'})"
                                                         for name, status in down)
        return StatusNote(start.src, start.ts, start.ts_source, "mcp", "mcp_servers", text, natives=0)

    def note(self, item: Any, now: int | None, kind: str, subtype: str, text: str, call_id: str = "",
             ts: int | None = None, fields: dict | None = None, detail: str = "") -> StatusNote:
        """A :class:`~cursor_watch.core.canonical.StatusNote` at ``item``; ``ts`` its own time if any;
        ``detail``: what the line can't say (a hook's output)."""
        return StatusNote(item, *when(ts, now), kind, subtype, text, call_id, fields=fields, detail=detail)

    @staticmethod
    def payloads(kind: str, call_id: str, started: dict | None, ended: dict | None,
                 known_args: Any = None) -> CallPayloads:
        """A call's payloads from its native lines, re-read by offset (``started``: the line that
        began it, ``ended``: the one that ended it, each decoded, or None; ``known_args``: the
        model's small copy of the arguments, for a line that could not be re-read). The base:
        nothing."""
        return CallPayloads()

    @staticmethod
    def native_payloads(data: dict) -> list[tuple[Any, Any]]:
        """The tool payloads of one native line as ``(arguments, result)`` pairs, as the agent
        wrote them. The base: none."""
        return []

    @staticmethod
    def search_payloads(args: Any, result: Any) -> tuple[Any, Any]:
        """A call's ``(arguments, result)`` as a search counts them: what the agent wrote but
        for fields that only repeat another (each occurrence counted once, as the detail view
        shows it once). The base: as written."""
        return args, result


def when(ts: int | None, now: int | None) -> tuple[int | None, int]:
    """``(ts, ts_source)`` of an event whose own time is ``ts`` (epoch ms, or None), read at
    ``now`` (live) or in a replay (``now`` None)."""
    if ts is not None:
        return ts, TIME_STREAM
    if now is not None:
        return now, TIME_RECEIVED
    return None, TIME_NONE


def keys_preview(data: Any) -> str:
    """The first eight keys of a native event's dict, joined (what an unknown event shows)."""
    return ", ".join(str(k) for k in list(data.keys())[:8]) if isinstance(data, dict) else ""


def iso_ms(value: Any) -> int | None:
    """Epoch ms of an ISO-8601 time (``2026-07-25T02:22:22.144Z``), None if it isn't one."""
    if type(value) is not str or len(value) < 10:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, OverflowError):
        return None


def s(value: Any) -> str:
    """``value`` if it is a string, else "" (None) or its ``str``."""
    return value if type(value) is str else ("" if value is None else str(value))


def fold_silent(out: list, item: Any) -> bool:
    """Fold the native ``item`` that gives no event into the newest canonical event of ``out``
    (its ``natives`` +1, its ``src`` the item); False when ``out`` holds none."""
    for k in range(len(out) - 1, -1, -1):
        ev = out[k]
        if type(ev) is not Invalid:
            ev.natives += 1
            ev.src = Folded(item)
            return True
    return False


def is_canonical(item: Any) -> bool:
    """True for a canonical event (not a diagnostic)."""
    return isinstance(item, Canonical)
