"""Command line: arguments, mode choice, exit status.

Exit status, the same in every mode:

* 0: the stream ended with a successful ``result``;
* 1: it ended with an error ``result`` or without a ``result``;
* 2: usage error or unreadable input (missing file, bad option, a command that
  can't be started), with one line on stderr and no traceback;
* spawn mode: a non-zero exit status of the child is passed through (128+N when
  it died of signal N), unless cursor-watch itself stopped it after its result;
* 3: spawn mode with ``--enforce``: a run went past a budget (``--max-*``) or looped
  (``--max-repeats``) and cursor-watch stopped the command;
* 4: ``--compare A B --fail-if GATES``: a gate holds (B is worse than A by as much as it says);
* 128+N when cursor-watch is stopped by signal N (SIGINT 130, SIGTERM 143, SIGHUP 129).

With ``--metrics``, a replay of files (no ``-f``, off the TUI) serves its metrics on after it
ended, until SIGINT, SIGTERM or SIGHUP; the exit status is then the watch's, as above.

``--report`` exits 0 when it printed its report (whatever the runs' outcomes), 2 when a path
can't be read. ``--compare`` exits 0 when it printed the comparison and no ``--fail-if`` gate
holds (whatever the runs' outcomes), 4 when one holds, 2 when a run can't be read.
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from . import __version__
from .buildinfo import CompiledTypeError, describe
from .samples import DEFAULT_SAMPLE, list_samples, sample_path
from .output import OutputClosed, served_in_browser
from .output import error_line as _error
from .formats import FORMATS
from .lazy import lazy_module
from .stream.watch import EXIT_OK, RESULT_EXIT_GRACE_S
from .stream.sources import SourceError

if TYPE_CHECKING:  # (imported where used: --version and --help need none of them)
    from .core.rules import RunRules
    from .options import Options, Services

asyncio = lazy_module("asyncio")  # imported when an event loop runs (not by a --summary of files: run_summary_replay)

EXIT_USAGE = 2
EXIT_INTERNAL = 70  # a defect of cursor-watch said loudly (a compiled module's type check failed: buildinfo.py); EX_SOFTWARE


class UsageError(Exception):
    """Bad command line; the message is one line (``prog``: the command whose ``--help`` says more)."""

    prog = "cursor-watch"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, no usage dump
        err = UsageError(message)
        err.prog = self.prog  # which --help to point at: "cursor-watch report"
        raise err


def build_parser(hide_modes: bool = False) -> argparse.ArgumentParser:
    """The argument parser of ``cursor-watch [watch]`` (everything after ``--`` is the command to
    spawn). It also reads the old mode flags (``--report``, ``--compare``, ``--serve``,
    ``--list-samples``, ``--prices-path``) and their options; ``hide_modes`` leaves those out of
    ``--help`` (each is a subcommand now: :data:`SUBCOMMANDS`)."""
    p = _Parser(
        prog="cursor-watch",
        description="Live monitor for AI coding agents' NDJSON event streams: Cursor (cursor-agent -p "
                    "--output-format stream-json), Claude Code (claude -p --output-format stream-json --verbose), "
                    "Codex (codex exec --json) and Gemini CLI (gemini -p --output-format stream-json). The agent is "
                    "recognised from each stream's first events; --format cursor|claude|codex|gemini chooses it.",
        epilog="Spawn mode: cursor-watch [OPTIONS] -- AGENT-COMMAND, e.g. cursor-watch -- cursor-agent -p 'task' "
               "--output-format stream-json, or cursor-watch -- codex exec --json 'task'",
    )
    p.add_argument("files", nargs="*", metavar="FILE|DIR",
                   help="stream files to replay, or directories of them (*.jsonl, *.ndjson, *.log); "
                        "'-' or nothing reads piped stdin")
    p.add_argument("-f", "--follow", action="store_true",
                   help="keep reading the files as they grow (like tail -f); in a DIR, new files are picked up")
    p.add_argument("--save", metavar="PATH",
                   help="append every raw line received to PATH, before parsing (one source only)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--plain", action="store_true", help="print a live plain transcript (no TUI)")
    mode.add_argument("--summary", action="store_true", help="read to the end and print a summary")
    p.add_argument("--json", action="store_true", help="with --summary: one JSON object on stdout")
    p.add_argument("--speed", type=float, default=0.0, metavar="X",
                   help="replay FILE at its recorded pace times X (0, the default: as fast as possible)")
    p.add_argument("--thinking", action="store_true", help="--plain: print thinking blocks too")
    p.add_argument("--format", default="auto", choices=("auto", *FORMATS),
                   help="the agent whose stream this is: cursor (Cursor Agent CLI), claude (Claude Code), codex "
                        "(Codex), gemini (Gemini CLI); default auto: recognised from each source's first events")
    p.add_argument("--result-grace", type=float, default=RESULT_EXIT_GRACE_S, metavar="S",
                   help="spawn mode: seconds a command may run on after its result before it is stopped "
                        f"(default {RESULT_EXIT_GRACE_S:g})")
    p.add_argument("--json-out", metavar="PATH",
                   help="when the watch ends, also write the --summary --json object to PATH (any mode)")
    p.add_argument("--export", metavar="PATH",
                   help="when the watch ends (any mode, the TUI included), write the run(s) to PATH: .html (one "
                        "self-contained page), .md (Markdown for GitHub) or .json (the --summary --json output)")
    p.add_argument("--export-max-chars", type=int, metavar="N",
                   help="--export FILE.md: keep the document under N characters (GitHub's comment limit is 65536) "
                        "by cutting payloads first, with notes")
    p.add_argument("--no-redact", action="store_true",
                   help="keep secrets in what is shared. Without it, --export (every format, and the TUI's e key), "
                        "--serve and --otlp replace each secret they find (cloud keys, tokens, private keys, URL "
                        "passwords, values of password/secret/token/api_key..., high-entropy values in quotes or "
                        "after = or :) with [redacted: KIND]; a secret of no known shape and no telling name is not "
                        "found. The TUI on your terminal, --plain, --summary, --json-out and --save are yours and "
                        "never redacted")
    p.add_argument("--notify", action="store_true",
                   help="TUI: when a run ends, fails or waits for an answer, also ring the terminal bell and send a "
                        "desktop notification (OSC 9 and OSC 777; terminals without them ignore them)")
    otel = p.add_argument_group("OpenTelemetry (pip install 'cursor-watch[otel]')")
    otel.add_argument("--otlp", action="store_true",
                      help="send each run as a trace to an OTLP endpoint (any mode); configured by the SDK's "
                           "OTEL_EXPORTER_OTLP_* variables, http/protobuf by default, grpc supported")
    otel.add_argument("--otlp-endpoint", metavar="URL",
                      help="--otlp to URL (a base URL gets /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does; one ending "
                           "in /v1/traces is kept; implies --otlp)")
    otel.add_argument("--otlp-content", action="store_true",
                      help="also send the prompt, assistant text, thinking, tool arguments and results (each "
                           "attribute at most 16384 characters, cut with a note); off by default, as is "
                           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true")
    prom = p.add_argument_group("Prometheus (pip install 'cursor-watch[metrics]')")
    prom.add_argument("--metrics", metavar="[HOST:]PORT",
                      help="serve Prometheus metrics of every run at http://HOST:PORT/metrics (HOST 127.0.0.1 unless "
                           "given; PORT 0: any free port) while the watch runs; a replay of files serves on after it "
                           "ended, until Ctrl+C")
    web = p.add_argument_group("browser view (pip install 'cursor-watch[web]')")
    web.add_argument("--serve", action="store_true",
                     help="serve the TUI in a browser (textual-serve); each browser tab starts its own app on FILE|DIR")
    web.add_argument("--host", default="127.0.0.1", help="--serve: address to bind (default 127.0.0.1: this machine only)")
    web.add_argument("--port", type=int, default=8000, help="--serve: port (default 8000)")
    costs = p.add_argument_group("costs and report")
    costs.add_argument("--prices", metavar="FILE",
                       help="TOML price table (USD per million tokens, one [\"model name\"] table each: input, output, "
                            "cache_read, cache_write) over the shipped defaults and the user file "
                            "(~/.config/cursor-watch/prices.toml on Linux)")
    costs.add_argument("--prices-path", action="store_true",
                       help="print the path of the user price file (prices.toml in the platform's config directory, "
                            "read when it exists) and exit")
    costs.add_argument("--report", action="store_true",
                       help="one table over every run in the FILEs and DIRs (recursively): runs, outcomes, time, tokens, "
                            "cost, tool calls and failures, per tool and the slowest calls; --json for scripts")
    costs.add_argument("--compare", nargs=2, metavar=("A", "B"),
                       help="compare two runs (files, or FILE#N for the N-th run of a log; any two agents): outcome, "
                            "duration, tokens, cost, tool calls by kind and outcome, and the two tool-call sequences "
                            "aligned; --json for scripts")
    costs.add_argument("--fail-if", metavar="GATES",
                       help="--compare: exit 4 when a change from A to B holds, e.g. 'cost>+20%%,duration>+50%%,"
                            "failures>0' (metrics: duration, tokens, input_tokens, output_tokens, cache_read_tokens, "
                            "cache_write_tokens, reasoning_tokens, cost, tool_calls, failures, rejected, loops; a "
                            "change in %% of A, or an amount: 0, +5, 30s, 0.05$)")
    costs.add_argument("--by", choices=("day", "model", "agent", "cwd"), default="day",
                       help="--report: group the runs by their start day (UTC), model, agent or cwd (default day)")
    costs.add_argument("--since", metavar="DATE", help="--report: runs that started on or after DATE (2026-11-01, UTC)")
    costs.add_argument("--until", metavar="DATE", help="--report: runs that started before DATE")
    guard = p.add_argument_group("stalls and budgets (per run)")
    guard.add_argument("--stall", metavar="DURATION",
                       help="a live run with no event, or one tool call running, for DURATION (90s, 10m) is stalled "
                            "(shown after 5m without this option; alerts only with it) unless something explains the "
                            "quiet: a heartbeat, a compaction, a rate limit, a retry, a busy process")
    guard.add_argument("--stall-explained", metavar="DURATION",
                       help="an explained quiet is stalled only after DURATION (default 4 times --stall)")
    guard.add_argument("--max-duration", metavar="DURATION", help="budget: a run's duration (e.g. 30m)")
    guard.add_argument("--max-tool-calls", type=int, metavar="N", help="budget: tool calls per run")
    guard.add_argument("--max-failures", type=int, metavar="N", help="budget: failed tool calls per run")
    guard.add_argument("--max-tokens", type=int, metavar="N",
                       help="budget: input + output + cache tokens per run (Cursor reports usage at the end only)")
    guard.add_argument("--max-cost", type=float, metavar="USD",
                       help="budget: cost per run in USD, reported or estimated (see --prices)")
    guard.add_argument("--max-repeats", type=int, metavar="N",
                       help="a run repeating one tool call N times (a file re-read with no edit between, a failing "
                            "command retried, the same call again) is looping: a loop alert (the views mark it "
                            "at 3 without this option)")
    guard.add_argument("--enforce", action="store_true",
                       help="spawn mode: a run past a budget, looping (--max-repeats) or stalled (--stall) stops the command (TERM, then "
                            "KILL) and cursor-watch exits 3")
    alerts = p.add_argument_group("alerts (--alert needs pip install 'cursor-watch[alerts]')")
    alerts.add_argument("--alert", action="append", default=[], metavar="URL",
                        help="send alerts to an Apprise URL (Slack, Discord, ntfy, Telegram, e-mail, json://host/path "
                             "...); repeatable")
    alerts.add_argument("--alert-on", metavar="KINDS",
                        help="comma-separated alert kinds to send: waiting, stalled, budget, loop, failed, ended "
                             "(default: all but ended)")
    alerts.add_argument("--alert-cmd", metavar="CMD",
                        help="run CMD through the shell for each alert, the alert as one JSON object on stdin, "
                             "CW_ALERT_KIND, CW_RUN, CW_SESSION_ID, CW_MESSAGE in its environment")
    alerts.add_argument("--alert-replay", action="store_true",
                        help="replayed files raise alerts too (by default only live runs do)")
    p.add_argument("--sample", nargs="?", const=DEFAULT_SAMPLE, metavar="NAME",
                   help=f"replay a shipped sample stream (default {DEFAULT_SAMPLE}; see --list-samples)")
    p.add_argument("--list-samples", action="store_true", help="list the shipped sample streams")
    p.add_argument("--version", action=_Version,
                   help="the version, and whether this build is compiled (mypyc) or pure Python")
    if hide_modes:
        for action in p._actions:
            if action.dest in SUBCOMMAND_ONLY:
                action.help = argparse.SUPPRESS
        hidden = {g.title for g in p._action_groups if g._group_actions
                  and all(a.help == argparse.SUPPRESS for a in g._group_actions)}
        p._action_groups = [g for g in p._action_groups if g.title not in hidden]
        p.description = (p.description or "") + (
            " Other commands: cursor-watch report FILE|DIR... (one table over many runs), cursor-watch compare A B "
            "(two runs side by side), cursor-watch serve FILE|DIR (the TUI in a browser), cursor-watch samples (the "
            "shipped sample streams), cursor-watch prices (the user price file's path); each has its own --help.")
    return p


# -- subcommands -------------------------------------------------------------------------------------
# ``cursor-watch [watch] ...`` is the default; the others read their own options only. Each is run
# as the old mode flag it replaces (the same checks, outputs and exit statuses): the options are
# declared once, in build_parser, and each subcommand's parser takes the ones it reads from there.

SUBCOMMANDS: dict[str, tuple[str, list[tuple[str, list[str]]]]] = {
    # name -> (what it does, [(option group's title, [dests of build_parser's options])])
    "watch": ("watch agent streams: files, directories, a pipe or a command after -- (the default command)", []),
    "report": ("one table over every run in the FILEs and DIRs (recursively): runs, outcomes, time, tokens, cost, "
               "tool calls and failures, per tool and the slowest calls",
               [("which runs", ["files", "by", "since", "until"]), ("reading", ["format", "prices"]),
                ("output", ["json"])]),
    "compare": ("compare two runs (files, or FILE#N for the N-th run of a log; any two agents): outcome, duration, "
                "tokens, cost, tool calls by kind and outcome, and the two tool-call sequences aligned",
                [("the runs", ["compare"]), ("gates", ["fail_if"]), ("reading", ["format", "prices"]),
                 ("output", ["json"])]),
    "serve": ("serve the TUI in a browser (pip install 'cursor-watch[web]'); each browser tab starts its own app "
              "on FILE|DIR",
              [("what to watch", ["files", "follow", "speed", "format"]),
               ("the server", ["host", "port"]),
               ("what is shown", ["no_redact", "prices", "stall", "stall_explained", "max_duration", "max_tool_calls",
                                  "max_failures", "max_tokens", "max_cost", "max_repeats"])]),
    "samples": ("list the shipped sample streams (replay one with --sample NAME)", []),
    "prices": ("print the path of the user price file (prices.toml in the platform's config directory, read when "
               "it exists)", []),
}
SUBCOMMAND_ONLY = {"report", "compare", "fail_if", "by", "since", "until", "serve", "host", "port", "list_samples",
                   "prices_path"}
"""Options of build_parser that belong to a subcommand: hidden from ``cursor-watch --help``."""
MODE_FLAGS = {"--report": "report", "--compare": "compare", "--serve": "serve", "--list-samples": "samples",
              "--prices-path": "prices"}
"""The old mode flags, kept for this release: each says once on stderr which subcommand to type."""
_MODE_FLAG = {name: flag for flag, name in MODE_FLAGS.items()}


def build_subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``cursor-watch NAME`` (a key of :data:`SUBCOMMANDS` other than watch): its own
    options only, in groups, each as build_parser declares it."""
    about, groups = SUBCOMMANDS[name]
    p = _Parser(prog=f"cursor-watch {name}", description=about[0].upper() + about[1:] + ".")
    actions = {a.dest: a for a in build_parser()._actions}
    for title, dests in groups:
        group = p.add_argument_group(title)
        for dest in dests:
            action = actions[dest]
            if dest == "compare":  # the two runs are positional here
                group.add_argument("a", metavar="A", help="the run before: FILE, or FILE#N for a log's N-th run")
                group.add_argument("b", metavar="B", help="the run after, compared with A")
                continue
            if dest == "files":
                group.add_argument("files", nargs="+", metavar=action.metavar, help={
                    "report": "stream files, or directories of them (read recursively)",
                    "serve": "stream files to serve, or directories of them (a browser tab can't read stdin)",
                }[name])
                continue
            if dest == "json":
                group.add_argument("--json", action="store_true", help="one JSON object on stdout, for scripts")
                continue
            action = copy.copy(action)  # its help without the old flag's name: "--report: group the runs..."
            if action.help and action.help.startswith(f"{_MODE_FLAG[name]}: "):
                action.help = action.help[len(_MODE_FLAG[name]) + 2:]
            group._add_action(action)
    return p


