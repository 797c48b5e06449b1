"""Small formatting helpers shared by the views: plurals, tool-call counts, durations, costs
(no UI imports: importable from every path, ``--summary --json`` included).

Wording rules: a count agrees with its noun (``1 event``, ``2 events``), and a
count of tool calls reads ``3 tool calls (2 success, 1 failed)``, the noun beside its number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any
from decimal import Decimal

# the order and words of a tool-call count's parts (status -> word)
COUNT_WORDS = (("success", "success"), ("failure", "failed"), ("rejected", "rejected"),
               ("incomplete", "incomplete"), ("running", "running"))


def model_label(model: str | None, events: int) -> str:
    """The model as views say it: its name; ``model ?`` while nothing has been read (the run's
    start, which names it, may still come); ``model not in stream`` when the stream never names
    one (Codex's ``exec --json`` has no model: formats/codex.py)."""
    if model:
        return model
    return "model not in stream" if events else "model ?"


DETAIL_SHOWN = 200  # characters of a call's detail a text view shows (the JSON outputs: all)


def shown_detail(detail: str, where: str, limit: int = DETAIL_SHOWN) -> str:
    """A call's detail (:attr:`cursor_watch.core.model.ToolCall.detail`: a rejection's reason can run
    to 800 characters and end with what matters) as a text view shows it: whole up to ``limit``
    characters, else cut with ``…`` and how much more there is and ``where`` the whole text is
    (``--summary --json``, ``⏎``, ``call 3``)."""
    if len(detail) <= limit:
        return detail
    return f"{detail[:limit].rstrip()}… [{len(detail) - limit:,} more chars: {where}]"


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


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)?", re.ASCII)
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


UNKNOWN_DURATION = "—"  # a duration that was not recorded, in every view


def call_duration_text(call: Any) -> str:
    """A tool call's duration (``2.1 s``, see :func:`format_ms`), or ``—`` when it is not known
    (a ``model.ToolCall`` whose times were not both recorded)."""
    return format_ms(call.duration_ms) or UNKNOWN_DURATION


def parse_duration(text: str) -> float:
    """``"90s"``, ``"10m"``, ``"1h30m"``, ``"2.5s"``, ``"500ms"`` or a bare number of seconds -> seconds.

    Raises:
        ValueError: not a duration, or not above zero (one line, for a usage error).
    """
    s = text.strip().lower().replace(" ", "")
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DURATION.match(s, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"not a duration: {text!r} (e.g. 90s, 10m, 1h30m)")
        total += float(m.group(1)) * _UNIT_S[m.group(2)]
        pos = m.end()
    if not s or total <= 0:
        raise ValueError(f"not a duration above zero: {text!r} (e.g. 90s, 10m, 1h30m)")
    return total


def short_duration(ms: float) -> str:
    """A coarse duration for a state label: ``45s``, ``6m``, ``1h05m`` (ms in)."""
    s = int(max(0.0, ms) // 1000)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def usd(value: float | Decimal) -> str:
    """``$0.42``, ``$12.50``; under ten cents, three significant digits (``$0.0117``, ``$0.0000310``)."""
    v = float(value)
    if v == 0 or abs(v) >= 0.1:
        return f"${v:,.2f}"
    places = min(8, 2 - math.floor(math.log10(abs(v))))
    return f"${v:.{places}f}"


def cost_label(reported: float | None, estimate: float | Decimal | None) -> str:
    """What a view shows for a run's cost: ``$0.42`` (reported by the agent), ``≈ $0.42 est.``
    (estimated from usage and a price table), or ``""`` when neither is known."""
    if reported is not None:
        return usd(reported)
    if estimate is not None:
        return f"≈ {usd(estimate)} est."
    return ""
