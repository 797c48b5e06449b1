"""Where the stream comes from: a file, a followed file, stdin, or a spawned command.

Every source runs a reader task that puts raw byte chunks on a queue; the
consumer takes them with :meth:`Source.get`. Sources know nothing of events.
Before a chunk is queued it is written to the ``--save`` file (when given), so
every byte the agent printed is kept, including lines that don't parse.

Pipes and processes are read with asyncio (quitting never waits on a silent
producer); regular files are read in a thread in 1 MiB chunks (``design.md``), or, for a
``--summary`` of files read to their end, in the calling thread without an event loop
(:meth:`FileSource.read_chunk`, ``runner.Watch.replay``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from ..lazy import lazy_module

asyncio = lazy_module("asyncio")  # imported when an event loop runs (runner.Watch.replay reads files without one)

CHUNK = 1 << 20  # bytes per read
QUEUE_CHUNKS = 32  # chunks buffered between reader and consumer (backpressure)
FOLLOW_POLL_S = 0.2
GRACE_S = 3.0  # seconds between SIGTERM and SIGKILL for a spawned command


class SourceError(Exception):
    """A source can't be opened or started (missing file, command not found, ...).

    The message is one line meant for the user; the CLI prints it and exits 2.
    """


@dataclass(slots=True)
class Notice:
    """Something a source tells the consumer in stream order (not stream data).

    ``kind``: ``truncated`` (followed file shrank: reading again from its start),
    ``rotated`` (followed path now names a new file), ``deleted`` (followed file
    is gone; waiting for it to come back), ``save_error`` (``--save`` failed; the
    watch goes on without saving). ``text``: a one-line description.
    """

    kind: str
    text: str


class SaveFile:
    """Appends raw chunks to a file, exactly as received (``--save PATH``).

    The file is created readable by the owner only (mode 0600): streams hold file
    contents and secrets. Writes are unbuffered ``os.write`` calls, so a kill
    loses nothing already received. A write error (disk full, ...) disables saving
    and is reported once through ``error``; it never stops the watch.

    Raises:
        SourceError: the file can't be opened.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.error: str | None = None
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self.base_offset = os.fstat(self._fd).st_size
        except OSError as err:
            raise SourceError(f"cannot write --save file {path}: {err.strerror or err}") from None
        self.written = 0

    def write(self, chunk: bytes) -> bool:
        """Append ``chunk``; False (and ``error`` set) if it could not be written."""
        if self._fd is None:
            return False
        view = memoryview(chunk)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
                self.written += n
        except OSError as err:
            self.error = f"--save {self.path}: {err.strerror or err}; no longer saving"
            self.close()
            return False
        return True

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


class Spool:
    """A private copy of a pipe's bytes, so a view can re-read a payload by offset.

    Uses the ``--save`` file when there is one, else an anonymous temporary file
    (deleted when closed). Offsets are stream offsets (0 = first byte received).
    """

    def __init__(self, save: SaveFile | None = None) -> None:
        self._save = save
        if save is not None:
            self._fd = os.open(save.path, os.O_RDONLY)
            self._base = save.base_offset
            self._own = False
        else:
            tmp = tempfile.TemporaryFile(prefix="cursor-watch-spool-")
            self._file = tmp
            self._fd = tmp.fileno()
            self._base = 0
            self._own = True

    def write(self, chunk: bytes) -> None:
        """Append ``chunk`` (no-op when the ``--save`` file is the spool)."""
        if self._own:
            with contextlib.suppress(OSError):
                os.write(self._fd, chunk)

    def ref(self) -> tuple[str | None, int | None, int]:
        """``(path, fd, base)``: the ``--save`` file's path, or this process's descriptor of
        the anonymous spool (another process inherits it)."""
        if self._save is not None:
            return (self._save.path, None, self._base)
        return (None, self._fd, 0)

    def read(self, offset: int, size: int) -> bytes:
        """Bytes ``[offset, offset+size)`` of the stream; b"" if unavailable."""
        try:
            return os.pread(self._fd, size, self._base + offset)
        except OSError:
            return b""

    def close(self) -> None:
        """Release the spool."""
        with contextlib.suppress(OSError):
            if self._own:
                self._file.close()
            else:
                os.close(self._fd)


