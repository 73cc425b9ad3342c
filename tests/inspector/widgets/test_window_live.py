"""Live: appends from a writer thread become inserted rows (never a reset), follow mode, compaction,
the polling fallback, and a whole session that writes nothing into the folder."""

from __future__ import annotations

import json
import threading

import pytest

from inspector.core.timeline import LOADING
from inspector.models.timeline_model import STATE_ROLE
from journal import EventLog
from tests.inspector.gui_fixtures import append_applied
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


def _write_in_thread(root, *, which=2, value=42.0, character="alice"):
    """A live writer in its own thread (record_and_save: append, view, sentinel), joined here."""
    thread = threading.Thread(target=append_applied, args=(EventLog(root), character, which, value))
    thread.start()
    thread.join(10)
    assert not thread.is_alive()


@pytest.fixture
def shown(qtbot, inspector_window, tmp_path):  # noqa: F811  (a fixture)
    root = two_characters(tmp_path / "memory", applied=80)
    inspector_window.show()
    qtbot.waitExposed(inspector_window)
    open_and_wait(qtbot, inspector_window, root)
    return inspector_window, root


def _every_model(window):
    s, d = window.session, window.detail
    return [s.timeline_model, s.characters_model, s.findings_model, s.outbox_model,
            d.views.tree_model, d.views.provenance_model, d.views.preview_model, d.event_detail.tree_model]


def test_live_append_is_an_inserted_row(qtbot, qtmodeltester, shown):
    window, root = shown
    model = window.session.timeline_model
    window.timeline.setCurrentIndex(model.index(5, 0))  # fills the detail models too
    for m in _every_model(window):
        qtmodeltester.check(m)
    assert window.session.watch_status.mode == "watching"
    before = model.rowCount()
    window.timeline.selectRow(10)
    with qtbot.assertNotEmitted(model.modelReset), qtbot.waitSignal(model.rowsInserted, timeout=WAIT_MS):
        _write_in_thread(root)
    qtbot.waitUntil(lambda: model.rowCount() == before + 1, timeout=WAIT_MS)
    for m in _every_model(window):
        qtmodeltester.check(m)
    new = model.row_at(before)
    assert new.type == "reflection.evidence_updated" and new.entry == "ref_0000000000000002"
    assert model.index(before, 4).data() == "rein 42.00 · (user_fact)"
    # The writer refused to advance the sentinel over the pending tail: the new event is pending too.
    assert model.row_at(before).state == "pending"
    assert window.timeline.currentIndex().row() == 10  # the selection stays where it was
    assert window.status_refresh.text().startswith("Last refresh: ")
    assert "events" in window.status_size.text()


