"""The Cursor Agent CLI: ``cursor-agent -p PROMPT --output-format stream-json [--stream-partial-output]``.

Facts (Cursor's docs, ``shared/docs/stream-json-reference.md`` and the real captures in
``shared/streams/real/``; CLI 2025-11 to 2026-10):

* ``system/init`` (``session_id``, ``model`` (a display name), ``cwd``, ``apiKeySource``,
  ``permissionMode``) begins a run; other ``system`` subtypes are status lines.
* ``user``: the prompt (reference 2.2).
* ``assistant`` text in three shapes (reference 2.3): A, with ``timestamp_ms`` and without
  ``model_call_id``: a delta, or the re-send of the text buffered so far right before an
  ``interaction_query`` or a ``retry``; B, with both: the flush of the segment before a
  ``tool_call/started``; C, with neither: the end-of-turn flush. With partial output, B and C
  repeat what the deltas said. The text rebuilt must equal ``result.result`` exactly: no doubled
  segment, no dropped repeated token (``"ha"``, ``"ha"``).
* ``thinking``: ``delta`` (``text``) ... ``completed`` (reference 2.4).
* ``tool_call``: ``started`` / ``completed`` by ``call_id`` (which may contain a newline); the
  tool is the key of ``tool_call`` that ends in ``ToolCall`` (siblings ``toolCallId``,
  ``startedAtMs``, ``completedAtMs``: int64 as strings), or the documented ``function`` shape;
  its ``result`` has one outcome key (reference 2.5; :func:`cursor_watch.core.tools.classify_result`).
* ``interaction_query`` (``request``/``response``: approvals and questions), ``retry``,
  ``connection``: status lines (reference 2.6-2.8).
* ``result``: ``subtype``, ``is_error``, ``result`` (the final text), ``duration_ms``,
  ``duration_api_ms``, ``request_id``, ``usage`` (2026-08 on: ``inputTokens`` without the cache,
  ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``; canonical input adds the cache
  back: :func:`usage_of`). No cost.
* ``timestamp_ms`` (epoch ms) on most events, absent on ``user``, ``result``, ``system/init``
  and the end-of-turn flush.

The typed fast path (:mod:`cursor_watch.formats.cursor_typed`) decodes ``assistant``,
``thinking`` and ``tool_call`` lines into structs; :meth:`CursorAdapter.adapt` reads their
attributes, and any line they don't fit is read from its dict by the same rules
(``tests/unit/formats/test_typed.py`` compares both). Consecutive deltas of a batch become one canonical
event (a view shows a batch at once).
"""

from __future__ import annotations

from typing import Any, Final

import orjson
from msgspec import UNSET, Raw, to_builtins

from ..core.canonical import (TEXT_DELTA, TEXT_END, TEXT_MESSAGE, TIME_NONE, TIME_STREAM, Prompt, RunEnd, RunStart,
                         Silent, StatusNote, Text, Thinking, ToolEnd, ToolStart, ToolUpdate, Usage, as_int, short)
from ..core.decode import Event, Invalid, invalid_item
from ..core.tools import STATUS_SUCCESS, classify_result, find_variant, summarize, todo_status
from .common import Adapter, Batch, CallPayloads, when
from .cursor_typed import (DECODER, INT64_MIN, UINT64_END, AssistantEvent, Message, OutcomePayload, ThinkingEvent,
                           ToolCallEvent, Variant)

KNOWN_TYPES = frozenset({"system", "user", "assistant", "thinking", "tool_call", "result", "interaction_query",
                         "retry", "connection"})
REASON_KEYS = ("reason", "error", "message", "stderr")  # an outcome's reason, the first that says something
COMPACT_AT = 256  # pieces of the open text kept before they are joined into one
# the integers a compiled build keeps unboxed (mypyc's short ints): a time in this range is
# checked in a few machine instructions, a comparison with INT64_MIN or UINT64_END boxes it
_SHORT_MIN: Final = -4611686018427387904
_SHORT_MAX: Final = 4611686018427387903


class Irregular(Exception):
    """The typed reading of a tool call met a shape it leaves to the generic path."""


def _loads(raw: Raw) -> Any:
    """One raw value decoded exactly as the generic path would (``orjson``)."""
    try:
        return orjson.loads(memoryview(raw))
    except orjson.JSONDecodeError as err:
        raise Irregular from err


def _plain_int(value: Any) -> bool:
    return type(value) is not int or INT64_MIN <= value < UINT64_END


