"""Secrets out of what is shared: exports, ``--serve``, ``--otlp-content``.

A hostile stream of known fake secrets (tests/fixtures/fake_secrets.py) goes through every outlet that
shares a run: ``--export`` in HTML, Markdown, JSON and OTLP JSON (in-process and from the
command line), the TUI's ``e`` export, the served view (the app as ``--serve`` runs it for a
browser tab: every screen, the detail of every call with its raw JSON, the diagnostics, the
search) and the spans ``--otlp-content`` sends to a real OTLP receiver. None holds any secret,
or any 12-character piece of one. The user's own outlets (the TUI on their terminal,
``--save``, ``--plain``) and ``--no-redact`` keep every secret. Ordinary content (paths,
commit ids, UUIDs, call_ids, code that names a secret without holding one, and every real
capture) is kept as it is.

The browser end of ``--serve`` (the real server, Chromium) is in test_browser.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from apphelpers import make_app, screen_text, search_status, wait_until
from conftest import ROOT, SAMPLES, real_captures
from fake_secrets import (ANTHROPIC, AWS_KEY_ID, BEARER, DB_PASSWORD, GITHUB_CLASSIC, GITHUB_FINE, HUGGING_FACE, JWT,
                          MCP_API_KEY, MCP_PASSWORD, NPM, OPENAI, PRIVATE_KEY, SECRETS, STRIPE, URL_PASSWORD, leaks,
                          secret_stream)

from cursor_watch.views.export import export_run_to, export_runs
from cursor_watch.outlets.redact import REDACTED, Redactor, default_redactor

from replays import watch_runs

SIZE = (160, 48)
FORMATS = ("html", "md", "json", "otlp.json")
CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@pytest.fixture(scope="module")
def stream_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("secrets") / "secrets.jsonl"
    path.write_bytes(secret_stream())
    return path


def test_the_hostile_stream_holds_every_secret_where_a_view_shows_it(stream_path):
    """The fixture itself: the model rebuilt every place a secret is (or the tests below
    would pass on a stream that shows nothing)."""
    (run,) = watch_runs(stream_path)
    s = run.session
    assert GITHUB_CLASSIC in s.prompt and ANTHROPIC in s.assistant_text and STRIPE in s.thinking_text
    statuses = {c.call_id: c.status for c in s.tool_calls.values()}
    assert statuses == {"call-env": "success", "call-deploy": "success", "call-key": "success",
                        "call-edit": "success", "call-push": "failure", "call-npm": "rejected", "mcp-1": "success",
                        "call-fetch": "success"}
    assert HUGGING_FACE in s.tool_calls["call-npm"].detail and URL_PASSWORD in s.tool_calls["call-push"].detail
    assert GITHUB_FINE in s.tool_calls["call-deploy"].summary and s.status == "error"
    assert any(GITHUB_CLASSIC in d.message for d in s.diagnostics)


# -- the detector --------------------------------------------------------------------------

@pytest.mark.parametrize("text, secret, kind", [
    (f"AWS_ACCESS_KEY_ID={AWS_KEY_ID}", AWS_KEY_ID, "AWS Access Key"),
    (f"push with {GITHUB_CLASSIC} please", GITHUB_CLASSIC, "GitHub Token"),
    (f"export GITHUB_TOKEN={GITHUB_FINE}", GITHUB_FINE, "GitHub Token"),
    (f"key: {STRIPE}", STRIPE, "Stripe Access Key"),
    (f'OPENAI_API_KEY = "{OPENAI}"', OPENAI, "OpenAI Token"),
    (f"the key {ANTHROPIC} works", ANTHROPIC, "Anthropic API Key"),
    (f"jwt {JWT}", JWT, "JSON Web Token"),
    (f"DB_PASSWORD={DB_PASSWORD}", DB_PASSWORD, "Secret Keyword"),
    (f'curl -H "Authorization: Bearer {BEARER}" https://x', BEARER, "Authorization Credentials"),
    (f"git clone https://deploy:{URL_PASSWORD}@git.example.com/x.git", URL_PASSWORD, "Basic Auth Credentials"),
    (f"npm config set //registry.npmjs.org/:_authToken={NPM}", NPM, "NPM tokens"),
    (f"token {HUGGING_FACE}", HUGGING_FACE, "Hugging Face Token"),
    (PRIVATE_KEY, PRIVATE_KEY.strip(), "Private Key"),
    (json.dumps({"k": PRIVATE_KEY})[8:-2], json.dumps(PRIVATE_KEY)[1:-3], "Private Key"),  # newlines as \n
])
def test_each_kind_of_secret_is_replaced_with_its_kind(text, secret, kind):
    out = default_redactor().text(text)
    assert secret not in out and leaks(out) == []
    assert REDACTED.format(kind) in out, out
    assert out.replace(REDACTED.format(kind), secret, 1) == text or kind == "Private Key"


def test_a_value_under_a_secret_sounding_key_is_hidden_whole_and_a_status_line_is_scanned():
    r = Redactor()
    assert r.value({"user": "deploy", "password": MCP_PASSWORD, "api_key": MCP_API_KEY}) == {
        "user": "deploy", "password": "[redacted: Secret Keyword]", "api_key": "[redacted: Secret Keyword]"}
    assert r.value({"password": None, "token_type": "bearer", "api_key": "${API_KEY}"}) == {
        "password": None, "token_type": "bearer", "api_key": "${API_KEY}"}
    # a label whose values are never hidden whole (an id, a status) is still scanned: a
    # rejection's reason is on the status line
    status = f"rejected: not {HUGGING_FACE}"
    assert r.pairs([("status", status), ("call_id", "call-1")]) == [
        ("status", "rejected: not [redacted: Hugging Face Token]"), ("call_id", "call-1")]
    assert r.text(status) == "rejected: not [redacted: Hugging Face Token]"  # not cached as clean


def test_a_value_seen_before_in_another_place_is_still_hidden_under_a_secret_key():
    """A password that was shown before where nothing named it (so cached as holding no
    secret) is still hidden whole under "password": the cache never stands for the check."""
    r = Redactor()
    seen = "".join(list(MCP_PASSWORD))  # an equal string, another object (as from another line's JSON)
    assert r.text(seen) is seen
    assert r.value({"password": "".join(list(MCP_PASSWORD))}) == {"password": "[redacted: Secret Keyword]"}
    assert r.field("api_key", "".join(list(MCP_API_KEY))) == "[redacted: Secret Keyword]"


ORDINARY = [
    "/Users/dev/.cursor/projects/shop/agent-transcripts/1b0e6a0e-7e9f-4c55-9a3e-1e0e3b4c5d6f.jsonl",
    "/private/var/folders/x3/bq9yxrhs4j99c5vz7qwq9m1w0000gn/T/tool-output-3f9a2c.txt",
    "commit 0d1928a3f783a5d62473d0d1928a0d1928aabcd4 (HEAD -> main)",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "session 7d1c9a52-3e4b-4f60-8a71-2b9c0d1e5f34 resumed",
    "call-80b7ca88-cf79-4a86-bbdc-0705e1f22c57-0\nfc_5a828346-a5f1-95be-9ca1-966d3b493ab8_0",
    "toolu_01XyZ9AbCdEfGhIjKlMnOpQr",
    "call_id = 'call_Fq2u8Hk3LmN0pQrStUvWxYz1'",
    "client = Client(api_key=api_key)",
    "secret = settings.SECRET_KEY",
    "def login(password: str, token: str | None = None) -> bool:",
    "password = None",
    'headers = {"Authorization": f"Bearer {token}"}',
    "API_KEY=${API_KEY}",
    "password: required",
    '"apiKeySource": "login"',
    "https://github.com/yelp/detect-secrets/blob/master/README.md",
    "The tests pass: 118 passed, 2 skipped in 41.3s. See docs/usage.md#tokens.",
    "npm install --save-dev @types/node@20.11.5",
    "data:image/png;base64 is not used here",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_content_is_kept(text):
    assert default_redactor().text(text) == text


def test_no_real_capture_has_anything_redacted():
    """Every string of every line of the shared real captures (all four agents) and of the
    samples is kept: none holds a secret, so anything redacted would be a false alarm."""
    paths = real_captures() + sorted(SAMPLES.glob("*.jsonl"))
    agents = ROOT.parent / "shared" / "streams" / "agents"
    if agents.is_dir():
        paths += sorted(p for p in agents.glob("*/*") if p.suffix in (".jsonl", ".ndjson"))
    assert len(paths) > 20
    r = Redactor()
    changed = []
    for path in paths:
        for line in path.read_bytes().splitlines():
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                obj = line.decode("utf-8", "replace")
            if r.value(obj) != obj:
                changed.append((path.name, line[:200]))
    assert changed == []


def test_text_never_raises_and_a_text_that_cannot_be_scanned_is_hidden(monkeypatch):
    r = Redactor()
    assert r.text(None) == "" and r.text(12345678) == "12345678"

    def broken(text):
        raise RecursionError("a rule failed")

    monkeypatch.setattr(r, "spans", broken)
    assert r.text(f"token={GITHUB_CLASSIC}") == "[redacted: unscanned text]"


# -- exports -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def runs(stream_path):
    return watch_runs(stream_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_format_holds_no_secret(fmt, runs, tmp_path, monkeypatch):
    monkeypatch.setenv(CONTENT_ENV, "true")  # OTLP JSON with content: the prompt, texts, arguments, results
    out = tmp_path / f"run.{fmt}"
    export_runs(str(out), runs)
    text = out.read_text()
    assert leaks(text) == []
    assert "[redacted: " in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_redact_exports_keep_every_secret(fmt, runs, tmp_path, monkeypatch):
    monkeypatch.setenv(CONTENT_ENV, "true")
    out = tmp_path / f"run.{fmt}"
    export_runs(str(out), runs, redact=False)
    text = out.read_text()
    assert "[redacted: " not in text
    if fmt == "json":  # the summary holds the texts, notes and call summaries, not the payloads
        assert leaks(text) == leaks(subprocess.run(CW + ["--summary", "--json", str(runs[0].source)],
                                                   capture_output=True, env=ENV, timeout=60).stdout)
        assert {GITHUB_CLASSIC, ANTHROPIC, STRIPE, HUGGING_FACE, GITHUB_FINE} <= set(leaks(text))
    else:
        assert leaks(text) == list(SECRETS)


CW = [sys.executable, "-m", "cursor_watch"]
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}, "CURSOR_WATCH_NO_TUI": "1",
       "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_export_option_redacts_and_no_redact_keeps(fmt, stream_path, tmp_path):
    out, kept = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}"
    p = subprocess.run(CW + ["--summary", "--otlp-content", "--export", str(out), str(stream_path)],
                       capture_output=True, cwd=ROOT, env=ENV, timeout=120)
    assert p.returncode == 1 and p.stderr == b"", p.stderr  # the run's result is an error
    q = subprocess.run(CW + ["--summary", "--otlp-content", "--no-redact", "--export", str(kept), str(stream_path)],
                       capture_output=True, cwd=ROOT, env=ENV, timeout=120)
    assert q.returncode == 1 and q.stderr == b"", q.stderr
    assert leaks(out.read_bytes()) == [] and b"[redacted: " in out.read_bytes()
    assert len(leaks(kept.read_bytes())) >= 10 and b"[redacted: " not in kept.read_bytes()


def test_the_users_own_outputs_keep_every_secret(stream_path, tmp_path):
    """--save (the raw lines, byte for byte), --plain and --summary --json on the user's own
    terminal are not redacted."""
    log = tmp_path / "saved.jsonl"
    p = subprocess.run(CW + ["--plain", "--save", str(log), "-"], input=stream_path.read_bytes(), capture_output=True,
                       cwd=ROOT, env=ENV, timeout=60)
    assert p.returncode == 1, p.stderr
    assert log.read_bytes() == stream_path.read_bytes()
    assert leaks(log.read_bytes()) == list(SECRETS)
    assert b"[redacted" not in p.stdout and {GITHUB_CLASSIC, ANTHROPIC, GITHUB_FINE} <= set(leaks(p.stdout))
    s = subprocess.run(CW + ["--summary", "--json", str(stream_path)], capture_output=True, env=ENV, timeout=60)
    assert b"[redacted" not in s.stdout and ANTHROPIC in leaks(s.stdout)


def test_no_redact_is_in_the_help():
    p = subprocess.run(CW + ["--help"], capture_output=True, env={**ENV, "COLUMNS": "200"}, timeout=60)
    text = " ".join(p.stdout.decode().split())
    assert "--no-redact" in text and "[redacted: KIND]" in text
    assert "--serve and --otlp replace each secret" in text and "--json-out and --save are yours and never redacted" in text


# -- the app: its e key, the served view, the plain TUI ---------------------------------------

def shown_text(app) -> str:
    """What the app's current screen shows: its texts, the transcript, the tables' rows and
    the diagnostics pane's lines."""
    from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane
    from cursor_watch.tui.widgets.runs_table import RunsTable
    from cursor_watch.tui.widgets.tool_table import ToolTable

    parts = [screen_text(app.screen)]
    for table in app.screen.query(ToolTable):
        parts += ["".join(seg.text for seg in table.render_line(y)) for y in range(table.size.height)]
    for table in app.screen.query(RunsTable):
        parts += ["".join(seg.text for seg in table.render_line(y)) for y in range(table.size.height)]
    for pane in app.screen.query(DiagnosticsPane):
        parts += [str(line) for line in pane.lines]
    return "\n".join(parts)


