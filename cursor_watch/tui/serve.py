"""``cursor-watch serve``: the TUI in a browser, one app per tab (textual-serve, an optional extra).

Each browser tab runs this same program on the same FILEs, from the same directory, as the
default ``watch`` command: textual-serve's web driver talks to it over stdin and stdout
(:func:`cursor_watch.output.served_in_browser`). The page is cursor-watch's own template
(``web/templates/app_index.html`` beside this module: textual-serve's own asks a web font service
for its font, and on a machine without internet the page waited on it); its assets are
textual-serve's static files.
"""

from __future__ import annotations

import os
import shlex
import sys

from ..output import error_line

SERVE_DROP = {"--serve": 0, "--host": 1, "--port": 1}
"""Options of the server, not of each tab's app: option -> how many values follow it."""
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web", "templates")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def tab_argv(argv: list[str]) -> list[str]:
    """The command line each tab's app runs: ``argv`` (the old ``--serve`` form) without the
    server's own options (:data:`SERVE_DROP`), as ``--port 9000`` or ``--port=9000``."""
    args: list[str] = []
    skip = 0
    for arg in argv:
        if skip:
            skip -= 1
            continue
        name = arg.split("=", 1)[0]
        if name in SERVE_DROP:
            skip = SERVE_DROP[name] if "=" not in arg else 0
            continue
        args.append(arg)
    return args


def serve_in_browser(host: str, port: int, argv: list[str]) -> int:
    """Serve the TUI on ``http://HOST:PORT`` until the server stops (Ctrl+C); returns the exit
    status: 0, or 2 with one line on stderr when textual-serve is not installed.

    Bound to 127.0.0.1 unless ``host`` says otherwise; it has no authentication, so another
    address gets a warning on stderr.
    """
    try:
        from textual_serve.server import Server
    except ImportError:
        error_line("--serve needs textual-serve: pip install 'cursor-watch[web]'")
        return 2
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "cursor_watch", *tab_argv(argv)])
    if host not in LOOPBACK:
        error_line(f"warning: serving on {host}:{port} with no authentication: "
                   "anyone who can reach it can watch these runs")
    sys.stderr.write(f"cursor-watch: serving on http://{host}:{port} (Ctrl+C stops)\n")
    sys.stderr.flush()
    Server(command, host=host, port=port, title="cursor-watch", templates_path=TEMPLATES).serve()
    return 0
