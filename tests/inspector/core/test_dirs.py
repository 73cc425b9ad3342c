"""inspector.core.dirs: the platform's config and data folders, and the one-time read of the old ones."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import inspector.core.replay as gr
from inspector.core import dirs
from inspector.core.bundle import load_or_create_secret, read_secret
from inspector.core.recent import RecentLocations


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own; no XDG variable and no config override, so the defaults apply."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", dirs.CONFIG_DIR_ENV, "LOCALAPPDATA"):
        monkeypatch.delenv(var, raising=False)
    return h


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_folders_are_the_platforms(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert dirs.config_dir("linux") == home / ".config" / "memory-inspector"
    assert dirs.data_dir("linux") == home / ".local" / "share" / "memory-inspector"
    assert dirs.config_dir("darwin") == home / "Library" / "Application Support" / "memory-inspector"
    assert dirs.data_dir("darwin") == home / "Library" / "Application Support" / "memory-inspector"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xc"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xd"))
    assert dirs.config_dir("linux") == home / "xc" / "memory-inspector"
    assert dirs.data_dir("linux") == home / "xd" / "memory-inspector"
    monkeypatch.setenv(dirs.CONFIG_DIR_ENV, str(home / "mine"))
    assert dirs.config_dir("linux") == dirs.config_dir("darwin") == home / "mine"
    assert list(home.iterdir()) == []  # asking creates nothing


def test_the_old_places_are_where_earlier_versions_wrote(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The recent list went to ~/.config on every platform; the data folder had its own formula.
    assert dirs.old_config_dirs() == [home / ".config" / "memory-inspector"]
    assert dirs.old_data_dirs("win32") == [home / "AppData" / "Local" / "memory-inspector"]
    monkeypatch.setenv("LOCALAPPDATA", str(home / "L"))
    assert dirs.old_data_dirs("win32") == [home / "L" / "memory-inspector"]
    assert dirs.old_data_dirs("linux") == [home / ".local" / "share" / "memory-inspector"]


def test_the_recent_list_bookmarks_and_layout_from_the_old_config_folder_are_kept(home: Path) -> None:
    old = home / ".config" / "memory-inspector"
    RecentLocations(old).add("/memories/a")
    RecentLocations(old).add("/memories/b")
    (old / "bookmarks.json").write_text('{"x": [1]}', encoding="utf-8")
    (old / "layout.ini").write_text("[window]\n", encoding="utf-8")
    before = tree(old)

    new = dirs.config_dir("darwin")  # macOS: no longer ~/.config
    assert new == home / "Library" / "Application Support" / "memory-inspector"
    assert RecentLocations(new).load() == ["/memories/b", "/memories/a"]
    assert tree(new) == before
    assert stat.S_IMODE(new.stat().st_mode) == 0o700
    assert stat.S_IMODE((new / "recent.json").stat().st_mode) & 0o077 == 0
    assert tree(old) == before  # only read

    # One time: what the new place holds from then on is never replaced by the old.
    RecentLocations(new).clear()
    RecentLocations(old).add("/memories/c")
    assert RecentLocations(dirs.config_dir("darwin")).load() == []


def test_a_file_the_new_config_folder_has_is_not_replaced(home: Path) -> None:
    old = home / ".config" / "memory-inspector"
    RecentLocations(old).add("/old")
    new = home / "Library" / "Application Support" / "memory-inspector"
    RecentLocations(new).add("/new")
    assert RecentLocations(dirs.config_dir("darwin")).load() == ["/new"]
    assert not (new / "bookmarks.json").exists()  # the old folder has none to give


def test_an_old_place_that_is_not_a_file_is_skipped(home: Path) -> None:
    old = home / ".config" / "memory-inspector"
    (old / "recent.json").mkdir(parents=True)
    os.mkfifo(old / "bookmarks.json")  # never opened to wait for a writer
    new = dirs.config_dir("darwin")
    assert not os.path.lexists(new / "recent.json") and not os.path.lexists(new / "bookmarks.json")


@pytest.fixture
def moved_data(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An old data folder that differs from the platform's (as on Windows, where the shell's local
    app-data folder and the old ``%LOCALAPPDATA%`` formula can disagree)."""
    old = home / "old-data" / "memory-inspector"
    monkeypatch.setattr(dirs, "old_data_dirs", lambda platform=None: [old])
    return old


def test_the_old_index_of_backups_is_kept(home: Path, moved_data: Path) -> None:
    entry = gr.IndexEntry(
        home / "b" / "x", "x", "Lan", "replay", home / "memory" / "Lan", "0" * 64, "2026-01-01T00:00:00+00:00"
    )
    gr.record_in_index(entry, moved_data / dirs.INDEX_NAME)
    before = tree(moved_data)

    index = gr.read_index()  # the default place
    assert index.path == home / ".local" / "share" / "memory-inspector" / dirs.INDEX_NAME
    assert index.problem is None and [e.path for e in index.entries] == [entry.path]
    assert tree(moved_data) == before


def test_the_old_secret_is_kept_and_guess_reads_it_where_it_is(home: Path, moved_data: Path) -> None:
    secret = load_or_create_secret(moved_data / dirs.SECRET_NAME)
    new = home / ".local" / "share" / "memory-inspector"

    assert read_secret() == secret  # bundle --guess: read where it is, nothing written
    assert not new.exists()

    assert load_or_create_secret() == secret  # a bundle: the same keys as before, not a new secret
    assert (new / dirs.SECRET_NAME).read_bytes() == secret
    assert stat.S_IMODE((new / dirs.SECRET_NAME).stat().st_mode) & 0o077 == 0
    assert stat.S_IMODE(new.stat().st_mode) == 0o700
    assert (moved_data / dirs.SECRET_NAME).read_bytes() == secret  # the old one stays
