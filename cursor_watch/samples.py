"""The sample streams shipped with cursor-watch (``--sample NAME``).

In a wheel they live in ``cursor_watch/sample_streams/`` (copied there at build
time); in a source checkout, in ``sample_streams/`` at the repository root.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_SAMPLE = "plain-tools"


def sample_dir() -> Path | None:
    """The directory holding the ``*.jsonl`` samples, or None if not found."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sample_streams", here.parent / "sample_streams"):
        if candidate.is_dir() and any(candidate.glob("*.jsonl")):
            return candidate
    return None


def list_samples() -> list[str]:
    """Sample names (file stems), sorted."""
    d = sample_dir()
    return sorted(p.stem for p in d.glob("*.jsonl")) if d else []


def sample_path(name: str) -> Path:
    """Path of sample ``name`` (with or without ``.jsonl``).

    Raises:
        FileNotFoundError: no such sample (the message lists the available ones).
    """
    d = sample_dir()
    stem = name.removesuffix(".jsonl")
    if d is not None and (d / f"{stem}.jsonl").is_file():
        return d / f"{stem}.jsonl"
    raise FileNotFoundError(f"no sample named {name!r}; available: {', '.join(list_samples()) or 'none'}")
