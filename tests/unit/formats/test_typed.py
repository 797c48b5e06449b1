"""The typed decoder changes nothing: the model built from msgspec's typed events
equals the model built from orjson's dicts, for random valid and damaged streams.

``cursor_watch.formats.cursor_typed`` decodes ``assistant``, ``thinking`` and ``tool_call``
lines into structs and reads a tool call's payload only where the model looks; every other
line, and every shape the structs don't fit, takes the generic path. These tests feed the same
bytes through both (the decoder given the Cursor adapter's typed decoder, and none) and compare
the canonical events and everything a view can show, plus the one known difference (a number
that overflows a double, in a field the model never reads) pinned so it can't grow.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cursor_watch.core.canonical import Canonical, ToolEvent
from cursor_watch.core.decode import Decoder, Event, Invalid, decode_all
from cursor_watch.formats.cursor_typed import DECODER as CURSOR_TYPED
from cursor_watch.formats.cursor_typed import AssistantEvent, ThinkingEvent, ToolCallEvent
from cursor_watch.stream.watch import Monitor
from streamgen import chunked, snapshot, stream

CLOCK_MS = 1_000_000.0


def fed(mon: Monitor, chunks: list[bytes]) -> Monitor:
    """``mon`` fed ``chunks`` to the end: the last line, and what the format reader held while
    it sniffed, through it; every run finished."""
    for chunk in chunks:
        mon.feed(chunk)
    for item in mon.reader.adapt(mon.decoder.finish()) + mon.reader.finish():
        mon.apply(item)
    for run in mon.runs:
        run.session.finish()
    return mon


def read(chunks: list[bytes], typed: bool) -> Monitor:
    """A monitor of the sniffed format fed ``chunks``: with ``typed``, Cursor's typed decoding
    from the first line (a stream the reader takes for another agent's then gets that agent's
    decoder); without, every line the generic way."""
    mon = agent_monitor(typed, "auto")
    if typed:
        mon.decoder.typed = CURSOR_TYPED
    return fed(mon, chunks)


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
    from streamgen import _stream_files

    for path in _stream_files():
        raw = path.read_bytes()
        assert_same_model(raw)
        items = Decoder(typed=CURSOR_TYPED).feed(raw)
        kinds = {type(i) for i in items}
        # every real capture with deltas or tool calls reads them typed
        if b'"type":"tool_call"' in raw:
            assert ToolCallEvent in kinds, path.name
        if b'"type":"assistant"' in raw:
            assert AssistantEvent in kinds, path.name


def test_a_typed_event_keeps_its_line_and_decodes_to_the_generic_dict():
    line = b'{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":5,"extra":[1,{"a":2}]}'
    (item,) = Decoder(typed=CURSOR_TYPED).feed(b"\n" + line + b"\n")
    assert isinstance(item, ThinkingEvent) and (item.line, item.offset, item.size) == (2, 1, len(line) + 1)
    assert item.data == orjson.loads(line) and item.type == "thinking" and item.subtype == "delta"
    (generic,) = Decoder(typed=None).feed(b"\n" + line + b"\n")
    assert generic.__class__ is Event and generic.data == item.data


def test_invalid_utf8_in_a_skipped_field_is_invalid_on_both_paths():
    # msgspec would skip the bytes unchecked; the decoder checks UTF-8 first (orjson's verdict)
    line = b'{"type":"thinking","subtype":"delta","text":"a","junk":"\xff\xfe"}\n'
    for typed in (CURSOR_TYPED, None):
        (item,) = decode_all([line], typed=typed)
        assert isinstance(item, Invalid) and item.reason == "invalid UTF-8"


@pytest.mark.parametrize("number", [b"1e400", b"-2e308", b"1" * 400])
def test_the_known_difference_a_number_beyond_a_double_in_a_skipped_field(number):
    """orjson refuses a line holding a number beyond a double (it would be infinite); msgspec
    skips a field it doesn't read without looking at its value. The typed path reads such a
    line wherever it is (nothing lost: its text is shown), the generic path calls it invalid
    JSON; the rest of the stream is the same."""
    head = (b'{"type":"system","subtype":"init","session_id":"s"}\n'
            b'{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]},"timestamp_ms":1}\n')
    line = b'{"type":"assistant","message":{"content":[{"type":"text","text":"b"}]},"timestamp_ms":2,"x":' + number + b"}\n"
    typed, generic = read([head + line], True), read([head + line], False)
    assert typed.session.assistant_text == "ab" and typed.session.invalid_lines == 0
    assert generic.session.assistant_text == "a" and generic.session.invalid_lines == 1
    # the same line where it opens the segment (off the deltas' inline path): read there too
    alone = b'{"type":"system","subtype":"init","session_id":"s"}\n' + line
    typed, generic = read([alone], True).session, read([alone], False).session
    assert (typed.assistant_text, typed.invalid_lines, generic.assistant_text, generic.invalid_lines) == ("b", 0, "", 1)


# -- Claude Code's typed path (claude_typed: stream_event lines) ------------------
#
# Each adapter brings its own typed decoding (Decoder.typed = the adapter's typed_decoder). The
# same bytes are read with the Claude adapter's typed decoder on and off; every line the typed
# structs don't fit (and every other kind) takes the generic path, so the models must be equal.

from cursor_watch.formats import claude_typed  # noqa: E402
from cursor_watch.formats.claude_typed import StreamEvent  # noqa: E402


def canon(ev) -> tuple:
    """A canonical event (or a diagnostic) as plain data: its class, provenance (but ``src``)
    and fields; a tool event's arguments and summary as its lazy methods give them."""
    if not isinstance(ev, Canonical):
        return (type(ev).__name__, ev.line, ev.offset, ev.size, ev.reason)
    slots = [k for cls in type(ev).__mro__ for k in getattr(cls, "__slots__", ()) if k != "src" and not k.startswith("_")]
    out = [type(ev).__name__] + [repr(getattr(ev, k)) for k in slots]
    if isinstance(ev, ToolEvent):
        out += [repr(ev.args()), ev.summary()]
    return tuple(out)


