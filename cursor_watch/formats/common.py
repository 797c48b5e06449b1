"""What the adapters share: their interface and the builders of canonical events
(see :mod:`cursor_watch.formats` for the canonical keys)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..events import Event, Invalid
from ..tools import one_line  # (the adapters' one-line notes: the tools' rule)

Item = Event | Invalid  # and CallEvent, an adapter's canonical tool call (below)


class Adapter:
    """The interface of an agent's adapter (one instance per source: adapters keep state).

    Attributes:
        name: the ``--format`` name (``cursor``, ``claude``, ``codex``, ``gemini``).
        agent: the summary's ``session.agent`` label (``cursor``, ``claude-code``, ...).
    """

    name = "cursor"
    agent = "cursor"
    live = True  # events arrive as the agent writes them (else replayed: see tool_event's untimed)
    # the adapter's typed decoding (its fast path), given to the decoder once the format is
    # known (cursor_watch.events.Decoder's ``typed``): True for Cursor's structs, a
    # msgspec.json.Decoder of the adapter's own, or None (every line generic). Its typed events
    # reach this adapter's adapt() and nothing else (as_event reads one as its line's dict)
    typed_decoder: Any = None
    # native events minus canonical events of the last adapt(), per run segment (a canonical
    # system/init begins the next segment): the model counts canonical events, the summary's
    # "events" counts the agent's own (see Monitor.feed)
    corrections: list[int] = [0]

    def adapt(self, items: list[Item]) -> list[Item]:
        """Canonical items for ``items`` (in order; invalid lines passed on as they are)."""
        out: list[Item] = []
        convert = self.convert
        corr: list[int] = []  # the finished segments' corrections
        c = 0  # the current segment's
        for item in items:
            cls = item.__class__
            if cls is not Event and cls is not Invalid:
                item = as_event(item)  # a typed Cursor event: this agent reads the line's dict
                cls = item.__class__
            if cls is Event:
                try:
                    got = convert(item)
                except Exception as err:  # noqa: BLE001 - any shape an agent could write: the line
                    # is a diagnostic (counted, shown with its number, kept by --save), never a crash
                    got = [self._unreadable(item, err)]
                if got and got[0].__class__ is Invalid:
                    out.extend(got)  # a diagnostic, counted as an invalid line: not an event
                    continue
                c += 1
                for ev in got:
                    if ev.__class__ is Event and ev.type == "system" and ev.subtype == "init":
                        corr.append(c - 1)  # this native event counts in the run it begins
                        c = 1
                    c -= 1
                out.extend(got)
            else:
                out.append(item)
        corr.append(c)
        self.corrections = corr
        return out

    def convert(self, item: Event) -> list[Item]:
        """The canonical events of one native event."""
        return [item]

    def _unreadable(self, item: Event, err: Exception) -> Invalid:
        return Invalid(item.line, item.offset, item.size,
                       f"event could not be read as {self.agent}'s ({type(err).__name__}: {err})",
                       f"{item.type}/{item.subtype}".strip("/"))

    def finish(self) -> list[Item]:
        """End of input: events held back (a tool call whose message never completed...).

        The caller subtracts the canonical events returned from the last segment's correction
        (read after this call); an adapter that returns native events it held adds them there.
        """
        return []


def as_event(item: Any) -> Item:
    """A typed event of :mod:`cursor_watch.formats.cursor_typed` (a decoder with typed decoding
    on) as the generic :class:`Event` of its line, or :class:`Invalid` when ``orjson`` refuses
    the line msgspec read (a number that overflows a double)."""
    try:
        return Event(item.data, item.line, item.offset, item.size)
    except ValueError as err:  # orjson.JSONDecodeError
        return Invalid(item.line, item.offset, item.size, f"invalid JSON: {err}", "")


def event(data: dict, item: Event) -> Event:
    """A canonical event at the native ``item``'s line, offset and size."""
    return Event(data, item.line, item.offset, item.size)


def note(item: Event, subtype: str, text: str, kind: str = "system", call_id: str = "") -> Event:
    """A canonical status line (a ``system`` event with a worded ``note``)."""
    data: dict[str, Any] = {"type": "system", "subtype": subtype, "note": text, "note_kind": kind}
    if call_id:
        data["note_call_id"] = call_id
    return Event(data, item.line, item.offset, item.size)


def iso_ms(value: Any) -> int | None:
    """Epoch ms of an ISO-8601 time (``2026-07-25T02:22:22.144Z``), None if it isn't one."""
    if value.__class__ is not str or len(value) < 10:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, OverflowError):
        return None


def s(value: Any) -> str:
    """``value`` if it is a string, else "" (None) or its ``str``."""
    return value if value.__class__ is str else ("" if value is None else str(value))


