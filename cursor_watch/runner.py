"""Drive a source through the decoder into the session model.

:class:`Monitor` is the synchronous heart (bytes in, model changes out) shared by
every view; :func:`pump` is the async loop that reads a :class:`Source`, paces a
replay (``--speed``), flushes a held broken line when the stream goes idle, and
hands each batch of changes to a callback.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from .events import Decoder, Event
from .model import Session
from .sources import Notice, Source

Changes = list[tuple[str, Any]]

IDLE_FLUSH_S = 0.5  # a broken line held this long with no more input is a diagnostic


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
        for item in self.decoder.feed(chunk):
            changes.extend(apply(item))
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
            changes = monitor.feed(got)
            if changes:
                on_changes(changes)
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