def agent_monitor(typed: bool, fmt: str) -> Monitor:
    """A monitor of format ``fmt`` (forced, or ``auto``); with ``typed`` off its decoder's typed
    path is off from the first line (forced) or as soon as the format is detected (``auto``)."""
    mon = Monitor(clock=lambda: CLOCK_MS, fmt=fmt)
    if fmt == "auto":
        detect = mon.reader.on_detect

        def detected(adapter) -> None:
            detect(adapter)
            if not typed:
                mon.decoder.typed = None

        mon.reader.on_detect = detected
    elif not typed:
        mon.decoder.typed = None
    return mon


def read_agent(chunks: list[bytes], typed: bool, fmt: str = "claude") -> Monitor:
    """A monitor fed ``chunks``, the format forced (typed decoding from the first line) or
    ``auto`` (from the first chunk after the one the format is found in). With ``typed`` off,
    everything takes the generic path: the adapter's typed decoder is turned off as soon as it
    is given."""
    return fed(agent_monitor(typed, fmt), chunks)


def one_by_one_same_as_batches(chunks: list[bytes], fmt: str) -> None:
    """Session.apply_all (a batch at a time, with its inline paths) leaves the same model as
    Session.apply on each item, for the adapted items of ``chunks``."""
    mon = Monitor(clock=lambda: CLOCK_MS, fmt=fmt)
    batches = [mon.reader.adapt(mon.decoder.feed(chunk)) for chunk in chunks]
    batches.append(mon.reader.adapt(mon.decoder.finish()) + mon.reader.finish())
    batched, single = Monitor(clock=lambda: CLOCK_MS, fmt=fmt), Monitor(clock=lambda: CLOCK_MS, fmt=fmt)
    for items in batches:
        changes: list = []
        i = 0
        while i < len(items):
            i = batched.splitter.current.session.apply_all(items, i, changes)
            if i < len(items):
                batched.splitter.apply(items[i])
                i += 1
        for item in items:
            single.splitter.apply(item)
    for a, b in zip(batched.runs, single.runs):
        a.session.finish()
        b.session.finish()
    assert snapshot(batched) == snapshot(single)


def adapted_calls(chunks: list[bytes], typed: bool, fmt: str) -> list[tuple]:
    """The canonical tool events the adapter gives for ``chunks``, as plain data (:func:`canon`).
    (Its other events may differ in how deltas are merged around a line one path calls invalid;
    the models are compared for those.)"""
    mon = agent_monitor(typed, fmt)
    items = []
    for chunk in chunks:
        items += mon.reader.adapt(mon.decoder.feed(chunk))
    items += mon.reader.adapt(mon.decoder.finish()) + mon.reader.finish()
    return [canon(i) for i in items if isinstance(i, ToolEvent)]


