"""Find (issue 16 item 15, issue 27 item 15): find is not filter. Ctrl+F opens the find bar; F3 /
Shift+F3 step through the matching rows, hiding none, with a word when they wrap; matches are
highlighted in the Summary cells and the payload views; a list of the matches and the bookmarks
jumps to the one clicked; the filter box still filters; an invalid regular expression highlights
and finds nothing."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from inspector.models.timeline_model import COL_SUMMARY
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
    index = view.model().index(row, COL_SUMMARY)
    view.scrollTo(index)  # the timeline follows new rows: the row may be scrolled away on a busy run
    rect = view.cell_rect(index)
    assert not rect.isEmpty()  # two null grabs would compare equal
    view.viewport().repaint()
    return view.viewport().grab(rect).toImage()


def _find(qtbot, window, step):
    action = window.finder.find_next_action if step > 0 else window.finder.find_previous_action
    before = window.timeline.currentIndex().row()
    action.trigger()
    qtbot.waitUntil(lambda: window.timeline.currentIndex().row() != before or window.statusBar().currentMessage())
    return window.timeline.currentIndex().row()


def test_ctrl_f_opens_the_find_bar_and_focuses_its_box(qtbot, loaded):
    loaded.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is loaded)
    bar = loaded.finder.bar
    assert not bar.isVisible()
    bar.text.setText("tea")
    loaded.timeline.setFocus()
    assert loaded.finder.find_action.shortcut().toString() == "Ctrl+F"
    loaded.finder.find_action.trigger()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is bar.text)
    assert bar.isVisible() and bar.text.selectedText() == "tea"  # typing replaces it
    assert loaded.filter_bar.text.text() == ""  # the filter box is not the find box


def test_f3_steps_through_the_matches_without_hiding_a_row_and_says_when_it_wraps(qtbot, loaded):
    model = loaded.session.timeline_model
    hashes = tree_hashes(loaded.root)
    assert [a.shortcut().toString() for a in (loaded.finder.find_next_action, loaded.finder.find_previous_action)] == [
        "F3",
        "Shift+F3",
    ]
    loaded.finder.focus_search()
    loaded.finder.bar.text.setText("ref_0000000000000001")
    qtbot.waitUntil(lambda: len(loaded.finder.controller.refs) == 9, timeout=WAIT_MS)
    matches = loaded.finder.controller.positions()
    assert model.rowCount() == 32  # every row still shown: finding hides no context
    assert loaded.finder.bar.count.text() == "9 matches"
    loaded.finder.find_next_action.trigger()
    assert loaded.timeline.currentIndex().row() == matches[0]
    assert loaded.statusBar().currentMessage() == "Match 1 of 9 for 'ref_0000000000000001'."
    assert _find(qtbot, loaded, 1) == matches[1]
    loaded.timeline.setCurrentIndex(model.index(matches[-1], 0))
    assert _find(qtbot, loaded, 1) == matches[0]
    assert loaded.statusBar().currentMessage() == "Wrapped to the first match (match 1 of 9)."
    assert _find(qtbot, loaded, -1) == matches[-1]
    assert loaded.statusBar().currentMessage() == "Wrapped to the last match (match 9 of 9)."
    between = next(r for r in range(matches[0], matches[-1]) if r not in matches)
    loaded.timeline.setCurrentIndex(model.index(between, 0))  # from a row that does not match
    assert _find(qtbot, loaded, 1) == min(m for m in matches if m > between)
    assert model.rowCount() == 32
    assert tree_hashes(loaded.root) == hashes  # read-only


def test_f3_with_an_empty_box_asks_for_text(qtbot, loaded):
    loaded.finder.find_next_action.trigger()
    assert loaded.statusBar().currentMessage() == "Type what to find in the find bar (Ctrl+F)."
    assert not loaded.timeline.currentIndex().isValid() and loaded.finder.bar.isVisible()


def test_the_filter_box_filters_and_find_marks_within_what_it_shows(qtbot, loaded):
    model = loaded.session.timeline_model
    loaded.filter_bar.text.setText("ref_0000000000000001")
    loaded.filter_bar.emit_filter()
    qtbot.waitUntil(lambda: model.rowCount() == 9, timeout=WAIT_MS)
    assert loaded.finder.pattern is None  # the filter's text is no find
    loaded.finder.bar.text.setText("user_fact")
    qtbot.waitUntil(lambda: loaded.finder.pattern is not None, timeout=WAIT_MS)
    positions = loaded.finder.controller.positions()
    assert positions and all(p < 9 for p in positions) and model.rowCount() == 9


def test_the_list_of_matches_and_bookmarks_jumps_to_the_one_clicked(qtbot, loaded):
    model = loaded.session.timeline_model
    loaded.select_position(20)
    loaded.context.bookmarks.toggle(model.ref_at(20))
    loaded.finder.focus_search()
    loaded.finder.bar.text.setText("ref_0000000000000001")
    qtbot.waitUntil(lambda: len(loaded.finder.controller.refs) == 9, timeout=WAIT_MS)
    listing = loaded.finder.bar.list
    texts = [listing.item(i).text() for i in range(listing.count())]
    assert len(texts) == 10 and all(t.startswith("match · #") for t in texts[:9])
    assert texts[9].startswith(f"bookmark · #{model.ref_at(20)} ")
    third = loaded.finder.controller.positions()[2]
    listing.scrollToItem(listing.item(2))
    rect = listing.visualItemRect(listing.item(2))
    qtbot.mouseClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert loaded.timeline.currentIndex().row() == third
    listing.scrollToItem(listing.item(9))
    rect = listing.visualItemRect(listing.item(9))
    qtbot.mouseClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert loaded.timeline.currentIndex().row() == 20


def test_matches_are_highlighted_in_the_summary_cell_and_the_payload_views(qtbot, loaded):
    model = loaded.session.timeline_model
    assert "user_fact" in model.index(3, COL_SUMMARY).data()
    loaded.select_ref(3)
    plain = _summary_image(loaded, 3)
    detail = loaded.detail.event_detail
    tree_plain = detail.tree.viewport().grab().toImage()
    loaded.finder.bar.text.setText("USER_fact")  # case-insensitive, as the filter
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
    loaded.finder.bar.text.clear()
    assert loaded.finder.pattern is None
    assert _summary_image(loaded, 3) == plain
    assert not [r for r in detail.raw.document().find("user_fact").block().layout().formats()]


def test_the_regex_toggle_is_respected_and_an_invalid_regex_highlights_and_finds_nothing(qtbot, loaded):
    bar = loaded.finder.bar
    model = loaded.session.timeline_model
    plain = _summary_image(loaded, 3)
    bar.text.setText("user.fact")
    bar.regex.setChecked(True)
    assert model.rowCount() == 32 and len(loaded.finder.controller.refs) == 30  # marked, not filtered
    assert loaded.finder.pattern is not None and loaded.finder.pattern.search("user_fact")
    assert _summary_image(loaded, 3) != plain
    bar.regex.setChecked(False)
    assert not loaded.finder.pattern.search("user_fact")  # literally "user.fact"
    bar.regex.setChecked(True)
    bar.text.setText("((")
    assert loaded.finder.pattern is None and loaded.finder.controller.refs == []
    assert "invalid regular expression" in bar.count.text()
    assert _summary_image(loaded, 3) == plain
    loaded.finder.find_next_action.trigger()
    assert loaded.statusBar().currentMessage().startswith("Nothing to find: invalid regular expression")
    assert model.rowCount() == 32
