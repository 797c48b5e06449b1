"""Typed decoding of Claude Code ``stream_event``, ``user`` and ``assistant`` lines: the Claude adapter's fast path.

With ``--include-partial-messages`` most lines of a Claude Code stream are ``stream_event``
lines (``bench/gen_stream.py OUT --agent claude --partial``: 83 % of the lines, 61 % of them
``content_block_delta`` text and thinking deltas). This module decodes them with
:mod:`msgspec` straight into structs holding only what the adapter reads
(:meth:`cursor_watch.formats.claude.ClaudeAdapter.adapt` takes them from their attributes:
no dict, no generic :class:`~cursor_watch.core.decode.Event`); everything else of the line
(``session_id``, ``uuid``...) is skipped in C.

Rules (why a typed event always means what the generic path would make of the same line):

* Only ``stream_event``, ``user``, ``assistant`` and ``system`` lines are typed (a ``system``
  line of a rare subtype is read from its dict by the adapter); every other line raises in
  :data:`DECODER` and goes the generic way (``orjson.loads`` into :class:`~cursor_watch.core.decode.Event`).
* A ``user`` line's tool results (``content``, most of a stream's bytes: 74 % of the generated
  stream's) stay raw: a result the model classifies without its text (a success) is given to
  it with the text empty, and its text decoded only if something asks for the event's body
  (:func:`cursor_watch.formats.common.lazy_tool_event`).
* Every field the adapter reads is typed as strictly as real streams write it (strings or
  null, integers within 64 bits, objects): a line with any other shape there raises
  ``msgspec.ValidationError`` and takes the generic path, which has the rules for it. So a
  typed value is always the value ``orjson`` gives (no ``Any`` field, whose integers beyond
  64 bits would differ: ``orjson`` turns them into floats).
* The bulky or rare parts (a tool call's ``input``, a tool result's ``content``,
  ``tool_use_result``, a message's ``usage``) stay :class:`msgspec.Raw`
  and are decoded by ``orjson`` when read (:func:`loads`), as the generic path decodes them
  (before the adapter changes anything for the line). msgspec checks the JSON it skips as
  strictly as ``orjson`` (escapes, surrogates, control characters), but for UTF-8 (checked by
  the decoder) and numbers beyond a double: a raw part that is a JSON string always decodes.
* As for Cursor's typed path (:mod:`cursor_watch.formats.cursor_typed`), msgspec skips unknown
  fields without checking them as strictly as ``orjson``: the decoder checks UTF-8 on every
  line that is not ASCII first, and a number that overflows a double in a skipped field is the
  one known difference (``tests/unit/formats/test_typed.py`` pins it).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
import orjson
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from .cursor_typed import INT64_MIN, TypedEvent

INT64_MAX = (1 << 63) - 1

# an integer within int64, which orjson keeps as int too (it gives a float beyond 64 bits; a
# value between 2**63 and 2**64, an int for both, is refused here all the same: msgspec's bounds
# are int64s, and such a line takes the generic path)
Int = Annotated[int, Meta(ge=INT64_MIN, le=INT64_MAX)]


class Delta(Struct, gc=False):
    """``event.delta`` of a ``content_block_delta``: its ``type`` (``text_delta``,
    ``thinking_delta``, ``input_json_delta``...) and the one text field of that type."""

    type: str | None = None
    text: str | None | UnsetType = UNSET
    thinking: str | None | UnsetType = UNSET
    partial_json: str | None | UnsetType = UNSET


class StartBlock(Struct, gc=False):
    """``event.content_block`` of a ``content_block_start``: the block's ``type``, a tool
    call's ``id`` and ``name``, and its ``input`` (raw JSON, UNSET when absent)."""

    type: str | None = None
    id: str | None = None
    name: str | None = None
    input: Raw | UnsetType = UNSET


class StartMessage(Struct, gc=False):
    """``event.message`` of a ``message_start``: its ``id`` (the rest is skipped)."""

    id: str | None = None


class StreamInner(Struct, gc=False):
    """The API stream event a ``stream_event`` line wraps (``event``).

    ``type`` is ``content_block_delta``, ``content_block_start``, ``content_block_stop``,
    ``message_start``, ``message_delta``, ``message_stop`` (or another: nothing then);
    ``index`` the block's index within its message (None when absent or null);
    ``content_block`` (a start's block: :class:`StartBlock`) and ``message``
    (``message_start``'s: :class:`StartMessage`) are UNSET when absent.
    """

    type: str | None = None
    index: Int | None = None
    delta: Delta | None | UnsetType = UNSET
    content_block: StartBlock | UnsetType = UNSET
    message: StartMessage | UnsetType = UNSET


class ClaudeLine(TypedEvent, kw_only=True):
    """Fields every typed Claude Code line has.

    Attributes:
        subtype: the line's ``subtype`` ("" when absent, as :class:`~cursor_watch.core.decode.Event`).
        timestamp_ms: the line's ``timestamp_ms`` (None when absent; Claude Code writes none).
        line, offset, size, raw: as :class:`~cursor_watch.formats.cursor_typed.TypedEvent`.
    """

    subtype: str = ""
    timestamp_ms: Int | None = None


class AgentLine(ClaudeLine, kw_only=True):
    """A line of the main agent or of a sub-agent: ``parent_tool_use_id``, the sub-agent call
    the line belongs to (None for the main agent); and :class:`ClaudeLine`'s fields."""

    parent_tool_use_id: str | None = None


class MessageLine(AgentLine, kw_only=True):
    """A ``user`` or ``assistant`` line: ``timestamp``, the ISO time Claude Code writes on it
    (None when absent); and :class:`AgentLine`'s fields."""

    timestamp: str | None = None


