#!/usr/bin/env python3
"""The README's pictures of Arize Phoenix: its trace list (``screenshots/otlp-phoenix-traces.png``)
and one run's trace (``screenshots/otlp-phoenix.png``).

    python screenshots/make_otlp_screenshot.py [--phoenix URL] [--stream FILE ...]

Without ``--phoenix`` it starts ``phoenix serve`` on free loopback ports in a temporary
directory (as the tests do). The streams (default: a Claude Code, a Codex and a Gemini CLI
capture from ../shared/streams/agents/ where they are, and the Cursor sample) are sent with
``--otlp-endpoint --otlp-content`` into a project of their own; the trace list, its time range
set to the runs' dates (``timeRangeStart``/``timeRangeEnd``: Phoenix opens on the last 7 days),
and the first stream's first trace are opened in headless Chromium (Debian's
``/usr/bin/chromium``, driven by Playwright for Python: no browser is downloaded) and saved (the list at 2400x900, wide enough for its latency, token and
cost columns; the trace at 1600x1000).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROJECT = "cursor-watch-demo"
AGENTS = ROOT.parent / "shared" / "streams" / "agents"
DEFAULT_STREAMS = [AGENTS / "claude" / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson",
                   AGENTS / "codex" / "mccorvie__TauCetiWorker__tests__fixtures__codex_exec_mcp_0_160.jsonl",
                   AGENTS / "gemini" / "shane-kercheval__switchboard__crates__harness__tests__fixtures__gemini__tool-use.stream.jsonl",
                   ROOT / "sample_streams" / "parallel-failed-rejected.jsonl"]


def get(url: str):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_phoenix(work: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": work, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
    phoenix = Path(sys.executable).parent / "phoenix"
    proc = subprocess.Popen([str(phoenix), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    for _ in range(480):
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2).close()
            return proc, url
        except OSError:
            time.sleep(0.5)
    raise SystemExit("phoenix serve did not answer")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--phoenix", help="a running Phoenix (default: start one)")
    p.add_argument("--stream", nargs="+", default=[str(x) for x in DEFAULT_STREAMS if x.exists()])
    p.add_argument("--out", default=str(HERE / "otlp-phoenix.png"))
    p.add_argument("--list-out", default=str(HERE / "otlp-phoenix-traces.png"))
    args = p.parse_args()
    proc = None
    with tempfile.TemporaryDirectory() as work:
        url = args.phoenix
        if not url:
            proc, url = start_phoenix(work)
        try:
            env = {**os.environ, "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT}"}
            for stream in args.stream:
                subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--otlp-content", "--otlp-endpoint",
                                url, stream], cwd=ROOT, env=env, check=False, stdout=subprocess.DEVNULL)
            spans: list = []
            for _ in range(100):
                try:
                    spans = get(f"{url}/v1/projects/{PROJECT}/spans?limit=1000")["data"]
                except OSError:
                    spans = []
                if sum(s["parent_id"] is None for s in spans) >= len(args.stream):
                    break
                time.sleep(0.3)
            roots = [s for s in spans if s["parent_id"] is None]
            first = next((r for r in roots if "claude" in r["name"]), roots[0])
            starts = sorted(r["start_time"] for r in roots)
            ends = sorted(r["end_time"] for r in roots)
            start = datetime.fromisoformat(starts[0]) - timedelta(days=1)
            end = datetime.fromisoformat(ends[-1]) + timedelta(days=1)
            query = "?" + urllib.parse.urlencode({"timeRangeStart": start.isoformat(), "timeRangeEnd": end.isoformat()})
            project_id = next(pr["id"] for pr in get(f"{url}/v1/projects")["data"] if pr["name"] == PROJECT)
            listing = f"{url}/projects/{project_id}/traces{query}"
            page = f"{listing}&selectedTraceId={first['context']['trace_id']}"  # the trace's slide-over
            from playwright.sync_api import sync_playwright

            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium")
                tab = browser.new_page(viewport={"width": 2400, "height": 900})  # wide: latency, tokens, cost
                tab.goto(listing, wait_until="networkidle", timeout=120_000)
                # the app draws after its scripts load (seconds on a loaded machine)
                tab.get_by_text("invoke_agent", exact=False).first.wait_for(timeout=120_000)
                # the table's latency, token and cost columns: scroll it to its right end
                tab.evaluate("""() => { for (const el of document.querySelectorAll('*')) {
                    if (el.scrollWidth > el.clientWidth + 40 && getComputedStyle(el).overflowX !== 'visible'
                        && el.querySelector('table')) { el.scrollLeft = el.scrollWidth; } } }""")
                tab.wait_for_timeout(2000)
                tab.screenshot(path=args.list_out)
                tab.set_viewport_size({"width": 1600, "height": 1000})
                tab.goto(listing, wait_until="networkidle", timeout=120_000)
                tab.get_by_text(first["name"][:20], exact=False).first.click()  # the run's trace opens
                tab.get_by_text("chat ", exact=False).first.wait_for(timeout=120_000)
                tab.wait_for_timeout(4000)
                tab.screenshot(path=args.out)
                browser.close()
            print(f"{args.list_out}: {listing}")
            print(f"{args.out}: {page}")
        finally:
            if proc is not None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