def legacy_argv(name: str, argv: list[str]) -> list[str]:
    """``cursor-watch NAME ARGS`` as the old mode flag's command line (``report X --json`` ->
    ``--report X --json``), after NAME's own parser checked ARGS (``--help`` prints and exits).

    Raises:
        UsageError: an option NAME does not read, or a missing argument.
    """
    if name == "watch":
        return argv
    flag = _MODE_FLAG[name]
    parser = build_subcommand_parser(name)  # (samples and prices: no options of their own)
    ns = parser.parse_args(argv)
    out = [flag, ns.a, ns.b] if name == "compare" else [flag]
    for action in parser._actions:
        if action.dest in ("help", "a", "b", "files"):
            continue
        value = getattr(ns, action.dest)
        if value == action.default:
            continue
        option = action.option_strings[-1]
        if isinstance(value, bool):
            out.append(option)
        else:
            out.append(f"{option}={value}")
    return out + list(getattr(ns, "files", None) or [])


def route(argv: list[str]) -> tuple[list[str], str]:
    """The command line as build_parser reads it: a subcommand's translated (:func:`legacy_argv`),
    ``watch`` dropped; and for an old mode flag, the one line that says what to type instead (""
    otherwise), for :func:`main` to print on stderr once the command line is known to be good.

    Raises:
        UsageError: a subcommand's bad option.
    """
    if argv and argv[0] in SUBCOMMANDS:
        return legacy_argv(argv[0], argv[1:]), ""
    before = argv[: argv.index("--")] if "--" in argv else argv
    for arg in before:
        flag = arg.split("=", 1)[0]
        name = MODE_FLAGS.get(flag)
        if name is not None:
            what = f"cursor-watch {name}" + ("" if name in ("samples", "prices") else " ...")
            return argv, (f"{flag} is deprecated and goes in a later release: type '{what}' instead "
                          f"(cursor-watch {name} --help)")
    return argv, ""


