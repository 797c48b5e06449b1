"""The compiled build and the pure one: the same source, the same outputs.

A wheel of this checkout is built here (``pip wheel``, setup.py: the hot path compiled with mypyc;
once per state of the source, shared by the two test runs) and installed into a fresh virtual
environment; its outputs are compared byte for byte with the
source tree's (pure Python) on every shared capture, every sample and generated streams of each
agent. The pure fallbacks (``CURSOR_WATCH_PURE=1``, no working C compiler) are built too, and the
compiled modules are checked with mypy. These tests run in both of README's test runs: they build
what they compare, whichever build the run itself imports (but for the byte-for-byte comparison of
the two builds' outputs, which the compiled run alone runs: it does the same in both).
"""

from __future__ import annotations

import hashlib
import os
import pkgutil
import importlib
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import cursor_watch
from cursor_watch.buildinfo import CompiledTypeError, build_kind, raise_if_compiled_type_error
from conftest import IN_CI, ROOT, SAMPLES, agent_captures

REAL_DIR = ROOT.parent / "shared" / "streams" / "real"
COMPILED = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["cursor-watch"]["compiled"]
BUILD_S = 900  # a compiled wheel takes about a minute on 2 cores; a loaded machine, much longer


def _site_packages() -> str:
    """This interpreter's site-packages: the fresh environments borrow the dependencies from it
    (a ``.pth`` file) and install only the wheel under test (``--no-deps``)."""
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def _wheel(out: Path, env_extra: dict[str, str]) -> Path:
    """Build a wheel of this checkout into ``out`` (no build isolation: setuptools and the pinned
    mypy come from the test install) and return its path."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **env_extra}
    env.pop("CURSOR_WATCH_PURE", None) if "CURSOR_WATCH_PURE" not in env_extra else None
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
                           "-w", str(out), str(ROOT)], env=env, capture_output=True, text=True, timeout=BUILD_S)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("cursor_watch-*.whl")
    wheel.with_suffix(".log").write_text(proc.stdout + proc.stderr)
    return wheel


def _venv(where: Path, wheel: Path) -> Path:
    """A fresh virtual environment at ``where`` with ``wheel`` installed; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    py = where / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   timeout=300)
    # the dependencies after the wheel: pip would take the test install's cursor-watch (the same
    # version) for this one and install nothing
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "zz_test_dependencies.pth").write_text(_site_packages() + "\n")
    return py


def _source_key() -> str:
    """A digest of what a wheel is built from: the package, the samples and the build files, and
    this interpreter's version (the files' paths and bytes; caches and compiled objects left out)."""
    h = hashlib.sha256(sys.version.encode())
    files = [*(ROOT / "cursor_watch").rglob("*"), *(ROOT / "sample_streams").rglob("*"),
             ROOT / "setup.py", ROOT / "pyproject.toml", ROOT / "MANIFEST.in"]
    for path in sorted(f for f in files if f.is_file()):
        if "__pycache__" in path.parts or path.suffix in (".so", ".pyc") or path.name == "_build.json":
            continue
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def _shared_wheel(env_extra: dict[str, str], name: str) -> Path:
    """:func:`_wheel` built once per state of the source and build ``name``: README's two test
    runs (compiled, then pure) share it through ``build/test-wheels/DIGEST-NAME`` (a mypyc build
    takes minutes; the same source builds the same wheel)."""
    out = ROOT / "build" / "test-wheels" / f"{_source_key()}-{name}"
    found = sorted(out.glob("cursor_watch-*.whl"))
    if len(found) == 1 and found[0].with_suffix(".log").exists():
        return found[0]
    for stale in found:
        stale.unlink()
    return _wheel(out, env_extra)


@pytest.fixture(scope="session")
def compiled_wheel() -> Path:
    """This checkout's compiled wheel (:func:`_shared_wheel`)."""
    return _shared_wheel({}, "compiled")


@pytest.fixture(scope="session")
def compiled_python(tmp_path_factory, compiled_wheel) -> Path:
    """The python of a fresh environment with this checkout's compiled wheel installed."""
    return _venv(tmp_path_factory.mktemp("compiled") / "venv", compiled_wheel)


def _in(py: Path, *argv: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``py -P ARGV`` (``-P``: the working directory is not on sys.path, so the installed
    package is the one imported) from a neutral directory."""
    return subprocess.run([str(py), "-P", *argv], capture_output=True, cwd=cwd or "/",
                          env={**os.environ, **(env or {})}, timeout=600)


def _pure(*argv: str) -> subprocess.CompletedProcess:
    """Run ``python -m cursor_watch ARGV`` on the source tree (pure: nothing there is compiled)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cursor_watch", *argv], capture_output=True, cwd="/", env=env,
                          timeout=600)


# -- what runs ---------------------------------------------------------------------------------------

def test_every_module_imports():
    """Every module of the package imports in this run's build (the pure run imports them too)."""
    names = [m.name for m in pkgutil.walk_packages(cursor_watch.__path__, "cursor_watch.")
             if m.name != "cursor_watch.__main__"]  # (it runs the command)
    assert "cursor_watch.core.model" in names and len(names) > 40
    for name in names:
        importlib.import_module(name)


