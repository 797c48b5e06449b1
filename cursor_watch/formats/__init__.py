"""Stream formats: what each agent CLI writes, read onto the model's canonical events.

``cursor_typed``: the typed (msgspec) decoding of Cursor's ``stream-json``, the Cursor
adapter's fast path.
"""