class ToolFields:
    """What the model reads of a ``tool_call`` event, from either path.

    Attributes:
        variant_key: True when the ``tool_call`` object has a ``*ToolCall`` variant key.
        tool: tool name (``shell``, ``read``...; ``unknown`` without a variant).
        tool_call_id: the ``toolCallId`` sibling (any JSON value; None when absent).
        args: the variant's ``args`` value (any JSON value; None when absent).
        description: the variant's ``description`` value (None when absent).
        result: ``(status, outcome key, outcome payload)`` as
            :func:`cursor_watch.core.tools.classify_result` gives them; the payload holds at
            least ``exitCode`` and the reason texts.
        started_at, completed_at: the ``startedAtMs``/``completedAtMs`` siblings (raw values).
    """

    __slots__ = ("tool", "tool_call_id", "_args", "_args_raw", "description", "result", "_payload_raw",
                 "started_at", "completed_at", "_full_payload", "_raw")

    tool: str
    tool_call_id: Any
    _args: Any
    _args_raw: Any
    description: Any
    result: tuple[str, str, dict]
    _payload_raw: Any
    started_at: Any
    completed_at: Any
    _full_payload: Any
    _raw: Any

    def summary(self, kind: str, ended: bool) -> str:
        """The call's one-line summary (:func:`cursor_watch.core.tools.summarize` of its arguments;
        an ended call's outcome payload too, where its arguments don't tell: a rejected call has
        none). A canonical tool event's ``lazy`` reader (:class:`cursor_watch.core.canonical.ToolEvent`)."""
        return summarize(kind, self.args(), self.full_payload() if ended else None)

    def args(self) -> Any:
        """The variant's ``args`` (decoded on first use on the typed path)."""
        raw = self._args_raw
        if raw is not None:
            self._args_raw = None
            self._args = _loads(raw)
        return self._args

    def full_payload(self) -> dict:
        """The whole outcome payload (for a summary made from it: a rejected call has no args).

        On the typed path only the reason fields were read; the rest comes from the line."""
        if self._payload_raw is not None:
            self._payload_raw = None
            tool_call = _loads(self._raw).get("tool_call")
            body = next(v for k, v in tool_call.items() if k.endswith("ToolCall") and len(k) > 8)
            result = body["result"]
            value = next(v for k, v in result.items() if k not in ("isBackground", "pid", "sandboxPolicy"))
            self._full_payload = value
        return self._full_payload


def tool_fields(event: ToolCallEvent, classify: Any) -> ToolFields:
    """Read a typed ``tool_call`` event's variant, arguments and outcome.

    Args:
        event: the typed event.
        classify: :func:`cursor_watch.core.tools.classify_result` (passed in: no import circle).

    Returns:
        :class:`ToolFields` equal to what the generic path reads from the decoded dict
        (:func:`cursor_watch.core.model._fields_of`).

    Raises:
        Irregular: a shape left to the generic path (no ``*ToolCall`` variant key, an integer
        beyond 64 bits where the model reads one).
    """
    tc = event.tool_call
    if tc is UNSET:
        raise Irregular
    for key, body in tc.items():
        if key.endswith("ToolCall") and len(key) > 8:
            tool = key[:-8]
            break
    else:
        raise Irregular  # the documented function shape, or no variant at all
    f = ToolFields()
    f.tool = tool
    get = tc.get
    f.tool_call_id = get("toolCallId")
    started = get("startedAtMs")
    completed = get("completedAtMs")
    # (_plain_int, inline: real streams give these as strings, checked by the adapter)
    if (type(started) is int and not INT64_MIN <= started < UINT64_END) or (
            type(completed) is int and not INT64_MIN <= completed < UINT64_END):
        raise Irregular
    f.started_at = started
    f.completed_at = completed
    f._raw = event.raw
    f._payload_raw = None
    if type(body) is not Variant:  # not an object: find_variant's empty body
        f._args, f._args_raw, f.description = None, None, None
        f.result = classify(None)
        f._full_payload = f.result[2]
        return f
    args = body.args
    f._args = None
    f._args_raw = None if args is UNSET else args
    f.description = body.description
    result = body.result
    if result is UNSET or result is None:
        f.result = classify(None)
        f._full_payload = f.result[2]
        return f
    for key, value in result.items():
        if key not in ("isBackground", "pid", "sandboxPolicy"):
            break
    else:
        f.result = classify(None)
        f._full_payload = f.result[2]
        return f
    if type(value) is not OutcomePayload:  # classify_result wraps it as {"value": ...}
        if not _plain_int(value):
            raise Irregular
        f.result = classify({key: value})
        f._full_payload = f.result[2]
        return f
    payload = to_builtins(value)  # the fields present (UNSET ones left out), values as decoded
    if not _plain_int(payload.get("exitCode")):
        raise Irregular
    f._payload_raw = True  # the whole payload is read from the line when a view needs it
    f.result = classify({key: payload})
    return f


def _typed_text(message: Message | None) -> str:
    """:func:`text_of` for a typed ``message`` (:class:`~cursor_watch.formats.cursor_typed.Message`)."""
    if message is None:
        return ""
    content = message.content
    if type(content) is list:
        return "".join(p.text for p in content if p.type == "text" and isinstance(p.text, str))
    return content if isinstance(content, str) else ""


def text_of(message: Any) -> str:
    """The ``text`` items of a ``message.content`` list, concatenated (a string content as it is)."""
    try:  # the shape of every real capture: one {"type": "text", "text": str} item
        content = message["content"]
        if type(content) is list and len(content) == 1:
            item = content[0]
            if item["type"] == "text":
                text = item["text"]
                if type(text) is str:
                    return text
    except (TypeError, KeyError, IndexError):
        pass
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(item["text"] for item in content
                   if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str))


def fields_of(tool_call: Any) -> ToolFields:
    """:class:`~cursor_watch.formats.cursor_typed.ToolFields` of a decoded ``tool_call`` value
    (the generic path)."""
    f = ToolFields()
    tool, body = find_variant(tool_call)
    siblings = tool_call if isinstance(tool_call, dict) else {}
    f.tool = tool
    f.tool_call_id = siblings.get("toolCallId")
    f.started_at = siblings.get("startedAtMs")
    f.completed_at = siblings.get("completedAtMs")
    f._args = body.get("args")
    f._args_raw = None
    f.description = body.get("description")
    f.result = classify_result(body.get("result"))
    f._full_payload = f.result[2]
    f._payload_raw = None
    return f


