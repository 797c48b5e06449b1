"""What the runs table and the tool table share: a Line-API view of one row per line with a
row cursor.

A Line-API widget draws only the lines on screen (``render_line``), so 100,000 rows cost what
the visible ones cost (``design.md``). :class:`CursorRows` keeps the cursor (``cursor_row``),
moves it with the keys, the mouse and :meth:`CursorRows.move_cursor`, scrolls it into view and
gives each row its background (the cursor's, every other row's, the plain one); a subclass says
how many rows there are, what a row looks like and what Enter does.
"""

from __future__ import annotations

from rich.style import Style
from textual import events
from textual.scroll_view import ScrollView


class CursorRows(ScrollView, can_focus=True):
    """One row per line, with a row cursor; Enter (or a click on the cursor's row) selects it.

    A subclass defines :attr:`row_count`, ``render_line`` and :meth:`action_select`, names its
    component classes ``{COMPONENT}--cursor`` and ``{COMPONENT}--even`` (:attr:`COMPONENT`), and
    may redraw less than everything when the cursor moves (:meth:`refresh_cursor`).
    """

    COMPONENT = "rows"  # the prefix of the component classes (runs-table, tool-table)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cursor_row = 0

    @property
    def row_count(self) -> int:
        """Number of rows."""
        raise NotImplementedError

    def action_select(self) -> None:
        """Enter on the cursor's row (the subclass posts its ``Selected``)."""
        raise NotImplementedError

    def refresh_cursor(self, old: int) -> None:
        """The cursor moved from row ``old`` (or the focus changed): draw what that changes (here,
        everything)."""
        self.refresh()

    def row_style(self, index: int, selected: bool) -> Style:
        """The background of row ``index``: the cursor's, every other row's, else the widget's."""
        if selected:
            return self.get_component_rich_style(f"{self.COMPONENT}--cursor")
        if index % 2:
            return self.get_component_rich_style(f"{self.COMPONENT}--even")
        return self.rich_style

    # -- the cursor ------------------------------------------------------------------------

    def move_cursor(self, row: int) -> None:
        """Put the cursor on ``row`` (clamped) and scroll it into view."""
        count = self.row_count
        if not count:
            return
        old = self.cursor_row
        self.cursor_row = max(0, min(row, count - 1))
        self.refresh_cursor(old)
        self._scroll_to_cursor()

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        height = max(1, self.scrollable_content_region.height)
        # force: right after new rows Textual has not yet enabled the scrollbar, and
        # would ignore the scroll (the table then sat on row 1 while rows came in)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True, force=True)
        elif self.cursor_row >= top + height:
            self.scroll_to(y=self.cursor_row - height + 1, animate=False, immediate=True, force=True)

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self.scrollable_content_region.height - 1))

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_offset.y) + event.y
        if 0 <= row < self.row_count:
            if row == self.cursor_row:
                self.action_select()
            else:
                self.move_cursor(row)

    def on_focus(self) -> None:
        self.refresh_cursor(self.cursor_row)

    def on_blur(self) -> None:
        self.refresh_cursor(self.cursor_row)
