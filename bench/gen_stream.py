#!/usr/bin/env python3
"""Deterministic generator of realistic synthetic cursor-agent ``stream-json`` streams.

    python bench/gen_stream.py OUT --size 100MB [--partial] [--tool-calls N]
                               [--payload-min 1KB --payload-max 1MB] [--seed 1]
    python bench/gen_stream.py OUT N [--content-kb K] [--seed 1]
    python bench/gen_stream.py OUT --agent claude|codex|gemini --size 200MB [--partial] [--seed 1]

The second form is the event-dense stream: N tool calls with partial output and
about K KB of stream per tool call (its events and payloads, plus the thinking and text
around it; K is 4 by default). ``OUT 20000`` is about 83 MB and 290k events,
``OUT 40000 --content-kb 6 --seed 3`` about 236 MB and 675k events.

The same arguments always give the same bytes (a seeded ``random.Random``; no clock,
no ``uuid4``). Event shapes copy the real captures in ``../shared/streams/real/``
(``stream-json-reference.md``): key order, compact JSON, raw UTF-8, and

* ``system/init``, then the ``user`` prompt echo;
* per model call: a ``thinking`` block (token deltas, then ``completed`` with no
  ``text``), the assistant text of the segment, then one tool call or a few parallel
  ones (one ``model_call_id``, completed out of order);
* assistant text: without ``--partial`` one event per segment, shape B (``timestamp_ms``
  and ``model_call_id``) before a tool call, shape C (neither) at the end of the turn;
  with ``--partial`` shape-A deltas (``timestamp_ms``, no ``model_call_id``), then the
  same text re-sent as B or C. Deltas repeat tokens ("```" twice, "-" twice) on purpose;
* ``tool_call`` ``started``/``completed`` with the ``<name>ToolCall`` key and its
  siblings ``hookAdditionalContexts``, ``toolCallId``, ``startedAtMs``, ``completedAtMs``
  (int64 as strings); ``call_id`` = ``call-<uuid>-<n>\\nfc_<uuid>_<n>`` (an escaped
  newline in the JSON, a real LF once decoded);
* ``shellToolCall`` (success, ``failure`` exit 1, ``rejected`` with no ``args``),
  ``readToolCall``, ``editToolCall`` (create and modify), ``grepToolCall``; payloads
  (shell stdout, file contents, grep matches) are between ``--payload-min`` and
  ``--payload-max`` characters, log-uniform, cut from a pre-generated pool of text;
* ``result`` with ``usage``; ``result.result`` is exactly the concatenation of the
  segments, so a consumer can check its reconstruction against it.

A sidecar ``OUT.meta.json`` (also printed on stdout) records what was written: bytes,
lines, events, tool calls by status, segments, the assistant text's length and SHA-256.

Sizes take ``KB``/``MB``/``GB`` (binary: 1 MB = 1,048,576 bytes) or plain bytes.
``--size`` is a target: the stream ends at the first model-call boundary past it
(plus the final segment and ``result``), within a few percent. With ``--tool-calls N``
exactly N tool calls are written; with ``--size`` as well, payload sizes are set so the
stream lands near the target (``--payload-max`` still caps them).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

GENERATOR_VERSION = 3  # bump when the output for given arguments changes

_DUMPS = orjson.dumps
_TOKEN = re.compile(r" ?\w+| ?[^\w\s]+|\s+")
_NL = orjson.OPT_APPEND_NEWLINE

# bytes written per payload character, by tool (shell: stdout + interleavedOutput; edit:
# streamContent twice, before/after contents, diff; grep: serialized match objects)
_MULT = {"shell": 2.05, "read": 1.03, "edit": 4.1, "grep": 1.08}

UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "KIB": 1024, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
         "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}


def parse_size(text: str) -> int:
    """``100MB`` -> 104857600; ``1.5KB`` -> 1536; ``2048`` -> 2048."""
    t = text.strip().upper().replace(" ", "")
    num = t.rstrip("KMGIB")
    unit = t[len(num):]
    if unit not in UNITS or not num:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (use e.g. 512KB, 100MB, 1GB)")
    try:
        value = float(num)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad size {text!r}") from None
    return int(value * UNITS[unit])


def format_size(n: int) -> str:
    """1048576 -> ``1.0 MB`` (binary units, like :func:`parse_size`)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


# --------------------------------------------------------------------------- text pools

_WORDS = (
    "the a to of and in is it that for this on with as be we not are can I'll let me now "
    "check test tests file files function module import error fix fixed update updated add added "
    "remove run running result results output value values config parser stream event events line "
    "lines call calls tool handler model session text segment buffer offset payload summary view "
    "first then next also still only because so if when where which while before after into from "
    "looks good failing passes passing green red assertion expected actual type types return "
    "returns None True False list dict string bytes index key keys path paths directory build "
    "cache memory time timestamp retry connection request response status exit code command "
    "naïve café → ✓ 日本語 — «quoted» 🙂"
).split()

_IDENTS = ("parse_line", "apply", "feed", "Session", "ToolCall", "framer", "decode_all", "summary_json",
           "read_chunk", "handle_event", "StreamParser", "config", "offset", "payload", "cursor_watch",
           "main", "run", "test_roundtrip", "build_index", "LineFramer", "orjson", "self", "data", "items")
_FILES = ("src/app/main.py", "src/app/parser.py", "src/app/model.py", "src/app/views.py", "tests/test_parser.py",
          "tests/test_model.py", "lib/util/strings.ts", "lib/api/client.ts", "web/src/App.tsx", "README.md",
          "docs/design.md", "pkg/server/handler.go", "pkg/server/handler_test.go", "Cargo.toml", "src/lib.rs",
          "scripts/release.sh", "config/settings.yaml", "package.json", "src/app/__init__.py", "Makefile")
_COMMANDS = ("pytest -q tests/test_parser.py", "npm test", "go test ./...", "cargo test --quiet", "git diff --stat",
             "ls -la src/app", "cat src/app/parser.py", "rg -n \"def apply\" src", "make lint", "python -m mypy src",
             "git status --short", "wc -l src/app/*.py", "npm run build", "uv run pytest -x", "git log --oneline -20")
