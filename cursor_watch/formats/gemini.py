"""Google Gemini CLI: ``gemini -p PROMPT --output-format stream-json`` (filled in below)."""

from __future__ import annotations

from typing import Any

from . import Adapter


class GeminiAdapter(Adapter):
    """Gemini CLI ``stream-json`` -> canonical events."""

    name = "gemini"
    agent = "gemini-cli"


def tool_call_of(data: dict, call_id: str, kind: str, args: Any) -> Any:
    """The canonical ``tool_call`` object for ``call_id`` in one Gemini CLI line, or None."""
    return None
