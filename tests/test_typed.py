"""The typed decoder (issue 17) changes nothing: the model built from msgspec's typed events
equals the model built from orjson's dicts, for random valid and damaged streams.

``cursor_watch.formats.cursor_typed`` decodes ``assistant``, ``thinking`` and ``tool_call``
lines into structs and reads a tool call's payload only where the model looks; every other
line, and every shape the structs don't fit, takes the generic path. These tests feed the same
bytes through both (``Decoder(typed=True)`` and ``typed=False``) and compare everything a view
can show, plus the one known difference (a number that overflows a double, in a field the model
never reads) pinned so it can't grow.
"""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cursor_watch.events import Decoder, Event, Invalid, decode_all
from cursor_watch.formats.cursor_typed import AssistantEvent, ThinkingEvent, ToolCallEvent
from cursor_watch.runner import Monitor
from test_properties import chunked, session_snapshot, snapshot, stream

CLOCK_MS = 1_000_000.0


def read(chunks: list[bytes], typed: bool) -> Monitor:
    mon = Monitor(clock=lambda: CLOCK_MS)
    mon.decoder.typed = typed
    for chunk in chunks:
        mon.feed(chunk)
    # the last line, and what the format reader held while it sniffed (issue 19), through it
    for item in mon.reader.adapt(mon.decoder.finish()) + mon.reader.finish():
        mon.apply(item)
    for run in mon.runs:
        run.session.finish()
    return mon


def assert_same_model(data: bytes, chunks: list[bytes] | None = None) -> None:
    chunks = chunks or [data]
    typed, generic = read(chunks, True), read(chunks, False)
    assert snapshot(typed) == snapshot(generic)
    for a, b in zip(typed.runs, generic.runs):
        assert [c.state() for c in a.session.tool_calls.values()] == [c.state() for c in b.session.tool_calls.values()]
        assert (a.session.first_ts_ms, a.session.last_ts_ms) == (b.session.first_ts_ms, b.session.last_ts_ms)


# -- events the typed structs read, with every field drawn loose --------------------------

