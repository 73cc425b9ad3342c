"""File ▸ Export support bundle… and File ▸ Compare with (issue 17), in the window: the bundle of
the opened folder is written in the background where the person chose (never inside the folder),
redacted unless they untick it, and cancel leaves nothing; a comparison shows the two timelines
aligned at their common prefix, and activating an event of A asks the window to select it. Both
inputs are only read: they are hashed before and after."""

from __future__ import annotations

import json
import shutil
import threading
import zipfile
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel

from inspector.controllers import support as support_controller
from inspector.core.bundle import read_secret
from inspector.core.redaction import Redactor
from inspector.widgets.compare_panel import DIVERGENCE_COLOR, ComparePanel
from inspector.widgets.main_window import MainWindow
from inspector.widgets.support_dialogs import BundleChoice, BundleOptionsDialog
from journal import EventLog
from journal.diagnosis import diagnose_path
from journal.views import PERSONA
from tests.inspector.widgets.folders_for_gui import SECRET, two_characters
from tests.inspector.widgets.window_fixtures import WAIT_MS, make_inspector_window, open_and_wait, tree_hashes  # noqa: F401

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("replay_env")]  # the secret goes to a temp data folder

#: A text only B's new event holds.
B_SECRET = "Master moved to Lisbon in spring"


class Options:
    """The bundle's confirmation, answered without a person (``BundleOptionsDialog.ask`` patched)."""

    def __init__(self) -> None:
        self.answer: bool | None = True  # redact, or None: cancelled
        self.include_chat = False
        self.asked: list[tuple[str, str]] = []

    def ask(self, _parent, source: str, target: str) -> BundleChoice | None:
        self.asked.append((source, target))
        return None if self.answer is None else BundleChoice(self.answer, self.include_chat)


@pytest.fixture
def options(monkeypatch) -> Options:
    o = Options()
    monkeypatch.setattr(BundleOptionsDialog, "ask", classmethod(lambda _cls, *args: o.ask(*args)))
    return o


@pytest.fixture
def window(make_inspector_window) -> MainWindow:  # noqa: F811
    return make_inspector_window()


@pytest.fixture
def opened(qtbot, window, tmp_path):
    """``(window, root, out)``: ``two_characters`` open; saves go to ``out``; ``root`` unchanged after."""
    root = two_characters(tmp_path / "memory")
    out = tmp_path / "cases"
    out.mkdir()
    open_and_wait(qtbot, window, root)
    before = tree_hashes(root)
    yield window, root, out
    assert tree_hashes(root) == before  # the opened folder is only read


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}


def _write(qtbot, window: MainWindow, target: Path):
    window.prompter.save_path = str(target)
    with qtbot.waitSignal(window.context.support.bundle_written, timeout=WAIT_MS) as blocker:
        window.support_actions.export_bundle_action.trigger()
    return blocker.args[0]


# -- the menu ----------------------------------------------------------------------------------------------


def test_the_file_menu_offers_both_disabled_until_a_folder_is_open(qtbot, window, tmp_path):
    support = window.support_actions
    file_menu = window.menuBar().actions()[0].menu()
    assert support.export_bundle_action in file_menu.actions()
    assert support.compare_menu.menuAction() in file_menu.actions()
    compare = [support.compare_folder_action, support.compare_zip_action, support.compare_cloud_action]
    assert support.compare_menu.actions() == compare
    actions = (support.export_bundle_action, *compare)
    assert not any(a.isEnabled() for a in actions)
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    assert all(a.isEnabled() for a in actions)


# -- the bundle ----------------------------------------------------------------------------------------------


def test_the_bundle_is_written_redacted_and_check_reads_it(qtbot, opened, options):
    window, root, out = opened
    result = _write(qtbot, window, out / "case.zip")
    assert result.path == out / "case.zip" and sorted(p.name for p in out.iterdir()) == ["case.zip"]
    assert options.asked == [(str(root), str(out / "case.zip"))]
    assert window.prompter.save_requests[-1][2][0] == "Zip files (*.zip)"
    members = _members(out / "case.zip")
    manifest = json.loads(members["manifest.json"])
    assert manifest["redacted"] is True and manifest["input"] == "memory"
    secret = read_secret()  # the sender's, which the window's bundle was keyed by
    assert secret is not None
    folder_of = {n: f"character-{Redactor(secret).tag(n)}" for n in ("alice", "bob")}
    assert manifest["characters"] == [{"folder": folder_of[n]} for n in ("alice", "bob")]  # names are text
    assert not any(SECRET.encode() in data for data in members.values())
    # a valid bundle: check reads it like any zip export, with the original's verdicts
    original, bundled = diagnose_path(str(root)), diagnose_path(str(out / "case.zip"))
    by_folder = {c.name: c for c in bundled.characters}
    assert sorted(by_folder) == sorted(folder_of.values())
    assert [sorted(f.code for f in by_folder[folder_of[c.name]].findings) for c in original.characters] == [
        sorted(f.code for f in c.findings) for c in original.characters
    ]
    message = window.statusBar().currentMessage()
    assert "Wrote the support bundle" in message and "2 characters, redacted" in message
    assert window.support_actions.indicator.isHidden()


