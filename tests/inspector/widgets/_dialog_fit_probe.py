"""Run in a child process on a screen of a chosen size (Qt's offscreen platform, configured by
``test_dialogs_fit_the_screen``): shows every dialog of the window, styled as the application is,
with the longest content a user meets (the bundled sample's ``wedged-merge`` replay plan and its
park plan, a result with its backup path, long paths), and prints, per dialog, its frame, the
screen's available geometry and every visible button's rectangle, as JSON on stdout.

Usage: ``python -m tests.inspector.widgets._dialog_fit_probe WORKDIR``
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QScrollArea, QTextEdit, QWidget

from inspector.app import make_application
from inspector.controllers.support import compare_with_rows
from inspector.core import replay as gr
from inspector.core.location import sample_source
from inspector.core.prompter import HeadlessPrompter, Question
from inspector.core.replay import Scope
from inspector.widgets.compare_panel import ComparePanel
from inspector.widgets.dialogs import GoToEventDialog, QuestionDialog
from inspector.widgets.help_dialogs import AboutDialog, ShortcutsDialog, TourDialog, about_lines, window_tour
from inspector.widgets.replay_dialog import ReplayDialog
from inspector.widgets.restore_dialog import RestoreDialog
from inspector.widgets.screen_fit import ElidingComboBox
from inspector.widgets.support_dialogs import BundleOptionsDialog

CHARACTER = "wedged-merge"


def _rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def reach(dialog: QWidget, w: QWidget) -> dict[str, object] | None:
    """Whether a shown text of ``dialog`` can be read whole: it lies inside the dialog (or inside
    a scroll area's content, the area inside the dialog), and a wrapped label is as tall as its
    text, a text box shows its text whole or scrolls to it."""
    if not w.isVisibleTo(dialog) or w.window() is not dialog:
        return None
    if isinstance(w, QLabel):
        if not w.text() or (w.pixmap() is not None and not w.pixmap().isNull()):
            return None
        text = w.text()
        whole = not w.wordWrap() or w.height() >= w.heightForWidth(w.width())
    else:
        text = w.toPlainText()
        bar = w.verticalScrollBar()
        whole = w.document().size().height() <= w.viewport().height() + 1 or bar.maximum() > 0
    # In a scroll area, it is reachable where the area's content holds it, the area in the dialog.
    area, probe = None, w.parentWidget()
    while probe is not None and probe is not dialog and area is None:
        area = probe if isinstance(probe, QScrollArea) else None
        probe = probe.parentWidget()
    holder = area.widget() if area is not None else dialog
    inside = holder.rect().contains(QRect(w.mapTo(holder, QPoint(0, 0)), w.size()))
    if area is not None:
        inside = inside and dialog.rect().contains(QRect(area.mapTo(dialog, QPoint(0, 0)), area.size()))
    return {"text": text[:60], "whole": whole, "inside": inside, "height": w.height()}


def measure(name: str, dialog: QWidget) -> dict[str, object]:
    dialog.show()
    for _ in range(3):
        QApplication.processEvents()
    buttons = {}
    for b in dialog.findChildren(QAbstractButton):
        if b.isVisibleTo(dialog) and b.window() is dialog:
            top_left = b.mapToGlobal(QPoint(0, 0))
            buttons[b.text().replace("&", "") or b.objectName() or type(b).__name__] = _rect(QRect(top_left, b.size()))
    combos = [
        {"text": c.currentText(), "shown": c.shown_text(), "tooltip": c.toolTip(), "width": c.width()}
        for c in dialog.findChildren(ElidingComboBox)
        if c.isVisibleTo(dialog)
    ]
    screen = dialog.screen()
    texts = [reach(dialog, w) for w in dialog.findChildren(QWidget) if isinstance(w, (QLabel, QTextEdit))]
    out = {
        "name": name,
        "frame": _rect(dialog.frameGeometry()),
        "available": _rect(screen.availableGeometry()),
        "buttons": buttons,
        "combos": combos,
        "texts": [t for t in texts if t is not None],
    }
    dialog.close()
    return out


def dialogs(work: Path) -> list[tuple[str, QWidget]]:
    root = work / "memory"
    shutil.copytree(sample_source(), root, ignore=shutil.ignore_patterns("*.py", "README*"))
    other = work / "other"
    shutil.copytree(root, other)
    backups = work / "backups-with-a-long-name-as-a-user-may-give-it" / ("deep-" * 12) / "backups"
    target = gr.target_of(root, CHARACTER)
    plan = gr.make_plan(target)
    preflight = gr.preflight(target)
    held = plan.blocks or ([plan.block] if plan.block is not None else [])
    park = gr.make_plan(target, Scope("park", park=held[0].event_id))
    run = gr.run_guarded_replay(gr.ReplayRequest(root, CHARACTER, backup_root=backups), HeadlessPrompter(True))
    listed = gr.list_backups(backups, CHARACTER)
    long_path = str(work / ("a-very-long-folder-name-" * 6) / "memory")
    about = about_lines(Path(long_path) / "config", backups)
    question = f"{long_path}.zip is a zip export and replay writes. Extract it to {long_path}-extracted first?"
    out: list[tuple[str, QWidget]] = [
        ("replay plan", ReplayDialog(plan, preflight, plan.unapplied)),
        ("replay park plan", ReplayDialog(park, preflight, park.unapplied)),
        ("replay result", ReplayDialog(run.plan, outcome=run.outcome)),
        ("restore", RestoreDialog(listed, backups)),
        ("support bundle", BundleOptionsDialog(long_path, long_path + "-support.zip")),
        ("shortcuts", ShortcutsDialog([(f"Action number {i}", f"Ctrl+{i}") for i in range(60)])),
        ("about", AboutDialog(about)),
        ("tour", TourDialog(window_tour())),
        ("go to event", GoToEventDialog()),
        ("compare", ComparePanel(compare_with_rows(root, other, CHARACTER))),
        ("question", QuestionDialog.build(None, Question("extract_zip", "Zip export", question, long_path))),
    ]
    return out


def main() -> int:
    work = Path(sys.argv[1])
    make_application()  # the application's style and style sheet, as users see it
    results = [measure(name, dialog) for name, dialog in dialogs(work)]
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