_PATTERNS = ("def apply", "orjson\\.loads", "TODO", "call_id", "import .*stream", "class \\w+Error",
             "timestamp_ms", "async def", "return None", "raise ValueError")


def _code_line(rng: random.Random) -> str:
    i = rng.randrange(9)
    a, b, c = rng.choice(_IDENTS), rng.choice(_IDENTS), rng.choice(_IDENTS)
    ind = " " * (4 * rng.randrange(4))
    if i == 0:
        return f"{ind}def {a}({b}, {c}=None):"
    if i == 1:
        return f"{ind}{a} = {b}.{c}({rng.randrange(1000)})"
    if i == 2:
        return f"{ind}if {a} is not None and len({b}) > {rng.randrange(64)}:"
    if i == 3:
        return f"{ind}return {{\"{a}\": {b}, \"{c}\": [{rng.randrange(99)}, {rng.randrange(99)}]}}"
    if i == 4:
        return f"{ind}# {' '.join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 12)))}"
    if i == 5:
        return f"{ind}raise ValueError(f\"bad {a}: {{{b}!r}}\\t(line {{{c}}})\")"
    if i == 6:
        return f"{ind}for {a} in {b}.{c}():"
    if i == 7:
        return ""
    return f"{ind}const {a} = await {b}.{c}(`${{{a}}}/path`, {{ retries: {rng.randrange(5)} }});"


def _log_line(rng: random.Random) -> str:
    i = rng.randrange(6)
    f = rng.choice(_FILES)
    if i == 0:
        return f"{f}::{rng.choice(_IDENTS)} \x1b[32mPASSED\x1b[0m [{rng.randrange(101):3d}%]"
    if i == 1:
        return f"{f}:{rng.randrange(1, 900)}:{rng.randrange(1, 80)}: E501 line too long ({rng.randrange(89, 200)} > 88)"
    if i == 2:
        return (f"2026-10-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:"
                f"{rng.randrange(60):02d}Z INFO {rng.choice(_IDENTS)}: "
                f"{' '.join(rng.choice(_WORDS) for _ in range(6))}")
    if i == 3:
        return f"  File \"/home/dev/projects/acme/{f}\", line {rng.randrange(1, 900)}, in {rng.choice(_IDENTS)}"
    if i == 4:
        return (f"-rw-r--r--  1 dev dev {rng.randrange(100, 99999):>6} Oct {rng.randrange(1, 29):2d} "
                f"12:{rng.randrange(60):02d} {f}")
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(4, 16)))


class TextPool:
    """A few MB of realistic text (code, logs, prose); payloads are slices of it."""

    def __init__(self, rng: random.Random, lines: int = 60_000) -> None:
        out = []
        for _ in range(lines):
            out.append(_code_line(rng) if rng.random() < 0.6 else _log_line(rng))
        self.lines = out
        self.text = "\n".join(out) + "\n"
        self.size = len(self.text)
        # line starts, so slices begin at a line boundary
        starts = [0]
        pos = 0
        for line in out:
            pos += len(line) + 1
            starts.append(pos)
        self.starts = starts[:-1]
        # grep match objects, built once and shared between results
        self.grep_matches = [
            {"lineNumber": n + 1, "content": line[:200], "contentTruncated": len(line) > 200, "isContextLine": False}
            for n, line in enumerate(out[:8192])
        ]
        self.match_bytes = len(orjson.dumps(self.grep_matches)) / len(self.grep_matches)

    def take(self, rng: random.Random, n: int) -> str:
        """About ``n`` characters starting at a random line, wrapping around the pool."""
        if n <= 0:
            return ""
        start = self.starts[rng.randrange(len(self.starts))]
        end = start + n
        if end <= self.size:
            return self.text[start:end]
        parts = [self.text[start:]]
        need = n - (self.size - start)
        while need > self.size:
            parts.append(self.text)
            need -= self.size
        parts.append(self.text[:need])
        return "".join(parts)


# --------------------------------------------------------------------------- the generator


