"""Guarded replay and restore from the window (pytest-qt): dialogs behind ``ask``, worker, progress,
cancel, result, restore. Dialog ``ask`` classmethods are patched; no modal ``exec()`` is driven."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QMenu, QPushButton

from inspector.controllers import replay as rc
from inspector.controllers.replay import install_replay_actions
from inspector.core import replay as gr
from inspector.core.prompter import ASK_APPLY, ASK_EXTRACT, ASK_RESTORE, HeadlessPrompter
from inspector.core.replay import Scope
from inspector.widgets import replay_dialog as rd
from inspector.widgets.replay_dialog import ReplayChoice, ReplayDialog
from inspector.widgets.restore_dialog import RestoreDialog
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.fixtures import server_lock_held, zip_export
from journal.handlers import default_registry
from journal.log import EventLog
from journal.reader import read_journal
from journal.shards import REFLECTION_ARCHIVE, load_shard
from journal.views import read_sentinel
from tests.inspector.replay_cases import CHARACTER, SHARD, build_case, hash_tree, unapplied
from tests.journal._repair_kit import glue_onto_torn_utf8

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("replay_env")]


@pytest.fixture
def window(qtbot):
    w = QMainWindow()
    qtbot.addWidget(w)
    return w


class WindowPrompter(HeadlessPrompter):
    """The window's prompter with its yes/no questions answered headlessly: the plan review and
    the backup chooser still go through the dialogs' classmethods (which the tests patch)."""

    def review(self, review):
        return ReplayDialog.review(None, review)

    def choose_backup(self, backups, start):
        return RestoreDialog.ask(None, list(backups), start)

    def show_result(self, run):
        ReplayDialog.show_result(None, run.plan, run.outcome)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.levels = []  # (title, level) of each notice: the icon a window shows

    def notify(self, text, *, title="", level="info"):
        super().notify(text, title=title, level=level)
        self.levels.append((title, level))


@pytest.fixture
def prompter():
    return WindowPrompter(True)


@pytest.fixture
def make_controller(window, root, backups, prompter):
    made = []

    def make(target=None, **kw):
        c = install_replay_actions(
            window,
            None,
            lambda: target or (str(root), CHARACTER),
            prompter=prompter,
            backup_root=backups,
            **kw,
        )
        made.append(c)
        return c

    yield make
    for c in made:
        c.shutdown()


