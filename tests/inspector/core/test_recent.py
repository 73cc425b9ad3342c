"""Recent locations: most recent first, de-duplicated, bounded, tolerant of a damaged file."""

from __future__ import annotations

import os

from inspector.core.recent import RecentLocations


def test_add_puts_first_and_deduplicates(tmp_path):
    recent = RecentLocations(tmp_path / "cfg", limit=3)
    for p in ("a", "b", "a", "c", "d"):
        recent.add(tmp_path / p)
    assert recent.load() == [str(tmp_path / p) for p in ("d", "c", "a")]


def test_damaged_file_reads_as_empty_and_is_replaced(tmp_path):
    recent = RecentLocations(tmp_path)
    recent.file.write_text("{not json")
    assert recent.load() == []
    recent.add(tmp_path / "x")
    assert recent.load() == [os.path.abspath(tmp_path / "x")]
    assert [p.name for p in tmp_path.iterdir()] == ["recent.json"]  # no temp litter


def test_unwritable_config_folder_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    recent = RecentLocations(blocker / "cfg")  # its parent is a file: cannot be created
    assert recent.add(tmp_path / "x") == [os.path.abspath(tmp_path / "x")]
    assert recent.load() == []


def test_clear_forgets_every_location(tmp_path):
    recent = RecentLocations(tmp_path / "cfg")
    recent.add(tmp_path / "a")
    assert recent.clear() == []
    assert RecentLocations(tmp_path / "cfg").load() == []
    assert [p.name for p in (tmp_path / "cfg").iterdir()] == ["recent.json"]
