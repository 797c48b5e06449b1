"""Drive sources through the decoder into the session models, one per run.

:class:`Monitor` is the synchronous heart (bytes in, model changes out) shared by
every view; :func:`pump` is the async loop that reads a :class:`Source`, paces a
replay (``--speed``), flushes a held broken line when the stream goes idle, and
hands each batch of changes to a callback; :class:`Watch` runs one or many sources
(a :class:`Feed` each) to their end and decides the exit status (:meth:`Watch.replay`: files
read to their end, without an event loop).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..core.canonical import TIME_STREAM, Folded, RunEnd
from ..core.decode import Decoder, Invalid
from ..formats import Adapter, Reader
from ..lazy import lazy_module
from ..core.model import CHANGE_RESULT, Session
from ..core.rules import RunRules
from ..core.runs import (STDERR_TAIL, Run, RunSplitter, all_succeeded, finish_open_runs, finish_run, source_name,
                   split_changes)
from .sources import FileSource, Notice, ProcessSource, Source, SourceError, list_stream_files

asyncio = lazy_module("asyncio")  # imported when an event loop runs (not by Watch.replay)

Changes = list[tuple[str, Any]]


def _wall_ms() -> float:
    return time.time() * 1000.0


class ChangeObserver(Protocol):
    """What a :class:`Watch` gives every batch of changes to after its view: its outlets
    (:class:`cursor_watch.outlets.wiring.Outlets`). ``observe`` must never raise nor block;
    ``loop_free``: it needs no event loop (:meth:`Watch.replay` may run with it)."""

    @property
    def loop_free(self) -> bool: ...

    def observe(self, run: Run, changes: Changes) -> None: ...

SLICE = 64 * 1024  # bytes parsed (and changes delivered) at a time, at first (see next_slice)
MAX_SLICE = 1 << 20  # ... and at most (a source's chunk: sources.CHUNK)
# bytes a monitor decodes, adapts and applies at a time (Monitor.feed cuts a bigger chunk at the
# line ends nearest this): a slice's lines, events and changes stay in the CPU's caches from one
# stage to the next. Fed 1 MiB at a time, the dense stream's --summary --json took 1.15x the CPU
# of 64-256 KiB (bench/README.md)
FEED_SLICE = 128 * 1024
SLICE_S = 0.004  # a slice grows while it takes less than half this, shrinks when it takes more
YIELD_S = 0.005  # while a big chunk is read slice by slice, the event loop gets a turn this often
IDLE_FLUSH_S = 0.5  # a broken line held this long with no more input is a diagnostic
RESULT_EXIT_GRACE_S = 10.0  # a spawned command that printed `result` gets this long to exit
DIR_POLL_S = 1.0  # a followed directory is checked this often for new stream files
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BUDGET = 3  # --enforce stopped a spawned command that went past a budget


class Monitor:
    """Bytes in, model changes out: :class:`Decoder`, the agent's adapter
    (:class:`cursor_watch.formats.Reader`: native events to canonical ones), then one Session
    per run.

    A source may hold several runs (:mod:`cursor_watch.core.runs`): ``session`` is the current
    (newest) run's model, ``runs`` all of them. Changes come back as one flat list; when
    a new run begins in it, ``(runs.CHANGE_RUN, run)`` precedes that run's changes.

    Args:
        clock: epoch-ms clock: an event read live without a time of its own gets its reading
            (tests inject a fixed one).
        source: the source's path, ``-`` (stdin) or command (the summary's ``"source"``).
        source_label: its short name in views.
        reread: ``(offset, size) -> bytes`` re-reading the source (payloads by offset).
        make_session: builds each run's Session (default ``Session(clock, rules=rules)``).
        rules: what each run is judged by (:class:`~cursor_watch.core.rules.RunRules`; None: the defaults).
        fmt: the stream's format, ``auto`` (sniffed from its first objects) or one of
            :data:`cursor_watch.formats.FORMATS`; each run's ``session.agent`` is its label.
        live: False for a file replayed (not followed): an event without a time of its own
            then gets none, not the clock's. :attr:`live` may be set later (a followed file
            that has caught up is read live).
    """

    def __init__(self, clock: Callable[[], float] | None = None, source: str = "-", source_label: str = "stdin",
                 reread: Callable[[int, int], bytes] | None = None,
                 make_session: Callable[[], Session] | None = None, fmt: str = "auto", live: bool = True,
                 rules: RunRules | None = None) -> None:
        # typed decoding is each adapter's own fast path: off until the format is known (other
        # agents' lines could fit its structs: _detected gives the decoder the adapter's)
        self.decoder = Decoder()
        self.agent: str | None = None
        self.rules = rules
        make = make_session or (lambda: Session(clock, rules=rules))
        self._live = live

        def labelled() -> Session:
            session = make()
            session.replayed = not self._live
            if self.agent is not None:
                session.agent = self.agent
            return session

        self.splitter = RunSplitter(source, source_label, labelled, reread or _no_reread)
        self.reader = Reader(fmt, self._detected, live, clock)
        self._last_run = self.splitter.current
        self._switches = 0

    @property
    def live(self) -> bool:
        """Events are read as the agent writes them (see the class's ``live``)."""
        return self._live

    @live.setter
    def live(self, value: bool) -> None:
        self._live = value
        self.reader.live = value

    def _detected(self, adapter: Adapter) -> None:
        self.agent = adapter.agent
        self.decoder.typed = adapter.typed_decoder
        for run in self.splitter.runs:
            if run.session.agent is None:
                run.session.agent = adapter.agent

    @property
    def session(self) -> Session:
        """The current (newest) run's model."""
        return self.splitter.current.session

    @session.setter
    def session(self, session: Session) -> None:
        """Replace the current run's model (before anything is fed: tests set spill sizes so)."""
        self.splitter.current.session = session

    @property
    def run(self) -> Run:
        """The current (newest) run."""
        return self.splitter.current

    @property
    def runs(self) -> list[Run]:
        """Every run of the source so far, in order."""
        return self.splitter.runs

    def split(self, changes: Changes) -> list[tuple[Run, Changes]]:
        """Tag the next batch of this monitor's changes with the run(s) they belong to.

        Call it once per batch, in order: it remembers which run the last batch ended in.
        """
        start = self._last_run
        self._last_run = self.splitter.current
        if self.splitter.switches == self._switches:
            return [(start, changes)]
        self._switches = self.splitter.switches
        return split_changes(start, changes)

    def feed(self, chunk: bytes) -> Changes:
        """Frame, parse, adapt and apply ``chunk`` (any size, any boundary); the changes in order.

        A chunk bigger than :data:`FEED_SLICE` goes through in slices cut at line ends (as if
        it had been fed so: the model is the same for any cutting of a stream)."""
        if len(chunk) <= FEED_SLICE:
            return self._feed(chunk)
        changes: Changes = []
        for piece in feed_slices(chunk):
            changes += self._feed(piece)
        return changes

    def _feed(self, chunk: bytes) -> Changes:
        changes: Changes = []
        splitter = self.splitter
        # No cyclic GC inside a chunk: orjson allocates a dict per JSON object, so at the
        # default threshold (700 allocations) the collector ran every few events and
        # re-walked everything the model holds. The chunk's survivors are examined once,
        # at the first allocation after it.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            items = self.reader.adapt(self.decoder.feed(chunk))
            n = len(items)
            i = 0
            while i < n:
                run = splitter.current
                i = run.session.apply_all(items, i, changes)
                _mark_last(run, items, i)
                if i < n:  # a run start (it may begin a new run), or the end of a run kept open
                    item = items[i]
                    changes += splitter.apply(item)
                    if item.__class__ is not RunEnd:
                        _mark_last(splitter.current, items, i + 1)
                    i += 1
            # the batch's events are freed now, by their counts: not walked by the collector
            # that runs at the first allocation after it is enabled again
            items = []
        finally:
            if gc_was_enabled:
                gc.enable()
        splitter.count_lines(self.decoder.lines)
        return changes

    def items(self, chunk: bytes) -> list:
        """Frame, parse and adapt ``chunk`` without applying (for paced replay)."""
        items = self.reader.adapt(self.decoder.feed(chunk))
        self.splitter.count_lines(self.decoder.lines)
        return items

    def apply(self, item: Any) -> Changes:
        """Apply one canonical event (paced replay)."""
        changes = self.splitter.apply(item)
        _mark_last(self.splitter.current, [item], 1)
        return changes

    def _apply_batch(self, items: list) -> Changes:
        """Apply canonical ``items`` one by one (idle flush, end of input)."""
        changes: Changes = []
        for item in items:
            changes.extend(self.splitter.apply(item))
            _mark_last(self.splitter.current, [item], 1)
        return changes

    def flush(self) -> Changes:
        """Release a held broken line (the stream went idle)."""
        return self._apply_batch(self.reader.adapt(self.decoder.flush()))

    def notice(self, notice: Notice) -> Changes:
        """Record a source notice (truncation, rotation, save error) as a session note.

        A followed file that was truncated or replaced starts over: the run it held ends
        there, cut (its end note says why; never a ``result`` it did not have), and what the
        file holds next is a new run, announced by the notice as its first note.
        A run that has read nothing yet is not cut: the notice is its note.
        """
        changes = self.flush()
        if notice.kind in ("truncated", "rotated"):
            changes += self._apply_batch(self.reader.adapt(self.decoder.finish()))
            self.decoder.framer.restart()
            run = self.splitter.current
            s = run.session
            if s.events or s.invalid_lines or s.result is not None:
                self.splitter.count_lines(self.decoder.lines)
                reason = "the file was truncated" if notice.kind == "truncated" else "the file was replaced"
                self.reader.restart()
                changes.extend(self.splitter.restart(self.decoder.lines + 1, self.decoder.framer.offset, reason))
        changes.extend(self.session.add_note("source", notice.kind, notice.text))
        return changes

    def finish(self, exit_status: int | None = None, reason: str | None = None) -> Changes:
        """End of input: last line, held lines, events the adapter held, then the current run's
        end (with its end note when it has no result: ``reason`` says why when known)."""
        changes = self._apply_batch(self.reader.adapt(self.decoder.finish()))
        changes += self._apply_batch(self.reader.finish())
        self.splitter.count_lines(self.decoder.lines)
        changes += finish_open_runs(self.splitter)
        changes.extend(finish_run(self.splitter.current, exit_status, reason))
        return changes


def feed_slices(chunk: bytes) -> list[bytes]:
    """``chunk`` cut into pieces of about :data:`FEED_SLICE` bytes at line ends (a line longer
    than that is one piece; the last piece is the rest, a line's start perhaps)."""
    size = len(chunk)
    if size <= FEED_SLICE:
        return [chunk]
    out: list[bytes] = []
    start = 0
    while start < size:
        cut = chunk.find(b"\n", start + FEED_SLICE)
        end = size if cut < 0 else cut + 1
        out.append(chunk[start:end])
        start = end
    return out


def _mark_last(run: Run, items: list, stop: int) -> None:
    """Remember on ``run`` the newest canonical event of ``items[:stop]`` (its end note names it:
    the native event it stands for, with its line and, when the stream gave one, its time)."""
    for k in range(stop - 1, -1, -1):
        ev = items[k]
        if ev.__class__ is Invalid:
            continue
        src = ev.src
        line = getattr(src, "line", ev.line)
        ts = None
        if ev.ts_source == TIME_STREAM and src.__class__ is not Folded:  # (merged deltas: their last one's time)
            ts = ev.ts if line == ev.line else getattr(ev, "ts_end", None)
        last = run.last_event
        if last is not None and last[2] > line:
            return
        name = ev.native_name
        kind, _, subtype = name.partition("/")
        run.last_event = (kind, subtype, line, ts)
        return


def _no_reread(offset: int, size: int) -> bytes:
    return b""


class Pacer:
    """Replays at the recorded pace times ``speed`` (from the times the stream gave).

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
        if not self.speed or item.__class__ is Invalid or item.ts_source != TIME_STREAM:
            return 0.0
        ts = item.ts
        if self._last_ts is None or ts <= self._last_ts:
            self._last_ts = max(ts, self._last_ts or ts)
            return 0.0
        gap = min((ts - self._last_ts) / 1000.0 / self.speed, self.max_gap_s)
        self._last_ts = ts
        return gap


def next_slice(size: int, took: float) -> int:
    """The size (bytes) of the next slice :func:`pump` feeds, after one of ``size`` bytes that
    took ``took`` seconds (feeding it and delivering its changes): doubled, up to
    :data:`MAX_SLICE`, when it took less than half :data:`SLICE_S`; halved, down to
    :data:`SLICE`, when it took more than :data:`SLICE_S`; else the same."""
    if took < SLICE_S / 2:
        return min(size * 2, MAX_SLICE)
    if took > SLICE_S:
        return max(size // 2, SLICE)
    return size


async def pump(
    source: Source,
    monitor: Monitor,
    on_changes: Callable[[Changes], None],
    speed: float = 0.0,
    stop: asyncio.Event | None = None,
    on_caught_up: Callable[[], None] | None = None,
) -> None:
    """Read ``source`` to its end, applying everything to ``monitor``.

    ``on_changes`` is called with each non-empty batch (one per chunk, or one per
    event when pacing). Returns at end of stream (without calling
    ``monitor.finish``: the caller decides the exit status) or when ``stop`` is set.
    ``on_caught_up`` is called once when what a file held at the start has been applied
    (a followed file then only grows slowly).
    """
    pacer = Pacer(speed) if speed else None
    if pacer is not None:
        source.applied_bytes = 0  # progress by what has been replayed, not read (FileSource.progress)
    backlog = getattr(source, "size_at_start", None) if on_caught_up is not None else None
    consumed = 0
    yielded = time.monotonic()
    size = SLICE
    if backlog is not None and backlog <= 0 and on_caught_up is not None:
        on_caught_up()
        backlog = None
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
            # slices: a 1 MiB chunk of small events is ~50k lines; yield between slices
            # (once YIELD_S has passed since the last yield: a turn of the event loop per
            # 64 KB slice cost ~5 % of a --summary) so a signal, a key press or a redraw is
            # never seconds late. A slice is sized by how long the last one took (next_slice):
            # a batch costs per line, and per batch too (the adapter's, the model's and the
            # views' rounds: 64 KB slices of a 200 MB Claude Code stream cost 6 % more CPU
            # than 1 MiB ones), so slices that take little time grow, up to a whole chunk
            total = len(got)
            start = 0
            while start < total:
                end = start + size
                t0 = time.monotonic()
                changes = monitor.feed(got if start == 0 and end >= total else got[start:end])
                if changes:
                    on_changes(changes)
                now = time.monotonic()
                size = next_slice(size, now - t0)
                start = end
                if now - yielded >= YIELD_S:
                    # after every slice, not only within a chunk: a queue that always holds
                    # a chunk (a fast reader) never makes the loop wait
                    await asyncio.sleep(0)
                    yielded = now
                    if stop is not None and stop.is_set():
                        return
        else:
            for item in monitor.items(got):
                delay = pacer.delay_for(item)
                if delay > 0:
                    await asyncio.sleep(delay)
                    if stop is not None and stop.is_set():
                        return
                changes = monitor.apply(item)
                source.applied_bytes = item.offset + item.size  # a paced replay's progress
                if changes:
                    on_changes(changes)
        if backlog is not None:
            consumed += len(got)
            if consumed >= backlog and on_caught_up is not None:
                backlog = None
                on_caught_up()


class Feed:
    """One source being watched: the source, its :class:`Monitor` and the runs found in it.

    Attributes:
        source: the source (started by the watch when its turn comes).
        monitor: decoder and runs of this source.
        stderr_tail: the last ``STDERR_TAIL`` stderr lines of a spawned command.
        error: why the source could not be read (one line), else None.
        state: ``queued`` (not opened yet), ``reading``, ``done`` or ``error``.
        caught_up: a file's content at start has been applied (a followed file goes on).
    """

    def __init__(self, source: Source, clock: Callable[[], float] | None = None, fmt: str = "auto",
                 rules: RunRules | None = None) -> None:
        self.source = source
        path = getattr(source, "path", None) if source.kind in ("file", "follow") else None
        # a followed file's content at start is read as a replay (its events happened before):
        # live from when it has caught up
        self.monitor = Monitor(clock, path or "-", source_name(source.label, source.kind), source.reread, fmt=fmt,
                               live=source.kind in ("stdin", "process"), rules=rules)
        self.stderr_tail: list[str] = []
        self.error: str | None = None
        self.state = "queued"
        self._caught_up = False
        self.started = False
        self.ended = False

    @property
    def caught_up(self) -> bool:
        """A file's content at start has been applied (a followed file goes on, read live)."""
        return self._caught_up

    @caught_up.setter
    def caught_up(self, value: bool) -> None:
        self._caught_up = value
        if value and self.source.kind == "follow":
            self.monitor.live = True

    @property
    def runs(self) -> list[Run]:
        """The runs read from this source so far."""
        return self.monitor.runs

    @property
    def live(self) -> bool:
        """What it reads now is happening now: a pipe, a spawned command, or a followed file
        once its content at start has been read (a replay never is)."""
        kind = self.source.kind
        return kind in ("stdin", "process") or (kind == "follow" and self.caught_up)

    def on_stderr(self, line: str) -> None:
        """A stderr line of the spawned command: kept for the source and its current run."""
        self.stderr_tail.append(line)
        if len(self.stderr_tail) > STDERR_TAIL:
            del self.stderr_tail[: len(self.stderr_tail) - STDERR_TAIL]
        self.monitor.run.add_stderr(line)


RunChanges = Callable[[Run, Changes], None]
READING_AT_ONCE = 2  # files read at the same time while catching up (memory: each queues up to 32 MiB)


class Watch:
    """One watch from start to end: sources, pumps, signals, result grace, exit status.

    Shared by ``--plain``, ``--summary`` and the TUI. One source (a file, stdin, a spawned
    command) or many files (several FILE arguments, the files of a directory); each source
    may hold several runs. With ``directories`` and ``follow``, files that appear there later
    are picked up (checked every ``DIR_POLL_S`` seconds).

    Args:
        sources: the (not yet started) source, or a list of them (files).
        speed: replay pace (see :class:`Pacer`); 0 is as fast as possible.
        result_grace: seconds a spawned command may run on after its ``result`` (a new run
            starting in its stream cancels the countdown).
        on_signal: called (with the signal number) when SIGINT/SIGTERM/SIGHUP arrive;
            the watch stops either way and the exit status becomes 128+N.
        install_signals: install those handlers (the TUI's tests run without them).
        clock: epoch-ms clock for the model (tests freeze it).
        on_stderr: called with each stderr line of a spawned command (also kept in
            ``stderr_tail``, the last ``STDERR_TAIL`` lines, and in the current run).
        directories: directories whose new stream files are added while following.
        follow: follow files (and directories) as they grow.
        reading_at_once: files read at the same time while catching up (1 keeps the
            output of ``--plain`` in file order).
        on_feed: called with each :class:`Feed` added after the start (a new file in a
            followed directory).
        fmt: every source's format (``--format``): ``auto`` sniffs each source on its own.
        rules: what every run is judged by (:class:`~cursor_watch.core.rules.RunRules`: its prices,
            the summary's stall duration and budgets, the repeats that make it looping); None: the
            defaults.
    """

    def __init__(self, sources: Source | list[Source], speed: float = 0.0,
                 result_grace: float = RESULT_EXIT_GRACE_S,
                 on_signal: Callable[[int], None] | None = None, install_signals: bool = True,
                 clock: Callable[[], float] | None = None,
                 on_stderr: Callable[[str], None] | None = None,
                 directories: list[str] | None = None, follow: bool = False,
                 reading_at_once: int = READING_AT_ONCE,
                 on_feed: Callable[[Feed], None] | None = None, fmt: str = "auto",
                 rules: RunRules | None = None) -> None:
        self.speed = speed
        self.result_grace = result_grace
        self.on_signal = on_signal
        self.install_signals = install_signals
        self._clock = clock
        self.fmt = fmt
        self.rules = rules
        self._stderr_callback = on_stderr
        self.directories = list(directories or [])
        self.follow = follow
        self.reading_at_once = max(1, reading_at_once)
        self.on_feed = on_feed
        self.feeds: list[Feed] = []
        self.exit_code: int | None = None
        self.signal_status: int | None = None
        self.stopped_by_us = False
        self.budget_stop: str | None = None  # why --enforce stopped the command
        self.stopping = False  # asked to stop (a signal, a quit, --enforce, a result's grace)
        self._stop_event: asyncio.Event | None = None  # the same, for the event loop (see _stop)
        self._result_timer: asyncio.TimerHandle | None = None
        self._on_changes: RunChanges | None = None
        self._view_error: BaseException | None = None  # what the view raised (its output closed): it gets no more
        self._tasks: list[asyncio.Task] = []
        self._slots: asyncio.Semaphore | None = None
        self._close = True
        # the outlets (spans, metrics, alerts: cursor_watch.outlets.wiring.Outlets) get every
        # batch after the view; None: there are none
        self.outlets: ChangeObserver | None = None
        for source in sources if isinstance(sources, list) else [sources]:
            self.add_source(source)
        self._known_paths = {getattr(f.source, "path", None) for f in self.feeds}

    @property
    def clock(self) -> Callable[[], float]:
        """The epoch-ms clock of the model (the one given, else the wall clock)."""
        return self._clock or _wall_ms

    def listen(self, on_signal: Callable[[int], None] | None = None,
               on_stderr: Callable[[str], None] | None = None) -> None:
        """Set the view's callbacks after the watch was built (the app's): ``on_signal`` (a signal
        stopped the watch), ``on_stderr`` (a stderr line of a spawned command)."""
        if on_signal is not None:
            self.on_signal = on_signal
        if on_stderr is not None:
            self._stderr_callback = on_stderr

    # -- compatibility with one source -------------------------------------------------

    @property
    def monitor(self) -> Monitor:
        """The first source's monitor (the only one when watching one source)."""
        return self.feeds[0].monitor

    @property
    def source(self) -> Source:
        """The first source (the only one when watching one source)."""
        return self.feeds[0].source

    @property
    def stderr_tail(self) -> list[str]:
        """The first source's last stderr lines."""
        return self.feeds[0].stderr_tail if self.feeds else []

    @property
    def source_grace(self) -> float:
        """Seconds stopping the sources may take (a child's SIGTERM grace period)."""
        return max((float(getattr(f.source, "grace", 0.0)) for f in self.feeds), default=0.0)

    # -- sources and runs ------------------------------------------------------------------

    def add_source(self, source: Source) -> Feed:
        """Watch one more source (before or during :meth:`run`)."""
        feed = Feed(source, self._clock, self.fmt, self.rules)
        feed.source.on_stderr = self._stderr_for(feed)
        self.feeds.append(feed)
        self.feeds.sort(key=lambda f: f.monitor.run.source)  # by path: the order of the summary
        if self._on_changes is not None:  # running: start it now
            self._tasks.append(asyncio.create_task(self._run_feed(feed)))
        return feed

    def _stderr_for(self, feed: Feed) -> Callable[[str], None]:
        def on_stderr(line: str) -> None:
            feed.on_stderr(line)
            if self._stderr_callback is not None:
                self._stderr_callback(line)

        return on_stderr

    def runs(self) -> list[Run]:
        """Every run of every readable source, by source path then run."""
        out = [run for feed in self.feeds if feed.error is None for run in feed.runs]
        out.sort(key=lambda r: r.key)
        return out

    def on_stderr(self, line: str) -> None:
        """A stderr line of the (first) spawned command."""
        if self.feeds:
            self._stderr_for(self.feeds[0])(line)

    # -- stopping --------------------------------------------------------------------------

    @property
    def _stop(self) -> asyncio.Event:
        """:attr:`stopping` as an ``asyncio.Event`` (made on first use: a watch run by
        :meth:`replay` has none)."""
        event = self._stop_event
        if event is None:
            event = self._stop_event = asyncio.Event()
            if self.stopping:
                event.set()
        return event

    def _set_stop(self) -> None:
        self.stopping = True
        if self._stop_event is not None:
            self._stop_event.set()

    def _on_signal(self, signum: int) -> None:
        if self.signal_status is None:
            self.signal_status = 128 + signum
        self._set_stop()
        if self.on_signal is not None:
            self.on_signal(signum)

    def interrupt(self, signum: int) -> None:
        """Stop as if signal ``signum`` had arrived (the TUI's Ctrl+C is a key, not SIGINT):
        the exit status becomes 128 + ``signum``, ``on_signal`` is called."""
        self._on_signal(signum)

    def request_stop(self) -> None:
        """Stop watching (the user quit): a spawned command is terminated, and its
        status is then not passed through (we stopped it)."""
        self.stopped_by_us = True
        self._set_stop()

    def stop_for_budget(self, reason: str) -> bool:
        """``--enforce``: a run went past a budget; stop a spawned command (TERM, then KILL after
        its grace period) and exit with :data:`EXIT_BUDGET`. Returns False (nothing stopped) when
        no command is being watched."""
        if not any(isinstance(f.source, ProcessSource) for f in self.feeds) or self.stopping:
            return False
        self.budget_stop = reason
        self.stopped_by_us = True
        self._set_stop()
        return True

    def watch_result(self) -> None:
        """After a `result` from a spawned command, give it a grace period to exit."""
        if self._result_timer is None and any(isinstance(f.source, ProcessSource) for f in self.feeds):
            loop = asyncio.get_running_loop()
            self._result_timer = loop.call_later(self.result_grace, self._stop_after_result)

    def _cancel_result_timer(self) -> None:
        if self._result_timer is not None:
            self._result_timer.cancel()
            self._result_timer = None

    def _stop_after_result(self) -> None:
        for feed in self.feeds:
            proc = getattr(feed.source, "proc", None)
            if proc is not None and proc.returncode is None:
                self.stopped_by_us = True
                self._set_stop()

    # -- running ---------------------------------------------------------------------------

    def _deliver(self, feed: Feed, changes: Changes) -> None:
        """Give a feed's changes to the view (``on_changes``), then to the outlets.

        When the view raises (``--plain | head``: its output is closed), the watch stops, every
        source included, and the view gets nothing more: :meth:`run` raises that error once,
        after the sources have ended (a run's end still reaches the outlets)."""
        if self._on_changes is None:
            return
        batches = feed.monitor.split(changes)
        process = isinstance(feed.source, ProcessSource)
        if process and len(batches) > 1:
            self._cancel_result_timer()  # a new run began: the command goes on
        for run, batch in batches:
            if self._view_error is None:
                try:
                    self._on_changes(run, batch)
                except Exception as err:  # noqa: BLE001 - raised by run() once every source has ended
                    self._view_error = err
                    self._set_stop()
            if self.outlets is not None:
                self.outlets.observe(run, batch)
            if process and any(kind == CHANGE_RESULT for kind, _ in batch):
                self.watch_result()

    async def _run_feed(self, feed: Feed) -> None:
        source = feed.source
        slots = self._slots if source.kind in ("file", "follow") and len(self.feeds) > 1 else None
        holding = False

        def caught_up() -> None:
            nonlocal holding
            feed.caught_up = True
            if source.kind == "follow":
                self._now_live(feed)
            # a followed file never ends: it gives its turn up once its backlog is read; a
            # replayed file keeps it until its run has ended (the finally below), so the next
            # file's output never comes before this one's end (--plain prints file by file)
            if holding and slots is not None and source.kind == "follow":
                holding = False
                slots.release()

        try:
            if slots is not None:
                await slots.acquire()
                holding = True
            if self.stopping:
                return
            feed.state = "reading"
            starting = asyncio.ensure_future(source.start())
            try:
                await asyncio.shield(starting)
            except SourceError as err:
                self._failed_to_start(feed, err)
                return
            except asyncio.CancelledError:
                # stopped (a signal) while starting: a command may be spawned and printing already,
                # so the start is let finish (it is short) and the source is then stopped as any
                # other (_end_feed: SIGTERM, what it printed read and saved); cancelled, it was left
                with contextlib.suppress(Exception):
                    await starting
                feed.started = starting.done() and not starting.cancelled() and starting.exception() is None
                raise
            feed.started = True
            await pump(source, feed.monitor, lambda c: self._deliver(feed, c), self.speed, self._stop,
                       on_caught_up=caught_up)
            if not self.stopping:
                await self._end_feed(feed)
        finally:
            if holding and slots is not None:
                slots.release()

    def _now_live(self, feed: Feed) -> None:
        """A followed file has been caught up: what it held at the start is read. Its unfinished
        run is live from now on (what comes next is written as we watch), so the views and
        outlets get an empty batch for it now: a run whose agent is already silent is measured
        from this moment (a stall shows without waiting for an event that may never come)."""
        run = feed.monitor.run
        s = run.session
        if (s.events or s.invalid_lines) and s.result is None and not s.ended:
            self._deliver(feed, [])

    def feed_of(self, run: Run) -> Feed | None:
        """The feed ``run`` was read from (None when it is not one of this watch's)."""
        for feed in self.feeds:
            runs = feed.runs
            if runs and (runs[-1] is run or run in runs):
                return feed
        return None

    async def _end_feed(self, feed: Feed) -> None:
        """Stop a source and finish its current run (once).

        When the watch was stopped (a signal, a quit) before a followed file, a pipe or a
        replayed file ended, a run still in progress is marked ``observed_until_stop``: it
        has no result because we stopped reading. A spawned command's run is not (we stopped
        the command: its run really ended)."""
        if not self._ending(feed):
            return
        await feed.source.stop()
        self._ended(feed)

    def _ending(self, feed: Feed) -> bool:
        """The first part of :meth:`_end_feed` (before the source is stopped): False when the
        feed has ended already or never started."""
        if feed.ended or not feed.started:
            return False
        feed.ended = True
        if self.stopping and not isinstance(feed.source, ProcessSource):
            run = feed.monitor.run
            if run.session.result is None and not run.session.ended:
                run.observed_until_stop = True
        return True

    def _ended(self, feed: Feed) -> None:
        """The rest of :meth:`_end_feed` (the source stopped): its error, the run's end."""
        if feed.source.error:
            self._deliver(feed, feed.monitor.session.add_note("source", "error", feed.source.error))
        exit_status = feed.source.exit_status if isinstance(feed.source, ProcessSource) else None
        self._deliver(feed, feed.monitor.finish(exit_status, self._end_reason(feed, exit_status)))
        feed.state = "done" if feed.state != "error" else "error"
        if self._close:
            feed.source.close()

    def _end_reason(self, feed: Feed, exit_status: int | None) -> str | None:
        """Why a source's last run ended, when something other than its input ending is
        known: cursor-watch was signalled or stopped the command, or the child was killed."""
        if self.signal_status is not None:
            num = self.signal_status - 128
            try:
                name = f" ({signal.Signals(num).name})"
            except ValueError:
                name = ""
            return f"cursor-watch was stopped by signal {num}{name}"
        if self.stopped_by_us and isinstance(feed.source, ProcessSource):
            return "cursor-watch stopped the command"
        if self.stopped_by_us:
            return "cursor-watch was closed before the input ended"
        if feed.source.error:
            return f"the source failed: {feed.source.error}"
        return None  # a signal in the child's exit status is told by finish_run

    async def _watch_directories(self) -> None:
        while True:
            await asyncio.sleep(DIR_POLL_S)
            for directory in self.directories:
                for path in list_stream_files(directory):
                    if path not in self._known_paths:
                        self._known_paths.add(path)
                        feed = self.add_source(FileSource(path, follow=True))
                        if self.on_feed is not None:
                            self.on_feed(feed)

    async def run(self, on_changes: RunChanges, close: bool = True) -> int:
        """Start the sources, pump them to their end (or until stopped), finish the runs.

        ``on_changes(run, changes)`` is called with each batch of model changes.
        With ``close`` False the sources' files stay open (a view re-reads payloads
        from the spool): call ``source.close()`` on each feed when done.
        Returns the exit status (see :meth:`exit_status`); also kept as ``exit_code``.
        Raises :class:`~cursor_watch.stream.sources.SourceError` when no source could be read.
        """
        loop = asyncio.get_running_loop()
        sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if self.install_signals else ()
        for sig in sigs:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._on_signal, sig)
        self._on_changes = on_changes
        self._close = close
        self._slots = asyncio.Semaphore(self.reading_at_once)
        self._tasks = [asyncio.create_task(self._run_feed(feed)) for feed in list(self.feeds)]
        dir_task = asyncio.create_task(self._watch_directories()) if self.directories and self.follow else None
        stop_task = asyncio.create_task(self._stop.wait())
        try:
            while not self.stopping:
                pending = {t for t in self._tasks if not t.done()}
                if not pending and dir_task is None:
                    break
                await asyncio.wait(pending | {stop_task} | ({dir_task} if dir_task else set()),
                                   return_when=asyncio.FIRST_COMPLETED)
                if dir_task is not None and dir_task.done():
                    dir_task.result()  # an error in the directory watch is a bug: raise it
                if any(t.done() and not t.cancelled() and t.exception() is not None for t in self._tasks):
                    self._set_stop()  # a source's task failed: stop the others too (raised below)
        finally:
            stop_task.cancel()
            if dir_task is not None:
                dir_task.cancel()
            for task in self._tasks:
                if not task.done():
                    task.cancel()
            # every task's end is awaited, and its error retrieved (raised below, the first one)
            ends = await asyncio.gather(*self._tasks, return_exceptions=True)
            for feed in self.feeds:
                await self._end_feed(feed)
            self._cancel_result_timer()
            for sig in sigs:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(sig)
        if self._view_error is not None:
            raise self._view_error
        for end in ends:
            if isinstance(end, BaseException) and not isinstance(end, asyncio.CancelledError):
                raise end
        return self._outcome()

    def _outcome(self) -> int:
        """The end of :meth:`run` and :meth:`replay`: raises :class:`SourceError` when no source
        could be read, else the exit status (kept as ``exit_code``)."""
        errors = [f.error for f in self.feeds if f.error]
        if errors and len(errors) == len(self.feeds) and not self.directories:
            raise SourceError(errors[0] if len(errors) == 1 else f"no stream could be read: {errors[0]}")
        self.exit_code = self.exit_status()
        return self.exit_code

    # -- files read to their end, without an event loop -------------------------------------

    def replayable(self) -> bool:
        """:meth:`replay` can watch these sources: every one a regular file read to its end (not
        followed, nor copied by ``--save``), no pace (``--speed``), no outlet that needs the event
        loop (``--otlp``, alerts; one whose ``loop_free`` is true, ``--metrics``'s, may be there),
        and the watch not started yet."""
        return (bool(self.feeds) and not self.follow and not self.speed
                and (self.outlets is None or self.outlets.loop_free)
                and self._on_changes is None
                and all(f.source.__class__ is FileSource and not f.source.follow and f.source.save is None
                        and f.source.spool is None and os.path.isfile(f.source.path) for f in self.feeds))

    def replay(self, on_changes: RunChanges, close: bool = True) -> int:
        """:meth:`run` for :meth:`replayable` sources, in the calling thread, without an event loop.

        Each file is read in turn to its end in ``sources.CHUNK`` (1 MiB) pieces, fed to its
        monitor in slices (:func:`feed_slices`; nothing else waits for a turn); each slice's
        changes go to ``on_changes`` (the view: a ``--plain`` transcript) and the outlets, as from
        :meth:`run`. ``on_changes`` and ``close`` are as for :meth:`run`, and so are the runs,
        their end notes, the errors (a file that can't be opened: :class:`SourceError` when no
        file could be read, a read error) and the exit status. SIGINT, SIGTERM and SIGHUP stop
        it after the slice being fed, as they stop :meth:`run` (handlers installed when called
        from the main thread, the previous ones put back at the end).

        Raises:
            SourceError: no source could be read (as :meth:`run`).
            Exception: what ``on_changes`` raised (its output closed: ``OutputClosed``), once the
                sources have ended, as :meth:`run` does; it got nothing after that.
        """
        self._on_changes = on_changes
        self._close = close
        previous: dict[int, Any] = {}
        if self.install_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                previous[sig] = signal.signal(sig, lambda signum, _frame: self._on_signal(signum))
        try:
            for feed in list(self.feeds):
                if self.stopping:
                    break
                self._replay_feed(feed)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for feed in self.feeds:
                self._end_replayed(feed)
        if self._view_error is not None:
            raise self._view_error
        return self._outcome()

    def _end_replayed(self, feed: Feed) -> None:
        """:meth:`_end_feed` for a file of :meth:`replay` (its input closed in this thread)."""
        if self._ending(feed):
            feed.source.close_input()  # type: ignore[attr-defined]
            self._ended(feed)

    def _failed_to_start(self, feed: Feed, err: SourceError) -> None:
        """A source that could not be opened or started: the feed's error, shown."""
        feed.error = str(err)
        feed.state = "error"
        self._deliver(feed, [])

    def _replay_feed(self, feed: Feed) -> None:
        """One file of :meth:`replay`: :meth:`_run_feed` and :func:`pump` for a file read in
        this thread, ended when read (when stopped, :meth:`replay` ends it)."""
        source: FileSource = feed.source  # type: ignore[assignment]
        feed.state = "reading"
        try:
            source.open()
        except SourceError as err:
            self._failed_to_start(feed, err)
            return
        feed.started = True
        backlog = source.size_at_start
        monitor = feed.monitor
        if backlog <= 0:
            feed.caught_up = True
        while not self.stopping:
            chunk = source.read_chunk()
            if not chunk:
                break
            # a slice at a time, as the pump's slices: its changes are delivered (a --plain
            # transcript printed) at once, and a signal stops the replay after the slice
            for piece in feed_slices(chunk):
                changes = monitor.feed(piece)
                if changes:
                    self._deliver(feed, changes)
                if self.stopping:
                    break
            if not feed.caught_up and source.bytes_read >= backlog:
                feed.caught_up = True
        if not self.stopping:
            self._end_replayed(feed)

    def exit_status(self) -> int:
        """The exit-status contract (see ``cli``): signal, then a budget stop, then a child's status,
        then the runs.

        Several runs: 0 when every run ended with a successful ``result`` (and every source
        could be read), else 1.
        """
        if self.signal_status is not None:
            return self.signal_status
        if self.budget_stop is not None:
            return EXIT_BUDGET
        for feed in self.feeds:
            if isinstance(feed.source, ProcessSource) and not self.stopped_by_us:
                if feed.source.exit_status not in (None, 0):
                    return feed.source.exit_status
        if any(f.error for f in self.feeds):
            return EXIT_FAILED
        return EXIT_OK if all_succeeded(self.runs()) else EXIT_FAILED