async def every_screen(app, pilot) -> str:
    """The text of the run screen (thinking and diagnostics shown) and of each tool call's
    detail with its raw JSON open."""
    from textual.widgets import Collapsible

    from cursor_watch.tui.screens.detail import ToolDetailScreen
    from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane

    await wait_until(pilot, lambda: app.ended)
    screen = app.run_view()
    await pilot.press("d")  # diagnostics shown
    await wait_until(pilot, lambda: screen.query_one(DiagnosticsPane).display)
    texts = [shown_text(app)]
    for call_id in list(app.session.tool_calls):
        app.open_detail(call_id)
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen) and app.screen.call.call_id == call_id)
        await pilot.press("r")  # the raw JSON too
        await wait_until(pilot, lambda: not any(c.collapsed for c in app.screen.query(Collapsible)))
        texts.append(shown_text(app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
    return "\n".join(texts)


@pytest.fixture
def served():
    """The app as --serve runs it for a browser tab: every view redacts."""
    from cursor_watch.safe import redacting_views

    with redacting_views(default_redactor()):
        yield


async def test_the_served_view_shows_no_secret_on_any_screen(stream_path, served):
    from cursor_watch.stream.sources import FileSource

    app = make_app(FileSource(str(stream_path)))
    async with app.run_test(size=SIZE) as pilot:
        text = await every_screen(app, pilot)
    assert leaks(text) == []
    for kind in ("GitHub Token", "Anthropic API Key", "Private Key", "Secret Keyword", "Stripe Access Key"):
        assert REDACTED.format(kind) in text, kind


async def test_the_served_runs_list_cuts_a_prompt_after_redacting_it(stream_path, tmp_path, served):
    """The runs list shows a prompt's first 300 characters: a token across that limit is
    redacted whole first, not cut into a half no rule knows."""
    from cursor_watch.tui.screens.runs import RunsScreen
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.runs_table import RunsTable

    prompt = "x " * 140 + "push with " + GITHUB_CLASSIC  # the token starts at character 290
    other = tmp_path / "other.jsonl"
    other.write_bytes(orjson.dumps({"type": "system", "subtype": "init", "session_id": "o", "model": "m"}) + b"\n"
                      + orjson.dumps({"type": "user", "session_id": "o", "message": {"role": "user", "content": [
                          {"type": "text", "text": prompt}]}}) + b"\n")
    app = make_app([FileSource(str(stream_path)), FileSource(str(other))])
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and isinstance(app.screen, RunsScreen))
        cells = " ".join(" ".join(r.plain()) for r in app.screen.query_one(RunsTable).rows)
        text = shown_text(app)
    assert "Deploy the shop" in cells and "push with [redacted:" in cells
    assert leaks(cells) == [] and leaks(text) == []
    assert GITHUB_CLASSIC[:10] not in cells


def _delta(kind: str, text: str, ts: int) -> bytes:
    if kind == "thinking":
        return orjson.dumps({"type": "thinking", "subtype": "delta", "text": text, "session_id": "s",
                             "timestamp_ms": ts}) + b"\n"
    return orjson.dumps({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text",
                         "text": text}]}, "session_id": "s", "timestamp_ms": ts}) + b"\n"


