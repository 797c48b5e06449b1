"""A tool call's payloads, read back from the source by byte offset (no UI imports).

The model keeps summaries, not payloads (``design.md``): for each tool call it keeps the
``(offset, size)`` of its ``started`` and ``completed`` lines. Every view that shows a
call in full (the TUI's detail screen, the HTML and Markdown exports) re-reads those
lines here and describes them with :func:`cursor_watch.tools.detail_sections`, so a tool
variant is described once.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from .events import Event, decode_all
from .formats import canonical_tool_call
from .model import ToolCall
from .tools import DETAIL_TEXT_LIMIT, Section, detail_sections, find_variant

Reread = Callable[[int, int], bytes]


def load_call_events(call: ToolCall, reread: Reread) -> tuple[dict | None, dict | None, str]:
    """Re-read the call's ``started`` and ``completed`` events by byte offset.

    Args:
        call: the model's record (spans are ``(offset, size)``).
        reread: ``(offset, size) -> bytes``, from the source.

    Returns:
        ``(args, result, note)``: the arguments (from ``started``, else ``completed``,
        else the model's copy), the ``result`` object or None, and a note when the
        payload could not be read back ("" otherwise).
    """
    args = result = None
    note = ""
    for span, which in ((call.start_span, "started"), (call.end_span, "completed")):
        if span is None:
            continue
        event = _event_at(reread, span)
        if event is None:
            note = f"the {which} event could not be read back from the source"
            continue
        # the agent's own line: Cursor's carries tool_call, the others' are converted (formats/)
        _tool, body = find_variant(canonical_tool_call(event, call.call_id, call.kind, args))
        if isinstance(body.get("args"), dict) and args is None:
            args = body["args"]
        if which == "completed" and "result" in body:
            result = body["result"]
    if args is None:
        args = call.args
    return args, result, note


def _event_at(reread: Reread, span: tuple[int, int]) -> dict | None:
    """The event object on the line at ``span``, or None if it can't be read back."""
    data = reread(*span)
    if not data:
        return None
    try:  # the line as the model saw it: one JSON object (the common case, and fast)
        value = orjson.loads(data)
    except orjson.JSONDecodeError:  # a line rejoined from several (a raw newline in it)
        items = [i for i in decode_all([data]) if isinstance(i, Event)]
        return items[0].data if items else None
    return value if isinstance(value, dict) else None


def call_detail(call: ToolCall, reread: Reread, limit: int = DETAIL_TEXT_LIMIT,
                raw: bool = True) -> tuple[list[Section], str]:
    """The detail sections of ``call`` (payloads re-read, each cut at ``limit`` characters;
    ``raw``: see :func:`cursor_watch.tools.detail_sections`).

    Returns:
        ``(sections, note)``: see :func:`cursor_watch.tools.detail_sections` and
        :func:`load_call_events`. Never raises: a payload that can't be read back gives
        the sections of what the model kept, and a note.
    """
    args, result, note = load_call_events(call, reread)
    return detail_sections(call.kind, args, result, limit, raw, shown=call.detail), note
