"""Agent formats: one adapter per agent CLI, turning its native NDJSON events into canonical ones.

Each adapter (:class:`~cursor_watch.formats.common.Adapter`) reads one agent's wire format
and gives the events of :mod:`cursor_watch.core.canonical`, the only vocabulary the model, the runs,
the views and the outlets read. Adapters keep each event's provenance (the native line's
number, byte offset and size, and its time with where the time came from), never drop an
invalid line, and give an event type they don't know as :class:`~cursor_watch.core.canonical.Unknown`.

:class:`Reader` is the stage between the decoder and the runs: it sniffs a source's first JSON
objects (:func:`sniff`) to pick the adapter unless ``--format`` forced one. A stream in a format
cursor-watch does not read (OpenCode's ``run --format json``, Google Antigravity's
``stream-json``, anything else) is never taken for another agent's: one note says what it looks
like, and every line is kept and listed (:class:`UnreadFormat`).

This package is also where views find what an agent wrote, without importing an adapter:
:func:`call_payloads` (a call's payloads re-read by offset), :func:`native_payloads` and
:func:`payload_markers` (a search's matches). Per-agent facts and their sources are in
``docs/formats.md``.

Typed decoding: an adapter may bring a msgspec decoder of its hottest lines
(:attr:`Adapter.typed_decoder`); once the format is known the decoder uses it, and the typed
events it gives reach only that adapter (a line they don't fit takes the generic path).
``cursor_typed``: Cursor's ``stream-json``; ``claude_typed``: Claude Code's.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

import orjson

from ..core.canonical import AGENTS, UNREAD_AGENT, StatusNote, Unknown
from ..core.decode import Event, Invalid, decode_all
from .common import Adapter, CallPayloads, keys_preview, one_line, when

FORMATS = ("cursor", "claude", "codex", "gemini")
SNIFF_OBJECTS = 20  # JSON objects looked at before settling on a format

_MODULES = {"cursor": ("cursor", "CursorAdapter"), "claude": ("claude", "ClaudeAdapter"),
            "codex": ("codex", "CodexAdapter"), "gemini": ("gemini", "GeminiAdapter")}
_BY_AGENT = {label: name for name, label in AGENTS.items()}

# event types only one agent writes (docs/formats.md)
_CODEX_TYPES = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started",
                          "item.updated", "item.completed"})
_GEMINI_TYPES = frozenset({"init", "message", "tool_use", "tool_result"})
_CURSOR_TYPES = frozenset({"thinking", "tool_call", "interaction_query", "retry", "connection"})
_CURSOR_ALL = frozenset({"system", "user", "assistant", "thinking", "tool_call", "result", "interaction_query",
                         "retry", "connection"})
_CLAUDE_HOOKS = frozenset({"hook_started", "hook_response"})
_OPENCODE_TYPES = frozenset({"step_start", "step_finish", "text", "reasoning", "tool_use", "error", "done"})
_ANTIGRAVITY_EVENTS = frozenset({"init", "step_update", "result", "user"})

# formats recognised but not read: their name and the command that writes them (docs/formats.md)
UNREAD = {"opencode": "OpenCode's `opencode run --format json`",
          "antigravity": "Google Antigravity's `agy -p --output-format stream-json`"}


def sniff(data: dict) -> str | None:
    """The format one JSON object shows (a :data:`FORMATS` name, or ``opencode`` /
    ``antigravity``, formats cursor-watch recognises but does not read), or None when it could
    be several (or is a Claude Code hook event).

    Decided by keys, never by a line's prefix (Claude Code's ``result`` may begin with
    ``is_error``). OpenCode's lines carry ``sessionID`` and a numeric ``timestamp`` (its
    ``tool_use`` and ``error`` types are Gemini CLI's names too); Antigravity's have no ``type``
    but an ``event`` (``init``, ``step_update``, ``result``) with the payload under its name.
    """
    t = data.get("type")
    if t.__class__ is not str:
        ev = data.get("event")
        if ev.__class__ is str and ev in _ANTIGRAVITY_EVENTS and isinstance(data.get(ev), dict):
            return "antigravity"
        return None
    if "sessionID" in data or (isinstance(data.get("part"), dict) and t in _OPENCODE_TYPES):
        return "opencode"
    if t in _CODEX_TYPES:
        return "codex"
    if t in _CURSOR_TYPES:
        return "cursor"
    if t in _GEMINI_TYPES:
        ts = data.get("timestamp")
        return "gemini" if ts is None or ts.__class__ is str else None
    if t in ("step_start", "step_finish") and isinstance(data.get("timestamp"), (int, float)):
        return "opencode"
    if t == "stream_event" or t == "rate_limit_event" or t == "tool_progress" or t == "tool_use_summary":
        return "claude"
    if t == "system":
        st = data.get("subtype")
        if st.__class__ is str and st in _CLAUDE_HOOKS:
            return None
        if "claude_code_version" in data or "uuid" in data or "tools" in data or "mcp_servers" in data:
            return "claude"
        if "apiKeySource" in data or "timestamp_ms" in data or st == "init":
            return "cursor"
        return None
    if t == "assistant" or t == "user":
        if "parent_tool_use_id" in data or "uuid" in data:
            return "claude"
        if "timestamp_ms" in data or "model_call_id" in data:
            return "cursor"
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result", "thinking"):
                return "claude"
        return None
    if t == "result":
        if "total_cost_usd" in data or "num_turns" in data or "modelUsage" in data or "uuid" in data:
            return "claude"
        if "stats" in data or "status" in data:
            return "gemini"
        if "request_id" in data or "timestamp_ms" in data or "duration_ms" in data:
            return "cursor"
        return None
    if t == "error":  # Codex: {"type","message"}; Gemini's carry "severity" and a "timestamp"
        return "gemini" if "severity" in data or isinstance(data.get("timestamp"), str) else "codex"
    return None


def make_adapter(name: str) -> Adapter:
    """A new adapter for the ``--format`` ``name`` (a ``ValueError`` for any other name)."""
    found = _MODULES.get(name)
    if found is None:
        raise ValueError(f"unknown format {name!r} (one of {', '.join(FORMATS)}, auto)")
    module, cls = found
    return getattr(importlib.import_module(f".{module}", __name__), cls)()


def adapter_class(agent: str | None) -> type[Adapter]:
    """The adapter class of a run's ``agent`` label (Cursor's when unknown)."""
    module, cls = _MODULES[_BY_AGENT.get(agent or "cursor", "cursor")]
    return getattr(importlib.import_module(f".{module}", __name__), cls)


class UnreadFormat(Adapter):
    """A stream in a format cursor-watch does not read: one note says what it looks like (naming
    it where it is recognisable: :data:`UNREAD`, else the first object's type or keys:
    :func:`looks_like`), and every object is an :class:`~cursor_watch.core.canonical.Unknown` event
    (kept and counted; ``--summary --json`` lists each, the text views say it once)."""

    name = "unknown"
    agent = UNREAD_AGENT

    def __init__(self, looks_like: str | None) -> None:
        super().__init__()
        self.looks_like = looks_like
        self._said = False

    def convert(self, item: Any, now: int | None) -> list:
        out: list = []
        if not self._said:
            self._said = True
            what = UNREAD.get(self.looks_like or "")
            text = "not a stream cursor-watch reads: " + (
                f"this looks like {what}" if what else
                f"{looks_like(item.data)}, not Cursor's, Claude Code's, Codex's or Gemini CLI's events"
            ) + "; each line is counted as an unknown event (--summary --json lists them)"
            out.append(StatusNote(item, *when(None, now), "format", self.looks_like or "unknown", text))
        t, st = item.type, item.subtype
        if not t and isinstance(item.data, dict) and isinstance(item.data.get("event"), str):
            t = item.data["event"]
        out.append(Unknown(item, *when(None, now), t if t.__class__ is str else "", st if st.__class__ is str else "",
                           keys_preview(item.data)))
        return out


def looks_like(data: Any) -> str:
    """What a JSON object no agent writes looks like, in words, for the note that says it once:
    ``JSON objects without a "type" (keys id, name, score)``, ``JSON objects of "type" "row"
    (keys type, id)``; ``JSON objects`` when it is not a dict (never the case for an event)."""
    if not isinstance(data, dict):
        return "JSON objects"
    keys = keys_preview(data)
    t = data.get("type")
    if t.__class__ is str and t:
        head = f'JSON objects of "type" "{one_line(t, 40)}"'
    elif "type" in data:
        head = 'JSON objects whose "type" is not a name'
    else:
        head = 'JSON objects without a "type"'
    return head + (f" (keys {one_line(keys, 80)})" if keys else " (no keys)")


class Reader:
    """One source's adapter stage: detection (``fmt="auto"``), then that adapter.

    Items are held while the format is undecided: until an object :func:`sniff` can place,
    or ``SNIFF_OBJECTS`` objects that none could, or the end of input (then :meth:`_fallback`).

    Args:
        fmt: ``auto`` or one of :data:`FORMATS`.
        on_detect: called once with the adapter when it is chosen.
        live: the events arrive as written (a pipe, a spawned agent, a followed file caught
            up); False for a file replayed, where an event without a time of its own gets none.
            It may change (a followed file catches up).
        clock: epoch ms, read once per batch in a live watch (an event without a time of its
            own gets it: :data:`~cursor_watch.core.canonical.TIME_RECEIVED`).
    """

    __slots__ = ("adapter", "_held", "_objects", "_hooks", "_cursorish", "_foreign", "on_detect", "live", "clock")

    def __init__(self, fmt: str = "auto", on_detect: Callable[[Adapter], None] | None = None,
                 live: bool = True, clock: Callable[[], float] | None = None) -> None:
        self.on_detect = on_detect
        self.live = live
        self.clock = clock
        self.adapter: Adapter | None = None
        self._held: list = []
        self._objects = 0
        self._hooks = False
        self._cursorish = False  # an undecided object had a type Cursor writes
        self._foreign: str | None = None
        if fmt != "auto":
            self._choose(make_adapter(fmt))

    def _choose(self, adapter: Adapter) -> None:
        self.adapter = adapter
        if self.on_detect is not None:
            self.on_detect(adapter)

    def now(self) -> int | None:
        """The time (epoch ms) this batch is read, in a live watch; None in a replay."""
        if not self.live:
            return None
        if self.clock is None:
            return int(time.time() * 1000)
        return int(self.clock())

    def adapt(self, items: list) -> list:
        """Canonical events for a batch of parsed ``items`` (none while still sniffing)."""
        adapter = self.adapter
        released: list = []
        if adapter is None:
            released, items = self._sniff(items)
            adapter = self.adapter
            if adapter is None or not items:
                return released
        adapter.live = self.live
        out = adapter.adapt(items, self.now())
        return released + out if released else out

    def _sniff(self, items: list) -> tuple[list, list]:
        """``(released, to adapt)``: invalid lines before the first object go on at once (every
        adapter passes them on as they are, and a file of garbage must show as it is read)."""
        released: list = []
        held = self._held
        for n, item in enumerate(items):
            cls = item.__class__
            if cls is Invalid:
                (held if held else released).append(item)
                continue
            held.append(item)
            try:
                data = item.data
            except ValueError:  # orjson refuses what msgspec read (an overflowing number)
                data = {}
            fmt = sniff(data) if isinstance(data, dict) else None
            if fmt in UNREAD:
                self._foreign = fmt
                fmt = None
            if fmt is None:
                self._objects += 1
                t = item.type
                if t == "system" and item.subtype in _CLAUDE_HOOKS:
                    self._hooks = True
                elif t in _CURSOR_ALL:
                    self._cursorish = True
                if self._objects < SNIFF_OBJECTS:
                    continue
                self._choose(self._fallback())
            else:
                self._choose(make_adapter(fmt))
            self._held = []
            return released, held + items[n + 1:]
        return released, []

    def _fallback(self) -> Adapter:
        """The adapter when no object told the format: :class:`UnreadFormat` when one looked like
        a format cursor-watch does not read (OpenCode's, Antigravity's); else Claude Code's when
        its hook events were seen; else Cursor's (the format of the stream-json name) when an
        object had a type Cursor writes; else :class:`UnreadFormat` (nothing looked like any)."""
        if self._foreign is not None:
            return UnreadFormat(self._foreign)
        if self._hooks:
            return make_adapter("claude")
        if self._cursorish:
            return make_adapter("cursor")
        return UnreadFormat(None)

    def restart(self) -> None:
        """The source started over (a followed file truncated or replaced)."""
        restart = getattr(self.adapter, "restart", None)
        if restart is not None:
            restart()

    def finish(self) -> list:
        """End of input: decide if still undecided, adapt what was held, then the adapter's end."""
        if self.adapter is None:
            if not self._held:
                return []
            self._choose(self._fallback())
        held, self._held = self._held, []
        adapter = self.adapter
        assert adapter is not None
        adapter.live = self.live
        now = self.now()
        out = adapter.adapt(held, now) if held else []
        return out + adapter.finish(now)