class Generator:
    """Writes one agent turn (init, prompt, model calls with tool calls, result) to ``out``."""

    def __init__(self, out, seed: int, partial: bool, size: int | None, tool_calls: int | None,
                 payload_min: int, payload_max: int, parallel: float = 0.1, answer_chars: int = 0) -> None:
        self.out = out
        self.rng = random.Random(seed)
        self.partial = partial
        self.size = size
        self.tool_calls_target = tool_calls
        self.payload_min = max(0, payload_min)
        self.payload_max = max(self.payload_min, payload_max)
        self.parallel = parallel
        self.answer_chars = answer_chars
        self.pool = TextPool(random.Random(seed * 7919 + 1))
        self.bytes = 0
        self.lines = 0
        self.events = 0
        self.tool_calls = 0
        self.statuses = {"success": 0, "failure": 0, "rejected": 0}
        self.tools: dict[str, int] = {}
        self.segments: list[str] = []
        self.text_chars = 0
        self.thinking_chars = 0
        self.payload_chars = 0
        self.model_calls = 0
        self.overhead_per_call = 4_000.0  # bytes of a tool call besides its payload (running mean)
        # less thinking and text per model call when --size / --tool-calls leaves little room
        self.chatter = 1.0
        if size is not None and tool_calls:
            self.chatter = min(1.0, max(0.1, size / tool_calls / (24_000 if partial else 12_000)))
        rng = self.rng
        self.session_id = self.uuid()
        self.request_id = self.uuid()
        self.cwd = "/home/dev/projects/acme-" + rng.choice(("api", "web", "cli", "core"))
        self.ts = 1_793_000_000_000 + rng.randrange(10_000_000)
        self.first_ts = self.ts

    # -- helpers ---------------------------------------------------------------

    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def emit(self, obj: dict) -> None:
        b = _DUMPS(obj, option=_NL)
        self.out.write(b)
        self.bytes += len(b)
        self.lines += 1
        self.events += 1

    def tick(self, lo: int = 0, hi: int = 3) -> int:
        self.ts += self.rng.randint(lo, hi)
        return self.ts

    def sentence(self, lo: int, hi: int, scale: float = 1.0) -> str:
        rng = self.rng
        n = rng.randint(lo, hi)
        if scale < 1.0:
            n = max(1, round(n * scale))
        words = [rng.choice(_WORDS) for _ in range(n)]
        return " ".join(words)

    def segment_text(self) -> str:
        """Assistant text with Markdown, code fences and lists (repeated tokens on purpose)."""
        rng = self.rng
        parts = [self.sentence(4, 30, self.chatter).capitalize() + rng.choice((".", ":", "!", "."))]
        r = rng.random()
        if r < 0.25:
            parts.append("\n\n- `" + rng.choice(_FILES) + "`\n- `" + rng.choice(_FILES) + "`\n")
        elif r < 0.4:
            parts.append("\n\n```bash\n" + rng.choice(_COMMANDS) + "\n```\n")
        elif r < 0.5:
            parts.append(" " + self.sentence(3, 20) + ".\n")
        if rng.random() < 0.3:
            parts.append("\n")  # Composer ends segments with a newline sometimes
        return "".join(parts)

    def long_answer(self) -> str:
        """A final answer of about ``answer_chars`` characters (a long report, in many deltas)."""
        parts, n = [], 0
        while n < self.answer_chars:
            t = self.segment_text() + "\n"
            parts.append(t)
            n += len(t)
        return "".join(parts)

    def deltas(self, text: str) -> list[str]:
        """Cut ``text`` into model-like tokens: words with their leading space, punctuation
        runs ("```", "-", "**") and newlines, each its own delta; long words sometimes split."""
        rng = self.rng
        out = []
        for tok in _TOKEN.findall(text):
            if len(tok) > 6 and rng.random() < 0.3:
                k = rng.randint(2, len(tok) - 2)
                out.append(tok[:k])
                out.append(tok[k:])
            else:
                out.append(tok)
        return out

    # -- events ----------------------------------------------------------------

    def header(self) -> None:
        self.emit({"type": "system", "subtype": "init", "apiKeySource": "login", "cwd": self.cwd,
                   "session_id": self.session_id, "model": "Composer 2.5", "permissionMode": "default"})
        prompt = ("Work through the failing tests in " + self.cwd.rsplit("/", 1)[-1]
                  + ": read the code, run the tests, fix what breaks and tell me what you changed.")
        self.emit({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
                   "session_id": self.session_id})

    def thinking(self) -> None:
        rng = self.rng
        if rng.random() < 0.1 + 0.6 * (1.0 - self.chatter):
            return  # some model calls think nothing
        text = self.sentence(5, 40, self.chatter)
        if rng.random() < 0.2:
            text = "**" + self.sentence(2, 5).capitalize() + "**\n\n" + text
        sid = self.session_id
        for piece in self.deltas(text):
            self.emit({"type": "thinking", "subtype": "delta", "text": piece, "session_id": sid,
                       "timestamp_ms": self.tick(0, 2)})
        self.thinking_chars += len(text)
        self.emit({"type": "thinking", "subtype": "completed", "session_id": sid, "timestamp_ms": self.tick(0, 2)})

    def assistant(self, text: str, model_call_id: str | None) -> None:
        """One segment: deltas (partial) then the flush; B with ``model_call_id``, C without."""
        sid = self.session_id
        if self.partial:
            for piece in self.deltas(text):
                self.emit({"type": "assistant",
                           "message": {"role": "assistant", "content": [{"type": "text", "text": piece}]},
                           "session_id": sid, "timestamp_ms": self.tick(0, 2)})
        msg = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        if model_call_id is not None:
            self.emit({"type": "assistant", "message": msg, "session_id": sid, "model_call_id": model_call_id,
                       "timestamp_ms": self.tick(0, 2)})
        else:
            self.emit({"type": "assistant", "message": msg, "session_id": sid})
        self.segments.append(text)
        self.text_chars += len(text)

    def payload_size(self, calls_left: int, mult: float) -> int:
        """Characters of the next payload (``mult``: bytes written per payload character)."""
        rng = self.rng
        if self.tool_calls_target is not None and self.size is not None:
            per_call = (self.size - self.bytes) / max(1, calls_left) - self.overhead_per_call
            n = per_call / mult * rng.uniform(0.5, 1.5)
            return int(min(self.payload_max, max(0.0, n)))
        lo, hi = max(1, self.payload_min), max(1, self.payload_max)
        n = math.exp(rng.uniform(math.log(lo), math.log(hi))) if hi > lo else lo
        if self.size is not None:  # don't overshoot a small target with one huge payload
            n = min(n, max(lo, (self.size - self.bytes) / mult))
        return int(n)

    def model_call(self, final: bool, calls_left: int) -> int:
        """Thinking, text, then 1-3 tool calls (or, when ``final``, the closing segment)."""
        rng = self.rng
        n = self.model_calls
        self.model_calls += 1
        before = self.bytes
        mcid = f"{self.request_id}-{n}-{''.join(rng.choice('abcdefghijklmnopqrstuvwxyz0123456789') for _ in range(4))}"
        self.thinking()
        if final:
            self.assistant(self.long_answer() if self.answer_chars else self.segment_text(), None)
            return 0
        if rng.random() < 0.85:  # a tool call may come with no text before it
            self.assistant(self.segment_text(), mcid)
        k = 1
        if rng.random() < self.parallel:
            k = rng.randint(2, 3)
        k = max(1, min(k, calls_left))
        call_uuid, fc_uuid = self.uuid(), self.uuid()
        calls = []
        for i in range(k):
            call_id = f"call-{call_uuid}-{i}\nfc_{fc_uuid}_{i}"
            calls.append(self.tool_started(call_id, mcid, calls_left - i))
        order = list(range(k))
        if k > 1:
            rng.shuffle(order)  # parallel calls complete in finishing order
        payload_bytes = 0.0
        for i in order:
            payload_bytes += self.tool_completed(calls[i])
        # running mean of what a tool call costs besides its payload (events, text, thinking)
        spent = (self.bytes - before - payload_bytes) / k
        self.overhead_per_call = 0.9 * self.overhead_per_call + 0.1 * max(300.0, spent)
        return k

    # -- tool calls ------------------------------------------------------------

    def tool_started(self, call_id: str, mcid: str, calls_left: int) -> dict:
        rng = self.rng
        r = rng.random()
        tool = "shell" if r < 0.4 else "read" if r < 0.65 else "edit" if r < 0.8 else "grep"
        size = self.payload_size(calls_left, _MULT[tool])
        started_ms = self.ts - rng.randint(0, 150)  # startedAtMs can precede the event's timestamp_ms
        c = {"tool": tool, "call_id": call_id, "mcid": mcid, "size": size, "started_ms": started_ms}
        if tool == "shell":
            cmd = rng.choice(_COMMANDS)
            words = cmd.split()
            desc = self.sentence(3, 7).capitalize()
            c["args"] = {
                "command": cmd, "workingDirectory": "", "timeout": 30000, "toolCallId": call_id,
                "simpleCommands": [words[0]], "hasInputRedirect": False, "hasOutputRedirect": False,
                "parsingResult": {"parsingFailed": False, "executableCommands": [
                    {"name": words[0], "args": [{"type": "word", "value": w} for w in words[1:]], "fullText": cmd}],
                    "hasRedirects": False, "hasCommandSubstitution": False, "redirects": []},
                "fileOutputThresholdBytes": "40000", "isBackground": False, "skipApproval": False,
                "timeoutBehavior": "TIMEOUT_BEHAVIOR_BACKGROUND", "hardTimeout": 86400000, "description": desc,
                "closeStdin": True, "conversationId": self.session_id, "adminCommandDenylist": []}
            c["desc"] = desc
            body = {"args": c["args"], "description": desc}
        elif tool == "read":
            c["args"] = {"path": f"{self.cwd}/{rng.choice(_FILES)}"}
            body = {"args": c["args"]}
        elif tool == "edit":
            c["content"] = self.pool.take(rng, size)
            c["args"] = {"path": f"{self.cwd}/{rng.choice(_FILES)}", "streamContent": c["content"]}
            body = {"args": c["args"]}
        else:
            c["args"] = {"pattern": rng.choice(_PATTERNS), "path": self.cwd, "caseInsensitive": False,
                         "multiline": False, "toolCallId": call_id, "offset": 0}
            body = {"args": c["args"]}
        self.emit({"type": "tool_call", "subtype": "started", "call_id": call_id,
                   "tool_call": {f"{tool}ToolCall": body, "hookAdditionalContexts": [], "toolCallId": call_id,
                                 "startedAtMs": str(started_ms)},
                   "model_call_id": mcid, "session_id": self.session_id, "timestamp_ms": self.ts})
        return c

    def tool_completed(self, c: dict) -> float:
        rng = self.rng
        tool, size, args = c["tool"], c["size"], c["args"]
        completed_ms = c["started_ms"] + rng.randint(20, 5000)
        self.ts = max(self.ts, completed_ms) + rng.randint(0, 40)
        status = "success"
        body: dict
        if tool == "shell":
            r = rng.random()
            cmd = args["command"]
            if r < 0.05:
                status = "rejected"  # refused by the permission layer: completed carries no args
                body = {"result": {"rejected": {"command": cmd, "workingDirectory": self.cwd, "reason": "",
                                                "isReadonly": False}}}
                size = 0
            else:
                stdout = self.pool.take(rng, size)
                if r < 0.15:
                    status = "failure"
                    stderr = ("Traceback (most recent call last):\n" + self.pool.take(rng, rng.randint(100, 1500))
                              + "AssertionError: expected 5, got -1\n")
                    outcome = {"failure": {"command": cmd, "workingDirectory": "", "exitCode": 1, "signal": "",
                                           "stdout": stdout, "stderr": stderr,
                                           "executionTime": completed_ms - c["started_ms"],
                                           "interleavedOutput": stdout + stderr, "aborted": False,
                                           "localExecutionTimeMs": rng.randint(5, 900)}, "isBackground": False}
                else:
                    outcome = {"success": {"command": cmd, "workingDirectory": "", "exitCode": 0, "signal": "",
                                           "stdout": stdout, "stderr": "",
                                           "executionTime": completed_ms - c["started_ms"],
                                           "interleavedOutput": stdout, "localExecutionTimeMs": rng.randint(5, 900)},
                               "isBackground": False}
                body = {"args": args, "result": outcome, "description": c["desc"]}
        elif tool == "read":
            content = self.pool.take(rng, size)
            lines = content.count("\n") + 1
            body = {"args": args, "result": {"success": {
                "content": content, "isEmpty": not content, "exceededLimit": False, "totalLines": lines,
                "fileSize": len(content.encode()), "path": args["path"],
                "readRange": {"startLine": 1, "endLine": lines},
                "relatedCursorRulePaths": [], "relatedCursorRules": []}}}
        elif tool == "edit":
            after = c["content"]
            path = args["path"]
            nlines = after.count("\n") + 1
            if rng.random() < 0.3:  # create
                diff = f"--- /dev/null\n+++ b/{path}\n@@ -1,0 +1,{nlines} @@\n+" + after.replace("\n", "\n+")
                success = {"path": path, "linesAdded": nlines, "linesRemoved": 0, "diffString": diff,
                           "afterFullFileContent": after, "message": f"Wrote contents to {path}"}
            else:  # modify one line
                cut = after.find("\n", len(after) // 2)
                cut = cut + 1 if cut != -1 else len(after)
                old = "    " + _code_line(rng).strip() + "\n"
                before = after[:cut] + old + after[cut:]
                ln = after.count("\n", 0, cut) + 1
                new_next = after[cut:after.find("\n", cut) + 1] if cut < len(after) else ""
                diff = (f"--- a/{path}\n+++ b/{path}\n@@ -{ln},2 +{ln},1 @@\n-{old}"
                        + (" " + new_next if new_next else ""))
                success = {"path": path, "linesAdded": 0, "linesRemoved": 1, "diffString": diff,
                           "beforeFullFileContent": before, "afterFullFileContent": after,
                           "message": f"The file {path} has been updated."}
            body = {"args": args, "result": {"success": success}}
        else:
            pool = self.pool.grep_matches
            want = max(1, round(size / self.pool.match_bytes))
            files, total = [], 0
            while total < want:
                k = min(want - total, rng.randint(1, 40))
                start = rng.randrange(len(pool) - k)
                files.append({"file": "./" + rng.choice(_FILES), "matches": pool[start:start + k]})
                total += k
            body = {"args": args, "result": {"success": {
                "pattern": args["pattern"], "path": args["path"], "outputMode": "content",
                "workspaceResults": {args["path"]: {"content": {"matches": files, "totalLines": total,
                                                                "totalMatchedLines": total, "clientTruncated": False,
                                                                "ripgrepTruncated": False}}}}}}
        call_id = c["call_id"]
        self.emit({"type": "tool_call", "subtype": "completed", "call_id": call_id,
                   "tool_call": {f"{tool}ToolCall": body, "hookAdditionalContexts": [], "toolCallId": call_id,
                                 "startedAtMs": str(c["started_ms"]), "completedAtMs": str(completed_ms)},
                   "model_call_id": c["mcid"], "session_id": self.session_id, "timestamp_ms": self.ts})
        self.tool_calls += 1
        self.statuses[status] += 1
        self.tools[tool] = self.tools.get(tool, 0) + 1
        self.payload_chars += size
        return _MULT[tool] * size

    def result(self) -> None:
        text = "".join(self.segments)
        rng = self.rng
        duration = self.ts - self.first_ts + rng.randint(50, 500)
        self.emit({"type": "result", "subtype": "success", "duration_ms": duration, "duration_api_ms": duration,
                   "is_error": False, "result": text, "session_id": self.session_id, "request_id": self.request_id,
                   "usage": {"inputTokens": 20_000 + self.model_calls * rng.randint(900, 4000),
                             "outputTokens": len(text) // 4 + 1, "cacheReadTokens": self.model_calls * 11_136,
                             "cacheWriteTokens": 0}})

    # -- the run ---------------------------------------------------------------

    def run(self) -> None:
        self.header()
        target_calls = self.tool_calls_target
        size = self.size
        while True:
            if target_calls is not None:
                left = target_calls - self.tool_calls
                if left <= 0:
                    break
            else:
                left = 1 << 30
                # the final answer and the result (which repeats all assistant text) still follow
                tail = self.text_chars + 2_000 + self.answer_chars * (40 if self.partial else 3)
                if size is not None and self.bytes + tail >= size:
                    break
            self.model_call(False, left)
        self.model_call(True, 0)
        self.result()

    def meta(self) -> dict:
        text = "".join(self.segments)
        return {
            "generator_version": GENERATOR_VERSION,
            "bytes": self.bytes, "lines": self.lines, "events": self.events,
            "tool_calls": self.tool_calls, "statuses": self.statuses, "tools": dict(sorted(self.tools.items())),
            "model_calls": self.model_calls, "segments": len(self.segments), "assistant_chars": len(text),
            "assistant_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "thinking_chars": self.thinking_chars, "payload_chars": self.payload_chars,
            "partial": self.partial, "session_id": self.session_id,
        }


def generate(out_path: str | os.PathLike, size: int | None = None, partial: bool = False,
             tool_calls: int | None = None, payload_min: int = 1024, payload_max: int = 1 << 20,
             seed: int = 1, parallel: float = 0.1, answer_chars: int = 0) -> dict:
    """Write a stream to ``out_path`` and ``out_path + '.meta.json'``; return the meta dict."""
    if size is None and tool_calls is None:
        size = 10 << 20
    out_path = Path(out_path)
    tmp = out_path.with_name(out_path.name + ".tmp")
    t0 = time.perf_counter()
    with open(tmp, "wb", buffering=8 << 20) as f:
        gen = Generator(f, seed, partial, size, tool_calls, payload_min, payload_max, parallel, answer_chars)
        gen.run()
    os.replace(tmp, out_path)
    meta = gen.meta()
    meta["args"] = {"size": size, "partial": partial, "tool_calls": tool_calls, "payload_min": payload_min,
                    "payload_max": payload_max, "seed": seed, "parallel": parallel}
    if answer_chars:
        meta["args"]["answer_chars"] = answer_chars
    meta["seconds"] = round(time.perf_counter() - t0, 3)
    Path(str(out_path) + ".meta.json").write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2 | _NL))
    return meta



