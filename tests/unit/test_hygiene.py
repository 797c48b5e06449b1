"""Import hygiene: the model is pure and the headless path never imports Textual."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT, SAMPLES


def test_model_and_plain_path_do_not_import_textual():
    code = (
        "import sys, cursor_watch.core.model, cursor_watch.core.decode, cursor_watch.stream.watch, cursor_watch.views.plain;"
        "from cursor_watch.cli import main;"
        f"rc = main(['--summary', '--json', {str(SAMPLES / 'plain-tools.jsonl')!r}]);"
        "assert 'textual' not in sys.modules, 'textual imported';"
        "assert rc == 0"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True)
    assert p.returncode == 0, p.stderr.decode()


def test_summary_json_path_does_not_import_rich():
    # a script's `--summary --json` starts sooner without Rich: only --plain and
    # the readable --summary import it
    code = (
        "import sys; from cursor_watch.cli import main;"
        f"rc = main(['--summary', '--json', {str(SAMPLES / 'plain-tools.jsonl')!r}]);"
        "assert not {'rich', 'textual'} & set(sys.modules), sorted(m for m in sys.modules if m.startswith('rich'));"
        "assert rc == 0"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True)
    assert p.returncode == 0, p.stderr.decode()


def test_model_imports_no_ui():
    code = "import sys, cursor_watch.core.model; assert not {'textual', 'rich'} & set(sys.modules), sys.modules.keys()"
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True)
    assert p.returncode == 0, p.stderr.decode()


def _import_graph() -> dict[str, set[str]]:
    """``module -> modules of cursor_watch it imports`` (anywhere in it, functions included)."""
    import ast

    pkg = ROOT / "cursor_watch"
    graph: dict[str, set[str]] = {}
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        package = name if rel.name == "__init__" else name.rsplit(".", 1)[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.startswith("cursor_watch"):
                    deps.add(target)
                    for alias in node.names:  # "from . import model" imports a module
                        if (pkg.parent / (target + "." + alias.name).replace(".", "/")).with_suffix(".py").exists():
                            deps.add(target + "." + alias.name)
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("cursor_watch")}
        graph[name] = {d for d in deps if d != name and d != "cursor_watch"}
    return graph


def test_no_import_circle_inside_the_package():
    graph = _import_graph()
    assert "cursor_watch.tui.app" in graph and "cursor_watch.cli" in graph
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(dep):] + [dep]))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_the_core_does_not_import_the_views():
    # one direction: sources, framing, events, model, runs, runner, then the views
    core = ["core.framing", "core.decode", "core.model", "core.spill", "core.tools", "core.runs", "stream.sources", "stream.watch", "safe", "output"]
    views = {"cursor_watch.tui.app", "cursor_watch.cli", "cursor_watch.views.plain"} | {
        n for n in _import_graph() if n.startswith(("cursor_watch.tui.widgets", "cursor_watch.tui.screens"))}
    graph = _import_graph()
    for name in core:
        assert not graph[f"cursor_watch.{name}"] & views, (name, graph[f"cursor_watch.{name}"] & views)
