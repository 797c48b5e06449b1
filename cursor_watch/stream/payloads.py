"""A tool call's payloads, read back from the source by byte offset (no UI imports).

The model keeps summaries, not payloads (``design.md``): for each tool call it keeps the
``(offset, size)`` of its first and last lines. Every view that shows a call in full (the TUI's
detail screen, the HTML and Markdown exports, ``--otlp-content``) re-reads those lines here: the
run's agent's adapter (:func:`cursor_watch.formats.call_payloads`) gives what the agent wrote
(raw is raw: nothing of ours in it) and the canonical fields of the call's own view, which
:func:`cursor_watch.core.tools.detail_sections` describes, so a tool kind is described once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..buildinfo import raise_if_compiled_type_error
from ..formats import CallPayloads, adapter_class, call_payloads, line_object
from ..core.model import ToolCall
from ..core.tools import DETAIL_TEXT_LIMIT, Section, detail_sections

Reread = Callable[[int, int], bytes]


class PayloadRedactor(Protocol):
    """What redacts a call's payloads for an outlet that shares them: a
    :class:`~cursor_watch.outlets.redact.Redactor` (the outlets' stage; this stage does not import it)."""

    def payloads(self, found: Any) -> Any:
        """``found`` (:class:`~cursor_watch.formats.common.CallPayloads`) with every string redacted."""
        ...


def load_payloads(call: ToolCall, reread: Reread, agent: str | None,
                  redact: PayloadRedactor | None = None) -> tuple[CallPayloads, str]:
    """Re-read the call's first and last lines by byte offset and read them as ``agent``'s.

    ``redact``: a :class:`~cursor_watch.outlets.redact.Redactor` for an outlet that shares what it shows
    (an export, ``--serve``, ``--otlp-content``): every string of the payloads is redacted, whole,
    before any view cuts it (:meth:`~cursor_watch.outlets.redact.Redactor.payloads`).

    Returns:
        ``(payloads, note)``: :class:`~cursor_watch.formats.common.CallPayloads` (the arguments
        and result as the agent wrote them, and the view's fields), and a note when a line
        could not be read back ("" otherwise). Never raises: a payload that can't be read gives
        what the model kept (its small copy of the arguments).
    """
    lines: dict[str, dict | None] = {"started": None, "completed": None}
    note = ""
    for span, which in ((call.start_span, "started"), (call.end_span, "completed")):
        if span is None:
            continue
        try:
            data = line_object(reread(*span))
        except Exception:  # noqa: BLE001 - a source that can't be re-read: what the model kept
            data = None
        if data is None:
            note = f"the {which} event could not be read back from the source"
            continue
        lines[which] = data
    try:
        found = call_payloads(agent, call.kind, call.call_id, lines["started"], lines["completed"],
                              call.args if lines["started"] is None else None)
    except Exception as err:  # noqa: BLE001 - a shape the adapter did not expect: what the model kept
        raise_if_compiled_type_error(err)  # (a compiled adapter's type check failing is a defect of ours: loud)
        found = CallPayloads(call.args)
    if redact is not None:
        found = redact.payloads(found)
    return found, note


def load_call_events(call: ToolCall, reread: Reread, agent: str | None = None,
                     redact: PayloadRedactor | None = None) -> tuple[dict | None, object, str]:
    """``(arguments, result, note)`` of a call as the agent wrote them (see :func:`load_payloads`;
    ``redact``: theirs redacted)."""
    found, note = load_payloads(call, reread, agent, redact)
    return found.args, found.result, note


def call_detail(call: ToolCall, reread: Reread, limit: int = DETAIL_TEXT_LIMIT,
                raw: bool = True, agent: str | None = None,
                redact: PayloadRedactor | None = None) -> tuple[list[Section], str]:
    """The detail sections of ``call`` (payloads re-read, redacted with ``redact`` if given,
    each cut at ``limit`` characters; ``raw``: see :func:`cursor_watch.core.tools.detail_sections`).

    Returns:
        ``(sections, note)``: see :func:`cursor_watch.core.tools.detail_sections` and
        :func:`load_payloads`. Never raises.
    """
    found, note = load_payloads(call, reread, agent, redact)
    return detail_sections(call.kind, found, call.status, call.outcome, limit, raw, shown=call.detail), note


def counted_payloads(agent: str | None, args: Any, result: Any) -> tuple[Any, Any]:
    """A call's ``(arguments, result)`` as a search counts them (the run's adapter's
    :meth:`~cursor_watch.formats.common.Adapter.search_payloads`: repeated fields left out)."""
    return adapter_class(agent).search_payloads(args, result)
