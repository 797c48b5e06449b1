"""Names that fit: file names and paths shortened in the middle, keeping their distinctive end.

Log files of one project share a long prefix (``acme__agent-tests__internal__…``); cutting
them at the end makes every row read the same. These helpers cut the middle instead, keep
a run's ``#N`` suffix whole, and prefer a path relative to the current directory where that
is shorter. Widths are terminal cells (wide characters count two).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from rich.cells import cell_len

from ..core.tools import summary_path

ELLIPSIS = "…"
RUN_SUFFIX = re.compile(r" #\d+$")  # a run's number after its source name in lists


def _head(text: str, cells: int) -> str:
    """The longest start of ``text`` at most ``cells`` wide."""
    out, used = [], 0
    for ch in text:
        w = cell_len(ch)
        if used + w > cells:
            break
        out.append(ch)
        used += w
    return "".join(out)


def _tail(text: str, cells: int) -> str:
    """The longest end of ``text`` at most ``cells`` wide."""
    return _head(text[::-1], cells)[::-1]


MIN_HEAD = 3  # characters of a name's start kept when its end is what tells it apart
MIN_TAIL = 6  # characters of its end kept when its start is (an extension: ``.jsonl``)
CONTEXT = 4  # characters kept beyond the one that tells a name apart
SEPARATORS = "_-./ "  # where a word of a name starts after


def middle(text: str, width: int, shared: tuple[int, int] = (0, 0)) -> str:
    """``text`` at most ``width`` cells, cut in the middle with ``…`` when too wide.

    About three eighths of the room go to the start and the rest to the end (the end of a
    log name is what tells runs apart): ``middle("acme__agent-tests__internal__cursor__14-refuse-delete.out", 46)``
    is ``acme__agent-tests…cursor__14-refuse-delete.out``.

    ``shared``: how many characters of its start and of its end the name shares with another
    name listed beside it (:func:`shared_ends`). When that cut would show fewer than
    :data:`CONTEXT` + 1 of the characters that tell it apart, the cut moves: the end grows to hold the first one from
    the end and :data:`CONTEXT` more, else the start grows to hold the first one from the
    start and as many more, else the name is cut twice: its start, the part where it
    differs, its end (``sau…02_shell_t….jsonl``).
    """
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    if width == 1:
        return ELLIPSIS
    room = width - 1
    head = (room * 3 + 4) // 8
    start, end = shared
    if ((start or end) and head <= start + CONTEXT and room - head <= end + CONTEXT and room > MIN_HEAD + MIN_TAIL + 1
            and cell_len(text) == len(text)):  # (a room too small for _apart's start and end: one cut)
        return _apart(text, room, start, end)  # (by characters: a name of one-cell characters)
    return _head(text, head) + ELLIPSIS + _tail(text, room - head)


def tool_name(name: str, width: int) -> str:
    """A tool's name at most ``width`` cells: its end kept, its first :data:`MIN_HEAD` characters
    before the ``…``. MCP tools are named server first (Claude Code ``mcp__lean_beam__lean_goals``,
    Codex ``lean_beam.lean_goals``, in the shared captures), so the end is what tells two apart:
    ``tool_name("mcp__lean_beam__lean_goals", 14)`` is ``mcp…lean_goals``."""
    if cell_len(name) <= width:
        return name
    if width <= MIN_HEAD + 2:
        return _head(name, width - 1) + ELLIPSIS if width > 0 else ""
    return _head(name, MIN_HEAD) + ELLIPSIS + _tail(name, width - MIN_HEAD - 1)


def _apart(text: str, room: int, start: int, end: int) -> str:
    """``text`` in ``room`` characters and its ellipses, keeping a character at ``text[start]``
    or ``text[-end - 1]`` (what tells it apart from the names it shares ``start`` and ``end`` with)."""
    if end + 1 + CONTEXT <= room - MIN_HEAD:
        tail = end + 1 + CONTEXT
        return text[: room - tail] + ELLIPSIS + text[-tail:]
    if start + 1 + CONTEXT <= room - MIN_TAIL:
        head = start + 1 + CONTEXT
        return text[:head] + ELLIPSIS + text[len(text) - (room - head):]
    window = room - 1 - MIN_HEAD - MIN_TAIL  # a second ellipsis
    if window < 1:
        return text[:MIN_HEAD] + ELLIPSIS + text[len(text) - (room - MIN_HEAD):]
    before = min(CONTEXT, window // 3)  # of the shared start, what reads into the difference
    lead = text[start - before: start]
    cut = max(lead.rfind(ch) for ch in SEPARATORS)
    first = start - before + cut + 1 if cut >= 0 else start - before  # from a word's start
    first = max(MIN_HEAD, min(first, len(text) - MIN_TAIL - window))
    return text[:MIN_HEAD] + ELLIPSIS + text[first: first + window] + ELLIPSIS + text[-MIN_TAIL:]


def shared_ends(names: Iterable[str]) -> dict[str, tuple[int, int]]:
    """For each of ``names``: ``(start, end)``, the most characters of its start and of its end
    it shares with another of the names (a name listed twice is compared with the others only).

    ``saurabh7481__…__02_shell_tool_call.jsonl`` beside ``…__03_edit_tool_call.jsonl``
    shares its start up to ``__0`` and its end from ``_tool_call.jsonl``. Sorting brings the
    name sharing the longest start next to each name (and, reversed, the longest end).
    """
    unique = sorted(set(names))
    out = {name: [0, 0] for name in unique}
    for side, ordered in ((0, unique), (1, sorted(unique, key=lambda n: n[::-1]))):
        for a, b in zip(ordered, ordered[1:]):
            n = _common(a, b) if side == 0 else _common(a[::-1], b[::-1])
            out[a][side] = max(out[a][side], n)
            out[b][side] = max(out[b][side], n)
    return {name: (v[0], v[1]) for name, v in out.items()}


def _common(a: str, b: str) -> int:
    """The length of the start ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def short_name(text: str, width: int, shared: tuple[int, int] = (0, 0)) -> str:
    """Like :func:`middle`, but a trailing run number (``" #12"``) is never cut: the name
    before it gives way (``acme…delete.out #12``; only ``…#12`` when nothing else fits).
    ``shared``: see :func:`middle` (of the name without its run number)."""
    m = RUN_SUFFIX.search(text)
    if m is None or cell_len(text) <= width:
        return middle(text, width, shared)
    suffix = m.group()
    name = text[: m.start()]
    room = width - cell_len(suffix)
    if room < 2:
        return ELLIPSIS + suffix.lstrip()
    return middle(name, room, shared) + suffix