def assert_same_agent_model(data: bytes, chunks: list[bytes] | None = None,
                            fmt: str = "claude") -> tuple[Monitor, Monitor]:
    chunks = chunks or [data]
    assert adapted_calls(chunks, True, fmt) == adapted_calls(chunks, False, fmt)
    typed, generic = read_agent(chunks, True, fmt), read_agent(chunks, False, fmt)
    assert snapshot(typed) == snapshot(generic)
    one_by_one_same_as_batches(chunks, fmt)
    assert [(r.last_event, r.first_line, r.last_line, r.session.agent) for r in typed.runs] == \
        [(r.last_event, r.first_line, r.last_line, r.session.agent) for r in generic.runs]
    for a, b in zip(typed.runs, generic.runs):
        assert [c.state() for c in a.session.tool_calls.values()] == [c.state() for c in b.session.tool_calls.values()]
        assert (a.session.first_ts_ms, a.session.last_ts_ms, a.session.usage, a.session.subagent_calls) == \
            (b.session.first_ts_ms, b.session.last_ts_ms, b.session.usage, b.session.subagent_calls)
    return typed, generic


MSG_IDS = ["msg_1", "msg_2"]
TOOL_IDS = ["toolu_1", "toolu_2", "toolu_3"]
PARENTS = [None, None, "toolu_1", ""]
# integers where the adapter reads one: mostly small, now and then beyond 64 bits (orjson gives
# floats there), a bool, a float, or any loose value
ODD_INDEXES = st.sampled_from(BIG + [True, 1.0, -1]) | loose


@st.composite
def claude_stream_event(draw) -> dict:
    et = often(draw, st.sampled_from(["content_block_delta"] * 4 + ["content_block_start", "content_block_stop",
                                                                    "message_start", "message_delta",
                                                                    "message_stop", "ping"]))
    ev: dict = {"type": et}
    maybe(draw, ev, "index", often(draw, st.integers(0, 2), ODD_INDEXES))
    if et == "content_block_delta":
        dt = often(draw, st.sampled_from(["text_delta", "thinking_delta", "input_json_delta", "signature_delta"]))
        delta: dict = {"type": dt}
        field = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}.get(
            dt if isinstance(dt, str) else "", "text")
        maybe(draw, delta, field, often(draw, st.sampled_from(["a", "b", "", "ha", '{"command": "ls"}', '"x"',
                                                               '{"file_path": "/a"}'])))
        if draw(st.integers(0, 6)) == 0:  # a field of another delta type beside it
            delta[draw(st.sampled_from(["text", "thinking", "partial_json"]))] = often(draw, st.sampled_from(["z", ""]))
        maybe(draw, ev, "delta", often(draw, st.just(delta)))
    elif et == "content_block_start":
        cb: dict = {"type": often(draw, st.sampled_from(["text", "thinking", "tool_use", "server_tool_use",
                                                         "redacted_thinking"]))}
        maybe(draw, cb, "id", often(draw, st.sampled_from(TOOL_IDS)))
        maybe(draw, cb, "name", often(draw, st.sampled_from(["Bash", "Read", "mcp__s__t", "Task", "Edit"])))
        maybe(draw, cb, "input", often(draw, st.sampled_from([{}, {"command": "ls"}, {"file_path": "/a"}])))
        maybe(draw, ev, "content_block", often(draw, st.just(cb)))
    elif et == "message_start":
        msg = {"id": often(draw, st.sampled_from(MSG_IDS)), "type": "message", "role": "assistant", "content": []}
        maybe(draw, ev, "message", often(draw, st.just(msg)))
    elif et == "message_delta":
        ev["delta"] = {"stop_reason": "tool_use"}
        ev["usage"] = {"output_tokens": draw(st.integers(0, 9))}
    line: dict = {"type": "stream_event"}
    maybe(draw, line, "event", often(draw, st.just(ev)))
    maybe(draw, line, "parent_tool_use_id", often(draw, st.sampled_from(PARENTS)))
    maybe(draw, line, "session_id", "s1")
    if draw(st.integers(0, 6)) == 0:
        line[draw(st.sampled_from(["subtype", "timestamp_ms", "uuid"]))] = draw(TS)
    return line