def _end_merge(merge: Any, mcls: Any, texts: list, mnat: int, mts: Any, msrc: Any, parts: list,
               mstart: int) -> None:
    """Fill the :class:`Text` or :class:`Thinking` event consecutive deltas were merged into
    (:meth:`CursorAdapter.adapt`): its text, how many native events it stands for, the last
    one and its time."""
    if mcls is Text:  # every merged delta is a part of the open text, from mstart on
        texts = parts[mstart:]
        mnat = len(texts)
        mts = msrc.timestamp_ms
    merge.text, merge.natives, merge.src, merge.ts_end = "".join(texts), mnat, msrc, mts


_DERIVED_ARGS = frozenset({"parsingResult", "simpleCommands", "toolCallId"})  # CursorAdapter.search_payloads
_REPEATED_ARGS = frozenset({"command", "workingDirectory"})


def reason_of(payload: dict) -> str:
    """The reason an outcome gives: its first ``reason``, ``error``, ``message`` or ``stderr``
    that says something (a string, not blank), whole; "" when none does."""
    for key in REASON_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def usage_of(usage: Any) -> Usage | None:
    """The canonical :class:`~cursor_watch.core.canonical.Usage` of a ``result.usage`` object.

    Cursor's ``inputTokens`` leave the cache out (the captures: maestro-02 ``inputTokens``
    18377 with ``cacheReadTokens`` 22528; cursor-agent's usage is Anthropic-style per its
    ``cacheWriteTokens``), so canonical ``input_tokens`` = ``inputTokens + cacheReadTokens +
    cacheWriteTokens`` (a part not reported counts as 0). camelCase and snake_case names are
    both read; a value that is not an integer is unknown. ``reasoning_tokens`` where given
    (never in a capture; not said to be part of the output)."""
    if not isinstance(usage, dict):
        return None

    def tok(*names: str) -> int | None:
        for n in names:
            if n in usage:
                return as_int(usage[n])
        return None

    uncached = tok("inputTokens", "input_tokens")
    read = tok("cacheReadTokens", "cache_read_tokens", "cache_read_input_tokens")
    write = tok("cacheWriteTokens", "cache_write_tokens", "cache_creation_input_tokens")
    total = None if uncached is None else uncached + (read or 0) + (write or 0)
    out = Usage(total, tok("outputTokens", "output_tokens"), read, write)
    if "reasoning_tokens" in usage:
        out.reasoning_tokens = as_int(usage["reasoning_tokens"])
    return out


