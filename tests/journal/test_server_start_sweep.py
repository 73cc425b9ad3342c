"""What the server's start writes and deletes: its atomic writes sweep stale temp files (issue 24
item 5), and its handlers' ``!=`` makes a save of an equal number none (item 6).

memory-format §4.5 (correction): every ``atomic_write_text`` first sweeps the target's folder of
names matching ``^\\.nkatmp[^.]+\\.tmp$`` older than 24 h. So the start deletes such files in each
folder it writes into, and only those.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from journal import EventLog, fs
from journal.diagnosis import diagnose_character
from journal.events import SENTINEL_NAME
from journal.fixtures import FIXTURE_NOW, REFLECTION_IDS, healthy, pending_tail
from journal.shards import REFLECTION_ARCHIVE
from journal.views import REFLECTIONS

DAY = 86_400


def _temp(path: Path, age_seconds: float, now: datetime) -> None:
    path.write_bytes(b"{")
    t = now.timestamp() - age_seconds
    os.utime(path, (t, t))


def test_the_start_deletes_stale_temp_files_only_in_the_folders_it_writes(tmp_path: Path) -> None:
    b = pending_tail(tmp_path)  # its replay writes reflections.json, persona.json and the sentinel
    now = FIXTURE_NOW
    _temp(b.path / ".nkatmpk3_9zq1x.tmp", DAY + 60, now)  # stale: deleted
    _temp(b.path / ".nkatmp0a1b2c3d.tmp", DAY - 60, now)  # younger than a day: kept
    _temp(b.path / ".nkatmp.tmp", 10 * DAY, now)  # not the sweeper's shape: kept
    (b.path / REFLECTION_ARCHIVE).mkdir(exist_ok=True)
    _temp(b.path / REFLECTION_ARCHIVE / ".nkatmpzz_9zq1x.tmp", 10 * DAY, now)  # a folder it does not write
    d = diagnose_character(b.path, now=now)
    s = d.server_start
    assert s is not None and s.applied > 0
    assert s.deletes == [".nkatmpk3_9zq1x.tmp"]
    assert s.to_json()["deletes"] == [".nkatmpk3_9zq1x.tmp"]
    assert any("deletes the temp files there older than 24 h" in n for n in s.notes)


def test_a_start_that_writes_nothing_deletes_nothing(tmp_path: Path) -> None:
    b = healthy(tmp_path)
    _temp(b.path / ".nkatmpk3_9zq1x.tmp", 10 * DAY, FIXTURE_NOW)
    s = diagnose_character(b.path, now=FIXTURE_NOW).server_start
    assert s is not None and s.writes == [] and s.deletes == []


# -- item 6: the server's handlers compare with != (memory-format §9.8.9) -------------------------------


def test_an_int_in_the_view_against_the_same_float_in_the_event_is_no_change_for_the_server(tmp_path: Path) -> None:
    b = healthy(tmp_path)
    rid = REFLECTION_IDS[0]
    refl = json.loads((b.path / REFLECTIONS).read_text(encoding="utf-8"))
    next(r for r in refl if r["id"] == rid)["reinforcement"] = 2  # a JSON tool wrote 2.0 as 2
    fs.atomic_write_json(b.path / REFLECTIONS, refl)
    EventLog(tmp_path).append(b.name, "reflection.evidence_updated", {"reflection_id": rid, "reinforcement": 2.0})
    d = diagnose_character(b.path)
    s = d.server_start
    assert s is not None and s.applied == 1 and s.stop is None
    assert s.changes == [] and [p for p, _ in s.writes] == [SENTINEL_NAME]  # its != sees no change: no save
    # Ours compares JSON values strictly (2 is not 2.0): our replay rewrites the view.
    assert d.tail is not None and [(x.kind, x.changed) for x in d.tail.decisions] == [("applies", True)]


def test_a_field_equal_for_its_not_equal_keeps_the_views_value_when_another_field_changes(tmp_path: Path) -> None:
    # Its handlers assign field by field where `!=` (evidence_handlers.py:104): the event changes
    # reinforcement, so the view is saved, but its disputation 0 against the event's 0.0 is no change
    # and keeps the view's 0 (memory-format §9.8.9).
    b = healthy(tmp_path)
    rid = REFLECTION_IDS[0]
    refl = json.loads((b.path / REFLECTIONS).read_text(encoding="utf-8"))
    entry = next(r for r in refl if r["id"] == rid)
    entry["disputation"] = 0
    fs.atomic_write_json(b.path / REFLECTIONS, refl)
    payload = {"reflection_id": rid, "reinforcement": entry["reinforcement"] + 1.5, "disputation": 0.0}
    EventLog(tmp_path).append(b.name, "reflection.evidence_updated", payload)
    s = diagnose_character(b.path).server_start
    assert s is not None and s.applied == 1 and REFLECTIONS in [p for p, _ in s.writes]
    assert [(c.entry, c.fields) for c in s.changes] == [
        (rid, (("reinforcement", entry["reinforcement"], payload["reinforcement"]),))
    ]
