"""cursor-watch: a live monitor for AI coding agents' NDJSON event streams (Cursor Agent CLI, Claude Code, Codex, Gemini CLI)."""

__version__ = "0.1.0"
