"""The session header: who is running, and the live state of the run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from ...fmt import model_label, plural
from ...core.canonical import agent_command
from ...core.model import Session
from ...views.names import RUN_SUFFIX, middle, relative_if_shorter, short_name, short_path, tool_name
from ...core.context import gauge_text
from ...core.costs import usage_of
from ...core.loops import loop_label
from ...fmt import format_ms
from ...views.labels import cost_text, usage_text
from ...safe import visible_line
from ...core.tools import STATUS_FAILURE, STATUS_INCOMPLETE, STATUS_REJECTED, STATUS_RUNNING, STATUS_SUCCESS

GAUGE_STYLE = {"ok": "green", "warn": "bold yellow", "full": "bold red"}  # the context gauge by context.level
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
        elapsed_ms: run time so far (see :func:`~cursor_watch.core.runs.run_elapsed_ms`), or None
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
    quiet: str = ""  # "quiet 4m: compacting": why a live run is quiet (cursor_watch.core.quiet), said in place of its state
    quiet_explained: bool = True


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
    """The header's two lines, each fitted to the width (all stream text escaped).

    With ``width`` (cells), each line keeps what matters most and gives way by priority
    (:func:`fit`), never cutting a figure. The session line: the model whole, then the
    cwd (shortened in its middle, the last directory kept), the session id, the permission
    mode, the source's name (shortened in its middle, its end kept) and the key source; the
    agent's name and the ``cursor-watch`` badge where there is room. The state line: the
    state, what runs, the diagnostics count and the cost before the tool counts, the time,
    the tokens and the event count; each has a short form used before it is left out.
    """
    return Group(_session_line(s, live, width), _state_line(s, live, width))


class Part:
    """One piece of a header line for :func:`fit`.

    Attributes:
        order: where it stands in the line (left to right).
        priority: higher stays longer; 100: never left out (cut at the end only when nothing
            else is left and it is still too wide).
        forms: the texts it may take, widest first (each with its leading separator); or
            ``shrink`` for a text that can take any width down to ``min_width``.
        grow: the order in which the parts taken widen into the room left (higher first;
            by default the priority).
    """

    __slots__ = ("order", "priority", "grow", "forms", "shrink", "min_width", "max_width")

    def __init__(self, order: int, priority: int, forms: list[Text] | None = None,
                 shrink: Any = None, min_width: int = 0, max_width: int = 0, grow: int | None = None) -> None:
        self.order = order
        self.priority = priority
        self.grow = priority if grow is None else grow
        self.forms = forms or []
        self.shrink = shrink  # (width) -> Text, for a part that shortens itself
        self.min_width = min_width if shrink is not None else min(f.cell_len for f in self.forms)
        self.max_width = max_width if shrink is not None else max(f.cell_len for f in self.forms)

    def render(self, width: int) -> Text:
        """Its widest form within ``width`` cells."""
        if self.shrink is not None:
            return self.shrink(min(width, self.max_width))
        for form in self.forms:
            if form.cell_len <= width:
                return form
        return self.forms[-1]

    def widest(self, width: int) -> int:
        """The cells of its widest form within ``width`` (any width, for a part that shrinks)."""
        if self.shrink is not None:
            return min(width, self.max_width)
        return max((f.cell_len for f in self.forms if f.cell_len <= width), default=self.min_width)


EXTRA = 20  # parts of a lower priority give way to another's whole form (Part.grow)


def fit(parts: list[Part], width: int | None) -> Text:
    """``parts`` in their order, within ``width`` cells: the parts of highest priority are
    taken while their narrowest forms fit, the room left widens them in priority order; the
    line is cut at its end only when its first part alone is too wide."""
    if width is None:
        chosen = {id(p): p.max_width for p in parts}
    else:
        chosen = {}
        used = 0
        for p in sorted(parts, key=lambda p: -p.priority):
            if used + p.min_width <= width:
                chosen[id(p)] = p.min_width
                used += p.min_width
            elif p.priority >= 100 and not chosen:
                chosen[id(p)] = width  # nothing else fits: cut at the end
                used = width
        for p in sorted(parts, key=lambda p: -p.grow):
            if id(p) not in chosen:
                continue
            if chosen[id(p)] < p.max_width and used + p.max_width - chosen[id(p)] > width:
                # its whole form may push out extras (priority below EXTRA: the key source, the
                # badge) for, say, the permission mode's label
                need = used + p.max_width - chosen[id(p)] - width
                out = []
                for q in sorted(parts, key=lambda q: q.priority):
                    if need <= 0 or q.priority >= min(p.priority, EXTRA):
                        break
                    if id(q) in chosen and q.grow < p.grow:
                        out.append(q)
                        need -= chosen[id(q)]
                if need <= 0:
                    for q in out:
                        used -= chosen.pop(id(q))
            if used < width:
                wider = p.widest(chosen[id(p)] + width - used)
                if wider > chosen[id(p)]:
                    used += wider - chosen[id(p)]
                    chosen[id(p)] = wider
    t = Text(no_wrap=True, overflow="ellipsis")
    for p in sorted(parts, key=lambda p: p.order):
        if id(p) in chosen:
            t.append_text(p.render(chosen[id(p)]))
    return t


def _text(*pieces: tuple[str, str]) -> Text:
    t = Text()
    for text, style in pieces:
        t.append(text, style=style)
    return t


BADGE_MIN_WIDTH = 100  # narrower: no " cursor-watch " badge (the room goes to names)
CWD_MIN = 12  # a cwd shortened below this many cells is left out
SOURCE_MIN = 12  # ... and the source's name
SOURCE_TAIL_FIRST = 24  # a source name cut narrower keeps its end first


def _session_line(s: Session, live: LiveState, width: int | None = None) -> Text:
    parts: list[Part] = []
    if width is None or width >= BADGE_MIN_WIDTH:
        parts.append(Part(0, 1, [_text((" cursor-watch ", "bold reverse"), (" ", ""))]))
    if s.agent is not None and s.agent != "cursor":  # another agent's run: say whose (formats/)
        name = visible_line(agent_command(s.agent))
        forms = [_text((name + " ", "bold"))]
        if s.agent_version:
            forms.insert(0, _text((visible_line(f"{name} {s.agent_version}") + " ", "bold")))
        parts.append(Part(1, 40, forms, grow=58))
    model = visible_line(model_label(s.model, s.events))
    parts.append(Part(2, 100, shrink=lambda w, m=model: _text((middle(m, w), "bold cyan")),
                      min_width=cell_len(model), max_width=cell_len(model)))
    if s.cwd:
        cwd = visible_line(relative_if_shorter(s.cwd))
        parts.append(Part(3, 60, shrink=lambda w, c=cwd: _text(("  ", ""), (short_path(c, w - 2), "bold")),
                          min_width=min(cell_len(cwd), CWD_MIN) + 2, max_width=cell_len(cwd) + 2, grow=40))
    if s.session_id:
        sid = visible_line(s.session_id)
        forms = [_text(("  session ", "dim"), (sid, ""))]
        if len(sid) > 12:
            forms.append(_text(("  session ", "dim"), (sid[:8] + "…", "")))
        parts.append(Part(4, 50, forms, grow=38))
    if s.permission_mode:
        parts.append(Part(5, 45, [_text(("  permission ", "dim"), (visible_line(s.permission_mode), "")),
                                  _text(("  ", ""), (visible_line(s.permission_mode), ""))], grow=56))
    if s.api_key_source:
        parts.append(Part(6, 5, [_text(("  key ", "dim"), (visible_line(s.api_key_source), ""))]))
    if live.source:
        label = visible_line(live.source)
        parts.append(Part(7, 30, shrink=lambda w, n=label: _text(("  ← ", "dim"), (_source_name(n, w - 4), "dim")),
                          min_width=min(cell_len(label), SOURCE_MIN) + 4, max_width=cell_len(label) + 4,
                          grow=35))
    return fit(parts, width)


def _source_name(name: str, width: int) -> str:
    """The watched file's name in ``width`` cells: cut in the middle, or, narrower than
    :data:`SOURCE_TAIL_FIRST`, its end first (``rog…r-tools.jsonl``: what tells captures of one
    repository apart is their end)."""
    if width < SOURCE_TAIL_FIRST and not RUN_SUFFIX.search(name):
        return tool_name(name, width)
    return short_name(name, width)


def _state_line(s: Session, live: LiveState, width: int | None = None) -> Text:
    label = live.state
    if live.state == "reading" and live.progress is not None:
        label = f"reading {live.progress:.0%}"
    elif live.state == "idle":
        label = f"idle for {int(live.idle_s)} s"
    elif live.state == "stalled":
        label = visible_line(live.stall)
    if live.quiet and live.state in ("idle", "streaming"):
        label = visible_line(live.quiet)
    elif live.exit_status is not None and live.state in ("success", "error", "incomplete"):
        label = f"{live.state} · exit {live.exit_status}"
    style = STATE_STYLE.get(live.state, "bold")
    if live.quiet and live.state in ("idle", "streaming"):
        style = STATE_STYLE["idle" if live.quiet_explained else "stalled"]
    parts = [Part(0, 100, [_text((f" {label} ", style))])]
    running = s.running_calls()
    if live.state == "stalled" and len(running) == 1:
        running = []  # the stall names it
    if running and live.state in ("idle", "streaming", "stalled"):
        names = ", ".join(f"{c.tool} {visible_line(c.summary)[:40]}".strip() for c in running[:3])
        more = f" +{len(running) - 3}" if len(running) > 3 else ""
        text = f" running: {names}{more}"
        parts.append(Part(1, 90, shrink=lambda w, x=text: _text((middle(x, w), "cyan")),
                          min_width=min(cell_len(text), 24), max_width=cell_len(text)))
    if live.elapsed_ms is not None:
        parts.append(Part(2, 70, [_text(("  ", ""), (format_ms(live.elapsed_ms), "bold"))]))
    elif s.events:  # never a time since cursor-watch started
        parts.append(Part(2, 20, [_text(("  no times recorded", "dim")), _text(("  no times", "dim"))]))
    parts.append(Part(3, 10, [_text((" · ", "dim"), (plural(s.events, "event"), ""))]))
    c = s.tool_counts
    full = _text((" · tools ", "dim"), (f"▶{c[STATUS_RUNNING]} ", "cyan"), (f"✔{c[STATUS_SUCCESS]} ", "green"),
                 (f"✖{c[STATUS_FAILURE]} ", "red" if c[STATUS_FAILURE] else "dim"),
                 (f"⊘{c[STATUS_REJECTED]}", "yellow" if c[STATUS_REJECTED] else "dim"))
    if c[STATUS_INCOMPLETE]:
        full.append(f" …{c[STATUS_INCOMPLETE]}", style="magenta")
    short = Text(" ·")
    for key, mark, style in ((STATUS_RUNNING, "▶", "cyan"), (STATUS_SUCCESS, "✔", "green"),
                             (STATUS_FAILURE, "✖", "red"), (STATUS_REJECTED, "⊘", "yellow"),
                             (STATUS_INCOMPLETE, "…", "magenta")):
        if c[key]:
            short.append(f" {mark}{c[key]}", style=style)
    parts.append(Part(4, 60, [full, short] if short.cell_len > 2 else [full]))
    if s.subagent_calls:
        parts.append(Part(5, 8, [_text((f" · {s.subagent_calls} in sub-agents", "dim"))]))
    looping = loop_label(s.loops)  # "looping: npm test failed ×4" (cursor_watch.core.loops)
    if looping:
        text = "↻ " + visible_line(looping)
        parts.append(Part(5, 80, shrink=lambda w, x=text: _text((" · ", "dim"), (middle(x, w - 3), "bold yellow")),
                          min_width=min(cell_len(text), 16) + 3, max_width=cell_len(text) + 3))
    usage = usage_of(s)
    if usage is not None and usage_text(usage):
        forms = [_text((" · " + usage_text(usage), "dim"))]
        brief = _brief_usage(usage)
        if brief:
            forms.append(_text((" · " + brief, "dim")))
        parts.append(Part(6, 30, forms))
    gauge = gauge_text(s.context, s.model, s.rules.prices)  # "ctx 142k/200k 71%": only where the agent gives per-call usage
    if gauge is not None:
        style = GAUGE_STYLE[gauge[2]]
        # kept before the usage and cost (priority), widened last (grow): "ctx 5%" before "ctx 49.8k/1.0M 5%"
        parts.append(Part(6, 65, [_text((" · ", "dim"), (gauge[0], style)), _text((" · ", "dim"), (gauge[1], style))],
                          grow=5))
    cost = cost_text(s)
    if cost:
        forms = [_text((" · " + cost, "dim"))]
        if cost.startswith("cost unknown"):
            forms.append(_text((" · cost ?", "dim")))
        parts.append(Part(7, 75, forms))
    diag = s.invalid_lines + s.unknown_events
    if diag:
        parts.append(Part(8, 85, [_text((" · ", "dim"), (f"⚠ {plural(diag, 'diagnostic')} (d)", "bold red")),
                                  _text((" · ", "dim"), (f"⚠ {diag:,} (d)", "bold red"))]))
    if not live.following:
        new = f" · {live.new_entries} new" if live.new_entries else ""
        parts.append(Part(9, 95, [_text((" · ", "dim"), (f" paused{new} (End) ", STATE_STYLE["paused"])),
                                  _text((" ", ""), (f" paused{new} ", STATE_STYLE["paused"]))]))
    return fit(parts, width)


def _brief_usage(usage: Any) -> str:
    """``63.5k in · 393 out``: the token counts in few cells (the full line: :func:`usage_text`)."""
    bits = [f"{_k(n)} {label}" for n, label in ((usage.input_tokens, "in"), (usage.output_tokens, "out"))
            if n is not None]
    return " · ".join(bits)


def _k(n: int) -> str:
    if n < 10_000:
        return f"{n:,}"
    if n < 99_950:
        return f"{n / 1000:.1f}k"
    return f"{n / 1000:.0f}k" if n < 999_500 else f"{n / 1_000_000:.1f}M"
