"""Live: an unterminated last line shows as a provisional damaged row (the reader's torn tail); once
the line is completed, glued onto or isolated it becomes what the reader makes of it, in place.
Every live row reads "not yet checked" and is counted nowhere until the re-diagnosis."""

from __future__ import annotations

import os

import pytest

from inspector.core.live import LiveFolder
from inspector.core.timeline import UNCHECKED, CharacterTimeline
from journal import read_journal
from journal.diagnosis import EventInfo
from journal.events import encode_event, new_event
from journal.reader import Defect
from journal.tail import JournalTail
from tests.inspector.gui_fixtures import hand_diagnosis, write_character


def _record() -> bytes:
    return encode_event(new_event("reflection.evidence_updated", {"reflection_id": "ref_0000000000000001"}))


@pytest.fixture
def live(tmp_path):
    char = write_character(tmp_path, applied=3)
    tl = CharacterTimeline(hand_diagnosis(char))
    return char / "events.ndjson", tl, LiveFolder({"alice": tl})


def _append(journal, data: bytes) -> None:
    with open(journal, "ab") as fh:
        fh.write(data)


def _poll(live_folder, journal, tl):
    """Read what changed and apply it to ``tl`` as the session does; returns (update, removed, added)."""
    updates = live_folder.process([str(journal)])
    if not updates:
        return None, None, []
    (update,) = updates
    removed, added = tl.append(update.rows, update.size, reread_from=update.reread_from)
    return update, removed, added


def _as_read(tl, refs):
    """Rows as comparable tuples (what the reader says about a line)."""
    out = []
    for ref in refs:
        row = tl.row(ref)
        if isinstance(row, EventInfo):
            out.append(("event", row.line, row.offset, row.event_id))
        else:
            out.append((row.kind, row.line, row.offset, row.length, row.message, row.recovered_event_id))
    return out


def _reader_rows(journal, line):
    """What the one reader reports for ``line`` of the whole file, in the same shape."""
    read = read_journal(journal)
    rows = [
        (d.kind, d.line, d.offset, d.length, d.message, d.recovered_event_id) for d in read.defects if d.line == line
    ]
    rows += [("event", e.line, e.offset, e.event_id) for e in read.events if e.line == line]
    return rows


def test_half_a_line_is_a_provisional_torn_row_and_the_size_follows(live):
    journal, tl, live_folder = live
    line = tl.diagnosis.journal.lines + 1
    record = _record()
    _append(journal, record[:30])
    update, removed, added = _poll(live_folder, journal, tl)
    assert update is not None and update.reread_from == line
    assert update.size == os.path.getsize(journal) and tl.live_size == update.size
    assert removed is None
    assert _as_read(tl, added) == _reader_rows(journal, line)  # the reader's torn_tail, as it would report it
    assert tl.row(added[0]).kind == "torn_tail" and tl.state(added[0]) == UNCHECKED
    assert (tl.counts["applied"], tl.counts["defects"]) == (3, 0)  # the diagnosis's, as it made them
    assert tl.unchecked


def test_the_rest_of_the_line_makes_the_row_the_event(live):
    journal, tl, live_folder = live
    line = tl.diagnosis.journal.lines + 1
    record = _record()
    _append(journal, record[:30])
    _, _, (torn,) = _poll(live_folder, journal, tl)
    _append(journal, record[30:])
    update, removed, added = _poll(live_folder, journal, tl)
    assert removed == torn
    expected = [("event", line, tl.events.offset(3), tl.events.event_id(3))]
    assert _as_read(tl, added) == _reader_rows(journal, line) == expected
    assert update.payloads[tl.events.event_id(3)][0] == "reflection.evidence_updated"
    assert list(tl.refs) == [0, 1, 2, 3]
    assert tl.state(3) == UNCHECKED and not tl.defects
    assert (tl.counts["pending"], tl.counts["defects"]) == (0, 0)  # a live row is counted nowhere


