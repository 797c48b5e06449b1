"""Which tool calls to show, and what counts as a problem (UI-free; the tool table and ``p`` use it).

A filter is typed as words: ``status:NAME`` and ``tool:NAME`` (each may be given more than
once: any of them matches) and free text (every word must appear in the call's tool name,
summary or failure detail; smart case, as search). ``x`` adds "problems only": calls that
failed, were rejected or are incomplete.

:class:`FilteredCalls` keeps the list of a run's calls that pass, built a slice at a time
(100,000 calls are read back from disk in pages) and kept up to date as calls change.
"""

from __future__ import annotations

import bisect
import time
from array import array
from collections.abc import Iterator
from typing import Any

from .match import Query, QueryError
from ..safe import view_redaction
from ..core.tools import STATUS_FAILURE, STATUS_INCOMPLETE, STATUS_REJECTED, STATUS_RUNNING, STATUS_SUCCESS

STATUSES = (STATUS_RUNNING, STATUS_SUCCESS, STATUS_FAILURE, STATUS_REJECTED, STATUS_INCOMPLETE)
PROBLEM_STATUSES = frozenset({STATUS_FAILURE, STATUS_REJECTED, STATUS_INCOMPLETE})
STATUS_ALIASES = {"failed": STATUS_FAILURE, "fail": STATUS_FAILURE, "error": STATUS_FAILURE,
                  "failures": STATUS_FAILURE, "reject": STATUS_REJECTED, "denied": STATUS_REJECTED,
                  "ok": STATUS_SUCCESS, "succeeded": STATUS_SUCCESS, "done": STATUS_SUCCESS,
                  "pending": STATUS_RUNNING, "cut": STATUS_INCOMPLETE, "problem": "problem", "problems": "problem"}


class FilterError(ValueError):
    """A filter that can't be used (an unknown status); the message is one line."""


def is_problem_note(note: Any) -> bool:
    """True for notes that report something going wrong.

    ``retry`` events (the CLI retrying after an error) and ``connection/reconnecting``
    (reference 2.7: seen in a failure run), source errors and save errors, and the
    model keeping records in memory because its temporary file failed.
    """
    kind, subtype = note.kind, note.subtype
    return (kind == "retry" or (kind == "connection" and subtype == "reconnecting")
            or subtype in ("error", "save_error") or (kind == "session" and subtype == "memory"))


class CallFilter:
    """A parsed tool-call filter.

    Args:
        text: the words typed (``tool:shell status:failure pytest``).
        problems_only: only failed, rejected and incomplete calls (``x``).
        collapsed: ``call_id`` s of sub-agent calls whose inner calls are hidden (``c``).

    Raises:
        FilterError: an unknown ``status:`` name.
    """

    __slots__ = ("text", "problems_only", "statuses", "tools", "words", "collapsed")

    def __init__(self, text: str = "", problems_only: bool = False, collapsed: frozenset[str] = frozenset()) -> None:
        self.text = text.strip()
        self.problems_only = problems_only
        self.collapsed = collapsed
        self.statuses: set[str] = set()
        self.tools: set[str] = set()
        words: list[str] = []
        for word in self.text.split():
            field, sep, value = word.partition(":")
            field = field.lower()
            if sep and field == "status" and value:
                name = STATUS_ALIASES.get(value.lower(), value.lower())
                if name == "problem":
                    self.statuses |= PROBLEM_STATUSES
                elif name in STATUSES:
                    self.statuses.add(name)
                else:
                    raise FilterError(f"unknown status {value!r} (one of {', '.join(STATUSES)})")
            elif sep and field == "tool" and value:
                self.tools.add(value.lower())
            else:
                words.append(word)
        try:
            self.words = [Query(w, redact=view_redaction()) for w in words]
        except QueryError as err:  # an empty word can't happen after split(); kept for safety
            raise FilterError(str(err)) from None

    @property
    def active(self) -> bool:
        """True when it hides anything."""
        return bool(self.problems_only or self.statuses or self.tools or self.words or self.collapsed)

    def passes(self, call: Any) -> bool:
        """True when ``call`` (a :class:`~cursor_watch.core.model.ToolCall`) is shown."""
        status = call.status
        if self.collapsed and call.parent_call_id in self.collapsed:
            return False
        if self.problems_only and status not in PROBLEM_STATUSES:
            return False
        if self.statuses and status not in self.statuses:
            return False
        if self.tools and call.tool.lower() not in self.tools and call.kind.lower() not in self.tools:  # Bash or shell
            return False
        if self.words:
            text = f"{call.tool}\n{call.summary}\n{call.detail}"
            return all(q.matches(text) for q in self.words)
        return True

    def describe(self) -> str:
        """The filter in words, as the table header shows it."""
        parts = []
        if self.problems_only:
            parts.append("problems only")
        if self.text:
            parts.append(self.text)
        if self.collapsed:
            n = len(self.collapsed)
            parts.append(f"{n} sub-agent{'s' if n != 1 else ''} folded (c)")
        return " · ".join(parts)


class FilteredCalls:
    """The indices (1-based) of a run's tool calls that pass a filter, in order.

    Built a slice at a time with :meth:`step` (``done`` tells when complete); then
    :meth:`update` keeps it right as calls change or arrive.
    """

    def __init__(self, session: Any, flt: CallFilter) -> None:
        self.session = session
        self.filter = flt
        self.rows = array("l")
        self.done = False
        self._next = 1  # the next call index to look at while building
        self._iter: Iterator[Any] | None = None

    def step(self, budget_s: float = 0.008) -> bool:
        """Look at calls for about ``budget_s`` seconds; True when every call has been seen."""
        if self.done:
            return True
        deadline = time.monotonic() + budget_s
        calls = self.session.tool_calls
        if self._iter is None:
            self._iter = calls.values()
        passes = self.filter.passes
        n = 0
        for call in self._iter:
            if call.index < self._next:
                continue
            self._next = call.index + 1
            if passes(call):
                self.rows.append(call.index)
            n += 1
            if n % 64 == 0 and time.monotonic() >= deadline:
                return False
        self._iter = None
        if self._next <= len(calls):  # calls added while building
            return False
        self.done = True
        return True

    @property
    def progress(self) -> float:
        """Share of the calls looked at."""
        total = len(self.session.tool_calls)
        return 1.0 if self.done or not total else min(1.0, (self._next - 1) / total)

    def update(self, call: Any) -> None:
        """``call`` changed or is new: add or drop its row."""
        if call.index >= self._next and not self.done:
            return  # the build will get to it
        rows = self.rows
        i = bisect.bisect_left(rows, call.index)
        present = i < len(rows) and rows[i] == call.index
        ok = self.filter.passes(call)
        if ok and not present:
            rows.insert(i, call.index)
        elif present and not ok:
            del rows[i]
        if call.index >= self._next:
            self._next = call.index + 1

    def row_of(self, index: int) -> int | None:
        """The row showing call ``index``, or None when it is filtered out."""
        rows = self.rows
        i = bisect.bisect_left(rows, index)
        return i if i < len(rows) and rows[i] == index else None

    def nearest_row(self, index: int) -> int:
        """The row of call ``index``, or of the next call shown after it (clamped)."""
        i = bisect.bisect_left(self.rows, index)
        return min(i, max(0, len(self.rows) - 1))