def test_unticked_redaction_copies_the_texts_and_the_manifest_says_so(qtbot, opened, options):
    window, _root, out = opened
    options.answer = False
    _write(qtbot, window, out / "plain.zip")
    members = _members(out / "plain.zip")
    assert json.loads(members["manifest.json"])["redacted"] is False
    assert any(SECRET.encode() in data for data in members.values())
    assert "NOT redacted" in window.statusBar().currentMessage()


def test_the_bundle_of_an_opened_zip_reads_the_zip_itself(qtbot, window, tmp_path, options):
    root = two_characters(tmp_path / "memory")
    export = Path(shutil.make_archive(str(tmp_path / "export"), "zip", root))
    digest = export.read_bytes()
    open_and_wait(qtbot, window, export)
    _write(qtbot, window, tmp_path / "case.zip")
    secret = read_secret()
    assert secret is not None
    # the zip itself, not its extracted copy: its name, keyed as every name a person gave
    assert json.loads(_members(tmp_path / "case.zip")["manifest.json"])["input"] == (
        f"input-{Redactor(secret).tag('export.zip')}"
    )
    assert export.read_bytes() == digest
    window.prompter.save_path = str(export)  # the zip itself is the input: refused
    window.support_actions.export_bundle_action.trigger()
    assert "is the input itself" in window.prompter.errors[-1][1] and export.read_bytes() == digest


def test_a_bundle_inside_the_opened_folder_is_refused_before_anything_runs(qtbot, opened, options):
    window, root, _out = opened
    window.prompter.save_path = str(root / "alice" / "case.zip")
    with qtbot.assertNotEmitted(window.context.support.started):
        window.support_actions.export_bundle_action.trigger()
    title, message = window.prompter.errors[-1]
    assert title == "Export support bundle" and "inside the opened folder" in message
    assert options.asked == []  # refused before the confirmation
    # the controller refuses it too, whoever asks
    with qtbot.waitSignal(window.context.support.failed) as blocker:
        assert not window.context.support.write_bundle(root / "case.zip")
    assert "inside the opened folder" in blocker.args[0]


def test_the_confirmation_says_what_is_redacted_and_that_not_redacting_is_recorded(qtbot):
    dialog = BundleOptionsDialog("/home/someone/memory", "/tmp/case.zip")
    qtbot.addWidget(dialog)
    assert dialog.redact and dialog.warning.isHidden()  # redacted unless the person unticks it
    assert not dialog.include_chat  # the chat history only when ticked
    said = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "‹text · N chars›" in said and "keyed by your secret" in said and "embeddings are dropped" in said
    dialog.redact_box.setChecked(False)
    assert not dialog.redact and not dialog.warning.isHidden()
    assert "copied as they are" in dialog.warning.text() and '"redacted": false' in dialog.warning.text()


def test_a_declined_confirmation_or_save_dialog_writes_nothing(qtbot, opened, options):
    window, _root, out = opened
    options.answer = None
    window.prompter.save_path = str(out / "case.zip")
    with qtbot.assertNotEmitted(window.context.support.started):
        window.support_actions.export_bundle_action.trigger()
    assert options.asked and "nothing was written" in window.statusBar().currentMessage()
    window.prompter.save_path = None
    with qtbot.assertNotEmitted(window.context.support.started):
        window.support_actions.export_bundle_action.trigger()
    assert list(out.iterdir()) == []


