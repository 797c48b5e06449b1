"""The session header: who is running, and the live state of the run."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from ..fmt import model_label, plural
from ..canonical import agent_command
from ..model import Session
from ..names import middle, relative_if_shorter, short_name, short_path
from ..costs import usage_of
from ..plain import cost_text, format_ms, usage_text
from ..safe import visible_line
from ..tools import STATUS_FAILURE, STATUS_INCOMPLETE, STATUS_REJECTED, STATUS_RUNNING, STATUS_SUCCESS

STATE_STYLE = {
    "connecting": "bold black on grey70",
    "reading": "bold black on dodger_blue1",
    "streaming": "bold black on dodger_blue1",
    "idle": "bold black on yellow",
    "stalled": "bold white on dark_orange3",
    "paused": "bold black on yellow",
    "success": "bold black on green3",
    "error": "bold white on red3",
    "incomplete": "bold white on magenta",
}


@dataclass
class LiveState:
    """What the header shows beyond the model: computed by the app each tick.

    Attributes:
        state: ``connecting``, ``streaming``, ``idle``, ``stalled``, ``success``, ``error`` or ``incomplete``.
        idle_s: seconds since the last event (for ``idle``).
        elapsed_ms: run time so far (see :func:`~cursor_watch.runs.run_elapsed_ms`), or None
            when the stream recorded no times (the header says so).
        source: what is being watched (a path, ``stdin``, the command).
        exit_status: the spawned command's exit status, if any.
        following: transcript follows new output; new_entries: entries added while paused.
        progress: fraction of a replayed file read so far (None when not replaying).
    """

    state: str = "connecting"
    idle_s: float = 0.0
    elapsed_ms: float | None = None
    source: str = ""
    exit_status: int | None = None
    following: bool = True
    new_entries: int = 0
    progress: float | None = None
    stall: str = ""  # "stalled 6m: shell npm test" when the state is "stalled"


class SessionHeader(Static):
    """Two lines: the session (model, cwd, id, permission mode, key source) and its state."""

    DEFAULT_CSS = """
    SessionHeader {
        height: 2;
        background: $panel;
        padding: 0 1;
    }
    """

    _shown: tuple | None = None
    _last: tuple[Session, LiveState] | None = None

    def on_resize(self) -> None:
        """Laid out again for the new width (the first frame may come before the layout)."""
        if self._last is not None:
            self.show(*self._last, force=True)

    def show(self, session: Session, live: LiveState, force: bool = False) -> None:
        """Re-render from the model and the live state: when what it shows changed, or
        ``force`` (the screen's once-a-second tick: a terminal that missed a frame at start
        gets the header again).

        The header is two lines high whatever it holds, so an update never needs a layout:
        a layout 15 times a second re-rendered every widget on the screen.
        """
        self._last = (session, live)
        header = render_header(session, live, self.size.width or None)
        key = tuple((line.plain, tuple(line.spans)) for line in header.renderables)
        if key != self._shown or force:
            self._shown = key
            self.update(header, layout=False)


def render_header(s: Session, live: LiveState, width: int | None = None) -> Group:
    """The header's two lines, each cut to the width (all stream text escaped).

    With ``width`` (cells), the session line is laid out to fit: the source's file name is
    kept (shortened in the middle only when it alone is too wide), the cwd is shortened
    first (relative to the current directory where that is shorter, then in the middle),
    and the session id, permission mode and key source are left out when they don't fit.
    """
    return Group(_session_line(s, live, width), _state_line(s, live))


BADGE_MIN_WIDTH = 100  # narrower: no " cursor-watch " badge (the room goes to names)
CWD_MIN = 12  # a cwd shortened below this many cells is left out


def _session_line(s: Session, live: LiveState, width: int | None = None) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    room = width if width is not None else 1 << 30
    badge = width is None or width >= BADGE_MIN_WIDTH
    if badge:
        t.append(" cursor-watch ", style="bold reverse")
        t.append(" ")
    if s.agent is not None and s.agent != "cursor":  # another agent's run: say whose (formats/)
        t.append(visible_line(agent_command(s.agent) + (f" {s.agent_version}" if s.agent_version else "")) + " ",
                 style="bold")
    model = visible_line(model_label(s.model, s.events))
    source = Text()
    if live.source:
        label = visible_line(live.source)
        keep = max(8, room - t.cell_len - min(cell_len(model), 16) - 4)
        source.append("  ← ", style="dim")
        source.append(short_name(label, keep), style="dim")
    t.append(middle(model, max(8, room - t.cell_len - source.cell_len)), style="bold cyan")
    free = room - t.cell_len - source.cell_len
    if s.cwd:
        cwd = visible_line(relative_if_shorter(s.cwd))
        budget = free
        sid = cell_len(f"  session {visible_line(s.session_id or '?')}")
        if free - sid - 2 >= CWD_MIN:
            budget = free - sid  # the cwd gives way to the session id first
        if cell_len(cwd) + 2 > budget and budget - 2 >= CWD_MIN:
            cwd = short_path(cwd, budget - 2)
        if cell_len(cwd) + 2 <= budget:
            t.append("  ")
            t.append(cwd, style="bold")
            free -= cell_len(cwd) + 2
    for name, value in (("session", s.session_id or "?"), ("permission", s.permission_mode),
                        ("key", s.api_key_source)):
        if not value:
            continue
        part = f"  {name} {visible_line(value)}"
        if cell_len(part) > free:
            continue
        t.append(f"  {name} ", style="dim")
        t.append(visible_line(value))
        free -= cell_len(part)
    t.append_text(source)
    return t


def _state_line(s: Session, live: LiveState) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    label = live.state
    if live.state == "reading" and live.progress is not None:
        label = f"reading {live.progress:.0%}"
    elif live.state == "idle":
        label = f"idle for {int(live.idle_s)} s"
    elif live.state == "stalled":
        label = visible_line(live.stall)
    elif live.exit_status is not None and live.state in ("success", "error", "incomplete"):
        label = f"{live.state} · exit {live.exit_status}"
    t.append(f" {label} ", style=STATE_STYLE.get(live.state, "bold"))
    running = s.running_calls()
    if live.state == "stalled" and len(running) == 1:
        running = []  # the stall names it
    if running and live.state in ("idle", "streaming", "stalled"):
        names = ", ".join(f"{c.tool} {visible_line(c.summary)[:40]}".strip() for c in running[:3])
        more = f" +{len(running) - 3}" if len(running) > 3 else ""
        t.append(f" running: {names}{more}", style="cyan")
    t.append("  ")
    if live.elapsed_ms is not None:
        t.append(format_ms(live.elapsed_ms), style="bold")
        t.append(" · ", style="dim")
    elif s.events:
        t.append("no times recorded", style="dim")  # never a time since cursor-watch started
        t.append(" · ", style="dim")
    t.append(plural(s.events, "event"), style="")
    c = s.tool_counts
    t.append(" · tools ", style="dim")
    t.append(f"▶{c[STATUS_RUNNING]} ", style="cyan")
    t.append(f"✔{c[STATUS_SUCCESS]} ", style="green")
    t.append(f"✖{c[STATUS_FAILURE]} ", style="red" if c[STATUS_FAILURE] else "dim")
    t.append(f"⊘{c[STATUS_REJECTED]}", style="yellow" if c[STATUS_REJECTED] else "dim")
    if c[STATUS_INCOMPLETE]:
        t.append(f" …{c[STATUS_INCOMPLETE]}", style="magenta")
    if s.subagent_calls:
        t.append(f" · {s.subagent_calls} in sub-agents", style="dim")
    usage = usage_of(s)
    if usage is not None and usage_text(usage):
        t.append(" · " + usage_text(usage), style="dim")
    cost = cost_text(s)
    if cost:
        t.append(" · " + cost, style="dim")
    diag = s.invalid_lines + s.unknown_events
    if diag:
        t.append(" · ", style="dim")
        t.append(f"⚠ {diag} diagnostic{'s' if diag != 1 else ''} (d)", style="bold red")
    if not live.following:
        t.append(" · ", style="dim")
        t.append(f" paused{f' · {live.new_entries} new' if live.new_entries else ''} (End) ", style=STATE_STYLE["paused"])
    return t
