"""Typed decoding of Cursor ``stream-json`` lines: the Cursor adapter's fast path.

Most events of a Cursor stream are ``assistant`` and ``thinking`` deltas, and most of its bytes
are the ``args`` and ``result`` of ``tool_call`` events (``bench/gen_stream.py OUT 40000
--content-kb 6 --seed 3``: 89 % deltas, 12 % tool calls holding 80 % of the bytes). This module
decodes those three kinds with :mod:`msgspec` straight into structs that hold only the fields
the model reads; unknown fields are skipped in C without building Python objects, and a tool
call's ``tool_call`` object stays a :class:`msgspec.Raw` slice of the line, decoded piece by
piece only where the model looks (:func:`cursor_watch.formats.cursor.tool_fields`).

Rules (why a typed event always means what the generic path would make of the same line):

* Every other event kind (``system``, ``user``, ``result``, ...), and any line whose shape the
  structs don't fit (a ``message`` that is not an object, a content item that is not one, a
  ``subtype`` that is a number), raises in :data:`DECODER` and goes the generic way
  (``orjson.loads`` into :class:`cursor_watch.core.decode.Event`).
* Fields the model checks itself (``timestamp_ms``, ``text``, ``call_id``...) are typed
  ``Any``: they hold exactly the value ``orjson`` would give (same strings, same numbers), so
  the model's own checks decide, as on the generic path. Integers outside 64 bits are the one
  exception (``orjson`` turns them into floats); the model checks the range where it reads one.
* msgspec skips unknown fields without checking them as strictly as ``orjson`` parses them: it
  accepts invalid UTF-8 and numbers that overflow a double (``1e400``) there. The decoder
  (:class:`cursor_watch.core.decode.Decoder`) checks UTF-8 on every line that is not ASCII before
  taking this path; an overflowing number in a field the model never reads is the one known
  difference (the generic path calls such a line invalid JSON, the typed path reads the event);
  ``tests/unit/formats/test_typed.py`` pins it.
* A typed event keeps its line's bytes (:attr:`raw`, no copy: the framer's piece), so
  :attr:`data` gives the same dict as the generic path, built on first use.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
import orjson
from msgspec import UNSET, Raw, Struct, UnsetType, field


# positions are set by the decoder after decoding; under these JSON names (never in a real
# stream) a hostile line can only fill them with values that are overwritten, or be refused
_POS = {"line": "cursor-watch:line", "offset": "cursor-watch:offset", "raw": "cursor-watch:raw"}

INT64_MIN = -(1 << 63)
UINT64_END = 1 << 64  # orjson keeps integers in [INT64_MIN, UINT64_END) as int, others become float


class Part(Struct, gc=False):
    """One item of ``message.content`` (``{"type": "text", "text": ...}`` in every capture)."""

    type: Any = None
    text: Any = None


class Message(Struct, gc=False):
    """``message`` of an ``assistant`` event: only its content (a list of items, or a string)."""

    content: list[Part] | str | None = None


class TypedEvent(Struct, gc=False):
    """Fields every typed event has. ``line`` (1-based), ``offset`` and ``size`` (bytes) place
    it in the stream; ``raw`` is its line's bytes; ``known`` is always True (a modelled type)."""

    line: int = field(default=0, name=_POS["line"])
    offset: int = field(default=0, name=_POS["offset"])
    raw: Any = field(default=b"", name=_POS["raw"])
    known: ClassVar[bool] = True

    @property
    def size(self) -> int:
        """Bytes of its line in the stream, the newline included (a typed line is the line's
        bytes as they are: no BOM, no CR; events.Decoder)."""
        return len(self.raw) + 1

    @property
    def data(self) -> dict:
        """The event as the generic path decodes it (``orjson.loads`` of :attr:`raw`).

        Raises ``orjson.JSONDecodeError`` only for a line ``orjson`` rejects although msgspec
        read it (an overflowing number in a skipped field): the caller treats it as invalid.
        """
        return orjson.loads(self.raw)


class AssistantEvent(TypedEvent, tag="assistant", tag_field="type"):
    """An ``assistant`` event: a delta, a re-send or a flush (reference section 2.3).

    ``timestamp_ms`` and ``model_call_id`` are :data:`msgspec.UNSET` when absent (their
    presence is what tells a flush from a delta).
    """

    type: ClassVar[str] = "assistant"
    subtype: Any = ""
    message: Message | None = None
    timestamp_ms: Any = UNSET
    model_call_id: Any = UNSET


class ThinkingEvent(TypedEvent, tag="thinking", tag_field="type"):
    """A ``thinking`` event (``delta`` with ``text``, or ``completed``; reference 2.4)."""

    type: ClassVar[str] = "thinking"
    subtype: Any = ""
    text: Any = None
    timestamp_ms: Any = UNSET


class OutcomePayload(Struct, gc=False):
    """The fields of an outcome body the model keeps (``exitCode`` and the reason texts)."""

    exitCode: Any = UNSET  # noqa: N815 - the stream's name
    reason: Any = UNSET
    error: Any = UNSET
    message: Any = UNSET
    stderr: Any = UNSET


# A JSON value decoded in the same pass as its container: an object as the struct (only the
# struct's fields read, the rest skipped), anything else as orjson would give it
Scalar = str | int | float | bool | None | list[Any]


class Variant(Struct, gc=False):
    """The body of a ``*ToolCall`` variant: ``args`` left raw (decoded when the model needs
    them), ``result`` as ``{outcome key: payload}`` with only the payload's reason fields read."""

    args: Raw | UnsetType = UNSET
    result: dict[str, OutcomePayload | Scalar] | None | UnsetType = UNSET
    description: Any = None


class ToolCallEvent(TypedEvent, tag="tool_call", tag_field="type"):
    """A ``tool_call`` event (``started``/``completed``; reference 2.5).

    ``tool_call`` is the ``tool_call`` object read in one pass (UNSET when absent): each
    value that is an object as a :class:`Variant` (the ``*ToolCall`` variant; an object-valued
    sibling too, never read), the siblings (``toolCallId``, ``startedAtMs``...) as values.
    :func:`cursor_watch.formats.cursor.tool_fields` finds the variant as :func:`cursor_watch.core.tools.find_variant` does.
    """

    type: ClassVar[str] = "tool_call"
    subtype: Any = ""
    call_id: Any = None
    tool_call: dict[str, Variant | Scalar] | UnsetType = UNSET
    model_call_id: Any = None
    timestamp_ms: Any = UNSET


TYPED_CLASSES = (AssistantEvent, ThinkingEvent, ToolCallEvent)

DECODER = msgspec.json.Decoder(AssistantEvent | ThinkingEvent | ToolCallEvent)
"""Decodes one line (bytes) into a typed event; raises ``msgspec.ValidationError`` for any
other kind or shape and ``msgspec.DecodeError`` for bad JSON."""

DECODE_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, RecursionError)

# What the model reads of a typed ``tool_call`` event (:class:`cursor_watch.formats.cursor.ToolFields`,
# :func:`~cursor_watch.formats.cursor.tool_fields`) is in the adapter's module: that one is
# compiled, this one holds msgspec Structs, which mypyc can't compile.
