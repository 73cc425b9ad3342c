"""journal.reader: located defects, tolerated encodings, incremental tailing, reading backwards."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from journal import (
    DEFECT_KINDS,
    Event,
    JournalScanner,
    JournalTail,
    encode_event,
    iter_journal,
    last_event_id,
    make_event,
    read_journal,
)

BOM = b"\xef\xbb\xbf"


def rec(eid: str, etype: str = "reflection.evidence_updated", **payload: object) -> bytes:
    return encode_event(make_event(eid, etype, "2026-04-23T12:00:00.123456", dict(payload) or {"n": 1}))


def starts(data: bytes) -> list[int]:
    """Byte offset of every physical line."""
    out = [0]
    for piece in data.split(b"\n")[:-1]:
        out.append(out[-1] + len(piece) + 1)
    return out


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "events.ndjson"
    path.write_bytes(data)
    return path


# -- every defect kind, located --------------------------------------------------------------------


def test_defect_kinds_are_the_closed_set():
    assert DEFECT_KINDS == (
        "malformed",
        "torn_tail",
        "glued",
        "not_object",
        "missing_event_id",
        "duplicate_event_id",
        "unknown_type",
        "invalid_utf8",
    )


def test_every_defect_kind_is_reported_with_its_exact_line_and_offset(tmp_path):
    a, b, c = rec("id-a"), rec("id-b", n=2), rec("id-c", n=3)
    lines = [
        a,  # 1 clean
        b"this is not json\n",  # 2 malformed
        b"[1, 2, 3]\n",  # 3 not_object
        b'{"type": "fact.added", "payload": {}}\n',  # 4 missing_event_id
        a,  # 5 duplicate_event_id
        rec("id-u", "fact.exploded"),  # 6 unknown_type (still an event)
        b'{"event_id": "id-x", "text": "\xff\xfe"}\n',  # 7 invalid_utf8
        rec("id-t")[:41] + b,  # 8 glued: a torn fragment with an intact record after it
        b"\n",  # 9 blank
        c,  # 10 clean
        rec("id-z")[:30],  # 11 torn_tail (no newline)
    ]
    data = b"".join(lines)
    at = [*starts(data), len(data) - len(lines[-1])]
    result = read_journal(write(tmp_path, data))

    got = [(d.kind, d.line, d.offset, d.length) for d in result.defects]
    assert got == [
        ("malformed", 2, at[1], len(lines[1]) - 1),
        ("not_object", 3, at[2], len(lines[2]) - 1),
        ("missing_event_id", 4, at[3], len(lines[3]) - 1),
        ("duplicate_event_id", 5, at[4], len(a) - 1),
        ("unknown_type", 6, at[5], len(lines[5]) - 1),
        ("invalid_utf8", 7, at[6], len(lines[6]) - 1),
        ("glued", 8, at[7], len(lines[7]) - 1),
        ("torn_tail", 11, at[10], len(lines[10])),
    ]
    by_kind = {d.kind: d for d in result.defects}
    assert by_kind["duplicate_event_id"].event_id == "id-a"
    assert by_kind["unknown_type"].event_id == "id-u"
    assert by_kind["glued"].recovered_event_id == "id-b"
    assert set(by_kind) == set(DEFECT_KINDS)

    assert [(e.event_id, e.line, e.offset) for e in result.events] == [
        ("id-a", 1, 0),
        ("id-u", 6, at[5]),
        ("id-b", 8, at[7] + 41),  # the recovered record starts right after the fragment
        ("id-c", 10, at[9]),
    ]
    assert result.events[1].type == "fact.exploded"
    assert result.events[2].payload == {"n": 2}
    assert result.lines == 11
    assert result.size == len(data)
    assert result.present and result.error is None


def test_invalid_utf8_offset_message_names_the_bad_byte(tmp_path):
    result = read_journal(write(tmp_path, b'{"event_id": "x", "t": "ab\xc3"}\n'))
    [defect] = result.defects
    assert defect.kind == "invalid_utf8"
    assert "byte 26" in defect.message


def test_unknown_type_covers_a_missing_or_non_string_type(tmp_path):
    data = b'{"event_id": "e1", "payload": {}}\n{"event_id": "e2", "type": 7, "payload": {}}\n'
    result = read_journal(write(tmp_path, data))
    assert [(d.kind, d.line, d.event_id) for d in result.defects] == [
        ("unknown_type", 1, "e1"),
        ("unknown_type", 2, "e2"),
    ]
    assert [(e.event_id, e.type) for e in result.events] == [("e1", ""), ("e2", "")]


@pytest.mark.parametrize("value", [b'""', b"null", b"12", b"[]"])
def test_an_empty_or_non_string_event_id_is_missing(tmp_path, value):
    data = b'{"event_id": ' + value + b', "type": "fact.added", "ts": "t", "payload": {}}\n'
    result = read_journal(write(tmp_path, data))
    assert [(d.kind, d.line, d.offset) for d in result.defects] == [("missing_event_id", 1, 0)]
    assert result.events == []


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (b'"just a string"', "not_object"),
        (b"null", "not_object"),
        (b"{", "malformed"),
        (b'{"event_id": "a",}', "malformed"),
    ],
)
def test_small_damage_cases(tmp_path, line, kind):
    data = rec("ok") + line + b"\n"
    result = read_journal(write(tmp_path, data))
    assert [(d.kind, d.line, d.offset) for d in result.defects] == [(kind, 2, len(rec("ok")))]


def test_a_duplicate_id_keeps_the_first_copy_only(tmp_path):
    first, second = rec("same", n=1), rec("same", n=2)
    result = read_journal(write(tmp_path, first + second))
    assert [(e.event_id, e.payload) for e in result.events] == [("same", {"n": 1})]
    assert [(d.kind, d.line, d.offset) for d in result.defects] == [("duplicate_event_id", 2, len(first))]


def test_a_glued_line_whose_record_is_a_duplicate_reports_both_at_the_line_start(tmp_path):
    a = rec("id-a")
    data = a + rec("id-t")[:20] + a
    result = read_journal(write(tmp_path, data))
    assert [(d.kind, d.line, d.offset) for d in result.defects] == [
        ("glued", 2, len(a)),
        ("duplicate_event_id", 2, len(a)),
    ]
    assert [e.event_id for e in result.events] == ["id-a"]


def test_defects_of_a_line_starting_with_a_bom_are_located_at_the_line_start(tmp_path):
    lines = [BOM + rec("id-u", "fact.exploded"), BOM + rec("id-u"), BOM + b"[1]\n", BOM + b"{}\n"]
    at = starts(b"".join(lines))
    result = read_journal(write(tmp_path, b"".join(lines)))
    assert [(d.kind, d.line, d.offset) for d in result.defects] == [
        ("unknown_type", 1, at[0]),
        ("duplicate_event_id", 2, at[1]),
        ("not_object", 3, at[2]),
        ("missing_event_id", 4, at[3]),
    ]
    assert [(e.event_id, e.offset) for e in result.events] == [("id-u", 3)]


def test_a_torn_fragment_after_a_complete_record_is_a_torn_tail_and_the_record_survives(tmp_path):
    a = rec("id-a")
    result = read_journal(write(tmp_path, a + a[:17]))
    assert [e.event_id for e in result.events] == ["id-a"]
    assert [(d.kind, d.line, d.offset, d.length) for d in result.defects] == [("torn_tail", 2, len(a), 17)]


def test_a_complete_last_record_without_its_newline_is_still_read(tmp_path):
    a = rec("id-a")
    result = read_journal(write(tmp_path, a[:-1]))
    assert [e.event_id for e in result.events] == ["id-a"]
    assert result.defects == []


# -- tolerated encodings -----------------------------------------------------------------------------


def test_a_leading_bom_is_tolerated(tmp_path):
    data = BOM + rec("id-a") + rec("id-b")
    result = read_journal(write(tmp_path, data))
    assert result.defects == []
    assert [(e.event_id, e.line, e.offset) for e in result.events] == [
        ("id-a", 1, 3),
        ("id-b", 2, len(BOM + rec("id-a"))),
    ]


def test_crlf_line_endings_are_tolerated_and_offsets_count_the_cr(tmp_path):
    lines = [rec("id-a").replace(b"\n", b"\r\n"), rec("id-b").replace(b"\n", b"\r\n")]
    result = read_journal(write(tmp_path, b"".join(lines)))
    assert result.defects == []
    assert [(e.event_id, e.line, e.offset) for e in result.events] == [("id-a", 1, 0), ("id-b", 2, len(lines[0]))]


def test_blank_lines_are_counted_but_are_not_defects(tmp_path):
    data = b"\n" + rec("id-a") + b"   \n\r\n\t\n" + rec("id-b") + b"\n"
    result = read_journal(write(tmp_path, data))
    assert result.defects == []
    assert [(e.event_id, e.line) for e in result.events] == [("id-a", 2), ("id-b", 6)]
    assert result.lines == 7


def test_nan_and_infinity_written_by_python_are_accepted(tmp_path):
    data = rec("id-a", score=float("nan"), hi=float("inf"), lo=float("-inf"))
    assert b"NaN" in data and b"Infinity" in data
    result = read_journal(write(tmp_path, data))
    assert result.defects == []
    [event] = result.events
    assert math.isnan(event.payload["score"])
    assert event.payload["hi"] == math.inf and event.payload["lo"] == -math.inf


@pytest.mark.parametrize("n", [2**70 + 1, -(2**63) - 1, 2**64, -(10**30) - 7, 2**63 - 1, -(2**63)])
def test_integers_read_exactly_as_python_json_reads_them_even_beyond_64_bits(tmp_path, n):
    # orjson alone would return a float for the ones outside the 64-bit range.
    data = rec("id-a", n=n, x=0.1) + rec("id-b", n=n)
    result = read_journal(write(tmp_path, data))
    assert result.defects == []
    assert [e.payload for e in result.events] == [{"n": n, "x": 0.1}, {"n": n}]
    assert all(type(e.payload["n"]) is int for e in result.events)


def test_a_glued_big_integer_record_is_recovered_exactly(tmp_path):
    data = rec("id-t")[:20] + rec("id-a", n=-(2**63) - 1)
    result = read_journal(write(tmp_path, data))
    assert result.events[0].payload == {"n": -(2**63) - 1}


def test_a_null_payload_reads_as_an_empty_object(tmp_path):
    data = b'{"event_id": "e", "type": "fact.added", "ts": "t", "payload": null}\n'
    [event] = read_journal(write(tmp_path, data)).events
    assert event.payload == {}


def test_missing_and_unreadable_journals_do_not_raise(tmp_path):
    missing = read_journal(tmp_path / "nope.ndjson")
    assert (missing.present, missing.error, missing.events, missing.defects) == (False, None, [], [])
    folder = tmp_path / "dir.ndjson"
    folder.mkdir()
    unreadable = read_journal(folder)
    assert unreadable.error is not None and "dir.ndjson" in unreadable.error


def test_chunked_reading_gives_the_same_result_at_every_chunk_size(tmp_path):
    data = (
        BOM
        + rec("id-a")
        + b"junk\n"
        + rec("id-b").replace(b"\n", b"\r\n")
        + rec("id-t")[:25]
        + rec("id-c")
        + b"\n"
        + rec("id-a")
        + rec("id-d")[:33]
    )
    path = write(tmp_path, data)
    whole = read_journal(path)
    for size in (1, 2, 7, 64, 1000):
        events, defects = [], []
        for ev, de in iter_journal(path, chunk_size=size):
            events.extend(ev)
            defects.extend(de)
        assert events == whole.events, size
        assert defects == whole.defects, size
    assert [d.kind for d in whole.defects] == ["malformed", "glued", "duplicate_event_id", "torn_tail"]


def test_scanner_fed_byte_by_byte_matches_a_whole_read(tmp_path):
    data = rec("id-a") + b"{bad\n" + rec("id-b") + rec("id-c")[:10]
    whole = read_journal(write(tmp_path, data))
    scanner = JournalScanner()
    events: list[Event] = []
    defects: list = []
    for i in range(len(data)):
        scanner.feed(data[i : i + 1], events, defects)
    assert scanner.pending_bytes == 10
    scanner.finish(events, defects)
    assert (events, defects) == (whole.events, whole.defects)
    assert scanner.offset == len(data)


# -- JournalTail ---------------------------------------------------------------------------------------


def test_tail_of_a_missing_journal_is_empty_and_not_a_reset(tmp_path):
    tail = JournalTail(tmp_path / "events.ndjson")
    update = tail.poll()
    assert (update.reset, update.present, update.events, update.defects, update.size) == (False, False, [], [], 0)


def test_tail_reads_only_bytes_appended_since_the_last_poll(tmp_path):
    path = write(tmp_path, rec("id-a") + rec("id-b"))
    tail = JournalTail(path)
    first = tail.poll()
    assert [e.event_id for e in first.events] == ["id-a", "id-b"]
    assert first.size == path.stat().st_size

    # Overwrite the already-consumed bytes in place (same file, same size): a reader that
    # re-read from the start would now report defects. Then append one record.
    consumed = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.write(b"X" * consumed)
    with open(path, "ab") as fh:
        fh.write(rec("id-c"))
    second = tail.poll()
    assert second.reset is False
    assert second.defects == []
    assert [(e.event_id, e.line, e.offset) for e in second.events] == [("id-c", 3, consumed)]
    assert tail.lines == 3

    third = tail.poll()
    assert (third.events, third.defects, third.reset) == ([], [], False)


def test_tail_started_at_an_offset_reads_only_later_lines_and_still_detects_truncation(tmp_path):
    first = rec("id-a") + rec("id-b")
    path = write(tmp_path, first)
    with open(path, "ab") as fh:
        fh.write(rec("id-c"))
    tail = JournalTail(path, offset=len(first), line=2)
    update = tail.poll()
    assert update.reset is False
    assert [(e.event_id, e.line, e.offset) for e in update.events] == [("id-c", 3, len(first))]
    assert tail.lines == 3

    path.write_bytes(rec("id-z"))  # same inode, shorter than what was consumed
    again = tail.poll()
    assert again.reset is True
    assert [(e.event_id, e.line, e.offset) for e in again.events] == [("id-z", 1, 0)]


def test_tail_holds_back_an_unterminated_line_until_its_newline_arrives(tmp_path):
    c = rec("id-c")
    path = write(tmp_path, rec("id-a") + c[:20])
    tail = JournalTail(path)
    update = tail.poll()
    assert [e.event_id for e in update.events] == ["id-a"]
    assert update.defects == []  # no torn_tail for a line a writer may still be writing
    assert update.size == len(rec("id-a"))

    with open(path, "ab") as fh:
        fh.write(c[20:-1])  # everything but the newline
    assert tail.poll().events == []

    with open(path, "ab") as fh:
        fh.write(b"\n")
    update = tail.poll()
    assert [(e.event_id, e.line, e.offset) for e in update.events] == [("id-c", 2, len(rec("id-a")))]
    assert update.defects == []


def test_tail_reports_reset_on_truncation_and_rereads_from_the_start(tmp_path):
    path = write(tmp_path, rec("id-a") + rec("id-b"))
    tail = JournalTail(path)
    tail.poll()
    with open(path, "r+b") as fh:
        fh.truncate(len(rec("id-a")))
    update = tail.poll()
    assert update.reset is True
    assert [(e.event_id, e.line, e.offset) for e in update.events] == [("id-a", 1, 0)]
    assert tail.poll().reset is False


def test_tail_reports_reset_when_the_file_is_replaced_by_a_new_one(tmp_path):
    path = write(tmp_path, rec("id-a"))
    tail = JournalTail(path)
    tail.poll()
    replacement = tmp_path / "new.ndjson"
    replacement.write_bytes(rec("seed-1") + rec("seed-2"))  # larger than what was consumed
    os.replace(replacement, path)
    update = tail.poll()
    assert update.reset is True
    assert [(e.event_id, e.line, e.offset) for e in update.events] == [
        ("seed-1", 1, 0),
        ("seed-2", 2, len(rec("seed-1"))),
    ]


def test_tail_reports_reset_when_the_file_disappears(tmp_path):
    path = write(tmp_path, rec("id-a"))
    tail = JournalTail(path)
    tail.poll()
    path.unlink()
    update = tail.poll()
    assert (update.reset, update.present) == (True, False)
    path.write_bytes(rec("id-b"))
    update = tail.poll()
    assert [e.event_id for e in update.events] == ["id-b"]


def test_tail_detects_duplicates_across_polls(tmp_path):
    path = write(tmp_path, rec("id-a"))
    tail = JournalTail(path)
    tail.poll()
    with open(path, "ab") as fh:
        fh.write(rec("id-a"))
    update = tail.poll()
    assert [(d.kind, d.line) for d in update.defects] == [("duplicate_event_id", 2)]


def test_tail_with_max_bytes_reads_in_steps(tmp_path):
    data = rec("id-a") + rec("id-b") + rec("id-c")
    path = write(tmp_path, data)
    tail = JournalTail(path)
    seen = []
    for _ in range(len(data)):
        seen.extend(e.event_id for e in tail.poll(max_bytes=50).events)
    assert seen == ["id-a", "id-b", "id-c"]


# -- last_event_id -------------------------------------------------------------------------------------


def test_last_event_id_of_a_missing_or_empty_journal_is_known_to_be_none(tmp_path):
    assert last_event_id(tmp_path / "missing.ndjson") == (True, None)
    assert last_event_id(write(tmp_path, b"")) == (True, None)
    assert last_event_id(write(tmp_path, b"\n\n  \n")) == (True, None)
    assert last_event_id(write(tmp_path, b"junk\n[1]\n")) == (True, None)


def test_last_event_id_is_the_last_complete_record(tmp_path):
    assert last_event_id(write(tmp_path, rec("id-a") + rec("id-b"))) == (True, "id-b")
    assert last_event_id(write(tmp_path, rec("id-a") + rec("id-b") + b"\n\n")) == (True, "id-b")


def test_last_event_id_skips_a_torn_tail(tmp_path):
    assert last_event_id(write(tmp_path, rec("id-a") + rec("id-b") + rec("id-c")[:30])) == (True, "id-b")


def test_last_event_id_skips_junk_after_the_last_record(tmp_path):
    assert last_event_id(write(tmp_path, rec("id-a") + b"junk\n[1]\n" + b'{"no": "id"}\n')) == (True, "id-a")


def test_last_event_id_recovers_the_record_of_a_glued_last_line(tmp_path):
    data = rec("id-a") + rec("id-b")[:40] + rec("id-c")
    assert last_event_id(write(tmp_path, data)) == (True, "id-c")


def test_last_event_id_counts_a_crlf_or_unknown_type_record(tmp_path):
    assert last_event_id(write(tmp_path, rec("id-a").replace(b"\n", b"\r\n"))) == (True, "id-a")
    assert last_event_id(write(tmp_path, rec("id-a") + rec("id-u", "fact.exploded"))) == (True, "id-u")


def test_last_event_id_finds_a_record_far_before_the_end(tmp_path):
    # The only record is at the start; 200 KB of junk follow. The answer is exact, however far
    # back the last record is (the old backwards reader, bounded, had to say "unknown" here).
    junk = b"x" * 99 + b"\n"
    path = write(tmp_path, rec("id-a") + junk * 2_000)
    assert last_event_id(path) == (True, "id-a")


def test_last_event_id_finds_the_end_of_a_long_journal(tmp_path):
    body = b"".join(rec(f"id-{n}") for n in range(3_000))
    path = write(tmp_path, body + rec("id-last")[:50])
    assert last_event_id(path) == (True, "id-2999")


# -- many lines at once: the reader parses lines in batches; a batch must never change a result ------


def line_by_line(data: bytes) -> tuple[list[Event], list]:
    """The reference: each line fed alone, so each is classified on its own."""
    scanner = JournalScanner()
    events: list[Event] = []
    defects: list = []
    for piece in data.split(b"\n")[:-1]:
        scanner.feed(piece + b"\n", events, defects)
    scanner.feed(data[data.rfind(b"\n") + 1 :], events, defects)
    scanner.finish(events, defects)
    return events, defects


def test_lines_that_only_parse_together_are_not_read_as_records(tmp_path):
    # Joined with commas these three lines are three valid objects (A spans lines 1-2 and line 3
    # holds two): a batch parse must not be fooled into three clean events.
    head = b'{"event_id": "id-%s", "type": "fact.added", "ts": "t", "payload": '
    data = (
        head % b"A" + b"[{}\n"
        + b"{}]}\n"
        + head % b"B" + b"{}}, " + head % b"C" + b"{}}\n"
        + rec("id-d")
    )  # fmt: skip
    result = read_journal(write(tmp_path, data))
    assert [(d.kind, d.line) for d in result.defects] == [("malformed", 1), ("malformed", 2), ("glued", 3)]
    assert [e.event_id for e in result.events] == ["id-C", "id-d"]
    assert (result.events, result.defects) == line_by_line(data)


def test_a_big_integer_deep_inside_a_large_batch_is_read_exactly(tmp_path):
    lines = [rec(f"id-{n}", n=n, h="9e4a0d88cdae7f9d7a73322a59c5517c") for n in range(2_000)]
    lines[1_234] = rec("id-big", n=-(2**63) - 1)
    lines[1_500] = rec("id-str", s="12345678901234567890123")  # 19+ digits inside a string only
    result = read_journal(write(tmp_path, b"".join(lines)))
    assert result.defects == []
    by_id = {e.event_id: e for e in result.events}
    assert by_id["id-big"].payload == {"n": -(2**63) - 1} and by_id["id-big"].line == 1_235
    assert by_id["id-str"].payload == {"s": "12345678901234567890123"}
    assert by_id["id-1999"].payload["n"] == 1_999 and type(by_id["id-1999"].payload["n"]) is int


def test_a_large_damaged_journal_reads_the_same_in_batches_as_line_by_line(tmp_path):
    rng_lines: list[bytes] = []
    for n in range(6_000):
        line = rec(f"id-{n}", text="猫" * (n % 50), v=n / 7)
        kind = n % 97
        if kind == 10:
            line = line[: len(line) // 2]  # torn and glued to the next one
        elif kind == 2:
            line = b"\n"
        elif kind == 3:
            line = line.replace(b"\n", b"\r\n")
        elif kind == 4:
            line = rec(f"id-{n - 50}")  # duplicate
        elif kind == 5:
            line = b'{"event_id": "x%d", "type": "fact.exploded", "ts": "t", "payload": {}}\n' % n
        elif kind == 6:
            line = b"\x00" * 30 + b"\n"
        rng_lines.append(line)
    data = b"".join(rng_lines) + rec("id-tail")[:20]
    assert len(data) > 4 * (256 << 10)  # several batches
    result = read_journal(write(tmp_path, data))
    assert (result.events, result.defects) == line_by_line(data)
    streamed: tuple[list[Event], list] = ([], [])
    for ev, de in iter_journal(write(tmp_path, data), chunk_size=100_003):
        streamed[0].extend(ev)
        streamed[1].extend(de)
    assert streamed == (result.events, result.defects)
    assert {d.kind for d in result.defects} >= {"glued", "duplicate_event_id", "unknown_type", "malformed", "torn_tail"}


def test_read_journal_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    import gc

    path = write(tmp_path, rec("id-a") + b"junk\n" + rec("id-b"))
    assert gc.isenabled()
    assert len(read_journal(path).events) == 2
    assert gc.isenabled()
    gc.disable()
    try:
        assert len(read_journal(path).events) == 2
        assert not gc.isenabled()
    finally:
        gc.enable()


# -- the batch fast path agrees with the line-by-line reference -------------------------------------


def test_a_batch_whose_glued_line_and_blank_line_balance_out_is_still_read_line_by_line(tmp_path):
    # msgspec's decode_lines reads values, not lines: two glued records and a blank line give as
    # many values as lines. The reader must still locate the glued line and the blank line.
    a, b, c = rec("id-a"), rec("id-b"), rec("id-c")
    data = a + b.rstrip(b"\n") + c + b"\n" + a.replace(b"id-a", b"id-d")
    result = read_journal(write(tmp_path, data))
    assert [(e.event_id, e.line) for e in result.events] == [("id-a", 1), ("id-c", 2), ("id-d", 4)]
    assert [(d.kind, d.line, d.recovered_event_id) for d in result.defects] == [("glued", 2, "id-c")]


def test_a_record_spanning_two_lines_is_two_bad_lines_not_one_event(tmp_path):
    head, tail = rec("id-a").split(b'"payload": ')
    data = head + b'"payload":\n' + tail + rec("id-b")
    result = read_journal(write(tmp_path, data))
    assert [e.event_id for e in result.events] == ["id-b"]
    assert [(d.kind, d.line) for d in result.defects] == [("malformed", 1), ("malformed", 2)]


def test_invalid_utf8_in_a_field_the_decoder_skips_is_still_a_defect(tmp_path):
    bad = rec("id-b").replace(b'"payload"', b'"\xf0ayload"')
    result = read_journal(write(tmp_path, rec("id-a") + bad + rec("id-c")))
    assert [e.event_id for e in result.events] == ["id-a", "id-c"]
    assert [(d.kind, d.line) for d in result.defects] == [("invalid_utf8", 2)]


def test_keys_named_like_the_readers_own_fields_change_nothing(tmp_path):
    hostile = rec("id-b").replace(
        b'"payload"', b'"(reader) line": 99, "(reader) offset": 7, "(reader) parsed": {"n": 666}, "payload"'
    )
    data = rec("id-a") + hostile
    [_first, second] = read_journal(write(tmp_path, data)).events
    assert (second.line, second.offset) == (2, len(rec("id-a")))
    assert second.payload == {"n": 1}
