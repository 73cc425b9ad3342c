"""The states the window shows truthfully (issue 16 items 8, 9, 10, 12): a folder holding no
character, a load under way, a torn tail appearing live, an entry lost from its view."""

from __future__ import annotations

import os
import threading

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from inspector.core.text import size_text
from inspector.core.timeline import DAMAGED, LOADING, UNCHECKED
from inspector.models.characters_model import LOADING_TEXT
from inspector.models.timeline_model import COL_TYPE, STATE_ROLE
from inspector.widgets.characters import chip_items, row_health
from inspector.widgets.main_window import APP_TITLE, NOTHING_OPEN
from journal import EventLog, read_journal
from journal.diagnosis import EventInfo, UnreadableInputError, diagnose_path
from journal.events import encode_event, new_event
from tests.inspector.gui_fixtures import write_character
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


def _docs(tmp_path):
    """A folder that is no memory root: notes and a sub-folder, no memory file anywhere."""
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "readme.txt").write_text("not memory", encoding="utf-8")
    (docs / "notes" / "todo.md").write_text("- nothing", encoding="utf-8")
    return docs


def _labels(window) -> list[str]:
    return [w.text() for w in window.findChildren(QLabel) if w.isVisibleTo(window)]


# -- item 8: a folder holding no character -------------------------------------------------------------


def test_a_folder_without_characters_says_so_and_nothing_of_the_previous_one_stays(
    qtbot, inspector_window, tmp_path  # noqa: F811
):
    window, session = inspector_window, inspector_window.session
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    window.timeline.selectRow(3)
    window.detail.views.files.setCurrentText("reflections.json")
    assert session.findings_model.rowCount() > 0 and window.detail.views.files.count() > 0
    docs = _docs(tmp_path)
    before = tree_hashes(docs)
    with pytest.raises(UnreadableInputError) as raised:
        diagnose_path(str(docs))
    said = str(raised.value)  # the one line `check` prints for it (its one home: the diagnosis)
    assert "no character folder found here" in said and "events.ndjson" in said

    open_and_wait(qtbot, window, docs)

    assert window.prompter.errors == []  # not a failure: a state of the folder
    assert window.server_panel.plain_text().endswith(said)
    assert window.timeline.empty_text == said
    assert str(docs) in window.windowTitle()
    assert window.status_watch.text() == "not watching (no character folder here)"
    assert session.watch_status.mode == "off"
    # Nothing of the previous folder passes for this one's.
    assert session.characters_model.rowCount() == 0
    assert session.timeline_model.rowCount() == 0 and session.timeline_model.timeline is None
    assert session.findings_model.rowCount() == 0 and session.outbox_model.rowCount() == 0
    assert window.detail.tabText(2) == "Findings" and window.detail.tabText(3) == "Outbox"
    assert window.detail.views.files.count() == 0 and window.detail.views.tree_model.value() is None
    assert window.detail.event_detail.tree_model.value() is None
    assert window.status_sentinel.text() == "Sentinel: –" and window.status_size.text() == "Journal: –"
    assert "no character folder here" in window.sentinel_bar.label.text()
    assert window.statusBar().currentMessage() == ""  # not "Loaded 2 characters", said of the previous one
    assert not any("alice" in t or "bob" in t or "no folder open" in t for t in _labels(window))
    assert str(docs) not in window.recent.load()  # not a memory folder to come back to
    assert tree_hashes(docs) == before

    # A folder with characters after it shows them, and the centre's hint is the usual one again.
    open_and_wait(qtbot, window, tmp_path / "memory")
    assert session.characters_model.rowCount() == 2 and window.timeline.empty_text == NOTHING_OPEN


def test_an_empty_folder_beside_a_character_stays_a_character(qtbot, inspector_window, tmp_path):  # noqa: F811
    write_character(tmp_path / "memory", "alice")
    (tmp_path / "memory" / "new-character").mkdir()  # the server creates character folders lazily
    open_and_wait(qtbot, inspector_window, tmp_path / "memory")
    assert [r.name for r in inspector_window.session.characters_model.rows()] == ["alice", "new-character"]
    assert inspector_window.prompter.errors == []


# -- item 9: while a journal loads ------------------------------------------------------------------------


@pytest.fixture
def slow_window(make_inspector_window):  # noqa: F811
    """A window whose diagnosis waits for ``gate``: the preview is shown, the analysis runs."""
    gate = threading.Event()

    def slow_diagnose(path, progress=None):
        gate.wait(WAIT_MS / 1000)
        return diagnose_path(path, progress=progress)

    window = make_inspector_window(diagnose=slow_diagnose)
    yield window, gate
    gate.set()


