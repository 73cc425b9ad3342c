"""The window over a loaded folder: characters and badges, the sentinel on the timeline, colours,
filters and navigation."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from inspector.app import dark_palette
from inspector.models.characters_model import BADGE_ROLE
from inspector.models.colors import state_color
from inspector.models.timeline_model import COL_STATE, COL_TYPE
from tests.inspector.models.dump import dump
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import inspector_window, make_inspector_window, open_and_wait  # noqa: F401

pytestmark = pytest.mark.gui


@pytest.fixture
def loaded(qtbot, inspector_window, tmp_path):  # noqa: F811  (a fixture)
    window = inspector_window
    root = two_characters(tmp_path / "memory")
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, root)
    return window


def test_characters_list_with_health_badges(loaded):
    model = loaded.session.characters_model
    assert dump(model) == [["alice"], ["bob"]]
    # the server's chip first, then check's counts; "healthy" only where the diagnosis finds nothing above info
    badges = dump(model, role=BADGE_ROLE)
    assert badges[0] == ["server: 1 error · 1 blocked · 1 pending"]
    assert badges[1][0].split(" · ")[0] == "healthy" and model.rows()[1].health in ("none", "info")
    assert loaded.session.current == "alice"
    assert loaded.windowTitle().endswith("— alice")


def test_sentinel_marker_is_drawn_under_its_row(qtbot, loaded):
    model = loaded.session.timeline_model
    view = loaded.timeline
    assert model.rowCount() == 32
    pos = model.marker_position()
    assert pos == 29 and model.ref_at(pos) == loaded.session.timeline().sentinel.index
    assert "30 applied · 1 pending · 1 blocked" in loaded.sentinel_bar.label.text()  # check's counts
    assert model.sentinel_label() == "30 applied · 1 pending · 1 blocked"
    loaded.window_actions.jump_action.trigger()
    assert view.currentIndex().row() == pos
    view.clearSelection()
    rect = view.sentinel_marker_rect()
    assert rect is not None
    # between the sentinel row's cells and the next row's, in a strip of the sentinel row's own
    assert view.cell_rect(model.index(pos, 0)).bottom() < rect.top()
    assert rect.bottom() < view.cell_rect(model.index(pos + 1, 0)).top()
    assert view.rowViewportPosition(pos) + view.rowHeight(pos) == view.rowViewportPosition(pos + 1)
    image = view.viewport().grab().toImage()
    ratio = view.viewport().devicePixelRatio()
    marker = image.pixelColor(int(5 * ratio), int(rect.center().y() * ratio))
    assert marker.name() == view.palette().color(QPalette.ColorRole.Highlight).name()


def test_rows_are_coloured_by_state_on_screen(qtbot, loaded):
    view = loaded.timeline
    model = loaded.session.timeline_model
    view.clearSelection()
    view.setCurrentIndex(model.index(0, 0))
    view.clearSelection()
    view.scrollToBottom()
    qtbot.waitUntil(lambda: view.rowViewportPosition(31) + view.rowHeight(31) <= view.viewport().height())
    image = view.viewport().grab().toImage()
    ratio = view.viewport().devicePixelRatio()
    x = int((view.columnViewportPosition(COL_TYPE) + 40) * ratio)

    def painted(row):
        y = int((view.cell_rect(model.index(row, COL_TYPE)).top() + 3) * ratio)
        return image.pixelColor(x, y).name()

    colours = model.state_colors()
    assert painted(31) == colours["blocked"].name()
    assert painted(30) == colours["pending"].name()
    assert painted(10) == colours["applied"].name()
    assert model.index(31, COL_STATE).data() == "blocked · no_handler"


def test_a_dark_theme_recolours_rows_from_the_palette(loaded):
    app = QApplication.instance()
    before = QPalette(app.palette())
    try:
        app.setPalette(dark_palette())
        QApplication.processEvents()
        blocked = loaded.session.timeline_model.state_colors()["blocked"]
        assert blocked == state_color(loaded.palette(), "blocked")
        assert blocked.lightness() < 110
        chip = loaded.legend.chips["blocked"].palette().color(QPalette.ColorRole.Window)
        assert chip == blocked
    finally:
        app.setPalette(before)


def test_filters_by_type_state_text_and_entry(qtbot, loaded):
    bar = loaded.filter_bar
    model = loaded.session.timeline_model
    bar.states.set_selected({"blocked", "pending"})
    assert [r[COL_TYPE] for r in dump(model)] == ["reflection.evidence_updated", "fact.added"]
    assert bar.count.text() == "2 of 32 rows"
    bar.states.set_selected(None)
    bar.types.set_selected({"fact.added"})
    assert [r[COL_TYPE] for r in dump(model)] == ["fact.added"]
    bar.types.set_selected(None)
    with qtbot.waitSignal(bar.filter_changed):  # debounced typing
        bar.text.setText("9.5")
    assert [r[0] for r in dump(model)] == ["18", "30"]
    bar.regex.setChecked(True)
    bar.text.setText(r"9\.5\}\}$")  # only the pending event's payload ends there (no "source" key)
    bar.emit_filter()
    assert [r[0] for r in dump(model)] == ["30"]
    width = bar.sizeHint().width()
    bar.text.setText("([" * 200)  # a long error message must not grow the bar (nor the window)
    bar.emit_filter()
    assert "invalid regular expression" in bar.error_message
    assert "invalid regular expression" in bar.text.toolTip()
    assert bar.text.palette().color(QPalette.ColorRole.Base) != bar.palette().color(QPalette.ColorRole.Base)
    assert bar.sizeHint().width() <= width
    assert model.rowCount() == 1  # the last valid filter stays in force
    bar.clear()
    assert bar.error_message == ""
    assert bar.text.palette().color(QPalette.ColorRole.Base) == bar.palette().color(QPalette.ColorRole.Base)
    bar.entry.setText("0000000000000003")
    bar.emit_filter()
    assert {r[3] for r in dump(model)} == {"ref_0000000000000003"}
    assert model.rowCount() == 7
    loaded.window_actions.clear_filter_action.trigger()
    assert model.rowCount() == 32


def test_problem_keys_go_to_event_and_findings(qtbot, loaded):
    window = loaded
    model = window.session.timeline_model
    window.window_actions.next_problem_action.trigger()
    assert window.selected_ref() == 31
    assert "Wrapped" not in window.statusBar().currentMessage()
    assert "Why blocked" in window.detail.event_detail.reason.text()
    window.window_actions.previous_problem_action.trigger()
    assert window.selected_ref() == 31  # the only problem: wraps onto itself, and says so
    assert window.statusBar().currentMessage() == "Wrapped around to the last problem."
    tl = window.session.timeline()
    window.prompter.event_id = tl.events.event_id(5)[:8]
    window.window_actions.goto_action.trigger()
    assert window.selected_ref() == 5
    window.prompter.event_id = "#12"
    window.window_actions.goto_action.trigger()
    assert window.selected_ref() == 12
    window.prompter.event_id = "no-such-event"
    window.window_actions.goto_action.trigger()
    assert window.prompter.errors[-1][0] == "Go to event"
    findings = window.session.findings_model
    row = next(r for r in range(findings.rowCount()) if findings.index(r, 1).data() == "replay.blocked")
    window.detail.findings.table.activated.emit(findings.index(row, 0))
    assert window.selected_ref() == 31
    assert window.detail.currentWidget() is window.detail.event_detail
    assert model.rowCount() == 32


def test_switching_character(qtbot, loaded):
    window = loaded
    window.characters.select_name("bob")
    assert window.session.current == "bob"
    assert window.session.timeline_model.rowCount() == 4
    assert "persona.fact_added" in [r[COL_TYPE] for r in dump(window.session.timeline_model)]
    assert window.sentinel_bar.label.text().endswith("4 applied · 0 pending")
