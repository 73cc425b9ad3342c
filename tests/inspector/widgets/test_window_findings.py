"""The Findings tab (issue 27 item 5): findings in ``check``'s order (errors, then warnings, then
info), the whole message on hover and in a wrapped, selectable box below the table, and copyable."""

from __future__ import annotations

import html
import io

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtGui import Qt as GuiQt

from inspector.core import check_report
from inspector.core.advice import finding_text
from inspector.models.tables import ROW_ROLE
from journal import fixtures as folders
from journal.diagnosis import diagnose_path
from journal.finding import SEVERITIES
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    inspector_window,
    make_inspector_window,
    open_and_wait,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def shown(qtbot, inspector_window, tmp_path):  # noqa: F811
    built = folders.legacy_type_blocked(tmp_path)
    open_and_wait(qtbot, inspector_window, built.path)
    window = inspector_window
    window.detail.setCurrentWidget(window.detail.findings)
    return window, built


def _check_codes(path) -> list[str]:
    """The finding codes as ``check``'s text lists them for the one character, in order."""
    out = io.StringIO()
    diagnosis = diagnose_path(str(path))
    try:
        check_report.write_human(diagnosis, out)
    finally:
        diagnosis.close()
    lines = out.getvalue().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("  findings ("))
    found = []
    for ln in lines[start + 1 :]:
        if not ln.startswith("    "):
            break
        found.append(ln.split()[1])
    return found


def test_findings_are_listed_errors_first_in_checks_order(shown):
    window, built = shown
    model = window.session.findings_model
    rows = [model.index(r, 0).data() for r in range(model.rowCount())]
    codes = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert len(rows) >= 3 and {"error", "warning"} <= set(rows)
    ranks = [SEVERITIES.index(s) for s in rows]
    assert ranks == sorted(ranks, reverse=True)  # errors, then warnings, then info
    assert codes == _check_codes(built.path)  # the one order of both
    # the diagnosis itself lists a warning before errors: the order is the report's, not the diagnosis's
    diagnosis_order = [f.severity for f in window.session.timeline().diagnosis.findings]
    assert diagnosis_order != rows


def test_the_whole_message_is_on_hover_and_in_the_box_below_and_copyable(qtbot, shown):
    window, _ = shown
    model = window.session.findings_model
    panel = window.detail.findings
    assert panel.full.toPlainText() == "" and not panel.copy_button.isEnabled()
    longest = max(range(model.rowCount()), key=lambda r: len(model.index(r, 2).data()))
    finding = model.data(model.index(longest, 0), ROW_ROLE)
    message = finding_text(finding, "window")
    assert len(message) > 200  # long enough to be cut by the column
    tip = model.index(longest, 2).data(GuiQt.ItemDataRole.ToolTipRole)
    assert GuiQt.mightBeRichText(tip)  # rich text: Qt wraps it to the screen
    assert html.unescape(tip.removeprefix("<p>").removesuffix("</p>")) == message
    panel.table.setCurrentIndex(model.index(longest, 1))
    text = panel.full.toPlainText()
    assert text.endswith(message) and text.startswith(f"{finding.severity} · {finding.code}")
    assert panel.full.lineWrapMode() == panel.full.LineWrapMode.WidgetWidth and panel.full.isReadOnly()
    window.show()
    qtbot.waitExposed(window)
    assert panel.full.isVisible()
    # the box is below the table, within the pane
    assert panel.full.mapTo(panel, panel.full.rect().topLeft()).y() > panel.table.geometry().bottom()
    QGuiApplication.clipboard().clear()
    panel.copy_button.click()
    assert QGuiApplication.clipboard().text() == text
    window.window_actions.redact_action.trigger()  # the box follows redaction as the table does
    assert model.redact and panel.full.toPlainText() == model.full_text(finding)
