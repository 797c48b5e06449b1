"""The watch off the TUI: ``--plain`` (the default when stdout is no terminal) and ``--summary``.

Regular files read to their end are replayed in the calling thread, without an event loop
(:func:`run_summary_replay`, :func:`run_plain_replay`: the same output and exit status for less
CPU); a pipe, a spawned command, ``--follow``, ``--save``, ``--speed`` and the outlets that need
the loop run on it (:func:`run_headless`). Every one builds its outlets with
:func:`cursor_watch.outlets.wiring.start_outlets`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from typing import Any

from .lazy import lazy_module
from .options import Options, Services
from .output import OutputClosed
from .output import error_line as _error
from .outlets.wiring import start_outlets
from .stream.sources import open_sources
from .stream.watch import Watch

asyncio = lazy_module("asyncio")  # imported when an event loop runs (not by a --summary of files)


def stdout_closed() -> None:
    """Point stdout at /dev/null so the interpreter's last flush can't fail loudly."""
    import os

    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def linger(metrics: Any) -> None:
    """``--metrics`` after a replay ended: stdout is closed (a reader of the output gets its end),
    one line on stderr, and the metrics are served until SIGINT, SIGTERM or SIGHUP."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    stdout_closed()
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda _n, _f: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        _error(f"the replay has ended; serving its metrics on {metrics.server.url} until Ctrl+C")
        while not stop.wait(0.5):
            pass
        metrics.close()  # (a second Ctrl+C while it closes changes nothing)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def report_unreadable(watch: Watch) -> None:
    """One line on stderr per source that could not be read (the others were watched)."""
    if len(watch.feeds) > 1:
        for feed in watch.feeds:
            if feed.error:
                _error(f"{feed.error} (skipped)")


def write_end_files(opts: Options, watch: Watch) -> None:
    """``--json-out`` and ``--export``, when the watch ends (each failure: one line on stderr),
    then release the sources (kept open until now: an export re-reads payloads from them)."""
    from .views.export import write_export_file
    from .views.summary import write_json_out

    runs = watch.runs()
    write_json_out(opts.json_out, runs)
    write_export_file(opts.export, runs, opts.export_max_chars, opts.redact)
    for feed in watch.feeds:
        feed.source.close()


def _replayable_options(opts: Options) -> bool:
    """The options let regular files be read without an event loop (:meth:`Watch.replay`)."""
    return not (not opts.files or "-" in opts.files or opts.command or opts.follow or opts.save or opts.speed
                or opts.otlp or opts.alerting)


def run_summary_replay(opts: Options, services: Services) -> int | None:
    """``--summary`` of regular files read to their end, without an event loop
    (:meth:`cursor_watch.stream.watch.Watch.replay`: the same summary, notes and exit status as
    :func:`run_headless`, for less CPU: no loop, no reading thread, no ``asyncio`` import).

    Returns the exit status, or None when the sources need the event loop (a pipe, a command,
    ``--follow``, ``--save``, ``--speed``, ``--otlp``, alerts, a path that is no regular file);
    ``--metrics`` counts the runs here too.

    Raises:
        SourceError: as :func:`run_headless` (a bad combination of paths, no file could be read).
    """
    if not _replayable_options(opts):
        return None
    sources, directories = open_sources(list(opts.files), None)
    watch = Watch(sources, result_grace=opts.result_grace, directories=directories, fmt=opts.format,
                  rules=services.rules)
    start_outlets(watch, opts.outlets, metrics=services.metrics, alerts=False)  # (metrics need no loop)
    if not watch.replayable():
        return None
    return print_summary(opts, watch, watch.replay(lambda run, changes: None, close=False))


def run_plain_replay(opts: Options, services: Services) -> int | None:
    """``--plain`` of regular files read to their end, without an event loop (as
    :func:`run_summary_replay`): the same transcript, end files and exit status as
    :func:`run_headless` (its alert checks show nothing for a replay without alert options),
    for less CPU (0.92 of it on the dense stream, paired: bench/README.md).

    Returns the exit status, or None when the sources or options need the event loop (those of
    :func:`run_summary_replay`, ``--alert-replay``).

    Raises:
        SourceError: as :func:`run_headless`.
    """
    if not _replayable_options(opts) or opts.alert_replay:
        return None
    from .views.plain import RunsPrinter, make_console

    sources, directories = open_sources(list(opts.files), None)
    printer = RunsPrinter(make_console(), show_thinking=opts.thinking,
                          several=len(sources) > 1 or bool(directories))
    watch = Watch(sources, result_grace=opts.result_grace, directories=directories, reading_at_once=1,
                  fmt=opts.format, rules=services.rules)
    start_outlets(watch, opts.outlets, metrics=services.metrics, alerts=False)
    if not watch.replayable():
        return None
    try:
        code = watch.replay(printer.handle, close=False)
    except OutputClosed:  # the reader went away (`| head`)
        stdout_closed()
        write_end_files(opts, watch)
        return 128 + signal.SIGPIPE
    report_unreadable(watch)
    write_end_files(opts, watch)
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()
    return code


