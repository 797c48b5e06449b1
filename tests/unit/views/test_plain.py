"""--plain, run as the command: what the line printer says of a run. No time that was never
recorded (a run's span without a result is the span of its events), a long reason cut saying where
it is whole, a file that is not stream-json said once (its first lines shown, the rest counted); and
where the same words are due the --summary table and the exports say them too."""

from __future__ import annotations

import orjson

from captures import _untimed_sample, with_long_reason
from command import cw
from conftest import ROOT
from streamlines import line, rows


# -- times: none invented --------------------------------------------------------------------------


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


# -- a file that is not stream-json says so once ---------------------------------------------------


def test_json_objects_of_no_agent_are_said_once_not_a_line_each(tmp_path):
    """17 JSON objects without a "type": one note says what they look like, the end note counts
    them (was 17 '? line N: unknown event /' lines and 'last event  on line 17')."""
    f = tmp_path / "rows.jsonl"
    f.write_bytes(rows(17))
    plain = cw(["--plain", str(f)]).stdout.decode().splitlines()
    assert plain == [
        '· not a stream cursor-watch reads: JSON objects without a "type" (keys id, name, score), not Cursor\'s, '
        "Claude Code's, Codex's or Gemini CLI's events; each line is counted as an unknown event "
        "(--summary --json lists them)",
        "· no agent events: 17 JSON objects (lines 1-17) in a format cursor-watch does not read "
        "(the first: no type, keys id, name, score)",
        "■ incomplete  0 tool calls · no times recorded · 17 unknown events"]
    summary = cw(["--summary", str(f)]).stdout.decode()
    assert "· no agent events: 17 JSON objects (lines 1-17)" in summary and "last event" not in summary
    s = orjson.loads(cw(["--summary", "--json", str(f)]).stdout)  # scripts still get every line
    assert [u["line"] for u in s["unknown_events"]] == list(range(1, 18)) and s["counts"]["unknown_events"] == 17
    md = tmp_path / "rows.md"
    cw(["--summary", "--export", str(md), str(f)])
    assert md.read_text().count("JSON objects (lines 1-17) in a format cursor-watch does not read") == 2
    assert "unknown event" not in md.read_text().split("### Diagnostics")[1]


def test_an_object_without_a_type_in_an_agents_stream_is_named_so(tmp_path):
    """In a Cursor stream, an object without a "type" is 'unknown event (no type)', and the end
    note says 'last event (no type) on line N' (was 'unknown event /', 'last event  on line N')."""
    f = tmp_path / "run.jsonl"
    f.write_bytes(line(type="system", subtype="init", session_id="s", model="m", cwd="/w", apiKeySource="login",
                       permissionMode="default") + line(odd=1))
    out = cw(["--plain", str(f)]).stdout.decode()
    assert "? line 2: unknown event (no type)\n" in out
    assert "last event (no type) on line 2" in out and "unknown event /" not in out


def test_a_text_file_shows_its_first_lines_then_says_how_many_more(tmp_path):
    """A file of text (this README): three lines shown one by one, then one line says how many
    more (was a '! line N' line for each of its hundreds of lines), then the end note."""
    f = tmp_path / "notes.txt"
    f.write_bytes(b"".join(b"text line %d\n" % n for n in range(1, 41)))
    plain = cw(["--plain", str(f)]).stdout.decode().splitlines()
    assert plain == ["! line 1: not JSON (text line): text line 1", "! line 2: not JSON (text line): text line 2",
                     "! line 3: not JSON (text line): text line 3",
                     "! … 37 more lines not stream-json (lines 4-40), not shown: --summary --json lists them",
                     '· no events: 40 lines, none of them stream-json; the first: "text line 1"',
                     "■ incomplete  0 tool calls · 40 invalid lines"]
    summary = cw(["--summary", str(f)]).stdout.decode()
    assert summary.count("! line ") == 3 and "! … 37 more diagnostics (see --summary --json)" in summary
    assert len(orjson.loads(cw(["--summary", "--json", str(f)]).stdout)["diagnostics"]) == 40


def test_lines_before_the_first_event_are_counted_then_the_run_is_shown(tmp_path):
    """A wrapper's banner before the stream: three lines shown, the rest counted in one line
    before the run's first line; lines after an event are each shown, as always."""
    f = tmp_path / "run.jsonl"
    f.write_bytes(b"".join(b"banner %d\n" % n for n in range(1, 6))
                  + line(type="system", subtype="init", session_id="s", model="m", cwd="/w", apiKeySource="login",
                         permissionMode="default")
                  + b"late 1\nlate 2\nlate 3\nlate 4\n")
    plain = cw(["--plain", str(f)]).stdout.decode().splitlines()
    assert plain[:4] == ["! line 1: not JSON (text line): banner 1", "! line 2: not JSON (text line): banner 2",
                         "! line 3: not JSON (text line): banner 3",
                         "! … 2 more lines not stream-json (lines 4-5), not shown: --summary --json lists them"]
    assert plain[4].startswith("cursor-agent m")
    assert [x for x in plain if x.startswith("! line ")][3:] == [f"! line {n}: not JSON (text line): late {n - 6}"
                                                                 for n in range(7, 11)]
