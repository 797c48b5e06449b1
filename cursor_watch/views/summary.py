"""The ``--summary --json`` object: built from a finished model, written piece by piece.

No Rich and no Textual on this path: ``--summary --json`` (and ``--json-out``) import only
the core and orjson, which keeps the start-up of a script's call short. :mod:`cursor_watch.views.plain`
re-exports these names.

Every control character comes out escaped: orjson escapes C0 controls itself, and
:func:`_escape_raw` the DEL, C1 controls and bidi overrides it writes raw.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

import orjson

from ..core.context import context_json
from ..core.costs import cost_json, run_cost
from ..core.limits import breaches, quiet_periods, stall_periods, summary_limits
from ..core.model import Segment, Session, ThinkingBlock
from ..output import error_line, write_private
from ..core.runs import Run

ITEMS_PER_DUMP = 256  # list items (tool calls, notes...) serialized by one orjson call
CHARS_PER_DUMP = 1 << 20  # about this many characters of a long text serialized by one call


class _Items:
    """A list in the summary written item by item (see :func:`write_summary_json`)."""

    def __init__(self, items: Any) -> None:
        self.items = items


class _Joined:
    """A string in the summary written piece by piece (pieces of one string)."""

    def __init__(self, pieces: Any) -> None:
        self.pieces = pieces


_text = operator.attrgetter("text")


def _summary_fields(session: Session, stderr_tail: list[str] | None, redact: Any = None) -> list[tuple[str, Any]]:
    """The summary's keys in order; the long values are lazy (``_Items``, ``_Joined``).

    ``redact`` (a :class:`~cursor_watch.outlets.redact.Redactor`, ``--export FILE.json``): every string
    value redacted; each segment, thinking block, note... on its own (a text joined from pieces
    is redacted piece by piece: a segment is a whole message)."""
    s = session
    result = None
    if s.result is not None:
        result = s.result.to_json()
        result.update(cost_json(run_cost(s)))
    limits = summary_limits(s)
    fields = [
        ("session", {
            "agent": s.agent,
            "agent_version": s.agent_version,
            "session_id": s.session_id,
            "model": s.model,
            "cwd": s.cwd,
            "api_key_source": s.api_key_source,
            "permission_mode": s.permission_mode,
            "prompt": s.prompt,
            # the run start's MCP servers ([{name, status}]; null when the stream names none)
            "mcp_servers": [{"name": n, "status": st} for n, st in s.mcp_servers] if s.mcp_servers is not None else None,
        }),
        ("status", s.status if s.status != "running" else "incomplete"),
        ("result", result),
        # the texts of spilled records read from their states without making the records
        ("assistant_text", _Joined(s.segments.project(Segment.TEXT_STATE, _text))),
        ("segments", _Items(s.segments.project(Segment.TEXT_STATE, _text))),
        ("thinking_text", _Joined(s.thinking.project(ThinkingBlock.TEXT_STATE, _text))),
        ("tool_calls", _Items(c.to_json() for c in s.tool_calls.values())),
        ("notes", _Items(_note_json(n) for n in s.notes)),
        ("counts", s.counts()),
        ("diagnostics", _Items({"line": d.line, "message": d.message} for d in s.diagnostics)),
        ("unknown_events", _Items({"line": u.line, "type": u.type, "subtype": u.subtype} for u in s.unknown)),
        ("stderr", stderr_tail or []),
        ("exit_status", s.exit_status),
        ("stalls", stall_periods(s)),
        ("budget", [b.to_json() for b in breaches(s, limits)]),
        ("loops", s.loops.to_json()),
        ("context", context_json(s.context, s.model, s.agent, s.rules.prices)),
        ("quiet", quiet_periods(s)),
    ]
    if redact is None:
        return fields
    out: list[tuple[str, Any]] = []
    for key, value in fields:
        if isinstance(value, _Joined):
            value = _Joined(map(redact.text, value.pieces))
        elif isinstance(value, _Items):
            value = _Items(map(redact.value, value.items))
        else:
            value = redact.value(value)
        out.append((key, value))
    return out


def _note_json(n: Any) -> dict:
    """A note in the summary: line, kind, subtype, text, and its ``detail`` (a hook's whole
    output) when it has one."""
    out = {"line": n.line, "kind": n.kind, "subtype": n.subtype, "text": n.text}
    if n.detail:
        out["detail"] = n.detail
    return out


def summary_json(session: Session, stderr_tail: list[str] | None = None) -> dict:
    """The ``--summary --json`` object (keys documented in the README)."""
    out: dict = {}
    for key, value in _summary_fields(session, stderr_tail):
        if isinstance(value, _Items):
            value = list(value.items)
        elif isinstance(value, _Joined):
            value = "".join(value.pieces)
        out[key] = value
    return out


# orjson escapes C0 controls but writes DEL, C1 controls (U+0080-U+009F, e.g. the 8-bit
# CSI U+009B) and bidi overrides as raw UTF-8: escape those too.
_RAW_UNSAFE_UTF8 = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def _escape_raw(out: bytes) -> bytes:
    # every match starts with one of three bytes: they are found with bytes.find (memchr) and
    # the pattern is tried at each (its own scan of 25 MB took 8x as long: bench/README.md)
    find, match = out.find, _RAW_UNSAFE_UTF8.match
    found = []
    for lead in (0x7F, 0xC2, 0xE2):
        i = find(lead)
        while i >= 0:
            mt = match(out, i)
            if mt is not None:
                found.append(mt)
            i = find(lead, i + 1)
    if not found:
        return out
    found.sort(key=lambda mt: mt.start())
    parts = []
    last = 0
    for mt in found:
        parts.append(out[last:mt.start()])
        parts.append(f"\\u{ord(mt.group().decode()):04x}".encode())
        last = mt.end()
    parts.append(out[last:])
    return b"".join(parts)


_INT_MIN = -(1 << 63)
_INT_END = 1 << 64  # orjson writes the integers in [_INT_MIN, _INT_END); it raises for any other


def _in_json_range(value: Any) -> Any:
    """``value`` with each integer orjson can't write (a sum of out-of-range numbers a stream
    gave, say: ``canonical.as_int`` reads none) as null, at any depth."""
    if type(value) is int:
        return value if _INT_MIN <= value < _INT_END else None
    if isinstance(value, dict):
        return {k: _in_json_range(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_in_json_range(v) for v in value]
    return value


def _dumps(value: Any, option: int | None = None) -> bytes:
    """``orjson.dumps``; a value holding an integer past 64 bits is written with null in its
    place (the first try costs nothing more)."""
    try:
        return orjson.dumps(value, option=option)
    except TypeError as err:
        if "64-bit" not in str(err):
            raise
        return orjson.dumps(_in_json_range(value), option=option)


def dumps_json(obj: Any) -> bytes:
    """orjson, indented, newline-terminated; every control character comes out escaped (an
    integer past 64 bits: null)."""
    return _escape_raw(_dumps(obj, orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))


def _indented(value: Any, prefix: bytes) -> bytes:
    # orjson's indented form of a value nested under ``prefix``: every line after the first
    # moves right (JSON output breaks lines only between tokens, never inside a string)
    return _dumps(value, orjson.OPT_INDENT_2).replace(b"\n", b"\n" + prefix)


def _batches(items: Iterable[Any]) -> Iterator[list[Any]]:
    it = iter(items)
    while batch := list(islice(it, ITEMS_PER_DUMP)):
        yield batch


def _text_batches(pieces: Iterable[str]) -> Iterator[str]:
    # JSON escapes a string character by character: the escaped pieces, joined, are the
    # escaped joined string; so pieces are joined into about CHARS_PER_DUMP at a time
    batch: list[str] = []
    size = 0
    for piece in pieces:
        if piece:
            batch.append(piece)
            size += len(piece)
            if size >= CHARS_PER_DUMP:
                yield "".join(batch)
                batch, size = [], 0
    if batch:
        yield "".join(batch)


def write_summary_json(session: Session, write: Callable[[bytes], Any], stderr_tail: list[str] | None = None,
                       *, compact: bool = False, extra: dict | None = None, redact: Any = None) -> None:
    """Write exactly ``dumps_json(summary_json(session, stderr_tail))``, piece by piece.

    The long lists and texts of a long session (read back from the spill file) are
    never all in memory at once: memory stays flat at the end of a run too. Lists go
    out ``ITEMS_PER_DUMP`` items per orjson call (a list's items serialize, inside it,
    exactly as they do one by one, one level deeper), texts about ``CHARS_PER_DUMP``
    characters per call.

    Args:
        write: called with each piece (bytes); an ``OSError`` it raises propagates.
        compact: one line (a line of NDJSON) instead of the indented object.
        extra: keys written first (``{"source": ..., "run": ...}`` for several runs).
        redact: a :class:`~cursor_watch.outlets.redact.Redactor` (``--export FILE.json``), or None.
    """
    fields = list((extra or {}).items()) + _summary_fields(session, stderr_tail, redact)
    dumps = _dumps
    indent = orjson.OPT_INDENT_2
    for n, (key, value) in enumerate(fields):
        if compact:
            write((b"{" if n == 0 else b",") + dumps(key) + b":")
        else:
            write((b"{\n  " if n == 0 else b"  ") + dumps(key) + b": ")
        if isinstance(value, _Joined):
            write(b'"')
            for text in _text_batches(value.pieces):
                write(_escape_raw(dumps(text)[1:-1]))
            write(b'"')
        elif isinstance(value, _Items):
            first = True
            for batch in _batches(value.items):
                if compact:
                    part = dumps(batch)[1:-1]  # "[A,B]" -> "A,B"
                else:
                    # "[\n  A,\n  B\n]" nested two deeper -> "\n    A,\n    B" (the brackets cut)
                    part = dumps(batch, indent).replace(b"\n", b"\n  ")[1:-4]
                write((b"[" if first else b",") + _escape_raw(part))
                first = False
            write(b"[]" if first else (b"]" if compact else b"\n  ]"))
        elif compact:
            write(_escape_raw(dumps(value)))
        else:
            write(_escape_raw(_indented(value, b"  ")))
        if not compact:
            write(b",\n" if n < len(fields) - 1 else b"\n")
    write(b"}\n")


def write_summaries(runs: list[Run], write: Callable[[bytes], Any], redact: Any = None) -> None:
    """``--summary --json`` for the runs of a watch (ordered by source path, then run).

    One run: the indented object, exactly as for a single stream. Several: one compact
    object per run and per line (NDJSON), each with ``"source"`` (the path, or ``-``)
    and ``"run"`` (1-based within its source) added first. ``redact``: see
    :func:`write_summary_json` (``--export FILE.json``; ``--summary --json`` and
    ``--json-out`` are the user's own and are not redacted).
    """
    if len(runs) == 1:
        write_summary_json(runs[0].session, write, runs[0].stderr, redact=redact)
        return
    for run in runs:
        write_summary_json(run.session, write, run.stderr, compact=True,
                           extra={"source": run.source, "run": run.index}, redact=redact)


def write_json_out(path: str | None, runs: list[Run]) -> None:
    """``--json-out PATH``: what ``--summary --json`` prints, written when the watch ends.

    The file is private (0600) and written whole (see :func:`cursor_watch.output.write_private`);
    a failure is one line on stderr, never an exit.
    """
    if not path:
        return
    try:
        write_private(path, lambda f: write_summaries(runs, f.write))
    except OSError as err:
        error_line(f"cannot write --json-out {path}: {err.strerror or err}")
