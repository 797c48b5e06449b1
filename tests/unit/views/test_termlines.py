"""LineWriter writes exactly what Rich's Console.print writes for the same Text."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from cursor_watch.output import OutputClosed
from cursor_watch.views.plain import make_console
from cursor_watch.views.termlines import LineWriter, rich_text

STYLES = [None, "", "bold", "dim", "blue", "bold cyan", "dim italic", "red", "bold yellow", "magenta"]
# newlines, tabs (Rich expands them by cell width), what Rich strips (BEL, CR...), wide and
# combining characters, and plain text
ALPHABET = st.sampled_from(list("ab ~-\n\n\t\x07\r") + ["日", "🙂", "e\u0301", "\u202e", "·", "▶"])
TEXT = st.lists(ALPHABET, max_size=6).map("".join)
PIECES = st.lists(st.tuples(TEXT, st.sampled_from(STYLES)), max_size=5)
CONSOLES = {
    "pipe": {},
    "256 colours": {"force_terminal": True, "color_system": "256"},
    "truecolor": {"force_terminal": True, "color_system": "truecolor"},
    "standard": {"force_terminal": True, "color_system": "standard"},
    "NO_COLOR on a terminal": {"force_terminal": True, "color_system": "256", "no_color": True},
}


def console(kind: str) -> Console:
    return Console(file=io.StringIO(), highlight=False, markup=False, emoji=False, soft_wrap=True, width=40,
                   **CONSOLES[kind])


@pytest.mark.parametrize("kind", CONSOLES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from(STYLES), lines=st.lists(PIECES, min_size=1, max_size=4))
def test_same_bytes_as_console_print(kind, base, lines):
    rich, ours = console(kind), console(kind)
    writer = LineWriter(ours)
    for pieces in lines:
        rich.print(rich_text(base, pieces))
        writer.line(pieces, base)
    assert ours.file.getvalue() == ""  # nothing before the flush
    writer.flush()
    assert ours.file.getvalue() == rich.file.getvalue()


def test_one_write_per_flush():
    writes = []

    class File(io.StringIO):
        def write(self, s):
            writes.append(s)
            return super().write(s)

    writer = LineWriter(make_console(File()))
    for n in range(100):
        writer.line([(f"line {n}", "bold")])
    writer.flush()
    writer.flush()  # nothing buffered: nothing written
    assert len(writes) == 1 and writes[0].count("\n") == 100


def test_a_closed_reader_is_output_closed():
    class Closed(io.StringIO):
        def write(self, s):
            raise BrokenPipeError()

    writer = LineWriter(make_console(Closed()))
    writer.line([("x", None)])
    with pytest.raises(OutputClosed):
        writer.flush()
