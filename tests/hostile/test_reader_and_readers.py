"""Hostile journals and special files against the reader and every other reader of a folder.

- An event id that is not valid Unicode (an escaped lone surrogate) is a ``missing_event_id``
  defect, never an event: recovery, startup, the dry run and ``check`` agree on it, and a sentinel
  write raises nothing but ``OSError``. A lone surrogate in payload text is refused before
  anything is written.
- Glued-line salvage recovers a record only where the bytes before it cannot be the start of a
  record that holds it (the rule is stated in :mod:`journal.reader`); it never invents one.
- Salvaging one line hands the parser at most twice the line's length, however the line is built.
- Every reader of a view, the sentinel, a shard, the outbox or the journal opens regular files
  only: a FIFO is a clear error or a located finding, never a hang.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from journal import EventLog, reader
from journal import fixtures as folders
from journal.codec import dumps_view
from journal.diagnosis import diagnose_character
from journal.dryrun import dry_run
from journal.errors import PayloadError
from journal.events import JOURNAL_NAME, SENTINEL_NAME, encode_event, make_event
from journal.lastevent import classify_record, last_event_id
from journal.outbox import OUTBOX_NAME, read_outbox
from journal.reader import (
    JournalScanner,
    events_at,
    iter_journal,
    iter_journal_from,
    read_journal,
)
from journal.reconcile import Reconciler, startup_sequence
from journal.shards import REFLECTION_ARCHIVE, load_shard
from journal.tail import JournalTail
from journal.views import REFLECTIONS, load_view, read_sentinel, write_sentinel
from tests.journal._replay_kit import CHAR, evidence, make_character, reflection, tree_hashes

TS = "2026-05-01T10:00:00"
SURROGATE_MESSAGE = "event_id is not valid Unicode (a lone surrogate): the record cannot be replayed"


@pytest.fixture(autouse=True)
def _private_runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))


def rec(eid: str, payload: Any = None, etype: str = "reflection.evidence_updated") -> bytes:
    return encode_event(make_event(eid, etype, TS, {"n": 1} if payload is None else payload))


def ev(eid: str, rid: str, value: float) -> bytes:
    return rec(eid, evidence(rid, value))


def character(tmp_path: Path, journal: bytes) -> tuple[Path, Path]:
    """A memory root with one character: reflections ref_a and ref_b, and ``journal``."""
    root = tmp_path / "memory"
    cd = make_character(root, reflections=[reflection("ref_a", reinforcement=0.0), reflection("ref_b")])
    (cd / JOURNAL_NAME).write_bytes(journal)
    return root, cd


def reinforcement(cd: Path, rid: str) -> Any:
    return next(e for e in load_view(cd / REFLECTIONS, list) if e["id"] == rid)["reinforcement"]


def read_line(tmp_path: Path, line: bytes) -> reader.JournalRead:
    path = tmp_path / "one.ndjson"
    path.write_bytes(line if line.endswith(b"\n") else line + b"\n")
    return read_journal(path)


# -- 1. an event id that is not valid Unicode ------------------------------------------------------

#: Valid JSON, not valid Unicode: Python's ``json`` reads each as a string holding a lone surrogate.
SURROGATE_IDS = [b"\\ud800", b"\\udfff-4000-8000", b"abc\\udc80", b"\\udc00\\ud800"]


def surrogate_record(escaped_id: bytes, rid: str = "ref_a", value: float = 99.0) -> bytes:
    return (
        b'{"event_id": "' + escaped_id + b'", "type": "reflection.evidence_updated", "ts": "' + TS.encode()
        + b'", "payload": ' + json.dumps(evidence(rid, value)).encode() + b"}\n"
    )  # fmt: skip


@pytest.mark.parametrize("escaped_id", SURROGATE_IDS)
def test_an_event_id_that_is_not_valid_unicode_is_a_missing_event_id_defect(tmp_path, escaped_id):
    a, bad, b = ev("id-a", "ref_a", 1.0), surrogate_record(escaped_id), ev("id-b", "ref_b", 2.0)
    path = tmp_path / JOURNAL_NAME
    path.write_bytes(a + bad + b)

    result = read_journal(path)
    assert [e.event_id for e in result.events] == ["id-a", "id-b"]
    assert [(d.kind, d.line, d.offset, d.length, d.message) for d in result.defects] == [
        ("missing_event_id", 2, len(a), len(bad) - 1, SURROGATE_MESSAGE)
    ]
    summaries = [e for batch, _ in iter_journal(path, summaries=True) for e in batch]
    assert [e.event_id for e in summaries] == ["id-a", "id-b"]
    tail = JournalTail(path).poll()
    assert [e.event_id for e in tail.events] == ["id-a", "id-b"] and tail.defects == result.defects
    assert classify_record(bad.rstrip(b"\n")) is None
    assert events_at(path, [len(a)]) == {}
    path.write_bytes(a + bad)
    assert last_event_id(path) == (True, "id-a")


def test_a_valid_escaped_surrogate_pair_is_still_an_event_id(tmp_path):
    result = read_line(tmp_path, surrogate_record(b"\\ud83d\\ude00-id"))
    assert [e.event_id for e in result.events] == ["\U0001f600-id"] and result.defects == []


def test_a_glued_record_whose_event_id_is_not_valid_unicode_is_not_recovered(tmp_path):
    result = read_line(tmp_path, rec("id-torn")[:30] + surrogate_record(b"\\ud800"))
    assert result.events == []
    assert [d.kind for d in result.defects] == ["malformed"]


def test_recovery_replays_past_an_event_id_that_is_not_valid_unicode_and_writes_a_valid_sentinel(tmp_path):
    root, cd = character(tmp_path, ev("id-a", "ref_a", 1.0) + surrogate_record(b"\\ud800") + ev("id-b", "ref_b", 2.0))
    for _ in range(2):  # every start, not just the first
        report = Reconciler(EventLog(root)).reconcile(CHAR)
        assert report.stopped is None
        assert read_sentinel(cd).event_id == "id-b"
        assert json.loads((cd / SENTINEL_NAME).read_bytes().decode("utf-8"))["last_applied_event_id"] == "id-b"
    assert reinforcement(cd, "ref_a") == 1.0  # the undecodable record (99.0) was never applied
    assert reinforcement(cd, "ref_b") == 2.0


def test_startup_resumes_the_outbox_despite_an_event_id_that_is_not_valid_unicode(tmp_path):
    root, _ = character(tmp_path, ev("id-a", "ref_a", 1.0) + surrogate_record(b"\\ud800"))
    resumed: list[bool] = []
    reports, _ = asyncio.run(startup_sequence(Reconciler(EventLog(root)), lambda: resumed.append(True), [CHAR]))
    assert resumed == [True]
    assert reports[CHAR].applied == ["id-a"] and reports[CHAR].stopped is None


def test_the_dry_run_agrees_with_replay_on_an_event_id_that_is_not_valid_unicode(tmp_path):
    root, cd = character(tmp_path, surrogate_record(b"\\ud800") + ev("id-b", "ref_b", 2.0))
    before = tree_hashes(cd)
    run = dry_run(cd)
    assert tree_hashes(cd) == before
    assert run.report.applied == ["id-b"] and run.report.stopped is None
    assert Reconciler(EventLog(root)).reconcile(CHAR).applied == run.report.applied


def test_check_reports_an_event_id_that_is_not_valid_unicode_as_a_located_finding(tmp_path):
    root, cd = character(tmp_path, ev("id-a", "ref_a", 1.0) + surrogate_record(b"\\ud800") + ev("id-b", "ref_b", 2.0))
    diagnosis = diagnose_character(cd, root=root)
    assert [e.event_id for e in diagnosis.events] == ["id-a", "id-b"]
    assert [(f.code, f.line) for f in diagnosis.findings if f.line is not None] == [("line.malformed", 2)]


@pytest.mark.parametrize("event_id", ["\ud800", "x\udfff", "\udc80-4000"])
def test_a_sentinel_write_raises_only_oserror_for_an_id_that_cannot_be_encoded(tmp_path, event_id):
    write_sentinel(tmp_path, "id-a")
    before = tree_hashes(tmp_path)
    with pytest.raises(OSError, match="not valid Unicode"):
        write_sentinel(tmp_path, event_id)
    assert tree_hashes(tmp_path) == before  # the old sentinel kept, no temp file left


def test_a_sentinel_naming_an_id_that_is_not_valid_unicode_reads_as_malformed(tmp_path):
    (tmp_path / SENTINEL_NAME).write_bytes(b'{"last_applied_event_id": "\\ud800", "ts": "t"}')
    sentinel = read_sentinel(tmp_path)
    assert (sentinel.state, sentinel.event_id) == ("malformed", None)
    assert "not valid Unicode" in (sentinel.message or "")


def test_a_payload_with_a_lone_surrogate_is_refused_before_anything_is_written(tmp_path):
    root, cd = character(tmp_path, ev("id-a", "ref_a", 1.0))
    Reconciler(EventLog(root)).reconcile(CHAR)
    before = tree_hashes(cd)
    mutated: list[Any] = []
    with pytest.raises(PayloadError, match="not valid Unicode"):
        EventLog(root).record_and_save(
            CHAR, "reflection.evidence_updated", evidence("ref_a", 3.0, note="\ud800"), mutated.append, view=REFLECTIONS
        )
    assert mutated == [] and tree_hashes(cd) == before


def test_a_lone_surrogate_in_replayed_payload_text_is_refused_before_the_view_is_written(tmp_path):
    line = rec("id-s", evidence("ref_a", 5.0)).replace(
        b'"rein_last_signal_at": "2026', b'"rein_last_signal_at": "\\ud800'
    )
    root, cd = character(tmp_path, ev("id-a", "ref_a", 1.0) + line)
    report = Reconciler(EventLog(root)).reconcile(CHAR)
    assert report.applied == ["id-a"]
    assert report.stopped is not None and (report.stopped.event_id, report.stopped.reason) == ("id-s", "handler_error")
    after_first = tree_hashes(cd)
    assert reinforcement(cd, "ref_a") == 1.0
    assert Reconciler(EventLog(root)).reconcile(CHAR).stopped == report.stopped  # again, and nothing written
    assert tree_hashes(cd) == after_first
    # The view writer refuses exactly what the stdlib writer refuses.
    view = [{"id": "ref_a", "text": "a\ud800b"}]
    with pytest.raises(UnicodeEncodeError):
        json.dumps(view, indent=2, ensure_ascii=False).encode("utf-8")
    with pytest.raises(UnicodeEncodeError):
        dumps_view(view)


# -- 2. glued-line salvage never invents an event --------------------------------------------------

A = ev("id-a", "ref_a", 1.0)
R = ev("id-r", "ref_b", 2.0)
ARCHIVE = rec(
    "id-arc",
    {
        "reflection_id": "ref_x",
        "to": "archived",
        "archive_shard_path": "2026-05-01_0a1b2c3d.json",
        "entry_snapshot": {"id": "ref_x", "text": "主人喜欢绿茶", "source_fact_ids": ["fact_a", "fact_b"], "n": 12},
        "merged_from_ids": ["ref_y"],
        "flag": True,
    },
    "reflection.state_changed",
)


def torn_after(line: bytes, marker: bytes) -> bytes:
    """``line`` cut right after the first ``marker``."""
    return line[: line.index(marker) + len(marker)]


#: A torn fragment ending where a JSON value may begin: the record glued on could be that value,
#: so the line could be one torn record holding it. Refused.
REFUSED_FRAGMENTS = {
    "after the payload key": torn_after(A, b'"payload": '),
    "after a colon without a space": torn_after(A, b'"payload":'),
    "after an entry_snapshot key": torn_after(ARCHIVE, b'"entry_snapshot": '),
    "after an opening bracket": torn_after(ARCHIVE, b'"source_fact_ids": ['),
    "after a comma in an array": torn_after(ARCHIVE, b'"fact_a", '),
}

#: A torn fragment ending where no value may begin: the record glued on cannot be inside it.
RECOVERED_FRAGMENTS = {
    "inside the event id": A[:20],
    "inside the type": torn_after(A, b'"type": "reflection.'),
    "inside a key": torn_after(A, b'"pay'),
    "after a key": torn_after(A, b'"payload"'),
    "after an opening brace": torn_after(ARCHIVE, b'"entry_snapshot": {'),
    "after a comma between members": torn_after(A, b'"ts": "' + TS.encode() + b'", '),
    "after a number": torn_after(ARCHIVE, b'"n": 12'),
    "after true": torn_after(ARCHIVE, b'"flag": true'),
    "after a closing brace": ARCHIVE.rstrip(b"\n")[:-1],
    "in the middle of a UTF-8 character": torn_after(ARCHIVE, "主人".encode())[:-1],
    "after a backslash": b'{"event_id": "x", "type": "a\\',
    "a fragment that is not JSON at all": b"\x00\x00\x00 garbage",
}


@pytest.mark.parametrize("fragment", list(REFUSED_FRAGMENTS.values()), ids=list(REFUSED_FRAGMENTS))
def test_glued_salvage_refuses_a_record_glued_where_a_value_may_begin(tmp_path, fragment):
    result = read_line(tmp_path, fragment + R)
    assert result.events == []
    assert [d.kind for d in result.defects] == ["malformed"]


@pytest.mark.parametrize("fragment", list(RECOVERED_FRAGMENTS.values()), ids=list(RECOVERED_FRAGMENTS))
def test_glued_salvage_recovers_a_record_glued_where_no_value_may_begin(tmp_path, fragment):
    result = read_line(tmp_path, fragment + R)
    assert [(e.event_id, e.offset, e.payload) for e in result.events] == [
        ("id-r", len(fragment), evidence("ref_b", 2.0))
    ]
    assert [(d.kind, d.recovered_event_id) for d in result.defects] == [("glued", "id-r")]


def test_glued_salvage_does_not_recover_a_nested_record_that_closes_a_torn_line(tmp_path):
    # The case: a record whose payload holds an object with an event_id key, torn right
    # after that object closed. Replay used to apply the nested "record" (it set a counter to 99).
    inner = json.loads(ev("id-evil", "ref_a", 99.0))
    outer = rec("id-outer", {"reflection_id": "ref_b", "wrapped": inner})
    torn = outer[: outer.index(b'{"event_id": "id-evil"') + len(json.dumps(inner, ensure_ascii=False).encode())]
    assert torn.endswith(b"}}")
    root, cd = character(tmp_path, A + torn + b"\n")
    result = read_journal(cd / JOURNAL_NAME)
    assert [e.event_id for e in result.events] == ["id-a"]
    assert [(d.kind, d.line) for d in result.defects] == [("malformed", 2)]
    Reconciler(EventLog(root)).reconcile(CHAR)
    assert reinforcement(cd, "ref_a") == 1.0
    # Unterminated (the file ends there), it is a torn tail, not a recovered record either.
    (cd / JOURNAL_NAME).write_bytes(A + torn)
    assert [d.kind for d in read_journal(cd / JOURNAL_NAME).defects] == ["torn_tail"]


def test_glued_salvage_refuses_a_record_that_an_earlier_glued_record_could_hold(tmp_path):
    # A torn fragment, then a torn record whose payload holds an object with an event_id key: no
    # prefix from the line start holds that object, but the record starting after the fragment may.
    inner = json.loads(R)
    holder = rec("id-holder", {"reflection_id": "ref_b", "wrapped": inner})
    torn_holder = holder[: holder.index(b'"wrapped": ') + len('"wrapped": ') + len(R) - 1]
    result = read_line(tmp_path, A[:20] + torn_holder)
    assert result.events == []
    assert [d.kind for d in result.defects] == ["malformed"]


@pytest.mark.parametrize("damage", [b"\x00\x00\x00", b"\xff", b"\t"], ids=["NUL run", "invalid UTF-8", "tab"])
def test_glued_salvage_does_not_recover_a_nested_record_after_damage_inside_a_string(tmp_path, damage):
    # Damage inside a string before it (a crash's NUL run, a flipped bit) does not stop the record
    # that holds it from reaching it.
    inner = json.loads(R)
    holder = rec("id-holder", {"note": "before the damage", "wrapped": inner})
    holder = holder.replace(b"before the damage", b"before" + damage + b"the damage")
    torn = holder[: holder.index(b'"wrapped": ') + len('"wrapped": ') + len(R) - 1]
    result = read_line(tmp_path, torn)
    assert result.events == []
    assert len(result.defects) == 1 and result.defects[0].kind in ("malformed", "invalid_utf8")


def test_glued_salvage_recovers_after_two_torn_fragments(tmp_path):
    fragment = A[:40] + ARCHIVE[:50]
    result = read_line(tmp_path, fragment + R)
    assert [(e.event_id, e.offset) for e in result.events] == [("id-r", len(fragment))]
    assert [d.kind for d in result.defects] == ["glued"]


def test_glued_salvage_recovers_only_a_record_that_starts_as_both_writers_write_one(tmp_path):
    compact = json.dumps(json.loads(R), separators=(",", ":")).encode()
    reordered = json.dumps({"type": "fact.added", "event_id": "id-r", "payload": {}}).encode()
    for glued in (compact, reordered):
        result = read_line(tmp_path, A[:20] + glued)
        assert result.events == [] and [d.kind for d in result.defects] == ["malformed"]


def test_glued_salvage_still_recovers_the_memory_servers_glued_line(tmp_path):
    built = folders.glued_torn_line(tmp_path)
    result = read_journal(built.path / JOURNAL_NAME)
    assert [d.recovered_event_id for d in result.defects if d.kind == "glued"] == [built.ids["glued"]]


# -- 3. salvage costs about one parse --------------------------------------------------------------

MIB = 1 << 20

HOSTILE_LINES = {
    # The line: record-like starts in the first few KiB, then a long unterminated string.
    "compact starts then a long string": b'{"event_id":"x","a":"' * 130 + b"x" * MIB,
    "writer-style starts then a long string": b'{"event_id": "x", "a": "' * 130 + b"x" * MIB,
    "starts holding starts, each failing late": b'{"event_id": "x", "a": {"event_id": "y", "b": 1}}}' * 130
    + b'{"event_id": "z", "blob": "'
    + b"y" * MIB
    + b'"}}',
    "many starts that fail at once": b'{"event_id": }' * 20_000 + b"z" * MIB,
    "a record holding many starts, torn": b'{"event_id": "x", "payload": ['
    + b'{"event_id": "y", "n": 1}, ' * 20_000
    + b'{"event_id": "w", "blob": "'
    + b"q" * MIB
    + b'"}',
    "a real glued line with a large record": A[:30] + ev("id-big", "ref_b", 2.0).replace(b"user_fact", b"u" * MIB),
}


@pytest.mark.parametrize("line", list(HOSTILE_LINES.values()), ids=list(HOSTILE_LINES))
def test_salvage_hands_the_parser_at_most_twice_the_line_length(tmp_path, monkeypatch, line):
    handed: list[int] = []
    parse = reader._loads

    def counting(data: bytes) -> Any:
        handed.append(len(data))
        return parse(data)

    monkeypatch.setattr(reader, "_loads", counting)
    body = line.rstrip(b"\n")
    result = read_line(tmp_path, body)
    assert handed[0] == len(body)  # the exact parse every damaged line gets
    assert sum(handed[1:]) <= 2 * len(body), f"{len(handed) - 1} salvage parses, {sum(handed[1:])} bytes"
    assert len(result.defects) == 1


# -- 4. special files: regular files only, never a hang --------------------------------------------


def fifo(path: Path) -> Path:
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    return path


@pytest.mark.timeout(10)
def test_a_fifo_sentinel_is_refused_not_a_hang_and_not_replaced(tmp_path):
    root, cd = character(tmp_path, ev("id-a", "ref_a", 1.0))
    fifo(cd / SENTINEL_NAME)
    sentinel = read_sentinel(cd)
    assert sentinel.state == "refused" and "not a regular file" in (sentinel.message or "")
    with pytest.raises(OSError, match="where the sentinel stands is unknown"):
        dry_run(cd)
    with pytest.raises(OSError, match="where the sentinel stands is unknown"):
        Reconciler(EventLog(root)).reconcile(CHAR)
    assert stat.S_ISFIFO((cd / SENTINEL_NAME).lstat().st_mode)  # never replaced on a guess


@pytest.mark.timeout(10)
def test_a_fifo_view_is_a_clear_error_not_a_hang(tmp_path):
    root, cd = character(tmp_path, ev("id-a", "ref_a", 1.0))
    fifo(cd / REFLECTIONS)
    with pytest.raises(OSError, match="not a regular file"):
        load_view(cd / REFLECTIONS, list)
    report = Reconciler(EventLog(root)).reconcile(CHAR)
    assert report.stopped is not None and report.stopped.reason == "handler_error"
    assert "not a regular file" in report.stopped.message
    dry_run(cd)  # returns


@pytest.mark.timeout(10)
def test_a_fifo_shard_is_a_clear_error_not_a_hang(tmp_path):
    (tmp_path / REFLECTION_ARCHIVE).mkdir()
    shard = fifo(tmp_path / REFLECTION_ARCHIVE / "2026-05-01_0a1b2c3d.json")
    with pytest.raises(OSError, match="not a regular file"):
        load_shard(shard)


@pytest.mark.timeout(10)
def test_a_fifo_outbox_is_reported_not_read(tmp_path):
    fifo(tmp_path / OUTBOX_NAME)
    for given in (tmp_path, tmp_path / OUTBOX_NAME):
        result = read_outbox(given)
        assert result.present and result.pending == []
        assert result.error is not None and "not a regular file" in result.error


@pytest.mark.timeout(10)
def test_a_fifo_journal_is_a_clear_error_not_a_hang(tmp_path):
    root, cd = character(tmp_path, b"")
    path = fifo(cd / JOURNAL_NAME)
    result = read_journal(path)
    assert result.present and result.events == [] and "not a regular file" in (result.error or "")
    for call in (
        lambda: list(iter_journal(path)),
        lambda: list(iter_journal_from(path, 0, 0)),
        lambda: events_at(path, [0]),
        lambda: last_event_id(path),
        lambda: JournalTail(path).poll(),
        lambda: Reconciler(EventLog(root)).reconcile(CHAR),
    ):
        with pytest.raises(OSError, match="not a regular file"):
            call()
    with pytest.raises(OSError, match="not a regular file"):  # the dry run meets what replay meets
        dry_run(cd)


@pytest.mark.timeout(10)
def test_a_folder_where_a_file_is_expected_is_still_a_clear_error(tmp_path):
    (tmp_path / SENTINEL_NAME).mkdir()
    (tmp_path / REFLECTIONS).mkdir()
    (tmp_path / JOURNAL_NAME).mkdir()
    assert read_sentinel(tmp_path).state == "refused"  # a folder is not a sentinel file: never guessed at
    with pytest.raises(IsADirectoryError):
        load_view(tmp_path / REFLECTIONS, list)
    assert read_journal(tmp_path / JOURNAL_NAME).error is not None


def test_regular_files_read_as_before_through_the_regular_file_helper(tmp_path):
    _, cd = character(tmp_path, ev("id-a", "ref_a", 1.0))
    write_sentinel(cd, "id-a")
    link = cd / "link.json"
    link.symlink_to(cd / REFLECTIONS)
    assert load_view(link, list) == load_view(cd / REFLECTIONS, list)
    assert read_sentinel(cd).event_id == "id-a"
    scanner_events: list[Any] = []
    JournalScanner().feed((cd / JOURNAL_NAME).read_bytes(), scanner_events, [])
    assert read_journal(cd / JOURNAL_NAME).events == scanner_events