class Source:
    """Base class: a reader task feeding a queue of chunks.

    Attributes:
        label: what the header shows (a path, ``stdin`` or the command).
        kind: ``file``, ``follow``, ``stdin`` or ``process``.
        save: the ``--save`` file or None.
        on_stderr: called with each stderr line (str) of a spawned command.
        exit_status: the command's exit status (128+N for signal N), else None.
        error: a one-line read error that ended the stream early, else None.
    """

    kind = "source"

    def __init__(self, label: str, save: SaveFile | None = None) -> None:
        self.label = label
        self.save = save
        self.spool: Spool | None = None
        self.on_stderr: Callable[[str], None] | None = None
        self.exit_status: int | None = None
        self.error: str | None = None
        self._chunks: asyncio.Queue | None = None  # made on first use (see _queue)
        self._task: asyncio.Task | None = None
        self._save_reported = False

    @property
    def _queue(self) -> asyncio.Queue:
        """The chunks read and not yet taken (made on first use: a file read by
        :meth:`FileSource.read_chunk` has none)."""
        if self._chunks is None:
            self._chunks = asyncio.Queue(maxsize=QUEUE_CHUNKS)
        return self._chunks

    async def start(self) -> None:
        """Open the input and start reading. Raises :class:`SourceError`."""
        self._task = asyncio.create_task(self._run())

    def precheck(self) -> None:
        """Fail early (before a screen is set up) if the input can't be opened.

        Raises:
            SourceError: with a one-line message.
        """

    def enable_spool(self) -> None:
        """Keep a re-readable copy (pipes and processes; files re-read themselves)."""
        if self.spool is None:
            self.spool = Spool(self.save)

    def reread(self, offset: int, size: int) -> bytes:
        """Re-read ``size`` bytes at stream ``offset`` (a big payload); b"" if unavailable."""
        if self.spool is not None:
            return self.spool.read(offset, size)
        return b""

    def byte_file(self) -> tuple[str | None, int | None, int] | None:
        """``(path, fd, base)`` of a file holding the stream's bytes (stream offset 0 at
        ``base``), for another process to read (the search's scan); None when there is none."""
        if self.spool is not None:
            return self.spool.ref()
        return None

    async def get(self, timeout: float | None = None) -> bytes | Notice | None:
        """Next chunk, a :class:`Notice`, or None at end of stream.

        Raises:
            TimeoutError: nothing arrived within ``timeout`` seconds.
        """
        if timeout is None:
            return await self._queue.get()
        return await asyncio.wait_for(self._queue.get(), timeout)

    async def _put(self, chunk: bytes) -> None:
        if self.save is not None and not self.save.write(chunk) and not self._save_reported:
            self._save_reported = True
            await self._queue.put(Notice("save_error", self.save.error or "--save failed"))
        if self.spool is not None:
            self.spool.write(chunk)
        await self._queue.put(chunk)

    async def _run(self) -> None:
        try:
            await self._read()
        except asyncio.CancelledError:
            # stopped: the consumer may be gone and the queue full; never wait on it
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(None)
            raise
        except OSError as err:
            self.error = self._read_error(err)
        await self._queue.put(None)

    def _read_error(self, err: OSError) -> str:
        """The words of a read error (:attr:`error`)."""
        return f"read error on {self.label}: {err.strerror or err}"

    async def _read(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def stop(self) -> None:
        """Stop reading (and terminate a spawned command)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    def close(self) -> None:
        """Release files (the ``--save`` file is flushed by construction)."""
        if self.save is not None:
            self.save.close()
        if self.spool is not None:
            self.spool.close()


class FileSource(Source):
    """A regular file read to its end (replay), or followed as it grows (``--follow``).

    Follow survives truncation (reads again from the start), rotation (the path
    names a new file: read that one from its start) and deletion (waits for the
    path to come back), each reported as a :class:`Notice`.

    Raises:
        SourceError: from :meth:`start` when the file can't be opened.
    """

    def __init__(self, path: str, follow: bool = False, save: SaveFile | None = None) -> None:
        super().__init__(path, save)
        self.path = path
        self.follow = follow
        self.kind = "follow" if follow else "file"
        self._fd: int | None = None
        self._reread_fd: int | None = None
        self.size_at_start = 0
        self.bytes_read = 0
        self.applied_bytes: int | None = None  # a paced replay (--speed): bytes replayed so far

    def open(self) -> None:
        """Open the file (:meth:`start` without the reading task: see :meth:`read_chunk`).

        Raises:
            SourceError: the file can't be opened (or is a directory).
        """
        self._fd = _open_input(self.path)
        self.size_at_start = os.fstat(self._fd).st_size

    async def start(self) -> None:
        self.open()
        await super().start()

    def read_chunk(self) -> bytes:
        """The next chunk (at most ``CHUNK`` bytes) of a file :meth:`open` ed and read to its end in
        the calling thread (``runner.Watch.replay``, not :meth:`start`: no ``--follow``, no
        ``--save`` copy); ``b""`` at its end, or after a read error (:attr:`error` says which,
        as when the reading task meets one). The file is closed then."""
        fd = self._fd
        if fd is None:
            return b""
        try:
            chunk = os.read(fd, CHUNK)
        except OSError as err:
            self.error = self._read_error(err)
            chunk = b""
        if chunk:
            self.bytes_read += len(chunk)
            return chunk
        self.close_input()
        return b""

    def close_input(self) -> None:
        """Close the file :meth:`open` opened, if it still is: at the end of the reading task,
        or of ``runner.Watch.replay`` (its :meth:`stop`). Re-reading payloads uses a descriptor
        of its own (:meth:`reread`)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def progress(self) -> float | None:
        """Fraction of the file replayed so far (replay only; None when following).

        As fast as possible, the bytes read; at a recorded pace (``--speed``), the bytes of
        the events applied so far: the file is read at once, the replay clock is slower.
        """
        if self.follow or not self.size_at_start:
            return None
        done = self.bytes_read if self.applied_bytes is None else self.applied_bytes
        return min(1.0, done / self.size_at_start)

    def precheck(self) -> None:
        os.close(_open_input(self.path))

    def byte_file(self) -> tuple[str | None, int | None, int] | None:
        if self.spool is not None:
            return self.spool.ref()
        return (self.path, None, 0)

    def reread(self, offset: int, size: int) -> bytes:
        if self.spool is not None:
            return self.spool.read(offset, size)
        try:
            if self._reread_fd is None:  # opened once: an export re-reads thousands of payloads
                self._reread_fd = os.open(self.path, os.O_RDONLY)
            return os.pread(self._reread_fd, size, offset)
        except OSError:
            return b""

    def close(self) -> None:
        super().close()
        if self._reread_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._reread_fd)
            self._reread_fd = None

    async def _read(self) -> None:
        fd = self._fd
        assert fd is not None
        pos = 0
        try:
            while True:
                chunk = await asyncio.to_thread(os.read, fd, CHUNK)
                if chunk:
                    pos += len(chunk)
                    self.bytes_read += len(chunk)
                    await self._put(chunk)
                    continue
                if not self.follow:
                    return
                await asyncio.sleep(FOLLOW_POLL_S)
                try:
                    st_path = os.stat(self.path)
                except FileNotFoundError:
                    st_path = None
                st_fd = os.fstat(fd)
                if st_path is None:
                    if not getattr(self, "_deleted", False):
                        self._deleted = True
                        await self._queue.put(Notice("deleted", f"{self.path} was deleted; waiting for it"))
                    continue
                if (st_path.st_ino, st_path.st_dev) != (st_fd.st_ino, st_fd.st_dev):
                    # drain what the old file still holds, then switch
                    rest = os.read(fd, CHUNK)
                    if rest:
                        pos += len(rest)
                        await self._put(rest)
                        continue
                    os.close(fd)
                    fd = self._fd = _open_input(self.path)
                    pos = 0
                    self._deleted = False
                    await self._queue.put(Notice("rotated", f"{self.path} was replaced; reading the new file"))
                    continue
                if st_fd.st_size < pos:
                    os.lseek(fd, 0, os.SEEK_SET)
                    pos = 0
                    await self._queue.put(Notice("truncated", f"{self.path} was truncated; reading from its start"))
        finally:
            self.close_input()


