"""What the HTML and Markdown exports both show, as plain strings (no markup, no escaping).

Each format escapes these for its own output (``design.md``: escaping is per output). The
values come from the model; nothing here reads the stream or knows a format rule.

Redaction happens where each format escapes: every string from the stream passes
through :func:`doc_text` (the secrets :mod:`cursor_watch.outlets.redact` finds replaced, then control
characters shown), and a tool call's payloads are redacted as they are read back, before any
cut (:func:`export_redactor` is given to :func:`cursor_watch.stream.payloads.call_detail`). The
redactor of the document being written is a context variable set by :func:`redacting`, so a
document written in one thread never changes another.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from ...core.canonical import agent_command
from ...fmt import model_label, plural, tool_calls_phrase
from ...core.model import Session, ToolCall
from ...core.costs import usage_of
from ...fmt import format_ms
from ..labels import cost_text, run_duration_text, usage_text
from ...core.runs import Run
from ...safe import visible_doc
from ...core.tools import without_reason

EXPORT_PAYLOAD_CHARS = 100_000  # characters of one payload in an export (the TUI detail's cap)

_REDACTOR: ContextVar[Any] = ContextVar("cursor_watch_export_redactor", default=None)


@contextlib.contextmanager
def redacting(redactor: Any) -> Iterator[None]:
    """Within the block, :func:`doc_text` and :func:`redacted` redact with ``redactor`` (a
    :class:`~cursor_watch.outlets.redact.Redactor`; None: nothing is redacted, ``--no-redact``)."""
    token = _REDACTOR.set(redactor)
    try:
        yield
    finally:
        _REDACTOR.reset(token)


def export_redactor() -> Any:
    """The redactor of the document being written (None: ``--no-redact``, or outside one)."""
    return _REDACTOR.get()


def redacted(text: str) -> str:
    """Stream text as an export shows it: its secrets redacted (see :func:`redacting`)."""
    r = _REDACTOR.get()
    return r.text(text) if r is not None else text


def doc_text(text: str, line: bool = False) -> str:
    """:func:`redacted`, then :func:`cursor_watch.safe.visible_doc` (control characters shown;
    ``line``: newlines and tabs too): what every format does to a string before escaping it."""
    r = _REDACTOR.get()
    return visible_doc(r.text(text) if r is not None else text, line)


def shown_fields(fields: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``(label, value)`` pairs with each value redacted under its label: a value shown as
    ``password`` or ``api_key`` is a secret when it looks like one (:meth:`Redactor.field`)."""
    r = _REDACTOR.get()
    return r.pairs(fields) if r is not None else fields


def format_when(ms: int | None) -> str:
    """Epoch ms as ``2026-08-14 09:12:03.120 UTC``; ``""`` when unknown."""
    if ms is None:
        return ""
    try:
        t = time.gmtime(ms // 1000)
    except (OverflowError, OSError, ValueError):  # a hostile timestamp far outside the calendar
        return f"{ms} ms"
    return (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d} {t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}."
            f"{ms % 1000:03d} UTC")


def run_title(run: Run, several: bool) -> str:
    """The source's short name (``a.jsonl``, ``stdin``), and ``· run 2`` with several runs."""
    return f"{run.source_label} · run {run.index}" if several else run.source_label


def outcome_line(session: Session) -> str:
    """``success``, ``error (result error_max_turns)``, ``incomplete: no result``, ``running``."""
    status = session.status
    bits = []
    r = session.result
    if r is not None and r.subtype and r.subtype != status:
        bits.append(f"result {r.subtype}")
    if status == "incomplete":
        bits.append("the stream ended without a result")
    if session.exit_status is not None:
        bits.append(f"exit status {session.exit_status}")
    return status + (f" ({', '.join(bits)})" if bits else "")


def tool_counts_line(session: Session) -> str:
    """``12 tool calls (10 success, 1 failed, 1 rejected)`` (:func:`cursor_watch.fmt.tool_calls_phrase`)."""
    return tool_calls_phrase(len(session.tool_calls), session.tool_counts)


