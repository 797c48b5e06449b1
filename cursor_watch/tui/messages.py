"""How the screens talk to the app: the messages they post, and what they may read of it.

A screen asks the app for something (open a tool call's detail, go back to the runs list,
compare two runs) by posting a message (Textual delivers it to the app's ``on_…`` handler,
after the screen's own). What a screen reads of the app while it draws (the run's stall, its
quiet, whether there are several runs) is the :class:`MonitorHost` protocol, got with
:func:`host_of`: typed, and no ``getattr`` guessing at the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from textual.message import Message

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from ..core.limits import Stall
    from ..core.quiet import Quiet
    from ..core.runs import Run

RowKey = tuple[str, int, int]  # a run in the runs list: (source, index, identity)


class CompareRequested(Message):
    """``c`` on the runs list: compare run ``a`` with run ``b`` (row keys)."""

    def __init__(self, a: RowKey, b: RowKey) -> None:
        super().__init__()
        self.a = a
        self.b = b


class DetailRequested(Message):
    """Open the detail screen of the shown run's tool call ``call_id`` (Enter on a row, a
    match in a tool call's output)."""

    def __init__(self, call_id: str | None) -> None:
        super().__init__()
        self.call_id = call_id


class RunsListRequested(Message):
    """Back to the runs list (Escape in the run view)."""


class MonitorHost(Protocol):
    """What the screens read of the app (:class:`~cursor_watch.tui.app.CursorWatchApp`)."""

    several: bool  # several runs or sources are watched (the run view has a list to go back to)
    redact: bool  # the ``e`` key's export is redacted (False: ``--no-redact``)
    export_problem: str | None  # ``--otlp``: the latest "spans not sent" line, for every run's diagnostics

    def stall_of(self, run: Run) -> Stall | None:
        """The run's stall now, or None."""
        ...

    def quiet_of(self, run: Run) -> Quiet | None:
        """The live run's quiet and its reason (once shown), or None."""
        ...

    def discard_pending(self, run: Run) -> None:
        """Drop the changes queued for ``run``: its view was just built from the model."""
        ...


def host_of(node: DOMNode) -> MonitorHost:
    """The app ``node`` runs in, as the screens see it."""
    return cast("MonitorHost", node.app)
