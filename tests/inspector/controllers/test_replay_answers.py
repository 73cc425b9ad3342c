"""One question, one answer (issue 27 item 12): answering No to "Extract it first?" for a zip
export ends the replay without a second, "refused" box."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMainWindow

from inspector.controllers.replay import install_replay_actions
from inspector.core.prompter import ASK_EXTRACT, HeadlessPrompter
from journal.fixtures import zip_export
from tests.inspector.replay_cases import CHARACTER, build_case, hash_tree

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("replay_env")]


@pytest.mark.parametrize("answer", [False, True])
def test_a_zip_asks_once_and_no_is_the_whole_answer(qtbot, root, tmp_path, backups, answer):
    build_case(root, "pending_tail")
    z = zip_export(root, tmp_path / "export.zip")
    before = hash_tree(tmp_path)
    window = QMainWindow()
    qtbot.addWidget(window)
    prompter = HeadlessPrompter(answer)
    c = install_replay_actions(window, None, lambda: (str(z), CHARACTER), prompter=prompter, backup_root=backups)
    try:
        with qtbot.waitSignal(c.finished, timeout=30_000) as blocker:
            c.replay_action.trigger()
    finally:
        c.shutdown()
    run = blocker.args[0]
    assert [q.key for q in prompter.asked] == [ASK_EXTRACT]
    assert prompter.errors == []
    told = [n for n in prompter.notes if "zip" in n.lower() or "refused" in n.lower()]
    if answer:
        assert run.extracted_to is not None
    else:
        assert run.status == "refused" and run.extracted_to is None
        assert not any("refused" in n.lower() for n in told), told  # the No was the answer: no second box
        assert hash_tree(tmp_path) == before  # nothing extracted, nothing written