def test_follow_pauses_on_scroll_up_and_one_action_resumes(qtbot, shown):
    window, root = shown
    view, model = window.timeline, window.session.timeline_model
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    assert view.following and window.window_actions.follow_action.isChecked()

    bar.setValue(0)  # the user scrolls up
    assert not view.following and not window.window_actions.follow_action.isChecked()
    rows = model.rowCount()
    _write_in_thread(root, value=1.0)
    qtbot.waitUntil(lambda: model.rowCount() == rows + 1, timeout=WAIT_MS)
    assert bar.value() == 0  # paused: the view stays where the user put it

    window.window_actions.follow_action.trigger()  # one action resumes
    assert view.following and bar.value() == bar.maximum()
    _write_in_thread(root, value=2.0)
    qtbot.waitUntil(lambda: model.rowCount() == rows + 2, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    last = view.rowViewportPosition(model.rowCount() - 1)
    assert 0 <= last < view.viewport().height()  # the newest row is on screen


def test_sentinel_and_view_changes_recompute_states(qtbot, shown):
    window, root = shown
    session, model = window.session, window.session.timeline_model
    tl = session.timeline()
    blocked = tl.diagnosis.blocked.index
    assert model.index(model.position_of(blocked), 5).data() == "blocked · no_handler"
    # Someone replays the tail by hand: the sentinel moves to the end (an atomic replace).
    from journal.views import write_sentinel

    write_sentinel(root / "alice", tl.events.event_id(-1))
    # At once the boundary moves (pending → applied); the re-diagnosis then finds the orphan.
    qtbot.waitUntil(lambda: model.index(model.position_of(blocked), 5).data() == "orphaned · no_handler",
                    timeout=WAIT_MS)
    assert tl.sentinel.index == len(tl.events) - 1
    assert "0 pending" in window.sentinel_bar.label.text()


def test_compaction_reloads_everything_with_a_notice(qtbot, shown):
    window, root = shown
    window.characters.select_name("bob")  # healthy: compaction refuses to drop a pending tail
    notices = []
    window.session.notice.connect(notices.append)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        EventLog(root).compact("bob", [("reflection.evidence_updated", {"reflection_id": "ref_0000000000000001"})])
    assert any("compaction" in n for n in notices)
    assert window.session.current == "bob"
    assert window.session.timeline_model.rowCount() == 1
    assert window.sentinel_bar.warning  # the compaction reset the sentinel to null


def test_polling_fallback_keeps_live_updates_and_says_so(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    def broken_observer():
        raise OSError(28, "inotify watch limit reached")

    window = make_inspector_window(observer_factory=broken_observer)
    root = two_characters(tmp_path / "memory")
    open_and_wait(qtbot, window, root)
    assert "polling" in window.status_watch.text()
    assert "inotify watch limit reached" in window.status_watch.toolTip()
    model = window.session.timeline_model
    rows = model.rowCount()
    _write_in_thread(root)
    qtbot.waitUntil(lambda: model.rowCount() == rows + 1, timeout=WAIT_MS)


def test_a_whole_session_writes_nothing_in_the_folder(qtbot, shown):
    window, root = shown
    before = tree_hashes(root)
    session = window.session
    window.filter_bar.states.set_selected({"pending", "blocked"})
    window.filter_bar.clear()
    window.timeline.selectRow(3)
    window.window_actions.next_problem_action.trigger()
    window.detail.setCurrentWidget(window.detail.views)
    window.timeline.selectRow(session.timeline_model.rowCount() - 2)  # pending: a dry run in a scratch copy
    qtbot.waitUntil(lambda: "Replaying" in window.detail.views.preview_title.text(), timeout=WAIT_MS)
    window.window_actions.jump_action.trigger()
    window.timeline.verticalScrollBar().setValue(0)
    window.window_actions.follow_action.trigger()
    window.set_redact(True)
    window.characters.select_name("bob")
    window.detail.views.files.setCurrentIndex(window.detail.views.files.count() - 1)
    with qtbot.waitSignal(session.loaded, timeout=WAIT_MS):
        window.window_actions.reload_action.trigger()
    qtbot.waitUntil(lambda: not session.busy, timeout=WAIT_MS)
    window.close()
    assert tree_hashes(root) == before


def test_preview_rows_show_while_the_diagnosis_runs(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    gate = threading.Event()
    from journal.diagnosis import diagnose_path

    def slow_diagnose(path, progress=None):
        gate.wait(WAIT_MS / 1000)
        return diagnose_path(path, progress=progress)

    window = make_inspector_window(diagnose=slow_diagnose)
    root = two_characters(tmp_path / "memory")
    model = window.session.timeline_model
    with qtbot.waitSignal(model.modelReset, timeout=WAIT_MS):
        window.session.open_path(root)
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=WAIT_MS)
    assert model.index(0, 5).data() == "…" and model.index(0, 5).data(STATE_ROLE) == LOADING
    assert window.progress.isVisibleTo(window) and window.cancel_button.isVisibleTo(window)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        gate.set()
    assert model.index(0, 5).data() == "applied"
    assert not window.progress.isVisibleTo(window)


def test_a_replaced_view_is_reloaded_in_the_views_tab(qtbot, shown):
    window, root = shown
    views = window.detail.views
    views.files.setCurrentText("reflections.json")
    assert views.tree_model.value()[0]["reinforcement"] != 123.0
    from journal.fs import atomic_write_json

    data = json.loads((root / "alice" / "reflections.json").read_text())
    data[0]["reinforcement"] = 123.0
    atomic_write_json(root / "alice" / "reflections.json", data)  # temp file + os.replace, as writers do
    qtbot.waitUntil(lambda: views.tree_model.value()[0]["reinforcement"] == 123.0, timeout=WAIT_MS)


def test_a_missing_sentinel_is_a_banner_not_a_marker(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    (root / "alice" / "events_applied.json").unlink()
    open_and_wait(qtbot, inspector_window, root)
    bar = inspector_window.sentinel_bar
    assert bar.warning and "missing" in bar.label.text() and "first event" in bar.label.text()
    assert "0 applied · 31 pending · 1 blocked" in bar.label.text()  # check's counts, each state apart
    assert inspector_window.session.timeline_model.marker_position() is None
    assert inspector_window.timeline.sentinel_marker_rect() is None
    assert not bar.jump.isEnabled()
