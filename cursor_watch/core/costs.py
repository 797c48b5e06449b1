"""What a run cost: the agent's own figure, or an estimate from its token usage and a price table.

Cursor's ``result`` carries ``usage`` (cumulative tokens of the turn, 2026-08 onward) but no cost
(``stream-json-reference.md`` section 2.9); other agents (Claude Code) report ``cost_usd``. Where
no cost is reported, :func:`run_cost` estimates one from the usage (canonical: input tokens
include the cached ones, :class:`cursor_watch.core.canonical.Usage`) and a price table, each token
priced once: the uncached input at the ``input`` rate, cache reads and writes at theirs, output
at the ``output`` rate (and reasoning too where an agent counts it apart from the output):

* the shipped defaults (``data/prices.toml``, each entry with its source and date);
* a user file, ``prices.toml`` in the platform's config directory (platformdirs);
* ``--prices FILE``.

Later files override earlier ones model by model. A file is TOML, one table per model name as
the stream writes it, rates in USD per million tokens::

    ["GPT-5 Mini"]
    input = 0.25
    output = 2.0
    cache_read = 0.025
    cache_write = 0.0

A missing ``cache_write`` counts as the ``input`` rate; any other missing rate is unknown (a run
with tokens of that kind gets no estimate, and says why). An entry may also give the model's ``context_window``
(tokens) and its ``context_source`` (:mod:`cursor_watch.core.context` reads them); an entry with a
context window and no rate prices nothing. Rates are read as exact decimals, so an
estimate is exactly ``sum(tokens x rate) / 1e6``.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass
from decimal import Decimal
from importlib import resources
from typing import Any

from .canonical import Usage

# the report's token columns (canonical Usage attributes)
TOKEN_KINDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
MILLION = Decimal(1_000_000)


class PricesError(Exception):
    """A price file that can't be read or doesn't have the expected shape (one line)."""


@dataclass(frozen=True)
class Price:
    """One model's rates (USD per million tokens, exact decimals; None: unknown) and their origin.

    Attributes:
        source: where the rates come from (a URL and note, or the file they were read from).
        date: when they were read (``YYYY-MM-DD``), "" if not given.
        context_window: the model's context window in tokens (the vendor's model page), or None.
        context_source: where that figure comes from (a URL and note), "" when not given.
    """

    input: Decimal | None
    output: Decimal | None
    cache_read: Decimal | None
    cache_write: Decimal | None
    source: str
    date: str = ""
    context_window: int | None = None
    context_source: str = ""

    @property
    def has_rates(self) -> bool:
        """It gives at least one rate (an entry may give a context window only)."""
        return any(v is not None for v in (self.input, self.output, self.cache_read, self.cache_write))

    def rate(self, kind: str) -> Decimal | None:
        """The rate of ``kind`` (``input``, ``output``, ``cache_read``, ``cache_write``)."""
        value = getattr(self, kind)
        if value is None and kind == "cache_write":
            return self.input
        return value

    @property
    def label(self) -> str:
        """``source (date)``: the summary's ``price_source``."""
        return f"{self.source} ({self.date})" if self.date else self.source


def _rate(value: Any, model: str, key: str, path: str) -> Decimal | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise PricesError(f"{path}: [{model}] {key} must be a number (USD per million tokens)")
    rate = Decimal(value)
    if rate < 0 or not rate.is_finite():
        raise PricesError(f"{path}: [{model}] {key} must be a number >= 0")
    return rate


def parse_prices(text: str, path: str) -> dict[str, Price]:
    """Parse a price file's text; ``path`` names it in errors and is the default ``source``.

    Raises:
        PricesError: not TOML, or a table or rate of the wrong shape.
    """
    try:
        doc = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as err:
        raise PricesError(f"{path}: not a TOML price table ({err})") from None
    out: dict[str, Price] = {}
    for model, table in doc.items():
        if not isinstance(table, dict):
            raise PricesError(f"{path}: {model!r} must be a table of rates, e.g. [\"{model}\"] input = 0.25")
        unknown = set(table) - {"input", "output", "cache_read", "cache_write", "source", "date", "context_window",
                                "context_source"}
        if unknown:
            raise PricesError(f"{path}: [{model}] has unknown keys: {', '.join(sorted(unknown))}")
        rates = {key: _rate(table.get(key), model, key, path) for key in ("input", "output", "cache_read", "cache_write")}
        source = table.get("source")
        date = table.get("date", "")
        window = table.get("context_window")
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window <= 0):
            raise PricesError(f"{path}: [{model}] context_window must be a whole number of tokens > 0")
        out[model] = Price(**rates, source=str(source) if source else path, date=str(date), context_window=window,
                           context_source=str(table.get("context_source") or (f"{source} ({date})" if source and date else
                                                                              source) or path)
                           if window is not None else "")
    return out


def read_prices(path: str) -> dict[str, Price]:
    """Read a price file.

    Raises:
        PricesError: unreadable or malformed (one line).
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as err:
        raise PricesError(f"cannot read price file {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise PricesError(f"{path}: not a UTF-8 text file") from None
    return parse_prices(text, path)


def default_prices() -> dict[str, Price]:
    """The shipped table (``cursor_watch/data/prices.toml``)."""
    text = resources.files("cursor_watch").joinpath("data/prices.toml").read_text(encoding="utf-8")
    return parse_prices(text, "cursor-watch default prices")


def user_prices_path() -> str:
    """``prices.toml`` in the user's config directory (``~/.config/cursor-watch`` on Linux)."""
    from platformdirs import user_config_dir

    return os.path.join(user_config_dir("cursor-watch"), "prices.toml")


