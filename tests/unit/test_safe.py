"""Text made safe to show (cursor_watch.safe): carriage returns folded as a terminal would show
them, escape sequences shown escaped."""

from __future__ import annotations


def test_fold_cr_keeps_what_a_terminal_would_show():
    from cursor_watch.safe import fold_cr, visible, visible_doc

    assert fold_cr("a\r\nb\r\n") == "a\nb\n"
    assert fold_cr("10%\r50%\r100%\ndone") == "100%\ndone"
    assert fold_cr("abcdef\rXY") == "XYcdef"  # a shorter redraw leaves the end of the longer line
    assert fold_cr("progress\r") == "progress"
    assert fold_cr("a\r\r\nb") == "a\nb"
    for view in (visible, visible_doc):
        assert view("ok\r\nfine\r\n\x1b[31m") == "ok\nfine\n\\e[31m"
    assert visible_doc("id\r1", line=True) == "id\\r1"  # a one-line field shows it
