"""Exports: the run(s) of a watch written to a file to share.

Views like :mod:`cursor_watch.views.plain`: they read the model (a finished run, or what a live
run holds so far), re-read payloads from the source by byte offset, and hold no format
rule. The format follows the file's extension:

* ``.html`` / ``.htm``: one self-contained page (:mod:`cursor_watch.views.export.html`);
* ``.md`` / ``.markdown``: GitHub-flavoured Markdown (:mod:`cursor_watch.views.export.markdown`);
* ``.json``: exactly what ``--summary --json`` prints (:func:`cursor_watch.views.summary.write_summaries`);
* ``.otlp.json``: the runs' traces in the OTLP JSON encoding (:func:`cursor_watch.outlets.otlp_sdk.write_otlp_json`).

Files are private (0600) and written whole (a temporary file renamed into place, see
:func:`cursor_watch.output.write_private`).

Every format is redacted unless ``redact`` is False (``--no-redact``): the secrets
:mod:`cursor_watch.outlets.redact` finds in the prompt, text, thinking, notes, tool arguments and
results, diagnostics and stderr are replaced by ``[redacted: KIND]``. An export is for sharing.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable
from typing import IO, Any

from ...output import error_line, write_private, write_private_new
from ...outlets.redact import redactor_for
from ...core.runs import Run

FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown", ".json": "json"}
MIN_MAX_CHARS = 1_000  # --export-max-chars below this leaves no room for a header and a note
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def export_format(path: str) -> str:
    """``html``, ``markdown`` or ``json`` for ``path``'s extension (case-insensitive).

    Raises:
        ValueError: an extension cursor-watch can't write (the message is one line).
    """
    if path.lower().endswith(".otlp.json"):
        return "otlp"
    ext = os.path.splitext(path)[1].lower()
    fmt = FORMATS.get(ext)
    if fmt is None:
        raise ValueError(f"--export {path}: the file name must end in .html, .md, .json or .otlp.json (the format)")
    return fmt


def needs_payloads(path: str | None) -> bool:
    """True when exporting to ``path`` re-reads payloads (HTML, Markdown): a pipe's bytes
    must then be kept (spooled) until the export is written."""
    if path and path.lower().endswith(".otlp.json"):
        from ...outlets.otlp import content_from_env

        return content_from_env()  # tool arguments and results are re-read only with content
    return bool(path) and FORMATS.get(os.path.splitext(path)[1].lower()) in ("html", "markdown")


def write_export(runs: list[Run], fmt: str, write: Callable[[bytes], Any], max_chars: int | None = None,
                 redact: bool = True) -> None:
    """Write ``runs`` in format ``fmt`` (see :func:`export_format`) through ``write(bytes)``.

    ``max_chars`` applies to Markdown only (see :func:`cursor_watch.views.export.markdown.write_markdown`).
    ``redact``: secrets replaced by ``[redacted: KIND]`` (False: ``--no-redact``, as the stream has it).
    Text is UTF-8; anything UTF-8 can't carry was already shown escaped.
    """
    from .common import redacting  # (Rich, through plain: not on the --summary --json path)

    redactor = redactor_for(redact)
    with redacting(redactor):
        _write_export(runs, fmt, write, max_chars, redactor)


def _write_export(runs: list[Run], fmt: str, write: Callable[[bytes], Any], max_chars: int | None,
                  redactor: Any) -> None:
    if fmt == "json":
        from ..summary import write_summaries

        write_summaries(runs, write, redact=redactor)
        return
    if fmt == "otlp":
        from ...outlets.otlp import content_from_env
        from ...outlets.otlp_sdk import write_otlp_json

        write_otlp_json(runs, write, content=content_from_env(), redact=redactor)
        return
    buffer = io.StringIO()

    def put(text: str) -> None:  # fewer, larger writes: pieces are often a few bytes
        buffer.write(text)
        if buffer.tell() > 1 << 20:
            write(buffer.getvalue().encode("utf-8", "replace"))
            buffer.seek(0)
            buffer.truncate()

    if fmt == "html":
        from .html import write_html

        write_html(runs, put)
    else:
        from .markdown import write_markdown

        write_markdown(runs, put, max_chars)
    write(buffer.getvalue().encode("utf-8", "replace"))


def export_runs(path: str, runs: list[Run], max_chars: int | None = None, redact: bool = True) -> None:
    """Write ``runs`` to ``path`` in the format its extension names (0600, written whole;
    ``redact``: see :func:`write_export`).

    Raises:
        ValueError: an unknown extension.
        OSError: the file could not be written (nothing is left behind).
    """
    fmt = export_format(path)

    def write(f: IO[bytes]) -> None:
        write_export(runs, fmt, f.write, max_chars, redact)

    write_private(path, write)


def write_export_file(path: str | None, runs: list[Run], max_chars: int | None = None, redact: bool = True) -> None:
    """``--export PATH``, when the watch ends: like ``--json-out``, a failure is one line on
    stderr and never changes the exit status (``redact``: see :func:`write_export`)."""
    if not path:
        return
    try:
        export_runs(path, runs, max_chars, redact)
    except OSError as err:
        error_line(f"cannot write --export {path}: {err.strerror or err}")
    except ValueError as err:
        error_line(str(err))


def export_file_name(session_id: str | None) -> str:
    """``cursor-watch-<session id>.html`` with the id made safe for a file name.

    Anything but letters, digits, ``.``, ``_`` and ``-`` becomes ``-`` (a session id comes
    from the stream: no ``/``, ``..`` or control character reaches the file system); at most
    80 characters of it; ``unknown`` when there is none.
    """
    name = _UNSAFE_NAME.sub("-", session_id or "").strip(".-")[:80].strip(".-")
    return f"cursor-watch-{name or 'unknown'}.html"


def export_run_to(run: Run, directory: str = ".", redact: bool = True) -> str:
    """Export one run as HTML to ``directory`` (the TUI's ``e`` key); returns the path written
    (``redact``: see :func:`write_export`).

    Never replaces a file: pressing ``e`` again, or on another run with the same session id
    (a killed run and its ``--resume``), writes ``cursor-watch-<session id>-2.html``, ``-3``...
    The run may still be live: the file shows what the model holds now. Synchronous: call
    it where blocking for the export's time is fine (it re-reads every payload; about a
    second per 10,000 tool calls).

    Raises:
        OSError: the file could not be written.
    """
    path = os.path.join(directory, export_file_name(run.session.session_id))

    def write(f: IO[bytes]) -> None:
        write_export([run], "html", f.write, redact=redact)

    return write_private_new(path, write)