class _Version(argparse.Action):
    """``--version``: ``cursor-watch 0.1.0, compiled (mypyc: 4 modules)`` (or ``pure Python (why)``),
    read when asked (it imports the compiled modules to check them)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None) -> None:
        print(f"cursor-watch {__version__}, {describe()}")
        parser.exit()


def parse_args(argv: list[str]) -> Options | None:
    """Parse ``argv`` (without the program name). None means "done" (a listing).

    Raises:
        UsageError: bad options.
    """
    command: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1 :]
        if not command:
            raise UsageError("nothing to run after --")
    ns = build_parser(hide_modes=True).parse_args(argv)
    if ns.list_samples:
        print("\n".join(list_samples()))
        return None
    if ns.prices_path:
        from .core.costs import user_prices_path

        print(user_prices_path())
        return None
    if ns.json and not (ns.summary or ns.report or ns.compare):
        raise UsageError("--json goes with --summary, --report or --compare")
    gates = _check_compare(ns, command)
    report_range = _check_report(ns, command)
    stall_s = _duration(ns.stall, "--stall") if ns.stall is not None else None
    if ns.speed < 0 or ns.speed != ns.speed or ns.speed == float("inf"):
        raise UsageError("--speed must be a number >= 0")
    files = list(ns.files)
    if ns.sample is not None:
        if files or command:
            raise UsageError("--sample replaces FILE and the command")
        try:
            files = [str(sample_path(ns.sample))]
        except FileNotFoundError as err:
            raise UsageError(str(err)) from None
    if ns.result_grace < 0:
        raise UsageError("--result-grace must be >= 0")
    if ns.speed and (command or len(files) != 1 or files[0] == "-" or os.path.isdir(files[0])):
        raise UsageError("--speed replays one FILE")
    if files and command:
        raise UsageError("give either FILEs or a command after --, not both")
    if len(files) > 1 and "-" in files:
        raise UsageError("'-' (stdin) can't be read together with FILEs")
    if ns.save and (len(files) > 1 or (files and os.path.isdir(files[0]))):
        raise UsageError("--save takes one source: one FILE, stdin or a command")
    _check_export(ns)
    metrics = None
    if ns.metrics is not None:
        from .outlets.metrics import parse_address

        try:
            metrics = parse_address(ns.metrics)
        except ValueError as err:
            raise UsageError(str(err)) from None
    if ns.serve:
        if metrics is not None:
            raise UsageError("--serve doesn't go with --metrics: each browser tab is its own app (run --metrics "
                             "with -f in another terminal)")
        if ns.export:
            raise UsageError("--serve doesn't go with --export: each browser tab is its own app")
        if command or not files or "-" in files:
            raise UsageError("--serve starts the app once per browser tab, so it can't read stdin or run a command: "
                             "run it with --save LOG in another terminal, then --serve -f LOG")
        if ns.plain or ns.summary or ns.save:
            raise UsageError("--serve serves the TUI: it doesn't go with --plain, --summary or --save")
        if not 0 < ns.port < 65536:
            raise UsageError("--port must be between 1 and 65535")
    from .options import Options

    return Options(files=tuple(files), command=tuple(command), follow=ns.follow, save=ns.save, plain=ns.plain,
                   summary=ns.summary, json=ns.json, speed=ns.speed, thinking=ns.thinking,
                   result_grace=ns.result_grace, json_out=ns.json_out, export=ns.export,
                   export_max_chars=ns.export_max_chars, notify=ns.notify, serve=ns.serve, host=ns.host, port=ns.port,
                   format=ns.format, otlp=ns.otlp or bool(ns.otlp_endpoint), otlp_endpoint=ns.otlp_endpoint,
                   otlp_content=ns.otlp_content, redact=not ns.no_redact, metrics=metrics,
                   prices=ns.prices, report=ns.report, compare=tuple(ns.compare) if ns.compare else None,
                   gates=tuple(gates), by=ns.by, since_ms=report_range[0], until_ms=report_range[1],
                   stall_s=stall_s, limits=_limits(ns, stall_s, command), enforce=ns.enforce,
                   alerts=tuple(ns.alert), alert_on=_alert_kinds(ns.alert_on), alert_cmd=ns.alert_cmd,
                   alert_replay=ns.alert_replay)


def _limits(ns: argparse.Namespace, stall_s: float | None, command: list[str]) -> Any:
    """The per-run limits of the options (``guard.Limits``).

    Raises:
        UsageError: a negative budget, ``--enforce`` without a command or a budget.
    """
    from .core.limits import Limits

    for name in ("max_tool_calls", "max_failures", "max_tokens", "max_cost"):
        value = getattr(ns, name)
        if value is not None and (value < 0 or value != value or value == float("inf")):
            raise UsageError(f"--{name.replace('_', '-')} must be a number >= 0")
    if ns.max_repeats is not None and ns.max_repeats < 2:
        raise UsageError("--max-repeats must be 2 or more (a call made twice is repeated once)")
    explained_s = _duration(ns.stall_explained, "--stall-explained") if ns.stall_explained is not None else None
    if explained_s is not None and stall_s is not None and explained_s < stall_s:
        raise UsageError("--stall-explained must be at least --stall (an explained quiet waits longer)")
    limits = Limits(stall_s=stall_s, stall_explained_s=explained_s,
                    max_duration_s=_duration(ns.max_duration, "--max-duration") if ns.max_duration else None,
                    max_tool_calls=ns.max_tool_calls, max_failures=ns.max_failures, max_tokens=ns.max_tokens,
                    max_cost_usd=ns.max_cost, max_repeats=ns.max_repeats)
    if ns.enforce and not command:
        raise UsageError("--enforce stops a spawned command: run it after -- (files and pipes can't be stopped)")
    if ns.enforce and not limits.budgets and stall_s is None:
        raise UsageError("--enforce needs a budget (--max-duration, --max-tool-calls, --max-failures, --max-tokens, "
                         "--max-cost or --max-repeats) or --stall")
    return limits


def _alert_kinds(text: str | None) -> frozenset[str] | None:
    """``--alert-on waiting,failed`` -> the kinds (None: the default).

    Raises:
        UsageError: an unknown kind.
    """
    if text is None:
        return None
    from .outlets.alerts import KINDS

    kinds = frozenset(k.strip() for k in text.split(",") if k.strip())
    unknown = kinds - set(KINDS)
    if unknown or not kinds:
        raise UsageError(f"--alert-on: unknown kind {', '.join(sorted(unknown)) or '(none)'} "
                         f"(kinds: {', '.join(KINDS)})")
    return kinds


def _duration(text: str, option: str) -> float:
    """Seconds of a DURATION option (a UsageError naming the option when it isn't one)."""
    from .fmt import parse_duration

    try:
        return parse_duration(text)
    except ValueError as err:
        raise UsageError(f"{option}: {err}") from None


def _check_report(ns: argparse.Namespace, command: list[str]) -> tuple[float | None, float | None]:
    """``--report`` goes with FILEs and DIRs only; ``--by/--since/--until`` only with it.
    Returns ``(since_ms, until_ms)``.

    Raises:
        UsageError: one line.
    """
    if not ns.report:
        for name in ("since", "until"):
            if getattr(ns, name) is not None:
                raise UsageError(f"--{name} goes with --report")
        if ns.by != "day":
            raise UsageError("--by goes with --report")
        return None, None
    if (command or ns.plain or ns.summary or ns.serve or ns.follow or ns.save or ns.export or ns.json_out
            or ns.metrics is not None):
        raise UsageError("--report reads FILEs and DIRs: it doesn't go with a command, --plain, --summary, -f, "
                         "--save, --export, --json-out, --metrics or --serve")
    if not ns.files or "-" in ns.files:
        raise UsageError("--report needs FILEs or DIRs of logs (it doesn't read stdin)")
    from .views.report import parse_when  # msgspec and the report's decoders: only for --report

    try:
        since = parse_when(ns.since) if ns.since is not None else None
        until = parse_when(ns.until) if ns.until is not None else None
    except ValueError as err:
        raise UsageError(str(err)) from None
    return since, until


def _check_compare(ns: argparse.Namespace, command: list[str]) -> list:
    """``--compare A B`` reads two runs and goes with ``--json``, ``--fail-if``, ``--format`` and
    ``--prices`` only; ``--fail-if`` only with it. Returns the gates (``compare.Gate``).

    Raises:
        UsageError: one line.
    """
    if ns.compare is None:
        if ns.fail_if is not None:
            raise UsageError("--fail-if goes with --compare A B")
        return []
    if (command or ns.files or ns.plain or ns.summary or ns.report or ns.serve or ns.follow or ns.save or ns.export
            or ns.json_out or ns.metrics is not None or ns.sample is not None or ns.otlp or ns.otlp_endpoint):
        raise UsageError("--compare A B reads two runs: it doesn't go with FILEs, a command, --plain, --summary, "
                         "--report, -f, --save, --export, --json-out, --metrics, --otlp, --sample or --serve")
    if ns.fail_if is None:
        return []
    from .views.compare import parse_gates

    try:
        return parse_gates(ns.fail_if)
    except ValueError as err:
        raise UsageError(str(err)) from None


def _check_export(ns: argparse.Namespace) -> None:
    """``--export PATH``: a known extension; ``--export-max-chars N``: with a Markdown PATH.

    Raises:
        UsageError: one line.
    """
    from .views.export import MIN_MAX_CHARS, export_format

    fmt = None
    if ns.export is not None:
        try:
            fmt = export_format(ns.export)
        except ValueError as err:
            raise UsageError(str(err)) from None
    if ns.export_max_chars is not None:
        if fmt != "markdown":
            raise UsageError("--export-max-chars goes with --export FILE.md")
        if ns.export_max_chars < MIN_MAX_CHARS:
            raise UsageError(f"--export-max-chars must be at least {MIN_MAX_CHARS}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cursor-watch`` command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        argv, deprecated = route(argv)
        opts = parse_args(argv)
    except UsageError as err:
        _error(f"{err} (see {err.prog} --help)")
        return EXIT_USAGE
    if deprecated:
        _error(deprecated)
    if opts is None:
        return EXIT_OK
    from .core.costs import PricesError

    try:
        rules = run_rules(opts)
    except PricesError as err:
        _error(str(err))
        return EXIT_USAGE
    if opts.report:
        return run_report(opts, rules)
    if opts.compare:
        return run_compare(opts, rules)
    deliverer = None
    if opts.alerts or opts.alert_cmd:  # (without targets there is nothing to check: made when needed)
        from .outlets.alerts import AlertSetupError

        try:
            deliverer = make_deliverer(opts)
        except AlertSetupError as err:
            _error(str(err))
            return EXIT_USAGE
    if not opts.files and not opts.command and sys.stdin.isatty():
        _error("no input: give a FILE, pipe a stream in, or run a command after -- (see --help)")
        return EXIT_USAGE
    if opts.serve:
        return serve(opts, argv)
    problem = otlp_problem(opts)
    if problem:
        _error(problem)
        return EXIT_USAGE
    if opts.otlp_content:  # one switch for the exporter process and --export FILE.otlp.json
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    metrics = None
    if opts.metrics is not None:
        from .outlets.metrics import Metrics, MetricsListenError, MetricsUnavailable, is_loopback

        try:
            metrics = Metrics(*opts.metrics, stall_s=opts.stall_s)
        except (MetricsUnavailable, MetricsListenError) as err:
            _error(str(err))
            return EXIT_USAGE
        host = metrics.server.host
        if not is_loopback(host):
            _error(f"warning: metrics on {host} with no authentication: anyone who can reach it can read them "
                   "(agents, models, tool names, token counts)")
        _error(f"metrics on {metrics.server.url}")
    try:
        from .options import Services

        code = run_watch(opts, Services(deliverer, metrics, rules))
        if metrics is not None and metrics.should_linger():
            from .headless import linger

            linger(metrics)
        return code
    except CompiledTypeError as err:  # a defect of ours, said loudly: never a diagnostic, never exit 0
        _error(f"internal error: {err}")
        return EXIT_INTERNAL
    finally:
        if metrics is not None:
            metrics.close()


def run_watch(opts: Options, services: Services) -> int:
    """The watch in the mode the options ask for (the TUI, ``--summary``, ``--plain``); its exit status."""
    try:
        if not opts.plain and not opts.summary and tui_possible():
            from .tui.app import run_tui  # Textual is imported only on this path

            return run_tui(opts, services)
        # what start-up made (modules, classes, functions: ~10^5 objects, alive until exit)
        # is left out of the collector's full passes (one walked them all during a 200 MB
        # --summary, for 10-20 ms of nothing)
        gc.freeze()
        from .headless import run_headless, run_plain_replay, run_summary_replay

        code = run_summary_replay(opts, services) if opts.summary else run_plain_replay(opts, services)
        if code is not None:
            return code
        return asyncio.run(run_headless(opts, services))
    except SourceError as err:
        _error(str(err))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


def run_rules(opts: Options) -> RunRules:
    """What every run is judged by, from the options: the price table (the defaults, the user's
    file, ``--prices``), the summary's stall duration (``--stall``, else 5 minutes) and budgets,
    the repeats that make a run looping (``--max-repeats``).

    Raises:
        PricesError: a price file is unreadable or malformed.
    """
    import dataclasses

    from .core.costs import PriceTable
    from .core.rules import RunRules
    from .core.limits import DISPLAY_STALL_S
    from .core.loops import DISPLAY_REPEATS

    prices = PriceTable(opts.prices)
    if opts.limits is None:
        return RunRules(prices=prices)
    return RunRules(prices=prices,
                    summary_limits=dataclasses.replace(opts.limits, stall_s=opts.stall_s or DISPLAY_STALL_S),
                    repeats=opts.limits.max_repeats or DISPLAY_REPEATS)


def make_deliverer(opts: Options) -> Any:
    """The alert senders of the options (``alerts.Deliverer``; it may have no target).

    Raises:
        AlertSetupError: ``--alert`` without Apprise, or a URL it doesn't know.
    """
    from .outlets.alerts import Deliverer

    return Deliverer(list(opts.alerts), opts.alert_cmd)


def run_report(opts: Options, rules: RunRules) -> int:
    """``--report``: read the logs, print the table (or ``--json``); 2 when a path can't be read."""
    from .views.report import ReportError, build_report

    try:
        report = build_report(list(opts.files), opts.by, opts.since_ms, opts.until_ms,
                              on_error=lambda msg: _error(f"{msg} (skipped)"), rules=rules)
    except ReportError as err:
        _error(str(err))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    try:
        if opts.json:
            from .views.summary import dumps_json

            sys.stdout.buffer.write(dumps_json(report.to_json()))
            sys.stdout.flush()
        else:
            from .views.plain import make_console
            from .views.report import render_report

            console = make_console()
            # a file or a pipe: no width limit (every figure and name whole); a terminal: its width
            render_report(report, console, console.width if console.is_terminal else None)
    except (BrokenPipeError, OutputClosed):
        from .headless import stdout_closed

        stdout_closed()
        return 128 + signal.SIGPIPE
    return EXIT_USAGE if report.unreadable and not report.total.runs else EXIT_OK


def run_compare(opts: Options, rules: RunRules) -> int:
    """``--compare A B``: read both runs, print the comparison (or ``--json``); 4 when a
    ``--fail-if`` gate holds (each said on stderr), 2 when a run can't be read."""
    from .views.compare import EXIT_GATE, CompareError, compare, load_side

    try:
        a, b = (load_side(spec, opts.format, rules) for spec in opts.compare or [])
    except CompareError as err:
        _error(str(err))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    comp = compare(a, b, list(opts.gates))
    try:
        if opts.json:
            from .views.summary import dumps_json

            sys.stdout.buffer.write(dumps_json(comp.to_json()))
            sys.stdout.flush()
        else:
            from .views.compare import print_comparison
            from .views.plain import make_console

            console = make_console()
            # a terminal: its width; a file or a pipe: COLUMNS when set, else 120 (two columns of calls)
            width = console.width if console.is_terminal else int(os.environ.get("COLUMNS") or 0) or 120
            print_comparison(comp, console, max(40, width))
    except (BrokenPipeError, OutputClosed):
        from .headless import stdout_closed

        stdout_closed()
        return 128 + signal.SIGPIPE
    for gate in comp.unknown_gates:
        _error(f"--fail-if {gate.text}: not checked, {gate.metric} is unknown for a run")
    failed = comp.failed_gates
    if failed:
        _error(f"--fail-if: {', '.join(g.text for g in failed)} (exit {EXIT_GATE})")
        return EXIT_GATE
    return EXIT_OK


def otlp_problem(opts: Options) -> str | None:
    """Why ``--otlp`` or ``--export FILE.otlp.json`` can't run here (the ``[otel]`` extra is missing,
    an unsupported protocol), as one line; None when they can (or aren't asked for)."""
    wants_file = bool(opts.export) and opts.export.lower().endswith(".otlp.json")
    if not opts.otlp and not wants_file:
        return None
    from .outlets.otlp import OtlpUnavailable, check_available

    try:
        check_available(need_exporter=opts.otlp)
    except OtlpUnavailable as err:
        return str(err)
    return None


def tui_possible() -> bool:
    """TUI only when stdout and stderr are terminals and /dev/tty can be opened, or when
    textual-serve runs us for a browser tab (its web driver talks over stdin/stdout)."""
    if os.environ.get("CURSOR_WATCH_NO_TUI"):
        return False
    if served_in_browser():
        return True
    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        return False
    try:
        fd = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        return False
    os.close(fd)
    try:
        import textual  # noqa: F401
    except ImportError:
        return False
    return True


def serve(opts: Options, argv: list[str]) -> int:
    """``cursor-watch serve``: the TUI in a browser (:func:`cursor_watch.tui.serve.serve_in_browser`)."""
    from .tui.serve import serve_in_browser

    return serve_in_browser(opts.host, opts.port, argv)


