"""cursor-watch: a live monitor for the Cursor Agent CLI's ``stream-json`` output."""

__version__ = "0.1.0"