def _open_input(path: str) -> int:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise SourceError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise SourceError(f"is a directory: {path}") from None
    except OSError as err:
        raise SourceError(f"cannot open {path}: {err.strerror or err}") from None
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise SourceError(f"is a directory: {path}")
    return fd


class FdSource(Source):
    """A pipe, FIFO, terminal or redirected file on a file descriptor (stdin).

    Pipes are read with ``loop.connect_read_pipe``; a regular file redirected to
    stdin (``< capture``) is read in a thread. The descriptor is closed at the end.
    """

    kind = "stdin"

    def __init__(self, fd: int, label: str = "stdin", save: SaveFile | None = None) -> None:
        super().__init__(label, save)
        self.fd = fd

    async def _read(self) -> None:
        mode = os.fstat(self.fd).st_mode
        if stat.S_ISREG(mode):
            while chunk := await asyncio.to_thread(os.read, self.fd, CHUNK):
                await self._put(chunk)
            return
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=CHUNK * 4, loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        pipe = os.fdopen(self.fd, "rb", buffering=0, closefd=False)
        transport, _ = await loop.connect_read_pipe(lambda: protocol, pipe)
        try:
            while chunk := await reader.read(CHUNK):
                await self._put(chunk)
        finally:
            transport.close()


class ProcessSource(Source):
    """A command spawned by cursor-watch (``cursor-watch -- CMD ARGS...``).

    Its stdout is the stream; its stderr is read line by line and given to
    ``on_stderr`` (never parsed as events); its stdin is ``/dev/null`` (the CLI can
    wait for stdin EOF otherwise: reference section 1). It runs in its own process
    group; :meth:`stop` sends SIGTERM to the group, then SIGKILL after ``grace`` s.
    ``exit_status`` is the child's status, 128+N when killed by signal N.

    Raises:
        SourceError: from :meth:`start` when the command can't be started.
    """

    kind = "process"

    def __init__(self, argv: list[str], save: SaveFile | None = None, grace: float = GRACE_S) -> None:
        super().__init__(" ".join(argv), save)
        self.argv = argv
        self.grace = grace
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_lines = 0
        self._stderr_task: asyncio.Task | None = None

    def precheck(self) -> None:
        exe = self.argv[0]
        path = exe if os.sep in exe else shutil.which(exe)
        if path is None or not os.path.exists(path):
            raise SourceError(f"command not found: {exe}")
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise SourceError(f"command not executable: {exe}")

    async def start(self) -> None:
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=CHUNK * 4,
            )
        except FileNotFoundError:
            raise SourceError(f"command not found: {self.argv[0]}") from None
        except PermissionError:
            raise SourceError(f"command not executable: {self.argv[0]}") from None
        except OSError as err:
            raise SourceError(f"cannot start {self.argv[0]}: {err.strerror or err}") from None
        self._stderr_task = asyncio.create_task(self._read_stderr())
        await super().start()

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(CHUNK):
            await self._put(chunk)
        if self._stderr_task is not None:
            await self._stderr_task
        code = await self.proc.wait()
        self.exit_status = _status(code)

    async def _drain_after_stop(self) -> None:
        """Keep in ``--save`` (and the spool) what the child printed but was not read yet."""
        if self.proc is None or self.proc.returncode is None:
            return
        rest = await _drain(self.proc.stdout)
        if rest:
            if self.save is not None:
                self.save.write(rest)
            if self.spool is not None:
                self.spool.write(rest)

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        partial = b""
        while chunk := await self.proc.stderr.read(CHUNK):
            partial += chunk
            *lines, partial = partial.split(b"\n")
            for line in lines:
                self._emit_stderr(line)
        if partial:
            self._emit_stderr(partial)

    def _emit_stderr(self, line: bytes) -> None:
        self.stderr_lines += 1
        if self.on_stderr is not None:
            self.on_stderr(line.rstrip(b"\r").decode("utf-8", "replace"))

    async def stop(self) -> None:
        """Terminate the child (group) if still running: SIGTERM, then SIGKILL after grace."""
        proc = self.proc
        if proc is not None and proc.returncode is None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), self.grace)
            except TimeoutError:
                _signal_group(proc.pid, signal.SIGKILL)
                with contextlib.suppress(Exception):
                    await proc.wait()
            self.exit_status = _status(proc.returncode)
        await super().stop()
        await self._drain_after_stop()
        if self._stderr_task is not None and not self._stderr_task.done():
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._stderr_task


