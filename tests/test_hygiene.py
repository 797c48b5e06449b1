"""Import hygiene: the model is pure and the headless path never imports Textual."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT, SAMPLES


def test_model_and_plain_path_do_not_import_textual():
    code = (
        "import sys, cursor_watch.model, cursor_watch.events, cursor_watch.runner, cursor_watch.plain;"
        "from cursor_watch.cli import main;"
        f"rc = main(['--summary', '--json', {str(SAMPLES / 'plain-tools.jsonl')!r}]);"
        "assert 'textual' not in sys.modules, 'textual imported';"
        "assert rc == 0"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True)
    assert p.returncode == 0, p.stderr.decode()


def test_model_imports_no_ui():
    code = "import sys, cursor_watch.model; assert not {'textual', 'rich'} & set(sys.modules), sys.modules.keys()"
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
