"""Replay's target is what journal.inputs.resolve says PATH holds: the same characters, names and
refusals as check, and a clear refusal where replay cannot act."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from inspector.core import replay as gr
from inspector.core.replay import BadInputError
from journal import fixtures as folders
from journal.diagnosis import diagnose_path


def test_a_memory_root_names_the_character_and_a_character_folder_is_one(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    b = folders.pending_tail(root)
    folders.healthy(root)
    target = gr.target_of(root, b.path.name)
    assert (target.character, target.root, target.char_dir, target.is_zip) == (b.path.name, root, b.path, False)
    alone = gr.target_of(b.path)
    assert (alone.character, alone.root, alone.char_dir) == (b.path.name, root, b.path)
    # The names check gives are the names replay takes.
    assert {c.name for c in diagnose_path(root).characters} == {"healthy", "pending-tail"}
    with pytest.raises(BadInputError, match=r"name the character with --character \(characters in it: healthy, "):
        gr.target_of(root)
    with pytest.raises(BadInputError, match="no character named 'nobody'"):
        gr.target_of(root, "nobody")
    with pytest.raises(BadInputError, match="no character named 'healthy'"):
        gr.target_of(b.path, "healthy")  # the folder is another character


def test_a_zip_is_named_unopened_and_a_folder_without_characters_is_refused(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path / "memory")
    z = tmp_path / "Lan.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(b.path / "events.ndjson", "events.ndjson")
    target = gr.target_of(z)
    assert (target.is_zip, target.character, target.char_dir) == (True, "Lan", None)
    (tmp_path / "docs" / "notes").mkdir(parents=True)
    with pytest.raises(BadInputError, match="no character folder found here"):
        gr.target_of(tmp_path / "docs", "notes")


def test_a_link_and_a_cloud_save_staging_folder_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    folders.healthy(root)
    folders.healthy(tmp_path / "elsewhere", "away")
    (root / "away").symlink_to(tmp_path / "elsewhere" / "away")
    with pytest.raises(BadInputError, match="symbolic link pointing outside the memory root"):
        gr.target_of(root, "away")
    unit = tmp_path / "characters" / "Lan"
    folders.healthy(unit, "memory")
    (unit / "profile.json").write_text("{}", encoding="utf-8")
    # check calls it Lan; the memory server's folder for Lan would be <root>/Lan, not Lan/memory
    assert [c.name for c in diagnose_path(unit / "memory").characters] == ["Lan"]
    with pytest.raises(BadInputError, match="cloud-save staging folder 'Lan'"):
        gr.target_of(unit / "memory")
    with pytest.raises(BadInputError, match="cloud-save staging folder 'Lan'"):
        gr.target_of(tmp_path / "characters", "Lan")
