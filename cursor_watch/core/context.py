"""Context size and compaction: how full a run's context window is, and when the agent compacted it.

Where the size comes from, agent by agent (what the stream gives, never a guess):

* **Claude Code** gives per-call usage: each assistant message's ``usage`` is one model call, and
  ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` (canonical
  ``Usage.input_tokens``, :func:`cursor_watch.formats.claude.usage_of`) is the prompt that call
  sent: the context at that call. Several lines of one message repeat its id and figures: one
  call. A sub-agent's messages (``parent_tool_use_id``) run in a context of their own and are
  left out. A ``<synthetic>`` message (Claude Code's own, no model call) reports 0 tokens: no
  call. Compactions: ``system/compact_boundary`` with ``compact_metadata`` ``trigger``
  (``manual``/``auto``), ``pre_tokens``, ``post_tokens``, ``duration_ms`` (real captures:
  ``claude_compaction_2.1.285.jsonl``, manual, 51,305 -> 2,228; ``claude_autocompact_2.1.285.jsonl``,
  auto, 79,267 -> 15,092; in both ``pre_tokens`` is at least the last call's context, the answer
  and tool results since then added).
* **Codex** reports usage per turn (``turn.completed``: the thread's running total, summed over
  the turn's model calls), **Gemini CLI** per run (``result.stats``, summed over its calls),
  **Cursor** per run (``result.usage``, cumulative): none gives the context of one call, so the
  size is unknown and the views say so (:meth:`ContextTrack.why_unknown`).

The window is the model's ``context_window`` in the price table (:mod:`cursor_watch.core.costs`, each
entry with its source), else, for a Claude Code model name ending in ``[1m]``, 1,000,000 tokens
(Claude Code's model configuration: the suffix selects the 1M-token window).

The model (:class:`cursor_watch.core.model.Session`) feeds one :class:`ContextTrack` per run by two
small hooks (a usage update with a call, a compaction note); everything else here is read by
views: the header gauge (:func:`gauge_text`), the context screen, ``--summary --json``'s
``context`` (:func:`context_json`).
"""

from __future__ import annotations

from typing import Any

from .canonical import Usage, as_int

CLAUDE_1M_SUFFIX = "[1m]"
CLAUDE_1M_WINDOW = 1_000_000
CLAUDE_1M_SOURCE = ("https://docs.anthropic.com/en/docs/claude-code/model-config (Extended context with [1m]: the "
                    "suffix on a full model name selects the 1M-token context window)")
WARN_PERCENT = 60  # the gauge turns yellow at this share of the window, red at FULL_PERCENT
FULL_PERCENT = 85

_NO_CALL_USAGE = {
    "codex": "Codex reports usage per turn, summed over its model calls: no context size per call",
    "gemini-cli": "Gemini CLI reports usage per run, summed over its model calls: no context size per call",
    "cursor": "Cursor reports usage only for the whole run: no context size per call",
}


