"""The payload scan of a search: raw stream bytes in, matches per tool-call line out.

A search must look inside tool payloads, which stay in the stream (the model keeps byte
spans). :func:`scan` reads a byte range in chunks of whole lines, finds where the query
could match (:class:`~cursor_watch.query.match.RawFilter`, or every line for a regular
expression), decodes those ``tool_call`` lines and counts the matches in their arguments
and in their result. It reports one record per line with matches.

On a big run it runs in a second process (``python -m cursor_watch.query.scan``, started by
:class:`ScanWorker`) so that the app's event loop, which draws the screen and reads keys,
never waits on it, and the machine's second core does the work (bench/bench_search.py).
The same function runs in-process when no second process can be used (a stream held in
memory, a small run, or a failure to start one).

Records (:data:`RECORD`, 16 bytes): ``(offset, args matches, result matches)`` for a line
at stream ``offset``; ``(offset, -1, -1)`` for a candidate line that doesn't decode alone
(an event broken over lines: the caller decodes its span); ``(offset, -2, 0)``: scanned up
to ``offset``.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ..formats import PAYLOAD_MARKERS, payload_reader
from .match import Query, payload_count

RECORD = struct.Struct("<qii")
CHUNK = 1 << 20  # bytes read and scanned at a time
DONE, UNDECODED = -2, -1


def _counts(query: Any, raw: bytes, payloads: Callable[[dict], list]) -> tuple[int, int] | None:
    """``(args, result)`` matches of a line's tool payloads, as the agent wrote them (``payloads``:
    the run's agent's reader, :func:`cursor_watch.formats.payload_reader`); (0, 0) for a line
    without any; None if it doesn't decode."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return (0, 0)
    n_args = n_result = 0
    for args, result in payloads(data):
        n_args += payload_count(query, args, None)
        n_result += payload_count(query, None, result)
    return n_args, n_result


def scan(read: Callable[[int, int], bytes], start: int, end: int | None, query: Any,
         chunk: int | None = None, markers: tuple[bytes, ...] = PAYLOAD_MARKERS,
         agent: str | None = None) -> Iterator[list[tuple[int, int, int]]]:
    """Scan stream bytes ``[start, end)`` (``end`` None: to the end as it is now).

    Yields, per chunk, the records of that chunk ending with a ``DONE`` record (the
    offset scanned up to). A chunk ends at a line end; the last line of the range is
    scanned once it ends in a newline, or at the end of the range. Only lines holding one of
    ``markers`` (the run's agent's: :func:`cursor_watch.formats.payload_markers`) or a ``\\u``
    escape are decoded, and read by ``agent``'s adapter (the run's ``session.agent``).
    """
    payloads = payload_reader(agent)
    filt = query.prefilter()
    first, others = markers[0], markers[1:]
    chunk = chunk or CHUNK
    pos = start
    while end is None or pos < end:
        want = chunk if end is None else min(chunk, end - pos)
        data = read(pos, want)
        if not data:
            break
        cut = data.rfind(b"\n") + 1
        last = len(data) < want or (end is not None and pos + len(data) >= end)
        if cut == 0:
            if not last:  # a line longer than the chunk: read more of it
                chunk *= 2
                continue
            if end is None:  # a live stream's unfinished last line: scanned when it ends
                yield [(pos, DONE, 0)]
                break
            cut = len(data)
        elif last and cut < len(data) and end is not None and pos + len(data) >= end:
            cut = len(data)  # the range ends inside an unterminated line: take it
        raw = data if cut == len(data) else data[:cut]
        if filt is not None:
            lines = []
            line_end = -1
            for p in sorted(filt.positions(raw)):
                if p < line_end:
                    continue  # another candidate in the same line
                s = raw.rfind(b"\n", 0, p) + 1
                e = raw.find(b"\n", p)
                line_end = e if e >= 0 else len(raw)
                lines.append((s, raw[s:line_end]))
        else:
            lines = []
            s = 0
            for line in raw.split(b"\n"):
                lines.append((s, line))
                s += len(line) + 1
        out: list[tuple[int, int, int]] = []
        for s, line in lines:
            if not line.strip():
                continue
            # a tool_call event has "tool_call" in its raw bytes (a type written with \u
            # escapes is the only other way): the other events (deltas...) are not decoded;
            # other agents' tool payloads have markers of their own (formats.payload_markers)
            if first in line or b"\\u" in line or (others and any(m in line for m in others)):
                counts = _counts(query, line, payloads)
                if counts is None:
                    out.append((pos + s, UNDECODED, UNDECODED))
                elif counts[0] or counts[1]:
                    out.append((pos + s, counts[0], counts[1]))
        pos += cut
        out.append((pos, DONE, 0))
        yield out
        if last:
            break


