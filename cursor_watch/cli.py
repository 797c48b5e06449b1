"""Command line: arguments, mode choice, exit status.

Exit status, the same in every mode:

* 0: the stream ended with a successful ``result``;
* 1: it ended with an error ``result`` or without a ``result``;
* 2: usage error or unreadable input (missing file, bad option, a command that
  can't be started), with one line on stderr and no traceback;
* spawn mode: a non-zero exit status of the child is passed through (128+N when
  it died of signal N), unless cursor-watch itself stopped it after its result;
* 128+N when cursor-watch is stopped by signal N (SIGINT 130, SIGTERM 143, SIGHUP 129).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

from . import __version__
from .samples import DEFAULT_SAMPLE, list_samples, sample_path
from .output import OutputClosed
from .output import error_line as _error
from .formats import FORMATS
from .runner import EXIT_OK, RESULT_EXIT_GRACE_S, Watch
from .sources import SourceError, open_sources

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad command line; the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, no usage dump
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (everything after ``--`` is the command to spawn)."""
    p = _Parser(
        prog="cursor-watch",
        description="Live monitor for `cursor-agent -p ... --output-format stream-json` (NDJSON).",
        epilog="Spawn mode: cursor-watch [OPTIONS] -- cursor-agent -p 'task' --output-format stream-json",
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
                   help="the agent whose stream this is (default auto: sniffed from each source's first events)")
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
    p.add_argument("--notify", action="store_true",
                   help="TUI: when a run ends, fails or waits for an answer, also ring the terminal bell and send a "
                        "desktop notification (OSC 9 and OSC 777; terminals without them ignore them)")
    otel = p.add_argument_group("OpenTelemetry (pip install 'cursor-watch[otel]')")
    otel.add_argument("--otlp", action="store_true",
                      help="send each run as a trace to an OTLP endpoint (any mode); configured by the SDK's "
                           "OTEL_EXPORTER_OTLP_* variables, http/protobuf by default, grpc supported")
    otel.add_argument("--otlp-endpoint", metavar="URL",
                      help="--otlp to URL (a base like http://host:4318 gets /v1/traces; implies --otlp)")
    otel.add_argument("--otlp-content", action="store_true",
                      help="also send the prompt, assistant text, thinking, tool arguments and results (cut at "
                           "16384 characters each); off by default, as is "
                           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
    web = p.add_argument_group("browser view (pip install 'cursor-watch[web]')")
    web.add_argument("--serve", action="store_true",
                     help="serve the TUI in a browser (textual-serve); each browser tab starts its own app on FILE|DIR")
    web.add_argument("--host", default="127.0.0.1", help="--serve: address to bind (default 127.0.0.1: this machine only)")
    web.add_argument("--port", type=int, default=8000, help="--serve: port (default 8000)")
    p.add_argument("--sample", nargs="?", const=DEFAULT_SAMPLE, metavar="NAME",
                   help=f"replay a shipped sample stream (default {DEFAULT_SAMPLE}; see --list-samples)")
    p.add_argument("--list-samples", action="store_true", help="list the shipped sample streams")
    p.add_argument("--version", action="version", version=f"cursor-watch {__version__}")
    return p


@dataclass
class Options:
    """Parsed command line."""

    files: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    follow: bool = False
    save: str | None = None
    plain: bool = False
    summary: bool = False
    json: bool = False
    speed: float = 0.0
    thinking: bool = False
    result_grace: float = RESULT_EXIT_GRACE_S
    json_out: str | None = None
    export: str | None = None
    export_max_chars: int | None = None
    notify: bool = False
    serve: bool = False
    host: str = "127.0.0.1"
    port: int = 8000
    format: str = "auto"
    otlp: bool = False
    otlp_endpoint: str | None = None
    otlp_content: bool = False

    @property
    def file(self) -> str | None:
        """The one FILE given (None for stdin, a command, or several files)."""
        return self.files[0] if len(self.files) == 1 else None


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
    ns = build_parser().parse_args(argv)
    if ns.list_samples:
        print("\n".join(list_samples()))
        return None
    if ns.json and not ns.summary:
        raise UsageError("--json goes with --summary")
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
    if ns.serve:
        if ns.export:
            raise UsageError("--serve doesn't go with --export: each browser tab is its own app")
        if command or not files or "-" in files:
            raise UsageError("--serve starts the app once per browser tab, so it can't read stdin or run a command: "
                             "run it with --save LOG in another terminal, then --serve -f LOG")
        if ns.plain or ns.summary or ns.save:
            raise UsageError("--serve serves the TUI: it doesn't go with --plain, --summary or --save")
        if not 0 < ns.port < 65536:
            raise UsageError("--port must be between 1 and 65535")
    return Options(files=files, command=command, follow=ns.follow, save=ns.save, plain=ns.plain,
                   summary=ns.summary, json=ns.json, speed=ns.speed, thinking=ns.thinking,
                   result_grace=ns.result_grace, json_out=ns.json_out, export=ns.export,
                   export_max_chars=ns.export_max_chars, notify=ns.notify, serve=ns.serve, host=ns.host, port=ns.port,
                   format=ns.format, otlp=ns.otlp or bool(ns.otlp_endpoint), otlp_endpoint=ns.otlp_endpoint,
                   otlp_content=ns.otlp_content)


def _check_export(ns: argparse.Namespace) -> None:
    """``--export PATH``: a known extension; ``--export-max-chars N``: with a Markdown PATH.

    Raises:
        UsageError: one line.
    """
    from .export import MIN_MAX_CHARS, export_format

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
        opts = parse_args(argv)
    except UsageError as err:
        _error(f"{err} (see cursor-watch --help)")
        return EXIT_USAGE
    if opts is None:
        return EXIT_OK
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
    try:
        if not opts.plain and not opts.summary and tui_possible():
            from .app import run_tui  # Textual is imported only on this path

            return run_tui(opts)
        return asyncio.run(run_headless(opts))
    except SourceError as err:
        _error(str(err))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


def otlp_problem(opts: Options) -> str | None:
    """Why ``--otlp`` or ``--export FILE.otlp.json`` can't run here (the ``[otel]`` extra is missing,
    an unsupported protocol), as one line; None when they can (or aren't asked for)."""
    wants_file = bool(opts.export) and opts.export.lower().endswith(".otlp.json")
    if not opts.otlp and not wants_file:
        return None
    from .otlp import OtlpUnavailable, check_available

    try:
        check_available(need_exporter=opts.otlp)
    except OtlpUnavailable as err:
        return str(err)
    return None


def start_otlp(opts: Options, watch: Watch) -> Any:
    """``--otlp``: see :func:`cursor_watch.otlp.start_for`."""
    if not opts.otlp:
        return None
    from .otlp import start_for

    return start_for(opts, watch)


def finish_otlp(opts: Options, outlet: Any) -> None:
    """See :func:`cursor_watch.otlp.finish_for`."""
    if outlet is not None:
        from .otlp import finish_for

        finish_for(opts, outlet)


def tui_possible() -> bool:
    """TUI only when stdout and stderr are terminals and /dev/tty can be opened, or when
    textual-serve runs us for a browser tab (its web driver talks over stdin/stdout)."""
    if os.environ.get("CURSOR_WATCH_NO_TUI"):
        return False
    if "web_driver" in os.environ.get("TEXTUAL_DRIVER", ""):
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


SERVE_DROP = {"--serve": 0, "--host": 1, "--port": 1}  # options of the server, not of each tab's app


def serve(opts: Options, argv: list[str]) -> int:
    """``--serve``: the TUI in a browser, one app per tab (textual-serve, an optional extra).

    Bound to 127.0.0.1 unless ``--host`` says otherwise; it has no authentication, so
    another address gets a warning on stderr. Returns when the server stops (Ctrl+C).
    """
    try:
        from textual_serve.server import Server
    except ImportError:
        _error("--serve needs textual-serve: pip install 'cursor-watch[web]'")
        return EXIT_USAGE
    args: list[str] = []
    skip = 0
    for arg in argv:
        if skip:
            skip -= 1
            continue
        name = arg.split("=", 1)[0]
        if name in SERVE_DROP:
            skip = SERVE_DROP[name] if "=" not in arg else 0
            continue
        args.append(arg)
    # each tab runs this same program on the same FILEs, from the same directory
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "cursor_watch", *args])
    if opts.host not in ("127.0.0.1", "localhost", "::1"):
        _error(f"warning: serving on {opts.host}:{opts.port} with no authentication: "
               "anyone who can reach it can watch these runs")
    sys.stderr.write(f"cursor-watch: serving on http://{opts.host}:{opts.port} (Ctrl+C stops)\n")
    sys.stderr.flush()
    # the page is cursor-watch's own template (textual-serve's asks a web font service for its font:
    # on a machine without internet the page waited on it); its assets are textual-serve's static files
    templates = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web", "templates")
    Server(command, host=opts.host, port=opts.port, title="cursor-watch", templates_path=templates).serve()
    return EXIT_OK


