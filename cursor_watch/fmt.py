"""Small formatting and parsing helpers shared by plain, TUI, export, alerts and the report.

No Rich, no Textual: importable from every path (``--summary --json`` included).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)?", re.ASCII)
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


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


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 run``, ``2 runs``, ``1,234 tool calls``."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def usd(value: float | Decimal) -> str:
    """``$0.42``, ``$12.50``; under ten cents, three significant digits (``$0.0117``, ``$0.000031``)."""
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
