"""Views without a screen: the live plain printer and the ``--summary`` report.

No Textual import on this path (an import-hygiene test checks it). Colour only
on a terminal; Rich's Console honours ``NO_COLOR`` and non-terminal output. All
stream text is passed through :func:`cursor_watch.safe.visible` before printing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from ..core import model as m
from ..core.canonical import agent_command
from ..core.costs import run_cost, usage_of
from ..fmt import cost_label
from ..core.loops import loop_label
from ..core.model import Session, ToolCall
from ..fmt import model_label, plural, shown_detail, tool_calls_phrase
from ..fmt import call_duration_text
from ..output import OutputClosed
from ..core.runs import Run
from ..safe import visible, visible_line
from .termlines import LineWriter, Piece, rich_text
from .labels import OUTCOME_STYLE, STATUS_STYLE, cost_text, note_detail_text, run_duration_text, usage_text
from ..core.tools import STATUS_RUNNING, said_in



class _StreamConsole(Console):
    def on_broken_pipe(self) -> None:
        # Rich exits the process from inside our pump task; stop the watch instead
        raise OutputClosed()


def make_console(file: IO[str] | None = None) -> Console:
    """A Console for stream output: colour only on a terminal, no markup or highlighting.

    A closed stdout raises :class:`OutputClosed` (instead of Rich's ``SystemExit``).
    """
    return _StreamConsole(file=file, highlight=False, markup=False, emoji=False, soft_wrap=True)


def tool_status_label(call: ToolCall) -> Text:
    """``✔ success`` etc. with the status colour."""
    symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
    return Text(f"{symbol} {call.status}", style=style)


# A printed line is a list of pieces, (text, style or None), on a base style: what a
# rich.text.Text made with Text(style=base) and append(text, style) holds (termlines.py
# writes exactly what Rich prints for it). The *_text functions give the Text itself.


def header_pieces(session: Session) -> list[Piece]:
    """One line: session id, model, cwd, permission mode, API key source, MCP servers (with
    the status of each one not connected)."""
    command = agent_command(session.agent) + (f" {session.agent_version}" if session.agent_version else "")
    p: list[Piece] = [(visible_line(command) + " ", "bold"), (visible_line(model_label(session.model, session.events)), "bold cyan")]
    if session.cwd:
        p.append(("  cwd ", "dim"))
        p.append((visible_line(session.cwd), None))
    p.append(("  session ", "dim"))
    p.append((visible_line(session.session_id or "?"), None))
    extras = []
    if session.permission_mode:
        extras.append(f"permission {session.permission_mode}")
    if session.api_key_source:
        extras.append(f"key {session.api_key_source}")
    if session.mcp_servers:  # every one, with its status when it is not connected
        extras.append("MCP " + ", ".join(name if status == "connected" else f"{name} ({status or 'no status'})"
                                         for name, status in session.mcp_servers))
    if extras:
        p.append(("  (" + visible_line(", ".join(extras)) + ")", "dim"))
    return p


def header_text(session: Session) -> Text:
    """:func:`header_pieces` as a Text."""
    return rich_text(None, header_pieces(session))




def tool_pieces(call: ToolCall, event: str) -> list[Piece]:
    """``▶ [3] shell  pytest -q`` (start) or ``✖ [3] shell  pytest -q  failure, exit 1  2.1 s``
    (``—`` in place of the duration when it was not recorded)."""
    symbol, style = STATUS_STYLE.get(call.status if event == "end" else STATUS_RUNNING, ("?", ""))
    p: list[Piece] = [(f"{symbol} [{call.index}] ", style), (visible_line(call.tool), "bold")]  # the tool name too is stream text
    if call.parent_call_id:  # ran inside a sub-agent: indented
        p.insert(0, ("  └ ", "dim"))
    if call.summary:
        p.append(("  " + visible_line(call.summary), None))
    if event == "end":
        p.append((f"  {call.status}", style))
        if call.exit_code and "exit" not in call.detail:
            p.append((f" (exit {call.exit_code})", style))
        if call.detail and not said_in(call.detail, call.interaction):  # the note above said it
            p.append((" (" + visible_line(shown_detail(call.detail, "--summary --json")) + ")", style))
        p.append((f"  {call_duration_text(call)}", "dim"))
    return p


def tool_line(call: ToolCall, event: str) -> Text:
    """:func:`tool_pieces` as a Text."""
    return rich_text(None, tool_pieces(call, event))


def outcome_pieces(session: Session) -> list[Piece]:
    """The closing line: outcome, tool-call counts, duration (:func:`run_duration_text`: ``no
    times recorded`` when the stream had none), tokens, diagnostics."""
    status = session.status
    parts = [tool_calls_phrase(len(session.tool_calls), session.tool_counts)]
    if session.subagent_calls:
        parts.append(f"{session.subagent_calls} in sub-agents")
    r = session.result
    if r is not None:
        if r.subtype and r.subtype != status:
            parts.append(f"result {visible_line(r.subtype)}")
    duration = run_duration_text(session)
    if duration:
        parts.append(duration)
    usage = usage_of(session)
    if usage is not None and usage_text(usage):
        parts.append(usage_text(usage))
    cost = cost_text(session)
    if cost:
        parts.append(cost)
    if session.invalid_lines:
        parts.append(plural(session.invalid_lines, "invalid line"))
    if session.unknown_events:
        parts.append(plural(session.unknown_events, "unknown event"))
    if session.exit_status is not None:
        parts.append(f"exit status {session.exit_status}")
    looping = loop_label(session.loops)
    if looping:
        parts.append(visible_line(looping))
    return [(f"■ {status}", OUTCOME_STYLE.get(status, "")), ("  " + " · ".join(parts), None)]


def outcome_text(session: Session) -> Text:
    """:func:`outcome_pieces` as a Text."""
    return rich_text(None, outcome_pieces(session))


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


INVALID_SHOWN = 3  # lines that are not stream-json printed one by one before the first event (the rest counted)




def _stderr_pieces(line: str) -> list[Piece]:
    return [("stderr: ", None), (visible_line(line), "yellow")]  # on base style "bold yellow"


class PlainPrinter:
    """Prints a live transcript as changes arrive.

    Header once; each assistant segment when it is complete; each tool call when it
    starts and when it ends (status, duration); notes (queries, retries,
    connections); diagnostics and child stderr marked as such; the outcome at the end.
    What a batch of changes completes is written at once, at the end of :meth:`handle`
    (see :mod:`cursor_watch.views.termlines`: the bytes ``Console.print`` would write).

    Args:
        session: the model the changes refer to.
        console: where to print (see :func:`make_console`).
        show_thinking: also print thinking blocks (dim) when they complete.
        writer: the line buffer to add to (a :class:`RunsPrinter` shares one); by default
            the printer's own, on ``console``.
    """

    def __init__(self, session: Session, console: Console, show_thinking: bool = False,
                 writer: LineWriter | None = None) -> None:
        self.session = session
        self.console = console
        self.show_thinking = show_thinking
        self.writer = writer if writer is not None else LineWriter(console)
        self._header_done = False
        self._printed_upto = 0  # segments [0, n) printed (they close in order)
        self._loops_shown = 0  # findings of session.loops.reached printed
        self._held = 0  # lines not stream-json counted, not printed (before the first event: INVALID_SHOWN)
        self._held_from = self._held_to = 0  # their first and last line numbers
        self._event_seen = False  # a change other than a diagnostic has come (the stream has begun)
        self.before_print: Callable[[], None] | None = None  # called before each line (see RunsPrinter)
        # the change kinds that print (a batch is mostly deltas, which don't)
        self._handlers: dict[str, Callable[[Any], None]] = {
            m.CHANGE_HEADER: self._on_header,
            m.CHANGE_PROMPT: self._on_prompt,
            m.CHANGE_SEGMENT_CLOSED: self._segment,
            m.CHANGE_TOOL_STARTED: self._on_tool_started,
            m.CHANGE_TOOL_DONE: self._on_tool_done,
            m.CHANGE_NOTE: self._on_note,
            m.CHANGE_DIAGNOSTIC: self._on_diagnostic,
            m.CHANGE_UNKNOWN: self._on_unknown,
            m.CHANGE_END: self._on_end,
        }
        if show_thinking:
            self._handlers[m.CHANGE_THINKING_CLOSED] = self._on_thinking_closed

    def _print(self, pieces: list[Piece], base: str | None = None) -> None:
        if self._held:  # lines that are not stream-json, counted: said before what comes next
            held, self._held = self._held, 0
            where = f"line {self._held_from}" if held == 1 else f"lines {self._held_from}-{self._held_to}"
            self._print([(f"! … {plural(held, 'more line')} not stream-json ({where}), not shown: "
                          "--summary --json lists them", None)], "bold red")
        if self.before_print is not None:
            self.before_print()
        self.writer.line(pieces, base)

    def _header(self) -> None:
        if not self._header_done and self.session.session_id is not None:
            self._header_done = True
            self._print(header_pieces(self.session))

    def handle(self, changes: list[tuple[str, Any]]) -> None:
        """Print what ``changes`` completed."""
        handlers = self._handlers
        try:
            for kind, key in changes:
                if not self._event_seen and kind != m.CHANGE_DIAGNOSTIC:
                    self._event_seen = True  # (lines that are not stream-json after it are each shown)
                handler = handlers.get(kind)
                if handler is not None:
                    handler(key)
        finally:
            self.writer.flush()

    def _on_header(self, key: Any) -> None:
        self._header()

    def _on_prompt(self, key: Any) -> None:
        self._header()
        self._print([("> ", None), (visible(self.session.prompt or ""), "blue")], "bold blue")

    def _on_thinking_closed(self, key: int) -> None:
        text = self.session.thinking[key].text
        if text.strip():
            self._print([(_indent(visible(text), "  ~ "), None)], "dim italic")

    def _on_tool_started(self, key: str) -> None:
        self._print(tool_pieces(self.session.tool_calls[key], "start"))

    def _on_tool_done(self, key: str) -> None:
        call = self.session.tool_calls[key]
        self._print(tool_pieces(call, "end"))
        reached = self.session.loops.reached
        # a call repeated --max-repeats times (3): said once per streak, under the call that made it
        # (the model may have read further: a batch is applied before it is printed)
        while self._loops_shown < len(reached) and reached[self._loops_shown].last_line <= call.completed_line:
            finding = reached[self._loops_shown]
            self._loops_shown += 1
            self._print([(f"↻ looping: {visible_line(finding.label())}", None)], "bold yellow")

    def _on_note(self, key: int) -> None:
        note = self.session.notes[key]
        self._print([(f"· {visible_line(note.text)}", None)], "yellow" if note.kind != "connection" else "dim")
        if note.detail:  # a hook's output, under its line
            self._print([(_indent(note_detail_text(note.detail), "    "), None)], "dim")

    def _on_diagnostic(self, key: int) -> None:
        d = self.session.diagnostics[key]
        if not self._event_seen and key >= INVALID_SHOWN:  # a file that is not stream-json: said once
            if not self._held:
                self._held_from = d.line
            self._held += 1
            self._held_to = d.line
            return
        self._print([(f"! line {d.line}: {visible_line(d.message)}", None)], "bold red")

    def _on_unknown(self, key: int) -> None:
        if self.session.unread:  # a file no agent wrote: its note said so once, its end note counts them
            return
        u = self.session.unknown[key]
        self._print([(f"? line {u.line}: unknown event {visible_line(u.label)}", None)], "magenta")

    def _on_end(self, key: Any) -> None:
        s = self.session
        for index in range(self._printed_upto, len(s.segments)):
            self._segment(index)
        self._print(outcome_pieces(s))

    def _segment(self, index: int) -> None:
        if index < self._printed_upto:
            return
        self._printed_upto = index + 1
        text = self.session.segments[index].text
        if text.strip():
            self._print([(_indent(visible(text.strip("\n")), "  "), None)])

    def stderr(self, line: str) -> None:
        """Print a line of the child's stderr, marked."""
        try:
            self._print(_stderr_pieces(line), "bold yellow")
        finally:
            self.writer.flush()


def run_title(run: Run) -> str:
    """How a run is named in plain output: ``a.jsonl (run 2)``, ``stdin (run 1)``."""
    name = run.source if run.source != "-" else run.source_label
    return f"{name} (run {run.index})"


def separator_pieces(run: Run) -> list[Piece]:
    """The line printed before a run's output when several are watched (``tail``'s style), on base style bold."""
    return [(f"==> {visible_line(run_title(run))} <==", None)]


def separator_text(run: Run) -> Text:
    """:func:`separator_pieces` as a Text."""
    return rich_text("bold", separator_pieces(run))


class RunsPrinter:
    """``--plain`` for several runs: a :class:`PlainPrinter` per run, and a separator line
    naming the source and run whenever the output moves to another run.

    The first run of a lone source gets no separator (its output is exactly that of a
    single stream); with several sources (``several``) every run gets one.
    """

    def __init__(self, console: Console, show_thinking: bool = False, several: bool = False) -> None:
        self.console = console
        self.show_thinking = show_thinking
        self.several = several
        self.writer = LineWriter(console)  # one buffer for every run: lines stay in order
        self._printers: dict[int, PlainPrinter] = {}
        self._last: Run | None = None
        self._current: Run | None = None

    def _printer(self, run: Run) -> PlainPrinter:
        printer = self._printers.get(id(run))
        if printer is None:
            printer = PlainPrinter(run.session, self.console, show_thinking=self.show_thinking, writer=self.writer)
            printer.before_print = lambda: self._switch_to(run)
            self._printers[id(run)] = printer
        return printer

    def _switch_to(self, run: Run) -> None:
        if run is self._last:
            return
        if self._last is not None or self.several:
            self.writer.line(separator_pieces(run), "bold")
        self._last = run

    def handle(self, run: Run, changes: list[tuple[str, Any]]) -> None:
        """Print what ``changes`` of ``run`` completed."""
        self._current = run
        self._printer(run).handle(changes)

    def alert(self, alert: Any) -> None:
        """One line for an alert (``! stalled 6m: shell npm test``), within its run's output."""
        style = {"ended": "bold green", "failed": "bold red", "budget": "bold red", "loop": "bold red"}.get(
            alert.kind, "bold yellow")
        run = alert.source_run
        printer = self._printer(run) if run is not None else None
        pieces: list[Piece] = [(f"! {visible_line(alert.text)}", None)]
        if alert.kind == "waiting" and alert.details.get("question"):
            pieces.append((": " + visible_line(alert.details["question"]), None))
        if alert.kind in ("ended", "failed"):
            return  # the end line says it
        try:
            if printer is not None:
                printer._print(pieces, style)
            else:
                self.writer.line(pieces, style)
        finally:
            self.writer.flush()

    def quiet(self, run: Any, quiet: Any) -> None:
        """One line when a live run has been quiet for a while, and when its reason changes
        (``~ quiet 30s: compacting``; :mod:`cursor_watch.core.quiet`), within its run's output."""
        pieces: list[Piece] = [(f"~ {visible_line(quiet.label())}", None)]
        if not quiet.explained:
            pieces.append((" (unexplained)", None))
        try:
            self._printer(run)._print(pieces, "yellow" if quiet.explained else "bold yellow")
        finally:
            self.writer.flush()

    def stderr(self, line: str) -> None:
        """A stderr line of the spawned command, printed within the current run."""
        if self._current is not None:
            self._printer(self._current).stderr(line)
        else:
            self.writer.line(_stderr_pieces(line), "bold yellow")
            self.writer.flush()


def print_summaries(runs: list[Run], console: Console) -> None:
    """The readable ``--summary`` of each run; with several, each after its separator line."""
    for run in runs:
        if len(runs) > 1:
            console.print(separator_text(run))
        print_summary(run.session, console, run.stderr)


def print_summary(session: Session, console: Console, stderr_tail: list[str] | None = None) -> None:
    """The readable ``--summary``: header, outcome, tool calls, counts, usage, final text."""
    s = session
    console.print(header_text(s))
    if s.prompt is not None:
        t = Text("> ", style="bold blue")
        t.append(visible(s.prompt), style="blue")
        console.print(t)
    console.print(outcome_text(s))
    for note in s.notes:
        if note.kind == "end":  # why a run without a result ended (runs.end_note)
            console.print(Text(f"· {visible_line(note.text)}", style="yellow"))
    if s.tool_calls:
        from rich.table import Table  # only the readable --summary draws a table (--plain starts faster)

        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        table.add_column("#", justify="right")
        table.add_column("status")
        table.add_column("tool")
        table.add_column("summary", overflow="fold")
        table.add_column("duration", justify="right")
        for call in s.tool_calls.values():
            summary = visible_line(call.summary)
            if call.detail:
                summary += f"  ({visible_line(shown_detail(call.detail, '--summary --json'))})"
            table.add_row(str(call.index), tool_status_label(call),
                          ("└ " if call.parent_call_id else "") + visible_line(call.tool), summary,
                          call_duration_text(call))
        console.print()
        console.print(table)
    c = s.counts()
    console.print()
    console.print(Text(
        f"lines {c['lines']} · events {c['events']} · invalid lines {c['invalid_lines']} · "
        f"unknown events {c['unknown_events']} · tool calls {c['tool_calls']}",
        style="dim",
    ))
    usage = usage_of(s)
    if usage is not None and usage_text(usage):
        console.print(Text(usage_text(usage), style="dim"))
    cost = run_cost(s)
    if cost.estimate is not None:
        console.print(Text(f"cost {cost_label(None, cost.estimate)} (prices: {visible_line(cost.source)})", style="dim"))
    elif cost.reported is None and usage_of(s):
        console.print(Text(f"cost: {cost.note}", style="dim"))
    shown = 50 if s.events else INVALID_SHOWN  # a file that is not stream-json: its end note says so once
    for d in s.diagnostics[:shown]:
        console.print(Text(f"! line {d.line}: {visible_line(d.message)}", style="red"))
    if len(s.diagnostics) > shown:
        console.print(Text(f"! … {plural(len(s.diagnostics) - shown, 'more diagnostic')} (see --summary --json)",
                           style="red"))
    for line in (stderr_tail or [])[-20:]:
        console.print(Text(f"stderr: {visible_line(line)}", style="yellow"))
    final = s.result.text if s.result is not None and s.result.text else s.assistant_text
    if final.strip():
        console.print()
        console.print(Text("Final text:", style="bold"))
        console.print(Text(visible(final)))