def print_summary(opts: Options, watch: Watch, code: int) -> int:
    """The end of a ``--summary`` watch: unreadable sources on stderr, ``--json-out`` and
    ``--export``, then the summary on stdout (``--json``: the JSON object); ``code`` (the
    watch's exit status) or 128+SIGPIPE when stdout went away."""
    from .views.summary import write_summaries

    report_unreadable(watch)
    runs = watch.runs()
    write_end_files(opts, watch)
    try:
        if opts.json:
            write_summaries(runs, sys.stdout.buffer.write)
            sys.stdout.flush()
        else:
            from .views.plain import make_console, print_summaries

            print_summaries(runs, make_console())
    except (BrokenPipeError, OutputClosed):
        stdout_closed()  # the reader went away (`| head`): quiet, as --plain
        return 128 + signal.SIGPIPE
    return code


def _enforced(alert: Any) -> None:
    _error(f"{alert.message}: stopping the command (--enforce)")


async def run_headless(opts: Options, services: Services) -> int:
    """``--plain`` (the default off a terminal) and ``--summary`` on the event loop."""
    # --summary --json needs no Rich: its import is a tenth of the start-up
    from .views.export import needs_payloads

    sources, directories = open_sources(list(opts.files), list(opts.command) or None, follow=opts.follow,
                                        save_path=opts.save)
    several = len(sources) > 1 or bool(directories)
    if needs_payloads(opts.export) or (opts.otlp and _content_env()):
        for source in sources:  # a pipe's payloads can only be re-read from a copy
            if source.kind in ("stdin", "process"):
                source.enable_spool()
    if opts.summary:
        watch = Watch(sources, speed=opts.speed, result_grace=opts.result_grace, directories=directories,
                      follow=opts.follow, fmt=opts.format, rules=services.rules)
        outlets = start_outlets(watch, opts.outlets, deliverer=services.deliverer, metrics=services.metrics,
                                alerts=opts.alerting, on_enforced=_enforced)
        outlets.start_ticks()
        try:
            try:
                code = await watch.run(lambda run, changes: None, close=False)
            finally:
                outlets.stop()
            return print_summary(opts, watch, code)
        finally:
            outlets.finish()  # after the summary: a slow backend never delays it

    from .views.plain import RunsPrinter, make_console

    console = make_console()
    printer = RunsPrinter(console, show_thinking=opts.thinking, several=several)
    # one file at a time while catching up, so each file's runs print together
    watch = Watch(sources, speed=opts.speed, result_grace=opts.result_grace, on_stderr=printer.stderr,
                  directories=directories, follow=opts.follow, reading_at_once=1, fmt=opts.format,
                  rules=services.rules)
    # stalls are shown (after 5 minutes unless --stall), budgets and alerts checked, on live runs
    outlets = start_outlets(watch, opts.outlets, deliverer=services.deliverer, metrics=services.metrics,
                            on_alert=printer.alert, on_note=printer.handle, on_quiet=printer.quiet,
                            on_enforced=_enforced)
    outlets.start_ticks()
    try:
        code = await watch.run(printer.handle, close=False)
    except OutputClosed:
        # the reader went away (`| head`): the watch is stopped, a child terminated
        outlets.stop(quiet=True)
        stdout_closed()
        outlets.finish()
        write_end_files(opts, watch)
        return 128 + signal.SIGPIPE
    except BaseException:
        outlets.stop(quiet=True)
        outlets.finish()
        raise
    outlets.stop()
    outlets.finish()
    report_unreadable(watch)
    write_end_files(opts, watch)
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()
    return code


def _content_env() -> bool:
    from .outlets.otlp import content_from_env

    return content_from_env()

