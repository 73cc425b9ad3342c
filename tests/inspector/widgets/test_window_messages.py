"""What the status bar says about the rows goes when the rows change (issue 27 item 13), and
bookmarks on the bundled sample outlive its scratch copy (issue 27 item 14)."""

from __future__ import annotations

import pytest

from inspector.core.location import sample_source
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
)

pytestmark = pytest.mark.gui

NO_PROBLEMS = "No problems in the rows shown."


def _sample(qtbot, window):
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()


def test_no_problems_goes_when_another_character_is_shown_and_f8_finds_one(qtbot, inspector_window):  # noqa: F811
    window = inspector_window
    _sample(qtbot, window)
    bar = window.statusBar()
    window.session.show_character("healthy")
    window.window_actions.next_problem_action.trigger()
    assert bar.currentMessage().startswith(NO_PROBLEMS)
    window.session.show_character("wedged-merge")  # a character with a blocked row
    assert not bar.currentMessage().startswith(NO_PROBLEMS)
    window.window_actions.next_problem_action.trigger()
    assert window.selected_row() is not None and window.session.timeline().state(window.selected_ref()) != "applied"
    assert not bar.currentMessage().startswith(NO_PROBLEMS)
    # and when the rows shown change under it: a filter
    window.session.show_character("healthy")
    window.window_actions.next_problem_action.trigger()
    assert bar.currentMessage().startswith(NO_PROBLEMS)
    window.filter_bar.text.setText("reflection")
    qtbot.waitUntil(lambda: not bar.currentMessage().startswith(NO_PROBLEMS), timeout=WAIT_MS)


def test_a_message_not_about_the_rows_stays(qtbot, inspector_window):  # noqa: F811
    window = inspector_window
    _sample(qtbot, window)
    window.statusBar().showMessage("Copied the event id.", 5000)
    window.session.show_character("healthy")
    assert window.statusBar().currentMessage() == "Copied the event id."


def test_bookmarks_on_the_sample_are_kept_across_starts(qtbot, make_inspector_window):  # noqa: F811
    first = make_inspector_window()
    _sample(qtbot, first)
    first.session.show_character("wedged-merge")
    first.select_position(2)
    event_id = first.session.timeline().row(first.selected_ref()).event_id
    first.bookmark_actions.toggle()
    scratch = first.session.location.path
    first.close()
    again = make_inspector_window()
    _sample(qtbot, again)
    assert again.session.location.path != scratch  # a new scratch copy
    again.session.show_character("wedged-merge")
    marked = again.context.bookmarks.positions(again.session.timeline_model.refs())
    assert [again.session.timeline().row(again.session.timeline_model.ref_at(p)).event_id for p in marked] == [
        event_id
    ]
    assert again.session.location.kept_as == sample_source()
