"""``python -m cursor_watch``."""

from .cli import main

raise SystemExit(main())