# tool names of every canonical kind whose result the adapter builds its own way, and inputs
# those kinds read (an edit's strings make its diff, a todo list its summary)
TOOL_NAMES = ["Bash", "Read", "Edit", "TodoWrite", "WebFetch", "Task", "mcp__s__t", "Grep", "Weird"]
TOOL_INPUTS = [{"command": "ls", "file_path": "/a"}, {"file_path": "/a", "old_string": "a\n", "new_string": "b\n"},
               {"todos": [{"content": "x", "status": "in_progress"}]}, {"description": "d", "prompt": "p"}, {}]
# a tool_result's content: mostly a string (left raw by the typed path), else text blocks, other blocks
RESULT_STRINGS = ["out", "", "line 1\nline 2 «quoted» ✓\t\"x\"", "Claude requested permissions to write to /a"]
RESULT_CONTENTS = RESULT_STRINGS * 3 + [[{"type": "text", "text": "a"}], [{"type": "text", "text": "a"}, {"type": "image"}],
                                        [{"type": "tool_reference", "tool_name": "t"}], ["s", 1], {"type": "text"}]
# a user line's tool_use_result: read for a shell call's output, an edit's patch, a todo list
TOOL_USE_RESULTS = [{"stdout": "o", "stderr": "e", "interrupted": False}, {"stdout": "o2", "interrupted": True},
                    {"structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                          "lines": ["-a", "+b"]}], "filePath": "/a"},
                    {"newTodos": [{"content": "x", "status": "completed"}]}, "text", None, [1]]


@st.composite
def claude_user_event(draw) -> dict:
    """A ``user`` line (the typed path's UserEvent, or the generic one for shapes it refuses):
    tool results of every content shape, text blocks, other blocks, a loose value now and then
    (rarer than elsewhere: a line has many fields, and most lines must fit the typed structs)."""

    def often(draw, regular, rare=None):
        return draw(regular) if draw(st.integers(0, 24)) else draw(rare if rare is not None else loose)

    blocks: list = []
    for _ in range(draw(st.integers(0, 3))):
        bt = often(draw, st.sampled_from(["tool_result", "tool_result", "tool_result", "text", "image"]))
        block: dict = {"type": bt}
        if bt == "text":
            maybe(draw, block, "text", often(draw, st.sampled_from(["go", "", "x y"])))
        elif bt != "image":
            maybe(draw, block, "tool_use_id", often(draw, st.sampled_from(TOOL_IDS)))
            maybe(draw, block, "content", often(draw, st.sampled_from(RESULT_CONTENTS)))
            maybe(draw, block, "is_error", often(draw, st.sampled_from([False, False, True, None])))
        blocks.append(block if draw(st.integers(0, 24)) else draw(loose))
    msg: dict = {"role": "user"}
    maybe(draw, msg, "content", often(draw, st.just(blocks), st.sampled_from(["a prompt", ""]) | loose))
    line: dict = {"type": "user"}
    maybe(draw, line, "message", often(draw, st.just(msg)))
    maybe(draw, line, "parent_tool_use_id", often(draw, st.sampled_from(PARENTS)))
    maybe(draw, line, "timestamp", often(draw, st.sampled_from(["2026-09-21T14:13:20.223Z", "2026-09-21", "x"])))
    if draw(st.integers(0, 2)) == 0:
        line["tool_use_result"] = often(draw, st.sampled_from(TOOL_USE_RESULTS))
    if draw(st.integers(0, 6)) == 0:
        line["isSynthetic"] = often(draw, st.booleans())
    if draw(st.integers(0, 8)) == 0:
        line[draw(st.sampled_from(["subtype", "timestamp_ms", "uuid"]))] = draw(TS)
    line["session_id"] = "s1"
    return line


USAGES = [{"input_tokens": 1, "output_tokens": 3, "cache_read_input_tokens": 2}, {"output_tokens": 2**65},
          {"input_tokens": "x"}, {"output_tokens": 1, "output_tokens_details": {"thinking_tokens": 1}}, None, 5, {}]


@st.composite
def claude_assistant_event(draw) -> dict:
    """An ``assistant`` line (the typed path's AssistantEvent, or the generic one for shapes it
    refuses): text, thinking and tool-call blocks, a server tool's result, usage of any shape,
    an error, a loose value now and then (rarer than elsewhere, as in claude_user_event)."""

    def often(draw, regular, rare=None):
        return draw(regular) if draw(st.integers(0, 24)) else draw(rare if rare is not None else loose)

    blocks: list = []
    for _ in range(draw(st.integers(0, 3))):
        bt = often(draw, st.sampled_from(["text", "text", "thinking", "tool_use", "tool_use", "server_tool_use",
                                          "web_search_tool_result", "redacted_thinking"]))
        block: dict = {"type": bt}
        if bt == "text":
            maybe(draw, block, "text", often(draw, st.sampled_from(["a", "ab", "b", "", "x «y»"])))
        elif bt == "thinking":
            maybe(draw, block, "thinking", often(draw, st.sampled_from(["t", ""])))
            block["signature"] = "x"
        elif bt in ("tool_use", "server_tool_use"):
            maybe(draw, block, "id", often(draw, st.sampled_from(TOOL_IDS)))
            maybe(draw, block, "name", often(draw, st.sampled_from(TOOL_NAMES)))
            maybe(draw, block, "input", often(draw, st.sampled_from(TOOL_INPUTS)))
        elif bt == "web_search_tool_result":
            maybe(draw, block, "tool_use_id", often(draw, st.sampled_from(TOOL_IDS)))
            maybe(draw, block, "content", often(draw, st.sampled_from(RESULT_CONTENTS)))
        blocks.append(block if draw(st.integers(0, 24)) else draw(loose))
    msg: dict = {"role": "assistant"}
    maybe(draw, msg, "id", often(draw, st.sampled_from(MSG_IDS)))
    maybe(draw, msg, "content", often(draw, st.just(blocks), st.sampled_from(["a text", ""]) | loose))
    if draw(st.integers(0, 2)) == 0:
        msg["usage"] = often(draw, st.sampled_from(USAGES))
    line: dict = {"type": "assistant"}
    maybe(draw, line, "message", often(draw, st.just(msg)))
    maybe(draw, line, "parent_tool_use_id", often(draw, st.sampled_from(PARENTS)))
    maybe(draw, line, "timestamp", often(draw, st.sampled_from(["2026-09-21T14:13:20.223Z", "2026-09-21", "x"])))
    if draw(st.integers(0, 8)) == 0:
        line["error"] = often(draw, st.sampled_from(["rate_limit", ""]))
    if draw(st.integers(0, 8)) == 0:
        line[draw(st.sampled_from(["subtype", "timestamp_ms", "uuid"]))] = draw(TS)
    line["session_id"] = "s1"
    return line


@st.composite
def claude_system_event(draw) -> dict:
    """A ``system`` line: mostly the subtypes the typed path reads (status, thinking_tokens)
    with their fields in any shape, now and then another (read from its dict)."""
    subtype = often(draw, st.sampled_from(["status", "status", "thinking_tokens", "init", "hook_response",
                                           "compact_boundary", "task_progress"]))
    line: dict = {"type": "system"}
    maybe(draw, line, "subtype", subtype)
    for key, values in (("status", ["requesting", "compacting", "", None]), ("compact_result", ["success", ""]),
                        ("compact_error", ["boom " * 60, ""]), ("permissionMode", ["plan", ""]),
                        ("estimated_tokens", [0, 1234, None]), ("session_id", ["s1"])):
        if draw(st.integers(0, 2)) == 0:
            line[key] = often(draw, st.sampled_from(values))
    if subtype == "init":
        line.update(session_id="s1", model="m", claude_code_version="2.1.9")
    if draw(st.integers(0, 8)) == 0:
        line[draw(st.sampled_from(["timestamp_ms", "uuid"]))] = draw(TS)
    return line


@st.composite
def claude_other_event(draw) -> dict:
    kind = draw(st.sampled_from(["assistant", "assistant", "user", "user", "system", "result", "rate_limit_event"]))
    parent = often(draw, st.sampled_from(PARENTS))
    if kind == "assistant":
        if draw(st.booleans()):
            return draw(claude_assistant_event())
        block = draw(st.sampled_from([
            {"type": "text", "text": draw(st.sampled_from(["a", "ab", "b", ""]))},
            {"type": "thinking", "thinking": "t", "signature": "x"},
            {"type": "tool_use", "id": draw(st.sampled_from(TOOL_IDS)), "name": draw(st.sampled_from(TOOL_NAMES)),
             "input": draw(st.sampled_from(TOOL_INPUTS))},
        ]))
        msg = {"id": draw(st.sampled_from(MSG_IDS)), "role": "assistant", "content": [block],
               "usage": {"input_tokens": 1, "output_tokens": draw(st.integers(0, 3))}}
        return {"type": "assistant", "message": msg, "parent_tool_use_id": parent, "session_id": "s1",
                "timestamp": "2026-09-21T14:13:20.223Z"}
    if kind == "user":
        return draw(claude_user_event())
    if kind == "system":
        if draw(st.booleans()):
            return draw(claude_system_event())
        return draw(st.sampled_from([
            {"type": "system", "subtype": "init", "session_id": "s1", "model": "m", "claude_code_version": "2.1.9"},
            {"type": "system", "subtype": "status", "status": "requesting"},
            {"type": "system", "subtype": "hook_started", "hook_event": "SessionStart"},
        ]))
    if kind == "result":
        return {"type": "result", "subtype": "success", "is_error": False, "result": "ab", "session_id": "s1"}
    return {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}


def _claude_line(draw, event: dict) -> bytes:
    if draw(st.integers(0, 8)) == 0:  # keys in another order: the kind is found by key, not by prefix
        event = dict(reversed(list(event.items())))
    line = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
    if draw(st.integers(0, 10)) == 0 and line.endswith(b"}"):  # a duplicate key: the last value counts
        line = line[:-1] + b"," + draw(st.sampled_from([b'"type":"user"', b'"type":"stream_event"',
                                                       b'"event":{"type":"message_stop"}', b'"parent_tool_use_id":"p"',
                                                       b'"event":7'])) + b"}"
    return line


@st.composite
def delta_burst(draw) -> list[dict]:
    """Consecutive deltas (the adapter merges those of one type): main agent's and sub-agents'."""
    dt, field = draw(st.sampled_from([("text_delta", "text"), ("thinking_delta", "thinking")]))
    return [{"type": "stream_event", "event": {"type": "content_block_delta", "index": draw(st.integers(0, 1)),
                                               "delta": {"type": draw(st.sampled_from([dt, dt, dt, "text_delta"])),
                                                         field: draw(st.sampled_from(["a", "b", ""]))}},
             "parent_tool_use_id": draw(st.sampled_from(PARENTS))}
            for _ in range(draw(st.integers(2, 5)))]


@st.composite
def claude_stream(draw) -> bytes:
    head = [{"type": "system", "subtype": "init", "session_id": "s1", "model": "m", "claude_code_version": "2.1.9"}]
    parts = draw(st.lists(st.lists(claude_stream_event() | claude_stream_event() | claude_other_event(), max_size=4)
                          | delta_burst(), min_size=2, max_size=15))
    events = (head if draw(st.integers(0, 5)) else []) + [e for part in parts for e in part]
    lines = [_claude_line(draw, e) for e in events]
    if lines and draw(st.integers(0, 4)) == 0:  # a damaged line among them (cut, bad UTF-8, a stray text line)
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = draw(st.sampled_from([lines[at][: len(lines[at]) // 2], lines[at][:-1] + b',"x":"\xff"}',
                                          b"Error: boom", lines[at].replace(b'"a"', b'"\\ud800"')]))
    return b"\n".join(lines) + b"\n"


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(claude_stream())
@example(b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}\n'
         b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}},"parent_tool_use_id":null}\n'
         b'{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"thinking"}}}\n'
         b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a"}}}\n'
         b'{"type":"stream_event","event":{"type":"content_block_delta","index":18446744073709551616,"delta":{"type":"thinking_delta","thinking":"b"}}}\n'
         b'{"type":"stream_event","event":{"type":"content_block_stop","index":0}}\n')