class QueueSource(Source):
    """A stream pushed in by code: tests, benchmarks and embedding.

    ``await push(chunk)`` delivers bytes (teed to ``--save`` and kept for
    :meth:`reread`), ``await end()`` ends the stream. Behaves like a pipe.
    """

    kind = "stdin"

    def __init__(self, label: str = "test", save: SaveFile | None = None) -> None:
        super().__init__(label, save)
        self._data = bytearray()
        self._ended = False

    async def start(self) -> None:
        """Nothing to open."""

    async def push(self, chunk: bytes) -> None:
        """Deliver ``chunk``."""
        self._data += chunk
        await self._put(chunk)

    async def end(self) -> None:
        """End of stream."""
        if not self._ended:
            self._ended = True
            await self._queue.put(None)

    def reread(self, offset: int, size: int) -> bytes:
        return bytes(self._data[offset : offset + size])

    async def stop(self) -> None:
        if not self._ended:
            self._ended = True
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(None)


async def _drain(reader: asyncio.StreamReader | None, timeout: float = 2.0) -> bytes:
    """What is left in a dead child's stdout pipe (to EOF, bounded in time)."""
    if reader is None:
        return b""
    parts = []
    with contextlib.suppress(TimeoutError, OSError, ValueError):
        async with asyncio.timeout(timeout):
            while chunk := await reader.read(CHUNK):
                parts.append(chunk)
    return b"".join(parts)


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _status(code: int | None) -> int | None:
    if code is None:
        return None
    return 128 - code if code < 0 else code


