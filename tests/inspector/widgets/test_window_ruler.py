"""The overview ruler (issue 16 item 19): problems and the sentinel marked beside the timeline's
scrollbar over all the rows shown, clicking a mark selects its row, and the marks are worked out
once per change, never per paint."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

import inspector.widgets.overview_ruler as overview_ruler
from inspector.core.overview import Mark
from inspector.models.colors import accent_color
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    inspector_window,
    make_inspector_window,
    open_and_wait,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def loaded(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    with open(root / "alice" / "events.ndjson", "ab") as fh:
        fh.write(b"{torn\n")  # a damaged last line
    window = inspector_window
    window.resize(1440, 880)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, root)
    return window


def test_the_ruler_stands_beside_the_timeline_over_its_rows(loaded):
    ruler, view = loaded.ruler, loaded.timeline
    assert ruler.isVisible()
    assert ruler.geometry().left() >= view.geometry().right()  # beside the scrollbar, not over rows
    top, height = ruler.track()
    assert top == view.viewport().mapTo(loaded, QPoint(0, 0)).y() - ruler.mapTo(loaded, QPoint(0, 0)).y()
    assert height == view.viewport().height()


def test_problems_and_the_sentinel_are_marked(qtbot, loaded):
    ruler = loaded.ruler
    model = loaded.session.timeline_model
    assert model.rowCount() == 33
    qtbot.waitUntil(lambda: ruler.marks() == [Mark(31, "blocked"), Mark(32, "damaged")])
    assert ruler.sentinel_pixel() is not None
    ruler.repaint()
    image = ruler.grab().toImage()
    top, _ = ruler.track()
    y = ruler.point_of(31).y()
    assert image.pixelColor(3, y).name() == accent_color(ruler.palette(), "blocked").name()
    assert image.pixelColor(3, top + ruler.sentinel_pixel()).name() == loaded.timeline.palette().color(
        loaded.timeline.palette().ColorRole.Highlight
    ).name()


def test_clicking_a_mark_selects_its_row(qtbot, loaded):
    ruler = loaded.ruler
    qtbot.waitUntil(lambda: Mark(31, "blocked") in ruler.marks())
    qtbot.mouseClick(ruler, Qt.MouseButton.LeftButton, pos=ruler.point_of(31) + QPoint(0, 2))  # near is enough
    assert loaded.timeline.currentIndex().row() == 31
    assert loaded.selected_ref() == 31
    qtbot.mouseClick(ruler, Qt.MouseButton.LeftButton, pos=QPoint(3, ruler.track()[0] + ruler.sentinel_pixel()))
    assert loaded.timeline.currentIndex().row() == loaded.session.timeline_model.marker_position() == 29
    qtbot.mouseClick(ruler, Qt.MouseButton.LeftButton, pos=ruler.point_of(2))  # no mark there: nothing moves
    assert loaded.timeline.currentIndex().row() == 29


def test_a_filter_moves_the_marks_to_the_rows_shown(qtbot, loaded):
    ruler = loaded.ruler
    loaded.filter_bar.states.set_selected({"pending", "blocked"})
    qtbot.waitUntil(lambda: ruler.marks() == [Mark(1, "blocked")])
    loaded.filter_bar.states.set_selected({"applied"})
    qtbot.waitUntil(lambda: ruler.marks() == [])


def test_painting_and_resizing_never_recompute_the_marks(qtbot, loaded, monkeypatch):
    ruler = loaded.ruler
    qtbot.waitUntil(lambda: len(ruler.marks()) == 2)
    calls = []
    real = overview_ruler.problem_marks
    monkeypatch.setattr(overview_ruler, "problem_marks", lambda *a: calls.append(1) or real(*a))
    for _ in range(3):
        ruler.repaint()
    loaded.resize(1300, 700)
    qtbot.waitUntil(lambda: ruler.track()[1] == loaded.timeline.viewport().height())
    ruler.repaint()
    assert calls == []
    loaded.session.timeline_model.refresh_all()  # a change: one pass, however many signals
    loaded.session.timeline_model.refresh_all()
    qtbot.waitUntil(lambda: calls == [1])