class Compaction:
    """One compaction of the context (Claude Code's ``compact_boundary``).

    Attributes:
        line: the stream line of the boundary; ts: its time (epoch ms) or None.
        trigger: ``manual`` (``/compact``), ``auto``, or "" when the stream does not say.
        pre_tokens, post_tokens: the context before and after, as the agent reports them (None:
            not given); duration_ms: how long it took (None: not given).
        calls_before: how many model calls of the run came before it (where it sits in the history).
    """

    __slots__ = ("line", "ts", "trigger", "pre_tokens", "post_tokens", "duration_ms", "calls_before")

    def __init__(self, line: int, ts: int | None, trigger: str, pre_tokens: int | None, post_tokens: int | None,
                 duration_ms: int | None, calls_before: int) -> None:
        self.line = line
        self.ts = ts
        self.trigger = trigger
        self.pre_tokens = pre_tokens
        self.post_tokens = post_tokens
        self.duration_ms = duration_ms
        self.calls_before = calls_before

    @property
    def dropped_tokens(self) -> int | None:
        """``pre_tokens - post_tokens`` (None when either is unknown)."""
        if self.pre_tokens is None or self.post_tokens is None:
            return None
        return self.pre_tokens - self.post_tokens

    def words(self) -> str:
        """``context compacted (manual): 51,305 → 2,228 tokens, 49,077 dropped, 21.9 s``."""
        head = "context compacted" + (f" ({self.trigger})" if self.trigger else "")
        bits = []
        if self.pre_tokens is not None or self.post_tokens is not None:
            pre = f"{self.pre_tokens:,}" if self.pre_tokens is not None else "?"
            post = f"{self.post_tokens:,}" if self.post_tokens is not None else "?"
            bits.append(f"{pre} → {post} tokens")
        if self.dropped_tokens is not None:
            bits.append(f"{self.dropped_tokens:,} dropped")
        if self.duration_ms is not None:
            bits.append(f"{self.duration_ms / 1000:.1f} s")
        return head + (": " + ", ".join(bits) if bits else "")

    def to_json(self) -> dict:
        """``{"line", "trigger", "pre_tokens", "post_tokens", "dropped_tokens", "duration_ms", "calls_before"}``."""
        return {"line": self.line, "trigger": self.trigger or None, "pre_tokens": self.pre_tokens,
                "post_tokens": self.post_tokens, "dropped_tokens": self.dropped_tokens,
                "duration_ms": self.duration_ms, "calls_before": self.calls_before}


class ContextTrack:
    """The context size at each model call of one run, and its compactions.

    Attributes:
        sizes: the context (prompt tokens, cached ones included) of each of the main agent's
            model calls, in stream order; lines: the stream line of each (the last line of
            its message); times: each call's time (epoch ms) or None.
        compactions: :class:`Compaction` list, in stream order.
    """

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.lines: list[int] = []
        self.times: list[int | None] = []
        self.compactions: list[Compaction] = []
        self._last_key = ""

    def add_call(self, key: str, usage: Usage, line: int, ts: int | None) -> None:
        """A model call's usage (the model's hook: a :class:`~cursor_watch.core.canonical.UsageUpdate`
        with ``call``). ``key`` is the call's id: the same id again (the next line of one
        message) replaces that call's figure. A call with no or 0 prompt tokens (Claude Code's
        ``<synthetic>`` messages) is no model call and is left out."""
        tokens = usage.input_tokens
        if not tokens:
            return
        if key and key == self._last_key and self.sizes:
            self.sizes[-1] = tokens
            self.lines[-1] = line
            self.times[-1] = ts
            return
        self._last_key = key
        self.sizes.append(tokens)
        self.lines.append(line)
        self.times.append(ts)

    def add_compaction(self, fields: dict | None, line: int, ts: int | None) -> Compaction:
        """A compaction (the model's hook: a ``compaction`` note), from the agent's fields
        (Claude Code's ``compact_metadata``); returns it."""
        meta = fields or {}
        trigger = meta.get("trigger")
        c = Compaction(line, ts, trigger if isinstance(trigger, str) else "", as_int(meta.get("pre_tokens")),
                       as_int(meta.get("post_tokens")), as_int(meta.get("duration_ms")), len(self.sizes))
        self.compactions.append(c)
        self._last_key = ""
        return c

    @property
    def per_call(self) -> bool:
        """The stream gave at least one model call's context size."""
        return bool(self.sizes)

    def current(self) -> int | None:
        """The context now: the last call's size, or the size after a compaction that came
        after it (the agent's ``post_tokens``); None when the stream gave neither."""
        last = self.compactions[-1] if self.compactions else None
        if last is not None and last.calls_before == len(self.sizes) and last.post_tokens is not None:
            return last.post_tokens
        return self.sizes[-1] if self.sizes else None

    def peak(self) -> int | None:
        """The largest context seen: a call's, or a compaction's ``pre_tokens``; None if none."""
        values = list(self.sizes) + [c.pre_tokens for c in self.compactions if c.pre_tokens is not None]
        return max(values) if values else None

    def history(self) -> list[int]:
        """The sizes in order with each compaction's before and after put where it happened
        (what the sparkline draws): a compaction shows as the drop it was."""
        out: list[int] = []
        at = 0
        for c in self.compactions:
            out.extend(self.sizes[at:c.calls_before])
            at = c.calls_before
            out.extend(v for v in (c.pre_tokens, c.post_tokens) if v is not None)
        out.extend(self.sizes[at:])
        return out

    def why_unknown(self, agent: str | None) -> str:
        """Why there is no context size ("" when there is one): the agent reports no per-call
        usage (Codex, Gemini CLI, Cursor: :data:`_NO_CALL_USAGE`), or no call has come yet."""
        if self.sizes or self.compactions:
            return ""
        if agent in _NO_CALL_USAGE:
            return _NO_CALL_USAGE[agent]
        return "the stream has given no model call's usage"


