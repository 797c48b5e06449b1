"""Loops: a run's tool calls that repeat what it already did (pure; no UI, no I/O).

Three patterns, counted per run as its tool calls end (:meth:`LoopTracker.ended`, one call per
ended tool call, from :meth:`cursor_watch.core.model.Session._tool`):

* **re-read**: the same ``read`` call (same path and arguments) again, with no ``edit``,
  ``write`` or ``delete`` of that path in between (``Read src/app.py ×6``);
* **retried failure**: the same call (same kind and arguments) failing (or rejected) again,
  with no success of it in between, edits or not (``npm test failed ×4``);
* **repeat**: any other call (same kind and arguments) again, with no edit of any file in
  between (``grep TODO in src ×5``).

"The same call" is its canonical kind (:mod:`cursor_watch.formats`) and: for a ``shell`` call its
``command`` and working directory (``workingDirectory``, ``cwd``); for a ``read`` its path and
range (``offset``, ``limit``); for any other the small copy of its arguments the model keeps
(:func:`cursor_watch.core.model._small_args`: scalars, strings cut to 300 characters), its id left out;
its summary when the call ended without arguments. (Hashing a Cursor shell call's dozen arguments
cost more than the rest of the count.) A file's path is
the call's summary (:func:`cursor_watch.core.tools.summary_path`); a Codex ``file_change`` names its
paths joined by ``", "`` (``shane-kercheval…codex__file-change.jsonl``). A shell command that
changes files (``sed -i``) is not seen as an edit.

A **finding** is a key whose count reached the limit: ``--max-repeats N`` (default
:data:`DISPLAY_REPEATS` for the views; alerts and ``--enforce`` only when given). Counts are the
longest streak seen (a re-read streak ends at an edit of the file; a failure streak at a success).
**Waste** is the calls beyond the first of each streak: repeated reads, retried failures and
other repeats, whatever the limit.
"""

from __future__ import annotations

DISPLAY_REPEATS = 3  # the views mark a run looping at this many repeats unless --max-repeats says otherwise
MAX_REACHED = 1_000  # findings kept in LoopTracker.reached (a view printing them as they happen)
MAX_KEYS = 100_000  # distinct calls tracked per run; calls past it are counted as untracked
EDIT_KINDS = frozenset({"edit", "write", "delete"})
FAILED = frozenset({"failure", "rejected"})

REREAD = "reread"
RETRY = "retry"
REPEAT = "repeat"


class _Entry:
    """One distinct call: its streaks and their peaks."""

    __slots__ = ("kind", "tool", "summary", "path", "count", "peak", "fails", "fail_peak", "epoch", "first_line",
                 "last_line")

    def __init__(self, kind: str, tool: str, summary: str, path: str, line: int) -> None:
        self.kind = kind
        self.tool = tool
        self.summary = summary
        self.path = path
        self.count = 0  # the current streak of calls
        self.peak = 0
        self.fails = 0  # the current streak of failures
        self.fail_peak = 0
        self.epoch = -1  # the edit count its streak began at (a file's, for a read; the run's otherwise)
        self.first_line = line
        self.last_line = line


class Finding:
    """A call repeated at least the limit.

    Attributes:
        pattern: ``reread``, ``retry`` or ``repeat``.
        tool, kind, summary: the call (the agent's tool name, its canonical kind, its one-line summary).
        count: the longest streak (reads, failures or calls).
        first_line, last_line: stream lines of the first and the last such call (1-based).
    """

    __slots__ = ("pattern", "tool", "kind", "summary", "count", "first_line", "last_line")

    def __init__(self, pattern: str, tool: str, kind: str, summary: str, count: int, first_line: int,
                 last_line: int) -> None:
        self.pattern = pattern
        self.tool = tool
        self.kind = kind
        self.summary = summary
        self.count = count
        self.first_line = first_line
        self.last_line = last_line

    def call(self) -> str:
        """The call that repeats: ``Read src/app.py``, ``npm test`` (a shell call by its command alone)."""
        return self.summary if self.kind == "shell" and self.summary else f"{self.tool} {self.summary}".strip()

    def what(self) -> str:
        """What repeats: ``Read src/app.py``, ``npm test failed`` (a retried failure)."""
        return self.call() + (" failed" if self.pattern == RETRY else "")

    def label(self) -> str:
        """``Read src/app.py ×6``, ``npm test failed ×4`` (a shell call by its command alone):
        stream text, escape it before showing."""
        return f"{self.what()} ×{self.count}"

    def short(self) -> str:
        """``looping ×4: npm test failed``: the count first, for a narrow column that cuts its end."""
        return f"looping ×{self.count}: {self.what()}"

    def to_json(self) -> dict:
        """``{"pattern", "tool", "kind", "summary", "count", "first_line", "last_line", "label"}``."""
        return {"pattern": self.pattern, "tool": self.tool, "kind": self.kind, "summary": self.summary,
                "count": self.count, "first_line": self.first_line, "last_line": self.last_line, "label": self.label()}


