"""A one-line bar at the bottom for typing a search or a filter, with its status on the right.

The screen that owns it runs the query as the text changes (incremental); the bar only
edits and reports: :class:`QueryBar.Changed` as you type, :class:`QueryBar.Submitted` on
Enter (keep it), :class:`QueryBar.Cleared` on Escape (drop it), :class:`QueryBar.RegexToggled`
on ``Ctrl+R`` (search bars only).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static


class QueryBar(Horizontal):
    """``/ query ............ 3/17 · regex``: a prompt, an input and a status.

    Args:
        prompt: what the bar is for (``/`` for search, ``filter``, ``runs /``).
        placeholder: the input's placeholder text.
        regex_toggle: ``Ctrl+R`` toggles regular expressions.
    """

    DEFAULT_CSS = """
    QueryBar { height: 1; background: $panel; display: none; }
    QueryBar.-shown { display: block; }
    QueryBar > .query-bar--prompt { width: auto; padding: 0 1; color: $accent; text-style: bold; }
    QueryBar > Input { width: 1fr; height: 1; border: none; padding: 0; background: $panel; }
    QueryBar > Input:focus { border: none; background: $boost; }
    QueryBar > .query-bar--status { width: auto; max-width: 60%; padding: 0 1; color: $text-muted; }
    QueryBar > .query-bar--status.-error { color: $error; }
    """
    BINDINGS = [
        Binding("escape", "clear", "Clear", show=True),
        Binding("ctrl+r", "toggle_regex", "Regex", show=True),
    ]

    class Changed(Message):
        """The text changed (the query runs as you type)."""

        def __init__(self, bar: QueryBar, value: str) -> None:
            super().__init__()
            self.bar = bar
            self.value = value

    class Submitted(Message):
        """Enter: keep the query and go back to the panes."""

        def __init__(self, bar: QueryBar, value: str) -> None:
            super().__init__()
            self.bar = bar
            self.value = value

    class Cleared(Message):
        """Escape: drop the query and close the bar."""

        def __init__(self, bar: QueryBar) -> None:
            super().__init__()
            self.bar = bar

    class RegexToggled(Message):
        """Ctrl+R: literal text or a regular expression."""

        def __init__(self, bar: QueryBar, regex: bool) -> None:
            super().__init__()
            self.bar = bar
            self.regex = regex

    def __init__(self, prompt: str, placeholder: str = "", regex_toggle: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self._prompt = prompt
        self._placeholder = placeholder
        self.regex_toggle = regex_toggle
        self.regex = False

    def compose(self) -> ComposeResult:
        yield Static(Text(self._prompt), classes="query-bar--prompt")
        yield Input(placeholder=self._placeholder, compact=True, select_on_focus=False)
        yield Static("", classes="query-bar--status")

    @property
    def value(self) -> str:
        """The text typed."""
        return self.query_one(Input).value

    @property
    def shown(self) -> bool:
        """True while the bar is on screen."""
        return self.has_class("-shown")

    def open(self) -> None:
        """Show the bar and put the cursor in it."""
        self.add_class("-shown")
        inp = self.query_one(Input)
        # at once, not after a refresh (Widget.focus): keys typed right after the one that
        # opened the bar are already queued, and must reach the input
        self.screen.set_focus(inp)
        inp.cursor_position = len(inp.value)

    def close(self) -> None:
        """Hide the bar (its text is kept until cleared)."""
        self.remove_class("-shown")

    def set_value(self, value: str) -> None:
        """Replace the text (a Changed message follows, as for typing)."""
        self.query_one(Input).value = value

    def set_status(self, text: str | Text, error: bool = False) -> None:
        """What the query found (``3/17``, ``no matches``, an error)."""
        status = self.query_one(".query-bar--status", Static)
        mode = " · regex" if self.regex else ""
        content = Text(text) if isinstance(text, str) else text
        if mode:
            content = content + Text(mode, style="bold")
        status.update(content)
        status.set_class(error, "-error")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(self, event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(self, event.value))

    def action_clear(self) -> None:
        self.query_one(Input).value = ""
        self.close()
        self.post_message(self.Cleared(self))

    def action_toggle_regex(self) -> None:
        if not self.regex_toggle:
            return
        self.regex = not self.regex
        self.post_message(self.RegexToggled(self, self.regex))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_regex":
            return self.regex_toggle
        return True