def window_of(model: str | None, table: Any = None) -> tuple[int, str] | None:
    """``(tokens, source)``: the context window of ``model`` as the stream names it, from the
    price table's ``context_window`` (:mod:`cursor_watch.core.costs`), else Claude Code's ``[1m]``
    suffix (:data:`CLAUDE_1M_WINDOW`); None when unknown (no figure is guessed)."""
    if not model:
        return None
    from .costs import price_table

    prices = table or price_table()  # (the run's own table is given: its rules.prices)
    price = prices.entry(model)
    if price is not None and price.context_window:
        return price.context_window, price.context_source
    if model.endswith(CLAUDE_1M_SUFFIX):
        return CLAUDE_1M_WINDOW, CLAUDE_1M_SOURCE
    return None


def short_tokens(n: int) -> str:
    """``950``, ``43.8k``, ``142k``, ``1.0M``: a token count in few cells."""
    if n < 1000:
        return str(n)
    if n < 99_950:
        return f"{n / 1000:.1f}k"
    if n < 999_500:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.1f}M"


def percent(tokens: int, window: int) -> int:
    """``tokens`` as a whole percentage of ``window`` (rounded; a full window is 100)."""
    return round(100 * tokens / window)


def level(pct: int | None) -> str:
    """``ok``, ``warn`` (from :data:`WARN_PERCENT`) or ``full`` (from :data:`FULL_PERCENT`); ``ok`` when unknown."""
    if pct is None or pct < WARN_PERCENT:
        return "ok"
    return "warn" if pct < FULL_PERCENT else "full"


def gauge_text(track: ContextTrack, model: str | None, table: Any = None) -> tuple[str, str, str] | None:
    """The header's gauge: ``(long, short, level)``, e.g. ``("ctx 142k/200k 71%", "ctx 71%",
    "warn")``; without a known window ``("ctx 43.8k", "ctx 43.8k", "ok")`` (no percentage);
    None when the run has no context size (the context screen says why)."""
    now = track.current()
    if now is None:
        return None
    window = window_of(model, table)
    if window is None:
        text = f"ctx {short_tokens(now)}"
        return text, text, "ok"
    pct = percent(now, window[0])
    return f"ctx {short_tokens(now)}/{short_tokens(window[0])} {pct}%", f"ctx {pct}%", level(pct)


def context_json(track: ContextTrack, model: str | None, agent: str | None, table: Any = None) -> dict:
    """``--summary --json``'s ``context``: ``{"per_call", "tokens", "peak_tokens", "window",
    "window_source", "percent", "calls", "sizes", "compactions", "note"}`` (tokens: the context
    now; sizes: each call's, in order; note: why there is no size, else null)."""
    window = window_of(model, table)
    now = track.current()
    return {
        "per_call": track.per_call,
        "tokens": now,
        "peak_tokens": track.peak(),
        "window": window[0] if window else None,
        "window_source": window[1] if window else None,
        "percent": percent(now, window[0]) if now is not None and window else None,
        "calls": len(track.sizes),
        "sizes": list(track.sizes),
        "compactions": [c.to_json() for c in track.compactions],
        "note": track.why_unknown(agent) or None,
    }