BIG = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**30, -(10**30)]
loose = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.sampled_from(BIG),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
    st.sampled_from(["delta", "completed", "started", "text", "", "1786676149877", "²", " 7 ", "c1"]),
    st.lists(st.integers() | st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_MS = st.integers(1_790_000_000_000, 1_790_000_000_100)
TS = st.one_of(_MS, _MS, _MS, _MS, _MS, _MS.map(str), loose)  # mostly as in real captures
OUTCOMES = ["success", "failure", "rejected", "error", "complete", "isBackground", "pid", "sandboxPolicy"]
VARIANTS = ["shellToolCall", "readToolCall", "editToolCall", "updateTodosToolCall", "ToolCall", "function", "x"]


def maybe(draw, obj: dict, key: str, value) -> None:
    if draw(st.integers(0, 5)):  # most of the time present
        obj[key] = value


def often(draw, regular, rare=None):
    """Mostly a value of the shape real streams have, now and then a loose one."""
    return draw(regular) if draw(st.integers(0, 5)) else draw(rare if rare is not None else loose)


@st.composite
def payload(draw):
    obj: dict = {}
    for key in ("exitCode", "stdout", "stderr", "reason", "error", "message", "command", "path", "todos"):
        if draw(st.booleans()):
            obj[key] = often(draw, st.integers(-3, 3)) if key == "exitCode" else often(draw, st.text(max_size=6))
    return often(draw, st.just(obj))


@st.composite
def tool_event(draw) -> dict:
    body: dict = {}
    args = draw(st.dictionaries(st.sampled_from(["command", "path", "pattern", "todos", "timeout", "toolCallId",
                                                 "description", "x"]),
                                st.one_of(st.text(max_size=400), st.integers(0, 9), st.text(max_size=9), loose),
                                max_size=5))
    maybe(draw, body, "args", often(draw, st.just(args)))
    if draw(st.booleans()):
        result: dict = {}
        for _ in range(draw(st.integers(0, 3))):
            result[draw(st.sampled_from(OUTCOMES))] = draw(payload())
        body["result"] = often(draw, st.just(result))
    maybe(draw, body, "description", often(draw, st.text(max_size=5)))
    tool_call: dict = {}
    if draw(st.booleans()):
        tool_call["toolCallId"] = often(draw, st.sampled_from(["c1", "c2"]))
    variant = draw(st.sampled_from(VARIANTS[:4])) if draw(st.integers(0, 4)) else draw(st.sampled_from(VARIANTS))
    tool_call[variant] = often(draw, st.just(body))
    for key in ("startedAtMs", "completedAtMs", "hookAdditionalContexts"):
        if draw(st.booleans()):
            tool_call[key] = draw(TS)
    event = {"type": "tool_call", "subtype": often(draw, st.sampled_from(["started", "completed", "progress"]))}
    maybe(draw, event, "call_id", often(draw, st.sampled_from(["c1", "c2", "c\n3", ""])))
    maybe(draw, event, "tool_call", often(draw, st.just(tool_call)))
    maybe(draw, event, "model_call_id", draw(loose))
    maybe(draw, event, "timestamp_ms", draw(TS))
    return event


@st.composite
def text_event(draw) -> dict:
    kind = draw(st.sampled_from(["assistant", "thinking"]))
    event: dict = {"type": kind}
    if kind == "thinking":
        maybe(draw, event, "subtype", often(draw, st.sampled_from(["delta", "delta", "completed"])))
        maybe(draw, event, "text", often(draw, st.sampled_from(["a", "ab", "ha"])))
    else:
        # deltas that repeat the open text ("a", "a") are the re-send question (reference 2.3)
        part = {"type": often(draw, st.just("text"), st.sampled_from(["image"]) | loose),
                "text": often(draw, st.sampled_from(["a", "a", "ha", "b"]))}
        content = often(draw, st.just([part]), st.sampled_from([[part, part], "s", [], None]) | loose)
        maybe(draw, event, "message", often(draw, st.just({"role": "assistant", "content": content})))
        if draw(st.integers(0, 3)) == 0:
            event["model_call_id"] = draw(loose)
    maybe(draw, event, "timestamp_ms", draw(TS))
    maybe(draw, event, "session_id", often(draw, st.just("s1")))
    return event


HEAD = [{"type": "system", "subtype": "init", "session_id": "s1", "model": "m"},
        {"type": "user", "message": {"content": [{"type": "text", "text": "go"}]}, "session_id": "s1"},
        {"type": "thinking", "subtype": "delta", "text": "t", "session_id": "s1", "timestamp_ms": 1_790_000_000_000}]


# the events around which held deltas are settled (reference 2.3): re-send sites and the end
OTHER = [{"type": "retry", "subtype": "starting", "attempt": 1},
         {"type": "interaction_query", "subtype": "request", "query_type": "webFetchRequestQuery",
          "query": {"webFetchRequestQuery": {"args": {"url": "u", "toolCallId": "c1"}}}},
         {"type": "result", "subtype": "success", "result": "aa", "is_error": False}]


@st.composite
def typed_stream(draw) -> bytes:
    events = list(HEAD) if draw(st.integers(0, 4)) else []
    events += draw(st.lists(tool_event() | text_event() | text_event() | st.sampled_from(OTHER), min_size=3, max_size=40))
    # the standard library writes integers beyond 64 bits (orjson refuses to)
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() for e in events]
    if draw(st.integers(0, 3)) == 0:  # duplicate keys: both readers keep the last value, in the first place
        at = draw(st.integers(0, max(0, len(lines) - 1)))
        if lines and lines[at].endswith(b"}"):
            lines[at] = lines[at][:-1] + b',"timestamp_ms":' + draw(st.sampled_from([b"1", b'"2"', b"null"])) + b"}"
    return b"\n".join(lines) + b"\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(typed_stream())
@example(b'{"type":"system","subtype":"init","session_id":"s"}\n'
         b'{"type":"thinking","subtype":"delta","text":"a","timestamp_ms":18446744073709551616}\n'
         b'{"type":"assistant","message":{"content":[{"type":"text","text":"x"}]},"timestamp_ms":1}\n'
         b'{"type":"assistant","message":{"content":[{"type":"text","text":"y"}]},"timestamp_ms":99999999999999999999}\n')
