"""Run in a child process on a screen of a chosen size (Qt's offscreen platform, configured by
``test_detail_tables_fit_a_small_screen``): opens the window as a first start does (at most 90 % of
the screen), styled as the application is, on the bundled sample, and prints where the columns of
the detail pane's Findings and History tables lie in their viewports, per character, as JSON.

Findings: every character with findings. History: every character, with the history of its first
event that touches an entry.

Usage: ``python -m tests.inspector.widgets._detail_fit_probe WORKDIR``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtGui import QFontMetrics, QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QStyle, QStyleOptionViewItem, QTableView

from inspector.app import build_window, make_application, wait_loaded
from inspector.core.prompter import HeadlessPrompter

#: How long the probe waits for a history to be built (milliseconds).
HISTORY_MS = 60_000


def settle(*views: QTableView) -> None:
    """Lay the window out until the views' columns are still (a resize refits them)."""
    was = None
    for _ in range(20):
        QApplication.processEvents()
        now = [(v.viewport().width(), [v.columnWidth(c) for c in range(v.model().columnCount())]) for v in views]
        if now == was:
            return
        was = now


def painted(view: QTableView, index) -> dict[str, object]:
    """What a cell shows as its delegate paints it: its text as elided into the text's rect, and
    whether it has an icon; its whole text and tooltip."""
    opt = QStyleOptionViewItem()
    opt.initFrom(view.viewport())
    opt.rect = view.visualRect(index)
    opt.font = view.font()
    opt.fontMetrics = QFontMetrics(view.font())
    opt.textElideMode = view.textElideMode()
    opt.widget = view
    view.itemDelegateForIndex(index).initStyleOption(opt, index)
    rect = view.style().subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, view)
    margin = view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1
    shown = opt.fontMetrics.elidedText(opt.text, opt.textElideMode, rect.width() - 2 * margin) if opt.text else ""
    return {
        "text": str(index.data() or ""),
        "shown": shown,
        "icon": not opt.icon.isNull(),
        "tip": str(index.data(Qt.ItemDataRole.ToolTipRole) or ""),
    }


def columns(view: QTableView) -> dict[str, object]:
    """Each column's title, viewport position, width and shown state, and its cells as painted;
    the viewport's width."""
    model, header = view.model(), view.horizontalHeader()
    view.horizontalScrollBar().setValue(0)
    QApplication.processEvents()
    return {
        "viewport": view.viewport().width(),
        "scroll_max": view.horizontalScrollBar().maximum(),
        "columns": [
            {
                "title": str(model.headerData(c, header.orientation())),
                "x": view.columnViewportPosition(c),
                "width": view.columnWidth(c),
                "hidden": header.isSectionHidden(c),
                "cells": [painted(view, model.index(r, c)) for r in range(model.rowCount())],
            }
            for c in range(model.columnCount())
        ],
    }


def legend_lines(label: QLabel) -> list[str]:
    """The legend's lines as its label lays them out (its rich text at the label's width)."""
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setDocumentMargin(0)
    doc.setHtml(label.text())
    doc.setTextWidth(label.contentsRect().width())
    doc.size()  # lays the text out
    lines = []
    block = doc.begin()
    while block.isValid():
        layout, text = block.layout(), block.text()
        for k in range(layout.lineCount()):
            line = layout.lineAt(k)
            lines.append(text[line.textStart() : line.textStart() + line.textLength()])
        block = block.next()
    return lines


def wait_history(window) -> bool:
    """Run the event loop until the History tab shows a history (``False`` on a timeout)."""
    panel = window.history_panel
    if panel.history is not None:
        return True
    loop = QEventLoop()
    window.context.history.history_ready.connect(lambda *_args: loop.quit())
    QTimer.singleShot(HISTORY_MS, loop.quit)
    loop.exec()
    QApplication.processEvents()
    return panel.history is not None


def main() -> int:
    work = Path(sys.argv[1])
    make_application()  # the application's style and style sheet, as users see it
    window = build_window(prompter=HeadlessPrompter(), config_dir=work / "config", watch=False)
    window.show()
    assert window.session.open_sample()
    error = wait_loaded(window, 120)
    assert error is None, error
    out = []
    findings, history = window.detail.findings, window.history_panel
    for name in sorted(window.session.folder.timelines):
        window.session.show_character(name)
        window.characters.select_name(name)
        timeline = window.session.shown_timeline()
        window.detail.setCurrentWidget(findings)
        settle(findings.table)
        shown = {"name": name, "window": [window.width(), window.height()], "pane": window.detail.width()}
        shown["findings"] = columns(findings.table) | {"rows": findings.table.model().rowCount()}
        window.detail.setCurrentWidget(history)
        touched = next((i for i, ev in enumerate(timeline.events) if ev.entry is not None), None)
        if touched is not None and window.select_ref(touched) and wait_history(window):
            settle(history.table)
            shown["history"] = columns(history.table) | {
                "rows": history.table.model().rowCount(),
                "legend_lines": legend_lines(history.legend),
            }
        out.append(shown)
    window.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