def test_version_says_the_build(compiled_python):
    compiled = _in(compiled_python, "-m", "cursor_watch", "--version")
    assert compiled.returncode == 0
    assert compiled.stdout.decode().strip() == f"cursor-watch {cursor_watch.__version__}, compiled (mypyc: {len(COMPILED)} modules)"
    pure = _pure("--version")
    assert pure.stdout.decode().strip() == f"cursor-watch {cursor_watch.__version__}, pure Python (running from the source)"
    # what the build says is checked against what was imported: each compiled module is an extension
    probe = ("import importlib, importlib.machinery as m; "
             f"print(all(importlib.import_module(n).__file__.endswith(tuple(m.EXTENSION_SUFFIXES)) for n in {[p.removesuffix('.py').replace('/', '.') for p in COMPILED]!r}))")
    assert _in(compiled_python, "-c", probe).stdout.decode().strip() == "True"


def test_this_run_is_the_build_it_says():
    """The build this run imports is the one README's command asked for (CURSOR_WATCH_TEST_BUILD):
    a compiled run that silently imported the source tree would test the pure build twice."""
    want = os.environ.get("CURSOR_WATCH_TEST_BUILD")
    if want:
        assert build_kind() == want
    elif IN_CI:
        pytest.fail("CI=true runs README's test command, which names the build of each run", pytrace=False)
    file = Path(sys.modules["cursor_watch.core.model"].__file__)
    assert (file.suffix == ".py") == (build_kind() == "pure")


