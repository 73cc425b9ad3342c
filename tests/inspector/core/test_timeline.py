"""CharacterTimeline: rows in file order, the diagnosis's counts, live rows "not yet checked" until a
fresh diagnosis is merged."""

from __future__ import annotations

import pytest

from inspector.core.rediagnose import DiagnosisDelta, diagnose_in_child
from inspector.core.timeline import (
    DAMAGED,
    UNCHECKED,
    CharacterTimeline,
    JournalReplaced,
    SentinelState,
    summarize,
)
from journal import EventLog
from journal.diagnosis import EventInfo, SentinelInfo
from journal.reader import Defect, read_journal
from journal.views import read_sentinel
from tests.inspector.gui_fixtures import hand_diagnosis, write_character


def _event(i, line, offset, state="pending", entry=None):
    return EventInfo(i, line, offset, f"id-{i}", "reflection.evidence_updated", "2026-01-01T00:00:00", entry, state)


def test_glued_fragment_sorts_before_its_recovered_event_and_unknown_type_has_no_row(tmp_path):
    char = tmp_path / "c"
    char.mkdir()
    ok = b'{"event_id": "a", "type": "fact.added", "ts": "t", "payload": {}}\n'
    glued = b'{"event_id": "tor' + b'{"event_id": "b", "type": "fact.added", "ts": "t", "payload": {}}\n'
    odd = b'{"event_id": "c", "type": "weird.type", "ts": "t", "payload": {}}\n'
    (char / "events.ndjson").write_bytes(ok + glued + odd)
    tl = CharacterTimeline(hand_diagnosis(char))
    rows = [tl.row(r) for r in tl.refs]
    assert [type(r).__name__ for r in rows] == ["EventInfo", "Defect", "EventInfo", "EventInfo"]
    assert rows[1].kind == "glued" and rows[2].event_id == "b"
    assert [tl.state(r) for r in tl.refs] == ["pending", DAMAGED, "pending", "pending"]
    # check's counts: the unknown type is an event (no row of its own), the glued fragment one damaged line
    assert tl.counts["defects"] == 1 and tl.counts["pending"] == 3


def test_sentinel_state_counts_and_banner(tmp_path):
    char = write_character(tmp_path, applied=3, pending=2)
    tl = CharacterTimeline(hand_diagnosis(char))
    state = tl.sentinel_state()
    assert (state.state, state.index, state.counts["applied"], state.counts["pending"]) == ("ok", 2, 3, 2)
    assert state.counts_text() == "3 applied · 2 pending"
    assert state.banner_text() is None
    counts = {"applied": 0, "pending": 4, "blocked": 1, "orphaned": 0, "suspect": 0, "defects": 2}
    missing = SentinelState("missing", None, None, counts, 5)
    assert "missing" in missing.banner_text() and "first event" in missing.banner_text()
    # each state counted apart, in check's words (never "5 pending" for 4 pending and 1 blocked)
    assert missing.counts_text() == "0 applied · 4 pending · 1 blocked · 2 damaged"
    later = SentinelState("ok", "x", 3, counts, 5, unchecked=True)
    assert later.counts_text().endswith(f"· changed since: {UNCHECKED}")


def test_marker_position_in_full_and_filtered_rows(tmp_path):
    char = write_character(tmp_path, applied=3, pending=2)
    tl = CharacterTimeline(hand_diagnosis(char))
    assert tl.marker_position(tl.refs) == 2
    assert tl.marker_position([0, 1, 3, 4]) == 1  # the sentinel row is filtered out: under its predecessor
    assert tl.marker_position([3, 4]) == -1  # every row shown is after the sentinel: above the first