STREAM_SUFFIXES = (".jsonl", ".ndjson", ".log")  # files of a DIRECTORY argument that are read


def list_stream_files(directory: str) -> list[str]:
    """The regular ``*.jsonl``, ``*.ndjson`` and ``*.log`` files in ``directory``, sorted.

    Not recursive; symlinks to regular files count. An unreadable directory gives [].
    """
    return scan_directory(directory)[0]


def scan_directory(directory: str) -> tuple[list[str], list[str]]:
    """``(stream files, other files)`` of ``directory``, each sorted: the regular files whose
    names end in :data:`STREAM_SUFFIXES` (read) and the regular files that don't (skipped: the
    runs list says how many). Not recursive; an unreadable directory gives ``([], [])``."""
    read: list[str] = []
    skipped: list[str] = []
    try:
        with os.scandir(directory) as it:
            for entry in it:
                try:
                    if not entry.is_file():
                        continue
                except OSError:
                    continue
                (read if entry.name.endswith(STREAM_SUFFIXES) else skipped).append(os.path.join(directory, entry.name))
    except OSError:
        return [], []
    return sorted(read), sorted(skipped)


def open_sources(
    paths: list[str],
    command: list[str] | None,
    follow: bool = False,
    save_path: str | None = None,
    stdin_fd: int | None = None,
) -> tuple[list[Source], list[str]]:
    """Build the sources the command line asks for (not started yet).

    Args:
        paths: FILEs and DIRECTORYs (a directory gives each of its stream files, see
            :func:`list_stream_files`), ``["-"]`` or ``[]`` for stdin.
        command: argv to spawn (after ``--``), or None.
        follow: keep reading files as they grow (and, for a directory, pick up new files).
        save_path: ``--save`` file (one source only), or None.
        stdin_fd: descriptor to read stdin from (the TUI moves it off fd 0).

    Returns:
        ``(sources, directories)``: the sources in path order and the directories given.

    Raises:
        SourceError: a bad combination (``--save`` with several sources, ``-`` with files, a
            directory without stream files when not following), or ``--save`` can't be opened.
    """
    if len(paths) == 1 and not os.path.isdir(paths[0]):
        return [open_source(paths[0], command, follow=follow, save_path=save_path, stdin_fd=stdin_fd)], []
    if not paths:
        return [open_source(None, command, follow=follow, save_path=save_path, stdin_fd=stdin_fd)], []
    if command:
        raise SourceError("give either FILEs or a command after --, not both")
    if "-" in paths:
        raise SourceError("'-' (stdin) can't be read together with FILEs")
    files: list[str] = []
    directories: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            directories.append(path)
            found = list_stream_files(path)
            if not found and not follow:
                raise SourceError(f"no stream files ({', '.join('*' + x for x in STREAM_SUFFIXES)}) in {path}")
            files.extend(found)
        else:
            files.append(path)
    files = sorted(dict.fromkeys(files))
    if save_path and (len(files) != 1 or directories):
        raise SourceError("--save takes one source; give one FILE, stdin or a command")
    save = SaveFile(save_path) if save_path else None
    return [FileSource(p, follow=follow, save=save) for p in files], directories


def open_source(
    path: str | None,
    command: list[str] | None,
    follow: bool = False,
    save_path: str | None = None,
    stdin_fd: int | None = None,
) -> Source:
    """Build the source the command line asks for (not started yet).

    Args:
        path: a file path, ``-`` for stdin, or None.
        command: argv to spawn (after ``--``), or None.
        follow: keep reading a file as it grows.
        save_path: ``--save`` file, or None.
        stdin_fd: descriptor to read stdin from (the TUI moves it off fd 0).

    Raises:
        SourceError: bad combination, or the ``--save`` file can't be opened.
    """
    if command and path:
        raise SourceError("give either a FILE or a command after --, not both")
    if follow and (command or path in (None, "-")):
        raise SourceError("--follow needs a FILE")
    save = SaveFile(save_path) if save_path else None
    if command:
        return ProcessSource(command, save=save)
    if path and path != "-":
        if save_path and os.path.exists(path) and os.path.samefile(path, save_path):
            raise SourceError("--save must not be the file being read")
        return FileSource(path, follow=follow, save=save)
    fd = stdin_fd if stdin_fd is not None else sys.stdin.fileno()
    return FdSource(fd, save=save)
