"""The window's size is the user's (issue 27 items 2 and 3): nothing a user selects changes the
window's size, its minimum size or a splitter's sizes; it opens at the last size, clipped to the
screen, the first time at most 90 % of it, and ``--size`` wins."""

from __future__ import annotations

from itertools import pairwise

import pytest
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication, QSplitter

from inspector.widgets.main_window import MINIMUM_SIZE
from inspector.widgets.screen_fit import SCREEN_SHARE, screen_limit
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
)

pytestmark = pytest.mark.gui


def _geometry(window):
    """What a selection may not change: the window's size and minimum size, the main splitter and
    the timeline's height; and each inner splitter's handles (a splitter its parent gave more or
    less room to, all its panes together, has moved no handle: it is compared only with the same room)."""
    splitters = {id(s): tuple(s.sizes()) for s in window.findChildren(QSplitter) if s.isVisible()}
    return window.size(), window.minimumSize(), tuple(window.splitter.sizes()), window.timeline.height(), splitters


def _assert_unchanged(now, before, where):
    assert now[:4] == before[:4], where
    for key, sizes in now[4].items():
        was = before[4].get(key)
        if was is not None and sum(was) == sum(sizes):
            assert sizes == was, where


def _settle(qtbot, window, pending):
    """Let what a selection started (a dry run, a history build) finish and lay out."""
    qtbot.waitUntil(lambda: not pending(), timeout=WAIT_MS)
    # A label that wraps lays out in two passes (its height follows its width): until it is still.
    was = None
    for _ in range(10):
        QApplication.processEvents()
        now = _geometry(window)
        if now == was:
            return
        was = now


def test_selecting_any_row_in_any_tab_changes_no_size(qtbot, inspector_window):  # noqa: F811
    """At 900×600, where a preview's hash once moved the splitter by 120 px and grew the window."""
    window, width, height = inspector_window, 900, 600
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    previews = []
    window.source.preview_ready.connect(lambda row, *_: previews.append(row))
    views = window.detail.views

    building = [False]
    window.context.history.building.connect(lambda on: building.__setitem__(0, on))

    def pending():
        return "computing…" in views.preview_title.text() or building[0]

    QApplication.processEvents()
    first = _geometry(window)
    assert first[0] == QSize(width, height)
    selected = 0
    for tab in range(window.detail.count()):
        window.detail.setCurrentIndex(tab)
        for name in sorted(window.session.folder.timelines):
            window.session.show_character(name)
            _settle(qtbot, window, pending)
            # Another character's verdicts may take other heights, and its counts in the detail's
            # tab titles another width (titles stay whole); the window keeps its size, and its rows
            # move nothing.
            before = _geometry(window)
            assert before[:2] == first[:2], (name, "shown")
            for pos in range(window.session.timeline_model.rowCount()):
                window.select_position(pos)
                _settle(qtbot, window, pending)
                selected += 1
                _assert_unchanged(_geometry(window), before, (window.detail.tabText(tab), name, pos))
    assert selected > 100 and previews  # every row of every character, the dry runs shown


def test_the_first_open_takes_at_most_90_percent_of_the_screen(make_inspector_window):  # noqa: F811
    window = make_inspector_window(size=None)
    limit = screen_limit(window).size()
    assert window.width() <= limit.width() and window.height() <= limit.height()
    avail = window.screen().availableGeometry()
    assert limit.width() == int(avail.width() * SCREEN_SHARE)


def test_it_opens_at_the_last_size_clipped_to_the_screen(qtbot, make_inspector_window):  # noqa: F811
    first = make_inspector_window(size=None)
    first.resize(700, 500)
    first.close()
    again = make_inspector_window(size=None)
    assert again.size() == QSize(700, 500)
    # a size kept on a bigger screen is clipped to this one (the whole available screen)
    again.resize(5000, 4000)
    again.close()
    clipped = make_inspector_window(size=None)
    avail = clipped.screen().availableGeometry().size()
    assert clipped.size() == QSize(5000, 4000).boundedTo(avail)
    # a window that keeps no size (a --screenshot run) leaves the kept one as it was
    clipped.keeps_size = False
    clipped.resize(650, 450)
    clipped.close()
    assert make_inspector_window(size=None).size() == QSize(5000, 4000).boundedTo(avail)


def test_the_status_bar_fields_elide_and_never_overlap(qtbot, inspector_window):  # noqa: F811
    """At 900×600 a big character's figures ran into each other (issue 27 item 4); at the window's
    minimum width they are cut with "…" and whole on hover, side by side."""
    window = inspector_window
    window.resize(900, 600)
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    window.status_size.setText("Journal: 1,234.5 MiB · 1,000,000 events")  # a big character's figures
    window.status_sentinel.setText("Sentinel: #999,990 of 1,000,000")
    fields = [window.status_sentinel, window.status_watch, window.status_size, window.status_refresh]
    for width in (900, MINIMUM_SIZE.width()):
        window.resize(width, 600)
        qtbot.waitUntil(lambda w=width: window.width() == w)
        window.statusBar().showMessage("Loaded 1 character in 3.25 s.")
        QApplication.processEvents()
        bar = window.statusBar()
        for a, b in pairwise(fields):
            assert a.geometry().right() < b.geometry().left(), (width, a.text(), b.text())
        assert fields[-1].geometry().right() <= bar.width()
        cut = [f for f in fields if f.shown_text() != f.text()]
        for f in cut:
            assert f.shown_text().endswith("…") and f.text() in f.toolTip()
        for f in fields:
            if f not in cut:
                assert f.width() >= f.sizeHint().width() - 1 or f.shown_text() == f.text()
    assert cut  # at the minimum width some field is cut: the test saw the narrow case
