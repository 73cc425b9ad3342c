"""A real window on the bundled sample at 900×600, as a new user on a small screen sees it: its
screenshot is saved in the test's temporary folder (CI runs this under Xvfb; locally offscreen),
and its geometry shows every column and pane that must be there (issue 16 item 7)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from inspector.app import show_most_interesting
from tests.inspector.widgets.test_window_layout import assert_usable_at_900, laid_out
from tests.inspector.widgets.window_fixtures import WAIT_MS, inspector_window, make_inspector_window  # noqa: F401

pytestmark = pytest.mark.gui


def test_the_sample_at_900_by_600_screenshot(qtbot, inspector_window, tmp_path):  # noqa: F811
    window = inspector_window
    window.resize(900, 600)
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    show_most_interesting(window)  # what --screenshot shows: the character with most to see, its row selected
    qtbot.waitUntil(lambda: window.selected_row() is not None)
    qtbot.waitUntil(lambda: laid_out(window))  # laid out again after the texts changed
    assert_usable_at_900(window)
    view = window.timeline
    selected = view.currentIndex().row()
    assert view.rowViewportPosition(selected) >= 0
    assert view.rowViewportPosition(selected) + view.rowHeight(selected) <= view.viewport().height()
    out = tmp_path / "shot900.png"
    pixmap = window.grab()
    assert pixmap.save(str(out), "PNG")
    image = QImage(str(out))
    ratio = pixmap.devicePixelRatio()
    assert (round(image.width() / ratio), round(image.height() / ratio)) == (900, 600)
    # the tags are painted in the screenshot, in their strips (not over a row's cells)
    for tag, strip in view.tag_rects():
        if 0 <= strip.center().y() < view.viewport().height():
            box = view.tag_box(tag.label, strip)
            at = view.viewport().mapTo(window, box.center())
            colour = image.pixelColor(int(at.x() * ratio), int(at.y() * ratio))
            assert colour.alpha() == 255 and colour != view.palette().base().color()