@example(b'{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"result":'
         b'{"success":{"exitCode":18446744073709551616}}},"startedAtMs":"1"}}\n')
@example(b'{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"shellToolCall":{"args":{"a":1},'
         b'"args":{"command":"ls"}},"shellToolCall":{"args":{"command":"rm"}}}}\n')
@example(b'{"type":"system","subtype":"init","session_id":"s1"}\n'
         b'{"type":"thinking","subtype":"delta","text":"t","timestamp_ms":1}\n'
         b'{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]},"timestamp_ms":2}\n'
         b'{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]},"timestamp_ms":3}\n'
         b'{"type":"retry","subtype":"starting"}\n')  # a re-send of the open text, dropped at a retry
def test_typed_and_generic_paths_build_the_same_model(data):
    assert_same_model(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_any_stream_any_chunking_same_model(data):
    """The stream strategy of test_properties (real lines, mutated events, damage, garbage,
    BOMs, CRLF, raw newlines inside events) cut into random chunks."""
    raw = data.draw(stream())
    assert_same_model(raw, data.draw(chunked(raw)))


def test_real_captures_and_samples_take_the_typed_path_and_match(tmp_path):
    from test_properties import _stream_files

    for path in _stream_files():
        raw = path.read_bytes()
        assert_same_model(raw)
        items = Decoder(typed=True).feed(raw)
        kinds = {type(i) for i in items}
        # every real capture with deltas or tool calls reads them typed
        if b'"type":"tool_call"' in raw:
            assert ToolCallEvent in kinds, path.name
        if b'"type":"assistant"' in raw:
            assert AssistantEvent in kinds, path.name


def test_a_typed_event_keeps_its_line_and_decodes_to_the_generic_dict():
    line = b'{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":5,"extra":[1,{"a":2}]}'
    (item,) = Decoder(typed=True).feed(b"\n" + line + b"\n")
    assert isinstance(item, ThinkingEvent) and (item.line, item.offset, item.size) == (2, 1, len(line) + 1)
    assert item.data == orjson.loads(line) and item.known and item.type == "thinking" and item.subtype == "delta"
    (generic,) = Decoder(typed=False).feed(b"\n" + line + b"\n")
    assert generic.__class__ is Event and generic.data == item.data


def test_invalid_utf8_in_a_skipped_field_is_invalid_on_both_paths():
    # msgspec would skip the bytes unchecked; the decoder checks UTF-8 first (orjson's verdict)
    line = b'{"type":"thinking","subtype":"delta","text":"a","junk":"\xff\xfe"}\n'
    for typed in (True, False):
        (item,) = decode_all([line], typed=typed)
        assert isinstance(item, Invalid) and item.reason == "invalid UTF-8"


@pytest.mark.parametrize("number", [b"1e400", b"-2e308", b"1" * 400])
def test_the_known_difference_a_number_beyond_a_double_in_a_skipped_field(number):
    """orjson refuses a line holding a number beyond a double (it would be infinite); msgspec
    skips a field it doesn't read without looking at its value. The typed path reads such a
    delta (nothing lost: its text is shown), the generic path calls the line invalid JSON. Off
    the deltas' fast path the line is decoded again by orjson and becomes the same diagnostic."""
    head = (b'{"type":"system","subtype":"init","session_id":"s"}\n'
            b'{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]},"timestamp_ms":1}\n')
    line = b'{"type":"assistant","message":{"content":[{"type":"text","text":"b"}]},"timestamp_ms":2,"x":' + number + b"}\n"
    typed, generic = read([head + line], True), read([head + line], False)
    assert typed.session.assistant_text == "ab" and typed.session.invalid_lines == 0
    assert generic.session.assistant_text == "a" and generic.session.invalid_lines == 1
    # the same line where no fast path takes it (it opens the segment): the same diagnostic
    alone = b'{"type":"system","subtype":"init","session_id":"s"}\n' + line
    assert session_snapshot(read([alone], True).session) == session_snapshot(read([alone], False).session)