class StreamEvent(AgentLine, tag="stream_event", tag_field="type", kw_only=True):
    """A Claude Code ``stream_event`` line.

    Attributes:
        event: the wrapped API event (:class:`StreamInner`).
        parent_tool_use_id, subtype, timestamp_ms, line, offset, size, raw: as :class:`AgentLine`.
    """

    type: ClassVar[str] = "stream_event"
    known: ClassVar[bool] = False  # not a canonical type (the generic Event says the same)
    event: StreamInner


class ResultBlock(Struct, gc=False):
    """One item of a ``user`` line's ``message.content``: a ``tool_result`` (``tool_use_id``,
    ``content``, ``is_error``) or a ``text`` block (``text``); other types are ignored.

    ``content`` stays raw JSON (a tool's output, most of a stream's bytes): decoded by
    ``orjson`` (:func:`loads`) where it is read, or never when nothing reads it (see
    :meth:`cursor_watch.formats.claude.ClaudeAdapter._user_typed`).
    """

    type: str | None = None
    tool_use_id: str | None = None
    content: Raw | UnsetType = UNSET
    is_error: bool | None = None
    text: str | None = None


class UserMessage(Struct, gc=False):
    """``message`` of a ``user`` line: its content (a list of blocks, a string, or null)."""

    content: list[ResultBlock] | str | None = None


class UserEvent(MessageLine, tag="user", tag_field="type", kw_only=True):
    """A Claude Code ``user`` line (tool results; a prompt, a sub-agent's prompt).

    Attributes:
        message: its message (:class:`UserMessage`: required, an object).
        timestamp, parent_tool_use_id, subtype, timestamp_ms: as :class:`MessageLine`.
        tool_use_result: the tool's structured output (raw JSON; UNSET when absent).
        isSynthetic: True on a message Claude Code wrote itself (a compaction's summary).
        line, offset, size, raw: as :class:`~cursor_watch.formats.cursor_typed.TypedEvent`.
    """

    type: ClassVar[str] = "user"
    message: UserMessage
    tool_use_result: Raw | UnsetType = UNSET
    isSynthetic: bool | None = None  # noqa: N815 (the stream's own key)


class MessageBlock(Struct, gc=False):
    """One item of an ``assistant`` line's ``message.content``: ``text`` (``text``), ``thinking``
    (``thinking``), ``tool_use``/``server_tool_use`` (``id``, ``name``, ``input`` raw).
    ``tool_use_id`` (a server tool's result) is only looked for: such a line is read the
    generic way (:meth:`cursor_watch.formats.claude.ClaudeAdapter._assistant_typed`)."""

    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    id: str | None = None
    name: str | None = None
    input: Raw | UnsetType = UNSET
    tool_use_id: Raw | UnsetType = UNSET


class AssistantMessage(Struct, gc=False):
    """``message`` of an ``assistant`` line: ``id`` (several lines share it), ``content`` (a
    list of blocks, a string, or null), ``usage`` (raw JSON: UNSET when absent)."""

    id: str | None = None
    content: list[MessageBlock] | str | None = None
    usage: Raw | UnsetType = UNSET


class AssistantEvent(MessageLine, tag="assistant", tag_field="type", kw_only=True):
    """A Claude Code ``assistant`` line: one message (often one content block of it).

    Attributes:
        message: its message (:class:`AssistantMessage`: required, an object).
        timestamp, parent_tool_use_id, subtype, timestamp_ms: as :class:`MessageLine`.
        error: an API error Claude Code reports on the line (``rate_limit``...), or None.
        line, offset, size, raw: as :class:`~cursor_watch.formats.cursor_typed.TypedEvent`.
    """

    type: ClassVar[str] = "assistant"
    message: AssistantMessage
    error: str | None = None


class SystemEvent(ClaudeLine, tag="system", tag_field="type", kw_only=True):
    """A Claude Code ``system`` line, with the fields of the frequent subtypes
    (:data:`TYPED_SUBTYPES`): a ``status`` line's ``status``, ``compact_result``,
    ``compact_error`` and ``permissionMode``, a ``thinking_tokens`` line's ``estimated_tokens``.
    A line of any other subtype (``init``, hook events...) is read from its line's dict by the
    adapter (:meth:`cursor_watch.formats.claude.ClaudeAdapter.adapt`).

    Its fields are :class:`ClaudeLine`'s and those named above.
    """

    type: ClassVar[str] = "system"
    subtype: str = ""
    status: str | None = None
    compact_result: str | None = None
    compact_error: str | None = None
    permissionMode: str | None = None  # noqa: N815 (the stream's own key)
    estimated_tokens: Int | None = None


TYPED_SUBTYPES = frozenset({"status", "thinking_tokens"})
"""The ``system`` subtypes the adapter reads from a :class:`SystemEvent`'s fields."""

TYPED_CLASSES = (StreamEvent, UserEvent, AssistantEvent, SystemEvent)

DECODER = msgspec.json.Decoder(StreamEvent | UserEvent | AssistantEvent | SystemEvent)
"""Decodes one line (bytes) into a :class:`StreamEvent`, :class:`UserEvent`,
:class:`AssistantEvent` or :class:`SystemEvent`; raises
``msgspec.ValidationError`` for any other kind or shape and ``msgspec.DecodeError`` for bad
JSON (the same errors as :data:`cursor_watch.formats.cursor_typed.DECODER`)."""


def loads(raw: Raw | UnsetType) -> Any:
    """A raw part decoded as the generic path decodes it (``orjson``); None when absent.

    Raises:
        orjson.JSONDecodeError: for what msgspec read but ``orjson`` refuses (a number beyond
            a double): the caller gives the line to the generic path.
    """
    if raw is UNSET:
        return None
    return orjson.loads(memoryview(raw))
