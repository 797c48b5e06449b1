"""--plain, run as the command: what the line printer says of a run. No time that was never
recorded (a run's span without a result is the span of its events), a long reason cut saying where
it is whole; and where the same words are due the --summary table and the exports say them too."""

from __future__ import annotations

from captures import _untimed_sample, with_long_reason
from command import cw
from conftest import ROOT


# -- times: none invented ----------------------------------------------------------------------------


def test_a_run_without_times_says_so_outside_the_tui(tmp_path):
    """--plain, --summary, the Markdown and the HTML export say "no times recorded" where the
    run's duration would be and "—" for each call's, as the TUI's header and tool table do."""
    f = tmp_path / "untimed.jsonl"
    f.write_bytes(_untimed_sample())
    plain = cw("--plain", "--export", str(tmp_path / "run.md"), str(f)).stdout.decode().splitlines()
    outcome = plain[-1]
    assert outcome.startswith("■ success  6 tool calls (5 success, 1 failed) · no times recorded · tokens "), outcome
    ends = [line for line in plain if line[:1] in "✔✖"]
    assert len(ends) == 6 and all(line.endswith("  —") for line in ends), ends
    summary = cw("--summary", "--export", str(tmp_path / "run.html"), str(f)).stdout.decode().splitlines()
    assert "· no times recorded ·" in next(line for line in summary if line.startswith("■ "))
    rows = [line for line in summary if line.split()[:1] in (["1"], ["2"], ["3"], ["4"], ["5"], ["6"])]
    assert len(rows) == 6 and all(row.rstrip().endswith("—") for row in rows), rows
    md = (tmp_path / "run.md").read_text()
    assert "| **duration** | `no times recorded` |" in md
    assert md.count(" | — |\n") == 6  # the call table's duration cells
    html = (tmp_path / "run.html").read_text()
    assert "<dt>duration</dt><dd>no times recorded</dd>" in html
    assert html.count('<td class="num">—</td>') == 6


def test_a_run_without_a_result_shows_its_recorded_span_outside_the_tui():
    """The run's duration without a ``result``: the span of its events' times, as the TUI's
    header shows it (--plain and --summary printed none)."""
    f = ROOT / "sample_streams" / "failed-no-result.jsonl"
    plain = cw("--plain", str(f)).stdout.decode().splitlines()
    assert plain[-1] == "■ incomplete  1 tool call (1 incomplete) · 28.3 s · 1 invalid line"
    assert plain[-3] == "… [1] shell  alembic upgrade head  incomplete  —"  # never completed: unknown
    assert "■ incomplete  1 tool call (1 incomplete) · 28.3 s · 1 invalid line" in cw("--summary", str(f)).stdout.decode()


# -- a long reason cut, saying where it is whole ---------------------------------------------------

def test_plain_and_summary_cut_a_long_reason_and_say_where_it_is(tmp_path):
    path = with_long_reason(tmp_path)
    for mode in ("--plain", "--summary"):
        out = " ".join(cw(mode, str(path)).stdout.decode().split())  # (the summary's table wraps)
        assert "wait for their answer" not in out, mode  # cut...
        assert "The user rejected this command." in out, mode
        assert "more chars: --summary --json]" in out, mode  # ...saying where the whole text is
