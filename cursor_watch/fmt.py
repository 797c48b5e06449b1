"""Small formatting helpers shared by the views: plurals and tool-call counts (no UI imports).

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
