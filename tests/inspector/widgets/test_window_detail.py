"""The detail tabs: the touched entry selected in the Views tab, provenance, the replay preview,
and redaction of everything rendered."""

from __future__ import annotations

import pytest

from inspector.models.timeline_model import COL_SUMMARY
from tests.inspector.models.dump import dump
from tests.inspector.widgets.folders_for_gui import SECRET, two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def loaded(qtbot, inspector_window, tmp_path):  # noqa: F811  (a fixture)
    root = two_characters(tmp_path / "memory")
    open_and_wait(qtbot, inspector_window, root)
    return inspector_window


def _select_event(window, index):
    model = window.session.timeline_model
    window.timeline.setCurrentIndex(model.index(model.position_of(index), 0))


def test_selecting_an_event_selects_its_entry_in_the_views_tab(loaded):
    window = loaded
    views = window.detail.views
    _select_event(window, 5)  # reflection.evidence_updated of ref_…1 (5 % 4)
    assert views.current_file() == "reflections.json"
    assert views.selected_path() == (1,)
    assert views.tree.currentIndex().data() == "[1] ref_0000000000000001"
    # provenance: every event touching ref_…1, in journal order, including the pending one
    assert [r[0] for r in dump(views.provenance_model)] == ["1", "5", "9", "13", "17", "21", "25", "29", "30"]
    assert "ref_0000000000000001" in views.provenance_title.text()


def test_an_archived_entry_is_found_in_its_named_shard(loaded):
    window = loaded
    window.characters.select_name("bob")
    tl = window.session.timeline()
    archive = next(i for i, t in enumerate(tl.events.types()) if t == "persona.fact_added")
    _select_event(window, archive)
    views = window.detail.views
    assert views.current_file().startswith("persona_archive/")
    assert views.selected_path() == (0,)
    assert views.tree.currentIndex().data() == "[0] prom_ref_7"


def test_selecting_a_view_entry_lists_provenance_and_activating_selects_in_the_timeline(loaded):
    window = loaded
    views = window.detail.views
    views.files.setCurrentText("reflections.json")
    assert views.select_path((3, "reinforcement"))
    assert [r[0] for r in dump(views.provenance_model)] == ["3", "7", "11", "15", "19", "23", "27"]
    index = views.provenance_model.index(2, 0)
    views.provenance.activated.emit(index)
    assert window.selected_ref() == 11


def test_search_in_a_view_finds_keys_and_values(loaded):
    views = loaded.detail.views
    views.files.setCurrentText("persona.json")
    views.search.setText("alice")
    views.find_next()
    assert views.selected_path() == ("master", "facts", 0, "text")
    assert views.hits_label.text() == "1 of 1"


def test_a_pending_event_shows_what_replaying_it_would_change(qtbot, loaded):
    window = loaded
    window.detail.setCurrentWidget(window.detail.views)
    _select_event(window, 30)  # the pending evidence update of ref_…1
    views = window.detail.views
    qtbot.waitUntil(lambda: "Replaying this event" in views.preview_title.text(), timeout=WAIT_MS)
    diff = views.preview_model.value()
    key = "reflections.json · ref_0000000000000001 (changed)"
    assert diff[key]["reinforcement"] == {"before": 15.0, "after": 9.5}
    assert diff["sentinel"]["after"] == window.session.timeline().events.event_id(30)
    _select_event(window, 31)  # blocked: replay stops there
    qtbot.waitUntil(lambda: "Replay cannot apply this event" in views.preview_title.text(), timeout=WAIT_MS)
    assert "No replay handler" in views.preview_title.text()


def test_redaction_hides_text_everywhere_it_is_rendered(qtbot, loaded):
    window = loaded
    window.characters.select_name("bob")
    tl = window.session.timeline()
    archive = next(i for i, t in enumerate(tl.events.types()) if t == "persona.fact_added")
    _select_event(window, archive)
    model = window.session.timeline_model
    event = window.detail.event_detail
    assert SECRET in model.index(archive, COL_SUMMARY).data()
    assert SECRET in repr(dump(event.tree_model)) and SECRET in event.raw.toPlainText()

    window.window_actions.redact_action.trigger()
    assert window.window_actions.redact_action.isChecked() and window.session.redact
    assert SECRET not in model.index(archive, COL_SUMMARY).data()
    assert "‹text · 28 chars · " in model.index(archive, COL_SUMMARY).data()
    rendered = repr(dump(event.tree_model))
    assert SECRET not in rendered and "‹text · 28 chars" in rendered and "prom_ref_7" in rendered
    assert SECRET not in event.raw.toPlainText()
    views = window.detail.views
    assert SECRET not in repr(dump(views.tree_model)) and "prom_ref_7" in repr(dump(views.tree_model))
    views.search.setText("oolong")  # hidden text cannot be found either
    assert views.hits_label.text() == "0 matches"
    event.copy_payload.click()
    from PySide6.QtGui import QGuiApplication

    assert SECRET not in QGuiApplication.clipboard().text()
    window.window_actions.redact_action.trigger()
    assert SECRET in model.index(archive, COL_SUMMARY).data()