@example(b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}\n'
         b'{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
         b'"id":"toolu_1","name":"Bash","input":{"n":1e400}}}}\n'
         b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}},'
         b'"parent_tool_use_id":0}\n')  # a number beyond a double where it is read; a falsy non-string parent
@example(b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}\n'
         b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}}\n'
         b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"b"}},'
         b'"parent_tool_use_id":"toolu_1"}\n')  # a sub-agent's delta after the main agent's: not merged
@example(b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}\n'
         b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}},"parent_tool_use_id":"toolu_1"}\n'
         b'{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
         b'"id":"toolu_2","name":"Bash","input":{}}},"parent_tool_use_id":"toolu_1"}\n'
         b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
         b'"partial_json":"{\\"command\\": \\"ls\\"}"}},"parent_tool_use_id":"toolu_1"}\n'
         b'{"type":"stream_event","event":{"type":"message_stop"},"parent_tool_use_id":"toolu_1"}\n')  # a sub-agent's call
@example(b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}\n'
         b'{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
         b'"id":"toolu_1","name":"Bash","input":{"n":1e400}}}}\n')  # the same, last: no event on its line (last_event)
@example(b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}\n'
         b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","usage":{"n":1}}}}\n'
         b'{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
         b'"id":"toolu_1","input":{}}}}\n'
         b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}\n')
