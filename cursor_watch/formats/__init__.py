"""Agent formats: one adapter per agent CLI, turning its native NDJSON events into canonical ones.

The model (:mod:`cursor_watch.model`) consumes one event shape, the Cursor Agent CLI's
``stream-json`` (``system/init``, ``user``, ``assistant`` deltas and flushes, ``thinking``,
``tool_call`` started/completed with a ``*ToolCall`` variant, ``result``), plus a few canonical
keys any adapter may set:

* ``system/init``: ``agent`` (the label) and ``agent_version`` (the CLI's version);
  ``run_first_line``, ``run_first_offset`` when the run began before its init (events the
  adapter gives after it, from those earlier lines: Claude Code's hook events);
* ``system`` (any other subtype): ``note`` (a worded status line), ``note_kind``, ``note_call_id``;
* ``assistant``: ``delta`` (a text delta without a time of its own; a ``model_call_id`` makes it
  a flush, the text of a whole message), ``message_open`` (on a flush: the message's text so
  far, more of it may follow; the segment stays open until a tool call, a result or the next
  flush without it closes it);
* ``tool_call``: ``tool_name`` (the agent's own name, shown) beside the ``<kind>ToolCall`` variant
  (the canonical kind, deciding the summary line and detail view), ``parent_call_id`` (the
  sub-agent call it ran in);
* ``result``: ``usage`` with ``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
  ``cache_write_tokens`` (and ``reasoning_tokens`` where given), ``cost_usd``, ``model_usage``.

An adapter turns each parsed item of its agent (:class:`~cursor_watch.events.Event` with its
``.data`` dict, or :class:`~cursor_watch.events.Invalid`) into canonical items that keep the
native line's number, byte offset and size (a view re-reads payloads from the source by offset:
:func:`canonical_tool_call` turns a native line back into the canonical ``tool_call`` object).
Adapters never drop an invalid line; an event type they don't know is passed on as it is (the
model lists it as an unknown event).

:class:`Reader` is the stage between the decoder and the runs: it sniffs a source's first JSON
objects (:func:`sniff`) to pick the adapter unless ``--format`` forced one. Per-agent facts and
their sources are in ``docs/formats.md``.

Typed decoding: an adapter may bring a msgspec decoder of its hottest lines
(:attr:`Adapter.typed_decoder`); once the format is known the decoder uses it, and the typed
events it gives reach only that adapter (a line they don't fit takes the generic path).
``cursor_typed``: Cursor's ``stream-json`` (the Cursor adapter's fast path, issue 17);
``claude_typed``: Claude Code's ``stream_event`` lines (issue 19).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..events import Event, Invalid
from .common import Adapter, Item, tool_event  # noqa: F401 (the adapters' interface, re-exported)

FORMATS = ("cursor", "claude", "codex", "gemini")
AGENTS = {"cursor": "cursor", "claude": "claude-code", "codex": "codex", "gemini": "gemini-cli"}
COMMANDS = {"cursor": "cursor-agent", "claude-code": "claude", "codex": "codex", "gemini-cli": "gemini"}
SHORT = {"cursor": "cursor", "claude-code": "claude", "codex": "codex", "gemini-cli": "gemini"}
SNIFF_OBJECTS = 20  # JSON objects looked at before settling on Cursor's format by default

# event types only one agent writes (the format notes; docs/formats.md)
_CODEX_TYPES = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started",
                          "item.updated", "item.completed"})
_GEMINI_TYPES = frozenset({"init", "message", "tool_use", "tool_result"})
_CURSOR_TYPES = frozenset({"thinking", "tool_call", "interaction_query", "retry", "connection"})
_CLAUDE_HOOKS = frozenset({"hook_started", "hook_response"})


def sniff(data: dict) -> str | None:
    """The format one JSON object shows, or None when it could be several (or is a hook event).

    Decided by keys, never by a line's prefix (Claude Code's ``result`` may begin with
    ``is_error``). Claude Code's hook events (``system/hook_started``, ``hook_response``) come
    before its ``init`` and are skipped here (:class:`Reader` remembers them).
    """
    t = data.get("type")
    if t.__class__ is not str:
        return None
    if t in _CODEX_TYPES:
        return "codex"
    if t in _CURSOR_TYPES:
        return "cursor"
    if t in _GEMINI_TYPES:
        return "gemini"
    if t == "stream_event" or t == "rate_limit_event":
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
        return "gemini" if "severity" in data or "timestamp" in data else "codex"
    return None


def agent_command(agent: str | None) -> str:
    """The CLI a run's ``agent`` label stands for (``claude``, ``codex``...; ``cursor-agent`` when
    unknown: the format read when nothing else is known)."""
    return COMMANDS.get(agent or "cursor", agent or "cursor-agent")


def agent_short(agent: str | None) -> str:
    """A short column label of ``agent`` (``cursor``, ``claude``, ``codex``, ``gemini``; "" if unknown)."""
    return SHORT.get(agent or "", agent or "")


def make_adapter(name: str) -> Adapter:
    """A new adapter for the ``--format`` ``name`` (a ``ValueError`` for any other name)."""
    if name == "cursor":
        from .cursor import CursorAdapter
        return CursorAdapter()
    if name == "claude":
        from .claude import ClaudeAdapter
        return ClaudeAdapter()
    if name == "codex":
        from .codex import CodexAdapter
        return CodexAdapter()
    if name == "gemini":
        from .gemini import GeminiAdapter
        return GeminiAdapter()
    raise ValueError(f"unknown format {name!r} (one of {', '.join(FORMATS)}, auto)")


class Reader:
    """One source's adapter stage: detection (``fmt="auto"``), then that adapter.

    Items are held while the format is undecided: until an object :func:`sniff` can place,
    or ``SNIFF_OBJECTS`` objects that none could (then Cursor's, the model's own format), or
    the end of input (Claude Code's when only its hook events were seen, else Cursor's).

    Args:
        fmt: ``auto`` or one of :data:`FORMATS`.
        on_detect: called once with the adapter when it is chosen.
        live: the events arrive as written (a pipe, a spawned agent, a followed file); False for
            a file replayed, where an event without a time of its own gets none (not the clock's).
    """

    __slots__ = ("adapter", "_held", "_objects", "_hooks", "on_detect", "corrections", "live", "native")

    def __init__(self, fmt: str = "auto", on_detect: Callable[[Adapter], None] | None = None,
                 live: bool = True) -> None:
        self.on_detect = on_detect
        self.live = live
        self.corrections = [0]
        # the native items of the last adapt()/finish() of an adapter that is not the identity
        # (None for Cursor's): native_event() finds an adapted event's own line there
        self.native: list[Item] | None = None
        self.adapter: Adapter | None = None
        self._held: list[Item] = []
        self._objects = 0
        self._hooks = False
        if fmt != "auto":
            self._choose(make_adapter(fmt))

    def _choose(self, adapter: Adapter) -> None:
        adapter.live = self.live
        self.adapter = adapter
        if self.on_detect is not None:
            self.on_detect(adapter)

    def adapt(self, items: list[Item]) -> list[Item]:
        """Canonical items for a batch of parsed ``items`` (none while still sniffing).

        :attr:`corrections` then holds, per run segment of the result, the agent's own events
        minus the canonical ones (all zero for Cursor's format).
        """
        adapter = self.adapter
        released: list[Item] = []
        if adapter is None:
            released, items = self._sniff(items)
            adapter = self.adapter
            if adapter is None or not items:
                self.corrections = [0]
                return released
        out = adapter.adapt(items)
        self.corrections = adapter.corrections
        if out is not items:
            self.native = items
        return released + out if released else out

    def native_event(self, line: int) -> Any:
        """The agent's own event on ``line`` among the last batch adapted (an adapted event keeps
        its native line's number): an :class:`Event`, or the adapter's typed event of that line
        (with ``type`` and ``subtype`` too); None (Cursor's format, an invalid line, or not in
        that batch)."""
        native = self.native
        if native:
            for k in range(len(native) - 1, -1, -1):
                item = native[k]
                if item.line == line:
                    return item if item.__class__ is not Invalid else None
                if item.line < line:
                    break
        return None

    def _sniff(self, items: list[Item]) -> tuple[list[Item], list[Item]]:
        """``(released, to adapt)``: invalid lines before the first object go on at once (every
        adapter passes them on as they are, and a file of garbage must show as it is read)."""
        released: list[Item] = []
        held = self._held
        for n, item in enumerate(items):
            cls = item.__class__
            if cls is Invalid:
                (held if held else released).append(item)
                continue
            held.append(item)
            if cls is Event:
                fmt = sniff(item.data)
            else:  # a typed event (formats.cursor_typed, a Decoder with typed on): its line's dict
                try:
                    fmt = sniff(item.data)
                except ValueError:  # orjson refuses what msgspec read (an overflowing number)
                    fmt = None
            if fmt is None:
                self._objects += 1
                if item.type == "system" and item.subtype in _CLAUDE_HOOKS:
                    self._hooks = True
                if self._objects < SNIFF_OBJECTS:
                    continue
                fmt = "claude" if self._hooks else "cursor"
            self._choose(make_adapter(fmt))
            self._held = []
            return released, held + items[n + 1:]
        return released, []

    def finish(self) -> list[Item]:
        """End of input: decide if still undecided, adapt what was held, then the adapter's end."""
        if self.adapter is None:
            self._choose(make_adapter("claude" if self._hooks else "cursor"))
        held, self._held = self._held, []
        out = self.adapter.adapt(held)  # type: ignore[union-attr]
        if out is not held:
            self.native = held
        end = self.adapter.finish()  # type: ignore[union-attr]
        corr = list(self.adapter.corrections)  # type: ignore[union-attr]  # (finish may count held events)
        corr[-1] -= sum(1 for ev in end if ev.__class__ is not Invalid)
        self.corrections = corr
        return out + end


def canonical_tool_call(data: dict, call_id: str, kind: str = "", args: Any = None) -> Any:
    """The canonical ``tool_call`` object of one native line, for the call ``call_id``.

    A view re-reads a call's ``started`` and ``completed`` lines by byte offset
    (:mod:`cursor_watch.payloads`, search); those lines are the agent's own. Cursor's carry
    ``tool_call`` already; the others are converted by their adapter. ``kind`` is the call's
    canonical kind and ``args`` the native arguments read from its ``started`` line (Claude
    Code's ``tool_result`` line names neither). None when the line holds nothing of the call.
    """
    tc = data.get("tool_call")
    if tc is not None:
        return tc
    from . import claude, codex, gemini

    for convert in (claude.tool_call_of, codex.tool_call_of, gemini.tool_call_of):
        try:
            found = convert(data, call_id, kind, args)
        except Exception:  # noqa: BLE001 - a payload view falls back to what the model kept
            found = None
        if found is not None:
            return found
    return None


# bytes that a native line holding a tool payload contains (the search's raw prefilter):
# Cursor's "tool_call", Claude Code's tool_use / tool_result blocks, Codex's items, Gemini's events
PAYLOAD_MARKERS = (b'"tool_call"', b'"tool_use', b'"tool_result"', b'"item.')


def payload_markers(agent: str | None) -> tuple[bytes, ...]:
    """The markers a search's scan looks for in a run of ``agent`` (``session.agent``): Cursor's
    own (and an unknown agent's, read as Cursor's) only ``"tool_call"``; another agent's all of
    :data:`PAYLOAD_MARKERS`. Looking for every marker in every line of a Cursor stream cost a
    1 GB search about 20 % (bench/bench_search.py)."""
    return PAYLOAD_MARKERS[:1] if agent in (None, "cursor") else PAYLOAD_MARKERS


def native_payloads(data: dict) -> list[tuple[Any, Any]]:
    """The tool payloads of one native line as ``(arguments, result)`` pairs (either None),
    for counting a search's matches: the agent's own values, not the canonical copies (which
    repeat some under a second name). Empty for a line without any."""
    tc = data.get("tool_call")
    if tc is not None:
        from ..tools import find_variant

        _tool, body = find_variant(tc)
        return [(body.get("args") if isinstance(body.get("args"), dict) else None, body.get("result"))]
    t = data.get("type")
    out: list[tuple[Any, Any]] = []
    if t in ("assistant", "user"):
        msg = data.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict):
                if block.get("type") in ("tool_use", "server_tool_use"):
                    out.append((block.get("input") if isinstance(block.get("input"), dict) else None, None))
                elif "tool_use_id" in block:
                    out.append((None, block.get("content")))
    elif t in ("item.started", "item.updated", "item.completed"):
        it = data.get("item")
        if isinstance(it, dict) and it.get("type") not in ("agent_message", "reasoning", "error"):
            rest = {k: v for k, v in it.items() if k not in ("id", "type", "status")}
            out.append((rest, None) if t != "item.completed" else (None, rest))
    elif t == "tool_use":
        out.append((data.get("parameters") if isinstance(data.get("parameters"), dict) else None, None))
    elif t == "tool_result":
        out.append((None, {k: data.get(k) for k in ("output", "error") if k in data}))
    return out