def _child(argv: list[str]) -> int:
    """``python -m cursor_watch.query.scan SPEC``: scan, writing records to stdout."""
    spec = json.loads(argv[0])
    fd = spec.get("fd")
    own = False
    if fd is None:
        fd = os.open(spec["path"], os.O_RDONLY)
        own = True
    base = spec.get("base", 0)

    def read(offset: int, size: int) -> bytes:
        return os.pread(fd, size, base + offset)

    redact = None
    if spec.get("redact"):  # the search of a view that redacts (--serve): count what it shows
        from ..outlets.redact import default_redactor

        redact = default_redactor()
    query = Query(spec["text"], regex=spec["regex"], redact=redact)
    markers = tuple(m.encode("latin-1") for m in spec.get("markers") or ()) or PAYLOAD_MARKERS
    out = sys.stdout.buffer
    try:
        for records in scan(read, spec["start"], spec.get("end"), query, markers=markers, agent=spec.get("agent")):
            out.write(b"".join(RECORD.pack(*r) for r in records))
            out.flush()
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    finally:
        if own:
            os.close(fd)
    return 0


class ScanWorker:
    """:func:`scan` in a second process; :meth:`poll` collects its records without waiting.

    Args:
        path, fd, base: the stream's bytes: a file path, or an open descriptor (a spool)
            inherited by the child; stream offset 0 is at ``base`` in it.
        start, end: the byte range to scan (``end`` None: to the end as it is now).
        query: the :class:`~cursor_watch.query.search.Query`.
        markers: the lines to decode (see :func:`scan`); agent: the run's agent (see :func:`scan`).

    Raises:
        OSError: the process could not be started (the caller scans in-process instead).
    """

    def __init__(self, path: str | None, fd: int | None, base: int, start: int, end: int | None, query: Any,
                 markers: tuple[bytes, ...] = PAYLOAD_MARKERS, agent: str | None = None) -> None:
        spec = {"path": path, "fd": fd, "base": base, "start": start, "end": end, "text": query.text,
                "regex": query.regex, "markers": [m.decode("latin-1") for m in markers], "agent": agent,
                "redact": getattr(query, "redact", None) is not None}
        env = dict(os.environ)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the folder cursor_watch/ is in
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen([sys.executable, "-m", "cursor_watch.query.scan", json.dumps(spec)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     pass_fds=(fd,) if fd is not None else (), env=env, start_new_session=True)
        assert self.proc.stdout is not None
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        self._buf = b""
        self.ended = False

    def poll(self, limit: int = 1 << 20) -> list[tuple[int, int, int]]:
        """Records that arrived (up to about ``limit`` bytes of them); sets :attr:`ended` at EOF."""
        if self.ended:
            return []
        try:
            data = os.read(self._out, limit)
        except BlockingIOError:
            return []
        except OSError:
            data = b""
        if not data:
            self.ended = True
            self.close()
            return []
        buf = self._buf + data
        n = len(buf) - len(buf) % RECORD.size
        self._buf = buf[n:]
        return [RECORD.unpack_from(buf, i) for i in range(0, n, RECORD.size)]

    @property
    def failed(self) -> bool:
        """The process ended badly (the caller scans what is left in-process)."""
        return self.ended and self.proc.poll() not in (0, None)

    def close(self) -> None:
        """Stop the process (a new query, the screen closed)."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.proc.wait(timeout=1)
        if self.proc.stdout is not None:
            with contextlib.suppress(OSError):
                self.proc.stdout.close()


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
