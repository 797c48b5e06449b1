"""Costs: the price table (defaults, user file, --prices), exact estimates, unknown models."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal
from types import SimpleNamespace

import orjson
import pytest

from conftest import ROOT, SAMPLES
from cursor_watch.core import costs
from cursor_watch.core.canonical import Usage
from cursor_watch.core.costs import PriceTable, PricesError, estimate, parse_prices, read_prices, run_cost
from cursor_watch.fmt import cost_label, usd
from cursor_watch.stream.watch import Monitor

CMD = [sys.executable, "-m", "cursor_watch"]


def env(tmp_path):
    # a config directory of our own: the user's prices.toml never leaks into a test
    return {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def stream(model: str, usage: dict | None) -> bytes:
    lines = [{"type": "system", "subtype": "init", "session_id": "s", "model": model, "cwd": "/w"},
             {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "go"}]}, "session_id": "s"}]
    result = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1000, "result": "", "session_id": "s"}
    if usage is not None:
        result["usage"] = usage
    lines.append(result)
    return b"".join(orjson.dumps(x) + b"\n" for x in lines)


def session_of(data: bytes):
    m = Monitor()
    m.feed(data)
    m.finish()
    return m.session


USAGE = {"inputTokens": 21994, "outputTokens": 261, "cacheReadTokens": 22528, "cacheWriteTokens": 1234}


def test_default_prices_carry_a_source_and_a_date():
    table = costs.default_prices()
    assert {"GPT-5 Mini", "Composer 2.5", "Claude Sonnet 4.6 200K Medium No Thinking"} <= set(table)
    for name, price in table.items():
        assert price.source.startswith("https://"), name
        assert len(price.date) == 10 and price.date[4] == "-", name
    assert "Auto" not in table  # no fixed price


def test_estimate_is_usage_times_the_rates_of_a_prices_file_exactly(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('["Mine 1"]\ninput = 1.1\noutput = 7.3\ncache_read = 0.11\ncache_write = 1.375\n'
                    'source = "our contract"\ndate = "2026-11-01"\n')
    table = PriceTable(str(path), user_file=False)
    s = session_of(stream("Mine 1", USAGE))
    cost = run_cost(s, table)
    want = (21994 * Decimal("1.1") + 261 * Decimal("7.3") + 22528 * Decimal("0.11") + 1234 * Decimal("1.375")) / 1_000_000
    assert cost.estimate == want and cost.reported is None
    assert cost.source == "our contract (2026-11-01)"
    assert cost_label(None, cost.estimate) == f"≈ {usd(want)} est."


def test_a_missing_cache_write_rate_is_the_input_rate_and_another_missing_rate_is_unknown(tmp_path):
    table = PriceTable(None, user_file=False)
    table.prices.update(parse_prices('["A"]\ninput = 2\noutput = 4\ncache_read = 0.5\n["B"]\ninput = 2\noutput = 4\n', "t"))
    # (canonical usage: the input counts the cache write, 10 uncached + 100 written)
    usage = Usage(input_tokens=110, output_tokens=1, cache_read_tokens=0, cache_write_tokens=100)
    assert estimate(usage, "A", table).estimate == Decimal(10 * 2 + 4 + 100 * 2) / 1_000_000
    assert estimate(usage, "B", table).estimate == Decimal(10 * 2 + 4 + 100 * 2) / 1_000_000  # no cache read used
    used = Usage(input_tokens=115, output_tokens=1, cache_read_tokens=5, cache_write_tokens=100)
    cost = estimate(used, "B", table)
    assert cost.estimate is None and "cache read" in cost.note


def test_an_unknown_model_gives_no_figure_and_a_note():
    table = PriceTable(None, user_file=False)
    s = session_of(stream("Grok 4.7 256K Extra High", USAGE))
    cost = run_cost(s, table)
    assert cost.estimate is None and cost.usd is None and "Grok 4.7 256K Extra High" in cost.note
    auto = run_cost(session_of(stream("Auto", USAGE)), table)
    assert auto.estimate is None and "Auto has no fixed price" in auto.note
    assert run_cost(session_of(stream("GPT-5 Mini", None)), table).note == "no token usage in the stream"


def test_a_reported_cost_wins_over_the_estimate():
    real = session_of(stream("GPT-5 Mini", USAGE))
    # an agent that reports its cost (Claude Code's total_cost_usd) puts it on the result
    s = SimpleNamespace(model=real.model, result=SimpleNamespace(usage=real.result.usage, cost_usd=0.5))
    assert run_cost(real, PriceTable(None, user_file=False)).estimate is not None
    cost = run_cost(s, PriceTable(None, user_file=False))
    assert cost.reported == 0.5 and cost.estimate is None and cost_label(cost.reported, None) == "$0.50"


@pytest.mark.parametrize("text, words", [
    ("[x\n", "not a TOML"), ('["M"]\ninput = "cheap"\n', "must be a number"), ('["M"]\ninput = -1\n', ">= 0"),
    ('M = 3\n', "must be a table"), ('["M"]\ninptu = 1\n', "unknown keys: inptu"),
])
def test_a_bad_prices_file_is_one_clear_error(tmp_path, text, words):
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(PricesError, match=words):
        read_prices(str(path))
    p = subprocess.run(CMD + ["--prices", str(path), "--summary", str(SAMPLES / "plain-tools.jsonl")],
                       capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert p.returncode == 2 and p.stderr.decode().count("\n") == 1 and "Traceback" not in p.stderr.decode()


def test_the_user_file_and_prices_option_override_the_defaults_model_by_model(tmp_path):
    config = tmp_path / "config" / "cursor-watch"
    config.mkdir(parents=True)
    (config / "prices.toml").write_text('["Composer 2.5"]\ninput = 10\noutput = 10\ncache_read = 10\n')
    extra = tmp_path / "extra.toml"
    extra.write_text('["GPT-5 Mini"]\ninput = 1\noutput = 1\ncache_read = 1\n')
    log = tmp_path / "a.jsonl"
    log.write_bytes(stream("Composer 2.5", USAGE) + stream("GPT-5 Mini", USAGE).replace(b'"s"', b'"t"'))
    p = subprocess.run(CMD + ["--summary", "--json", "--prices", str(extra), str(log)], capture_output=True,
                       env=env(tmp_path), cwd=ROOT, timeout=60)
    runs = [orjson.loads(line) for line in p.stdout.splitlines()]
    tokens = 21994 + 261 + 22528 + 1234
    assert runs[0]["result"]["cost_usd_estimate"] == pytest.approx(tokens * 10 / 1e6)
    assert runs[0]["result"]["price_source"] == str(config / "prices.toml")
    assert runs[1]["result"]["cost_usd_estimate"] == pytest.approx(tokens / 1e6)
    assert runs[1]["result"]["price_source"] == str(extra)


def test_the_end_line_and_summary_label_an_estimate(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_bytes(stream("GPT-5 Mini", USAGE))
    e = env(tmp_path)
    plain = subprocess.run(CMD + ["--plain", str(log)], capture_output=True, env=e, cwd=ROOT, timeout=60).stdout.decode()
    want = (21994 * Decimal("0.25") + 261 * Decimal("2.0") + 22528 * Decimal("0.025")) / 1_000_000
    assert plain.rstrip().splitlines()[-1].endswith(f"≈ {usd(want)} est.")
    out = orjson.loads(subprocess.run(CMD + ["--summary", "--json", str(log)], capture_output=True, env=e, cwd=ROOT,
                                      timeout=60).stdout)
    assert out["result"]["cost_usd_estimate"] == float(want) and "openai.com" in out["result"]["price_source"]
    log.write_bytes(stream("Auto", USAGE))
    plain = subprocess.run(CMD + ["--plain", str(log)], capture_output=True, env=e, cwd=ROOT, timeout=60).stdout.decode()
    assert plain.rstrip().splitlines()[-1].endswith("cost unknown: Auto has no fixed price")


def test_prices_path_prints_the_user_file_the_shipped_table_names(tmp_path):
    p = subprocess.run(CMD + ["prices"], capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert p.returncode == 0 and p.stderr == b""
    path = p.stdout.decode().strip()
    assert path == str(tmp_path / "config" / "cursor-watch" / "prices.toml")  # platformdirs, XDG_CONFIG_HOME on Linux
    shipped = (ROOT / "cursor_watch" / "data" / "prices.toml").read_text()
    assert "`cursor-watch --prices-path` prints it" in shipped  # the option the shipped table points to
    # the file it prints is the one read: a price there changes the estimate
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write('["GPT-5 Mini"]\ninput = 1\noutput = 1\ncache_read = 1\ncache_write = 1\n')
    log = tmp_path / "a.jsonl"
    log.write_bytes(stream("GPT-5 Mini", USAGE))
    out = orjson.loads(subprocess.run(CMD + ["--summary", "--json", str(log)], capture_output=True, env=env(tmp_path),
                                      cwd=ROOT, timeout=60).stdout)
    assert out["result"]["price_source"] == path
    assert out["result"]["cost_usd_estimate"] == pytest.approx((21994 + 261 + 22528 + 1234) / 1e6)


@pytest.mark.parametrize("ext", ["md", "html"])
def test_the_cost_estimate_is_in_the_markdown_and_html_exports(tmp_path, ext):
    log = tmp_path / "a.jsonl"
    log.write_bytes(stream("GPT-5 Mini", USAGE))
    out = tmp_path / f"run.{ext}"
    p = subprocess.run(CMD + ["--summary", "--export", str(out), str(log)], capture_output=True, env=env(tmp_path),
                       cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr
    want = (21994 * Decimal("0.25") + 261 * Decimal("2.0") + 22528 * Decimal("0.025") + 1234 * Decimal("0.0")) / 1_000_000
    doc = out.read_text()
    assert f"≈ {usd(want)} est." in doc.replace("&#160;", " ").replace("\u00a0", " ")
    log.write_bytes(stream("Auto", USAGE))
    subprocess.run(CMD + ["--summary", "--export", str(out), str(log)], capture_output=True, env=env(tmp_path),
                   cwd=ROOT, timeout=60)
    assert "Auto has no fixed price" in out.read_text()