class LoopTracker:
    """The loop counts of one run, fed each tool call as it ends (see the module doc).

    Attributes:
        rereads, retries, repeats: waste so far (calls beyond the first of their streak).
        untracked: ended calls not counted (past :data:`MAX_KEYS` distinct calls).
        peak: the highest count of any key so far (a view asks for findings only when it reaches the limit).
        reached: each streak that reached :attr:`limit` as it did, in stream order (a finding
            with the count then; at most :data:`MAX_REACHED`): what a streaming view prints as it happens.
        limit: the repeats at which the views mark the run looping (``--max-repeats``, else
            :data:`DISPLAY_REPEATS`: the run's ``rules.repeats``).
    """

    __slots__ = ("_entries", "_edits", "_file_edits", "rereads", "retries", "repeats", "untracked", "peak",
                 "_version", "_cached", "reached", "limit", "_reached_lines")

    def __init__(self, limit: int = DISPLAY_REPEATS) -> None:
        # hash of (kind, arguments) -> its counts: (edit count, line, failed) when seen once, else an _Entry
        self._entries: dict[int, _Entry | tuple[int, int, bool]] = {}
        self._edits = 0  # edits of any file so far
        self._file_edits: dict[str, int] = {}  # path -> edits of it so far
        self.rereads = 0
        self.retries = 0
        self.repeats = 0
        self.untracked = 0
        self.peak = 0
        self._version = 0  # calls counted: findings() is cached per (limit, version)
        self._cached: tuple[int, int, list[Finding]] | None = None
        self.reached: list[Finding] = []
        self._reached_lines: dict[int, Finding] = {}  # the line of the call that reached it -> its finding
        self.limit = limit

    @property
    def waste(self) -> int:
        """Calls that repeated one before them: ``rereads + retries + repeats``."""
        return self.rereads + self.retries + self.repeats

    def ended(self, call_id: str, kind: str, tool: str, summary: str, args: dict | None, status: str,
              line: int) -> None:
        """A tool call ended (one call per ended tool call: keep it cheap, see ``bench/README.md``).

        Args:
            call_id: its id (an ``id`` argument equal to it is not part of what the call does: a
                Codex item's; nor are ``toolCallId``, Cursor's, ``description`` and ``status``).
            kind: its canonical kind; tool: the agent's name for it; summary: its one-line summary.
            args: the model's small copy of its arguments (None when it had none), in the order the
                agent wrote them (one agent writes one tool's arguments in one order); the keys left
                out are removed from it (the model drops its copy when the call ends).
            status: ``success``, ``failure``, ``rejected`` (``incomplete`` and others count as calls only).
            line: its stream line (1-based).

        A call is known by the hash of its kind and arguments (64 bits: two different calls share
        one about once in 10^19 pairs), so the tracker keeps no argument strings.
        """
        if kind in EDIT_KINDS:
            self._edits += 1
            if summary:
                fe = self._file_edits
                fe[summary] = fe.get(summary, 0) + 1
                if ", " in summary:  # a Codex file_change: several paths
                    for path in summary.split(", "):
                        fe[path] = fe.get(path, 0) + 1
        if not args:
            key = hash((kind, summary))
        elif kind == "shell":  # its command (Cursor, Claude Code, Codex, Gemini CLI: "command") and directory
            command = args.get("command")
            key = hash((kind, summary if command is None else command, args.get("workingDirectory") or args.get("cwd")))
        elif kind == "read":  # its path (the summary, each agent's key) and range
            key = hash((kind, summary, args.get("offset"), args.get("limit")))
        else:
            # (taken out of the model's copy itself: the call dropped it at its end; a new dict costs 2x the hash)
            pop = args.pop
            pop("toolCallId", None)
            pop("description", None)
            pop("status", None)
            if args.get("id") == call_id:
                del args["id"]
            key = hash((kind, tuple(args.items())))
        entries = self._entries
        seen = entries.get(key)
        read = kind == "read"
        epoch = self._file_edits.get(summary, 0) if read else self._edits
        failed = status in FAILED
        if seen is None:  # a call seen once is a small tuple (most are): an entry from its second time on
            if len(entries) >= MAX_KEYS:
                self.untracked += 1
                return
            entries[key] = (epoch, line, failed)
            if not self.peak:
                self.peak = 1
            self._version += 1
            return
        if isinstance(seen, tuple):
            entry = entries[key] = _Entry(kind, tool, summary, summary if read else "", seen[1])
            entry.epoch, entry.count, entry.peak = seen[0], 1, 1
            if seen[2]:
                entry.fails = entry.fail_peak = 1
        else:
            entry = seen
        count = entry.count + 1
        if entry.epoch != epoch:  # an edit since its streak began (of the file, for a read): a new streak
            entry.epoch = epoch
            count = 1
        entry.count = count
        entry.last_line = line
        if count > entry.peak:
            entry.peak = count
        if failed:
            fails = entry.fails = entry.fails + 1
            if fails > entry.fail_peak:
                entry.fail_peak = fails
            if fails > 1:
                self.retries += 1
            top = fails if fails > count else count
        else:
            if count > 1:
                if read:
                    self.rereads += 1
                else:
                    self.repeats += 1
            if status == "success":
                entry.fails = 0
            top = count
        if top > self.peak:
            self.peak = top
        self._version += 1
        notify = self.limit
        if top == notify and len(self.reached) < MAX_REACHED:
            found: Finding | None = None
            if failed:  # a failure streak reaching it (a call streak's failing call: said by that)
                if entry.fails == notify:
                    found = Finding(RETRY, tool, kind, summary, notify, entry.first_line, line)
            elif count == notify:
                found = Finding(REREAD if kind == "read" else REPEAT, tool, kind, summary, notify, entry.first_line,
                                line)
            if found is not None:
                self.reached.append(found)
                self._reached_lines[line] = found

    def reached_at(self, line: int) -> Finding | None:
        """The finding the call that ended on stream line ``line`` reached (see :attr:`reached`), or None."""
        return self._reached_lines.get(line) if self._reached_lines else None

    def findings(self, limit: int | None = None) -> list[Finding]:
        """The calls repeated ``limit`` times or more, the most repeated first (a retried failure
        before the repeats of the same call); ``limit`` None: :attr:`limit`."""
        if limit is None:
            limit = self.limit
        if limit < 1 or self.peak < limit:
            return []
        cached = self._cached
        if cached is not None and cached[0] == limit and cached[1] == self._version:
            return list(cached[2])
        out = []
        for e in self._entries.values():
            if isinstance(e, tuple):  # seen once
                continue
            if e.fail_peak >= limit:
                out.append(Finding(RETRY, e.tool, e.kind, e.summary, e.fail_peak, e.first_line, e.last_line))
            elif e.peak >= limit:
                pattern = REREAD if e.kind == "read" else REPEAT
                out.append(Finding(pattern, e.tool, e.kind, e.summary, e.peak, e.first_line, e.last_line))
        out.sort(key=lambda f: -f.count)
        self._cached = (limit, self._version, out)
        return list(out)

    def worst(self, limit: int | None = None) -> Finding | None:
        """The most repeated finding, or None: what a one-line view shows (``looping: Read a.py ×6``)."""
        found = self.findings(limit)
        return found[0] if found else None

    def to_json(self, limit: int | None = None) -> dict:
        """The summary's ``loops`` object: ``{"max_repeats", "looping", "findings": [...], "waste":
        {"total", "rereads", "retries", "repeats"}, "untracked"}``."""
        limit = self.limit if limit is None else limit
        found = self.findings(limit)
        return {"max_repeats": limit, "looping": bool(found), "findings": [f.to_json() for f in found],
                "waste": {"total": self.waste, "rereads": self.rereads, "retries": self.retries,
                          "repeats": self.repeats},
                "untracked": self.untracked}


def loop_label(tracker: LoopTracker | None, limit: int | None = None) -> str:
    """``looping: Read src/app.py ×6`` (+ ``, 2 more`` when several calls repeat), "" when none."""
    if tracker is None:
        return ""
    found = tracker.findings(limit)
    if not found:
        return ""
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return f"looping: {found[0].label()}{more}"
