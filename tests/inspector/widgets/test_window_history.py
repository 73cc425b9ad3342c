"""The History tab in the window: the selected event's entry, its chart, and a click on a point
selecting the event in the timeline (issue 18 item 3)."""

from __future__ import annotations

import pytest

from tests.inspector.widgets.window_fixtures import (  # noqa: F401
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


def _first_entry_row(window) -> int:
    tl = window.session.shown_timeline()
    return next(i for i, ev in enumerate(tl.events) if ev.entry is not None and ev.type.endswith("evidence_updated"))


def test_the_history_tab_shows_the_selected_events_entry_and_a_click_selects_its_event(qtbot, inspector_window):  # noqa: F811
    window = inspector_window
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    window.session.show_character("healthy")
    window.characters.select_name("healthy")
    root = window.session.folder.location.path
    before = tree_hashes(root)
    window.detail.setCurrentWidget(window.history_panel)
    index = _first_entry_row(window)
    with qtbot.waitSignal(window.context.history.history_ready, timeout=WAIT_MS) as got:
        assert window.select_ref(index)
    _request, history, _arrays = got.args
    entry = window.session.shown_timeline().events[index].entry
    assert history.key.ref == entry
    assert index in [p.index for p in history.points]
    plotted = window.history_panel.chart.plotted("reinforcement")
    assert plotted and {x for x, _y, _state in plotted} <= {p.index for p in history.points}
    other = next(p.index for p in history.points if p.index != index) if len(history.points) > 1 else index
    window.history_panel.event_activated.emit(other)
    assert window.selected_ref() == other
    assert tree_hashes(root) == before


def test_the_history_is_not_built_while_its_tab_is_hidden(qtbot, inspector_window):  # noqa: F811
    window = inspector_window
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    window.detail.setCurrentWidget(window.detail.event_detail)
    index = _first_entry_row(window)
    window.select_ref(index)
    assert window.context.history.wanted is None  # nothing asked: a build reads the journal
    with qtbot.waitSignal(window.context.history.history_ready, timeout=WAIT_MS):
        window.detail.setCurrentWidget(window.history_panel)
