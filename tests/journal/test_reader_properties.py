"""Property-based tests of the reader: damaged journals never make it raise, invent or lose track.

Journals are random event lists encoded with :func:`journal.events.encode_event`, then damaged the
ways real files get damaged: truncated anywhere, torn and glued to the next record, bytes flipped,
runs of NUL bytes (a filesystem that lost the data of a crash), lines duplicated, CRLF endings, a
BOM. The reader must never raise, must never return an event that was not written, and must
locate every line that is not a clean event.

Byte flips come in two strengths. Flipping the high bit of a byte always breaks UTF-8 in these
files, so no flipped line can masquerade as a record and the "never invented" property holds
exactly. An arbitrary byte replacement can turn a record into a *different valid record* (one
uuid digit changed): no reader without checksums can tell, so for those only lines left intact
must give back exactly what was written.

Payload keys never include ``event_id``. A line torn right after a payload object that starts with
that key is refused, not recovered (the reader's glued-line rule: such an object could be held by
the record the line starts with). But once the same line is also damaged before that object,
outside any string (a flipped brace, a NUL run), nothing tells it from a record glued onto a torn
fragment; ``tests/hostile/test_reader_and_readers.py`` covers what can be told apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import (
    ALL_EVENT_TYPES,
    Defect,
    Event,
    JournalRead,
    encode_event,
    iter_journal,
    make_event,
    read_journal,
    reader,
)

BOM = b"\xef\xbb\xbf"

PROPERTY = settings(
    max_examples=1000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

keys = st.one_of(
    st.sampled_from(["id", "text", "type", "ts", "payload", "reinforcement", "entry_snapshot", "{", "}\n", "猫"]),
    st.text(max_size=4),
).filter(lambda k: k != "event_id")
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.sampled_from(["主人喜欢绿茶", '{"event_id": "x"}', "a\nb", "\r\n", "\x00", "}{", "\\", "\ufeff"]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(keys, scalars, max_size=2))
payloads = st.dictionaries(keys, st.one_of(values, st.dictionaries(keys, values, max_size=2)), max_size=3)
event_types = st.one_of(st.sampled_from(sorted(ALL_EVENT_TYPES)), st.sampled_from(["fact.exploded", "", "x"]))


@st.composite
def journals(draw: st.DrawFn) -> list[Event]:
    ids = draw(st.lists(st.uuids(version=4).map(str), min_size=1, max_size=8, unique=True))
    return [
        make_event(
            eid,
            draw(event_types),
            draw(st.sampled_from(["2026-04-23T12:00:00.123456", "", "2026-01-01T00:00:00"])),
            draw(payloads),
        )
        for eid in ids
    ]


def canonical(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True)


def written(events: list[Event]) -> set[tuple[str, str, str]]:
    return {(e.event_id, e.type, canonical(e.payload)) for e in events}


# -- damage: each takes hypothesis' draw and the journal bytes, returns the damaged bytes -------------


def split_lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def truncate(draw: st.DrawFn, data: bytes) -> bytes:
    return data[: draw(st.integers(0, len(data)))]


def tear_and_glue(draw: st.DrawFn, data: bytes) -> bytes:
    """Cut a line short and lose its newline, so the next record is glued onto the fragment."""
    lines = split_lines(data)
    if len(lines) < 2:
        return data
    i = draw(st.integers(0, len(lines) - 2))
    lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))] + lines.pop(i + 1)
    return b"\n".join(lines)


def flip_high_bit(draw: st.DrawFn, data: bytes) -> bytes:
    if not data:
        return data
    i = draw(st.integers(0, len(data) - 1))
    return data[:i] + bytes([data[i] ^ 0x80]) + data[i + 1 :]


def nul_run(draw: st.DrawFn, data: bytes) -> bytes:
    i = draw(st.integers(0, len(data)))
    run = b"\x00" * draw(st.integers(1, 64))
    if draw(st.booleans()):  # overwrite (lost data of a crash) ...
        return data[:i] + run[: max(0, len(data) - i)] + data[i + len(run) :]
    return data[:i] + run + data[i:]  # ... or inserted


def duplicate_line(draw: st.DrawFn, data: bytes) -> bytes:
    lines = split_lines(data)
    src = draw(st.integers(0, len(lines) - 1))
    dst = draw(st.integers(0, len(lines) - 1))
    lines.insert(dst, lines[src])
    return b"\n".join(lines)


def crlf(draw: st.DrawFn, data: bytes) -> bytes:
    lines = split_lines(data)
    chosen = draw(st.sets(st.integers(0, max(0, len(lines) - 2))))
    return b"\n".join(line + b"\r" if i in chosen else line for i, line in enumerate(lines))


def bom(_draw: st.DrawFn, data: bytes) -> bytes:
    return BOM + data


def blank_lines(draw: st.DrawFn, data: bytes) -> bytes:
    lines = split_lines(data)
    lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from([b"", b"  ", b"\t", b"\r"])))
    return b"\n".join(lines)


STRICT_DAMAGE = [truncate, tear_and_glue, flip_high_bit, nul_run, duplicate_line, crlf, bom, blank_lines]


@st.composite
def damaged(draw: st.DrawFn, damage: list[Any]) -> tuple[list[Event], bytes]:
    events = draw(journals())
    data = b"".join(encode_event(e) for e in events)
    for mutate in draw(st.lists(st.sampled_from(damage), min_size=1, max_size=4)):
        data = mutate(draw, data)
    return events, data


@st.composite
def replaced_bytes(draw: st.DrawFn) -> tuple[list[Event], bytes]:
    events = draw(journals())
    data = bytearray(b"".join(encode_event(e) for e in events))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(data) - 1))
        data[i] = draw(st.integers(0, 255))
    return events, bytes(data)


# -- the invariants ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def journal_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file per module, rewritten by every example (a fresh folder per example is slow)."""
    return tmp_path_factory.mktemp("properties") / "events.ndjson"