def _content_env() -> bool:
    from .otlp import content_from_env

    return content_from_env()


def _stdout_closed() -> None:
    """Point stdout at /dev/null so the interpreter's last flush can't fail loudly."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def report_unreadable(watch: Watch) -> None:
    """One line on stderr per source that could not be read (the others were watched)."""
    if len(watch.feeds) > 1:
        for feed in watch.feeds:
            if feed.error:
                _error(f"{feed.error} (skipped)")


def _write_end_files(opts: Options, watch: Watch) -> None:
    """``--json-out`` and ``--export``, when the watch ends (each failure: one line on stderr),
    then release the sources (kept open until now: an export re-reads payloads from them)."""
    from .export import write_export_file
    from .summary import write_json_out

    runs = watch.runs()
    write_json_out(opts.json_out, runs)
    write_export_file(opts.export, runs, opts.export_max_chars)
    for feed in watch.feeds:
        feed.source.close()


async def run_headless(opts: Options) -> int:
    """``--plain`` (the default off a terminal) and ``--summary``."""
    # --summary --json needs no Rich: its import is a tenth of the start-up
    from .export import needs_payloads
    from .summary import write_summaries

    sources, directories = open_sources(opts.files, opts.command or None, follow=opts.follow, save_path=opts.save)
    several = len(sources) > 1 or bool(directories)
    if needs_payloads(opts.export) or (opts.otlp and _content_env()):
        for source in sources:  # a pipe's payloads can only be re-read from a copy
            if source.kind in ("stdin", "process"):
                source.enable_spool()
    if opts.summary:
        watch = Watch(sources, speed=opts.speed, result_grace=opts.result_grace, directories=directories,
                      follow=opts.follow, fmt=opts.format)
        outlet = start_otlp(opts, watch)
        try:
            code = await watch.run(lambda run, changes: None, close=False)
            report_unreadable(watch)
            runs = watch.runs()
            _write_end_files(opts, watch)
            try:
                if opts.json:
                    write_summaries(runs, sys.stdout.buffer.write)
                    sys.stdout.flush()
                else:
                    from .plain import make_console, print_summaries

                    print_summaries(runs, make_console())
            except (BrokenPipeError, OutputClosed):
                _stdout_closed()  # the reader went away (`| head`): quiet, as --plain
                return 128 + signal.SIGPIPE
        finally:
            finish_otlp(opts, outlet)  # after the summary: a slow backend never delays it
        return code

    from .plain import RunsPrinter, make_console

    console = make_console()
    printer = RunsPrinter(console, show_thinking=opts.thinking, several=several)
    # one file at a time while catching up, so each file's runs print together
    watch = Watch(sources, speed=opts.speed, result_grace=opts.result_grace, on_stderr=printer.stderr,
                  directories=directories, follow=opts.follow, reading_at_once=1, fmt=opts.format)
    outlet = start_otlp(opts, watch)
    try:
        code = await watch.run(printer.handle, close=False)
    except OutputClosed:
        # the reader went away (`| head`): the watch is stopped, a child terminated
        _stdout_closed()
        finish_otlp(opts, outlet)
        _write_end_files(opts, watch)
        return 128 + signal.SIGPIPE
    except BaseException:
        finish_otlp(opts, outlet)
        raise
    finish_otlp(opts, outlet)
    report_unreadable(watch)
    _write_end_files(opts, watch)
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()
    return code