class CursorAdapter(Adapter):
    """Cursor ``stream-json`` -> canonical events (see the module's notes).

    It keeps what the text rules need: the open message's text (its pieces), a delta held as
    a possible re-send (equal to the open text), the text of a message closed by a re-send or
    a tool call (a later flush of it is a duplicate), and the last approval request per kind
    (its response names the call).
    """

    name = "cursor"
    agent = "cursor"
    typed_decoder = DECODER  # cursor_typed's structs

    def __init__(self) -> None:
        super().__init__()
        self._requests: dict[str, str] = {}  # interaction_query kind -> call_id of its last request
        self._had_init = False  # an init was seen: the next one begins a new run (runs.RunSplitter)
        self._sid = False  # the run's session id is known (an init's, or an event's)
        self._last_ts: int | None = None  # the time of the event convert read last
        self._reset_text()

    def _reset_text(self) -> None:
        self._open = False  # a message is open (the model's open segment)
        self._parts: list[str] = []  # its text, in pieces
        self._open_len = 0  # len of its text
        self._text_len = 0  # len of every message of the run so far, the open one included
        self._tent: str | None = None  # a delta equal to the open text: a delta, or a re-send?
        self._tent_item: Any = None
        self._resent: str | None = None  # the text of a message closed by a re-send or a boundary

    def restart(self) -> None:
        """The source started over (a followed file truncated): a new run, nothing open."""
        self._reset_text()
        self._requests.clear()
        self._had_init = False
        self._sid = False

    # -- the text rules ------------------------------------------------------------------------

    def _open_text(self) -> str:
        parts = self._parts
        if len(parts) > 1:
            self._parts = parts = ["".join(parts)]
        return parts[0] if parts else ""

    def _add(self, text: str) -> None:
        parts = self._parts
        parts.append(text)
        if len(parts) > COMPACT_AT:
            self._parts = ["".join(parts)]
        self._open_len += len(text)
        self._text_len += len(text)
        self._open = True

    def _close(self) -> None:
        self._open = False
        self._parts = []
        self._open_len = 0

    def _settle(self, item: Any, resend: bool) -> list:
        """Another event arrived while a delta equal to the open text was held.

        The CLI re-sends the buffered text (shape A) right before an ``interaction_query`` or
        a ``retry`` (maestro-06; maestro's reading of the bundle names those two flush sites
        for shape A), so there (``resend``) the held text was a re-send: it is dropped and the
        message ends (its later flush is a duplicate). Before any other event it was a real
        delta that happened to repeat the text so far (``"ha"``, ``"ha"``): it is kept.
        """
        tent = self._tent
        if tent is None:
            return []
        self._tent = None
        if not resend and self._open:
            self._add(tent)
            return [Text(item, None, TIME_NONE, tent, TEXT_DELTA, 0)]
        out = [Text(item, None, TIME_NONE, "", TEXT_END, 0)] if self._open else []
        self._resent = self._open_text() if self._open else None
        self._close()
        return out

    def _boundary(self, item: Any, resend: bool, end: bool) -> list:
        """A tool call (``end`` False: the model ends the open message at it) or an approval
        query (``end``: a :data:`~cursor_watch.core.canonical.TEXT_END` ends it) ends the open
        message; the held delta is settled first."""
        out = self._settle(item, resend)
        if self._open:
            self._resent = self._open_text()
            if end:
                out.append(Text(item, None, TIME_NONE, "", TEXT_END, 0))
            self._close()
        return out

    def _assistant(self, item: Any, text: str, is_flush: bool, ts: int | None, now: int | None) -> list:
        """The ``assistant`` rules on its text; ``is_flush``: shape B or C (see the module)."""
        out: list = []
        tent = self._tent
        if tent is not None:
            self._tent = None
            if not is_flush or text == self._open_text() + tent:
                self._add(tent)  # a delta followed by a delta (or by its own flush): it was real
                out.append(Text(item, None, TIME_NONE, tent, TEXT_DELTA, 0))
            # else: it was a re-send of the open text: dropped
        t, src = when(ts, now)
        if is_flush:
            resent, self._resent = self._resent, None
            if not self._open:
                if not text or (resent is not None and text == resent):
                    return out  # empty, or the flush of a message already re-sent
                self._text_len += len(text)
            else:
                self._text_len += len(text) - self._open_len if text else 0
            out.append(Text(item, t, src, text, TEXT_MESSAGE))
            self._close()
            return out
        # shape A: a delta, or a re-send of the whole open text
        self._resent = None
        if not text:
            return out
        if self._open and len(text) == self._open_len and text == self._open_text():
            self._tent, self._tent_item = text, item
            return out
        self._add(text)
        out.append(Text(item, t, src, text, TEXT_DELTA))
        return out

    # -- events --------------------------------------------------------------------------------

    def adapt(self, items: list, now: int | None) -> list:
        """:meth:`Adapter.adapt` with the hot shapes inline: typed ``thinking`` and ``assistant``
        deltas (consecutive ones of a batch merged into one canonical event) and typed
        ``tool_call`` events; anything else through :meth:`convert`.

        While deltas are read, the open text's state is kept in locals (written back before
        anything else reads it): a delta costs a few list appends and additions. The deltas
        merged into a :class:`Text` are the open text's parts from ``mstart`` on; those of a
        :class:`Thinking` are kept in ``texts`` (an empty thinking delta counts, adds nothing)."""
        batch = Batch()
        out = batch.out
        append = out.append
        lo, hi = INT64_MIN, UINT64_END
        parts, open_len, text_len, is_open = self._parts, self._open_len, self._text_len, self._open
        fast = self._sid and self._tent is None
        merge: Any = None  # the Text or Thinking event deltas are merged into (None: no merge)
        mcls: Any = None  # its class
        mstart = 0  # a Text merge: its first part in parts
        texts: list[str] = []  # a Thinking merge: its texts, how many deltas, the last one's time
        mnat = 0
        mts: Any = None
        msrc: Any = None  # the last delta merged
        for item in items:
            cls = type(item)
            if fast:
                if cls is AssistantEvent:
                    ts = item.timestamp_ms
                    msg = item.message
                    if (type(ts) is int and (_SHORT_MIN <= ts <= _SHORT_MAX or lo <= ts < hi) and msg is not None
                            and item.model_call_id is UNSET):
                        content = msg.content
                        if type(content) is list and len(content) == 1:
                            part = content[0]
                            text = part.text
                            if part.type == "text" and type(text) is str and text:
                                size = len(text)
                                if not is_open or size != open_len:
                                    # a delta (shape A) that can't be a re-send of the open text
                                    parts.append(text)  # (joined when a re-send question needs the text)
                                    open_len += size
                                    text_len += size
                                    is_open = True
                                    if mcls is Text:
                                        msrc = item
                                        continue
                                    if merge is not None:  # (a thinking merge: parts has no text of it)
                                        _end_merge(merge, mcls, texts, mnat, mts, msrc, parts, mstart)
                                    self._resent = None
                                    merge = batch.last = Text(item, ts, TIME_STREAM, "", TEXT_DELTA)
                                    mcls = Text
                                    msrc = item
                                    mstart = len(parts) - 1
                                    append(merge)
                                    continue
                elif cls is ThinkingEvent:
                    ts = item.timestamp_ms
                    if type(ts) is int and (_SHORT_MIN <= ts <= _SHORT_MAX or lo <= ts < hi) and item.subtype == "delta":
                        text = item.text
                        if mcls is Thinking:
                            mnat += 1
                            msrc = item
                            mts = ts
                            if type(text) is str and text:
                                texts.append(text)
                            continue
                        if merge is not None:
                            _end_merge(merge, mcls, texts, mnat, mts, msrc, parts, mstart)
                        merge = batch.last = Thinking(item, ts, TIME_STREAM, "")
                        mcls, mnat, msrc, mts = Thinking, 1, item, ts
                        texts = [text] if type(text) is str and text else []
                        append(merge)
                        continue
                elif cls is ToolCallEvent:
                    if merge is not None:
                        _end_merge(merge, mcls, texts, mnat, mts, msrc, parts, mstart)
                        merge = mcls = None
                    if is_open:  # the open message ends here (the state goes back to self first)
                        self._parts, self._open_len, self._text_len, self._open = parts, open_len, text_len, is_open
                        got = self._typed_tool_call(item, now)
                        parts, open_len, text_len, is_open = self._parts, self._open_len, self._text_len, self._open
                    else:  # (_typed_tool_call, inline: nothing is open or held)
                        ts = item.timestamp_ms
                        got = None
                        if type(ts) is int and (_SHORT_MIN <= ts <= _SHORT_MAX or lo <= ts < hi):
                            try:
                                f = tool_fields(item, classify_result)
                            except Irregular:
                                f = None
                            if f is not None:
                                got = self._tool_call(item, item.call_id, f, item.model_call_id, ts, now)
                    if got is not None:  # (batch.add, inline: tool events, never none)
                        out += got
                        batch.last = got[-1]
                        continue
            if merge is not None:
                _end_merge(merge, mcls, texts, mnat, mts, msrc, parts, mstart)
                merge = mcls = None
            self._parts, self._open_len, self._text_len, self._open = parts, open_len, text_len, is_open
            if cls is Invalid:
                # a line that is not an event ends a held delta as a real one (as any event but
                # an unknown one or a connection notice)
                got = self._settle(item, False)
                if got:
                    batch.add(item, got)
                append(item)
            else:
                try:
                    got = self.convert(item, now)
                except Exception as err:  # noqa: BLE001 - any shape a stream could have: a diagnostic
                    got = [self.unreadable(item, err)]
                batch.add(item, got)
            parts, open_len, text_len, is_open = self._parts, self._open_len, self._text_len, self._open
            fast = self._sid and self._tent is None
        if merge is not None:
            _end_merge(merge, mcls, texts, mnat, mts, msrc, parts, mstart)
        self._parts, self._open_len, self._text_len, self._open = parts, open_len, text_len, is_open
        return batch.events()

    def convert(self, item: Any, now: int | None) -> list:
        """The canonical events of one native event, typed (off its fast path) or generic.

        The first counts the native event (``natives`` 1), the others none. A typed event is
        read from its struct (:meth:`_typed`) unless its ``timestamp_ms`` is not an integer in
        64 bits or the run's session id is still to be read from it: then from its line's dict,
        as every event of the generic path."""
        if type(item) is not Event:
            out = self._typed(item, now) if self._sid else None
            if out is None:
                try:
                    data = item.data
                except ValueError:  # orjson refuses what msgspec read (an overflowing number)
                    return [invalid_item(item.raw, item.line, item.offset, item.size)]
                out = self._generic(Event(data, item.line, item.offset, item.size), now)
        else:
            out = self._generic(item, now)
        if len(out) > 1:
            out[0].natives = 1
            for ev in out[1:]:
                ev.natives = 0
        elif out:
            out[0].natives = 1
        elif self._last_ts is not None:  # nothing to show, but a time the run had (its first or last)
            out = [Silent(item, 1, self._last_ts, TIME_STREAM)]
        return out

    def _typed(self, item: Any, now: int | None) -> list | None:
        """A typed event's canonical events, or None for the generic path (nothing changed)."""
        cls = type(item)
        self._last_ts = None
        if cls is ToolCallEvent:
            return self._typed_tool_call(item, now)
        ts = item.timestamp_ms
        if ts is UNSET:
            ts = None
        elif type(ts) is not int or not INT64_MIN <= ts < UINT64_END:
            return None
        self._last_ts = ts
        if cls is AssistantEvent:
            return self._assistant(item, _typed_text(item.message), item.model_call_id is not UNSET or ts is None,
                                   ts, now)
        if cls is ThinkingEvent:
            out = self._settle(item, False)
            done = item.subtype == "completed"
            text = item.text
            out.append(Thinking(item, *when(ts, now), "" if done or type(text) is not str else text, done))
            return out
        return None

    def _generic(self, item: Event, now: int | None) -> list:
        """The canonical events of a generic :class:`~cursor_watch.core.decode.Event`."""
        data = item.data
        t = item.type
        ts = data.get("timestamp_ms")
        if ts is not None and type(ts) is not int:
            ts = as_int(ts)
        self._last_ts = ts
        out: list = []
        if not self._sid and t != "system":
            # no init seen (yet): every 2026 event carries session_id (reference 2)
            sid = data.get("session_id")
            if isinstance(sid, str):
                self._sid = True
                out.append(RunStart(item, None, TIME_NONE, self.agent, session_id=sid, implicit=True))
        if t not in KNOWN_TYPES:
            out.append(self.unknown(item, now, ts))
        elif t == "assistant":
            out += self._assistant(item, text_of(data.get("message")), "model_call_id" in data or "timestamp_ms" not in data,
                                   ts, now)
        elif t == "thinking":
            out += self._settle(item, False)
            text = data.get("text")
            done = item.subtype == "completed"
            out.append(Thinking(item, *when(ts, now), "" if done or not isinstance(text, str) else text, done))
        elif t == "tool_call":
            out += self._tool_call(item, data.get("call_id"), fields_of(data.get("tool_call")), data.get("model_call_id"),
                                   ts, now)
        elif t == "system":
            out += self._settle(item, False)
            out += self._system(item, data, ts, now)
        elif t == "user":
            out += self._settle(item, False)
            out.append(Prompt(item, *when(ts, now), text_of(data.get("message"))))
        elif t == "result":
            out += self._result(item, data, ts, now)
        elif t == "interaction_query":
            out += self._boundary(item, True, True)
            out.append(self._interaction(item, data, ts, now))
        elif t == "retry":
            out += self._settle(item, True)
            bits = [f"retry {item.subtype}".strip()]
            if "attempt" in data:
                bits.append(f"attempt {data.get('attempt')}")
            if data.get("is_resume"):
                bits.append("resume")
            if "checkpoint_turn_count" in data:
                bits.append(f"checkpoint turn {data.get('checkpoint_turn_count')}")
            out.append(StatusNote(item, *when(ts, now), "retry", item.subtype, ", ".join(bits), fields=_fields(data)))
        else:  # connection
            bits = [f"connection {item.subtype}".strip()]
            if "attempt" in data:
                bits.append(f"attempt {data.get('attempt')}")
            if isinstance(data.get("endpoint_url"), str):
                bits.append(data["endpoint_url"])
            out.append(StatusNote(item, *when(ts, now), "connection", item.subtype, ", ".join(bits),
                                  fields=_fields(data)))
        return out

    def _system(self, item: Event, data: dict, ts: int | None, now: int | None) -> list:
        if item.subtype == "init":
            out: list = []
            if self._had_init:  # a new run begins here (runs.RunSplitter): nothing of the last is open
                self._reset_text()
                self._requests.clear()
            self._had_init = True
            sid = data.get("session_id")
            self._sid = sid is not None
            out.append(RunStart(item, *when(ts, now), self.agent, session_id=sid, model=data.get("model"),
                                cwd=data.get("cwd"), api_key_source=data.get("apiKeySource"),
                                permission_mode=data.get("permissionMode"), tools=_names(data.get("tools")),
                                mcp_servers=_servers(data.get("mcp_servers"))))
            mcp = self.mcp_note(out[-1])
            if mcp is not None:
                out.append(mcp)
            return out
        fields = {k: v for k, v in data.items() if k not in ("type", "subtype", "session_id", "timestamp_ms")}
        text = item.subtype or "system"
        if fields:
            text += " " + ", ".join(f"{k}={short(str(v), 80)}" for k, v in list(fields.items())[:6])
        return [StatusNote(item, *when(ts, now), "system", item.subtype, text, fields=fields or None)]

    def _result(self, item: Event, data: dict, ts: int | None, now: int | None) -> list:
        # a held delta right before the result: the result's text tells which it was (the
        # assistant text so far plus the held delta is the result's: a delta)
        text = data.get("result")
        tent = self._tent
        resend = not (tent is not None and isinstance(text, str) and len(text) == self._text_len + len(tent)
                      and text.endswith(self._open_text() + tent))
        out = self._settle(item, resend)
        self._close()
        subtype = data.get("subtype")
        rid = data.get("request_id")
        out.append(RunEnd(item, *when(ts, now), subtype=subtype if isinstance(subtype, str) else "",
                          is_error=data.get("is_error") is True,
                          text=text if isinstance(text, str) else ("" if text is None else str(text)),
                          duration_ms=as_int(data.get("duration_ms")), duration_api_ms=as_int(data.get("duration_api_ms")),
                          request_id=rid if isinstance(rid, str) else None, usage=usage_of(data.get("usage")),
                          session_id=data.get("session_id") if isinstance(data.get("session_id"), str) else None))
        return out

    def _interaction(self, item: Event, data: dict, ts: int | None, now: int | None) -> StatusNote:
        qtype = data.get("query_type")
        if not isinstance(qtype, str):
            qtype = "query"
        kind = qtype.replace("RequestQuery", "").replace("InteractionQuery", "").replace("Query", "") or qtype
        if item.subtype == "request":
            query = data.get("query")
            if not isinstance(query, dict):
                query = {}
            inner = next((v for k, v in query.items() if k != "id" and isinstance(v, dict)), {})
            args = inner.get("args")
            if not isinstance(args, dict):
                args = inner
            call_id = args.get("toolCallId")
            if not isinstance(call_id, str):
                call_id = ""
            self._requests[kind] = call_id
            what = summarize(kind, args) if args else ""
            text = f"{kind} request" + (f": {what}" if what and what != kind else "")
            return StatusNote(item, *when(ts, now), "interaction_query", item.subtype, text, call_id)
        resp = data.get("response")
        if not isinstance(resp, dict):
            resp = {}
        inner = next((v for k, v in resp.items() if k != "id" and isinstance(v, dict)), {})
        if "result" in inner and isinstance(inner["result"], dict):
            inner = inner["result"]
        answer = next(iter(inner), "answered") if inner else "answered"
        reason = ""
        if isinstance(inner.get(answer), dict):
            reason = str(inner[answer].get("reason") or "")
        text = f"{kind} {item.subtype or 'response'}: {answer}" + (f" ({short(reason, 120)})" if reason else "")
        # the call named by the last request of the same kind
        call_id = self._requests.get(kind) or ""
        return StatusNote(item, *when(ts, now), "interaction_query", item.subtype, text, call_id,
                          about_call=bool(call_id))

    # -- tool calls ----------------------------------------------------------------------------

    def _typed_tool_call(self, item: ToolCallEvent, now: int | None) -> list | None:
        """A typed ``tool_call`` event's canonical events, or None when its shape is left to the
        generic path (nothing has changed then)."""
        ts = item.timestamp_ms
        if ts is UNSET:
            ts = None
        elif type(ts) is int:
            if not INT64_MIN <= ts < UINT64_END:
                return None
        else:
            ts = as_int(ts)
        try:
            f = tool_fields(item, classify_result)
        except Irregular:
            return None
        return self._tool_call(item, item.call_id, f, item.model_call_id, ts, now)

    def _tool_call(self, item: Any, call_id: Any, f: ToolFields, mcid: Any, ts: int | None, now: int | None) -> list:
        """The canonical events of a ``tool_call`` event from what either path read (``f``)."""
        # parallel calls: nothing is open between them (the boundary would change nothing)
        out = self._boundary(item, False, False) if self._open or self._tent is not None else []
        if type(call_id) is not str or not call_id:
            cid = f.tool_call_id
            call_id = cid if isinstance(cid, str) and cid else f"(no call_id, line {item.line})"
        tool = f.tool
        desc = f.description
        if type(desc) is not str:
            desc = ""
        if type(mcid) is not str:
            mcid = ""
        started = f.started_at
        if started is not None and type(started) is not int:
            started = as_int(started)
        t: int | None
        if ts is not None:
            t, src = ts, TIME_STREAM
        else:
            t, src = when(None, now)
        # (positional: the constructors' order, see cursor_watch.core.canonical; this runs per call)
        if item.subtype == "completed":
            status, outcome, payload = f.result
            ended = f.completed_at
            if ended is not None and type(ended) is not int:
                ended = as_int(ended)
            code = payload.get("exitCode")
            if code is not None and type(code) is not int:
                code = as_int(code)
            out.append(ToolEnd(item, t, src, call_id, tool, tool, status, outcome,
                               reason_of(payload) if status != STATUS_SUCCESS else "", code,
                               "", desc, mcid, None, None, f, started, ended))
        elif item.subtype == "started":
            out.append(ToolStart(item, t, src, call_id, tool, tool, "", desc, mcid, None, None, f, started))
        else:  # an unknown subtype: a 3P "progress"
            out.append(ToolUpdate(item, t, src, call_id, tool, tool, "", desc, mcid, None, None, f, started))
        return out

    def finish(self, now: int | None) -> list:
        """End of input: a delta still held was a real one (the model appends it)."""
        if self._tent is None:
            return []
        return self._settle(self._tent_item, False)

    # -- payloads, re-read by offset -------------------------------------------------------------

    @staticmethod
    def payloads(kind: str, call_id: str, started: dict | None, ended: dict | None,
                 known_args: Any = None) -> CallPayloads:
        """Cursor's payloads: the ``*ToolCall`` variant's ``args`` (from ``started``, else
        ``completed``, else ``known_args``: the model's small copy) and ``result`` (from
        ``completed``), as the CLI wrote them."""
        args = result = None
        has_result = False
        for data in (started, ended):
            if data is None:
                continue
            _tool, body = find_variant(data.get("tool_call"))
            if isinstance(body.get("args"), dict) and args is None:
                args = body["args"]
            if data is ended and "result" in body:
                result, has_result = body["result"], True
        return payloads_of(kind, args if args is not None else known_args, result, has_result)

    @staticmethod
    def search_payloads(args: Any, result: Any) -> tuple[Any, Any]:
        """:meth:`Adapter.search_payloads`: a shell call's ``parsingResult`` and
        ``simpleCommands`` (the CLI's parse of ``command``), an argument's ``toolCallId`` (the
        call's id) and an outcome's ``command`` and ``workingDirectory`` (its arguments again:
        every real capture's completed shell call, e.g. maestro 05's rejections) are left out;
        the command itself is counted in the arguments (and in the call's summary)."""
        if isinstance(args, dict) and any(k in args for k in _DERIVED_ARGS):
            args = {k: v for k, v in args.items() if k not in _DERIVED_ARGS}
        if isinstance(result, dict):
            out = {}
            for key, value in result.items():
                if isinstance(value, dict) and any(k in value for k in _REPEATED_ARGS):
                    value = {k: v for k, v in value.items() if k not in _REPEATED_ARGS}
                out[key] = value
            result = out
        return args, result

    @staticmethod
    def native_payloads(data: dict) -> list[tuple[Any, Any]]:
        """The ``(args, result)`` of a ``tool_call`` line's variant (none for another line)."""
        tc = data.get("tool_call")
        if tc is None:
            return []
        _tool, body = find_variant(tc)
        return [(body.get("args") if isinstance(body.get("args"), dict) else None, body.get("result"))]