def relative_if_shorter(path: str, cwd: str | None = None) -> str:
    """``path`` relative to the current directory (or ``cwd``) when that is shorter, else as is.

    Only absolute paths are rewritten; a path on another root or that can't be related is
    returned unchanged.
    """
    if not path or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, cwd if cwd is not None else os.getcwd())
    except (ValueError, OSError):
        return path
    return rel if len(rel) < len(path) else path


def short_path(path: str, width: int) -> str:
    """A path at most ``width`` cells: cut in the middle of its directories first, so the
    file name stays whole while it fits (``/home/u/…/src/app/main.py``)."""
    if cell_len(path) <= width:
        return path
    head, sep, name = path.rpartition("/")
    if sep and cell_len(name) + 2 <= width:
        return middle(head, width - cell_len(name) - 1) + "/" + name
    return middle(path, width)


PATTERN_MIN = 16  # cells a grep's or glob's pattern keeps before the path after it gives way
PATH_MIN = 16  # ... and the path's cells before the pattern gives way (a narrow room)


def call_summary(tool: str, summary: str, width: int, cwd: str | None = None) -> str:
    """A tool call's one-line summary (:func:`cursor_watch.core.tools.summarize`) for a ``width``-cell
    room: when it names a path (``read``, ``edit``, ``write``, ``delete``, ``ls``; ``grep`` and
    ``glob`` ``PATTERN in PATH``), the path is shown relative to the run's ``cwd`` where that is
    shorter and, when still too wide, cut in its directories (:func:`short_path`) so the file
    name stays; a long pattern before it is cut in the middle first, down to
    :data:`PATTERN_MIN` cells (fewer in a room where the path would keep under :data:`PATH_MIN`;
    none, and no ``in``, when even that leaves no room). Other summaries are returned whole (the caller cuts them at the end).
    """
    split = summary_path(tool, summary)
    if split is None:
        return summary
    before, path = split
    if cwd and os.path.isabs(cwd):
        path = relative_if_shorter(path, cwd)
    text = before + path
    if width <= 0 or cell_len(text) <= width:
        return text
    if before:
        pattern, sep = before[: -len(" in ")], " in "
        pattern_room = max(width - len(sep) - cell_len(path), min(cell_len(pattern), PATTERN_MIN))
        path_room = width - len(sep) - pattern_room
        if path_room < min(cell_len(path), PATH_MIN):  # a narrow room: the path first
            pattern_room = width - len(sep) - min(cell_len(path), PATH_MIN)
        if pattern_room < 2:  # no room for the pattern: its place is marked, never dropped unsaid
            rest = width - cell_len("…" + sep)
            return "…" + sep + short_path(path, rest) if rest >= PATH_MIN // 2 else "…" + short_path(path, width - 1)
        before = middle(pattern, pattern_room) + sep
    return before + short_path(path, width - cell_len(before))
