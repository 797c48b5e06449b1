"""Every view's shared words and styles: a tool call's status mark and colour, a run's outcome
colour, its duration, token usage and cost in words, a note's detail cut for a transcript.

The terminal UI, ``--plain``, ``--summary``, the exports and the report label a thing the same
way because they take its label from here (durations, counts and plurals: :mod:`cursor_watch.fmt`).
Pure Python: no Rich, no Textual (a style is a name each view applies its own way).
"""

from __future__ import annotations

from ..core.canonical import Usage
from ..core.costs import run_cost, usage_of
from ..core.model import Session
from ..core.tools import STATUS_FAILURE, STATUS_INCOMPLETE, STATUS_REJECTED, STATUS_RUNNING, STATUS_SUCCESS
from ..fmt import cost_label, format_ms, plural
from ..safe import visible

STATUS_STYLE = {
    STATUS_RUNNING: ("▶", "cyan"),
    STATUS_SUCCESS: ("✔", "green"),
    STATUS_FAILURE: ("✖", "red"),
    STATUS_REJECTED: ("⊘", "yellow"),
    STATUS_INCOMPLETE: ("…", "magenta"),
}
OUTCOME_STYLE = {"success": "bold green", "error": "bold red", "incomplete": "bold magenta", "running": "bold cyan"}


NO_TIMES = "no times recorded"  # where a run's duration would be, when its stream carried no times
def run_duration_text(session: Session) -> str:
    """``26.2 s`` (:meth:`Session.duration_ms`); ``no times recorded`` when a run with events
    recorded none (never a time since cursor-watch started); ``""`` for a run without events."""
    ms = session.duration_ms()
    if ms is not None:
        return format_ms(ms)
    return NO_TIMES if session.events else ""


def usage_text(usage: Usage) -> str:
    """``tokens in 44,522 (cache read 22,528) · out 261 (reasoning 64)``: the input counts the
    cached tokens (the cache's parts in brackets), the output its reasoning where the agent
    says so (an agent that counts reasoning apart: ``· reasoning N``); "" when nothing is known."""
    bits = []
    if usage.input_tokens is not None:
        parts = [f"{label} {v:,}" for v, label in ((usage.cache_read_tokens, "cache read"),
                                                     (usage.cache_write_tokens, "cache write")) if v]
        bits.append(f"in {usage.input_tokens:,}" + (f" ({', '.join(parts)})" if parts else ""))
    reasoning = usage.reasoning_tokens
    if usage.output_tokens is not None:
        inside = reasoning and usage.reasoning_in_output is not False
        bits.append(f"out {usage.output_tokens:,}" + (f" (reasoning {reasoning:,})" if inside else ""))
    if reasoning and (usage.reasoning_in_output is False or usage.output_tokens is None):
        bits.append(f"reasoning {reasoning:,}")
    return "tokens " + " · ".join(bits) if bits else ""


def cost_text(session: Session) -> str:
    """``$0.42``, ``≈ $0.42 est.``, or why there is no figure when the run used tokens; "" else."""
    cost = run_cost(session)
    label = cost_label(cost.reported, cost.estimate)
    if label:
        return label
    return f"cost unknown: {cost.note.split(' (')[0]}" if usage_of(session) else ""


NOTE_DETAIL_LINES = 10  # lines of a note's detail (a hook's output) --plain prints


def note_detail_text(detail: str, lines: int = NOTE_DETAIL_LINES) -> str:
    """A note's detail (a hook's output) for a transcript: escapes made visible, its first
    ``lines`` lines, then ``… N more lines (--summary --json has them all)`` when it has more
    (the JSON summary's ``notes[].detail`` keeps the whole text)."""
    text = visible(detail.strip("\n"))
    parts = text.split("\n")
    if len(parts) <= lines:
        return text
    rest = len(parts) - lines
    return "\n".join(parts[:lines]) + f"\n… {plural(rest, 'more line')} (--summary --json has them all)"
