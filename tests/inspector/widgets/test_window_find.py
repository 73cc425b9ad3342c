"""Find (issue 16 item 15): Ctrl+F focuses the search box, F3 / Shift+F3 step through the matching
rows with a word when they wrap, and matches are highlighted in the Summary cells and the payload
views; an invalid regular expression highlights and finds nothing."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from inspector.models.timeline_model import COL_SUMMARY, COL_TYPE
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def loaded(qtbot, inspector_window, tmp_path):  # noqa: F811
    window = inspector_window
    root = two_characters(tmp_path / "memory")
    window.resize(1440, 880)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, root)
    window.root = root
    return window


def _summary_image(window, row):
    view = window.timeline
    rect = view.cell_rect(view.model().index(row, COL_SUMMARY))
    view.viewport().repaint()
    return view.viewport().grab(rect).toImage()


def _find(qtbot, window, step):
    action = window.finder.find_next_action if step > 0 else window.finder.find_previous_action
    before = window.timeline.currentIndex().row()
    action.trigger()
    qtbot.waitUntil(lambda: window.timeline.currentIndex().row() != before or window.statusBar().currentMessage())
    return window.timeline.currentIndex().row()


def test_ctrl_f_focuses_the_search_box(qtbot, loaded):
    loaded.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is loaded)
    loaded.filter_bar.text.setText("tea")
    loaded.timeline.setFocus()
    assert loaded.finder.find_action.shortcut().toString() == "Ctrl+F"
    loaded.finder.find_action.trigger()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is loaded.filter_bar.text)
    assert loaded.filter_bar.text.selectedText() == "tea"  # typing replaces it


def test_f3_applies_typed_text_then_steps_through_the_matches_and_says_when_it_wraps(qtbot, loaded):
    model = loaded.session.timeline_model
    hashes = tree_hashes(loaded.root)
    assert [a.shortcut().toString() for a in (loaded.finder.find_next_action, loaded.finder.find_previous_action)] == [
        "F3",
        "Shift+F3",
    ]
    loaded.filter_bar.text.setText("ref_0000000000000001")  # typed: not filtered yet (debounced)
    assert model.rowCount() == 32
    loaded.finder.find_next_action.trigger()
    qtbot.waitUntil(lambda: model.rowCount() == 9 and loaded.timeline.currentIndex().row() == 0, timeout=WAIT_MS)
    assert loaded.statusBar().currentMessage() == "Match 1 of 9 for 'ref_0000000000000001'."
    assert _find(qtbot, loaded, 1) == 1
    loaded.timeline.setCurrentIndex(model.index(8, 0))
    assert _find(qtbot, loaded, 1) == 0
    assert loaded.statusBar().currentMessage() == "Wrapped to the first match (match 1 of 9)."
    assert _find(qtbot, loaded, -1) == 8
    assert loaded.statusBar().currentMessage() == "Wrapped to the last match (match 9 of 9)."
    assert model.index(8, COL_TYPE).data() == "reflection.evidence_updated"
    assert tree_hashes(loaded.root) == hashes  # read-only


def test_f3_with_an_empty_box_asks_for_text(qtbot, loaded):
    loaded.finder.find_next_action.trigger()
    assert loaded.statusBar().currentMessage() == "Type what to find in the search box (Ctrl+F)."
    assert not loaded.timeline.currentIndex().isValid()


def test_matches_are_highlighted_in_the_summary_cell_and_the_payload_views(qtbot, loaded):
    model = loaded.session.timeline_model
    assert "user_fact" in model.index(3, COL_SUMMARY).data()
    loaded.select_ref(3)
    plain = _summary_image(loaded, 3)
    detail = loaded.detail.event_detail
    tree_plain = detail.tree.viewport().grab().toImage()
    loaded.filter_bar.text.setText("USER_fact")  # case-insensitive, as the filter
    assert loaded.finder.pattern is not None
    marked = _summary_image(loaded, 3)
    assert marked != plain
    assert _summary_image(loaded, 31) == _summary_image(loaded, 31)  # fact.added: no match, drawn as usual
    assert loaded.timeline.cell_marks.pattern is loaded.finder.pattern
    # the raw JSON: the match's characters carry the highlight's background
    block = detail.raw.document().find("user_fact").block()
    ranges = [(r.start, r.length) for r in block.layout().formats() if r.format.background().style() != 0]
    column = block.text().index("user_fact")
    assert (column, len("user_fact")) in ranges
    detail.tree.viewport().repaint()
    assert detail.tree.viewport().grab().toImage() != tree_plain
    loaded.filter_bar.text.clear()
    assert loaded.finder.pattern is None
    assert _summary_image(loaded, 3) == plain
    assert not [r for r in detail.raw.document().find("user_fact").block().layout().formats()]


def test_the_regex_toggle_is_respected_and_an_invalid_regex_highlights_and_finds_nothing(qtbot, loaded):
    bar = loaded.filter_bar
    model = loaded.session.timeline_model
    plain = _summary_image(loaded, 3)
    bar.text.setText("user.fact")
    bar.regex.setChecked(True)  # filters at once: the rows shown are the 30 that match
    assert model.rowCount() == 30 and "user_fact" in model.index(3, COL_SUMMARY).data()
    assert loaded.finder.pattern is not None and loaded.finder.pattern.search("user_fact")
    assert _summary_image(loaded, 3) != plain
    bar.regex.setChecked(False)
    assert not loaded.finder.pattern.search("user_fact")  # literally "user.fact"
    bar.regex.setChecked(True)
    bar.text.setText("((")
    assert loaded.finder.pattern is None
    assert _summary_image(loaded, 3) == plain
    rows = model.rowCount()
    loaded.finder.find_next_action.trigger()
    assert loaded.statusBar().currentMessage().startswith("Nothing to find: invalid regular expression")
    assert model.rowCount() == rows and not loaded.timeline.currentIndex().isValid()