# a call started by its content_block_start only (no name: "unknown"), completed by its result
def test_claude_typed_and_generic_paths_build_the_same_model(data):
    assert_same_agent_model(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_claude_typed_any_chunking_same_model(data):
    raw = data.draw(claude_stream())
    assert_same_agent_model(raw, data.draw(chunked(raw)), fmt=data.draw(st.sampled_from(["claude", "auto"])))


def test_claude_real_captures_take_the_typed_path_and_match():
    from replays import capture_params

    paths = [p for p in (param.values[0] for param in capture_params()) if p is not None and "/claude/" in str(p)]
    if not paths:
        pytest.skip("no Claude Code captures under ../shared/streams/agents/claude")
    partial = 0
    for path in paths:
        raw = path.read_bytes()
        assert_same_agent_model(raw)
        assert_same_agent_model(raw, [raw[i:i + 997] for i in range(0, len(raw), 997)], fmt="auto")
        items = Decoder(typed=claude_typed.DECODER).feed(raw)
        if b'"type":"stream_event"' in raw:  # a partial-messages capture: its deltas decoded typed
            assert StreamEvent in {type(i) for i in items}, path.name
            partial += 1
    # which captures are there depends on the shared folder; at least one has partial messages
    # (a001-raw and lumid-identity do), else the typed stream_event path went untested
    assert partial >= 1, [p.name for p in paths]


def test_claude_the_known_difference_a_number_beyond_a_double_in_a_skipped_field():
    """As for Cursor's typed path: msgspec skips a field it doesn't read without looking at its
    value, so a delta with a number beyond a double elsewhere in its line is read (its text
    shown), where orjson calls the whole line invalid JSON. Where the typed path reads the
    number's part (a content_block), the line is the same diagnostic on both paths."""
    head = (b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}\n'
            b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}}\n')
    line = (b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta",'
            b'"text":"b"}},"uuid":1e400}\n')
    typed, generic = read_agent([head + line], True), read_agent([head + line], False)
    assert typed.session.assistant_text == "ab" and typed.session.invalid_lines == 0
    assert generic.session.assistant_text == "a" and generic.session.invalid_lines == 1
    start = (b'{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":'
             b'{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"n":-2e308}}}}\n')
    assert_same_agent_model(head + start + line[:-1].replace(b"1e400", b'"u"') + b"\n")


