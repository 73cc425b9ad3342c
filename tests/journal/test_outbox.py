"""The outbox reader (memory-format §5.1): pending ops, attempt counts, dead letters; read-only."""

from __future__ import annotations

import json
from pathlib import Path

from journal import fixtures as folders
from journal.outbox import MEMORY_LIVENESS_MAX_ATTEMPTS, parse_outbox, read_outbox


def lines(*records: dict | bytes) -> bytes:
    return b"".join(r if isinstance(r, bytes) else (json.dumps(r) + "\n").encode() for r in records)


def pending(op: str, kind: str = "extract_facts", ts: str = "t0") -> dict:
    return {"op_id": op, "type": kind, "payload": {"messages": []}, "status": "pending", "ts": ts}


def attempt(op: str) -> dict:
    return {"op_id": op, "status": "attempt", "ts": "t"}


def done(op: str) -> dict:
    return {"op_id": op, "status": "done", "ts": "t"}


def test_pending_op_counts_its_attempts() -> None:
    read = parse_outbox(lines(pending("a"), attempt("a"), attempt("a"), pending("b", "synth_reflection")))
    assert [(op.op_id, op.type, op.status, op.attempts, op.line) for op in read.pending] == [
        ("a", "extract_facts", "pending", 2, 1),
        ("b", "synth_reflection", "pending", 0, 4),
    ]
    assert read.dead_letters == [] and read.done == 0


def test_done_after_fewer_than_five_attempts_is_a_success() -> None:
    read = parse_outbox(lines(pending("a"), *[attempt("a")] * (MEMORY_LIVENESS_MAX_ATTEMPTS - 1), done("a")))
    assert (read.pending, read.dead_letters, read.done) == ([], [], 1)


def test_done_after_five_attempts_is_a_dead_letter() -> None:
    read = parse_outbox(lines(pending("a", "check_feedback", "t1"), *[attempt("a")] * 5, done("a")))
    assert [(op.op_id, op.type, op.status, op.attempts, op.ts) for op in read.dead_letters] == [
        ("a", "check_feedback", "dead_letter", 5, "t1")
    ]
    assert read.pending == [] and read.done == 0


def test_five_attempts_without_done_stays_pending() -> None:
    read = parse_outbox(lines(pending("a"), *[attempt("a")] * 5))
    assert [(op.status, op.attempts) for op in read.pending] == [("pending", 5)]


def test_later_pending_line_replaces_the_earlier_one_in_place() -> None:
    read = parse_outbox(lines(pending("a", ts="old"), pending("b"), pending("a", "synth_reflection", ts="new")))
    assert [(op.op_id, op.type, op.ts, op.line) for op in read.pending] == [
        ("a", "synth_reflection", "new", 3),
        ("b", "extract_facts", "t0", 2),
    ]


def test_bad_lines_and_records_without_op_id_are_skipped() -> None:
    data = lines(b"{not json\n", b"[1]\n", {"status": "pending"}, {"op_id": 5}, b"\n", pending("a"))
    read = parse_outbox(data)
    assert [op.op_id for op in read.pending] == ["a"]
    assert (read.lines, read.bad_lines) == (6, 4)


def test_read_outbox_never_raises_and_never_writes(tmp_path: Path) -> None:
    assert not read_outbox(tmp_path / "missing.ndjson").present
    (tmp_path / "outbox.ndjson").mkdir()
    broken = read_outbox(tmp_path / "outbox.ndjson")
    assert broken.present and broken.error is not None
    b = folders.outbox_backlog(tmp_path / "root")
    before = folders.tree_snapshot(b.path)
    read = read_outbox(b.path)  # a character folder works too
    assert folders.tree_snapshot(b.path) == before
    assert [op.op_id for op in read.pending] == [b.notes["pending_op"]]
    assert [op.op_id for op in read.dead_letters] == [b.notes["dead_op"]]
    assert read.done == 1