@pytest.mark.parametrize("kind", ["text", "thinking"])
@pytest.mark.parametrize("redacting", [True, False], ids=["served", "terminal"])
async def test_a_secret_half_streamed_is_not_shown_by_the_served_view(kind, redacting):
    """While a message streams, its last delta may end in the middle of a token (half a token
    is no token any rule knows): the served view shows a message up to its last whitespace
    until the rest comes; the user's own TUI shows every delta as it comes."""
    from cursor_watch.safe import redacting_views
    from cursor_watch.stream.sources import QueueSource
    from cursor_watch.tui.widgets.transcript import Transcript

    with redacting_views(default_redactor() if redacting else None):
        src = QueueSource()
        app = make_app(src)
        async with app.run_test(size=SIZE) as pilot:
            shown = lambda: app.run_view().query_one(Transcript).rendered_text()  # noqa: E731
            head, tail = GITHUB_CLASSIC[:18], GITHUB_CLASSIC[18:]
            await src.push(orjson.dumps({"type": "system", "subtype": "init", "session_id": "s", "model": "m"}) + b"\n"
                           + _delta(kind, "Pushing with ", 1) + _delta(kind, head, 2))
            await wait_until(pilot, lambda: "Pushing with" in shown())
            assert (head in shown()) is not redacting
            await src.push(_delta(kind, tail + " now. ", 3))  # (what follows its last whitespace waits)
            await wait_until(pilot, lambda: "now." in shown())
            assert (GITHUB_CLASSIC in shown()) is not redacting
            assert ("[redacted: GitHub Token] now." in shown()) is redacting
            await src.end()


