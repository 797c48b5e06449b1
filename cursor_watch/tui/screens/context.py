"""The context screen (``w`` in a run): the context size at each model call, its history as a
sparkline, the compactions, the model's window and where that figure comes from
(:mod:`cursor_watch.core.context`). Where the agent gives no per-call usage, it says so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...core.context import ContextTrack, gauge_text, level, percent, window_of
from ...fmt import plural
from ...safe import visible_line

if TYPE_CHECKING:
    from ...core.costs import PriceTable

LEVEL_STYLE = {"ok": "green", "warn": "bold yellow", "full": "bold red"}
ROWS_SHOWN = 400  # the newest calls listed (the sparkline draws them all)
SPARK_ROWS = 4  # the sparkline's height in lines
EIGHTHS = " ▁▂▃▄▅▆▇█"


def sparkline(values: list[int], top: int, width: int, rows: int = SPARK_ROWS, styles: list[str] | None = None) -> Text:
    """``values`` as bars ``rows`` lines high and at most ``width`` cells wide, scaled from 0 to
    ``top`` (the window, so the height is how full it is; Textual's Sparkline scales from the
    smallest value to the largest, which makes a context at 20 % look empty). More values than
    cells: each cell shows the largest of its share. ``styles``: one style per value (the
    largest's wins in a cell)."""
    if not values or top <= 0 or width <= 0:
        return Text()
    n = len(values)
    cells = min(width, n)
    step = max(1, width // n) if n < width else 1  # few values: each a bar 1 to 4 cells wide
    step = min(step, 4)
    columns: list[tuple[int, str]] = []
    for c in range(cells):
        lo, hi = c * n // cells, max(c * n // cells + 1, (c + 1) * n // cells)
        i = max(range(lo, hi), key=lambda j: values[j])
        columns.append((values[i], styles[i] if styles else "green"))
    t = Text()
    for row in range(rows, 0, -1):
        for value, style in columns:
            eighths = min(rows * 8, round(min(value, top) * rows * 8 / top))
            fill = max(0, min(8, eighths - (row - 1) * 8))
            if row == 1 and value > 0 and fill == 0:
                fill = 1  # a call is never drawn as nothing
            t.append(EIGHTHS[fill] * step, style=style)
        if row > 1:
            t.append("\n")
    return t


def context_lines(track: ContextTrack, model: str | None, agent: str | None, table: PriceTable | None = None) -> Text:
    """The screen's summary lines: the gauge, peak, calls and compactions, the window (from
    ``table``, the run's prices; None: the default table) and its source; or why there is no size."""
    t = Text()
    why = track.why_unknown(agent)
    if why:
        t.append("Context size unknown: ", style="bold")
        t.append(why + ".")
        window = window_of(model, table)
        if window is not None:
            t.append(f"\nwindow {window[0]:,} tokens", style="dim")
        return t
    gauge = gauge_text(track, model, table)
    now = track.current()
    window = window_of(model, table)
    if gauge is not None:
        t.append(gauge[0], style=LEVEL_STYLE[gauge[2]])
    if now is not None:
        t.append(f"  now {now:,} tokens")
        if window is not None:
            t.append(f" of {window[0]:,}")
    peak = track.peak()
    if peak is not None:
        t.append(f" · peak {peak:,}")
    t.append(f" · {plural(len(track.sizes), 'model call')} · {plural(len(track.compactions), 'compaction')}")
    if window is not None:
        t.append(f"\nwindow: {visible_line(window[1])}", style="dim")
    else:
        t.append(f"\nwindow: unknown for model {visible_line(model or '(none named)')!s} "
                 "(add context_window to a price file: --prices FILE)", style="dim")
    t.append("\ncontext at a call: the prompt tokens it sent, cached ones included (the main agent's calls)",
             style="dim")
    return t


def context_table(track: ContextTrack, model: str | None, table: PriceTable | None = None) -> Text:
    """One line per model call (the newest :data:`ROWS_SHOWN`), a marker line per compaction
    across the columns: call number, stream line, tokens, share of the window, change since the
    call (or compaction) before; the window from ``table`` (as :func:`context_lines`)."""
    window = window_of(model, table)
    t = Text(f"{'call':>5}  {'line':>6}  {'tokens':>10}  {'window':>6}  {'change':>9}", style="bold")
    compactions: dict[int, list] = {}
    for c in track.compactions:
        compactions.setdefault(c.calls_before, []).append(c)
    start = max(0, len(track.sizes) - ROWS_SHOWN)
    if start:
        t.append(f"\n{'…':>5}  {start:,} earlier calls", style="dim")
    prev: int | None = track.sizes[start - 1] if start else None
    for i in range(start, len(track.sizes) + 1):
        for c in compactions.get(i, []):
            t.append(f"\n{'':>5}  {c.line:>6}  ")
            t.append("━━ " + c.words(), style="bold magenta")
            if c.post_tokens is not None:
                prev = c.post_tokens
        if i == len(track.sizes):
            break
        size = track.sizes[i]
        t.append(f"\n{i + 1:>5}  {track.lines[i]:>6}  {size:>10,}  ")
        if window is not None:
            pct = percent(size, window[0])
            t.append(f"{pct:>5}%", style=LEVEL_STYLE[level(pct)])
        else:
            t.append(f"{'—':>6}", style="dim")
        t.append(f"  {'' if prev is None else format(size - prev, '+,'):>9}", style="dim")
        prev = size
    return t


class ContextScreen(ModalScreen):
    """The context of one run (``w``): updated once a second while the run goes on.

    Args:
        session: the run's :class:`~cursor_watch.core.model.Session`.
    """

    BINDINGS = [Binding("escape,q,w", "dismiss", "Close")]
    DEFAULT_CSS = """
    ContextScreen { align: center middle; }
    ContextScreen > VerticalScroll { width: 90%; max-width: 120; height: auto; max-height: 90%; border: thick $accent;
                                     background: $surface; padding: 0 1; }
    ContextScreen #context-sparkline { margin: 1 0 0 0; }
    ContextScreen #context-legend { margin: 0 0 1 0; }
    ContextScreen #context-title { text-style: bold; }
    """

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session
        self._shown: tuple = ()

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="context-title")
            yield Static(id="context-summary")
            yield Static(id="context-sparkline")
            yield Static(id="context-legend")
            yield Static(id="context-table")
            yield Static(Text("Escape closes this view.", style="dim"))

    def on_mount(self) -> None:
        """Draw now, then again when the run's context changes."""
        self.refresh_context()
        self.set_interval(1.0, self.refresh_context)

    def refresh_context(self) -> None:
        """Redraw when calls or compactions were added (or a call's figure changed)."""
        s = self.session
        track = s.context
        key = (len(track.sizes), track.sizes[-1] if track.sizes else None, len(track.compactions), s.model)
        if key == self._shown:
            return
        self._shown = key
        self.query_one("#context-title", Static).update(
            Text(f"Context · {visible_line(s.model or 'model not named')}"))
        self.query_one("#context-summary", Static).update(context_lines(track, s.model, s.agent, s.rules.prices))
        spark = self.query_one("#context-sparkline", Static)
        window = window_of(s.model, s.rules.prices)
        history, styles = track.history(), self._styles(track, window[0] if window is not None else None)
        top = window[0] if window is not None else max(history, default=0)
        width = max(10, (self.size.width or 100) - 12)
        spark.update(sparkline(history, top, width, styles=styles))
        spark.display = bool(history)
        legend = self.query_one("#context-legend", Static)
        legend.update(Text(f"each bar a model call, from 0 to {'the window' if window is not None else 'the peak'}"
                           + (f" ({top:,} tokens)" if top else "") + "; magenta: a compaction's before and after",
                           style="dim"))
        legend.display = bool(history)
        table = self.query_one("#context-table", Static)
        table.update(context_table(track, s.model, s.rules.prices) if track.sizes or track.compactions else "")

    @staticmethod
    def _styles(track: ContextTrack, window: int | None) -> list[str]:
        """One style per :meth:`ContextTrack.history` value: a compaction's before and after in
        magenta, each call by how full the window was (green, yellow, red)."""
        def call(v: int) -> str:
            return LEVEL_STYLE[level(percent(v, window))] if window else "green"

        out: list[str] = []
        at = 0
        for c in track.compactions:
            out.extend(call(v) for v in track.sizes[at:c.calls_before])
            at = c.calls_before
            out.extend("magenta" for v in (c.pre_tokens, c.post_tokens) if v is not None)
        out.extend(call(v) for v in track.sizes[at:])
        return out
