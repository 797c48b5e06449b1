"""Streams with planted loops, made from the shared real captures.

:func:`plant` copies a tool call's own lines (every line that names its id: Cursor's
``call_id``, Claude Code's ``tool_use_id``, Codex's ``item.id``) ``times`` more times, each copy
with a new id, right after the last of them: the agent "called it again" with the same kind and
arguments. ``fail=True`` makes the copies fail (Claude Code: ``is_error`` on the
``tool_result``). The result is still each agent's own format, line for line.
"""

from __future__ import annotations

from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "streams"
CURSOR_TOOLS = SHARED / "real" / "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl"
CLAUDE_COMPACTION = (SHARED / "agents" / "claude"
                     / "littlebearapps__untether__tests__fixtures__claude_compaction_2.1.285.jsonl")
CODEX_FILE_CHANGE = (SHARED / "agents" / "codex"
                     / "shane-kercheval__switchboard__crates__harness__tests__fixtures__codex__file-change.jsonl")


def _escaped(call_id: str) -> bytes:
    """The id as it is written inside a JSON string (a Cursor id's newline as ``\\n``)."""
    return orjson.dumps(call_id)[1:-1]


def plant(lines: list[bytes], call_id: str, times: int, at: int | None = None, fail: bool = False,
          tag: str = "loop") -> list[bytes]:
    """``lines`` with the call ``call_id`` repeated ``times`` more times.

    Args:
        lines: the stream's lines (no newline at their ends).
        call_id: the call's id as the agent wrote it (decoded).
        times: copies to add.
        at: the index to insert the copies at (default: after the call's last line).
        fail: Claude Code only: the copies' ``tool_result`` says ``"is_error":true``.
        tag: the copies' ids are ``ID-TAGn`` (plant the same call twice with two tags).

    Raises:
        ValueError: no line names ``call_id``.
    """
    key = _escaped(call_id)
    quoted = b'"' + key + b'"'  # the whole id, not a copy's (``ID-loop1``)
    own = [i for i, line in enumerate(lines) if quoted in line]
    if not own:
        raise ValueError(f"no line names {call_id!r}")
    block = [lines[i] for i in own]
    copies: list[bytes] = []
    for n in range(1, times + 1):
        for line in block:
            line = line.replace(quoted, b'"' + key + f"-{tag}{n}".encode() + b'"')
            if fail and b'"type":"tool_result"' in line:
                if b'"is_error":false' in line:
                    line = line.replace(b'"is_error":false', b'"is_error":true', 1)
                else:
                    line = line.replace(b'"type":"tool_result"', b'"type":"tool_result","is_error":true', 1)
            copies.append(line)
    where = own[-1] + 1 if at is None else at
    return lines[:where] + copies + lines[where:]


def lines_of(path: Path) -> list[bytes]:
    """A capture's lines."""
    return path.read_bytes().splitlines()


def joined(lines: list[bytes]) -> bytes:
    """The lines as a stream (one newline after each)."""
    return b"".join(line + b"\n" for line in lines)


def cursor_looping() -> bytes:
    """The Cursor tools capture with ``npm test`` failing 4 times (3 retries planted after the
    real failure) and ``src/math.js`` read 3 times before its edit (2 reads planted) and twice
    after it (a new streak: 2, under the default limit)."""
    lines = lines_of(CURSOR_TOOLS)
    read_id = next(orjson.loads(x)["call_id"] for x in lines if b"readToolCall" in x)
    test_id = next(orjson.loads(x)["call_id"] for x in lines if b'"command": "npm test"' in x)
    edit_at = next(i for i, x in enumerate(lines) if b"editToolCall" in x and b"src/math.js" in x)
    lines = plant(lines, read_id, 2, at=edit_at + 1, tag="again")  # after the edit: a new streak of reads
    lines = plant(lines, read_id, 2)  # before the edit: 3 in a row
    lines = plant(lines, test_id, 3)
    return joined(lines)


def claude_looping() -> bytes:
    """The Claude Code compaction capture (several runs) with ``Read /tmp/fixture/big.txt`` 4 times
    in its first run (3 copies of its read) and ``wc -l /tmp/fixture/big.txt`` failing 4 times (copies
    with ``is_error``; the real one succeeded first, so the failure streak is the 4 copies)."""
    lines = lines_of(CLAUDE_COMPACTION)
    read_id = "toolu_014FEDDQvDnKydChq79tCJJL"
    bash_id = next(o["message"]["content"][0]["id"] for o in map(orjson.loads, lines)
                   if o.get("type") == "assistant" and o["message"]["content"][0].get("type") == "tool_use"
                   and o["message"]["content"][0]["input"].get("command") == "wc -l /tmp/fixture/big.txt")
    lines = plant(lines, read_id, 3)
    lines = plant(lines, bash_id, 4, fail=True)
    return joined(lines)


def codex_looping() -> bytes:
    """The Codex file-change capture with ``git status --short`` failing 5 times (4 copies)."""
    return joined(plant(lines_of(CODEX_FILE_CHANGE), "item_1", 4))
