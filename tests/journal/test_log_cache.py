"""EventLog's per-character caches: the journal end after our own append, and the view as we saved it.

Each cached fact is checked against the file before use; these tests change the files behind the
log's back ("another process") and check that the write contract and the no-orphan rule still hold.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from journal import JOURNAL_NAME, Event, EventLog, encode_event, fs, make_event, read_sentinel
from tests.journal.test_log import CHAR, E0, REF_ID, VIEW, bump, make_char, record, reflections

OTHER = make_event(
    "22222222-2222-4222-8222-222222222222", "reflection.evidence_updated", "2026-04-23T12:00:02", {"n": 2}
)


@contextlib.contextmanager
def fault_hook(hook: Callable[[fs.FsCall], None]) -> Iterator[None]:
    previous = fs.set_fault_hook(hook)
    try:
        yield
    finally:
        fs.set_fault_hook(previous)


def warm(tmp_path: Path) -> tuple[EventLog, Path, Event]:
    """A healthy folder and a log whose caches hold the state after two writes."""
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=reflections())
    log = EventLog(tmp_path)
    record(log, bump(1.0)[1])
    last = record(log, bump(2.0)[1])
    assert read_sentinel(cd).event_id == last.event_id
    return log, cd, last


def expected_bytes(view: Any) -> bytes:
    return json.dumps(view, indent=2, ensure_ascii=False).encode("utf-8")


def test_with_the_cache_warm_neither_the_journal_is_scanned_nor_the_view_parsed(tmp_path, monkeypatch):
    import journal.log

    log, cd, _ = warm(tmp_path)
    calls: list[str] = []
    real_scan, real_load = journal.log.last_event_id, journal.log.load_view
    monkeypatch.setattr(journal.log, "last_event_id", lambda *a, **k: calls.append("scan") or real_scan(*a, **k))
    monkeypatch.setattr(journal.log, "load_view", lambda *a, **k: calls.append("load") or real_load(*a, **k))
    new = record(log, bump(3.0)[1])
    assert calls == [] and read_sentinel(cd).event_id == new.event_id
    with open(cd / JOURNAL_NAME, "ab") as fh:
        fh.write(b"\n")  # another writer touched the journal: the cache no longer vouches for it
    record(log, bump(4.0)[1])
    assert calls == ["scan"]


# -- the journal end ------------------------------------------------------------------------------------


def test_a_raw_append_by_another_process_is_seen_and_nothing_is_orphaned(tmp_path):
    log, cd, last = warm(tmp_path)
    with open(cd / JOURNAL_NAME, "ab") as fh:
        fh.write(encode_event(OTHER))
    record(log, bump(3.0)[1])
    assert read_sentinel(cd).event_id == last.event_id, "the sentinel skipped the other process's event"


def test_a_journal_replaced_with_a_copy_is_rescanned_and_still_advances(tmp_path):
    log, cd, _ = warm(tmp_path)
    copy = cd / "copy.ndjson"
    copy.write_bytes((cd / JOURNAL_NAME).read_bytes())
    os.replace(copy, cd / JOURNAL_NAME)  # new inode, same bytes: the cache misses, the scan agrees
    new = record(log, bump(3.0)[1])
    assert read_sentinel(cd).event_id == new.event_id


def test_a_journal_replaced_by_other_content_invalidates_the_cache(tmp_path):
    log, cd, last = warm(tmp_path)
    data = (cd / JOURNAL_NAME).read_bytes() + encode_event(OTHER)
    tmp = cd / "compacted.ndjson"
    tmp.write_bytes(data)
    os.replace(tmp, cd / JOURNAL_NAME)
    record(log, bump(3.0)[1])
    assert read_sentinel(cd).event_id == last.event_id


def test_a_truncated_journal_invalidates_the_cache(tmp_path):
    log, cd, last = warm(tmp_path)
    journal = cd / JOURNAL_NAME
    journal.write_bytes(encode_event(E0) + encode_event(OTHER))  # same inode, other end
    record(log, bump(3.0)[1])
    assert read_sentinel(cd).event_id == last.event_id


def test_a_same_size_same_mtime_rewrite_of_the_last_line_is_caught_by_the_tail_check(tmp_path):
    log, cd, last = warm(tmp_path)
    journal = cd / JOURNAL_NAME
    st = os.stat(journal)
    data = journal.read_bytes()
    forged = data.replace(last.event_id.encode(), OTHER.event_id.encode())
    assert len(forged) == len(data) and forged != data
    with open(journal, "r+b") as fh:
        fh.write(forged)
    os.utime(journal, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(journal).st_size == st.st_size and os.stat(journal).st_mtime_ns == st.st_mtime_ns
    # Now the journal ends with OTHER, which the sentinel (last) is not: no advance.
    record(log, bump(3.0)[1])
    assert read_sentinel(cd).event_id == last.event_id


def test_an_unapplied_tail_appended_through_the_log_is_not_orphaned_with_the_cache_warm(tmp_path):
    log, cd, last = warm(tmp_path)
    log.append(CHAR, "reflection.evidence_updated", {"reflection_id": REF_ID, "reinforcement": 9.0})
    record(log, bump(3.0)[1])
    assert read_sentinel(cd).event_id == last.event_id


def test_a_failed_save_leaves_no_cache_that_lets_the_next_write_orphan_the_event(tmp_path):
    log, cd, last = warm(tmp_path)

    def fail_view_replace(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before" and call.path.endswith(VIEW):
            raise OSError(errno.EIO, "injected", call.path)

    with fault_hook(fail_view_replace), pytest.raises(OSError):
        record(log, bump(3.0)[1])
    assert read_sentinel(cd).event_id == last.event_id
    record(log, bump(4.0)[1])
    assert read_sentinel(cd).event_id == last.event_id, "the failed write's event was orphaned"


# -- the view ------------------------------------------------------------------------------------------


def test_a_view_rewritten_by_another_process_is_loaded_again(tmp_path):
    log, cd, _ = warm(tmp_path)
    other = reflections(3)
    other[-1]["text"] = "written elsewhere"
    fs.atomic_write_json(cd / VIEW, other)
    seen, mutate = bump(3.0)
    record(log, mutate)
    assert seen[0][-1]["text"] == "written elsewhere" and len(seen[0]) == 4
    other[-1]["reinforcement"] = 3.0
    assert (cd / VIEW).read_bytes() == expected_bytes(other)


@pytest.mark.parametrize("how", ["same-size-same-mtime", "grown", "shrunk", "missing"])
def test_a_view_changed_in_place_behind_the_log_is_loaded_again(tmp_path, how):
    log, cd, _ = warm(tmp_path)
    before, mutate = bump(2.5)
    record(log, mutate)
    path = cd / VIEW
    st = os.stat(path)
    data = path.read_bytes()
    if how == "same-size-same-mtime":  # in place, same inode, size and mtime: only the bytes tell
        forged = data.replace("反思 0".encode(), "反思 9".encode(), 1)
        assert len(forged) == len(data) and forged != data
        with open(path, "r+b") as fh:
            fh.write(forged)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif how == "grown":  # the same JSON with one more byte
        with open(path, "ab") as fh:
            fh.write(b"\n")
    elif how == "shrunk":
        path.write_bytes(expected_bytes(reflections(2)))
    else:
        path.unlink()
    seen, mutate = bump(3.0)
    record(log, mutate)
    assert seen[0] is not before[0], "the cached object was handed out for a file it no longer matches"
    assert seen[0] == json.loads(path.read_bytes())
    assert path.read_bytes() == expected_bytes(seen[0])
    if how == "same-size-same-mtime":
        assert seen[0][0]["text"] == "反思 9"


def test_a_kept_view_changed_outside_the_lock_is_not_handed_out_again(tmp_path):
    log, cd, _ = warm(tmp_path)
    seen, mutate = bump(3.0)
    record(log, mutate)
    seen[0][0]["text"] = "changed without an event"  # a caller that kept the view
    seen2, mutate2 = bump(4.0)
    record(log, mutate2)
    assert seen2[0][0]["text"] == "反思 0"
    assert "changed without an event" not in (cd / VIEW).read_text(encoding="utf-8")


def test_a_raising_mutator_leaves_no_half_changed_view_in_the_cache(tmp_path):
    log, cd, _ = warm(tmp_path)
    before = (cd / VIEW).read_bytes()

    def half(view: list[dict[str, Any]]) -> None:
        view[0]["text"] = "half done"
        raise RuntimeError("mutator failed")

    with pytest.raises(RuntimeError):
        record(log, half)
    assert (cd / VIEW).read_bytes() == before
    seen, mutate = bump(5.0)
    record(log, mutate)
    assert seen[0][0]["text"] == "反思 0"


def test_an_append_failure_leaves_the_cached_view_untouched(tmp_path):
    log, cd, _ = warm(tmp_path)
    before = (cd / VIEW).read_bytes()

    def fail_append(call: fs.FsCall) -> None:
        if call.op == "fsync" and call.phase == "before" and call.path.endswith(JOURNAL_NAME):
            raise OSError(errno.EIO, "injected", call.path)

    seen, mutate = bump(7.0)
    with fault_hook(fail_append), pytest.raises(OSError):
        record(log, mutate)
    assert seen == []
    seen, mutate = bump(8.0)
    record(log, mutate)
    assert seen[0] == [dict(e, reinforcement=8.0) if e["id"] == REF_ID else e for e in json.loads(before)]


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v[0].__setitem__("reinforcement", 1),  # 1.0 -> 1: equal, but not the same bytes
        lambda v: v[0].__setitem__("reinforcement", True),
        lambda v: v[0].__setitem__("reinforcement", -0.0),
        lambda v: v[0].__setitem__("status", None) or v[1].__setitem__("status", math.nan),
        lambda v: v[0].__setitem__("reinforcement", math.inf),
        lambda v: v[0].__setitem__("reinforcement", 1e-05),
        lambda v: v[0].__setitem__("reinforcement", 2**70),
        lambda v: v.__setitem__(0, dict(reversed(list(v[0].items())))),  # same entry, other key order
        lambda v: v.insert(1, {"id": "new", "text": "新"}),
        lambda v: v.pop(0),
        lambda v: v.reverse(),
        lambda v: v.clear(),
        lambda v: [{1: "non-string key"}],
    ],
    ids=[
        "int",
        "bool",
        "neg-zero",
        "nan-for-none",
        "inf",
        "exp-float",
        "big-int",
        "key-order",
        "insert",
        "pop",
        "reverse",
        "clear",
        "replaced",
    ],
)
def test_every_save_with_the_cache_warm_is_byte_identical_to_json_dumps(tmp_path, change):
    log, cd, _ = warm(tmp_path)
    saved: list[Any] = []

    def mutate(view: list[Any]) -> Any:
        replaced = change(view)
        result = replaced if isinstance(replaced, list) else view
        saved.append(result)
        return replaced if isinstance(replaced, list) else None

    record(log, mutate)
    assert (cd / VIEW).read_bytes() == expected_bytes(saved[0])
    # And once more on top of it (the changed elements are now the cached ones).
    saved.clear()
    record(log, lambda v: saved.append(v))
    assert (cd / VIEW).read_bytes() == expected_bytes(saved[0])


def test_a_dict_view_with_the_cache_warm_is_byte_identical(tmp_path):
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id)
    fs.atomic_write_json(cd / "persona.json", {"master": {"facts": [{"id": "p1", "text": "猫"}]}, "neko": {}})
    log = EventLog(tmp_path)
    states = []

    def change(view: dict[str, Any]) -> None:
        view["master"]["facts"].append({"id": f"p{len(states) + 2}", "text": "x", "w": math.nan})
        view[f"k{len(states)}"] = {"n": len(states)}
        states.append(view)

    for _ in range(3):
        log.record_and_save(CHAR, "persona.evidence_updated", {"n": 1}, change, view="persona.json")
        assert (cd / "persona.json").read_bytes() == expected_bytes(states[-1])
