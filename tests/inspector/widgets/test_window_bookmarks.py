"""Bookmarks (issue 16 item 20): Ctrl+B marks the selected row, F2 / Shift+F2 go to the next and
previous bookmark (wrapping, with a word), marks show on the row and the ruler, and bookmarks are
kept per folder in the config folder, never inside the folder opened."""

from __future__ import annotations

import shutil

import pytest

from inspector.core.overview import Mark
from inspector.models.timeline_model import COL_INDEX
from inspector.widgets.cell_marks import BOOKMARK_COLOR
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


def _open(qtbot, make_inspector_window, root):  # noqa: F811
    window = make_inspector_window()
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, root)
    return window


def _first_cell(window, row):
    view = window.timeline
    view.viewport().repaint()
    return view.viewport().grab(view.cell_rect(view.model().index(row, COL_INDEX))).toImage()


def _bookmark(window, ref):
    window.select_ref(ref)
    window.bookmark_actions.toggle_action.trigger()


def test_ctrl_b_marks_the_row_on_its_cell_and_the_ruler(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    hashes = tree_hashes(root)
    window = _open(qtbot, make_inspector_window, root)
    assert window.bookmark_actions.toggle_action.shortcut().toString() == "Ctrl+B"
    window.select_ref(5)
    plain = _first_cell(window, 5)
    window.bookmark_actions.toggle_action.trigger()
    assert window.context.bookmarks.refs == {5}
    assert window.statusBar().currentMessage() == "Bookmarked event #5."
    assert _first_cell(window, 5) != plain
    qtbot.waitUntil(lambda: Mark(5, "bookmark") in window.ruler.marks())
    ruler = window.ruler
    ruler.repaint()
    assert ruler.grab().toImage().pixelColor(ruler.width() - 3, ruler.point_of(5).y()) == BOOKMARK_COLOR
    window.bookmark_actions.toggle_action.trigger()
    assert window.context.bookmarks.refs == frozenset()
    assert window.statusBar().currentMessage() == "Removed the bookmark of #5."
    assert _first_cell(window, 5) == plain
    qtbot.waitUntil(lambda: Mark(5, "bookmark") not in window.ruler.marks())
    assert tree_hashes(root) == hashes  # kept in the config folder, not in the folder opened


def test_f2_and_shift_f2_go_round_the_bookmarks(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    window = _open(qtbot, make_inspector_window, two_characters(tmp_path / "memory"))
    actions = window.bookmark_actions
    assert (actions.next_action.shortcut().toString(), actions.previous_action.shortcut().toString()) == (
        "F2",
        "Shift+F2",
    )
    actions.next_action.trigger()
    assert window.statusBar().currentMessage() == "No bookmarks in the rows shown (Ctrl+B bookmarks a row)."
    _bookmark(window, 20)
    _bookmark(window, 5)
    window.select_ref(0)
    actions.next_action.trigger()
    assert window.selected_ref() == 5
    actions.next_action.trigger()
    assert window.selected_ref() == 20
    actions.next_action.trigger()
    assert window.selected_ref() == 5
    assert window.statusBar().currentMessage() == "Wrapped around to the first bookmark."
    actions.previous_action.trigger()
    assert window.selected_ref() == 20
    assert window.statusBar().currentMessage() == "Wrapped around to the last bookmark."
    window.filter_bar.states.set_selected({"blocked", "pending"})  # hides both
    actions.next_action.trigger()
    assert window.statusBar().currentMessage() == "No bookmarks in the rows shown (Ctrl+B bookmarks a row)."


def test_bookmarks_are_kept_per_folder_and_character(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    other = tmp_path / "copy"
    shutil.copytree(root, other)
    window = _open(qtbot, make_inspector_window, root)
    _bookmark(window, 3)
    _bookmark(window, 7)
    window.close()
    again = _open(qtbot, make_inspector_window, root)  # the next run (same config folder)
    assert again.context.bookmarks.refs == {3, 7}
    qtbot.waitUntil(lambda: {m.pos for m in again.ruler.marks() if m.kind == "bookmark"} == {3, 7})
    with qtbot.waitSignal(again.session.character_shown):
        again.session.show_character("bob")
    assert again.context.bookmarks.refs == frozenset()
    open_and_wait(qtbot, again, other)  # the same events in another folder: its own bookmarks
    with qtbot.waitSignal(again.session.character_shown):
        again.session.show_character("alice")
    assert again.context.bookmarks.refs == frozenset()
    assert (tmp_path / "config" / "bookmarks.json").is_file()


def test_a_damaged_line_cannot_be_bookmarked(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    with open(root / "alice" / "events.ndjson", "ab") as fh:
        fh.write(b"{torn\n")
    window = _open(qtbot, make_inspector_window, root)
    model = window.session.timeline_model
    damaged = next(p for p in range(model.rowCount()) if model.ref_at(p) < 0)
    window.timeline.setCurrentIndex(model.index(damaged, 0))
    window.bookmark_actions.toggle_action.trigger()
    assert window.statusBar().currentMessage() == "A damaged line has no event id: it cannot be bookmarked."
    assert window.context.bookmarks.refs == frozenset()
