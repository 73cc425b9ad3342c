"""File ▸ Export (issue 16 item 17): the rows shown as CSV or NDJSON, the findings as ``check``
reports them, redacted when the window is, atomically where the person chose and never inside
the opened folder; a long export shows progress and can be cancelled."""

from __future__ import annotations

import csv
import io
import json
import threading
from pathlib import Path

import pytest

from inspector.controllers import export as export_controller
from inspector.core.check_report import dumps_json, write_human
from inspector.core.prompter import HeadlessPrompter
from journal import EventLog
from journal.diagnosis import diagnose_path
from tests.inspector.widgets.folders_for_gui import SECRET, two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def opened(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    """``(window, prompter, root, out)``: the saves go to ``out`` (outside the folder)."""
    prompter = HeadlessPrompter()
    window = make_inspector_window(prompter=prompter)
    root = two_characters(tmp_path / "memory")
    out = tmp_path / "exports"
    out.mkdir()
    open_and_wait(qtbot, window, root)
    before = tree_hashes(root)
    yield window, prompter, root, out
    assert tree_hashes(root) == before  # nothing written inside the opened folder


def _export(qtbot, window, action, prompter, target: Path) -> str:
    prompter.save_path = str(target)
    with qtbot.waitSignal(window.context.exporter.finished, timeout=WAIT_MS) as blocker:
        action.trigger()
    return blocker.args[0]


def test_the_rows_shown_export_as_csv(qtbot, opened):
    window, prompter, _root, out = opened
    window.filter_bar.states.set_selected({"applied"})
    qtbot.waitUntil(lambda: window.session.timeline_model.rowCount() == 30)
    message = _export(qtbot, window, window.row_actions.export_rows_actions[0], prompter, out / "rows.csv")
    assert "Exported 30 rows as CSV" in message and message in window.statusBar().currentMessage()
    rows = list(csv.reader(io.StringIO((out / "rows.csv").read_text(encoding="utf-8"), newline="")))
    assert rows[0] == ["#", "Type", "Entry", "State", "Summary", "Time"]
    assert [r[0] for r in rows[1:]] == [str(i) for i in range(30)]
    assert {r[3] for r in rows[1:]} == {"applied"}
    assert prompter.save_requests[0][0] == "Export rows" and prompter.save_requests[0][2][0] == "CSV files (*.csv)"
    assert sorted(p.name for p in out.iterdir()) == ["rows.csv"]  # no temp file left


def test_the_rows_shown_export_as_ndjson_records_redacted_when_the_window_is(qtbot, opened):
    window, prompter, root, out = opened
    window.session.show_character("bob")
    ndjson = window.row_actions.export_rows_actions[1]
    _export(qtbot, window, ndjson, prompter, out / "plain.ndjson")
    journal = (root / "bob" / "events.ndjson").read_bytes()
    assert (out / "plain.ndjson").read_bytes() == journal  # the records as they are
    assert SECRET in journal.decode()
    window.set_redact(True)
    _export(qtbot, window, ndjson, prompter, out / "redacted.ndjson")
    text = (out / "redacted.ndjson").read_text(encoding="utf-8")
    assert SECRET not in text and "‹" in text
    assert [json.loads(line)["event_id"] for line in text.splitlines()] == [
        json.loads(line)["event_id"] for line in journal.splitlines()
    ]


def test_the_findings_export_as_check_reports_them(qtbot, opened):
    window, prompter, root, out = opened
    json_action, text_action = window.row_actions.export_findings_actions
    _export(qtbot, window, json_action, prompter, out / "findings.json")
    check = diagnose_path(str(root), character="alice")
    assert json.loads((out / "findings.json").read_bytes()) == json.loads(dumps_json(check))
    _export(qtbot, window, text_action, prompter, out / "findings.txt")
    printed = io.StringIO()
    write_human(check, printed)
    assert (out / "findings.txt").read_text(encoding="utf-8") == printed.getvalue()


def test_the_findings_are_not_exported_while_rows_are_not_yet_checked(qtbot, opened):
    window, prompter, root, out = opened
    model = window.session.timeline_model
    journal = root / "alice" / "events.ndjson"
    before = journal.read_bytes()
    try:
        with qtbot.waitSignal(model.rowsInserted, timeout=10_000):
            EventLog(root).append("alice", "reflection.evidence_updated", {"reflection_id": "ref_0000000000000001"})
        assert window.session.timeline().unchecked  # the re-diagnosis is merged from the event loop, later
        prompter.save_path = str(out / "findings.json")
        window.row_actions.export_findings_actions[0].trigger()
        assert prompter.errors and "not yet checked" in prompter.errors[-1][1]
        assert not (out / "findings.json").exists()
    finally:
        journal.write_bytes(before)  # the fixture proves the window wrote nothing: only this test did


def test_an_export_inside_the_opened_folder_is_refused(qtbot, opened):
    window, prompter, root, _out = opened
    prompter.save_path = str(root / "alice" / "rows.csv")
    window.row_actions.export_rows_actions[0].trigger()
    assert prompter.errors and "inside the opened folder" in prompter.errors[-1][1]
    assert not window.context.exporter.busy
    # the controller refuses it too, whoever asks
    with qtbot.waitSignal(window.context.exporter.failed) as blocker:
        window.context.exporter.export_rows(window.row_actions.shown_rows(), "csv", root / "x.csv")
    assert "inside the opened folder" in blocker.args[0]


def test_a_cancelled_save_dialog_exports_nothing(qtbot, opened):
    window, prompter, _root, out = opened
    prompter.save_path = None
    with qtbot.assertNotEmitted(window.context.exporter.started):
        window.row_actions.export_rows_actions[0].trigger()
    assert list(out.iterdir()) == []


def test_a_long_export_shows_progress_and_cancel_writes_nothing(qtbot, opened, monkeypatch):
    window, prompter, _root, out = opened
    gate = threading.Event()

    def slow_rows(fmt, rows, token, progress):
        progress(1, len(rows.refs))
        gate.wait(WAIT_MS / 1000)
        token.check()
        return b"never written"

    monkeypatch.setattr(export_controller.export, "row_bytes", slow_rows)
    prompter.save_path = str(out / "rows.csv")
    indicator = window.row_actions.indicator
    window.row_actions.export_rows_actions[0].trigger()
    qtbot.waitUntil(lambda: not indicator.isHidden() and indicator.bar.value() == 1)
    assert indicator.bar.maximum() == 32 and "Exporting 32 rows" in indicator.label.text()
    with qtbot.waitSignal(window.context.exporter.cancelled, timeout=WAIT_MS):
        indicator.cancel_button.click()
        gate.set()
    assert indicator.isHidden() and "nothing was copied or written" in window.statusBar().currentMessage()
    assert list(out.iterdir()) == []


def test_a_failed_write_says_so_and_leaves_nothing(qtbot, opened):
    window, prompter, _root, out = opened
    prompter.save_path = str(out / "missing-folder" / "rows.csv")
    with qtbot.waitSignal(window.context.exporter.failed, timeout=WAIT_MS):
        window.row_actions.export_rows_actions[0].trigger()
    assert prompter.errors and "Nothing was written" in prompter.errors[-1][1]
    assert list(out.iterdir()) == []
