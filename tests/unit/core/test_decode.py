"""Parsing: events, unknown events, diagnostics, and the raw-newline rejoin."""

from __future__ import annotations

import orjson

from cursor_watch.core.decode import Event, Invalid, decode_all


def test_known_and_unknown_events():
    items = decode_all([b'{"type":"system","subtype":"init"}\n{"type":"brand_new","x":1}\n'])
    assert [type(i) for i in items] == [Event, Event]
    assert items[0].type == "system" and items[0].subtype == "init" and items[1].type == "brand_new"
    # what a type means is its adapter's: Cursor's reads an init, and lists a type it doesn't know
    from cursor_watch.core.canonical import RunStart, Unknown
    from cursor_watch.formats.cursor import CursorAdapter

    start, unknown = CursorAdapter().adapt(items, None)
    assert type(start) is RunStart and type(unknown) is Unknown and (unknown.type, unknown.keys) == ("brand_new", "type, x")


def test_diagnostic_reasons_and_line_numbers():
    data = b'Error: Authentication required\n{"type":"user"}\n[1,2]\n"str"\n\xff\xfe{}\n{"type":\n'
    items = decode_all([data])
    bad = [(i.line, i.reason) for i in items if isinstance(i, Invalid)]
    assert bad == [
        (1, "not JSON (text line)"),
        (3, "JSON array, not an object"),
        (4, "JSON string, not an object"),
        (5, "invalid UTF-8"),
        (6, "invalid JSON"),
    ]
    assert sum(isinstance(i, Event) for i in items) == 1


def test_preview_is_bounded():
    items = decode_all([b"x" * 10_000 + b"\n"])
    assert isinstance(items[0], Invalid)
    assert len(items[0].text) <= 161


def test_raw_newline_inside_string_is_rejoined():
    event = {"type": "tool_call", "subtype": "started", "call_id": "call_A\nfc_B"}
    line = orjson.dumps(event).replace(b"\\n", b"\n")  # the reported raw LF
    items = decode_all([line + b"\n" + b'{"type":"result"}\n'])
    assert [type(i) for i in items] == [Event, Event]
    assert items[0].data["call_id"] == "call_A\nfc_B"
    assert items[0].line == 1 and items[1].line == 3
    assert items[0].size == len(line) + 1


def test_rejoin_up_to_four_physical_lines():
    line = b'{"type":"assistant","message":{"content":[{"type":"text","text":"a\nb\nc\nd"}]}}\n'
    items = decode_all([line])
    assert len(items) == 1 and isinstance(items[0], Event)
    assert items[0].data["message"]["content"][0]["text"] == "a\nb\nc\nd"


def test_five_pieces_do_not_join():
    line = b'{"type":"x","t":"a\nb\nc\nd\ne"}\n'
    items = decode_all([line])
    assert all(isinstance(i, Invalid) for i in items)
    assert [i.line for i in items] == [1, 2, 3, 4, 5]


def test_garbage_does_not_swallow_a_following_valid_event():
    items = decode_all([b'RetriableError: boom\n{"type":"user"}\nplain\n'])
    assert [type(i).__name__ for i in items] == ["Invalid", "Event", "Invalid"]


def test_any_chunking_gives_the_same_items():
    data = b'{"type":"a"}\nnot json\n{"type":"b","s":"x\ny"}\n\xff\n{"type":"c"}'
    def shape(items):
        return [(type(i).__name__, i.line, getattr(i, "type", None), getattr(i, "reason", None)) for i in items]
    whole = shape(decode_all([data]))
    for n in (1, 2, 3, 10):
        assert shape(decode_all([data[i : i + n] for i in range(0, len(data), n)])) == whole


def test_never_raises_on_odd_bytes():
    for data in (b"\x00\x00\n", b"{" * 10000 + b"\n", b"\n\n\n", b'{"type":5}\n', b"\xef\xbb\xbf\n", b"nul\x00byte\n"):
        decode_all([data])


def test_whitespace_only_lines_are_blank_not_diagnostics():
    items = decode_all([b'{"type":"a"}\n\r\r\n \t\n\x0c\n{"type":"b"}\n'])
    assert [(type(i).__name__, i.line) for i in items] == [("Event", 1), ("Event", 5)]
