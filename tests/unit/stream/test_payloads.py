"""A tool call's detail without a screen: payloads re-read by offset, sections, lexers, cuts."""

from __future__ import annotations

import orjson

from cursor_watch.formats.cursor import payloads_of
from cursor_watch.stream.payloads import call_detail, load_call_events
from cursor_watch.stream.watch import Monitor
from cursor_watch.safe import visible_doc
from cursor_watch.stream.sources import FileSource
from cursor_watch.core.tools import DETAIL_LINE_LIMIT, cut_payload, detail_sections, lexer_for


def _line(obj: dict) -> bytes:
    return orjson.dumps(obj) + b"\n"


def _shell(call_id: str, stdout: str, subtype: str = "completed") -> dict:
    body: dict = {"args": {"command": "pytest -q"}}
    if subtype == "completed":
        body["result"] = {"success": {"exitCode": 0, "stdout": stdout, "stderr": ""}}
    return {"type": "tool_call", "subtype": subtype, "call_id": call_id, "tool_call": {"shellToolCall": body},
            "session_id": "s", "timestamp_ms": 1_790_000_000_000}


def _monitor(data: bytes) -> Monitor:
    mon = Monitor(clock=lambda: 1_000_000.0, reread=lambda o, n: data[o:o + n])
    mon.feed(data)
    mon.finish()
    return mon


def test_payloads_are_reread_by_offset_from_the_started_and_completed_lines():
    data = _line(_shell("c\n1", "", "started")) + _line(_shell("c\n1", "ok\n" * 3))
    mon = _monitor(data)
    call = mon.session.tool_calls["c\n1"]
    args, result, note = load_call_events(call, lambda o, n: data[o:o + n])
    assert args == {"command": "pytest -q"} and result["success"]["stdout"] == "ok\nok\nok\n" and note == ""


def test_a_line_rejoined_from_a_raw_newline_is_read_back_too():
    line = _line(_shell("x", "out")).replace(b'"x"', b'"x\ny"', 1)  # a raw newline inside the call_id
    data = line.replace(b'"call_id":"x\ny"', b'"call_id":"x\ny"')
    mon = _monitor(data)
    (call,) = mon.session.tool_calls.values()
    _args, result, note = load_call_events(call, lambda o, n: data[o:o + n])
    assert note == "" and result["success"]["stdout"] == "out"


def test_an_unreadable_payload_gives_a_note_and_the_model_copy():
    data = _line(_shell("c", "", "started"))
    mon = _monitor(data)
    sections, note = call_detail(mon.session.tool_calls["c"], lambda o, n: b"")
    assert note == "the started event could not be read back from the source"
    shell = next(s for s in sections if s.title == "shell")  # from the model's own small copy of args
    assert ("command", "pytest -q") in shell.body


def test_file_source_rereads_through_one_descriptor_and_releases_it(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"0123456789")
    src = FileSource(str(path))
    assert src.reread(2, 3) == b"234" and src.reread(8, 10) == b"89"
    fd = src._reread_fd
    assert fd is not None and src.reread(0, 1) == b"0" and src._reread_fd == fd
    src.close()
    assert src._reread_fd is None and src.reread(0, 2) == b"01"  # opens again when asked
    src.close()


def test_payloads_are_cut_at_the_limit_with_a_note_saying_how_much():
    assert cut_payload("abcdef", 4) == "abcd\n… 2 more characters not shown"
    assert cut_payload("a\nb\nc\n", 2) == "a\n\n… 2 more lines (4 characters) not shown"
    assert cut_payload("a\nbcd\nef", 3) == "a\nb\n… 1 more line (5 characters) not shown"
    long = "\n".join(f"line {i}" for i in range(DETAIL_LINE_LIMIT + 5))
    cut = cut_payload(long, 10**9)
    assert cut.count("\n") == DETAIL_LINE_LIMIT and cut.endswith("… 5 more lines (50 characters) not shown")
    sections = detail_sections("shell", payloads_of("shell", {"command": "x"}, {"success": {"stdout": "y" * 500}}),
                               limit=100)
    stdout = next(s for s in sections if s.title == "stdout")
    assert stdout.body == "y" * 100 + "\n… 400 more characters not shown"


def test_grep_matches_are_cut_at_the_line_limit_with_a_note():
    files = [{"file": f"f{n}.py", "matches": [{"lineNumber": i, "content": "hit"} for i in range(300)]}
             for n in range(5)]
    result = {"success": {"workspaceResults": {"/w": {"content": {"matches": files}}}}}
    sections = detail_sections("grep", payloads_of("grep", {"pattern": "hit"}, result))
    shown = next(s for s in sections if s.kind == "matches")
    assert sum(len(lines) for _f, lines in shown.body) == DETAIL_LINE_LIMIT
    note = next(s for s in sections if s.title == "more matches")
    assert note.body == "… 500 more matching lines in 1 more files not shown"


def test_raw_json_is_left_out_on_request_only_where_the_tool_has_a_view_of_its_own():
    ls = payloads_of("shell", {"command": "ls"}, {"success": {"stdout": "a"}})
    kinds = [s.kind for s in detail_sections("shell", ls, raw=False)]
    assert "json" not in kinds and "text" in kinds
    kinds = [s.kind for s in detail_sections("shell", ls)]
    assert kinds.count("json") == 2  # the TUI keeps them (folded)
    unknown = detail_sections("frobnicate", payloads_of("frobnicate", {"x": 1}, {"failure": {"error": "no"}}),
                              raw=False)
    assert [s.title for s in unknown] == ["outcome: failure", "arguments", "result"]


def test_lexer_for_uses_the_table_then_pygments_then_no_highlighting():
    assert lexer_for("/a/b.py", "") == "python"
    assert lexer_for("/a/Makefile", "") == "make"
    assert lexer_for("/a/b.scala", "object A") == "scala"
    assert lexer_for("/a/b.unknownext", "plain words") == "default"


def test_visible_doc_shows_what_a_document_cannot_carry():
    text = "a\x1b[31m\tb\nc\ud800\ufffe\u202e\x9b"
    assert visible_doc(text) == "a\\e[31m\tb\nc\\ud800\\ufffe\\u202e\\x9b"
    assert visible_doc(text, line=True) == "a\\e[31m\\tb\\nc\\ud800\\ufffe\\u202e\\x9b"
    assert visible_doc("plain ✓ 日本") == "plain ✓ 日本"
