"""What the server's start deletes: its atomic writes sweep stale temp files (issue 24 item 5).

memory-format §4.5 (correction): every ``atomic_write_text`` first sweeps the target's folder of
names matching ``^\\.nkatmp[^.]+\\.tmp$`` older than 24 h. So the start deletes such files in each
folder it writes into, and only those.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from journal.diagnosis import diagnose_character
from journal.fixtures import FIXTURE_NOW, healthy, pending_tail
from journal.shards import REFLECTION_ARCHIVE

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
