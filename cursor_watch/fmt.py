"""Small formatting helpers shared by the views: plurals, tool-call counts, durations (no UI imports).

Wording rules (issue 18): a count agrees with its noun (``1 event``, ``2 events``), and a
count of tool calls reads ``3 tool calls (2 success, 1 failed)``, the noun beside its number.
"""

from __future__ import annotations

from collections.abc import Mapping

# the order and words of a tool-call count's parts (status -> word)
COUNT_WORDS = (("success", "success"), ("failure", "failed"), ("rejected", "rejected"),
               ("incomplete", "incomplete"), ("running", "running"))


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 event``, ``0 events``, ``1,234 events``: ``n`` with thousands separators and the noun
    in the number it takes (``nouns``: the plural when it is not ``noun + "s"``)."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def tool_calls_phrase(total: int, counts: Mapping[str, int]) -> str:
    """``3 tool calls (2 success, 1 failed)``, ``1 tool call (1 running)``, ``0 tool calls``.

    Args:
        total: the run's tool calls.
        counts: tool calls by status (``success``, ``failure``, ``rejected``, ``incomplete``,
            ``running``); zero counts are left out.
    """
    parts = [f"{counts[k]:,} {word}" for k, word in COUNT_WORDS if counts.get(k)]
    return plural(total, "tool call") + (f" ({', '.join(parts)})" if parts else "")


def format_ms(ms: int | float | None) -> str:
    """``1234`` -> ``1.2 s``; ``65000`` -> ``1m05s``; None -> ``""``."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{int(ms)} ms"
    s = ms / 1000.0
    if s < 60:
        return f"{s:.1f} s"
    minutes, sec = divmod(int(s), 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