class CallEvent:
    """A canonical ``tool_call`` event made by an adapter (:func:`tool_event`), with what the
    model reads of it at hand instead of in a dict.

    It stands for the generic :class:`Event` whose dict is :attr:`data` (built only when asked):
    the model applies it from its attributes with the same rules and result
    (``tests/test_typed.py`` compares the two on random and real streams). Any view or stage
    that wants the dict reads :attr:`data`.

    Attributes:
        type: ``tool_call``; subtype: ``started`` or ``completed``; known: True.
        line, offset, size: the native line's place (as :class:`Event`).
        call_id: the agent's pairing key; kind: the canonical kind (``shell``, ``read``...);
        tool_name: the agent's own tool name; body: the variant body (``args``, ``result``,
        ``description``); head: the body as the model reads it: :attr:`body` itself, or for a
        successful result whose tool output is left undecoded (:func:`lazy_tool_event`) the
        same body with that output's text empty (the model keeps no output text of a
        success); parent_call_id: the sub-agent call it ran in ("" for none);
        timestamp_ms: its time (epoch ms) or None; untimed: a replayed event without a time
        (the model leaves its times unknown); running_usage: an adapter's tokens-so-far dict
        (Claude Code's), or None.
    """

    __slots__ = ("subtype", "line", "offset", "size", "call_id", "kind", "tool_name", "head", "_body", "_make",
                 "parent_call_id", "timestamp_ms", "untimed", "running_usage")
    type = "tool_call"
    known = True

    def __init__(self, item: Any, subtype: str, call_id: str, kind: str, name: str, body: dict, parent: str,
                 ts: int | None, untimed: bool) -> None:
        self.subtype = subtype
        self.line = item.line
        self.offset = item.offset
        self.size = item.size
        self.call_id = call_id
        self.kind = kind
        self.tool_name = name
        self.head = self._body = body
        self._make: Callable[[], dict] | None = None
        self.parent_call_id = parent
        self.timestamp_ms = ts
        self.untimed = untimed
        self.running_usage = None

    @property
    def body(self) -> dict:
        """The variant body (``args``, ``result``, ``description``); a lazy event's
        (:func:`lazy_tool_event`) is built on first use."""
        body = self._body
        if body is None:
            body = self._body = self._make()  # type: ignore[misc]
            self._make = None
        return body

    @property
    def data(self) -> dict:
        """The generic event's dict (a new one each time)."""
        data: dict[str, Any] = {"type": "tool_call", "subtype": self.subtype, "call_id": self.call_id,
                                "tool_name": self.tool_name, "tool_call": {self.kind + "ToolCall": self.body}}
        if self.parent_call_id:
            data["parent_call_id"] = self.parent_call_id
        if self.timestamp_ms is not None:
            data["timestamp_ms"] = self.timestamp_ms
        elif self.untimed:
            data["untimed"] = True
        if self.running_usage is not None:
            data["running_usage"] = self.running_usage
        return data

    def __repr__(self) -> str:
        return f"CallEvent({self.subtype} {self.call_id!r} line={self.line})"


def tool_event(item: Event, subtype: str, call_id: str, kind: str, name: str, body: dict,
               parent: str = "", ts: int | None = None, live: bool = True) -> CallEvent:
    """A canonical ``tool_call`` event (:class:`CallEvent`): ``body`` (``args``, ``result``,
    ``description``) under ``<kind>ToolCall``, the agent's ``name`` as ``tool_name``; ``ts`` its
    time (epoch ms) if the line has one, else, when not ``live`` (a replay), marked ``untimed``
    (the model then leaves the time unknown instead of reading its clock)."""
    return CallEvent(item, subtype, call_id, kind, name, body, parent, ts, ts is None and not live)


def lazy_tool_event(item: Any, call_id: str, kind: str, name: str, head: dict, make: Callable[[], dict],
                    parent: str = "", ts: int | None = None, live: bool = True) -> CallEvent:
    """A ``completed`` :func:`tool_event` whose body is built only when asked (:attr:`CallEvent.body`).

    For a successful result whose tool output (the bulk of an agent's stream) is still raw
    JSON: ``head`` is the body with that output's text empty (what the model reads: it keeps
    no output text of a successful call, and classifies it the same way: ``tests/test_typed.py``
    compares the models), ``make()`` builds the whole body (decoding the output; it must not
    raise: give it only output that decodes). A view, an export or a test that reads
    :attr:`~CallEvent.body` or :attr:`~CallEvent.data` gets the whole one.
    """
    ev = CallEvent(item, "completed", call_id, kind, name, head, parent, ts, ts is None and not live)
    ev._body = None  # type: ignore[assignment]
    ev._make = make
    return ev