def test_while_loading_everything_says_loading_and_nothing_healthy(qtbot, slow_window, tmp_path):
    window, gate = slow_window
    root = two_characters(tmp_path / "memory", applied=400)
    window.show()
    qtbot.waitExposed(window)
    session, model = window.session, window.session.timeline_model
    session.open_path(root)
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=WAIT_MS)
    # The smallest the window's content asks for while it loads (a window no longer grows by
    # itself when a label's text grows, issue 27 item 2: the size is taken with the loading texts).
    QApplication.processEvents()  # the layout takes the loading texts in
    window.resize(window.minimumSizeHint())
    assert model.index(0, 5).data(STATE_ROLE) == LOADING

    [row] = session.characters_model.rows()
    assert chip_items(row) == [(LOADING_TEXT, "")] and row_health(row) == LOADING
    assert row.badge_text() == LOADING_TEXT
    assert "Loading" in window.server_panel.plain_text()
    assert "loading" in window.sentinel_bar.label.text() and "no folder open" not in window.sentinel_bar.label.text()
    assert window.status_sentinel.text() == "Sentinel: loading…"
    assert window.status_size.text() == "Journal: loading…"
    assert window.status_watch.text() == "not watching (loading)"
    assert window.windowTitle() == f"{APP_TITLE} — {root} — loading…"
    count = window.filter_bar.count
    assert count.text() == f"{model.rowCount():,} rows · loading…"
    texts = _labels(window)
    assert not any("healthy" in t.lower() or "no folder open" in t.lower() for t in texts), texts
    # Labels are not clipped: each is at least as wide as its text.
    qtbot.waitUntil(lambda: count.width() >= count.fontMetrics().horizontalAdvance(count.text()))
    # The status bar's fields are whole, or cut with "…" and whole on hover (issue 27 item 4).
    for label in (window.status_sentinel, window.status_watch, window.status_size):
        whole = label.width() >= label.fontMetrics().horizontalAdvance(label.text())
        assert whole or (label.shown_text().endswith("…") and label.text() in label.toolTip()), label.text()

    with qtbot.waitSignal(session.loaded, timeout=WAIT_MS):
        gate.set()
    assert not window.windowTitle().endswith("loading…")
    assert [r.loading for r in session.characters_model.rows()] == [False, False]
    assert window.status_sentinel.text().startswith("Sentinel: #")
    assert window.status_size.text().startswith("Journal: ") and "events" in window.status_size.text()
    assert window.status_watch.text() == "live: watching"
    assert count.text().endswith(" rows") and "loading" not in window.sentinel_bar.label.text()


def test_a_cancelled_first_load_leaves_nothing_saying_loading(qtbot, slow_window, tmp_path):
    window, gate = slow_window
    session, model = window.session, window.session.timeline_model
    session.open_path(two_characters(tmp_path / "memory"))
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=WAIT_MS)
    with qtbot.waitSignal(session.load_cancelled, timeout=WAIT_MS):
        window.cancel_button.click()
    gate.set()
    qtbot.waitUntil(lambda: not session.busy, timeout=WAIT_MS)
    assert window.windowTitle() == APP_TITLE
    assert window.server_panel.plain_text().endswith(NOTHING_OPEN)
    assert window.status_sentinel.text() == "Sentinel: –" and window.status_size.text() == "Journal: –"
    assert window.status_watch.text() == "not watching"
    assert not any("loading" in t.lower() for t in _labels(window) if t != window.progress_label.text())


# -- item 10: a torn tail appearing live ---------------------------------------------------------------


def _record() -> bytes:
    return encode_event(new_event("reflection.evidence_updated", {"reflection_id": "ref_0000000000000003"}))


