"""The Cursor Agent CLI's ``stream-json``: the canonical format itself (``stream-json-reference.md``).

Its adapter passes items on unchanged; the typed fast path of issue 17 decodes this format in
:mod:`cursor_watch.events` before it gets here.
"""

from __future__ import annotations

from .common import Adapter, Item


class CursorAdapter(Adapter):
    """Identity: Cursor's events are the canonical ones."""

    name = "cursor"
    agent = "cursor"
    typed_decoder = True  # cursor_typed's structs (the decoder's own default)

    def adapt(self, items: list[Item]) -> list[Item]:
        """``items`` unchanged (``corrections`` stays ``[0]``)."""
        return items