def call_payloads(agent: str | None, kind: str, call_id: str, started: dict | None, ended: dict | None,
                  known_args: Any = None) -> CallPayloads:
    """A call's payloads as the agent wrote them, and its view's canonical fields, from its first
    and last native lines (each decoded, or None; ``known_args``: the model's small copy of the
    arguments, for when its first line can't be re-read): the adapter of ``agent`` reads them."""
    return adapter_class(agent).payloads(kind, call_id, started, ended, known_args)


def payload_reader(agent: str | None) -> Callable[[dict], list[tuple[Any, Any]]]:
    """The reader of a run of ``agent``'s tool payloads for a search: one native line's dict
    to its ``(arguments, result)`` pairs as the agent wrote them, without the fields that only
    repeat another (:meth:`~cursor_watch.formats.common.Adapter.search_payloads`: each
    occurrence counted once); empty for a line without any."""
    cls = adapter_class(agent)
    native, view = cls.native_payloads, cls.search_payloads
    return lambda data: [view(args, result) for args, result in native(data)]


# bytes that a native line holding a tool payload contains (the search's raw prefilter):
# Cursor's "tool_call", Claude Code's tool_use / tool_result blocks, Codex's items, Gemini's events
PAYLOAD_MARKERS = (b'"tool_call"', b'"tool_use', b'"tool_result"', b'"item.')


def payload_markers(agent: str | None) -> tuple[bytes, ...]:
    """The markers a search's scan looks for in a run of ``agent`` (``session.agent``): Cursor's
    own (and an unknown agent's, read as Cursor's) only ``"tool_call"``; another agent's all of
    :data:`PAYLOAD_MARKERS`. Looking for every marker in every line of a Cursor stream cost a
    1 GB search about 20 % (bench/bench_search.py)."""
    return PAYLOAD_MARKERS[:1] if agent in (None, "cursor") else PAYLOAD_MARKERS


def line_object(data: bytes) -> dict | None:
    """The native event on a line re-read by offset, decoded; None when it is not one (a line
    rejoined from several, with a raw newline in it, is joined as the decoder joins it)."""
    if not data:
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        items = [i for i in decode_all([data]) if isinstance(i, Event)]
        return items[0].data if items else None
    return value if isinstance(value, dict) else None