class DialogSpy:
    """Stands in for ``ReplayDialog.ask`` / ``show_result``: records and answers with plain values."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.asked = []
        self.results = []

    def ask(self, parent, plan, preflight, pending, notice=""):
        self.asked.append((plan, preflight, pending, notice))
        answer = self.answers.pop(0)
        return answer(plan) if callable(answer) else answer

    def show_result(self, parent, plan, outcome):
        self.results.append((plan, outcome))


@pytest.fixture
def spy(monkeypatch):
    def install(*answers):
        s = DialogSpy(answers)
        monkeypatch.setattr(ReplayDialog, "ask", s.ask)
        monkeypatch.setattr(ReplayDialog, "show_result", s.show_result)
        return s

    return install


APPLY = ReplayChoice("apply", Scope())
CANCEL = ReplayChoice("cancel", Scope())


def _run(qtbot, controller, action=None, timeout=30_000):
    with qtbot.waitSignal(controller.finished, timeout=timeout) as blocker:
        (action or controller.replay_action).trigger()
    return blocker.args[0]


# -- the dialog itself -------------------------------------------------------------------------------------


def _plan(root, case="pending_tail", scope=None):
    cd = build_case(root, case)
    target = gr.target_of(root, CHARACTER)
    return gr.make_plan(target, scope), gr.preflight(target), unapplied(cd)


def test_dialog_shows_events_diff_and_returns_plain_choices(qtbot, root):
    plan, pf, pending = _plan(root)
    dialog = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(dialog)
    assert dialog.events_view.topLevelItemCount() == 4
    assert dialog.events_view.topLevelItem(3).text(1) == "reflection.state_changed"
    files = [dialog.diff_view.topLevelItem(i).text(0) for i in range(dialog.diff_view.topLevelItemCount())]
    assert files == ["reflections.json", "persona.json", f"{REFLECTION_ARCHIVE}/{SHARD}", SENTINEL_NAME]
    status = dialog.diff_view.topLevelItem(0).child(0)
    assert status.text(0) == "ref_00000000000000a1 (changed)"
    assert [(status.child(i).text(0), status.child(i).text(2)) for i in range(status.childCount())][-1] == (
        "status",
        '"confirmed"',
    )
    assert dialog.block_label.isHidden() and "a writer may be active" in dialog.notice_label.text()
    assert dialog.apply_button.isEnabled() and dialog.choice() == CANCEL

    # Every change of scope re-plans at once (issue 15): the dialog closes with the new scope.
    dialog.scope_until.setChecked(True)
    assert dialog.choice() == ReplayChoice("replan", Scope("until", pending[0].event_id))
    picked = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(picked)
    picked.until_combo.setCurrentIndex(1)  # the combo alone selects nothing until its radio is on
    assert picked.choice() == CANCEL
    picked.scope_until.setChecked(True)
    assert picked.choice() == ReplayChoice("replan", Scope("until", pending[1].event_id))
    repair = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(repair)
    repair.scope_repair.setChecked(True)
    assert repair.choice() == ReplayChoice("replan", Scope("repair"))

    again = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(again)
    again.apply_button.click()
    assert again.choice() == APPLY


def test_dialog_explains_a_blocked_event(qtbot, root):
    plan, pf, pending = _plan(root, "persona_drift")
    dialog = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(dialog)
    text = dialog.block_label.text()
    assert not dialog.block_label.isHidden()
    assert "reason: view_drift" in text and "What you can do" in text
    assert dialog.apply_button.isEnabled()  # one event before the block still applies


def test_dialog_with_nothing_to_apply_cannot_apply(qtbot, root):
    plan, pf, pending = _plan(root, "healthy")
    dialog = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(dialog)
    assert not dialog.apply_button.isEnabled()
    assert dialog.diff_view.topLevelItem(0).text(0) == "(no file changes)"


def test_result_is_shown_next_to_the_plan(qtbot, root, backups):
    build_case(root, "pending_tail")
    run = gr.run_guarded_replay(gr.ReplayRequest(root, CHARACTER, backup_root=backups), HeadlessPrompter(True))
    dialog = ReplayDialog(run.plan, outcome=run.outcome)
    qtbot.addWidget(dialog)
    assert dialog.events_view.topLevelItemCount() == 4
    assert not dialog._result_box.isHidden()
    assert "Result: applied" in dialog.result_view.toPlainText()
    assert dialog.apply_button.isHidden() and not dialog.scope_repair.isEnabled()


def test_restore_dialog_returns_the_chosen_backup(qtbot, root, backups):
    cd = build_case(root, "pending_tail")
    backup = gr.create_backup(cd, backups)
    listed = gr.list_backups(backups, CHARACTER)
    dialog = RestoreDialog(listed, backups)
    qtbot.addWidget(dialog)
    assert dialog.backups_view.count() == 1
    dialog.restore_button.click()
    assert dialog.chosen() == backup.path


def test_restore_dialog_offers_only_backups_that_can_be_restored(qtbot, root, backups, tmp_path):
    import shutil

    cd = build_case(root, "pending_tail")
    scratch = tmp_path / "sample-scratch" / "memory"  # the sample's scratch copy of an earlier run
    scratch.mkdir(parents=True)
    gone = gr.create_backup(build_case(scratch, "healthy"), backups)
    shutil.rmtree(tmp_path / "sample-scratch")
    stray = gr.create_backup(cd, backups, index_path=tmp_path / "another-index.json")
    listed = gr.list_backups(backups, CHARACTER)
    assert {b.path for b in listed if not b.restorable} == {gone.path, stray.path}
    dialog = RestoreDialog([b for b in listed if not b.restorable], backups)
    qtbot.addWidget(dialog)
    assert dialog.backups_view.count() == 2 and not dialog.restore_button.isEnabled()
    texts = {dialog.backups_view.item(i).text() for i in range(2)}
    assert any(t.endswith("not restorable: its folder is gone") for t in texts)
    assert any(t.endswith("not restorable: not in the index of backups") for t in texts)
    for i in range(2):
        item = dialog.backups_view.item(i)
        assert not item.flags() & Qt.ItemFlag.ItemIsEnabled and "Not restorable: " in item.toolTip()
    dialog.backups_view.setCurrentRow(0)
    dialog.restore_button.click()
    assert dialog.chosen() is None
    good = gr.create_backup(cd, backups)
    dialog = RestoreDialog(gr.list_backups(backups, CHARACTER), backups)
    qtbot.addWidget(dialog)
    current = dialog.backups_view.currentItem()
    assert current.data(Qt.ItemDataRole.UserRole) == str(good.path) and dialog.restore_button.isEnabled()
    assert current.text().endswith(f"→ {cd.resolve()}")
    dialog.restore_button.click()
    assert dialog.chosen() == good.path


def test_restore_of_a_backup_not_in_the_index_is_refused_in_the_window(
    qtbot, root, backups, make_controller, monkeypatch, prompter, tmp_path
):
    cd = build_case(root, "pending_tail")
    stray = gr.create_backup(cd, backups, index_path=tmp_path / "another-index.json")
    after = hash_tree(cd)
    monkeypatch.setattr(RestoreDialog, "ask", lambda parent, listed, start: stray.path)  # "Other folder…"
    c = make_controller()
    outcome = _run(qtbot, c, c.restore_action)
    assert outcome.status == "refused" and "not in the index of backups" in outcome.message
    assert outcome.outcome is None and prompter.levels[-1] == ("Restore backup", "warning")
    assert "pass --to DIR" in prompter.notes[-1] and prompter.asked == []
    assert hash_tree(cd) == after


# -- the controller: the window's flow ----------------------------------------------------------------------


def test_actions_are_installed_in_the_given_menu_or_a_new_one(qtbot, window, make_controller):
    menu = QMenu("Tools", window)
    c = install_replay_actions(window, menu, lambda: None, prompter=WindowPrompter(False))
    assert [a.text() for a in menu.actions()] == ["Replay…", "Restore backup…"]
    c2 = make_controller()
    (replay_menu,) = [a.menu() for a in window.menuBar().actions() if a.text() == "&Replay"]
    assert [a.text() for a in replay_menu.actions()] == ["Replay…", "Restore backup…"]
    assert c.replay_action is not c2.replay_action


def test_gui_flow_plan_apply_progress_result(qtbot, root, backups, make_controller, spy, prompter):
    cd = build_case(root, "pending_tail")
    s = spy(APPLY)
    c = make_controller()
    progress = []
    changed = []
    c.progress.connect(lambda d, t: progress.append((d, t)))
    c.folder_changed.connect(changed.append)
    outcome = _run(qtbot, c).outcome
    assert outcome.status == "applied"
    (plan, preflight, pending, notice) = s.asked[0]
    assert [e.event_id for e in plan.events] == [e.event_id for e in pending]
    assert preflight.ok and notice == ""
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert s.results == [(plan, outcome)]
    assert changed == [str(cd)]
    events = read_journal(cd / JOURNAL_NAME).events
    assert read_sentinel(cd).event_id == events[-1].event_id
    assert outcome.backup.path.is_relative_to(backups) and not c.busy
    assert c.progress_dialog is None and c.replay_action.isEnabled()


def test_gui_plan_leaves_every_file_byte_identical(qtbot, root, backups, make_controller, spy):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    s = spy(CANCEL)
    assert _run(qtbot, make_controller()).status == "declined"
    assert len(s.asked) == 1 and s.results == []
    assert hash_tree(cd) == before and not backups.exists()


def test_cancel_from_the_progress_dialog(qtbot, root, make_controller, spy):
    cd = build_case(root, "pending_tail")
    pending = unapplied(cd)
    armed, entered, gate = threading.Event(), threading.Event(), threading.Event()
    registry = default_registry()
    original = registry.get("reflection.evidence_updated")

    def gated(store, payload):
        if armed.is_set():
            entered.set()
            gate.wait(30)  # a barrier: released by the test once it has pressed Cancel
        return original(store, payload)

    registry.register("reflection.evidence_updated", gated)

    def arm_and_apply(plan):
        armed.set()  # the plan's dry run is done; gate the real apply only
        return APPLY

    s = spy(arm_and_apply)
    c = make_controller(registry=registry)
    progress = []
    c.progress.connect(lambda d, t: progress.append((d, t)))
    with qtbot.waitSignal(c.finished, timeout=30_000) as blocker:
        c.replay_action.trigger()
        qtbot.waitUntil(entered.is_set, timeout=30_000)  # the worker is inside the first event
        assert c.progress_dialog is not None and c.progress_dialog.isVisible()
        (button,) = c.progress_dialog.findChildren(QPushButton)
        assert button.text() == "Cancel"
        button.click()
        gate.set()
    outcome = blocker.args[0].outcome
    assert outcome.status == "cancelled"
    assert outcome.applied == [pending[0].event_id]
    assert read_sentinel(cd).event_id == pending[0].event_id
    assert progress == [(1, 4)]
    assert s.results[0][1] is outcome and "cancelled after 1 of 4" in outcome.message


def test_write_between_plan_and_apply_is_refused_and_replanned(qtbot, root, make_controller, spy):
    cd = build_case(root, "pending_tail")
    written = []

    def write_then_apply(plan):
        written.append(
            EventLog(root).append(CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a2"})
        )
        return APPLY

    s = spy(write_then_apply, APPLY)
    outcome = _run(qtbot, make_controller()).outcome
    assert len(s.asked) == 2
    assert s.asked[0][3] == "" and "new plan" in s.asked[1][3] and JOURNAL_NAME in s.asked[1][3]
    assert s.asked[1][0].events[-1].event_id == written[0].event_id
    assert outcome.status == "applied" and read_sentinel(cd).event_id == written[0].event_id


def test_scope_change_replans_then_repairs_orphans(qtbot, root, make_controller, spy):
    cd = build_case(root, "archive_lost")
    sentinel = (cd / SENTINEL_NAME).read_bytes()
    s = spy(ReplayChoice("replan", Scope("repair")), APPLY)
    outcome = _run(qtbot, make_controller()).outcome
    assert [a[0].scope.kind for a in s.asked] == ["tail", "repair"]
    assert outcome.status == "applied"
    assert [e["id"] for e in load_shard(cd / REFLECTION_ARCHIVE / SHARD)] == ["ref_00000000000000a3"]
    assert (cd / SENTINEL_NAME).read_bytes() == sentinel


def test_server_running_is_refused_without_an_override(qtbot, root, tmp_path, make_controller, spy, prompter):
    cd = build_case(root, "pending_tail")
    before = hash_tree(cd)
    s = spy()
    with server_lock_held(tmp_path / "runtime"):
        assert _run(qtbot, make_controller()).status == "refused"
    assert s.asked == [] and "refused: the memory server is running" in prompter.notes[-1]
    assert prompter.levels[-1] == ("Guarded replay", "warning")
    assert hash_tree(cd) == before


def test_zip_export_offers_extraction_and_opens_the_folder(qtbot, root, tmp_path, make_controller, spy, prompter):
    build_case(root, "pending_tail")
    z = zip_export(root, tmp_path / "export.zip")
    spy()
    c = make_controller(target=(str(z), CHARACTER))
    opened = []
    c.open_requested.connect(opened.append)
    assert _run(qtbot, c).extracted_to == tmp_path / "export-extracted"
    assert prompter.keys() == [ASK_EXTRACT]
    assert opened == [str(tmp_path / "export-extracted")]
    assert hash_tree(tmp_path / "export-extracted" / "memory") == hash_tree(root)


def test_declined_recent_write_warning_stops_before_planning(qtbot, root, make_controller, spy, monkeypatch):
    build_case(root, "pending_tail")
    s = spy()
    c = make_controller()
    c.prompter = WindowPrompter(False)
    assert _run(qtbot, c).status == "declined"
    assert s.asked == [] and c.prompter.keys() == ["recent_writes"]


def test_restore_from_the_window(qtbot, root, backups, make_controller, prompter, monkeypatch):
    cd = build_case(root, "pending_tail")
    original = hash_tree(cd)
    run = gr.run_guarded_replay(gr.ReplayRequest(root, CHARACTER, backup_root=backups), HeadlessPrompter(True))
    offered = []

    def choose(parent, listed, start_dir):
        offered.append([b.path for b in listed])
        return run.outcome.backup.path

    monkeypatch.setattr(RestoreDialog, "ask", choose)
    c = make_controller()
    changed = []
    c.folder_changed.connect(changed.append)
    outcome = _run(qtbot, c, c.restore_action)
    assert offered == [[run.outcome.backup.path]]
    assert outcome.status == "restored" and prompter.keys() == [ASK_RESTORE]
    assert prompter.levels[-1] == ("Restore backup", "info")
    assert "replace events_applied.json" in prompter.asked[0].details
    assert hash_tree(cd) == original and changed == [str(cd)]
    assert "Result: restored" in prompter.notes[-1]


def test_restore_declined_or_cancelled_changes_nothing(qtbot, root, backups, make_controller, monkeypatch):
    cd = build_case(root, "pending_tail")
    run = gr.run_guarded_replay(gr.ReplayRequest(root, CHARACTER, backup_root=backups), HeadlessPrompter(True))
    after = hash_tree(cd)
    monkeypatch.setattr(RestoreDialog, "ask", lambda parent, listed, start: None)
    c = make_controller()
    assert _run(qtbot, c, c.restore_action).status == "declined"
    monkeypatch.setattr(RestoreDialog, "ask", lambda parent, listed, start: run.outcome.backup.path)
    c.prompter = WindowPrompter({ASK_APPLY: True, ASK_RESTORE: False})
    assert _run(qtbot, c, c.restore_action).status == "declined"
    assert hash_tree(cd) == after


def test_restore_of_a_tampered_backup_is_refused(qtbot, root, backups, make_controller, monkeypatch, prompter):
    cd = build_case(root, "pending_tail")
    run = gr.run_guarded_replay(gr.ReplayRequest(root, CHARACTER, backup_root=backups), HeadlessPrompter(True))
    (run.outcome.backup.files_dir / "persona.json").write_text("{}")
    after = hash_tree(cd)
    monkeypatch.setattr(RestoreDialog, "ask", lambda parent, listed, start: run.outcome.backup.path)
    c = make_controller()
    outcome = _run(qtbot, c, c.restore_action)
    assert outcome.status == "refused" and "does not match its manifest" in prompter.notes[-1]
    assert prompter.asked == [] and hash_tree(cd) == after


def test_worker_failure_is_reported_and_the_controller_recovers(qtbot, root, make_controller, spy, prompter):
    build_case(root, "pending_tail")
    spy(ReplayChoice("replan", Scope("until", "no-such-event")), CANCEL)
    c = make_controller()
    assert _run(qtbot, c) is None  # the flow itself failed (bad input): nothing to return
    assert "no event no-such-event" in prompter.notes[-1]
    assert not c.busy and c.replay_action.isEnabled()


def test_module_exports():
    assert set(rd.__all__) >= {"ReplayDialog", "ReplayChoice"}
    assert set(rc.__all__) >= {"ReplayController", "install_replay_actions"}


# -- park: going past a held event a person decided about ---------------------------------------------


def test_dialog_offers_park_for_each_held_event_and_returns_a_park_scope(qtbot, root):
    plan, pf, pending = _plan(root, "persona_drift")
    dialog = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(dialog)
    assert dialog.scope_park.isEnabled() and dialog.park_combo.count() == 1
    held = plan.block
    assert held is not None and dialog.park_combo.itemData(0) == held.event_id
    assert "view_drift" in dialog.park_combo.itemText(0)
    dialog.scope_park.setChecked(True)
    assert dialog.choice() == ReplayChoice("replan", Scope("park", park=held.event_id))


def test_dialog_without_a_held_event_cannot_park(qtbot, root):
    plan, pf, pending = _plan(root, "pending_tail")
    dialog = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(dialog)
    assert not dialog.scope_park.isEnabled() and dialog.park_combo.count() == 0


def test_a_park_plan_says_what_is_parked_and_recorded(qtbot, root):
    cd = build_case(root, "persona_drift")
    target = gr.target_of(root, CHARACTER)
    held = gr.make_plan(target).block
    assert held is not None
    plan = gr.make_plan(target, Scope("park", park=held.event_id))
    dialog = ReplayDialog(plan, gr.preflight(target), unapplied(cd))
    qtbot.addWidget(dialog)
    assert dialog.scope_park.isChecked() and dialog.park_combo.currentData() == held.event_id
    text = dialog.summary_label.text()
    assert "never applied" in text and "events_parked.ndjson" in text


def test_gui_flow_parks_a_held_event(qtbot, root, backups, make_controller, spy):
    from journal.park import read_parked

    cd = build_case(root, "persona_drift")
    held = gr.make_plan(gr.target_of(root, CHARACTER)).block
    assert held is not None
    s = spy(ReplayChoice("replan", Scope("park", park=held.event_id)), lambda plan: ReplayChoice("apply", plan.scope))
    outcome = _run(qtbot, make_controller()).outcome
    assert [a[0].scope.kind for a in s.asked] == ["tail", "park"]
    assert outcome.status == "applied" and outcome.parked is not None
    assert outcome.parked.event_id == held.event_id
    assert read_parked(cd).ids == frozenset({held.event_id})
    assert outcome.backup is not None and outcome.backup.path.is_relative_to(backups)
    events = read_journal(cd / JOURNAL_NAME).events
    assert read_sentinel(cd).event_id == events[-1].event_id  # the sentinel moved past the parked event


def test_the_heading_follows_the_result_and_the_diff_is_readable(qtbot, root, backups):
    """After "Back up and apply", the plan's heading no longer says nothing was written; field
    names and values are not cut, paths show in full on hover (issue 15)."""
    plan, pf, pending = _plan(root)
    dialog = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(dialog)
    assert dialog.plan_heading.text() == rd.PLAN_TITLE
    # as wide as it asks for, or 90 % of the screen (test_dialogs_fit_the_screen: every dialog fits it)
    limit = dialog.screen().availableGeometry().width() * 0.9
    assert dialog.width() >= min(rd.PREFERRED_WIDTH, int(limit))
    fm = dialog.diff_view.fontMetrics()
    status = dialog.diff_view.topLevelItem(0).child(0)
    longest = max(status.child(i).text(0) for i in range(status.childCount()))
    assert dialog.diff_view.columnWidth(0) >= fm.horizontalAdvance(longest)
    assert dialog.diff_view.columnWidth(1) >= fm.horizontalAdvance(status.child(0).text(1))
    assert dialog.diff_view.topLevelItem(0).toolTip(0) == str(plan.char_dir / "reflections.json")
    run = gr.run_guarded_replay(gr.ReplayRequest(root, CHARACTER, backup_root=backups), HeadlessPrompter(True))
    dialog.set_outcome(run.outcome)
    title = dialog.plan_heading.text()
    assert "nothing has been written" not in title and "carried out: applied" in title
    assert str(run.outcome.backup.path) in title


def test_the_dialog_offers_the_journal_repair_when_the_journal_is_not_utf8(qtbot, root):
    plan, pf, pending = _plan(root, "pending_tail")
    dialog = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(dialog)
    assert not dialog.scope_repair_journal.isEnabled()  # a journal that decodes: nothing to repair

    glue_onto_torn_utf8(root / CHARACTER)
    target = gr.target_of(root, CHARACTER)
    plan = gr.make_plan(target)
    dialog = ReplayDialog(plan, pf, pending)
    qtbot.addWidget(dialog)
    assert dialog.scope_repair_journal.isEnabled() and "1 not UTF-8" in dialog.scope_repair_journal.text()
    dialog.scope_repair_journal.setChecked(True)
    assert dialog.choice() == ReplayChoice("replan", Scope("repair_journal"))

    repair = gr.make_plan(target, Scope("repair_journal"))
    shown = ReplayDialog(repair, pf, pending)
    qtbot.addWidget(shown)
    assert shown.scope_repair_journal.isChecked() and shown.apply_button.isEnabled()
    text = shown.summary_label.text()
    assert "not UTF-8" in text and "events.ndjson.damaged" in text and "Changes:" in text
    assert shown.diff_view.isHidden() and shown.events_view.isHidden()