def test_a_moved_sentinel_marks_the_rows_it_can_change_not_yet_checked(tmp_path):
    """No state is worked out from a re-read sentinel: the re-diagnosis says what the rows are."""
    char = write_character(tmp_path, applied=2, pending=3)
    tl = CharacterTimeline(hand_diagnosis(char))
    ids = tl.events.event_ids()
    from journal.views import SentinelRead

    before = dict(tl.counts)
    assert tl.sentinel_moved(SentinelRead("ok", ids[3])) == 2  # after the earlier of the two sentinels
    assert [tl.state(r) for r in tl.refs] == ["applied", "applied", UNCHECKED, UNCHECKED, UNCHECKED]
    assert tl.counts == before and tl.sentinel.index == 1  # the diagnosis's, until the next one
    assert tl.sentinel_moved(SentinelRead("ok", ids[4])) is None  # nothing more to mark
    assert tl.sentinel_moved(SentinelRead("ok", "not-there")) == 0  # names no event: every row
    assert {tl.state(r) for r in tl.refs} == {UNCHECKED}
    fresh = hand_diagnosis(char, states={4: ("blocked", "no_handler")})
    assert tl.merge_diagnosis(fresh) == [0, 1, 2, 3, 4]
    assert [tl.state(r) for r in tl.refs] == ["applied", "applied", "pending", "pending", "blocked"]
    assert tl.counts == fresh.counts() and not tl.unchecked


def test_a_diagnosis_that_started_before_a_change_leaves_what_changed_unchecked(tmp_path):
    char = write_character(tmp_path, applied=2, pending=3)
    tl = CharacterTimeline(hand_diagnosis(char))
    from journal.views import SentinelRead

    started = tl.changes  # a re-diagnosis starts here...
    tl.sentinel_moved(SentinelRead("ok", tl.events.event_id(3)))  # ...and the sentinel moves while it runs
    tl.merge_diagnosis(hand_diagnosis(char), started)
    assert [tl.state(r) for r in tl.refs] == ["applied", "applied", UNCHECKED, UNCHECKED, UNCHECKED]
    assert tl.unchecked
    tl.merge_diagnosis(hand_diagnosis(char), tl.changes)  # the next one saw it
    assert [tl.state(r) for r in tl.refs] == ["applied", "applied", "pending", "pending", "pending"]
    assert not tl.unchecked


def test_append_replaces_a_completed_torn_tail(tmp_path):
    char = write_character(tmp_path, applied=2)
    with open(char / "events.ndjson", "ab") as fh:
        fh.write(b'{"event_id": "torn')
    tl = CharacterTimeline(hand_diagnosis(char))
    assert tl.row(tl.refs[-1]).kind == "torn_tail"
    torn_line = tl.row(tl.refs[-1]).line
    malformed = Defect("malformed", torn_line, 0, 5, "not valid JSON")
    new = _event(0, torn_line + 1, 999)
    removed, added = tl.append([malformed, new], 1000)
    assert removed is not None and removed < 0
    assert [tl.row(r).__class__.__name__ for r in added] == ["Defect", "EventInfo"]
    assert added[1] == 2 and tl.events.event_id(2) == "id-0"
    assert tl.live_size == 1000
    assert [tl.state(r) for r in added] == [UNCHECKED, UNCHECKED]  # counted nowhere
    assert tl.counts["pending"] == 0 and tl.counts["defects"] == 1  # the diagnosis's (its torn tail), until the next


def test_merge_diagnosis_updates_states_in_place(tmp_path):
    char = write_character(tmp_path, applied=3, pending=2)
    tl = CharacterTimeline(hand_diagnosis(char))
    fresh = hand_diagnosis(char, states={3: ("blocked", "no_handler"), 1: ("suspect", "view_differs")})
    changed = tl.merge_diagnosis(fresh)
    assert changed == [1, 3]
    assert tl.events[3].state == "blocked" and tl.events[3].reason == "no_handler"
    assert tl.counts == fresh.counts()
    assert tl.counts["blocked"] == 1 and tl.counts["suspect"] == 1 and tl.counts["applied"] == 2
    assert tl.diagnosis.events is tl.events and tl.diagnosis.findings == fresh.findings


