"""The timeline's columns fit the rows' content once they are laid out (issue 27 item 7): State
is as wide as the states the character has, so Type and Summary get the room it does not need."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFontMetrics

from inspector.models.timeline_model import COL_STATE, COL_SUMMARY, COL_TYPE
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
)

pytestmark = pytest.mark.gui


def test_state_is_as_wide_as_the_states_present_and_type_is_whole(qtbot, inspector_window):  # noqa: F811
    window = inspector_window
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    view = window.timeline
    fm = QFontMetrics(view.font())
    widths, summaries = {}, {}
    for name in sorted(window.session.folder.timelines):
        window.session.show_character(name)
        model = view.model()
        states = {model.index(r, COL_STATE).data() for r in range(model.rowCount())}
        widest = max(fm.horizontalAdvance(s) for s in states)
        widths[name] = view.columnWidth(COL_STATE)
        # as wide as its widest state (the delegate's padding aside), not as the widest there is
        assert widest <= view.columnWidth(COL_STATE) <= widest + 40, (name, sorted(states))
        # State whole everywhere; Type whole where State leaves it the room (at 1440 px it did not)
        cols = (COL_STATE, COL_TYPE) if name in ("healthy", "wedged-merge") else (COL_STATE,)
        for r in range(model.rowCount()):
            for col in cols:
                assert not view.is_elided(model.index(r, col)), (name, r, model.index(r, col).data())
        summaries[name] = view.columnWidth(COL_SUMMARY)
    assert widths["healthy"] < widths["wedged-merge"]  # "applied" against "blocked · view_drift"
    assert summaries["healthy"] > summaries["wedged-merge"]  # the room State does not need goes to Summary


@pytest.mark.parametrize("width", [1300, 1440])
def test_type_is_whole_at_1300_px_and_wider_while_entry_gives_way(qtbot, make_inspector_window, width):  # noqa: F811
    """At 1300 px Type and Entry shrank by one factor, so Type was cut though Entry's floor left it
    the room: an id elides in the middle well, a type does not."""
    window = make_inspector_window(size=(width, 800))
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    view = window.timeline
    qtbot.waitUntil(lambda: window.width() == width)
    for name in sorted(window.session.folder.timelines):
        window.session.show_character(name)
        model = view.model()
        for r in range(model.rowCount()):
            for col in (COL_TYPE, COL_STATE):
                assert not view.is_elided(model.index(r, col)), (width, name, r, model.index(r, col).data())
        # nothing pushed past the right edge: the columns share the viewport, Summary keeps some room
        header = view.horizontalHeader()
        assert header.length() <= view.viewport().width(), (width, name)
        assert view.columnWidth(COL_SUMMARY) >= QFontMetrics(view.font()).horizontalAdvance("x" * 12), name