def looped(template: bytes) -> tuple[list[bytes], Iterator[bytes], bytes]:
    """A generated stream as an endless live source (for ``soak.py`` and ``bench_tui.py``).

    Returns ``(head, body, result)``: the ``init`` and prompt lines, an endless iterator
    over the other lines in order (every ``call_id`` made unique per loop, so each loop
    adds new tool calls), and the ``result`` line that ends the stream.
    """
    lines = template.splitlines(keepends=True)
    body = [ln for ln in lines[2:] if b'"type":"result"' not in ln]
    result = next(ln for ln in lines if b'"type":"result"' in ln)

    def loop() -> Iterator[bytes]:
        yield from body
        for k in itertools.count(1):
            marker = b'"call-%d-' % k
            for ln in body:
                yield ln.replace(b'"call-', marker)

    return lines[:2], loop(), result


def pace(out, head: list[bytes], body: Iterator[bytes], rate: float, seconds: float,
         on_write: Callable[[int], None] | None = None, nap: float = 0.005) -> int:
    """Write ``head``, then ``body`` lines at ``rate`` per second for ``seconds``.

    ``out`` is a binary file; ``on_write(sent)`` runs after every write. Returns the
    number of lines written (the caller writes the ``result`` line after).
    """
    out.write(b"".join(head))
    out.flush()
    sent = len(head)
    t0 = time.monotonic()
    while (elapsed := time.monotonic() - t0) < seconds:
        due = int(elapsed * rate) + len(head) - sent
        if due > 0:
            out.write(b"".join(next(body) for _ in range(due)))
            out.flush()
            sent += due
            if on_write is not None:
                on_write(sent)
        time.sleep(nap)
    return sent

