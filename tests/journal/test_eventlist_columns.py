"""The diagnosis's :class:`EventList` keeps its events by column (ids, type codes, packed ``ts``,
runs of lines, offsets): every event and every column reads back exactly what went in, however
the events arrive (the reader's batches, single appends, replacements), against a plain list of
the same :class:`EventInfo` values."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journal.diagnosis.eventlist import EventList
from journal.diagnosis.scan import scan_journal
from journal.diagnosis.states import EVENT_STATES, EventInfo
from journal.events import KEYED_TYPES, EntryKeys, EventSummary, encode_event, make_event
from journal.handlers import entry_ref
from journal.reader import JournalScanner

_TYPES = st.sampled_from(
    ["reflection.evidence_updated", "persona.entry_updated", "reflection.state_changed", "x.undeclared", ""]
)
_TS = st.one_of(st.just(""), st.just("2026-01-01T10:00:00.123456"), st.text(max_size=12))


@st.composite
def _infos(draw: st.DrawFn) -> list[EventInfo]:
    n = draw(st.integers(0, 40))
    line, offset, out = 0, 0, []
    for i in range(n):
        line += draw(st.sampled_from([1, 1, 1, 2, 5]))  # runs of consecutive lines, and gaps
        offset += draw(st.integers(1, 500))
        out.append(
            EventInfo(
                i,
                line if draw(st.integers(0, 20)) else 0,  # a line out of order now and then
                offset,
                draw(st.text(min_size=1, max_size=8)),
                draw(_TYPES),
                draw(_TS),
                draw(st.one_of(st.none(), st.sampled_from(["ref_a", "neko/p_1"]))),
                draw(st.sampled_from(EVENT_STATES)),
                draw(st.one_of(st.none(), st.just("no_handler"))),
            )
        )
    return out


def _columns(ev: EventList) -> tuple[list[object], ...]:
    n = len(ev)
    return (
        ev.event_ids(),
        ev.types(),
        [ev.ts(i) for i in range(n)],
        ev.lines(),
        ev.offsets(),
        [ev.line(i) for i in range(n)],
        [ev.type(i) for i in range(n)],
    )


def _expected(infos: list[EventInfo]) -> tuple[list[object], ...]:
    return (
        [e.event_id for e in infos],
        [e.type for e in infos],
        [e.ts for e in infos],
        [e.line for e in infos],
        [e.offset for e in infos],
        [e.line for e in infos],
        [e.type for e in infos],
    )


@settings(max_examples=200, deadline=None)
@given(_infos(), st.data())
def test_columns_read_back_what_went_in(infos: list[EventInfo], data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(infos)))
    ev = EventList(infos[:cut])
    for info in infos[cut:]:
        ev.append(info)
    assert list(ev) == infos
    assert _columns(ev) == _expected(infos)
    assert [d["line"] for d in ev.iter_json()] == [e.line for e in infos]
    if infos:
        j = data.draw(st.integers(0, len(infos) - 1))
        other = data.draw(_infos())
        if other:
            new = dataclasses.replace(other[0], index=j)
            ev[j] = new
            want = [*infos[:j], new, *infos[j + 1 :]]
            assert list(ev) == want
            assert _columns(ev) == _expected(want)
    again = pickle.loads(pickle.dumps(ev))  # the re-diagnosis child sends it back this way
    assert list(again) == list(ev)


def test_the_reader_batches_read_back_as_the_reader_made_them(tmp_path: Path) -> None:
    """A journal with blank and damaged lines between its records, several reads long: each
    event's id, type, ts, line, offset and entry are the reader's; only archive and merge events
    (of the types whose keys say more than their entry) keep their keys."""
    lines = []
    for i in range(3000):
        etype = ("reflection.evidence_updated", "persona.entry_updated", "reflection.state_changed")[i % 3]
        payload: dict[str, object] = {"reflection_id": f"r{i % 7}", "entity_key": "neko", "entry_id": f"p{i % 5}"}
        if i % 97 == 0:
            payload["archive_shard_path"] = "2026-01-01_0000abcd.json"
        ts = "" if i % 11 == 0 else f"2026-01-01T10:00:{i % 60:02d}.{i:06d}" + ("é" if i % 13 == 0 else "")
        lines.append(encode_event(make_event(f"id-{i}", etype, ts, payload)))
        if i % 400 == 0:
            lines.append(b"\n" if i % 800 else b"{torn\n")
    path = tmp_path / "events.ndjson"
    path.write_bytes(b"".join(lines))
    records = []
    with path.open("rb") as fh:
        for events, _ in JournalScanner(summaries=True).read_file(fh, 64 << 10):
            records += events
    ev = scan_journal(path).events
    assert len(ev) == len(records) == 3000
    for i, rec in enumerate(records):
        assert (ev.event_id(i), ev.type(i), ev.ts(i), ev.line(i), ev.offset(i)) == (
            rec.event_id,
            rec.type,
            rec.ts,
            rec.line,
            rec.offset,
        )
        assert ev.entries[i] == entry_ref(rec.type, rec.keys)
        kept = rec.type in KEYED_TYPES and rec.keys.archive_shard_path is not None
        assert ev.keys(i) == (rec.keys if kept else EntryKeys())
        assert ev.record(i) == EventSummary(rec.event_id, rec.type, rec.ts, ev.keys(i), rec.line, rec.offset)
    # Keys are kept for the types whose keys say more than their entry (reflection.state_changed).
    assert [i for i, _ in ev.kept_keys()] == [i for i in range(3000) if i % 97 == 0 and i % 3 == 2]
    assert ev.lines() == [r.line for r in records]


_VALUES = st.one_of(
    st.none(), st.just(""), st.text(max_size=6), st.integers(), st.booleans(), st.lists(st.integers(), max_size=2)
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["reflection.evidence_updated", "reflection.", "persona.entry_updated", "persona", "x.y", ""]),
    st.dictionaries(st.sampled_from(["reflection_id", "entity_key", "entry_id", "to", "other"]), _VALUES),
)
def test_entry_ref_names_one_entry_from_a_payload_and_from_its_keys(etype: str, payload: dict[str, object]) -> None:
    """The diagnosis asks :func:`entry_ref` with the decoded :class:`EntryKeys` (read as
    attributes), the window with the parsed payload (read with ``get``): one rule, same answer."""
    assert entry_ref(etype, EntryKeys.of(payload)) == entry_ref(etype, payload)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.just("2026-01-01T10:00:00.123456"),
            st.just("2026-01-01T10:00:01.000001"),
            st.just(""),
            st.text(max_size=30),
        ),
        max_size=60,
    ),
    st.data(),
)
def test_ts_read_back_from_batches_of_equal_and_of_unequal_lengths(ts: list[str], data: st.DataObject) -> None:
    """The reader's batches keep ``ts`` packed, by one length where a batch's are all as long
    (a batch of writers' timestamps, or of empty ones) and by where each ends where they are not:
    each reads back as it went in, and so does one replaced after it was packed."""
    records = [
        EventSummary(f"id-{i}", "reflection.evidence_updated", t, EntryKeys(), i + 1, i) for i, t in enumerate(ts)
    ]
    ev = EventList()
    pos = 0
    while pos < len(records):
        step = data.draw(st.integers(1, 12))
        ev.take_records(records[pos : pos + step])
        pos += step
    assert [ev.ts(i) for i in range(len(ts))] == ts
    assert [e.ts for e in ev] == ts
    if ts:
        j = data.draw(st.integers(0, len(ts) - 1))
        ev[j] = dataclasses.replace(ev[j], ts="changed")
        assert [ev.ts(i) for i in range(len(ts))] == [*ts[:j], "changed", *ts[j + 1 :]]
        assert ev.ts(-1) == ev[len(ts) - 1].ts
    with pytest.raises(IndexError):
        ev.ts(len(ts))


def test_ts_of_unequal_lengths_that_add_up_as_if_equal_read_back() -> None:
    """A batch whose lengths differ but add up to the first one's times their number (1 + 2 + 0)."""
    ts = ["a", "bc", "", "2026-01-01T10:00:00.123456"]
    ev = EventList()
    ev.take_records([EventSummary(f"id-{i}", "x.y", t, EntryKeys(), i + 1, i) for i, t in enumerate(ts[:3])])
    ev.take_records([EventSummary("id-3", "x.y", ts[3], EntryKeys(), 4, 3)])
    assert [ev.ts(i) for i in range(4)] == ts
