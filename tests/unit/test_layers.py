"""The layers are contracts: import-linter's ``lint-imports`` checks pyproject.toml's
``[tool.importlinter]`` (stages flow one way; Textual only under tui/; no Rich in core/ or
formats/; the model, views and outlets import no adapter), and fails on an import that breaks one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, need

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` run in ``tree`` (a folder with pyproject.toml and cursor_watch/), reading that
    tree's package: the folder is put first on the module path."""
    need(LINT_IMPORTS.exists(), f"import-linter is not installed ({LINT_IMPORTS}; pip install '.[test]')")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_package_keeps_every_import_contract():
    p = lint_imports(ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 broken" in p.stdout and "Contracts: 4 kept" in p.stdout, p.stdout


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(ROOT / "pyproject.toml", tree)
    shutil.copytree(ROOT / "cursor_watch", tree / "cursor_watch", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return tree


@pytest.mark.parametrize(("module", "planted", "broken"), [
    ("core/model.py", "from ..tui import app", "The stages flow one way"),
    ("formats/common.py", "from ..stream import watch", "The stages flow one way"),
    ("stream/sources.py", "import textual", "Textual only under tui/"),
    ("core/costs.py", "import rich.text", "No Rich in core/ or formats/"),
    ("views/summary.py", "from ..formats import cursor", "never import an agent's adapter"),
    # the outlets are built from their own options (OutletOptions), never from the command line's
    ("outlets/alerts.py", "from .. import options", "The stages flow one way"),
    # the TUI and the headless runs are two modes side by side: neither calls the other
    ("tui/app.py", "from .. import headless", "The stages flow one way"),
])
def test_an_import_that_breaks_a_contract_fails_the_check(tmp_path, module, planted, broken):
    tree = _copy(tmp_path)
    path = tree / "cursor_watch" / module
    path.write_text(path.read_text() + f"\n{planted}  # planted\n")
    p = lint_imports(tree)
    assert p.returncode == 1, p.stdout + p.stderr
    details = p.stdout.split(" broken.", 1)[1]  # after the count, each broken contract with its import chain
    assert broken in details, p.stdout
    assert f"cursor_watch.{module.removesuffix('.py').replace('/', '.')} ->" in details, p.stdout