CONTENT_KB = 4.0  # default --content-kb: 20000 calls make about 83 MB, the event-dense stream's size


def build_parser() -> argparse.ArgumentParser:
    """The command line (``bench_summary.py --gen`` parses its stream specs with it too)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="output file (a .meta.json sidecar is written beside it)")
    p.add_argument("calls", nargs="?", type=int, metavar="N",
                   help="N tool calls with partial output, about --content-kb KB of stream each "
                        "(the event-dense stream); replaces --size, --tool-calls and --partial")
    p.add_argument("--content-kb", type=float, metavar="K",
                   help=f"with N: about K KB of stream per tool call (default {CONTENT_KB:g})")
    p.add_argument("--size", type=parse_size,
                   help="target size, e.g. 1MB, 100MB, 1GB (default 10MB without --tool-calls)")
    p.add_argument("--partial", action="store_true", help="as with --stream-partial-output: deltas plus re-sends")
    p.add_argument("--tool-calls", type=int, metavar="N", help="write exactly N tool calls")
    p.add_argument("--payload-min", type=parse_size, default=1024, help="smallest tool payload (default 1KB)")
    p.add_argument("--payload-max", type=parse_size, default=1 << 20, help="largest tool payload (default 1MB)")
    p.add_argument("--parallel", type=float, default=0.1, help="share of model calls with 2-3 parallel tool calls")
    p.add_argument("--answer-chars", type=parse_size, default=0, metavar="SIZE",
                   help="make the final answer about SIZE characters (with --partial: that many in deltas)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--agent", choices=("cursor", "claude", "codex", "gemini"), default="cursor",
                   help="whose stream: Cursor's (default), Claude Code's, Codex's or Gemini CLI's "
                        "(--size, --partial for Claude, --payload-*)")
    return p


def resolve_args(p: argparse.ArgumentParser, a: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`generate` for parsed command-line arguments ``a``.

    ``N`` means ``--tool-calls N --partial --size N*K KB`` (the size budget sets how much
    thinking and text each call gets, and its payload sizes: see ``Generator.chatter``).
    """
    if a.calls is not None:
        if a.size is not None or a.tool_calls is not None or a.partial:
            p.error("N replaces --size, --tool-calls and --partial")
        if a.calls < 0:
            p.error("N must be >= 0")
        kb = CONTENT_KB if a.content_kb is None else a.content_kb
        if kb <= 0:
            p.error("--content-kb must be > 0")
        a.tool_calls, a.partial, a.size = a.calls, True, int(a.calls * kb * 1024)
    elif a.content_kb is not None:
        p.error("--content-kb goes with N")
    if a.tool_calls is not None and a.tool_calls < 0:
        p.error("--tool-calls must be >= 0")
    return {"size": a.size, "partial": a.partial, "tool_calls": a.tool_calls, "payload_min": a.payload_min,
            "payload_max": a.payload_max, "seed": a.seed, "parallel": a.parallel, "answer_chars": a.answer_chars}


