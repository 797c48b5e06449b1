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
import signal
import sys
from dataclasses import dataclass, field

from . import __version__
from .samples import DEFAULT_SAMPLE, list_samples, sample_path
from .sources import ProcessSource, Source, SourceError, open_source

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
RESULT_EXIT_GRACE_S = 10.0  # a child that printed `result` gets this long to exit
STDERR_TAIL = 200


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
    p.add_argument("file", nargs="?", help="stream file to replay; '-' or nothing reads piped stdin")
    p.add_argument("-f", "--follow", action="store_true", help="keep reading FILE as it grows (like tail -f)")
    p.add_argument("--save", metavar="PATH", help="append every raw line received to PATH, before parsing")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--plain", action="store_true", help="print a live plain transcript (no TUI)")
    mode.add_argument("--summary", action="store_true", help="read to the end and print a summary")
    p.add_argument("--json", action="store_true", help="with --summary: one JSON object on stdout")
    p.add_argument("--speed", type=float, default=0.0, metavar="X",
                   help="replay FILE at its recorded pace times X (0, the default: as fast as possible)")
    p.add_argument("--thinking", action="store_true", help="--plain: print thinking blocks too")
    p.add_argument("--result-grace", type=float, default=RESULT_EXIT_GRACE_S, metavar="S",
                   help="spawn mode: seconds a command may run on after its result before it is stopped "
                        f"(default {RESULT_EXIT_GRACE_S:g})")
    p.add_argument("--sample", nargs="?", const=DEFAULT_SAMPLE, metavar="NAME",
                   help=f"replay a shipped sample stream (default {DEFAULT_SAMPLE}; see --list-samples)")
    p.add_argument("--list-samples", action="store_true", help="list the shipped sample streams")
    p.add_argument("--version", action="version", version=f"cursor-watch {__version__}")
    return p


@dataclass
class Options:
    """Parsed command line."""

    file: str | None = None
    command: list[str] = field(default_factory=list)
    follow: bool = False
    save: str | None = None
    plain: bool = False
    summary: bool = False
    json: bool = False
    speed: float = 0.0
    thinking: bool = False
    result_grace: float = RESULT_EXIT_GRACE_S


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
    file = ns.file
    if ns.sample is not None:
        if file or command:
            raise UsageError("--sample replaces FILE and the command")
        try:
            file = str(sample_path(ns.sample))
        except FileNotFoundError as err:
            raise UsageError(str(err)) from None
    if ns.result_grace < 0:
        raise UsageError("--result-grace must be >= 0")
    if ns.speed and (command or file in (None, "-")):
        raise UsageError("--speed replays a FILE")
    return Options(file=file, command=command, follow=ns.follow, save=ns.save, plain=ns.plain,
                   summary=ns.summary, json=ns.json, speed=ns.speed, thinking=ns.thinking,
                   result_grace=ns.result_grace)


def _error(message: str) -> None:
    sys.stderr.write(f"cursor-watch: {message}\n")
    sys.stderr.flush()


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
    if opts.file is None and not opts.command and sys.stdin.isatty():
        _error("no input: give a FILE, pipe a stream in, or run a command after -- (see --help)")
        return EXIT_USAGE
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


def tui_possible() -> bool:
    """TUI only when stdout and stderr are terminals and /dev/tty can be opened."""
    if os.environ.get("CURSOR_WATCH_NO_TUI"):
        return False
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


def exit_status_for(status: str, source: Source, stopped_after_result: bool, signal_status: int | None) -> int:
    """Apply the exit-status contract (module docstring)."""
    if signal_status is not None:
        return signal_status
    if isinstance(source, ProcessSource) and not stopped_after_result:
        if source.exit_status not in (None, 0):
            return source.exit_status
    return EXIT_OK if status == "success" else EXIT_FAILED


class Run:
    """One watch from start to end, without a screen: source, pump, signals, exit status.

    Shared by ``--plain`` and ``--summary``; the TUI drives the same source and
    monitor itself.
    """

    def __init__(self, opts: Options, source: Source) -> None:
        from .runner import Monitor

        self.opts = opts
        self.source = source
        self.monitor = Monitor()
        self.stderr_tail: list[str] = []
        self.signal_status: int | None = None
        self.stopped_after_result = False
        self._stop = asyncio.Event()
        self._result_timer: asyncio.TimerHandle | None = None

    def on_stderr(self, line: str) -> None:
        self.stderr_tail.append(line)
        if len(self.stderr_tail) > STDERR_TAIL:
            del self.stderr_tail[: len(self.stderr_tail) - STDERR_TAIL]

    def _on_signal(self, signum: int) -> None:
        if self.signal_status is None:
            self.signal_status = 128 + signum
        self._stop.set()

    def watch_result(self) -> None:
        """After a `result` from a spawned command, give it a grace period to exit."""
        if self._result_timer is None and isinstance(self.source, ProcessSource):
            loop = asyncio.get_running_loop()
            self._result_timer = loop.call_later(self.opts.result_grace, self._stop_after_result)

    def _stop_after_result(self) -> None:
        proc = getattr(self.source, "proc", None)
        if proc is not None and proc.returncode is None:
            self.stopped_after_result = True
            self._stop.set()

    async def run(self, on_changes) -> int:
        from .runner import pump

        loop = asyncio.get_running_loop()
        sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        for sig in sigs:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._on_signal, sig)
        self.source.on_stderr = self.on_stderr
        await self.source.start()
        pump_task = asyncio.create_task(pump(self.source, self.monitor, on_changes, self.opts.speed, self._stop))
        stop_task = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({pump_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop_task.cancel()
            if not pump_task.done():
                pump_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump_task
            await self.source.stop()
            if self._result_timer is not None:
                self._result_timer.cancel()
            for sig in sigs:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(sig)
        if pump_task.done() and not pump_task.cancelled() and pump_task.exception() is not None:
            raise pump_task.exception()  # type: ignore[misc]
        if self.source.error:
            on_changes(self.monitor.session.add_note("source", "error", self.source.error))
        exit_status = self.source.exit_status if isinstance(self.source, ProcessSource) else None
        on_changes(self.monitor.finish(exit_status))
        self.source.close()
        return exit_status_for(self.monitor.session.status, self.source, self.stopped_after_result, self.signal_status)


async def run_headless(opts: Options) -> int:
    """``--plain`` (the default off a terminal) and ``--summary``."""
    from . import model as m
    from .plain import PlainPrinter, dumps_json, make_console, print_summary, summary_json

    source = open_source(opts.file, opts.command or None, follow=opts.follow, save_path=opts.save)
    run = Run(opts, source)
    session = run.monitor.session
    if opts.summary:
        def on_changes(changes):
            for kind, _ in changes:
                if kind == m.CHANGE_RESULT:
                    run.watch_result()

        code = await run.run(on_changes)
        if opts.json:
            sys.stdout.buffer.write(dumps_json(summary_json(session, run.stderr_tail)))
            sys.stdout.flush()
        else:
            print_summary(session, make_console(), run.stderr_tail)
        return code

    printer = PlainPrinter(session, make_console(), show_thinking=opts.thinking)

    def on_plain_changes(changes):
        printer.handle(changes)
        for kind, _ in changes:
            if kind == m.CHANGE_RESULT:
                run.watch_result()

    def on_stderr(line: str) -> None:
        Run.on_stderr(run, line)
        printer.stderr(line)

    run.on_stderr = on_stderr  # type: ignore[method-assign]
    code = await run.run(on_plain_changes)
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()
    return code
