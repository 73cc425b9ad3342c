"""The sentinel bar (our guarded replay's line above the timeline) never clips a long id: one
line, cut in the middle with the whole text on hover; a narrow bar puts its facts on a line of
their own under the title (issue 27, seen after items 1-15)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from inspector.core.timeline import SentinelState
from inspector.widgets.timeline_bars import GUARDED_TITLE, SentinelBar

pytestmark = pytest.mark.gui

LONG_ID = "entity-" + "0123456789abcdef" * 6  # an id (or entity) far longer than the bar


def _bar(qtbot, width: int) -> SentinelBar:
    bar = SentinelBar()
    qtbot.addWidget(bar)
    bar.resize(width, 60)
    bar.show()
    qtbot.waitExposed(bar)
    return bar


@pytest.mark.parametrize("width", [330, 700])
def test_a_long_id_is_cut_in_the_middle_and_whole_on_hover(qtbot, width):
    bar = _bar(qtbot, width)
    counts = {"applied": 3, "pending": 2, "blocked": 1}
    state = SentinelState("ok", LONG_ID, 3, counts, 6)
    bar.set_state(state, f"event #3 ({LONG_ID}) of 6", f"holds {LONG_ID} at event #4")
    qtbot.waitUntil(lambda: bar.label.width() > 0 and bar.label.geometry().right() < bar.width())
    text, shown = bar.label.text(), bar.label.shown_text()
    assert LONG_ID in text and text.endswith("3 applied · 2 pending · 1 blocked")
    head, sep, tail = shown.partition("…")
    assert sep and head and tail, shown  # both ends kept: where it starts, and the counts
    assert text.startswith(head) and text.endswith(tail)
    assert text in bar.label.toolTip()  # the whole text on hover, beside what the bar is
    assert bar.plain_text() == f"{GUARDED_TITLE}: {text}"
    # nothing is drawn past the bar or under the button, and the text is one line as tall as its font
    assert bar.label.geometry().right() < bar.width()
    if bar.label.geometry().top() == bar.jump.geometry().top():
        assert bar.label.geometry().right() < bar.jump.geometry().left()
    assert bar.label.height() >= bar.label.fontMetrics().height()


def test_a_narrow_bar_puts_its_facts_under_the_title_and_a_wide_one_keeps_one_line(qtbot):
    bar = _bar(qtbot, 1400)
    counts = {"applied": 3, "pending": 0}
    bar.set_state(SentinelState("ok", "abc", 2, counts, 3), "event #2 (abc…) of 3")
    qtbot.waitUntil(lambda: bar.one_line is True)
    assert bar.label.shown_text() == bar.label.text()  # room enough: whole
    bar.resize(330, 60)
    qtbot.waitUntil(lambda: bar.one_line is False)
    QApplication.processEvents()
    assert bar.label.geometry().top() > bar.title.geometry().bottom()
    assert bar.minimumSizeHint().width() <= 330  # the bar never widens the window
