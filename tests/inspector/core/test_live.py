"""Live watching: only new journal bytes are read; sentinel, views and compaction are recognised;
the watcher falls back to polling when the observer cannot start."""

from __future__ import annotations

import os
import queue
import threading

from inspector.core.live import FolderWatcher, LiveFolder, WatchStatus
from inspector.core.timeline import CharacterTimeline
from journal import EventLog
from journal.tail import JournalTail
from tests.inspector.gui_fixtures import append_applied, hand_diagnosis, write_character


def _live(tmp_path, **kw):
    char = write_character(tmp_path, **kw)
    tl = CharacterTimeline(hand_diagnosis(char))
    return char, tl, LiveFolder({"alice": tl})


def test_append_reads_only_the_new_bytes(tmp_path, monkeypatch):
    char, _tl, live = _live(tmp_path, applied=3)
    size = os.path.getsize(char / "events.ndjson")
    reads = []
    real_poll = JournalTail.poll

    def spy(self, max_bytes=None):
        reads.append(self._read_pos)
        return real_poll(self, max_bytes)

    monkeypatch.setattr(JournalTail, "poll", spy)
    append_applied(EventLog(tmp_path), "alice", 1, 7.0)
    (update,) = live.process([str(char / "events.ndjson"), str(char / "events_applied.json")])
    assert reads == [size]  # the tail starts where the diagnosis stopped
    assert [r.index for r in update.rows] == [3]
    assert update.rows[0].entry == "ref_0000000000000001"
    assert update.sentinel is not None and update.sentinel.event_id == update.rows[0].event_id
    assert update.payloads[update.rows[0].event_id][1]["reinforcement"] == 7.0
    assert update.size == os.path.getsize(char / "events.ndjson")
    assert not update.reset


def test_views_shards_and_outbox_are_reported_and_temp_files_ignored(tmp_path):
    char, _tl, live = _live(tmp_path, applied=1)
    paths = [
        char / "reflections.json",
        char / "reflection_archive" / "2026-01-01_0a1b2c3d.json",
        char / "outbox.ndjson",
        char / ".nkatmp0123abcd.tmp",
        char / "unrelated.txt",
        tmp_path / "elsewhere.json",
    ]
    (update,) = live.process(str(p) for p in paths)
    assert update.files == {"reflections.json", "reflection_archive/2026-01-01_0a1b2c3d.json", "outbox.ndjson"}
    assert update.restate and not update.rows and update.sentinel is None


def test_compaction_is_a_reset(tmp_path):
    char, _tl, live = _live(tmp_path, applied=4)
    EventLog(tmp_path).compact("alice", [("reflection.evidence_updated", {"reflection_id": "ref_x"})])
    (update,) = live.process([str(char / "events.ndjson")])
    assert update.reset


def test_a_torn_tail_completed_later_is_re_read_from_its_start(tmp_path):
    char, tl, live = _live(tmp_path, applied=2)
    with open(char / "events.ndjson", "ab") as fh:
        fh.write(b'{"event_id": "torn')
    tl = CharacterTimeline(hand_diagnosis(char))
    live = LiveFolder({"alice": tl})
    torn_line = tl.row(tl.refs[-1]).line
    append_applied(EventLog(tmp_path), "alice", 0, 3.0)  # the writer isolates the fragment with "\n"
    (update,) = live.process([str(char / "events.ndjson")])
    kinds = [getattr(r, "kind", "event") for r in update.rows]
    assert kinds == ["malformed", "event"]
    assert update.rows[0].line == torn_line
    removed, added = tl.append(update.rows, update.size)
    assert removed is not None and len(added) == 2


def _collector():
    batches: queue.Queue[set[str]] = queue.Queue()
    return batches, batches.put


def _wait_for(batches, predicate, timeout=10.0):
    seen: set[str] = set()
    while True:
        seen |= batches.get(timeout=timeout)
        if predicate(seen):
            return seen


def test_watcher_delivers_debounced_batches(tmp_path):
    batches, on_batch = _collector()
    statuses = []
    watcher = FolderWatcher(tmp_path, on_batch, on_status=statuses.append)
    try:
        assert watcher.start().mode == "watching"
        target = tmp_path / "events.ndjson"
        with open(target, "ab") as fh:
            for _ in range(20):
                fh.write(b"x\n")
                fh.flush()
        seen = _wait_for(batches, lambda s: str(target) in s)
        assert str(target) in seen
    finally:
        watcher.stop()
    assert statuses[0] == WatchStatus("watching", str(tmp_path)) and statuses[-1].mode == "off"


def test_watcher_polls_when_the_observer_fails(tmp_path):
    batches, on_batch = _collector()

    def broken():
        raise OSError(28, "inotify watch limit reached")

    watcher = FolderWatcher(tmp_path, on_batch, observer_factory=broken, poll_interval=0.05)
    try:
        status = watcher.start()
        assert status.mode == "polling" and "inotify watch limit reached" in status.detail
        assert "polling" in status.text()
        target = tmp_path / "alice" / "events.ndjson"
        target.parent.mkdir()
        target.write_bytes(b"{}\n")
        _wait_for(batches, lambda s: str(target) in s)
    finally:
        watcher.stop()
    assert not [t for t in threading.enumerate() if t.name.startswith("watch:")]


def test_watcher_switches_to_polling_when_the_observer_dies(tmp_path):
    _batches, on_batch = _collector()
    statuses: queue.Queue[WatchStatus] = queue.Queue()

    class Dying:
        def schedule(self, *a, **k):
            pass

        def start(self):
            pass

        def is_alive(self):
            return False

        def stop(self):
            pass

        def join(self, timeout=None):
            pass

    watcher = FolderWatcher(tmp_path, on_batch, on_status=statuses.put, observer_factory=Dying, poll_interval=0.05)
    try:
        assert watcher.start().mode == "watching"
        watcher.notify([str(tmp_path / "x")])  # wakes the delivery thread, which checks the observer
        while (status := statuses.get(timeout=10)).mode != "polling":
            pass
        assert "stopped" in status.detail
    finally:
        watcher.stop()