def test_a_record_glued_onto_it_is_a_damaged_row_plus_the_recovered_event(live):
    journal, tl, live_folder = live
    line = tl.diagnosis.journal.lines + 1
    _append(journal, _record()[:41])
    _, _, (torn,) = _poll(live_folder, journal, tl)
    glued = _record()
    _append(journal, glued)  # the next append lands on the fragment, without a newline between
    _, removed, added = _poll(live_folder, journal, tl)
    assert removed == torn
    rows = _as_read(tl, added)
    assert rows == _reader_rows(journal, line)
    assert [r[0] for r in rows] == ["glued", "event"]
    assert rows[0][5] == rows[1][3] == tl.events.event_id(3)
    assert [tl.state(r) for r in added] == [UNCHECKED, UNCHECKED] and len(tl.defects) == 1


def test_a_writer_isolating_the_fragment_gives_a_malformed_row_and_the_event(live):
    journal, tl, live_folder = live
    line = tl.diagnosis.journal.lines + 1
    _append(journal, _record()[:25])
    _poll(live_folder, journal, tl)
    _append(journal, b"\n" + _record())
    _, removed, added = _poll(live_folder, journal, tl)
    assert removed is not None
    assert [r[0] for r in _as_read(tl, added)] == ["malformed", "event"]
    assert _as_read(tl, added)[:1] == _reader_rows(journal, line)


def test_a_growing_torn_line_replaces_its_row_without_piling_up_defects(live):
    journal, tl, live_folder = live
    record = _record()
    _append(journal, record[:10])
    _poll(live_folder, journal, tl)
    done = 10
    for cut in (20, 40, 60):
        _append(journal, record[done:cut])
        done = cut
        _, removed, added = _poll(live_folder, journal, tl)
        assert removed is not None and len(added) == 1
        assert tl.row(added[0]).length == cut and tl.row(added[0]).kind == "torn_tail"
        assert len(tl.defects) == 1 and tl.state(added[0]) == UNCHECKED and tl.counts["defects"] == 0
        assert len(tl.refs) == 4


def test_a_complete_record_waiting_for_its_newline_is_held_back_not_shown_as_an_event(live):
    journal, tl, live_folder = live
    record = _record()
    _append(journal, record[:30])
    _, _, (torn,) = _poll(live_folder, journal, tl)
    _append(journal, record[30:-1])  # everything but the newline: the reader would make an event of it
    update, removed, added = _poll(live_folder, journal, tl)
    assert update is not None and update.rows == [] and update.reread_from is not None
    assert removed == torn and added == []
    assert len(tl.events) == 3 and len(tl.refs) == 3  # an event once shown is never taken back
    assert tl.live_size == os.path.getsize(journal)
    _append(journal, b"\n")
    _, removed, added = _poll(live_folder, journal, tl)
    assert removed is None and [type(tl.row(r)) for r in added] == [EventInfo]


def test_nothing_new_read_means_no_update_and_no_second_classification(live, monkeypatch):
    journal, tl, live_folder = live
    _append(journal, b'{"event_id": "torn')
    _poll(live_folder, journal, tl)
    calls = []
    real = JournalTail.provisional

    def spy(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(JournalTail, "provisional", spy)
    assert live_folder.process([str(journal)]) == []  # a touch without new bytes
    assert calls == []  # a huge unterminated tail is not classified again for nothing
    assert len(tl.refs) == 4


def test_a_torn_tail_read_by_the_diagnosis_is_not_shown_twice(tmp_path):
    char = write_character(tmp_path, applied=2)
    _append(char / "events.ndjson", b'{"event_id": "torn')
    tl = CharacterTimeline(hand_diagnosis(char))
    assert isinstance(tl.row(tl.refs[-1]), Defect)
    live_folder = LiveFolder({"alice": tl})
    assert live_folder.process([str(char / "events.ndjson")]) == []  # re-read, unchanged
    record = _record()
    _append(char / "events.ndjson", b"\n" + record)
    (update,) = live_folder.process([str(char / "events.ndjson")])
    removed, added = tl.append(update.rows, update.size, reread_from=update.reread_from)
    assert removed is not None
    assert [getattr(tl.row(r), "kind", "event") for r in added] == ["malformed", "event"]