def test_claude_user_lines_numbers_beyond_a_double():
    """A ``user`` line (claude_typed.UserEvent): a number beyond a double in a part the typed
    path decodes (a tool result's content that is not a string) makes the line invalid on both
    paths, before any of its results counts; in a part it never reads (the line's
    ``tool_use_result``: a view re-reads it by offset) it is the known difference: the typed
    path reads the line."""
    head = (b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}\n'
            b'{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t1","name":"Bash",'
            b'"input":{"command":"ls"}},{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/a"}}]}}\n')
    ok = b'{"type":"tool_result","tool_use_id":"t1","content":"out"}'
    line = (b'{"type":"user","message":{"content":[' + ok + b',{"type":"tool_result","tool_use_id":"t2",'
            b'"content":[1e400]}]}}\n')
    typed, _generic = assert_same_agent_model(head + line)
    assert typed.session.invalid_lines == 1 and typed.session.tool_counts["incomplete"] == 2
    for line in (b'{"type":"user","message":{"content":[' + ok + b']},"tool_use_result":{"n":1e400}}\n',
                 b'{"type":"user","message":{"content":[' + ok + b',' + ok.replace(b"t1", b"t2") +
                 b']},"tool_use_result":{"n":1e400}}\n'):
        typed, generic = read_agent([head + line], True), read_agent([head + line], False)
        assert typed.session.invalid_lines == 0 and typed.session.tool_counts["success"] == line.count(b"tool_result")
        assert generic.session.invalid_lines == 1 and generic.session.tool_counts["incomplete"] == 2


