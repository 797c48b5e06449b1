"""The transcript: prompt, assistant segments (Markdown), thinking, tool markers, notes.

One widget per timeline entry, in stream order. A segment is one ``Static``
holding a Rich ``Markdown`` renderable, re-rendered at most once per tick while it
streams: Textual's ``Markdown`` widget mounts a widget per paragraph, and at
firehose rates the mount/prune churn of those outran the event loop (RSS grew
~2 MB/s at 2,000 events/s with removed widgets waiting to be pruned). Only the
newest ``MAX_BLOCKS`` entries stay mounted, and a burst of more than
``MAX_MOUNT_PER_TICK`` new ones in a tick replaces the screen with the newest
(the screen always holds a contiguous tail, under a marker counting the rest):
the model keeps everything, the screen keeps what a person can scroll through.
Sticky follow uses ``Widget.anchor()``: scrolling up releases it, End restores it.
"""

from __future__ import annotations

from typing import Any

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from .. import model as m
from ..model import Session, ToolCall
from ..plain import STATUS_STYLE, format_ms
from ..safe import visible, visible_line

MAX_BLOCKS = 150
MAX_MOUNT_PER_TICK = 40


class PromptBlock(Static):
    """The user's prompt."""

    DEFAULT_CSS = """
    PromptBlock { border-left: thick $accent; padding: 0 1; margin: 0 0 1 0; color: $text; background: $boost; }
    """


class SegmentBlock(Static):
    """One assistant segment, rendered as Markdown (links shown, never opened)."""

    DEFAULT_CSS = """
    SegmentBlock { margin: 0 0 1 0; padding: 0 1; }
    """

    def __init__(self, text: str, index: int, closed: bool = False) -> None:
        super().__init__(markdown(text))
        self.index = index
        self.shown = text  # the raw text rendered
        self.closed = closed  # the segment's text is final: no need to look again

    def show(self, text: str) -> None:
        """Re-render with ``text`` if it changed."""
        if text != self.shown:
            self.shown = text
            self.update(markdown(text))


def markdown(text: str) -> RichMarkdown:
    """Escaped Markdown; links print their URL instead of becoming terminal hyperlinks."""
    return RichMarkdown(visible(text), hyperlinks=False, code_theme="monokai")


class ThinkingBlock(Static):
    """A thinking block: dim; hidden with ``t``."""

    DEFAULT_CSS = """
    ThinkingBlock { color: $text-muted; text-style: italic; padding: 0 1 0 2; margin: 0 0 1 0; }
    """


class ToolMarker(Static):
    """Where a tool call happened; click (or Enter in the table) for its detail."""

    DEFAULT_CSS = """
    ToolMarker { padding: 0 1; height: auto; }
    ToolMarker:hover { background: $boost; }
    """

    class Selected(Message):
        """The marker was clicked: open the detail of ``call_id``."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    def __init__(self, call: ToolCall) -> None:
        super().__init__(marker_text(call))
        self.call_id = call.call_id

    def on_click(self) -> None:
        self.post_message(self.Selected(self.call_id))


class NoteLine(Static):
    """A status line: interaction_query, retry, connection, source notices."""

    DEFAULT_CSS = """
    NoteLine { padding: 0 1; color: $warning; }
    NoteLine.-connection { color: $text-muted; }
    NoteLine.-source { color: $error; }
    """


class EarlierMarker(Static):
    """Says how many earlier entries are not on screen."""

    DEFAULT_CSS = """
    EarlierMarker { color: $text-muted; padding: 0 1; text-style: italic; }
    """


def marker_text(call: ToolCall) -> Text:
    """``▶ [3] shell  pytest -q`` ... ``✖ [3] shell  pytest -q · failure (exit 1) · 2.1 s``."""
    symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(f"{symbol} [{call.index}] ", style=f"bold {style}")
    t.append(visible_line(call.tool), style="bold")
    if call.summary:
        t.append("  " + visible_line(call.summary))
    if call.done:
        t.append(f" · {call.status}", style=style)
        if call.detail:
            t.append(f" ({visible_line(call.detail)[:80]})", style=style)
        elif call.exit_code:
            t.append(f" (exit {call.exit_code})", style=style)
        if call.duration_ms is not None:
            t.append(f" · {format_ms(call.duration_ms)}", style="dim")
    return t


def thinking_text(text: str) -> Text:
    """A thinking block's text, escaped and marked."""
    return Text("✻ " + visible(text.strip()), style="italic")