def _append(path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


@pytest.fixture
def live_alice(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    open_and_wait(qtbot, inspector_window, root)
    assert inspector_window.session.current == "alice"
    return inspector_window, root / "alice" / "events.ndjson"


def _last_type(model) -> str:
    return model.index(model.rowCount() - 1, COL_TYPE).data()


def test_half_a_line_shows_as_a_torn_row_and_its_rest_makes_it_the_event_in_place(
    qtbot, qtmodeltester, live_alice
):
    window, journal = live_alice
    model = window.session.timeline_model
    rows = model.rowCount()
    record = _record()
    with qtbot.waitSignal(model.rowsInserted, timeout=WAIT_MS):
        _append(journal, record[:35])  # a writer half-way through its line
    qtbot.waitUntil(lambda: model.rowCount() == rows + 1, timeout=WAIT_MS)
    last = model.index(rows, 0)
    # what the reader makes of it, and no state until the re-diagnosis (it runs a quiet moment later)
    assert last.data(STATE_ROLE) == UNCHECKED and _last_type(model) == "⚠ torn last line"
    assert model.row_at(rows).kind == "torn_tail"
    qtbot.waitUntil(lambda: window.status_size.text().startswith(f"Journal: {size_text(os.path.getsize(journal))} ·"))
    qtmodeltester.check(model)

    window.timeline.selectRow(rows)
    assert "Damaged line" in window.detail.event_detail.header.text()
    with (
        qtbot.assertNotEmitted(model.modelReset),
        qtbot.assertNotEmitted(model.rowsRemoved),
        qtbot.assertNotEmitted(model.rowsInserted),
        qtbot.waitSignal(model.dataChanged, timeout=WAIT_MS),
    ):
        _append(journal, record[35:])
    qtbot.waitUntil(lambda: isinstance(model.row_at(rows), EventInfo), timeout=WAIT_MS)
    event = model.row_at(rows)
    assert model.rowCount() == rows + 1 and event.event_id == read_journal(journal).events[-1].event_id
    assert window.timeline.currentIndex().row() == rows  # the selection stayed on the row
    assert f"#{event.index}" in window.detail.event_detail.header.text()  # and shows what it is now
    qtbot.waitUntil(lambda: window.status_size.text().startswith(f"Journal: {size_text(os.path.getsize(journal))} ·"))
    qtmodeltester.check(model)
    # the re-diagnosis says what it is: the window shows that, and counts it as check does
    qtbot.waitUntil(lambda: model.index(rows, 0).data(STATE_ROLE) == "pending", timeout=WAIT_MS)
    assert window.session.timeline().counts["pending"] == 2 and DAMAGED not in window.sentinel_bar.label.text()


def test_a_record_glued_onto_the_torn_row_becomes_a_damaged_row_and_the_recovered_event(qtbot, live_alice):
    window, journal = live_alice
    model = window.session.timeline_model
    rows = model.rowCount()
    _append(journal, _record()[:41])
    qtbot.waitUntil(lambda: model.rowCount() == rows + 1, timeout=WAIT_MS)
    with qtbot.assertNotEmitted(model.modelReset):
        _append(journal, _record())  # the next append lands on the fragment
        qtbot.waitUntil(lambda: model.rowCount() == rows + 2, timeout=WAIT_MS)
    glued, event = model.row_at(rows), model.row_at(rows + 1)
    read = read_journal(journal)
    assert glued == read.defects[-1] and glued.kind == "glued"  # exactly as the reader reports it
    assert isinstance(event, EventInfo) and event.event_id == read.events[-1].event_id == glued.recovered_event_id
    assert (event.line, event.offset) == (read.events[-1].line, read.events[-1].offset)


def test_the_writers_next_append_isolates_the_torn_row_as_a_malformed_line(qtbot, live_alice):
    window, journal = live_alice
    model = window.session.timeline_model
    rows = model.rowCount()
    _append(journal, b'{"event_id": "torn')
    qtbot.waitUntil(lambda: model.rowCount() == rows + 1, timeout=WAIT_MS)
    root = journal.parent.parent
    EventLog(root).append("alice", "reflection.evidence_updated", {"reflection_id": "ref_0000000000000001"})
    qtbot.waitUntil(lambda: model.rowCount() == rows + 2, timeout=WAIT_MS)
    assert model.row_at(rows).kind == read_journal(journal).defects[-1].kind
    assert isinstance(model.row_at(rows + 1), EventInfo)


# -- item 12: an entry lost from its view ---------------------------------------------------------------


def test_an_event_whose_entry_is_lost_clears_the_views_selection_and_says_why(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = tmp_path / "memory"
    write_character(root, "alice", applied=2)  # events touching ref_…0 and ref_…1, both in reflections.json
    EventLog(root).append("alice", "reflection.evidence_updated", {"reflection_id": "ref_00000000000000ff"})
    open_and_wait(qtbot, inspector_window, root)
    window, views = inspector_window, inspector_window.detail.views
    window.detail.setCurrentWidget(views)
    window.timeline.selectRow(0)
    assert views.current_file() == "reflections.json"
    assert views.selected_path() is not None and views.tree.selectionModel().hasSelection()
    assert views.error.isHidden()

    window.timeline.selectRow(2)  # its reflection is in no view
    assert views.current_file() == "reflections.json"
    assert views.selected_path() is None and not views.tree.selectionModel().hasSelection()
    assert not views.error.isHidden() and "ref_00000000000000ff" in views.error.text()

    window.timeline.selectRow(1)  # an entry that is there is selected again
    assert views.selected_path() is not None and views.error.isHidden()
