"""Framing rules: \\n, CRLF, blank lines, BOM, no line-length cap, any chunking."""

from __future__ import annotations

from cursor_watch.core.framing import LineFramer


def frame(data: bytes, chunk: int | None = None):
    f = LineFramer()
    out = []
    if chunk is None:
        out += f.feed(data)
    else:
        for i in range(0, len(data), chunk):
            out += f.feed(data[i : i + chunk])
    out += f.finish()
    return out


def test_splits_on_newline_with_offsets_and_numbers():
    lines = frame(b'{"a":1}\n{"b":2}\n')
    assert [l.data for l in lines] == [b'{"a":1}', b'{"b":2}']
    assert [l.number for l in lines] == [1, 2]
    assert [l.offset for l in lines] == [0, 8]
    assert [l.size for l in lines] == [8, 8]


def test_crlf_is_accepted():
    lines = frame(b'{"a":1}\r\n{"b":2}\r\n')
    assert [l.data for l in lines] == [b'{"a":1}', b'{"b":2}']
    assert lines[1].offset == 9


def test_blank_lines_are_skipped_but_numbered():
    lines = frame(b'{"a":1}\n\n\r\n{"b":2}\n')
    assert [l.number for l in lines] == [1, 4]
    assert lines[1].offset == 11


def test_bom_stripped_at_the_start_of_any_line():
    # `cat a.jsonl b.jsonl` of files saved with a BOM puts one at the start of a later line
    lines = frame(b'\xef\xbb\xbf{"a":1}\n\xef\xbb\xbf{"b":2}\n{"c":\xef\xbb\xbf3}\n\xef\xbb\xbf')
    assert [line.data for line in lines] == [b'{"a":1}', b'{"b":2}', b'{"c":\xef\xbb\xbf3}']
    assert [line.size for line in lines] == [11, 11, 11]  # the BOM's bytes still count for offsets
    assert [line.offset for line in lines] == [0, 11, 22]


def test_last_line_without_newline():
    lines = frame(b'{"a":1}\n{"b":2}')
    assert [l.data for l in lines] == [b'{"a":1}', b'{"b":2}']
    assert lines[1].size == 7


def test_any_chunking_gives_the_same_lines():
    data = b'\xef\xbb\xbf{"a":1}\r\n\n{"b":"x\\ny"}\n  \nlast'
    whole = [(l.number, l.offset, l.size, l.data) for l in frame(data)]
    for chunk in (1, 2, 3, 5, 7, 64):
        assert [(l.number, l.offset, l.size, l.data) for l in frame(data, chunk)] == whole


def test_64mb_line_is_one_line():
    big = b'{"type":"x","p":"' + b"a" * (64 * 1024 * 1024) + b'"}\n'
    lines = frame(big, chunk=1 << 20)
    assert len(lines) == 1
    assert len(lines[0].data) == len(big) - 1