def test_a_long_bundle_shows_progress_and_cancel_leaves_nothing(qtbot, opened, options, monkeypatch):
    window, _root, out = opened
    gate = threading.Event()
    real = support_controller.write_bundle_file

    def slow(*args, progress, cancelled, **kwargs):
        progress(1, 100)
        gate.wait(WAIT_MS / 1000)
        return real(*args, progress=progress, cancelled=cancelled, **kwargs)  # stops at its first step

    monkeypatch.setattr(support_controller, "write_bundle_file", slow)
    window.prompter.save_path = str(out / "case.zip")
    indicator = window.support_actions.indicator
    window.support_actions.export_bundle_action.trigger()
    qtbot.waitUntil(lambda: not indicator.isHidden() and indicator.bar.value() == 1)
    assert "redacted" in indicator.label.text() and not window.support_actions.export_bundle_action.isEnabled()
    with qtbot.waitSignal(window.context.support.cancelled, timeout=WAIT_MS):
        indicator.cancel_button.click()
        gate.set()
    assert indicator.isHidden() and "nothing was written" in window.statusBar().currentMessage()
    assert list(out.iterdir()) == []  # no bundle, no temp file
    assert window.support_actions.export_bundle_action.isEnabled()


# -- the comparison ------------------------------------------------------------------------------------------


@pytest.fixture
def pair(qtbot, window, tmp_path):
    """``(window, a, b)``: A open with alice shown; B = A + two events of alice, and alice's persona
    text changed; both unchanged after."""
    a = two_characters(tmp_path / "a")
    b = Path(shutil.copytree(a, tmp_path / "b"))
    log = EventLog(b)
    log.append("alice", "fact.added", {"id": "fact_2", "text": B_SECRET})
    log.append("alice", "fact.added", {"id": "fact_3"})
    persona = json.loads((b / "alice" / PERSONA).read_text())
    persona["master"]["facts"][0]["text"] = "Name: Alicia"
    (b / "alice" / PERSONA).write_text(json.dumps(persona))
    open_and_wait(qtbot, window, a)
    window.session.show_character("alice")
    before = tree_hashes(a), tree_hashes(b)
    yield window, a, b
    assert (tree_hashes(a), tree_hashes(b)) == before  # both inputs are only read


def _compare(qtbot, window: MainWindow, b: Path, kind: str = "folder") -> ComparePanel:
    support = window.support_actions
    if kind == "folder":
        window.prompter.folder = str(b)
    else:
        window.prompter.zip_file = str(b)
    action = support.compare_folder_action if kind == "folder" else support.compare_zip_action
    with qtbot.waitSignal(window.context.support.compared, timeout=WAIT_MS):
        action.trigger()
    assert support.panel is not None and support.panel.isVisible()
    return support.panel


def test_the_panel_aligns_the_timelines_at_the_common_prefix(qtbot, pair):
    window, _a, b = pair
    panel = _compare(qtbot, window, b)
    j = panel.result.comparison.journal
    n = j.a.events
    assert n == 32 and (j.common_prefix, j.diverges_at, j.b.events) == (n, n, n + 2)
    assert f"Common prefix: {n} events; they diverge at #{n}" in panel.summary.text()
    assert "only in B: 2 events" in panel.summary.text()
    # the earlier common events are one row; then the last 20 of the prefix, then the divergence
    a_table, b_table = panel.a_table, panel.b_table
    assert a_table.item(0, 0).text() == f"#0 – #{n - 21}: {n - 20} common events (the same ids in the same order)"
    row = panel.divergence_row
    assert row == 21 and a_table.rowCount() == b_table.rowCount() == 1 + 20 + 2
    assert [a_table.item(row - 1, c).text() for c in (0, 1)] == [f"#{n - 1}", "common"]
    assert a_table.item(row - 1, 3).text() == b_table.item(row - 1, 3).text()  # the same event id, side by side
    assert a_table.item(row, 1).text() == "diverges here · no event (A ends before)"
    assert b_table.item(row, 1).text() == "diverges here · only in B"
    assert b_table.item(row + 1, 1).text() == "only in B"
    assert [b_table.item(r, 2).text() for r in (row, row + 1)] == ["fact.added", "fact.added"]
    assert b_table.item(row, 0).background().color() == DIVERGENCE_COLOR
    assert b_table.item(row - 1, 0).background().color() != DIVERGENCE_COLOR
    assert f"A: {n} events" in panel.a_side.text() and "sentinel ok" in panel.a_side.text()
    assert f"B: {n + 2} events" in panel.b_side.text() and "no damage" in panel.b_side.text()
    assert "Compared: common prefix" in window.statusBar().currentMessage()