def read_bytes(path: Path, data: bytes) -> JournalRead:
    path.write_bytes(data)
    return read_journal(path)


def check_located(data: bytes, result: JournalRead) -> None:
    """Every defect and event sits on a real line; every non-blank, non-clean line has a defect."""
    lines = split_lines(data)
    if lines[-1] == b"":
        lines.pop()  # the file ends with a newline: no empty last line
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    n = len(lines)
    assert result.lines == n
    assert result.size == len(data)

    defect_lines: dict[int, list[Defect]] = {}
    for d in result.defects:
        assert 1 <= d.line <= n, d
        assert d.offset == starts[d.line - 1], d
        assert d.length == len(lines[d.line - 1]), d
        defect_lines.setdefault(d.line, []).append(d)
    assert [d.line for d in result.defects] == sorted(d.line for d in result.defects)

    event_lines: dict[int, list[Event]] = {}
    for e in result.events:
        assert 1 <= e.line <= n, e
        assert starts[e.line - 1] <= e.offset < starts[e.line - 1] + len(lines[e.line - 1]), e
        event_lines.setdefault(e.line, []).append(e)
    assert [e.line for e in result.events] == sorted(e.line for e in result.events)
    ids = [e.event_id for e in result.events]
    assert len(ids) == len(set(ids)), "an event id returned twice"

    for number, line in enumerate(lines, start=1):
        body = line[3:] if line.startswith(BOM) else line
        on_line = event_lines.get(number, [])
        assert len(on_line) <= 1
        if number in defect_lines:
            continue
        if not body.strip():
            assert on_line == [], f"blank line {number} produced an event"
            continue
        # No defect: the line must be one clean record of a declared type, read from its start.
        assert len(on_line) == 1, f"line {number} is neither an event nor a defect: {line!r}"
        [event] = on_line
        record = json.loads(body)
        assert isinstance(record, dict)
        assert record["event_id"] == event.event_id
        assert record.get("type") == event.type and event.type in ALL_EVENT_TYPES
        assert event.offset == starts[number - 1] + (len(line) - len(body))
        assert canonical(record.get("payload") or {}) == canonical(event.payload)


@PROPERTY
@given(case=damaged(STRICT_DAMAGE))
def test_damaged_journals_never_raise_never_invent_and_locate_every_defect(journal_path, case):
    events, data = case
    result = read_bytes(journal_path, data)
    assert result.present and result.error is None
    check_located(data, result)
    allowed = written(events)
    for e in result.events:
        assert (e.event_id, e.type, canonical(e.payload)) in allowed, f"invented event {e}"


@PROPERTY
@given(case=replaced_bytes())
def test_arbitrary_byte_damage_never_raises_and_intact_lines_read_back_exactly(journal_path, case):
    events, data = case
    result = read_bytes(journal_path, data)
    check_located(data, result)
    original = {encode_event(e)[:-1]: e for e in events}
    for e in result.events:
        source = split_lines(data)[e.line - 1]
        if source in original:
            expected = original[source]
            assert (e.event_id, e.type, canonical(e.payload)) == (
                expected.event_id,
                expected.type,
                canonical(expected.payload),
            )


@PROPERTY
@given(case=damaged(STRICT_DAMAGE), chunk_size=st.integers(1, 600), batch=st.integers(1, 400))
def test_reading_in_chunks_and_batches_of_any_size_gives_the_same_result(journal_path, case, chunk_size, batch):
    # The reader parses lines in batches of about reader._BATCH bytes; shrink it so these small
    # journals are cut into many batches, at every place, and compare with one whole-file read.
    _, data = case
    journal_path.write_bytes(data)
    whole = read_journal(journal_path)
    events: list[Event] = []
    defects: list[Defect] = []
    with mock.patch.object(reader, "_BATCH", batch):
        for ev, de in iter_journal(journal_path, chunk_size=chunk_size):
            events.extend(ev)
            defects.extend(de)
        batched = read_journal(journal_path)
    assert events == whole.events
    assert defects == whole.defects
    assert (batched.events, batched.defects) == (whole.events, whole.defects)


@PROPERTY
@given(events=journals())
def test_an_undamaged_journal_reads_back_exactly_with_no_defects(journal_path, events):
    data = b"".join(encode_event(e) for e in events)
    result = read_bytes(journal_path, data)
    assert result.defects == [d for d in result.defects if d.kind == "unknown_type"]
    assert [(e.event_id, e.type, e.ts, canonical(e.payload)) for e in result.events] == [
        (e.event_id, e.type, e.ts, canonical(e.payload)) for e in events
    ]
    assert {d.event_id for d in result.defects} == {e.event_id for e in events if e.type not in ALL_EVENT_TYPES}