async def test_the_plain_tui_shows_every_secret(stream_path):
    """The TUI on the user's own terminal is theirs: nothing is redacted."""
    from cursor_watch.stream.sources import FileSource

    app = make_app(FileSource(str(stream_path)))
    async with app.run_test(size=SIZE) as pilot:
        text = await every_screen(app, pilot)
    assert "[redacted" not in text
    assert leaks(text) == list(SECRETS)



@pytest.mark.parametrize("piece", [GITHUB_CLASSIC[4:16], AWS_KEY_ID[4:], PRIVATE_KEY[40:52]])
async def test_the_served_views_search_finds_no_secret_and_the_tuis_does(stream_path, piece, served):
    """A search counts what the view shows: in the served view a secret is not there to find
    (in the prompt, a tool's output or a read file); the user's own TUI finds it."""
    from cursor_watch.safe import redacting_views
    from cursor_watch.stream.sources import FileSource

    app = make_app(FileSource(str(stream_path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        assert await search_status(app, pilot, piece) == "no matches"
    with redacting_views(None):  # the user's own TUI, in the same test
        app = make_app(FileSource(str(stream_path)))
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.ended)
            assert (await search_status(app, pilot, piece)).startswith("1/")


@pytest.mark.parametrize("redact", [True, False])
async def test_the_e_key_export_is_redacted_unless_no_redact(stream_path, tmp_path, monkeypatch, redact):
    from cursor_watch.stream.sources import FileSource

    monkeypatch.chdir(tmp_path)
    app = make_app(FileSource(str(stream_path)), redact=redact)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("e")
        await wait_until(pilot, lambda: any(tmp_path.glob("cursor-watch-*.html")))
    (path,) = tmp_path.glob("cursor-watch-*.html")
    data = path.read_bytes()
    if redact:
        assert leaks(data) == [] and b"[redacted: " in data
    else:
        assert leaks(data) == list(SECRETS) and b"[redacted" not in data


def test_export_run_to_redacts_by_default(runs, tmp_path):
    path = export_run_to(runs[0], str(tmp_path))
    assert leaks(Path(path).read_bytes()) == []


# -- OTLP ----------------------------------------------------------------------------------

def test_otlp_content_spans_sent_to_a_receiver_hold_no_secret(stream_path, tmp_path):
    """--otlp-content through the exporter process to a real OTLP/HTTP receiver: every byte
    received (span names, attributes, events, status messages, the resource) is free of
    secrets; with --no-redact the same spans hold them."""
    pytest.importorskip("opentelemetry.sdk.trace", reason="the [otel] extra is not installed")
    from otlp_receiver import Receiver

    env = {**ENV, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    with Receiver() as r, Receiver() as kept:
        for receiver, extra in ((r, []), (kept, ["--no-redact"])):
            p = subprocess.run(CW + ["--summary", "--otlp-content", "--otlp-endpoint", receiver.url, *extra,
                                     str(stream_path)], capture_output=True, cwd=ROOT, env=env, timeout=120)
            assert p.returncode == 1 and re.fullmatch(rb"cursor-watch: --otlp: 9 spans of 1 runs sent to \S+ \(.*\)\n",
                                                      p.stderr), p.stderr  # every span sent
        spans = r.wait(lambda s: len(s) == 9)
        kept.wait(lambda s: len(s) == 9)
        body = b"".join(r.bodies)
        assert leaks(body) == [] and b"[redacted: " in body
        assert any("[redacted: " in str(s.attributes.get("gen_ai.tool.call.arguments")) for s in spans)
        assert leaks(b"".join(kept.bodies)) == list(SECRETS)


def test_otlp_records_of_the_live_outlet_hold_no_secret(stream_path):
    """The records the ``--otlp`` outlet builds as events arrive (the live path), content on."""
    pytest.importorskip("opentelemetry.sdk.trace", reason="the [otel] extra is not installed")
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from cursor_watch.outlets import otlp
    from cursor_watch.outlets.otlp_sdk import LocalSink
    from cursor_watch.stream.watch import Monitor

    data = stream_path.read_bytes()
    for redact, expect in ((default_redactor(), []), (None, list(SECRETS))):
        records = []
        sink = LocalSink(InMemorySpanExporter())
        put = sink.put
        sink.put = lambda record: (records.append(record), put(record))[1]
        outlet = otlp.OtlpOutlet(sink, content=True, clock=lambda: 5_000.0, redact=redact)
        mon = Monitor(clock=lambda: 5_000.0, source="/logs/s.jsonl", source_label="s.jsonl",
                      reread=lambda off, size: data[off:off + size])
        for run, batch in mon.split(mon.feed(data)):
            outlet.observe(run, batch)
        for run, batch in mon.split(mon.finish()):
            outlet.observe(run, batch)
        outlet.close()
        assert len(records) == 9
        assert leaks(orjson.dumps(records, default=str)) == expect