def test_activating_an_event_of_a_selects_it_in_the_window(qtbot, pair):
    window, _a, b = pair
    panel = _compare(qtbot, window, b)
    support = window.support_actions
    support.activated_a.connect(window.select_ref)  # the main window's line (see the report)
    window.session.show_character("bob")  # another character shown meanwhile: A's comes back
    row = panel.divergence_row - 3
    with qtbot.waitSignal(panel.activated_a) as from_panel, qtbot.waitSignal(support.activated_a) as relayed:
        panel.a_table.activated.emit(panel.a_table.model().index(row, 1))
    assert from_panel.args == relayed.args == [29]  # row 0 holds #0-#11, row 1 is #12
    assert window.session.current == "alice" and window.selected_ref() == 29
    # a row without an event of A activates nothing
    with qtbot.assertNotEmitted(panel.activated_a):
        panel.a_table.activated.emit(panel.a_table.model().index(panel.divergence_row, 0))


def test_an_event_of_b_shows_its_record_in_the_panel_redacted_when_the_window_is(qtbot, pair):
    window, _a, b = pair
    panel = _compare(qtbot, window, b)
    row = panel.divergence_row
    panel.b_table.setCurrentCell(row, 0)
    assert panel.tabs.currentWidget() is panel.detail
    text = panel.detail.toPlainText()
    assert text.startswith("B #32 · line 33 · fact.added") and B_SECRET in text
    window.set_redact(True)  # the panel follows the window's redaction
    assert panel.redact and B_SECRET not in panel.detail.toPlainText() and "‹text" in panel.detail.toPlainText()


def _entry(tree, entry: str):
    return next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount()) if entry in tree.topLevelItem(i).text(0))


def test_changed_entries_show_as_a_before_after_tree_redacted_when_on(qtbot, pair):
    window, a, b = pair
    window.set_redact(True)
    panel = _compare(qtbot, window, b)
    tree = panel.entries
    top = _entry(tree, "card_1a2b3c4d")
    assert (top.text(0), top.text(1)) == ("persona · master/card_1a2b3c4d", "changed")
    field = top.child(0)
    assert field.text(0) == "text" and "‹text" in field.text(2) and "‹text" in field.text(3)
    assert field.text(2) != field.text(3)
    assert panel.header.text() == f"alice — A: {a.name} · B: {b.name}"  # paths cut to their base names
    window.set_redact(False)
    top = _entry(tree, "card_1a2b3c4d")
    assert [top.child(0).text(c) for c in (2, 3)] == ["Name: Alice", "Name: Alicia"]
    assert panel.header.text() == f"alice — A: {a} · B: {b}"


def test_a_zip_b_identical_to_a_says_so(qtbot, pair, tmp_path):
    window, a, _b = pair
    same = Path(shutil.make_archive(str(tmp_path / "same"), "zip", a))
    panel = _compare(qtbot, window, same, kind="zip")
    assert panel.result.comparison.identical and panel.divergence_row is None
    assert panel.summary.text() == "A and B are identical: every journal record and every file."
    assert window.statusBar().currentMessage() == "Compared: A and B are identical."


def test_a_b_that_is_no_export_is_reported_and_shows_no_panel(qtbot, pair, tmp_path):
    window, _a, _b = pair
    (tmp_path / "empty").mkdir()
    window.prompter.folder = str(tmp_path / "empty")
    with qtbot.waitSignal(window.context.support.failed, timeout=WAIT_MS):
        window.support_actions.compare_folder_action.trigger()
    title, message = window.prompter.errors[-1]
    assert title == "Compare" and "no character folder found here" in message
    assert window.support_actions.panel is None


def test_the_chat_history_goes_into_the_bundle_only_when_ticked(qtbot, window, tmp_path, options):
    from datetime import datetime

    from journal.fixtures.chatdb import write_chat_db

    root = two_characters(tmp_path / "memory")
    write_chat_db(root / "alice" / "time_indexed.db", [(datetime(2026, 5, 1, 10), [("human", B_SECRET)])])
    open_and_wait(qtbot, window, root)
    before = tree_hashes(root)
    for ticked in (False, True):
        options.include_chat = ticked
        result = _write(qtbot, window, tmp_path / f"case-{ticked}.zip")
        members = _members(Path(result.path))
        assert any(n.endswith("/time_indexed.db") for n in members) is ticked
        assert not [n for n, data in members.items() if B_SECRET.encode() in data]
    assert tree_hashes(root) == before