# --------------------------------------------------------------------------- other agents
# Claude Code (``claude -p --output-format stream-json --verbose [--include-partial-messages]``)
# and Codex (``codex exec --json``) streams in the shapes of the real captures in
# ../shared/streams/agents/ (docs/formats.md): key order, compact JSON, raw UTF-8; Gemini CLI's
# (``gemini -p --output-format stream-json``) in the shapes of its source (no real capture).

def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


class AgentGenerator:
    """Writes one Claude Code, Codex or Gemini CLI run of about ``size`` bytes: per step some thinking or
    reasoning, a sentence of text, one tool call (shell, read, grep, MCP) with a payload from
    the text pool, its result (1 in 12 failing); then the final answer and the result."""

    def __init__(self, out, agent: str, seed: int, size: int, partial: bool, payload_min: int,
                 payload_max: int) -> None:
        self.out, self.agent, self.size, self.partial = out, agent, size, partial
        self.rng = random.Random(seed)
        self.pool = TextPool(random.Random(seed + 1), lines=20_000)
        self.payload_min, self.payload_max = payload_min, payload_max
        self.bytes = self.lines = self.tool_calls = self.failed = 0
        self.ms = 1_790_000_000_000
        self.session = "%08x-%04x-4%03x-8%03x-%012x" % (self.rng.getrandbits(32), self.rng.getrandbits(16),
                                                       self.rng.getrandbits(12), self.rng.getrandbits(12),
                                                       self.rng.getrandbits(48))
        self.final = ""

    def emit(self, obj: dict) -> None:
        line = orjson.dumps(obj) + b"\n"
        self.out.write(line)
        self.bytes += len(line)
        self.lines += 1

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randrange(lo, hi))).capitalize() + "."

    def payload(self) -> str:
        lo, hi = math.log(self.payload_min), math.log(self.payload_max)
        return self.pool.take(self.rng, int(math.exp(self.rng.uniform(lo, hi))))

    def tool(self) -> tuple[str, dict, str, bool]:
        """(kind, input, output, failed) of the next call."""
        r = self.rng.random()
        failed = self.rng.random() < 1 / 12
        if r < 0.5:
            return "shell", {"command": self.rng.choice(_COMMANDS)}, self.payload(), failed
        if r < 0.75:
            return "read", {"path": f"src/app/{self.rng.choice(_FILES)}"}, self.payload(), failed
        if r < 0.9:
            return "grep", {"pattern": self.rng.choice(_PATTERNS), "path": "src"}, self.payload(), failed
        return "mcp", {"path": f"src/app/{self.rng.choice(_FILES)}", "line": self.rng.randrange(1, 500)}, \
            self.payload(), failed

    def run(self) -> None:
        if self.agent == "claude":
            self.claude()
        elif self.agent == "gemini":
            self.gemini()
        else:
            self.codex()

    # Claude Code -------------------------------------------------------------------------
    def claude(self) -> None:
        sid = self.session
        self.emit({"type": "system", "subtype": "init", "cwd": "/home/dev/projects/acme", "session_id": sid,
                   "tools": ["Task", "Bash", "Read", "Grep", "mcp__lsp__goals"], "mcp_servers": [
                       {"name": "lsp", "status": "connected"}], "model": "claude-sonnet-5",
                   "permissionMode": "bypassPermissions", "apiKeySource": "none", "claude_code_version": "2.1.233",
                   "uuid": self.uuid()})
        names = {"shell": "Bash", "read": "Read", "grep": "Grep", "mcp": "mcp__lsp__goals"}
        n = 0
        while self.bytes < self.size:
            n += 1
            mid = f"msg_{n:024d}"
            text = self.words(6, 30)
            kind, inp, output, failed = self.tool()
            tid = f"toolu_{n:024d}"
            if kind == "read":
                inp = {"file_path": inp["path"]}
            self.emit({"type": "system", "subtype": "status", "status": "requesting", "uuid": self.uuid(),
                       "session_id": sid})
            if self.partial:
                self.stream(mid, 0, "thinking", self.words(8, 40))
                self.stream(mid, 1, "text", text)
            else:
                self.assistant(mid, {"type": "thinking", "thinking": self.words(8, 40), "signature": "Es" + "A" * 80})
            self.assistant(mid, {"type": "text", "text": text})
            self.assistant(mid, {"type": "tool_use", "id": tid, "name": names[kind], "input": inp,
                                 "caller": {"type": "direct"}})
            self.ms += self.rng.randrange(20, 4000)
            block = {"tool_use_id": tid, "type": "tool_result", "content": output}
            if failed:
                block["is_error"] = True
                self.failed += 1
            self.emit({"type": "user", "message": {"role": "user", "content": [block]}, "parent_tool_use_id": None,
                       "session_id": sid, "uuid": self.uuid(), "timestamp": _iso(self.ms)})
            self.tool_calls += 1
        self.final = self.words(20, 60)
        if self.partial:
            self.stream("msg_final", 0, "text", self.final)
        self.assistant("msg_final", {"type": "text", "text": self.final})
        self.emit({"is_error": False, "duration_api_ms": 91234, "num_turns": self.tool_calls + 1,
                   "stop_reason": "end_turn", "session_id": sid, "total_cost_usd": 1.2345,
                   "usage": {"input_tokens": 42, "cache_creation_input_tokens": 51234, "cache_read_input_tokens": 912345,
                             "output_tokens": 23456},
                   "modelUsage": {"claude-sonnet-5": {"inputTokens": 42, "outputTokens": 23456,
                                                      "cacheReadInputTokens": 912345,
                                                      "cacheCreationInputTokens": 51234, "costUSD": 1.2345}},
                   "permission_denials": [], "subtype": "success", "result": self.final, "type": "result",
                   "duration_ms": 123456, "uuid": self.uuid()})

    def uuid(self) -> str:
        return "%032x" % self.rng.getrandbits(128)

    def assistant(self, mid: str, block: dict) -> None:
        self.ms += self.rng.randrange(5, 400)
        self.emit({"type": "assistant", "message": {"model": "claude-sonnet-5", "id": mid, "type": "message",
                                                    "role": "assistant", "content": [block], "stop_reason": None},
                   "parent_tool_use_id": None, "session_id": self.session, "uuid": self.uuid(),
                   "timestamp": _iso(self.ms)})

    def stream(self, mid: str, index: int, kind: str, text: str) -> None:
        sid = self.session
        if index == 0:
            self.emit({"type": "stream_event", "event": {"type": "message_start", "message": {
                "model": "claude-sonnet-5", "id": mid, "type": "message", "role": "assistant", "content": []}},
                "session_id": sid, "parent_tool_use_id": None, "uuid": self.uuid()})
        start = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking", "thinking": "", "signature": ""}
        self.emit({"type": "stream_event", "event": {"type": "content_block_start", "index": index,
                                                     "content_block": start},
                   "session_id": sid, "parent_tool_use_id": None, "uuid": self.uuid()})
        words = text.split(" ")
        for i in range(0, len(words), 3):
            piece = " ".join(words[i:i + 3]) + (" " if i + 3 < len(words) else "")
            delta = {"type": "text_delta", "text": piece} if kind == "text" else {"type": "thinking_delta",
                                                                                  "thinking": piece}
            self.emit({"type": "stream_event", "event": {"type": "content_block_delta", "index": index,
                                                         "delta": delta},
                       "session_id": sid, "parent_tool_use_id": None, "uuid": self.uuid()})
        self.emit({"type": "stream_event", "event": {"type": "content_block_stop", "index": index},
                   "session_id": sid, "parent_tool_use_id": None, "uuid": self.uuid()})

    # Codex -----------------------------------------------------------------------------------
    def codex(self) -> None:
        self.emit({"type": "thread.started", "thread_id": "01a0" + self.session[4:]})
        self.emit({"type": "turn.started"})
        item = 0
        usage = {"input_tokens": 0, "cached_input_tokens": 0, "cache_write_input_tokens": 0, "output_tokens": 0,
                 "reasoning_output_tokens": 0}
        while self.bytes < self.size:
            self.emit({"type": "item.completed", "item": {"id": f"item_{item}", "type": "reasoning",
                                                          "text": "**" + self.words(2, 6) + "**"}})
            item += 1
            self.emit({"type": "item.completed", "item": {"id": f"item_{item}", "type": "agent_message",
                                                          "text": self.words(6, 30)}})
            item += 1
            kind, inp, output, failed = self.tool()
            iid = f"item_{item}"
            item += 1
            if kind == "mcp":
                base = {"id": iid, "type": "mcp_tool_call", "server": "lsp", "tool": "goals", "arguments": inp}
                self.emit({"type": "item.started", "item": {**base, "result": None, "error": None,
                                                            "status": "in_progress"}})
                done = {**base, "result": {"content": [{"type": "text", "text": output}], "structured_content": None},
                        "error": {"message": "tool failed"} if failed else None,
                        "status": "failed" if failed else "completed"}
                self.emit({"type": "item.completed", "item": done})
            else:
                cmd = {"shell": inp.get("command"), "read": f"cat {inp.get('path')}",
                       "grep": f"rg -n '{inp.get('pattern')}' src"}[kind]
                command = f"/bin/bash -lc {cmd!r}"
                self.emit({"type": "item.started", "item": {"id": iid, "type": "command_execution", "command": command,
                                                            "aggregated_output": "", "exit_code": None,
                                                            "status": "in_progress"}})
                self.emit({"type": "item.completed", "item": {"id": iid, "type": "command_execution",
                                                              "command": command, "aggregated_output": output,
                                                              "exit_code": 1 if failed else 0,
                                                              "status": "failed" if failed else "completed"}})
            self.failed += failed
            self.tool_calls += 1
            usage["input_tokens"] += 1000
            usage["output_tokens"] += 50
        self.final = self.words(20, 60)
        self.emit({"type": "item.completed", "item": {"id": f"item_{item}", "type": "agent_message", "text": self.final}})
        self.emit({"type": "turn.completed", "usage": usage})

    # Gemini CLI ------------------------------------------------------------------------------
    # ``gemini -p PROMPT --output-format stream-json``: the event shapes and key order of
    # gemini-cli's packages/cli/src/nonInteractiveCli.ts and packages/core/src/output/types.ts
    # (v0.34.0 onward: ``stats.models``); no real capture exists (docs/formats.md, Gemini CLI).
    # An ISO ``timestamp`` on every event; assistant text comes as ``delta`` chunks; a tool id is
    # ``<name>-<epoch ms>-<hex>``; a failed tool's result has ``error`` and no ``output``.

    def gemini(self) -> None:
        names = {"shell": "run_shell_command", "read": "read_file", "grep": "search_file_content", "mcp": "glob"}
        self.emit({"type": "init", "timestamp": _iso(self.ms), "session_id": self.session, "model": "gemini-2.5-pro"})
        self.emit({"type": "message", "timestamp": _iso(self.ms), "role": "user",
                   "content": "Find why the parser tests fail and fix them."})
        tokens = {"input_tokens": 0, "output_tokens": 0, "cached": 0}
        while self.bytes < self.size:
            self.gemini_text(self.words(6, 30))
            kind, inp, output, failed = self.tool()
            name = names[kind]
            if kind == "read":
                inp = {"file_path": inp["path"]}
            elif kind == "grep":
                inp = {"pattern": inp["pattern"], "dir_path": "src"}
            elif kind == "mcp":
                inp = {"pattern": "src/**/*.py"}
            else:
                inp = {"command": inp["command"], "description": self.words(3, 8)}
            tid = f"{name}-{self.ms}-{self.rng.getrandbits(16):04x}"
            self.ms += self.rng.randrange(5, 400)
            self.emit({"type": "tool_use", "timestamp": _iso(self.ms), "tool_name": name, "tool_id": tid,
                       "parameters": inp})
            self.ms += self.rng.randrange(20, 4000)
            done: dict = {"type": "tool_result", "timestamp": _iso(self.ms), "tool_id": tid,
                          "status": "error" if failed else "success"}
            if failed:
                done["error"] = {"type": "TOOL_EXECUTION_ERROR", "message": output[:200]}
                self.failed += 1
            else:
                done["output"] = output
            self.emit(done)
            self.tool_calls += 1
            tokens["input_tokens"] += 1000
            tokens["cached"] += 600
            tokens["output_tokens"] += 50
        self.final = self.words(20, 60)
        self.gemini_text(self.final)
        model = {"total_tokens": tokens["input_tokens"] + tokens["output_tokens"], **tokens,
                 "input": tokens["input_tokens"] - tokens["cached"]}
        model = {k: model[k] for k in ("total_tokens", "input_tokens", "output_tokens", "cached", "input")}
        self.emit({"type": "result", "timestamp": _iso(self.ms), "status": "success",
                   "stats": {**model, "duration_ms": self.ms - 1_790_000_000_000, "tool_calls": self.tool_calls,
                             "models": {"gemini-2.5-pro": model}}})

    def gemini_text(self, text: str) -> None:
        """``text`` as the assistant's delta chunks (a few words each)."""
        words = text.split(" ")
        for i in range(0, len(words), 4):
            self.ms += self.rng.randrange(5, 120)
            piece = " ".join(words[i:i + 4]) + (" " if i + 4 < len(words) else "")
            self.emit({"type": "message", "timestamp": _iso(self.ms), "role": "assistant", "content": piece,
                       "delta": True})

    def meta(self) -> dict:
        return {"generator_version": GENERATOR_VERSION, "agent": self.agent, "bytes": self.bytes, "lines": self.lines,
                "events": self.lines, "tool_calls": self.tool_calls, "failed": self.failed, "partial": self.partial,
                "final_text": self.final}


