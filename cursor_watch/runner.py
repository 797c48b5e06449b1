"""Drive a source through the decoder into the session model.

:class:`Monitor` is the synchronous heart (bytes in, model changes out) shared by
every view; :func:`pump` is the async loop that reads a :class:`Source`, paces a
replay (``--speed``), flushes a held broken line when the stream goes idle, and
hands each batch of changes to a callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import time
from collections.abc import Callable
from typing import Any

from .events import Decoder, Event
from .model import CHANGE_RESULT, Session
from .sources import Notice, ProcessSource, Source

Changes = list[tuple[str, Any]]

SLICE = 64 * 1024  # bytes parsed between yields to the event loop
IDLE_FLUSH_S = 0.5  # a broken line held this long with no more input is a diagnostic
RESULT_EXIT_GRACE_S = 10.0  # a spawned command that printed `result` gets this long to exit
STDERR_TAIL = 200  # stderr lines of a spawned command kept for the summary
EXIT_OK = 0
EXIT_FAILED = 1


class Monitor:
    """Bytes in, model changes out: :class:`Decoder` + :class:`Session`.

    Args:
        clock: epoch-ms clock for events without times (tests inject a fixed one).
    """

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.decoder = Decoder()
        self.session = Session(clock)

    def feed(self, chunk: bytes) -> Changes:
        """Frame, parse and apply ``chunk`` (any size, any boundary)."""
        changes: Changes = []
        apply = self.session.apply
        # No cyclic GC inside a chunk: orjson allocates a dict per JSON object, so at the
        # default threshold (700 allocations) the collector ran every few events and
        # re-walked everything the model holds. The chunk's survivors are examined once,
        # at the first allocation after it.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            for item in self.decoder.feed(chunk):
                c = apply(item)
                if c:
                    changes += c
        finally:
            if gc_was_enabled:
                gc.enable()
        self.session.lines = self.decoder.lines
        return changes

    def items(self, chunk: bytes) -> list:
        """Frame and parse ``chunk`` without applying (for paced replay)."""
        items = self.decoder.feed(chunk)
        self.session.lines = self.decoder.lines
        return items

    def flush(self) -> Changes:
        """Release a held broken line (the stream went idle)."""
        changes: Changes = []
        for item in self.decoder.flush():
            changes.extend(self.session.apply(item))
        return changes

    def notice(self, notice: Notice) -> Changes:
        """Record a source notice (truncation, rotation, save error) as a session note."""
        changes = self.flush()
        if notice.kind in ("truncated", "rotated"):
            for item in self.decoder.finish():
                changes.extend(self.session.apply(item))
            self.decoder.framer.restart()
        changes.extend(self.session.add_note("source", notice.kind, notice.text))
        return changes

    def finish(self, exit_status: int | None = None) -> Changes:
        """End of input: last line, held lines, then the session's end."""
        changes: Changes = []
        for item in self.decoder.finish():
            changes.extend(self.session.apply(item))
        self.session.lines = self.decoder.lines
        changes.extend(self.session.finish(exit_status))
        return changes


class Pacer:
    """Replays at the recorded pace times ``speed`` (from ``timestamp_ms``).

    ``speed`` 0 means as fast as possible. Gaps are capped at ``max_gap_s`` seconds
    of wall time so a recorded 12-minute silence doesn't stall a demo.
    """

    def __init__(self, speed: float, max_gap_s: float = 5.0) -> None:
        self.speed = speed
        self.max_gap_s = max_gap_s
        self._last_ts: int | None = None
        self._wall = time.monotonic()

    def delay_for(self, item: Any) -> float:
        """Seconds to wait before applying ``item``."""
        if not self.speed or not isinstance(item, Event):
            return 0.0
        ts = item.data.get("timestamp_ms")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            return 0.0
        if self._last_ts is None or ts <= self._last_ts:
            self._last_ts = max(ts, self._last_ts or ts)
            return 0.0
        gap = min((ts - self._last_ts) / 1000.0 / self.speed, self.max_gap_s)
        self._last_ts = ts
        return gap


async def pump(
    source: Source,
    monitor: Monitor,
    on_changes: Callable[[Changes], None],
    speed: float = 0.0,
    stop: asyncio.Event | None = None,
) -> None:
    """Read ``source`` to its end, applying everything to ``monitor``.

    ``on_changes`` is called with each non-empty batch (one per chunk, or one per
    event when pacing). Returns at end of stream (without calling
    ``monitor.finish``: the caller decides the exit status) or when ``stop`` is set.
    """
    pacer = Pacer(speed) if speed else None
    while stop is None or not stop.is_set():
        timeout = IDLE_FLUSH_S if monitor.decoder.parser._held else None
        try:
            got = await source.get(timeout)
        except TimeoutError:
            changes = monitor.flush()
            if changes:
                on_changes(changes)
            continue
        if got is None:
            return
        if isinstance(got, Notice):
            on_changes(monitor.notice(got))
            continue
        if pacer is None:
            # slices: a 1 MiB chunk of small events is ~50k lines; yield between
            # slices so a signal, a key press or a redraw is never seconds late
            for start in range(0, len(got), SLICE):
                changes = monitor.feed(got[start : start + SLICE] if len(got) > SLICE else got)
                if changes:
                    on_changes(changes)
                if len(got) > SLICE:
                    await asyncio.sleep(0)
                    if stop is not None and stop.is_set():
                        return
            continue
        for item in monitor.items(got):
            delay = pacer.delay_for(item)
            if delay > 0:
                await asyncio.sleep(delay)
                if stop is not None and stop.is_set():
                    return
            changes = monitor.session.apply(item)
            if changes:
                on_changes(changes)