def test_merge_a_delta_from_a_child_process_that_read_further(tmp_path):
    """The child may have read events the tail has not delivered yet: those are left alone."""
    char = write_character(tmp_path, applied=3)
    tl = CharacterTimeline(hand_diagnosis(char))
    log = EventLog(tmp_path)
    log.append("alice", "fact.added", {"id": "x"})  # no handler: blocked once diagnosed
    delta = diagnose_in_child(str(char), str(tmp_path), "alice", len(tl.events) - 1)
    assert delta.events == 4 and [e.index for e in delta.not_applied] == [3]
    assert tl.merge_diagnosis(delta) == []
    assert tl.sentinel.index == 2 and len(tl.events) == 3
    assert tl.counts == delta.counts and tl.counts["blocked"] == 1  # the diagnosis's counts, as it made them
    wrong = DiagnosisDelta.of(hand_diagnosis(char), 1)
    wrong.check_id = "someone-else"
    with pytest.raises(JournalReplaced):
        tl.merge_diagnosis(wrong)


def test_merge_diagnosis_of_another_journal_raises(tmp_path):
    a = write_character(tmp_path / "a", applied=3)
    b = write_character(tmp_path / "b", applied=3)
    tl = CharacterTimeline(hand_diagnosis(a))
    with pytest.raises(JournalReplaced):
        tl.merge_diagnosis(hand_diagnosis(b))


def test_find_events_by_id_prefix_and_index(tmp_path):
    char = write_character(tmp_path, applied=4)
    tl = CharacterTimeline(hand_diagnosis(char))
    ids = tl.events.event_ids()
    assert tl.find_events(ids[2]) == [2]
    assert tl.find_events(ids[3][:13]) == [3]
    assert tl.find_events("#1") == [1]
    assert tl.find_events("#99") == []
    assert tl.find_events("zzz") == []


def test_next_problem_wraps_and_skips_pending(tmp_path):
    char = write_character(tmp_path, applied=3, pending=3)
    tl = CharacterTimeline(hand_diagnosis(char, states={1: ("orphaned", "no_handler"), 4: ("blocked", "no_handler")}))
    refs = list(tl.refs)
    assert tl.next_problem(refs, -1, 1) == 1
    assert tl.next_problem(refs, 1, 1) == 4
    assert tl.next_problem(refs, 4, 1) == 1
    assert tl.next_problem(refs, 1, -1) == 4
    assert tl.next_problem([0, 2, 3], 0, 1) is None


def test_summaries_say_what_an_event_does_and_redact_text():
    evidence = {"reinforcement": 2.4, "sub_zero_days": 0, "source": "user_fact"}
    assert summarize("reflection.evidence_updated", evidence) == "rein 2.40 · sub-zero days 0 · (user_fact)"
    archived = {
        "reflection_id": "ref_1",
        "from": "promoted",
        "to": "archived",
        "archive_shard_path": "2026-05-01_0a1b2c3d.json",
        "entry_snapshot": {"id": "ref_1", "text": "Master likes tea"},
    }
    assert summarize("reflection.state_changed", archived) == (
        "promoted → archived “Master likes tea” → shard 2026-05-01_0a1b2c3d.json"
    )
    hidden = summarize("reflection.state_changed", archived, redact=True)
    assert "tea" not in hidden and "‹text · 16 chars" in hidden
    merge = {"merged_from_ids": ["a", "b"], "rewrite_text_sha256": "ab" * 32}
    assert summarize("persona.entry_updated", merge) == "merge on promote · 2 merged ids · new text sha256 abababab…"
    assert summarize("fact.added", [1, 2]) == "payload is a list, not an object"


def test_live_writer_rows_match_a_full_read(tmp_path):
    """The sentinel the live writer leaves resolves to the event it just appended."""
    char = write_character(tmp_path, applied=2)
    tl = CharacterTimeline(hand_diagnosis(char))
    EventLog(tmp_path).append("alice", "fact.added", {"id": "x"})
    ev = read_journal(char / "events.ndjson").events[-1]
    tl.append([EventInfo(0, ev.line, ev.offset, ev.event_id, ev.type, ev.ts, None)], 0)
    assert tl.sentinel_moved(read_sentinel(char)) is None  # it names an event already past the check
    assert tl.sentinel == SentinelInfo("ok", tl.events.event_id(1), 1)  # as the diagnosis found it
    assert tl.state(2) == UNCHECKED
    tl.merge_diagnosis(hand_diagnosis(char))
    assert tl.state(2) == "pending" and not tl.unchecked