def _fields(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in ("type", "subtype", "session_id", "timestamp_ms")}


def _names(value: Any) -> list[str] | None:
    """A list of tool names as given (``tools``), or None when it isn't one."""
    return [_s(v) for v in value] if isinstance(value, list) else None


def _servers(value: Any) -> list[tuple[str, str]] | None:
    """``mcp_servers`` (``[{name, status}]``) as ``[(name, status)]``, or None."""
    if not isinstance(value, list):
        return None
    return [(_s(v.get("name")), _s(v.get("status"))) for v in value if isinstance(v, dict)]


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def payloads_of(kind: str, args: Any, result: Any, has_result: bool = True) -> CallPayloads:
    """:class:`~cursor_watch.formats.common.CallPayloads` of a Cursor call of ``kind`` from its
    variant's ``args`` and ``result`` (``has_result``: a result was read, even a null one)."""
    a = args if isinstance(args, dict) else {}
    p: dict
    if not has_result and result is None:
        status, outcome, p = "running", "", {}
    else:
        status, outcome, p = classify_result(result)
    return CallPayloads(args, result, view_of(kind, a, p), status, outcome,
                        [(k, v) for k, v in p.items() if k in ("reason", "error", "message", "exitCode", "signal")])


def view_of(kind: str, a: dict, p: dict) -> dict:
    """The canonical view fields (:func:`cursor_watch.core.tools.detail_sections`) of a Cursor call:
    from its ``args`` ``a`` and its outcome's payload ``p`` (reference 2.5's variants)."""
    v: dict[str, Any] = {}
    if kind == "shell":
        v["command"] = _s(a.get("command") or p.get("command"))
        wd = a.get("workingDirectory") or p.get("workingDirectory")
        if wd:
            v["cwd"] = _s(wd)
        if "exitCode" in p:
            v["exit_code"] = p.get("exitCode")
        if p.get("signal"):
            v["signal"] = _s(p.get("signal"))
        t = p.get("executionTime") or p.get("localExecutionTimeMs")
        if t is not None:
            v["exec_ms"] = t
        if a.get("timeout"):
            v["timeout_ms"] = a.get("timeout")
        for key in ("stdout", "stderr"):
            if p.get(key):
                v[key] = p[key]
        if p.get("interleavedOutput"):
            v["output"] = p["interleavedOutput"]
    elif kind == "read":
        v["path"] = _s(a.get("path") or p.get("path"))
        stats = [(label, _s(p[key])) for key, label in (("totalLines", "lines"), ("fileSize", "bytes"),
                                                         ("totalChars", "characters")) if key in p]
        rr = p.get("readRange")
        if isinstance(rr, dict):
            stats.append(("range", f"{rr.get('startLine')}-{rr.get('endLine')}"))
        if p.get("exceededLimit"):
            stats.append(("exceeded limit", "yes"))
        v["stats"] = stats
        if "content" in p:
            v["content"] = p.get("content")
    elif kind == "edit":
        v["path"] = _s(a.get("path") or p.get("path"))
        stats = []
        if "linesAdded" in p or "linesRemoved" in p:
            stats.append(("lines", f"+{p.get('linesAdded', 0)} -{p.get('linesRemoved', 0)}"))
        if p.get("message"):
            stats.append(("message", _s(p["message"])))
        v["stats"] = stats
        if p.get("diffString"):
            v["diff"] = p["diffString"]
        elif a.get("streamContent"):
            v["new_content"] = a["streamContent"]
        else:
            v["edits"] = [(key, a[key]) for key in ("strReplace", "applyPatch", "multiStrReplace") if key in a]
    elif kind == "write":
        v["path"] = _s(a.get("path") or p.get("path"))
        v["stats"] = [(k, _s(p[k])) for k in ("linesCreated", "fileSize", "linesAdded") if k in p]
        if a.get("fileText") is not None:
            v["text"] = a.get("fileText")
    elif kind == "grep":
        v["pattern"] = _s(a.get("pattern") or p.get("pattern"))
        v["path"] = _s(a.get("path") or p.get("path"))
        files: list[tuple[str, list]] = []
        wr = p.get("workspaceResults")
        for root in (wr.values() if isinstance(wr, dict) else []):
            content = root.get("content") if isinstance(root, dict) else None
            for f in (content or {}).get("matches", []) if isinstance(content, dict) else []:
                lines = [(m.get("lineNumber"), _s(m.get("content"))) for m in f.get("matches", []) if isinstance(m, dict)]
                files.append((_s(f.get("file")), lines))
            files_only = root.get("files") if isinstance(root, dict) else None
            if isinstance(files_only, dict):
                for f in files_only.get("files", []):
                    files.append((_s(f), []))
        v["matches"] = files
    elif kind == "glob":
        files_list = p.get("files")
        if not isinstance(files_list, list):
            files_list = []
        v["pattern"] = _s(a.get("globPattern") or p.get("pattern"))
        v["directory"] = _s(a.get("targetDirectory") or p.get("path"))
        v["count"] = _s(p.get("totalFiles", len(files_list)))
        v["files"] = [_s(f) for f in files_list]
    elif kind == "updateTodos":
        todos = p.get("todos") if isinstance(p.get("todos"), list) else a.get("todos")
        v["todos"] = [(todo_status(t.get("status")), _s(t.get("content"))) for t in todos or [] if isinstance(t, dict)]
    elif kind == "webFetch":
        v["url"] = _s(a.get("url") or p.get("url"))
        if p.get("markdown"):
            v["markdown"] = p["markdown"]
    elif kind == "webSearch":
        v["query"] = _s(a.get("searchTerm") or a.get("query"))
        refs = p.get("references")
        if isinstance(refs, list) and refs:
            v["references"] = [(_s(r.get("title")), _s(r.get("url")), _s(r.get("chunk"))) for r in refs
                               if isinstance(r, dict)]
    elif kind == "task":
        v["description"] = _s(a.get("description"))
        v["model"] = _s(a.get("model"))
        if a.get("prompt"):
            v["prompt"] = a["prompt"]
        steps = p.get("conversationSteps")
        v["said"] = [_s(st.get("assistantMessage", {}).get("text")) for st in steps or [] if isinstance(st, dict)
                     and isinstance(st.get("assistantMessage"), dict)]
    elif kind == "mcp":
        v["tool"] = _s(a.get("toolName") or a.get("name"))
        v["server"] = _s(a.get("providerIdentifier"))
        inner = a.get("args")
        if isinstance(inner, dict) and inner:
            v["arguments"] = inner
        content = p.get("content")
        texts = []
        for c in content if isinstance(content, list) else []:
            t = c.get("text") if isinstance(c, dict) else None
            texts.append(_s(t.get("text")) if isinstance(t, dict) else _s(t))
        if texts:
            v["content"] = "\n".join(texts)
    elif kind == "getMcpTools":
        v["server"] = _s(a.get("server"))
        v["tool"] = _s(a.get("toolName"))
        if a.get("pattern"):  # a search of the tools (GetMcpToolsArgs.pattern)
            v["pattern"] = _s(a.get("pattern"))
        if p.get("content"):
            v["content"] = p["content"]
    elif kind == "createPlan":
        v["stats"] = [(k, _s(a.get(k))) for k in ("name", "overview") if a.get(k)]
        if a.get("plan"):
            v["plan"] = a["plan"]
        todos = a.get("todos")
        if isinstance(todos, list) and todos:
            v["todos"] = [(todo_status(t.get("status")), _s(t.get("content"))) for t in todos if isinstance(t, dict)]
    return v

