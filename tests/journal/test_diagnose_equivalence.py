"""The diagnosis's two shortcuts agree with the journal package's reference code.

- ``scan_journal`` (an inlined clean-record loop) finds exactly the events and defects that
  ``read_journal`` finds, on arbitrary damaged journals.
- The pending-tail dry run through ``ProjectionStore`` stops where the reconciler's own dry run
  stops, for the same reason, with the same message; and the suspect check agrees with
  ``MemoryStore``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import fixtures as folders
from journal import fs
from journal.diagnose import diagnose_character, scan_journal
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Event, encode_event, make_event
from journal.handlers import MemoryStore, default_registry, entry_ref, run_handler
from journal.reader import read_journal
from journal.reconcile import dry_run
from journal.views import write_sentinel

TYPES = [
    "reflection.evidence_updated",
    "persona.evidence_updated",
    "persona.entry_updated",
    "reflection.state_changed",
    "persona.fact_added",
    "reflection.surfaced",
    "fact.added",
]


def _record(i: int, etype: str, payload: Any) -> bytes:
    return encode_event(make_event(f"id-{i % 7 if i % 11 == 0 else i}", etype, f"2026-05-01T09:00:{i % 60:02d}", payload))


payloads = st.one_of(
    st.fixed_dictionaries({"reflection_id": st.sampled_from(["ref_a", "ref_b", "", 7])}),
    st.fixed_dictionaries(
        {"entity_key": st.sampled_from(["master", "neko"]), "entry_id": st.sampled_from(["e1", "e2"])}
    ),
    st.fixed_dictionaries({"archive_shard_path": st.just("2026-05-01_0a1b2c3d.json"), "entry_snapshot": st.just({})}),
    st.just(None),
    st.just([1, 2]),
    st.just({}),
)

pieces = st.one_of(
    st.tuples(st.just("record"), st.sampled_from(TYPES), payloads),
    st.tuples(
        st.just("raw"), st.sampled_from([b"", b"   ", b"[1, 2]", b'{"no_id": 1}', b"\xff\xfe garbage", b"{bad json"])
    ),
    st.tuples(st.just("torn"), st.integers(1, 60)),
    st.tuples(st.just("bom"), st.sampled_from(TYPES)),
    st.tuples(st.just("crlf"), st.sampled_from(TYPES)),
)


def _journal(items: list[tuple[Any, ...]], terminated: bool) -> bytes:
    out = bytearray()
    for i, item in enumerate(items):
        kind = item[0]
        if kind == "record":
            out += _record(i, item[1], item[2])
        elif kind == "raw":
            out += item[1] + b"\n"
        elif kind == "torn":  # a fragment glued onto the next record (no newline)
            out += _record(i, "reflection.evidence_updated", {"reflection_id": "ref_a"})[: item[1]]
        elif kind == "bom":
            out += b"\xef\xbb\xbf" + _record(i, item[1], {})
        else:
            out += _record(i, item[1], {}).replace(b"\n", b"\r\n")
    if not terminated and out.endswith(b"\n"):
        out = out[:-1]
    return bytes(out)


def _reference(path: Path) -> tuple[Any, ...]:
    read = read_journal(path)
    events = [(e.event_id, e.type, e.ts, e.line, e.offset, entry_ref(e.type, e.payload)) for e in read.events]
    archives = [
        (i, e.payload)
        for i, e in enumerate(read.events)
        if isinstance(e.payload, dict) and "archive_shard_path" in e.payload
    ]
    return events, read.defects, read.lines, read.size, archives


def _scanned(path: Path) -> tuple[Any, ...]:
    scan = scan_journal(path)
    ev = scan.events
    events = list(zip(ev.event_ids, ev.types, ev.ts, ev.lines, ev.offsets, ev.entries, strict=True))
    return events, scan.defects, scan.lines, scan.size, scan.archives


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(pieces, max_size=25), terminated=st.booleans())
def test_scan_journal_equals_read_journal(
    tmp_path_factory: Any, items: list[tuple[Any, ...]], terminated: bool
) -> None:
    path = tmp_path_factory.mktemp("scan") / JOURNAL_NAME
    path.write_bytes(_journal(items, terminated))
    assert _scanned(path) == _reference(path)


def test_scan_journal_equals_read_journal_on_every_fixture(tmp_path: Path) -> None:
    for build in folders.CASES.values():
        b = build(tmp_path)
        path = b.path / JOURNAL_NAME
        if path.exists():
            assert _scanned(path) == _reference(path), b.name


# -- the dry run of the tail, against the reconciler's own ----------------------------------------------

ENTRIES = [("r", "ref_1a2b3c4d5e6f7081"), ("r", "ref_2b3c4d5e6f708192"), ("p", "master/prom_ref_77aa88bb99cc00dd")]

actions = st.one_of(
    st.tuples(st.just("evidence"), st.sampled_from(range(len(ENTRIES))), st.floats(0, 5, allow_nan=False)),
    st.tuples(
        st.just("state"), st.sampled_from(["ref_1a2b3c4d5e6f7081", "ref_9"]), st.sampled_from(["confirmed", "denied"])
    ),
    st.tuples(st.just("merge"), st.booleans()),
    st.tuples(st.just("archive"), st.sampled_from(["2026-05-03_00aa11bb.json", "bad/../name.json"]), st.booleans()),
    st.tuples(
        st.just("legacy"),
    ),
    st.tuples(
        st.just("bad_payload"),
    ),
)


def _payload(action: tuple[Any, ...]) -> tuple[str, Any]:
    kind = action[0]
    if kind == "evidence":
        which, value = ENTRIES[action[1]], action[2]
        if which[0] == "r":
            return "reflection.evidence_updated", folders.reflection_evidence_payload(which[1], value, at="t")
        key, eid = which[1].split("/")
        return "persona.evidence_updated", folders.persona_evidence_payload(key, eid, value, at="t")
    if kind == "state":
        return "reflection.state_changed", {"reflection_id": action[1], "from": "pending", "to": action[2], "ts": "t2"}
    if kind == "merge":
        text = "Master drinks green tea" if action[1] else "some other text"
        key, eid = folders.PERSONA_ENTRY
        return "persona.entry_updated", {
            "entity_key": key,
            "entry_id": eid,
            "rewrite_text_sha256": folders._sha(text),
            "merged_from_ids": ["ref_x"],
        }
    if kind == "archive":
        rid = "ref_2b3c4d5e6f708192"
        snapshot = {"id": rid, "text": "x", "status": "archived", "archive_shard_path": action[1]}
        if action[2]:
            return "persona.fact_added", {
                "entity_key": "neko",
                "entry_id": "legacy_5e6f7a8b",
                "archive_shard_path": action[1],
                "entry_snapshot": {**snapshot, "id": "legacy_5e6f7a8b"},
            }
        return "reflection.state_changed", {
            "reflection_id": rid,
            "from": "pending",
            "to": "archived",
            "archive_shard_path": action[1],
            "entry_snapshot": snapshot,
        }
    if kind == "legacy":
        return "reflection.surfaced", {"reflection_id": "ref_1a2b3c4d5e6f7081"}
    return "reflection.evidence_updated", ["not", "a", "dict"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tail=st.lists(actions, min_size=1, max_size=12),
    corrupt=st.sampled_from([None, "reflections.json", "persona.json", "shard"]),
)
def test_tail_dry_run_stops_where_the_reconciler_stops(
    tmp_path_factory: Any, tail: list[tuple[Any, ...]], corrupt: str | None
) -> None:
    root = tmp_path_factory.mktemp("dry")
    b = folders.healthy(root)
    for i, action in enumerate(tail):
        etype, payload = _payload(action)
        fs.durable_append(b.path / JOURNAL_NAME, encode_event(make_event(f"tail-{i}", etype, "t", payload)))
    if corrupt == "shard":
        (b.path / "reflection_archive").mkdir(exist_ok=True)
        fs.atomic_write_bytes(b.path / "reflection_archive" / "2026-05-03_00aa11bb.json", b'{"not": "a list"}')
    elif corrupt:
        fs.atomic_write_bytes(b.path / corrupt, b"[{")
    reference = dry_run(b.path).report
    c = diagnose_character(b.path, now=folders.FIXTURE_NOW)
    if reference.stopped is None:
        assert c.blocked is None
    else:
        assert c.blocked is not None
        got = (c.blocked.index, c.blocked.event_id, c.blocked.reason, c.blocked_message)
        ref = reference.stopped
        assert got == (ref.index, ref.event_id, ref.reason, ref.message)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(
            st.sampled_from(
                ["refl_status", "refl_evidence", "refl_type", "persona_text", "persona_evidence", "drop_shard"]
            ),
            st.integers(0, 3),
        ),
        max_size=4,
    )
)
def test_suspect_check_agrees_with_memory_store(tmp_path_factory: Any, edits: list[tuple[str, int]]) -> None:
    root = tmp_path_factory.mktemp("suspect")
    b = folders.legacy_type_orphaned(root)  # its last event for ref_4 is an evidence update
    reflections = json.loads((b.path / "reflections.json").read_text(encoding="utf-8"))
    persona = json.loads((b.path / "persona.json").read_text(encoding="utf-8"))
    for what, n in edits:
        if what == "refl_status" and n < len(reflections):
            reflections[n]["status"] = "denied"
        elif what == "refl_evidence" and n < len(reflections):
            reflections[n]["reinforcement"] = 7.5
        elif what == "refl_type" and n < len(reflections):
            reflections[n]["disputation"] = 0  # the payload says 0.0: equal in Python, not in JSON
        elif what == "persona_text":
            persona["master"]["facts"][1]["text"] = f"edited {n}"
        elif what == "persona_evidence":
            persona["master"]["facts"][1]["disputation"] = float(n)
        elif what == "drop_shard":
            for shard in (b.path / "reflection_archive").iterdir():
                fs.atomic_write_json(shard, [])
    fs.atomic_write_json(b.path / "reflections.json", reflections)
    fs.atomic_write_json(b.path / "persona.json", persona)
    write_sentinel(b.path, b.events[-1])
    c = diagnose_character(b.path, now=folders.FIXTURE_NOW)

    # Reference: the last event of each entry, run alone on a fresh MemoryStore of the folder.
    events = read_journal(b.path / JOURNAL_NAME).events
    last = {entry_ref(e.type, e.payload): i for i, e in enumerate(events)}
    last.pop(None, None)
    registry = default_registry()
    expected = set()
    for i in last.values():
        ev = events[i]
        try:
            changed = run_handler(registry.get(ev.type), MemoryStore(b.path), ev.payload)  # type: ignore[arg-type]
        except Exception as exc:
            changed = type(exc).__name__ == "ViewDriftError"
        if changed:
            expected.add(i)
    orphaned = {e.index for e in c.events if e.state == "orphaned"}
    assert {e.index for e in c.events if e.state == "suspect"} == expected - orphaned
    assert (b.path / SENTINEL_NAME).exists()


# -- the two-process scan of big journals ----------------------------------------------------------


def _damaged_big_journal(path: Path) -> None:
    """Records, duplicates, glued and garbage lines spread over both halves, torn tail at the end."""
    items: list[tuple[Any, ...]] = []
    for i in range(400):
        payload = {"reflection_id": f"ref_{i % 13}"}
        if i % 17 == 0:
            payload = {**payload, "archive_shard_path": "2026-05-01_0a1b2c3d.json", "entry_snapshot": {"id": i}}
        items.append(("record", TYPES[i % len(TYPES)], payload))
        if i % 37 == 0:
            items.append(("raw", b"{bad json"))
        if i % 91 == 0:
            items.append(("torn", 30))
        if i % 53 == 0:
            items.append(("bom", "persona.fact_added"))
    path.write_bytes(_journal(items, terminated=False))


def _idle(monkeypatch: Any) -> None:
    import journal.diagnose as diagnose_module

    monkeypatch.setattr(diagnose_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(diagnose_module, "_busy_cpus", lambda: 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)


def test_parallel_scan_equals_read_journal(tmp_path: Path, monkeypatch: Any) -> None:
    _idle(monkeypatch)
    forks = []
    real_fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or real_fork())
    path = tmp_path / JOURNAL_NAME
    _damaged_big_journal(path)
    assert _scanned(path) == _reference(path)
    # without duplicate ids the fast path's result is the one returned
    data = path.read_bytes().replace(b'"id-0"', b'"id-zero"').replace(b'"id-', b'"uniq-')
    path.write_bytes(b"\n".join(line.replace(b"uniq-", f"u{i}-".encode()) for i, line in enumerate(data.split(b"\n"))))
    assert _scanned(path) == _reference(path)
    # ids that cannot be NUL-joined, and strings that are not valid Unicode, travel back too
    with open(path, "ab") as fh:
        fh.write(b'\n{"event_id": "nul\\u0000id", "type": "fact.added", "ts": "\\ud800", "payload": {}}\n')
    assert _scanned(path) == _reference(path)
    assert len(forks) == 3


def test_a_failing_child_falls_back_to_scanning_here(tmp_path: Path, monkeypatch: Any) -> None:
    import journal.diagnose as diagnose_module

    _idle(monkeypatch)

    def broken(*args: Any) -> Any:
        raise RuntimeError("the child fails")

    monkeypatch.setattr(diagnose_module, "_pack", broken)  # only the child packs
    path = tmp_path / JOURNAL_NAME
    _damaged_big_journal(path)
    assert _scanned(path) == _reference(path)


def _unique_big_journal(path: Path, copies: list[tuple[int, int]] = ()) -> None:  # type: ignore[assignment]
    """400 distinct records; each ``(src, dst)`` in ``copies`` repeats record ``src`` after record ``dst``."""
    lines = [
        encode_event(make_event(f"u-{i}", TYPES[i % len(TYPES)], "2026-05-01T09:00:00", {"reflection_id": f"ref_{i % 13}"}))
        for i in range(400)
    ]
    for src, dst in sorted(copies, key=lambda c: -c[1]):
        lines.insert(dst + 1, lines[src])
    path.write_bytes(b"".join(lines))


def test_duplicates_are_found_wherever_they_are(tmp_path: Path, monkeypatch: Any) -> None:
    # This process scans the first half, the child the rest (in slices): a repeated id within
    # either part, across the parts and across the child's slices must all take the exact path.
    _idle(monkeypatch)
    path = tmp_path / JOURNAL_NAME
    for copies in ([], [(3, 50)], [(3, 350)], [(250, 390)], [(210, 300)], [(399, 399)]):
        _unique_big_journal(path, copies)
        assert _scanned(path) == _reference(path), copies
        assert len(scan_journal(path).events) == 400  # a repeated id is a defect, not an event


def test_a_child_failing_midway_is_resumed_here(tmp_path: Path, monkeypatch: Any) -> None:
    import journal.diagnose as diagnose_module

    _idle(monkeypatch)
    real_pack = diagnose_module._pack
    calls: list[int] = []

    def fails_second(part: Any) -> Any:  # runs in the child, which has its own `calls`
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the child fails after one slice")
        return real_pack(part)

    monkeypatch.setattr(diagnose_module, "_pack", fails_second)
    path = tmp_path / JOURNAL_NAME
    _damaged_big_journal(path)
    assert _scanned(path) == _reference(path)
    _unique_big_journal(path, [(5, 380)])
    assert _scanned(path) == _reference(path)
    _unique_big_journal(path)
    assert _scanned(path) == _reference(path)


def test_no_room_in_the_shared_map_is_scanned_here(tmp_path: Path, monkeypatch: Any) -> None:
    import journal.diagnose as diagnose_module

    _idle(monkeypatch)
    monkeypatch.setattr(diagnose_module, "SHARED_MAX", 64)
    path = tmp_path / JOURNAL_NAME
    _damaged_big_journal(path)
    assert _scanned(path) == _reference(path)


def _record_forks(monkeypatch: Any) -> list[int]:
    """Patch ``os.fork`` to note the pid of each child it makes."""
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


def _assert_reaped(pid: int) -> None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    raise AssertionError(f"child {pid} is still there")


def test_progress_is_reported_and_raising_abandons_the_scan(tmp_path: Path, monkeypatch: Any) -> None:
    import journal.diagnose as diagnose_module

    path = tmp_path / JOURNAL_NAME
    _damaged_big_journal(path)
    size = path.stat().st_size
    monkeypatch.setattr(diagnose_module, "REPORT_EVERY", 2048)
    for forked in (False, True):
        if forked:
            _idle(monkeypatch)
        seen: list[int] = []
        scan = scan_journal(path, seen.append)
        assert scan.size == size
        assert len(seen) > 3 and seen == sorted(seen) and seen[0] > 0 and seen[-1] <= size + 2048

    # Raising from the callback abandons the scan; a forked child is killed and reaped.
    pids = _record_forks(monkeypatch)

    class Stop(Exception):
        pass

    def stop(done: int) -> None:
        raise Stop

    try:
        scan_journal(path, stop)
    except Stop:
        pass
    else:
        raise AssertionError("the scan went on")
    assert len(pids) == 1
    _assert_reaped(pids[0])


def test_the_window_may_fork_with_threads_and_cancel_a_hung_child(tmp_path: Path, monkeypatch: Any) -> None:
    import threading

    import journal.diagnose as diagnose_module

    _idle(monkeypatch)
    pids = _record_forks(monkeypatch)
    path = tmp_path / JOURNAL_NAME
    _damaged_big_journal(path)
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)  # a window has other threads
    worker.start()
    try:
        scan = scan_journal(path, fork_with_threads=True)
        ev = scan.events
        events = list(zip(ev.event_ids, ev.types, ev.ts, ev.lines, ev.offsets, ev.entries, strict=True))
        assert (events, scan.defects, scan.lines, scan.size, scan.archives) == _reference(path)
        assert len(pids) == 1

        # A child that hangs (here: waits on a pipe nobody writes) cannot hang the window: while it
        # waits, the parent calls report, whose cancel kills the child.
        hang_r, hang_w = os.pipe()
        monkeypatch.setattr(diagnose_module, "_child_work", lambda *args: os.read(hang_r, 1))
        calls: list[int] = []

        class Cancelled(Exception):
            pass

        def report(done: int) -> None:
            calls.append(done)
            if done == path.stat().st_size:  # waiting for the child
                raise Cancelled

        try:
            scan_journal(path, report, fork_with_threads=True)
        except Cancelled:
            pass
        else:
            raise AssertionError("the scan did not stop")
        os.close(hang_r)
        os.close(hang_w)
        assert len(pids) == 2
        _assert_reaped(pids[1])
    finally:
        stop.set()
        worker.join()


def test_no_fork_with_threads_or_when_turned_off_or_busy(tmp_path: Path, monkeypatch: Any) -> None:
    import threading

    import journal.diagnose as diagnose_module

    assert diagnose_module._busy_cpus() is not None  # this machine can say
    _idle(monkeypatch)

    def no_fork() -> int:
        raise AssertionError("must not fork")

    monkeypatch.setattr(os, "fork", no_fork)
    path = tmp_path / JOURNAL_NAME
    _damaged_big_journal(path)
    monkeypatch.setenv("MEMORY_INSPECTOR_JOBS", "1")
    assert _scanned(path) == _reference(path)
    monkeypatch.delenv("MEMORY_INSPECTOR_JOBS")
    monkeypatch.setattr(diagnose_module, "_busy_cpus", lambda: 1.5)  # no idle core: the split would lose
    assert _scanned(path) == _reference(path)
    monkeypatch.setattr(diagnose_module, "_busy_cpus", lambda: 0)
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert _scanned(path) == _reference(path)  # a GUI has threads: a fork could deadlock them
    finally:
        stop.set()
        worker.join()
