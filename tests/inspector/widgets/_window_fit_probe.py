"""Run in a child process on a screen of a chosen size (Qt's offscreen platform, configured by
``test_window_fits_a_small_screen``): opens the window as a first start does (at most 90 % of the
screen), styled as the application is, on the bundled sample and on a folder of every fixture case,
shows each character with its most telling row, and prints what a user sees of the timeline, the
memory server's panel and the sentinel bar, per character, as JSON on stdout.

Usage: ``python -m tests.inspector.widgets._window_fit_probe WORKDIR``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from inspector.app import build_window, make_application, show_telling_row, wait_loaded
from inspector.core.prompter import HeadlessPrompter
from journal.fixtures import CASES


def settle(window) -> None:
    """Lay the window out until its geometry is still (labels that wrap take two passes)."""
    was = None
    for _ in range(20):
        QApplication.processEvents()
        now = (window.server_panel.geometry(), window.sentinel_bar.geometry(), window.timeline.geometry())
        if now == was:
            return
        was = now


def full_rows(view) -> int:
    """How many rows show whole with the timeline scrolled to the top."""
    view.scrollToTop()
    QApplication.processEvents()
    height = view.viewport().height()
    model = view.model()
    return sum(
        1
        for r in range(model.rowCount())
        if view.rowViewportPosition(r) >= 0 and view.rowViewportPosition(r) + view.rowHeight(r) <= height
    )


def measure(window, source: str, name: str) -> dict[str, object]:
    show_telling_row(window, name)
    settle(window)
    panel, bar = window.server_panel, window.sentinel_bar
    body = panel.body
    doc = body.document()
    verdict = doc.documentLayout().blockBoundingRect(doc.firstBlock())
    scroll = body.verticalScrollBar()
    column = window.server_panel.parentWidget()
    return {
        "source": source,
        "name": name,
        "window": [window.width(), window.height()],
        "rows": window.timeline.model().rowCount(),
        "full_rows": full_rows(window.timeline),
        "panel_y": panel.geometry().y(),
        "bar_y": bar.geometry().y(),
        "timeline_y": window.timeline.mapTo(column, window.timeline.rect().topLeft()).y(),
        "verdict_bottom": verdict.bottom(),
        "body_viewport": body.viewport().height(),
        "body_text": doc.size().height(),
        "scroll_max": scroll.maximum(),
        "scroll_shown": scroll.isVisible(),
        "summary": doc.firstBlock().text(),
        "panel_text": panel.plain_text(),
        "title_shown": panel.title.shown_text(),
        "title_tip": panel.title.toolTip(),
        "bar_title": bar.title.text(),
        "bar_text": bar.label.text(),
        "bar_shown": bar.label.shown_text(),
        "bar_tip": bar.label.toolTip(),
        "bar_label_right": bar.label.geometry().right(),
        "bar_width": bar.width(),
        "bar_label_height": bar.label.height(),
        "bar_label_wants": bar.label.sizeHint().height(),
        "legend_cut": [c.text() for c in window.legend.chips.values() if c.width() < c.sizeHint().width()],
    }


def main() -> int:
    work = Path(sys.argv[1])
    cases = work / "cases" / "memory"
    cases.mkdir(parents=True)
    for build in CASES.values():
        build(cases)
    make_application()  # the application's style and style sheet, as users see it
    window = build_window(prompter=HeadlessPrompter(), config_dir=work / "config", watch=False)
    window.show()
    out = []
    for source, opened in (("sample", window.session.open_sample), ("cases", lambda: window.session.open_path(cases))):
        assert opened()
        error = wait_loaded(window, 120)
        assert error is None, error
        for name in sorted(window.session.folder.timelines):
            out.append(measure(window, source, name))
    window.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