def test_damaged_line_detail(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    with open(root / "alice" / "events.ndjson", "ab") as fh:
        fh.write(b'{"event_id": "torn-and-')
    window = make_inspector_window()
    open_and_wait(qtbot, window, root)
    model = window.session.timeline_model
    last = model.rowCount() - 1
    assert model.index(last, 2).data() == "⚠ torn last line"
    window.timeline.setCurrentIndex(model.index(last, 0))
    event = window.detail.event_detail
    assert "Damaged line" in event.header.text() and "torn" in event.header.text()
    assert event.raw.toPlainText() == '{"event_id": "torn-and-'
    legend = window.legend.chips["damaged"]
    assert legend.text() == "damaged line"


def test_activating_a_file_finding_shows_the_file(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    (root / "bob" / "reflections.json").write_text("[{broken")
    window = make_inspector_window()
    open_and_wait(qtbot, window, root)
    window.characters.select_name("bob")
    findings = window.session.findings_model
    row = next(r for r in range(findings.rowCount()) if findings.index(r, 1).data() == "view.corrupt")
    window.detail.findings.table.activated.emit(findings.index(row, 0))
    views = window.detail.views
    assert window.detail.currentWidget() is views
    assert views.current_file() == "reflections.json"
    assert "not valid JSON" in views.error.text()


def test_a_journal_level_finding_selects_a_row_never_parses_the_journal_as_json(qtbot, inspector_window, tmp_path):  # noqa: F811
    from journal import fixtures as folders
    from journal.diagnosis import Finding

    built = folders.torn_tail(tmp_path)
    open_and_wait(qtbot, inspector_window, built.path)
    window = inspector_window
    window.navigation.activate_finding(Finding("compaction.due", "info", "due", file="events.ndjson"))
    assert window.detail.currentWidget() is window.detail.event_detail and window.timeline.currentIndex().row() == 0
    window.navigation.activate_finding(Finding("server.next_append_glued", "warning", "torn", file="events.ndjson"))
    assert window.timeline.currentIndex().row() == window.session.timeline_model.rowCount() - 1
    assert "not valid JSON" not in window.detail.views.error.text()
    window.navigation.activate_finding(Finding("outbox.pending", "info", "pending", file="outbox.ndjson"))
    assert window.detail.currentWidget() is window.detail.outbox


def _shown(label) -> str:
    """What a label shows, as Qt decides it: its text parsed as HTML when it is rich text."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import Qt as GuiQt
    from PySide6.QtGui import QTextDocument

    fmt, text = label.textFormat(), label.text()
    rich = fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text))
    if not rich:
        return text
    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def test_a_malformed_line_and_odd_names_are_shown_as_text_not_entities_or_markup(
    qtbot, make_inspector_window, tmp_path  # noqa: F811
):
    """Issue 27 item 6: the Event tab showed ``not valid JSON: &#x27;{&quot;event_id&quot;…`` for a
    malformed line, and an event type with markup in it was rendered as markup."""
    import json

    root = two_characters(tmp_path / "memory")
    journal = root / "alice" / "events.ndjson"
    odd = {"event_id": "e-<b>x</b>", "type": "<i>odd</i> & 'type'", "ts": "2026-05-01T09:00:00Z", "payload": {}}
    with open(journal, "ab") as fh:
        fh.write(b"{\"event_id\": 'quoted' \"broken\n")
        fh.write(json.dumps(odd).encode() + b"\n")
    window = make_inspector_window()
    open_and_wait(qtbot, window, root)
    model = window.session.timeline_model
    event = window.detail.event_detail
    damaged = next(r for r in range(model.rowCount()) if model.index(r, 2).data().startswith("⚠"))
    window.timeline.setCurrentIndex(model.index(damaged, 0))
    shown = [_shown(label) for label in (event.header, event.reason) if label.isVisibleTo(window)]
    assert len(shown) == 2 and "Damaged line" in shown[0]
    assert not any("&#" in s or "&quot;" in s or "&amp;" in s for s in shown), shown
    assert "'{\"event_id\"" in shown[1]  # the line's own quotes, as typed
    window.timeline.setCurrentIndex(model.index(model.rowCount() - 1, 0))  # the odd event, last
    header = _shown(event.header)
    assert odd["type"] in header and odd["event_id"] in header