# -- Codex's adapter on random streams ----------------------------------------------------------
#
# Codex has no typed decoder (its lines are mostly tool output that orjson reads as fast as
# msgspec plus the UTF-8 check would): the same model from any chunking, from the model's batch
# path and its one-event path, and never a crash on any shape of item.

ITEM_IDS = ["item_1", "item_2", "item_3"]


@st.composite
def codex_item(draw) -> dict:
    t = often(draw, st.sampled_from(["command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list",
                                     "agent_message", "reasoning", "error", "mystery_tool"]))
    it: dict = {"id": often(draw, st.sampled_from(ITEM_IDS)), "type": t}
    status = often(draw, st.sampled_from(["in_progress", "completed", "failed", "declined"]))
    if t == "command_execution":
        it.update(command=often(draw, st.sampled_from(["ls", "/bin/bash -lc 'rg x'", ""])),
                  aggregated_output=often(draw, st.sampled_from(["", "out\n", "x" * 300])),
                  exit_code=often(draw, st.sampled_from([None, 0, 1, 2])), status=status)
    elif t == "file_change":
        it.update(changes=often(draw, st.just([{"path": "a.py", "kind": "update"}, {"path": "b", "kind": "add"}])),
                  status=status)
    elif t == "mcp_tool_call":
        it.update(server="s", tool=often(draw, st.sampled_from(["t", "lean_sync"])),
                  arguments=often(draw, st.just({"path": "p"})),
                  result=often(draw, st.sampled_from([None, {"content": [{"type": "text", "text": "r"}]},
                                                      {"content": [], "structured_content": {"a": 1}}])),
                  error=often(draw, st.sampled_from([None, {"message": "bad"}, "worse"])), status=status)
    elif t == "web_search":
        it["query"] = often(draw, st.sampled_from(["q", ""]))
    elif t == "todo_list":
        it["items"] = often(draw, st.just([{"text": "a", "completed": True}, {"text": "b", "completed": False}]))
    elif t in ("agent_message", "reasoning"):
        it["text"] = often(draw, st.sampled_from(["done", "**thinking**", ""]))
    elif t == "error":
        it["message"] = often(draw, st.sampled_from(["warning: x", ""]))
    else:
        it["x"] = draw(loose)
    kind = often(draw, st.sampled_from(["item.started", "item.updated", "item.completed", "item.completed"]))
    event: dict = {"type": kind}
    maybe(draw, event, "item", often(draw, st.just(it)))
    return event


@st.composite
def codex_stream(draw) -> bytes:
    head = [{"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"}]
    other = st.sampled_from([
        {"type": "turn.started"},
        {"type": "turn.completed", "usage": {"input_tokens": 5, "cached_input_tokens": 1, "output_tokens": 2}},
        {"type": "turn.failed", "error": {"message": "boom"}},
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "thread.started", "thread_id": "t2"},
    ])
    events = (head if draw(st.integers(0, 5)) else []) + draw(st.lists(codex_item() | codex_item() | other,
                                                                        min_size=2, max_size=40))
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() for e in events]
    return b"\n".join(lines) + b"\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(codex_stream(), st.sampled_from(["codex", "auto"]))
def test_codex_adapter_gives_the_same_model_any_way_it_is_applied(data, fmt):
    assert_same_agent_model(data, fmt=fmt)


def test_every_agent_capture_same_model_typed_and_generic(tmp_path):
    """Every real capture of another agent, and bench/gen_stream.py's Claude Code (partial
    messages), Codex and Gemini CLI streams: the fast paths (typed decoding, merged deltas, the
    model's batch path) and the generic ones give the same canonical tool events and model."""
    import sys

    from replays import capture_params

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from gen_stream import generate_agent

    paths = [param.values[0] if hasattr(param, "values") else param for param in capture_params()]
    for agent, partial in (("claude", True), ("codex", False), ("gemini", False)):
        paths.append(tmp_path / f"{agent}.jsonl")
        generate_agent(paths[-1], agent, 300_000, partial)
    for path in paths:
        raw = path.read_bytes()
        assert_same_agent_model(raw, fmt="auto")
        assert_same_agent_model(raw, [raw[i:i + 501] for i in range(0, len(raw), 501)], fmt="auto")