def run_facts(run: Run) -> list[tuple[str, str]]:
    """The header of one run: ``(label, value)`` pairs, values as the stream gave them.

    Agent and its version, model, cwd, session, permission mode, API key source (the run's
    start), outcome,
    duration (``no times recorded`` when the stream had none), tokens (the run's usage, :func:`cursor_watch.core.costs.usage_of`), tool calls, started, source, counts. Empty values
    are left out.
    """
    s = run.session
    c = s.counts()
    facts = [
        ("agent", agent_command(s.agent) + (f" {s.agent_version}" if s.agent_version else "")),
        ("model", model_label(s.model, s.events)),
        ("cwd", s.cwd or ""),
        ("session", s.session_id or ""),
        ("permission mode", s.permission_mode or ""),
        ("API key source", s.api_key_source or ""),
        ("outcome", outcome_line(s)),
        ("duration", run_duration_text(s)),
        ("tokens", usage_text(usage).removeprefix("tokens ") if (usage := usage_of(s)) is not None else ""),
        ("cost", cost_text(s)),
        ("tool calls", tool_counts_line(s)),
        ("started", format_when(s.first_ts_ms)),
        ("source", f"{run.source if run.source != '-' else run.source_label} (run {run.index}, "
                   f"lines {run.first_line}-{max(run.first_line, run.last_line)})"),
        ("events", f"{plural(c['events'], 'event')}, {plural(c['invalid_lines'], 'invalid line')}, "
                   f"{plural(c['unknown_events'], 'unknown event')}"),
    ]
    return [(label, value) for label, value in facts if value]


def call_facts(call: ToolCall) -> list[tuple[str, str]]:
    """What a call's detail shows above its sections: the status when there is more to say
    than the summary line's word, the times, the full ``call_id``, its stream lines, the
    model's description of it and its approval (``interaction_query``)."""
    status = ""
    if call.outcome and call.outcome != call.status:
        status = f"{call.status} (outcome {call.outcome})"
    if call.detail:
        status = f"{status or call.status}: {call.detail}"
    when = format_when(call.started_ms)
    if call.completed_ms is not None and call.completed_ms != call.started_ms:
        end = format_when(call.completed_ms)
        if not when:  # seen only as completed: the start is not known
            when = "start not recorded → " + end
        else:
            when += " → " + (end[11:] if end[:10] == when[:10] else end)  # the day once
    if call.duration_ms is not None:
        when += f" ({format_ms(call.duration_ms)})"
    lines = sorted({n for n in (call.started_line, call.completed_line) if n})
    facts = [
        ("status", status),
        ("time", when),
        ("call_id", call.call_id),
        ("stream", ("line " if len(lines) == 1 else "lines ") + " and ".join(map(str, lines)) if lines else ""),
        ("description", call.description),
        ("approval", without_reason(call.interaction, call.detail)),
    ]
    return [(label, value) for label, value in facts if value]


def final_text(session: Session) -> str:
    """The run end's text when the transcript does not already show it, else ``""``.

    Cursor's ``result.result`` is the segments joined (reference 2.9); Claude Code's and
    Gemini CLI's is the last message, Codex's (no result event) the last agent message: the
    transcript shows each of those. When the text is something else (a hand-edited log, an
    error result), the document shows it on its own.
    """
    r = session.result
    if r is None or not r.text:
        return ""
    text = " ".join(r.text.split())
    if not text or text == " ".join(session.assistant_text.split()):
        return ""
    if session.segments and text == " ".join(session.segments[len(session.segments) - 1].text.split()):
        return ""
    return r.text


Entry = tuple[str, Any]  # ("segment", Segment) | ("thinking", ThinkingBlock) | ("tool", ToolCall) | ("note", Note)


def transcript(session: Session) -> Iterator[Entry]:
    """The run's transcript in stream order, records read back from the spill file as needed.

    Bounded to what the timeline holds when called (a live run goes on growing). The
    ``prompt`` entry is left out (the header shows it). Tool calls are read in order of
    first appearance, as the timeline lists them, so a long run's calls are paged from disk
    in batches instead of one query each.
    """
    n = len(session.timeline)
    calls = session.tool_calls.values()
    for i in range(n):
        kind, key = session.timeline[i]
        try:
            if kind == "segment":
                yield kind, session.segments[key]
            elif kind == "thinking":
                yield kind, session.thinking[key]
            elif kind == "note":
                yield kind, session.notes[key]
            elif kind == "tool":
                call = next(calls, None)
                if call is None or call.call_id != key:  # out of step: look each call up from now on
                    calls = iter(())
                    call = session.tool_calls.get(key)
                if call is not None:
                    yield kind, call
        except (IndexError, KeyError):  # a record of a live run not there yet
            continue