class Transcript(VerticalScroll):
    """The transcript pane; call :meth:`sync` with each batch of model changes."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; }
    """
    BINDINGS = [
        Binding("enter", "app.open_detail", "Detail"),
        Binding("end", "app.jump_end", "Latest"),
        Binding("tab", "app.focus_next", "Pane"),
    ]

    def __init__(self, show_thinking: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.show_thinking = show_thinking
        self._done = 0  # timeline entries handled
        self._skipped = 0  # entries never mounted or pruned (counted in the top marker)
        self._segments: dict[int, SegmentBlock] = {}
        self._thinking: dict[int, ThinkingBlock] = {}
        self._markers: dict[str, ToolMarker] = {}
        self._earlier: EarlierMarker | None = None
        self._follow = True
        self._preview = False
        self.new_while_paused = 0

    @property
    def following(self) -> bool:
        """True while the view sticks to the newest output (not paused by ``f`` or scrolling up)."""
        return self._follow and not (self.is_anchored and getattr(self, "_anchor_released", False))

    def follow(self, on: bool = True) -> None:
        """Start following (jump to the end) or stop."""
        self._follow = on
        if on:
            self.new_while_paused = 0
            self.anchor()
            self.scroll_end(animate=False, immediate=True)
        else:
            self.anchor(False)
        self._update_anchor()

    def _update_anchor(self) -> None:
        # Textual 8.2 pins an anchored view to ``content bottom - height`` even when
        # the content is shorter than the view, scrolling it to a negative offset:
        # anchor only once the content overflows.
        if not self._follow:
            return
        overflow = self.virtual_size.height > self.scrollable_content_region.height
        if overflow and not self.is_anchored:
            self.anchor()
        elif not overflow and self.is_anchored:
            self.anchor(False)
            self.scroll_to(y=0, animate=False, immediate=True)

    def set_thinking(self, shown: bool) -> None:
        """Show or hide thinking blocks.

        Each block's own ``display`` is set: a class on the transcript would make
        Textual restyle every mounted widget (measured: 16 ms of a 30 ms key press).
        """
        self.show_thinking = shown
        for tb in self.query_children(ThinkingBlock):
            tb.display = shown

    def behind(self, session: Session) -> bool:
        """True when timeline entries are waiting to be mounted (e.g. after a pause)."""
        return self._done != len(session.timeline)

    def show_preview(self, preview: Session, note: str) -> None:
        """Show the tail of a big file (a separate model of its last bytes) while the
        whole file is replayed; :meth:`end_preview` replaces it with the real tail."""
        self._preview = True
        widgets = [EarlierMarker(Text(note))]
        timeline = preview.timeline[-MAX_MOUNT_PER_TICK:]
        widgets += [w for w in (self._make(preview, kind, key) for kind, key in timeline) if w is not None]
        self._segments.clear()
        self._thinking.clear()
        self._markers.clear()
        self.mount_all(widgets)

    def end_preview(self) -> None:
        """The replay is done: drop the preview; the next sync mounts the real tail."""
        if self._preview:
            self._preview = False
            self._segments.clear()
            self._thinking.clear()
            self._markers.clear()
            self.remove_children()

    def sync(self, session: Session, changes: list[tuple[str, Any]]) -> int:
        """Mount new timeline entries and update changed ones; returns entries added."""
        if self._preview:
            return 0  # a big file is being replayed: its tail is shown from the preview
        if not self.following and self._done:
            # paused: the screen holds still while the user reads; new entries are
            # counted and mounted when following resumes
            self.new_while_paused = len(session.timeline) - self._done
            added = 0
        else:
            added = self._mount_new(session)
        for kind, key in changes:
            if kind in (m.CHANGE_SEGMENT, m.CHANGE_SEGMENT_CLOSED):
                block = self._segments.get(key)
                if block is not None and not block.closed:
                    block.show(session.segments[key].text)
                    block.closed = kind == m.CHANGE_SEGMENT_CLOSED
            elif kind in (m.CHANGE_THINKING, m.CHANGE_THINKING_CLOSED):
                tb = self._thinking.get(key)
                if tb is not None:
                    tb.update(thinking_text(session.thinking[key].text))
            elif kind in (m.CHANGE_TOOL_UPDATED, m.CHANGE_TOOL_STARTED, m.CHANGE_TOOL_DONE):
                marker = self._markers.get(key)
                if marker is not None:
                    marker.update(marker_text(session.tool_calls[key]))
            elif kind == m.CHANGE_PROMPT:
                pass
        self._update_anchor()
        return added

    def flush_streams(self, session: Session) -> None:
        """Re-render the open segment if its text changed (once per tick at most)."""
        for index, block in self._segments.items():
            if not block.closed:
                block.show(session.segments[index].text)
        self._update_anchor()

    def _mount_new(self, session: Session) -> int:
        timeline = session.timeline
        total = len(timeline)
        if total == self._done:
            return 0
        start = self._done
        limit = MAX_BLOCKS if self._done == 0 else MAX_MOUNT_PER_TICK  # a replay opens on its tail
        if total - start > limit:
            # a burst: what is on screen would be scrolled past at once; show the newest
            # entries only, so the screen always holds a contiguous tail of the timeline
            gone = [c for c in self.children if c is not self._earlier]
            for w in gone:
                self._forget(w)
            if gone:
                self.remove_children(gone)
            self._skipped += len(gone) + (total - limit - start)
            start = total - limit
        widgets = [self._make(session, kind, key) for kind, key in timeline[start:total]]
        self._done = total
        widgets = [w for w in widgets if w is not None]
        if widgets:
            self.mount_all(widgets)
        self._prune()
        return len(widgets)

    def _prune(self) -> None:
        children = list(self.children)
        blocks = [c for c in children if c is not self._earlier]
        extra = len(blocks) - MAX_BLOCKS
        if extra > 0:
            gone = blocks[:extra]
            for w in gone:
                self._forget(w)
            self.remove_children(gone)  # one prune for the lot
            self._skipped += len(gone)
        if self._skipped:
            text = Text(f"… {self._skipped:,} earlier entries not shown (the summary has them all)")
            if self._earlier is None:
                self._earlier = EarlierMarker(text)
                self.mount(self._earlier, before=0)
            else:
                self._earlier.update(text)

    def _forget(self, w: Any) -> None:
        if isinstance(w, SegmentBlock):
            self._segments.pop(w.index, None)
        elif isinstance(w, ToolMarker):
            self._markers.pop(w.call_id, None)
        elif isinstance(w, ThinkingBlock):
            for k, v in list(self._thinking.items()):
                if v is w:
                    del self._thinking[k]

    def _make(self, session: Session, kind: str, key: Any):
        if kind == "prompt":
            t = Text()
            t.append("❯ ", style="bold")
            t.append(visible(session.prompt or ""))
            return PromptBlock(t)
        if kind == "segment":
            seg = session.segments[key]
            block = SegmentBlock(seg.text, key, seg.closed)
            self._segments[key] = block
            return block
        if kind == "thinking":
            tb = ThinkingBlock(thinking_text(session.thinking[key].text))
            tb.display = self.show_thinking
            self._thinking[key] = tb
            return tb
        if kind == "tool":
            call = session.tool_calls[key]
            marker = ToolMarker(call)
            self._markers[key] = marker
            return marker
        if kind == "note":
            note = session.notes[key]
            return NoteLine(Text("· " + visible_line(note.text)), classes=f"-{note.kind}")
        return None
