"""Context size and compaction: the size at each model call where the stream
gives per-call usage (Claude Code), the window from the price table, the header gauge, the
context view, compaction markers; and saying so where the stream has no per-call usage."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from apphelpers import make_app, screen_text, text_of, wait_until
from conftest import ROOT
from cursor_watch.core.context import ContextTrack, gauge_text, level, window_of
from cursor_watch.core.costs import PricesError, PriceTable, estimate, parse_prices
from cursor_watch.core.canonical import Usage
from cursor_watch.stream.watch import Monitor
from cursor_watch.tui.screens.context import ContextScreen, sparkline
from cursor_watch.stream.sources import FileSource
from cursor_watch.views.summary import summary_json
from cursor_watch.tui.widgets.header import LiveState, SessionHeader, render_header

AGENTS = ROOT.parent / "shared" / "streams" / "agents"
CLAUDE = AGENTS / "claude"
COMPACTION = CLAUDE / "littlebearapps__untether__tests__fixtures__claude_compaction_2.1.285.jsonl"
AUTOCOMPACT = CLAUDE / "littlebearapps__untether__tests__fixtures__claude_autocompact_2.1.285.jsonl"
SWITCHBOARD = CLAUDE / "shane-kercheval__switchboard__crates__harness__tests__fixtures__claude__compaction-success.jsonl"
SUBAGENT = CLAUDE / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson"
COMPACT_EMPTY = CLAUDE / "littlebearapps__untether__tests__fixtures__claude_compact_empty_2.1.285.jsonl"
CODEX = AGENTS / "codex" / "shane-kercheval__switchboard__crates__harness__tests__fixtures__codex__file-change.jsonl"
GEMINI = AGENTS / "gemini" / "shane-kercheval__switchboard__crates__harness__tests__fixtures__gemini__tool-use.stream.jsonl"
CURSOR = ROOT.parent / "shared" / "streams" / "real" / "cagase__dsh-cursor__fixtures__live__stream-json-force.jsonl"
ALL = (COMPACTION, AUTOCOMPACT, SWITCHBOARD, SUBAGENT, COMPACT_EMPTY, CODEX, GEMINI, CURSOR)
needs_captures = pytest.mark.skipif(not all(p.exists() for p in ALL),
                                    reason=f"shared captures not found under {ROOT.parent / 'shared'}")


def runs_of(path: Path) -> list:
    mon = Monitor(clock=lambda: 1_000_000.0, live=False)
    mon.feed(path.read_bytes())
    mon.finish()
    return mon.runs


def reported_sizes(path: Path) -> list[list[int]]:
    """Per run (a new run at each ``system/init``), the context of each main-agent model call as
    the raw lines report it: ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``
    of each assistant message (one per message id; its last line's figure), 0-token messages
    (``<synthetic>``) left out; read with the json module, not the adapter."""
    runs: list[dict[str, int]] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(raw)
        if d.get("type") == "system" and d.get("subtype") == "init":
            runs.append({})
        if d.get("type") != "assistant" or d.get("parent_tool_use_id"):
            continue
        u = d["message"].get("usage") or {}
        size = u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0)
        if size:
            if not runs:
                runs.append({})
            runs[-1][d["message"]["id"]] = size
    return [list(r.values()) for r in runs]


@needs_captures
@pytest.mark.parametrize("path", [COMPACTION, AUTOCOMPACT, SUBAGENT, COMPACT_EMPTY], ids=lambda p: p.name[:40])
def test_context_sizes_match_the_usage_the_capture_reports(path: Path):
    runs = runs_of(path)
    expected = reported_sizes(path)
    assert len(runs) == len(expected)
    assert [r.session.context.sizes for r in runs] == expected
    assert any(expected) or path == COMPACT_EMPTY  # the synthetic 0-token message is no call
    if path == SUBAGENT:  # the sub-agent's own message (its context) is not the main agent's
        subs = [json.loads(x) for x in path.read_text().splitlines() if '"parent_tool_use_id":"toolu' in x]
        assert any(d.get("type") == "assistant" for d in subs)
        assert expected == [[49342, 49669, 49782]]


@needs_captures
def test_manual_compaction_marker_shows_the_tokens_before_and_after():
    runs = runs_of(COMPACTION)
    before = [r for r in runs if r.session.context.sizes]
    [run] = [r for r in runs if r.session.context.compactions]
    [c] = run.session.context.compactions
    assert (c.trigger, c.pre_tokens, c.post_tokens, c.duration_ms, c.line) == ("manual", 51305, 2228, 21942, 86)
    # the last call before it sent 51,252 tokens; the compaction counts its answer too
    last = [r for r in before if r.index < run.index][-1].session.context.sizes[-1]
    assert last == 51252 and last <= c.pre_tokens < last * 1.01
    [note] = [n for n in run.session.notes if n.kind == "compaction"]
    assert "manual" in note.text and "51,305 tokens before" in note.text and "2,228 after" in note.text
    ctx = summary_json(run.session)["context"]
    assert ctx["compactions"] == [{"line": 86, "trigger": "manual", "pre_tokens": 51305, "post_tokens": 2228,
                                   "dropped_tokens": 49077, "duration_ms": 21942, "calls_before": 0}]
    assert ctx["tokens"] == 2228 and ctx["peak_tokens"] == 51305


@needs_captures
def test_auto_compaction_in_a_turn_sits_between_its_calls():
    run = runs_of(AUTOCOMPACT)[2]
    track = run.session.context
    assert track.sizes == [65874, 42929]
    [c] = track.compactions
    assert (c.trigger, c.pre_tokens, c.post_tokens, c.calls_before) == ("auto", 79267, 15092, 1)
    assert c.pre_tokens >= track.sizes[0]  # the Read's result came between the call and the compaction
    assert track.history() == [65874, 79267, 15092, 42929]
    assert track.current() == 42929 and track.peak() == 79267
    assert "79,267 → 15,092 tokens, 64,175 dropped, 18.4 s" in c.words() and c.words().startswith(
        "context compacted (auto)")


@needs_captures
def test_switchboard_compaction_with_no_call_gives_the_size_after():
    [run] = runs_of(SWITCHBOARD)
    track = run.session.context
    assert track.sizes == [] and [(c.trigger, c.pre_tokens, c.post_tokens) for c in track.compactions] == [
        ("manual", 23423, 4172)]
    assert track.current() == 4172 and not track.why_unknown(run.session.agent)


@needs_captures
@pytest.mark.parametrize("path,words", [
    (CODEX, "Codex reports usage per turn, summed over its model calls: no context size per call"),
    (GEMINI, "Gemini CLI reports usage per run, summed over its model calls: no context size per call"),
    (CURSOR, "Cursor reports usage only for the whole run: no context size per call"),
], ids=["codex", "gemini", "cursor"])
def test_agents_without_per_call_usage_say_so_and_never_guess(path: Path, words: str):
    [run] = runs_of(path)
    s = run.session
    assert s.usage is not None or s.result is not None and s.result.usage is not None  # usage exists, summed
    ctx = summary_json(s)["context"]
    assert ctx["per_call"] is False and ctx["tokens"] is None and ctx["percent"] is None and ctx["sizes"] == []
    assert ctx["note"] == words
    assert gauge_text(s.context, s.model) is None
    header = render_header(s, LiveState(state="success"), 200)
    assert "ctx" not in header.renderables[1].plain


def test_window_from_the_price_table_with_its_source_and_the_1m_suffix():
    table = PriceTable(user_file=False)
    tokens, source = window_of("claude-haiku-4-5-20251001", table)
    assert tokens == 200_000 and "platform.claude.com" in source
    assert window_of("gemini-3-flash-preview", table)[0] == 1_048_576
    assert window_of("claude-opus-4-7[1m]", table)[0] == 1_000_000
    assert window_of("some-model-nobody-lists", table) is None and window_of(None, table) is None
    # an entry with a window and no rate prices nothing: the estimate still says there is no price
    assert estimate(Usage(100, 10), "claude-haiku-4-5-20251001", table).note == \
        "no price for model 'claude-haiku-4-5-20251001'"
    # every default entry with a window names its source
    assert all(p.context_source for p in table.prices.values() if p.context_window)


def test_price_file_context_window_is_checked():
    prices = parse_prices('["m"]\ncontext_window = 128000\ncontext_source = "vendor page"\ninput = 1\n', "f.toml")
    assert (prices["m"].context_window, prices["m"].context_source, prices["m"].input) == (128000, "vendor page",
                                                                                          Decimal(1))
    assert parse_prices('["m"]\ncontext_window = 5\n', "f.toml")["m"].context_source == "f.toml"
    for bad in ("0", "-3", "1.5", '"200k"', "true"):
        with pytest.raises(PricesError, match="context_window must be a whole number"):
            parse_prices(f'["m"]\ncontext_window = {bad}\n', "f.toml")


def test_gauge_levels_and_repeated_message_lines():
    track = ContextTrack()
    assert gauge_text(track, "claude-haiku-4-5-20251001") is None
    track.add_call("msg1", Usage(1000, 5), 2, None)
    track.add_call("msg1", Usage(1500, 9), 3, None)  # the same message's next line: one call
    assert track.sizes == [1500] and track.lines == [3]
    track.add_call("msg2", Usage(142_000, 1), 5, None)
    assert gauge_text(track, "claude-haiku-4-5-20251001") == ("ctx 142k/200k 71%", "ctx 71%", "warn")
    track.add_call("msg3", Usage(180_000, 1), 7, None)
    assert gauge_text(track, "claude-haiku-4-5-20251001")[2] == "full"
    assert gauge_text(track, "unlisted-model") == ("ctx 180k", "ctx 180k", "ok")  # no window: no percentage
    track.add_call("synthetic", Usage(0, 0), 9, None)
    assert len(track.sizes) == 3
    assert (level(None), level(59), level(60), level(84), level(85)) == ("ok", "ok", "warn", "warn", "full")


def test_sparkline_is_scaled_to_the_window_not_to_its_smallest_value():
    # two calls at 25 % and 50 % of the window: a quarter and a half of 4 rows, not empty and full
    lines = sparkline([25, 50], 100, 2, rows=4).plain.split("\n")
    assert lines == ["  ", "  ", " █", "██"]
    assert sparkline([100], 100, 1, rows=2).plain.split("\n") == ["█", "█"]
    assert sparkline([1], 100, 1, rows=2).plain.split("\n") == [" ", "▁"]  # a call is never drawn as nothing
    wide = sparkline(list(range(1, 101)), 100, 10, rows=1).plain
    assert len(wide) == 10 and wide[-1] == "█"  # 100 values in 10 cells: each the largest of its share


@needs_captures
async def test_header_gauge_and_context_view_on_a_claude_compaction(tmp_path):
    one = tmp_path / "autocompact-run3.jsonl"  # the capture's third run alone (lines 18-30)
    one.write_text("".join(AUTOCOMPACT.read_text(encoding="utf-8").splitlines(keepends=True)[17:30]))
    app = make_app(FileSource(str(one)))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        view = app.run_view()
        # at 160 columns the long usage form leaves room for the gauge's short form; with room, the whole
        await wait_until(pilot, lambda: "· ctx 21% ·" in text_of(view.query_one(SessionHeader)),
                         what="the header's context gauge")
        assert "· ctx 42.9k/200k 21% ·" in render_header(view.session, LiveState(state="success")).renderables[1].plain
        assert "━━ context compacted (auto, 79,267 tokens before, 15,092 after) ━━" in screen_text(view)
        await pilot.press("w")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen))
        text = screen_text(app.screen)
        assert "now 42,929 tokens of 200,000 · peak 79,267 · 2 model calls · 1 compaction" in text
        assert "platform.claude.com/docs/en/models/haiku-4-5/overview" in text
        assert "━━ context compacted (auto): 79,267 → 15,092 tokens" in text
        assert "65,874" in text and "42,929" in text and "+27,837" in text  # the change since the compaction
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ContextScreen))


@needs_captures
async def test_context_view_on_a_cursor_run_says_why_there_is_no_size():
    app = make_app(FileSource(str(CURSOR)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        view = app.run_view()
        assert "ctx" not in text_of(view.query_one(SessionHeader))
        await pilot.press("w")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen))
        text = screen_text(app.screen)
        assert "Context size unknown: Cursor reports usage only for the whole run: no context size per call." in text
