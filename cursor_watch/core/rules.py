"""What every run is judged by: one value for the whole watch, made from the command line once
and carried by each run's model (``session.rules``), so every view of a run (the TUI, ``--plain``,
``--summary``, the exports, ``report``, ``compare``, the outlets) prices it, marks it looping and
lists its stalls alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .loops import DISPLAY_REPEATS

if TYPE_CHECKING:
    from .costs import PriceTable
    from .limits import Limits


@dataclass(frozen=True)
class RunRules:
    """The rules of the views, from the options.

    Attributes:
        prices: the price table of the estimates and the context windows (the defaults, the
            user's ``prices.toml``, ``--prices FILE``); None: the defaults and the user's file
            (:func:`cursor_watch.core.costs.price_table`).
        summary_limits: the stall duration (``--stall``, else
            :data:`~cursor_watch.core.limits.DISPLAY_STALL_S`) and budgets (``--max-*``) the summary
            reports against; None: :data:`~cursor_watch.core.limits.SUMMARY_LIMITS`.
        repeats: the repeats at which a run is marked looping (``--max-repeats``, else
            :data:`~cursor_watch.core.loops.DISPLAY_REPEATS`).
    """

    prices: PriceTable | None = None
    summary_limits: Limits | None = None
    repeats: int = DISPLAY_REPEATS

    def price_table(self) -> PriceTable:
        """:attr:`prices`, else the default table."""
        if self.prices is not None:
            return self.prices
        from .costs import price_table

        return price_table()


DEFAULT_RULES = RunRules()