def test_compiled_modules_are_mypy_clean():
    """The compiled modules' annotations are what mypyc checks at run time: mypy must accept them."""
    proc = subprocess.run([sys.executable, "-m", "mypy", *COMPILED], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "Success: no issues found" in proc.stdout


# -- the same outputs -----------------------------------------------------------------------------------

def _streams(tmp: Path) -> list[Path]:
    """Every shared capture there is, every sample, and generated streams of each agent."""
    files = sorted(SAMPLES.glob("*.jsonl"))
    files += sorted(p for p in REAL_DIR.glob("*") if p.suffix in (".jsonl", ".ndjson")) if REAL_DIR.is_dir() else []
    files += agent_captures()
    gen = ROOT / "bench" / "gen_stream.py"
    for name, args in (("dense", ["300", "--content-kb", "2", "--seed", "3"]),
                       ("calls", ["--tool-calls", "400", "--seed", "5"]),
                       ("claude", ["--agent", "claude", "--size", "400KB", "--partial"]),
                       ("codex", ["--agent", "codex", "--size", "400KB"]),
                       ("gemini", ["--agent", "gemini", "--size", "300KB"])):
        out = tmp / f"{name}.jsonl"
        subprocess.run([sys.executable, str(gen), str(out), *args], check=True, capture_output=True, timeout=300)
        files.append(out)
    # Claude Code and Codex lines with fields of every wrong JSON type (the compiled adapters'
    # annotations hold for all), integers beyond 64 bits included (--summary --json writes null)
    from claude_hostile import DELETE, hostile_stream
    from codex_hostile import hostile_stream as codex_hostile_stream

    junk = [None, True, -7, 2**63, 2**64 + 5, -(10**30), 1.5, "x", [None, 1, "a"], {"type": "text", "text": 5}, DELETE]
    for name, make in (("claude-hostile", hostile_stream), ("codex-hostile", codex_hostile_stream)):
        out = tmp / f"{name}.jsonl"
        out.write_bytes(make(junk))
        files.append(out)
    return files


def test_outputs_identical_compiled_and_pure(compiled_python, tmp_path):
    """``--summary --json``, ``--plain`` and ``--report --json`` of the compiled build equal the
    pure build's, byte for byte (exit status and stderr too), on every stream there is."""
    streams = _streams(tmp_path)
    shared = [p for p in streams if "shared" in p.parts]
    if not shared:
        from conftest import need

        need(False, f"the shared captures are not beside this checkout ({REAL_DIR.parent})")
    assert len(streams) >= 30 if shared else len(streams) >= 10
    compared = 0
    for path in streams:
        for mode in (["--summary", "--json"], ["--plain"], ["report", "--json"]):
            a = _pure(*mode, str(path))
            b = _in(compiled_python, "-m", "cursor_watch", *mode, str(path))
            where = f"{' '.join(mode)} {path.name}"
            assert (a.returncode, a.stderr) == (b.returncode, b.stderr), where
            assert a.stdout == b.stdout, where
            assert a.stdout, where  # something was compared
            compared += 1
    assert compared == 3 * len(streams)


# -- a type error of ours is loud ---------------------------------------------------------------

# A defect an adapter could have: an object that says it is a Text (its __class__) but is not one.
# Pure Python reads it as one (duck typing); the compiled model's handler checks its argument's type,
# and that failure must never pass as a stream diagnostic
_FAKE = """
from cursor_watch.core.canonical import TEXT_MESSAGE, Text


class Fake:
    __class__ = property(lambda self: Text)

    def __init__(self, ev):
        for k in ("line", "offset", "size", "ts", "ts_source", "natives", "src", "text", "mode", "ts_end"):
            setattr(self, k, getattr(ev, k))
        self.mode = TEXT_MESSAGE  # a whole message: the model's handler, not its delta fast path
"""
_BAD_EVENT = _FAKE + """
import sys
from cursor_watch.core.canonical import TEXT_DELTA, TIME_STREAM
from cursor_watch.core.model import Session
from cursor_watch.core.decode import Event
ev = Fake(Text(Event({"type": "assistant"}, 1, 0, 10), 1000, TIME_STREAM, "hello", TEXT_DELTA))
s = Session()
try:
    s.apply(ev)
except Exception as err:
    print(type(err).__name__, len(s.diagnostics))
    sys.exit(0)
print("applied", len(s.diagnostics), s.segments[0].text)
"""


def test_a_compiled_type_error_is_never_a_diagnostic(compiled_python):
    compiled = _in(compiled_python, "-c", _BAD_EVENT)
    assert compiled.returncode == 0, compiled.stderr.decode()
    assert compiled.stdout.decode().split() == ["CompiledTypeError", "0"]
    # pure Python checks no annotation: the same event is applied as it is
    pure = subprocess.run([sys.executable, "-c", _BAD_EVENT], capture_output=True, cwd="/", timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # the source tree: pure, in either run
    assert pure.stdout.decode().split() == ["applied", "0", "hello"], pure.stderr.decode()


def test_the_cli_says_an_internal_error_and_exits_70(compiled_python, tmp_path):
    """The whole watch: a compiled type error stops it with one line and exit 70, never exit 0
    with a wrong summary."""
    script = tmp_path / "bad_adapter.py"
    # the reader (interpreted) hands the model a Fake for each Text its adapter made
    script.write_text(_FAKE + (
        "import sys\n"
        "from cursor_watch import cli, formats\n"
        "real = formats.Reader.adapt\n"
        "def adapt(self, items):\n"
        "    return [Fake(ev) if type(ev) is Text else ev for ev in real(self, items)]\n"
        "formats.Reader.adapt = adapt\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"))
    sample = SAMPLES / "plain-tools.jsonl"
    proc = _in(compiled_python, str(script), "--summary", "--json", str(sample))
    assert proc.returncode == 70, proc.stderr.decode()
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "internal error: a compiled module's type check failed" in err
    assert proc.stdout == b""


def test_the_type_error_check_itself():
    """What mypyc's run-time check says is told apart from any other TypeError."""
    with pytest.raises(CompiledTypeError) as caught:
        raise_if_compiled_type_error(TypeError("int object expected; got str"))
    assert isinstance(caught.value.__cause__, TypeError)
    raise_if_compiled_type_error(TypeError("unsupported operand type(s) for +: 'int' and 'str'"))
    raise_if_compiled_type_error(ValueError("int object expected; got str"))


# -- installs everywhere ----------------------------------------------------------------------------

def test_compiled_wheel_contents(compiled_wheel, compiled_python):
    wheel = compiled_wheel
    assert "-cp3" in wheel.name and "none-any" not in wheel.name  # a platform wheel
    names = zipfile.ZipFile(wheel).namelist()
    for module in COMPILED:
        stem = module.removesuffix(".py")
        assert any(n.startswith(stem + ".cpython-") for n in names), module
        assert module in names  # the source stays beside it
    for data in ("cursor_watch/tui/screens/run.tcss", "cursor_watch/data/prices.toml", "cursor_watch/tui/web/templates/app_index.html",
                 "cursor_watch/sample_streams/plain-tools.jsonl", "cursor_watch/_build.json"):
        assert data in names
    log = wheel.with_suffix(".log").read_text()
    assert f"cursor-watch: compiled {len(COMPILED)} modules with mypyc" in log
    # the installed samples work: the main job on a shipped sample
    proc = _in(compiled_python, "-m", "cursor_watch", "--sample", "--summary")
    assert proc.returncode == 0 and b"success" in proc.stdout


@pytest.mark.parametrize("env, reason, name", [
    ({"CURSOR_WATCH_PURE": "1"}, "CURSOR_WATCH_PURE=1 at install", "asked"),
    ({"CC": "/nonexistent/cc"}, "no working C compiler with Python's headers", "no-compiler"),
], ids=["asked", "no-compiler"])
def test_pure_fallback(tmp_path, env, reason, name):
    wheel = _shared_wheel(env, f"pure-{name}")
    assert wheel.name.endswith("-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not any(n.endswith(".so") for n in names)
    log = wheel.with_suffix(".log").read_text()
    assert f"cursor-watch: installing pure Python ({reason}" in log
    py = _venv(tmp_path / "venv", wheel)
    version = _in(py, "-m", "cursor_watch", "--version").stdout.decode().strip()
    assert version.startswith(f"cursor-watch {cursor_watch.__version__}, pure Python ({reason}")
    proc = _in(py, "-m", "cursor_watch", "--sample", "--summary", "--json")
    assert proc.returncode == 0 and b'"status":"success"' in proc.stdout.replace(b" ", b"")