def generate_agent(out_path: str | os.PathLike, agent: str, size: int, partial: bool = False, seed: int = 1,
                   payload_min: int = 1024, payload_max: int = 64 << 10) -> dict:
    """Write a Claude Code, Codex or Gemini CLI stream (``agent``: ``claude``, ``codex``,
    ``gemini``) of about ``size`` bytes to ``out_path`` (and its ``.meta.json``); return the meta
    (bytes, lines, events, tool_calls, failed, final_text)."""
    out_path = Path(out_path)
    tmp = out_path.with_name(out_path.name + ".tmp")
    with open(tmp, "wb", buffering=8 << 20) as f:
        gen = AgentGenerator(f, agent, seed, size, partial, payload_min, payload_max)
        gen.run()
    os.replace(tmp, out_path)
    meta = gen.meta()
    Path(str(out_path) + ".meta.json").write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2 | _NL))
    return meta


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    if a.agent != "cursor":
        if a.calls is not None or a.tool_calls is not None:
            p.error("--agent claude|codex|gemini takes --size (and --partial for Claude), not N or --tool-calls")
        meta = generate_agent(a.out, a.agent, a.size or (10 << 20), a.partial, a.seed, a.payload_min,
                              min(a.payload_max, 64 << 10) if a.payload_max == 1 << 20 else a.payload_max)
        sys.stdout.buffer.write(orjson.dumps(meta, option=_NL))
        return 0
    meta = generate(a.out, **resolve_args(p, a))
    sys.stdout.buffer.write(orjson.dumps(meta, option=_NL))
    return 0


if __name__ == "__main__":
    sys.exit(main())
