"""Sources: pipe, file, follow (growth, truncation), spawned command, --save; a paced replay's
progress follows the replay's clock."""

from __future__ import annotations

import os
import stat
import sys
import time

import pytest

from apphelpers import ev
from cursor_watch.stream.watch import Monitor, pump
from cursor_watch.stream.sources import FdSource, FileSource, Notice, ProcessSource, SaveFile, SourceError, open_source


async def read_exactly(source, expected: bytes, limit_s: float = 10.0) -> bytes:
    """Chunks until ``expected`` bytes arrived (a pipe may split them anywhere)."""
    got = b""
    while len(got) < len(expected):
        chunk = await source.get(timeout=limit_s)
        assert isinstance(chunk, bytes), chunk
        got += chunk
    return got


async def drain(source, limit_s: float = 10.0):
    chunks, notices = [], []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        got = await source.get(timeout=limit_s)
        if got is None:
            break
        (notices if isinstance(got, Notice) else chunks).append(got)
    return b"".join(chunks), notices


async def test_file_source_reads_to_end(tmp_path):
    p = tmp_path / "s.jsonl"
    data = os.urandom(3 << 20)
    p.write_bytes(data)
    src = FileSource(str(p))
    await src.start()
    got, _ = await drain(src)
    assert got == data
    assert src.reread(10, 5) == data[10:15]


async def test_missing_file_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        await FileSource(str(tmp_path / "nope")).start()
    with pytest.raises(SourceError, match="is a directory"):
        await FileSource(str(tmp_path)).start()


async def test_pipe_source(tmp_path):
    r, w = os.pipe()
    src = FdSource(r)
    await src.start()
    os.write(w, b'{"a":1}\n')
    first = await read_exactly(src, b'{"a":1}\n')
    assert first == b'{"a":1}\n'
    os.write(w, b"tail")
    os.close(w)
    rest, _ = await drain(src)
    assert rest == b"tail"


async def test_stdin_redirected_from_regular_file(tmp_path):
    p = tmp_path / "s"
    p.write_bytes(b"x\n" * 1000)
    fd = os.open(p, os.O_RDONLY)
    src = FdSource(fd)
    await src.start()
    got, _ = await drain(src)
    assert got == b"x\n" * 1000


async def test_follow_sees_growth_and_survives_truncation(tmp_path):
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"one\n")
    src = FileSource(str(p), follow=True)
    await src.start()
    assert await src.get(timeout=5) == b"one\n"
    with open(p, "ab") as f:
        f.write(b"two\n")
    assert await src.get(timeout=5) == b"two\n"
    with open(p, "wb") as f:  # truncate and write less than before
        f.write(b"3\n")
    got = await src.get(timeout=5)
    assert isinstance(got, Notice) and got.kind == "truncated"
    assert await src.get(timeout=5) == b"3\n"
    await src.stop()


async def test_follow_rotation_and_deletion(tmp_path):
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"old\n")
    src = FileSource(str(p), follow=True)
    await src.start()
    assert await src.get(timeout=5) == b"old\n"
    os.unlink(p)
    got = await src.get(timeout=5)
    assert isinstance(got, Notice) and got.kind == "deleted"
    p.write_bytes(b"new\n")
    got = await src.get(timeout=5)
    assert isinstance(got, Notice) and got.kind == "rotated"
    assert await src.get(timeout=5) == b"new\n"
    await src.stop()


async def test_process_stdout_stderr_and_exit_status():
    lines = []
    src = ProcessSource([sys.executable, "-c",
                         "import sys; print('{\"a\":1}'); sys.stderr.write('oops\\nlast'); sys.exit(3)"])
    src.on_stderr = lines.append
    await src.start()
    got, _ = await drain(src)
    assert got == b'{"a":1}\n'
    assert src.exit_status == 3
    assert lines == ["oops", "last"]


async def test_process_stdin_is_closed():
    src = ProcessSource([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"])
    await src.start()
    got, _ = await drain(src)
    assert got.strip() == b"''"


async def test_process_terminated_then_killed(tmp_path):
    marker = tmp_path / "started"
    code = (f"import signal, time, pathlib; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            f"pathlib.Path({str(marker)!r}).write_text('x'); print('{{}}', flush=True); time.sleep(60)")
    src = ProcessSource([sys.executable, "-c", code], grace=0.5)
    await src.start()
    assert await read_exactly(src, b"{}\n") == b"{}\n"
    t0 = time.monotonic()
    await src.stop()
    assert time.monotonic() - t0 < 5
    assert src.exit_status == 128 + 9  # ignored SIGTERM, so SIGKILL


async def test_process_terminated_politely():
    src = ProcessSource([sys.executable, "-c", "import time; print('{}', flush=True); time.sleep(60)"], grace=5)
    await src.start()
    assert await read_exactly(src, b"{}\n") == b"{}\n"
    await src.stop()
    assert src.exit_status == 128 + 15


async def test_command_not_found():
    with pytest.raises(SourceError, match="command not found"):
        await ProcessSource(["definitely-not-a-command-xyz"]).start()


async def test_save_appends_raw_bytes_owner_only(tmp_path):
    out = tmp_path / "saved.jsonl"
    data = b'\xef\xbb\xbf{"a":1}\r\nnot json\n\xff\xfe\x00\n{"b":'
    p = tmp_path / "in"
    p.write_bytes(data)
    src = open_source(str(p), None, save_path=str(out))
    await src.start()
    got, _ = await drain(src)
    src.close()
    assert got == data and out.read_bytes() == data
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_save_error_is_reported_not_raised(tmp_path):
    with pytest.raises(SourceError, match="cannot write --save"):
        SaveFile(str(tmp_path / "no" / "such" / "dir.jsonl"))
    if os.path.exists("/dev/full"):
        s = SaveFile("/dev/full")
        assert s.write(b"x" * 10) is False
        assert "no longer saving" in s.error


def test_open_source_rejects_bad_combinations(tmp_path):
    with pytest.raises(SourceError):
        open_source("f", ["cmd"])
    with pytest.raises(SourceError):
        open_source(None, None, follow=True)


async def test_paced_replay_progress_follows_the_replay_clock(tmp_path):
    f = tmp_path / "paced.jsonl"
    f.write_bytes(b"".join(ev(type="assistant", session_id="a", timestamp_ms=1000 + 40 * i,
                              message={"content": [{"type": "text", "text": f"w{i} "}]}) for i in range(10)))
    src = FileSource(str(f))
    await src.start()
    seen = []
    await pump(src, Monitor(), lambda changes: seen.append(src.progress()), speed=1.0)
    src.close()
    assert seen[0] < 0.2 and seen == sorted(seen) and seen[-1] == 1.0  # not "100%" from the start