def exit_status_for(status: str, source: Source, stopped_by_us: bool, signal_status: int | None) -> int:
    """The exit-status contract (see ``cli``): signal, then child status, then the stream's outcome."""
    if signal_status is not None:
        return signal_status
    if isinstance(source, ProcessSource) and not stopped_by_us:
        if source.exit_status not in (None, 0):
            return source.exit_status
    return EXIT_OK if status == "success" else EXIT_FAILED


class Watch:
    """One watch from start to end: source, pump, signals, result grace, exit status.

    Shared by ``--plain``, ``--summary`` and the TUI.

    Args:
        source: the (not yet started) source.
        speed: replay pace (see :class:`Pacer`); 0 is as fast as possible.
        result_grace: seconds a spawned command may run on after its ``result``.
        on_signal: called (with the signal number) when SIGINT/SIGTERM/SIGHUP arrive;
            the watch stops either way and the exit status becomes 128+N.
        install_signals: install those handlers (the TUI's tests run without them).
        clock: epoch-ms clock for the model (tests freeze it).
        on_stderr: called with each stderr line of a spawned command (also kept in
            ``stderr_tail``, the last ``STDERR_TAIL`` lines).
    """

    def __init__(self, source: Source, speed: float = 0.0, result_grace: float = RESULT_EXIT_GRACE_S,
                 on_signal: Callable[[int], None] | None = None, install_signals: bool = True,
                 clock: Callable[[], float] | None = None,
                 on_stderr: Callable[[str], None] | None = None) -> None:
        self.source = source
        self.speed = speed
        self.result_grace = result_grace
        self.on_signal = on_signal
        self.install_signals = install_signals
        self._stderr_callback = on_stderr
        self.monitor = Monitor(clock)
        self.exit_code: int | None = None
        self.stderr_tail: list[str] = []
        self.signal_status: int | None = None
        self.stopped_by_us = False
        self._stop = asyncio.Event()
        self._result_timer: asyncio.TimerHandle | None = None

    @property
    def source_grace(self) -> float:
        """Seconds stopping the source may take (a child's SIGTERM grace period)."""
        return float(getattr(self.source, "grace", 0.0))

    def on_stderr(self, line: str) -> None:
        """A stderr line of the spawned command."""
        self.stderr_tail.append(line)
        if len(self.stderr_tail) > STDERR_TAIL:
            del self.stderr_tail[: len(self.stderr_tail) - STDERR_TAIL]
        if self._stderr_callback is not None:
            self._stderr_callback(line)

    def _on_signal(self, signum: int) -> None:
        if self.signal_status is None:
            self.signal_status = 128 + signum
        self._stop.set()
        if self.on_signal is not None:
            self.on_signal(signum)

    def request_stop(self) -> None:
        """Stop watching (the user quit): a spawned command is terminated, and its
        status is then not passed through (we stopped it)."""
        self.stopped_by_us = True
        self._stop.set()

    def watch_result(self) -> None:
        """After a `result` from a spawned command, give it a grace period to exit."""
        if self._result_timer is None and isinstance(self.source, ProcessSource):
            loop = asyncio.get_running_loop()
            self._result_timer = loop.call_later(self.result_grace, self._stop_after_result)

    def _stop_after_result(self) -> None:
        proc = getattr(self.source, "proc", None)
        if proc is not None and proc.returncode is None:
            self.stopped_by_us = True
            self._stop.set()

    async def run(self, on_changes: Callable[[Changes], None], close: bool = True) -> int:
        """Start the source, pump it to its end (or until stopped), finish the model.

        With ``close`` False the source's files stay open (a view re-reads payloads
        from the spool): call ``source.close()`` when done.
        Returns the exit status (see :func:`exit_status_for`); also kept as ``exit_code``.
        Raises :class:`~cursor_watch.sources.SourceError` when the source can't start.
        """
        loop = asyncio.get_running_loop()
        sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if self.install_signals else ()
        for sig in sigs:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._on_signal, sig)
        self.source.on_stderr = self.on_stderr

        def changed(changes: Changes) -> None:
            on_changes(changes)
            if any(kind == CHANGE_RESULT for kind, _ in changes):
                self.watch_result()

        await self.source.start()
        pump_task = asyncio.create_task(pump(self.source, self.monitor, changed, self.speed, self._stop))
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
        if close:
            self.source.close()
        self.exit_code = exit_status_for(self.monitor.session.status, self.source, self.stopped_by_us,
                                         self.signal_status)
        return self.exit_code
