"""EventTableModel.replace_last: the provisional row of an unterminated last line gives way in
place (``dataChanged``), never by a reset."""

from __future__ import annotations

import pytest

from inspector.core.timeline import UNCHECKED, CharacterTimeline
from inspector.models.timeline_model import EventTableModel
from journal.diagnosis import EventInfo
from journal.reader import Defect
from tests.inspector.gui_fixtures import hand_diagnosis, write_character
from tests.inspector.models.dump import dump

pytestmark = pytest.mark.gui


@pytest.fixture
def torn(tmp_path):
    """A timeline of two events and a torn last line, and a model showing every row."""
    char = write_character(tmp_path, applied=2)
    with open(char / "events.ndjson", "ab") as fh:
        fh.write(b'{"event_id": "torn')
    tl = CharacterTimeline(hand_diagnosis(char))
    model = EventTableModel()
    model.set_rows(tl, tl.refs, lambda refs, pos: f"s{refs[pos]}")
    return tl, model


def _torn_line(tl):
    return tl.row(tl.refs[-1])


def test_the_first_new_row_takes_the_torn_rows_place(qtbot, qtmodeltester, torn):
    tl, model = torn
    qtmodeltester.check(model)
    line = _torn_line(tl)
    event = EventInfo(0, line.line, line.offset, "id-new", "reflection.evidence_updated", "2026-01-01T00:00:00", None)
    removed, added = tl.append([event], line.offset + 200, reread_from=line.line)
    with (
        qtbot.assertNotEmitted(model.modelReset),
        qtbot.assertNotEmitted(model.rowsRemoved),
        qtbot.assertNotEmitted(model.rowsInserted),
        qtbot.waitSignal(model.dataChanged) as changed,
    ):
        assert model.replace_last(removed, added) == [2]
    assert changed.args[0].row() == changed.args[1].row() == 2
    assert [[r[0], r[2], r[4], r[5]] for r in dump(model)][2:] == [
        ["2", "reflection.evidence_updated", "s2", UNCHECKED]  # a live row, until the re-diagnosis
    ]
    assert model.ref_at(2) == 2 and model.rowCount() == 3
    qtmodeltester.check(model)


def test_a_glued_line_is_the_damaged_row_in_place_and_the_event_inserted(qtbot, qtmodeltester, torn):
    tl, model = torn
    line = _torn_line(tl)
    message = "torn fragment of 18 bytes glued to an intact record"
    glued = Defect("glued", line.line, line.offset, 300, message, recovered_event_id="id-new")
    event = EventInfo(0, line.line, line.offset + 18, "id-new", "reflection.evidence_updated", "2026-01-01T00:00", None)
    removed, added = tl.append([glued, event], line.offset + 301, reread_from=line.line)
    with qtbot.assertNotEmitted(model.modelReset), qtbot.waitSignal(model.rowsInserted) as inserted:
        assert model.replace_last(removed, added) == [added[0]]
    assert inserted.args[1:] == [3, 3]
    assert [r[2] for r in dump(model)][2:] == ["⚠ glued line (torn fragment)", "reflection.evidence_updated"]
    qtmodeltester.check(model)


def test_with_nothing_to_show_the_row_is_removed_and_an_unshown_one_only_appends(qtbot, qtmodeltester, torn):
    tl, model = torn
    line = _torn_line(tl)
    removed, added = tl.append([], line.offset + 400, reread_from=line.line)  # a complete record held back
    with qtbot.waitSignal(model.rowsRemoved):
        assert model.replace_last(removed, added) == []
    assert model.rowCount() == 2
    qtmodeltester.check(model)
    event = EventInfo(0, line.line, line.offset, "id-new", "reflection.evidence_updated", "2026-01-01T00:00:00", None)
    removed, added = tl.append([event], line.offset + 401, reread_from=line.line)
    assert removed is None
    with qtbot.waitSignal(model.rowsInserted):
        assert model.replace_last(removed, added) == []
    assert model.rowCount() == 3 and [r[0] for r in dump(model)] == ["0", "1", "2"]
    qtmodeltester.check(model)