class PriceTable:
    """Prices by model name: the defaults, then the user file, then ``--prices`` (later wins).

    Args:
        extra: a ``--prices FILE`` path, or None.
        user_file: read the user file when it exists (tests turn it off).

    Raises:
        PricesError: a given file is unreadable or malformed.
    """

    def __init__(self, extra: str | None = None, user_file: bool = True) -> None:
        self.prices = default_prices()
        self.files: list[str] = []
        paths = []
        if user_file:
            try:
                path = user_prices_path()
            except ImportError:  # platformdirs is a dependency; an odd install still estimates
                path = ""
            if path and os.path.isfile(path):
                paths.append(path)
        if extra:
            paths.append(extra)
        for path in paths:
            self.prices.update(read_prices(path))
            self.files.append(path)

    def get(self, model: str | None) -> Price | None:
        """The price of ``model`` as the stream names it (exact name, then ignoring case); None
        for an entry with no rate (a context window only)."""
        price = self.entry(model)
        return price if price is not None and price.has_rates else None

    def entry(self, model: str | None) -> Price | None:
        """The table's entry for ``model`` (exact name, then ignoring case), rates or not."""
        if not model:
            return None
        price = self.prices.get(model)
        if price is None:
            folded = model.casefold()
            price = next((p for name, p in self.prices.items() if name.casefold() == folded), None)
        return price


@functools.cache
def price_table() -> PriceTable:
    """The default table: the shipped prices and the user's ``prices.toml`` (read once; a run's
    own table, with ``--prices``, is its ``rules.prices``: :class:`~cursor_watch.core.rules.RunRules`)."""
    try:
        return PriceTable()
    except PricesError:  # a broken user file: the CLI reports it; views fall back to the defaults
        return PriceTable(user_file=False)


@dataclass(frozen=True)
class Cost:
    """A run's cost as far as it is known.

    Attributes:
        reported: USD the agent reported (``cost_usd``), or None.
        estimate: USD estimated from usage x rates (exact decimal), or None.
        source: the price's origin (``Price.label``) when estimated, else "".
        note: why there is no figure (``no price for model 'Auto'``...), else "".
    """

    reported: float | None = None
    estimate: Decimal | None = None
    source: str = ""
    note: str = ""

    @property
    def usd(self) -> float | None:
        """The reported cost, else the estimate, as a float (what budgets compare)."""
        if self.reported is not None:
            return self.reported
        return float(self.estimate) if self.estimate is not None else None


def usage_of(session: Any) -> Usage | None:
    """Token usage so far: the run's end's (the agent's figure for the run) once it has one,
    else the usage an adapter reports as the run goes (``session.usage``: Claude Code's
    messages, Codex's turns), else None (Cursor reports usage only at its end)."""
    result = getattr(session, "result", None)
    usage = getattr(result, "usage", None)
    if isinstance(usage, Usage):
        return usage
    usage = getattr(session, "usage", None)
    return usage if isinstance(usage, Usage) else None


live_usage_of = usage_of  # (budgets read the same figure while a run goes on)


def reported_cost(session: Any) -> float | None:
    """``cost_usd`` where the agent reports it (on the run's end)."""
    value = getattr(getattr(session, "result", None), "cost_usd", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def total_tokens(usage: Usage | None) -> int | None:
    """Every token once (:attr:`cursor_watch.core.canonical.Usage.total_tokens`: input, cached ones
    included, + output, + reasoning an agent counts apart): what ``--max-tokens`` counts; None
    when unknown."""
    return usage.total_tokens if usage is not None else None


def estimate(usage: Usage | None, model: str | None, table: PriceTable | None = None) -> Cost:
    """Usage x rates, each token priced once: ``Cost(estimate=..., source=...)`` or ``Cost(note=why not)``."""
    if usage is None or usage.input_tokens is None and usage.output_tokens is None:
        return Cost(note="no token usage in the stream")
    if not model:
        return Cost(note="the stream names no model, so no price applies")
    price = (table or price_table()).get(model)
    if price is None:
        if model.casefold() == "auto":
            return Cost(note="Auto has no fixed price (it routes to different models)")
        return Cost(note=f"no price for model {model!r}")
    output = usage.output_tokens or 0
    if usage.reasoning_tokens is not None and usage.reasoning_in_output is False:
        output += usage.reasoning_tokens  # (Gemini CLI's thinking: billed as output, not counted in it)
    total = Decimal(0)
    for tokens, kind in ((usage.uncached_input_tokens, "input"), (output, "output"),
                         (usage.cache_read_tokens, "cache_read"), (usage.cache_write_tokens, "cache_write")):
        if not tokens:
            continue
        rate = price.rate(kind)
        if rate is None:
            return Cost(note=f"no {kind.replace('_', ' ')} rate for model {model!r}")
        total += tokens * rate
    return Cost(estimate=total / MILLION, source=price.label)


def run_cost(session: Any, table: PriceTable | None = None) -> Cost:
    """The session's cost: reported when the agent gives one, else estimated (see module doc)
    from ``table``, else the run's own (``session.rules``)."""
    reported = reported_cost(session)
    if reported is not None:
        return Cost(reported=reported)
    return estimate(usage_of(session), getattr(session, "model", None), table or session.rules.price_table())


def cost_json(cost: Cost) -> dict:
    """The summary's cost keys (added to its ``result`` object)."""
    return {
        "cost_usd": cost.reported,
        "cost_usd_estimate": float(cost.estimate) if cost.estimate is not None else None,
        "price_source": cost.source or None,
        "cost_note": cost.note or None,
    }
