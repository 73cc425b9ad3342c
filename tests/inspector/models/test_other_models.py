"""The characters list, the JSON tree (with redaction), and the findings / outbox tables."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.models.characters_model import (
    BADGE_ROLE,
    HEALTH_ROLE,
    LOADING_TEXT,
    CharacterListModel,
    CharacterRow,
)
from inspector.models.json_tree_model import PATH_ROLE, JsonTreeModel
from inspector.models.tables import FindingTableModel, OutboxTableModel
from journal.diagnosis import Finding
from journal.outbox import OutboxOp
from tests.inspector.models.dump import dump

pytestmark = pytest.mark.gui


def _finding(code: str, severity: str) -> Finding:
    return Finding(code, severity, f"{code} happened")


def test_characters_with_badges(qtmodeltester, qtbot):
    zero = {"applied": 9, "pending": 0, "blocked": 0, "orphaned": 0, "suspect": 0, "defects": 0}
    problems = {**zero, "pending": 3, "blocked": 1, "defects": 2}
    bob_found = [_finding("replay.blocked", "error"), _finding("tail.pending", "warning")]
    model = CharacterListModel()
    model.set_rows([
        CharacterRow.of("alice", zero, [], health="none"),
        CharacterRow.of("bob", problems, bob_found, health="error"),
        CharacterRow.of("cloud", zero, [_finding("compaction.due", "info")], health="info", note="views only"),
        CharacterRow.of("dora", zero, [_finding("view.corrupt", "error")], health="error"),
        CharacterRow.of("eve", zero, [_finding("server.persona_replaced", "error")], health="error"),
    ])
    qtmodeltester.check(model)
    assert dump(model) == [["alice"], ["bob"], ["cloud"], ["dora"], ["eve"]]
    assert dump(model, role=BADGE_ROLE) == [
        ["healthy"],
        ["1 blocked · 3 pending · 2 damaged"],  # check's counts, each state apart
        ["healthy · 1 info · views only"],
        ["1 error"],  # a corrupt view: no count to show, and never "healthy"
        ["server: 1 error"],  # the server's error: nothing of ours to say, and never "healthy"
    ]
    assert dump(model, role=HEALTH_ROLE) == [["none"], ["error"], ["info"], ["error"], ["error"]]  # the diagnosis's
    assert "views only" in model.index(2, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert model.rows()[3].guarded_text() == "1 error (view.corrupt)"
    assert model.rows()[1].guarded_text() == "1 blocked · 3 pending · 2 damaged · findings: 1 error (replay.blocked)"
    with qtbot.assertNotEmitted(model.modelReset), qtbot.waitSignal(model.dataChanged):
        model.update_row(CharacterRow.of("alice", {**zero, "pending": 1}, [], health="none", unchecked=True))
    assert model.index(0, 0).data(BADGE_ROLE) == "1 pending · not yet checked"
    qtmodeltester.check(model)
    with qtbot.assertNotEmitted(model.modelReset):
        model.update_row(CharacterRow.preview("dora"))
    assert model.index(3, 0).data(BADGE_ROLE) == LOADING_TEXT and model.index(3, 0).data(HEALTH_ROLE) == "loading"
    qtmodeltester.check(model)


PERSONA = {
    "master": {"facts": [{"id": "card_1", "text": "Name: Alice", "reinforcement": 1.5, "merged_from_ids": ["ref_a"]}]},
    "neko": {"facts": []},
}


def test_json_tree_contents_and_paths(qtmodeltester):
    model = JsonTreeModel()
    model.set_value(PERSONA)
    qtmodeltester.check(model)
    assert dump(model) == [
        ["master", "{1 key}", [["facts", "[1 item]", [["[0] card_1", "{4 keys}", [
            ["id", '"card_1"'],
            ["text", '"Name: Alice"'],
            ["reinforcement", "1.5"],
            ["merged_from_ids", "[1 item]", [["[0]", '"ref_a"']]],
        ]]]]]],
        ["neko", "{1 key}", [["facts", "[0 items]"]]],
    ]
    index = model.index_for_path(("master", "facts", 0, "text"))
    assert index.data() == "text" and index.data(PATH_ROLE) == ("master", "facts", 0, "text")
    assert not model.index_for_path(("master", "nope")).isValid()


def test_json_tree_redaction_hides_text_but_not_ids(qtmodeltester):
    model = JsonTreeModel(redact=True)
    model.set_value({"id": "ref_1", "text": "Oolong at dawn", "messages": [{"content": "hi there"}], "n": 3})
    qtmodeltester.check(model)
    shown = repr(dump(model))
    assert "Oolong" not in shown and "hi there" not in shown
    assert '"ref_1"' in shown and "‹text · 14 chars · " in shown and "‹chat · 8 chars" in shown
    assert model.index(1, 1).data(Qt.ItemDataRole.ToolTipRole) is None  # no leak through tooltips
    assert "Oolong" not in repr(model.shown_value())
    model.set_redact(False)
    assert "Oolong" in repr(dump(model))


def test_findings_and_outbox_tables(qtmodeltester):
    findings = FindingTableModel()
    findings.set_rows([
        Finding("replay.blocked", "error", "replay stops at event #3", event_id="e3"),
        Finding("line.torn_tail", "warning", "torn last line", line=9),
        Finding("view.corrupt", "error", "persona.json is not JSON", file="persona.json"),
    ])
    qtmodeltester.check(findings)
    assert dump(findings) == [  # check's order: errors first (issue 27 item 5)
        ["error", "replay.blocked", "replay stops at event #3", "e3"],
        ["error", "view.corrupt", "persona.json is not JSON", "persona.json"],
        ["warning", "line.torn_tail", "torn last line", " (line 9)"],
    ]
    assert findings.index(0, 0).data(Qt.ItemDataRole.BackgroundRole) is not None
    outbox = OutboxTableModel()
    outbox.set_rows([OutboxOp("op1", "extract_facts", "pending", 2, "2026-01-01T00:00:00", 4),
                     OutboxOp("op2", None, "dead_letter", 5, None, 9)])
    qtmodeltester.check(outbox)
    assert dump(outbox) == [
        ["op1", "extract_facts", "pending", "2", "2026-01-01 00:00:00.000", "4"],
        ["op2", "(none)", "dead letter", "5", "", "9"],
    ]
    # an operation id elided to fit the pane is whole on hover
    assert outbox.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) == "op1"
