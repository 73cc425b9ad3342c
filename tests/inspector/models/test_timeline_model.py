"""EventTableModel: contents, colours by state, live appends without a reset, the sentinel marker row."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette

from inspector.core.timeline import UNCHECKED, CharacterTimeline
from inspector.core.timestamps import format_ts
from inspector.models.colors import state_color
from inspector.models.timeline_model import (
    COL_STATE,
    ROWS_CHANGED_ONE_BY_ONE,
    STATE_ROLE,
    UNCHECKED_TIP,
    EventTableModel,
)
from journal.diagnosis import EventInfo
from journal.reader import Defect
from tests.inspector.gui_fixtures import hand_diagnosis, write_character
from tests.inspector.models.dump import dump

pytestmark = pytest.mark.gui


@pytest.fixture
def timeline(tmp_path):
    char = write_character(tmp_path, applied=3, pending=2)
    with open(char / "events.ndjson", "ab") as fh:
        fh.write(b"garbage\n")
    return CharacterTimeline(hand_diagnosis(char, states={3: ("blocked", "no_handler")}))


def _summaries(refs, pos):
    return f"s{refs[pos]}"


def test_dump_after_load(qtmodeltester, timeline):
    model = EventTableModel()
    model.set_rows(timeline, timeline.refs, _summaries)
    qtmodeltester.check(model)
    rows = dump(model)
    assert [r[0] for r in rows] == ["0", "1", "2", "3", "4", ""]
    assert [r[2] for r in rows] == ["reflection.evidence_updated"] * 5 + ["⚠ malformed line"]
    assert [r[3] for r in rows] == [f"ref_{i % 4:016x}" for i in (0, 1, 2, 0, 1)] + [""]
    assert [r[4] for r in rows] == ["s0", "s1", "s2", "s3", "s4", "s-1"]
    assert [r[5] for r in rows] == ["applied", "applied", "applied", "blocked · no_handler", "pending", "damaged line"]
    assert rows[5][1] == "line 6"
    # the year, and milliseconds (issue 16 item 18): one precision whatever the journal wrote
    assert rows[0][1] == format_ts(timeline.events[0].ts) and rows[0][1].startswith(timeline.events[0].ts[:10] + " ")
    assert len(rows[0][1]) == len("2026-04-23 12:00:00.000")
    assert model.headerData(4, Qt.Orientation.Horizontal) == "Summary"


def test_live_append_inserts_rows_without_reset(qtmodeltester, qtbot, timeline):
    model = EventTableModel()
    model.set_rows(timeline, timeline.refs, _summaries)
    new = EventInfo(0, 7, 10_000, "new-id", "fact.added", "2026-01-01T00:00:00", None)
    _removed, added = timeline.append([new, Defect("malformed", 8, 10_100, 3, "bad")], 10_200)
    with qtbot.assertNotEmitted(model.modelReset), qtbot.waitSignal(model.rowsInserted) as blocker:
        model.append_rows(added)
    assert blocker.args[1:] == [6, 7]
    qtmodeltester.check(model)
    assert dump(model)[6][:3] == ["5", "2026-01-01 00:00:00.000", "fact.added"]
    assert dump(model)[7][2] == "⚠ malformed line"


def test_rows_changed_repaints_the_span(qtbot, timeline):
    model = EventTableModel()
    model.set_rows(timeline, timeline.refs, _summaries)
    from journal.views import SentinelRead

    first = timeline.sentinel_moved(SentinelRead("ok", timeline.events.event_id(4)))
    assert first == 3  # after the earlier of the two sentinels
    with qtbot.waitSignal(model.dataChanged) as blocker:
        model.rows_changed_from(first)
    top, bottom = blocker.args[:2]
    assert (top.row(), bottom.row()) == (3, 5)  # every row after it (the damaged line stays damaged)
    assert [model.index(p, COL_STATE).data() for p in range(3, 6)] == [UNCHECKED, UNCHECKED, "damaged line"]
    assert model.index(3, 0).data(Qt.ItemDataRole.ToolTipRole) == UNCHECKED_TIP
    fresh = hand_diagnosis(Path(timeline.path), states={3: ("blocked", "no_handler")})
    changed = timeline.merge_diagnosis(fresh)
    with qtbot.waitSignal(model.dataChanged) as blocker:
        model.rows_changed(changed)
    assert (blocker.args[0].row(), blocker.args[1].row()) == (3, 4)
    assert [model.index(p, COL_STATE).data() for p in (3, 4)] == ["blocked · no_handler", "pending"]  # as it says
    with qtbot.waitSignal(model.dataChanged) as blocker:
        model.rows_changed(list(range(ROWS_CHANGED_ONE_BY_ONE + 1)))  # many: every row, in one signal
    assert (blocker.args[0].row(), blocker.args[1].row()) == (0, 5)


def test_colours_by_state_come_from_the_palette(timeline):
    model = EventTableModel()
    model.set_rows(timeline, timeline.refs, _summaries)
    light = QPalette(QColor("#efefef"))
    light.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    model.set_palette(light)
    background = Qt.ItemDataRole.BackgroundRole
    colours = {model.index(p, 0).data(STATE_ROLE): model.index(p, 0).data(background) for p in range(6)}
    assert set(colours) == {"applied", "blocked", "pending", "damaged"}
    assert len({c.name() for c in colours.values()}) == 4
    assert colours["blocked"] == state_color(light, "blocked")
    assert colours["blocked"].red() > colours["blocked"].green()
    assert all(c.lightness() > 150 for c in colours.values())
    dark = QPalette(QColor("#2b2d30"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1f22"))
    model.set_palette(dark)
    dark_colours = [model.index(p, 0).data(Qt.ItemDataRole.BackgroundRole) for p in range(6)]
    assert all(c.lightness() < 110 for c in dark_colours)  # still dark: palette-aware, text stays readable


def test_marker_position_follows_the_filter(timeline):
    model = EventTableModel()
    model.set_rows(timeline, timeline.refs, _summaries)
    assert model.marker_position() == 2
    model.set_rows(timeline, [0, 3, 4], _summaries)
    assert model.marker_position() == 0
    assert model.position_of(2) is None and model.nearest_position(2) == 1
    model.set_rows(timeline, [3, 4], _summaries)
    assert model.marker_position() == -1


def test_remove_a_torn_row(qtmodeltester, tmp_path):
    char = write_character(tmp_path, applied=1)
    with open(char / "events.ndjson", "ab") as fh:
        fh.write(b'{"event_id": "torn')
    tl = CharacterTimeline(hand_diagnosis(char))
    model = EventTableModel()
    model.set_rows(tl, tl.refs, _summaries)
    assert model.rowCount() == 2
    assert model.remove_ref(tl.refs[-1])
    qtmodeltester.check(model)
    assert model.rowCount() == 1
