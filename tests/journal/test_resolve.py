"""journal.inputs.resolve: what a PATH holds, decided once for every command, the window and the
re-diagnosis."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import zipfile
from pathlib import Path

import pytest

from journal import fixtures as folders
from journal.diagnosis import UnknownCharacterError, UnreadableInputError
from journal.inputs import NoCharacterError, resolve


def zip_folder(folder: Path, out: Path, *, prefix: str = "") -> Path:
    with zipfile.ZipFile(out, "w") as zf:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                zf.write(p, prefix + p.relative_to(folder).as_posix())
    return out


def listing(path: Path, names: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"猫娘": {n: {} for n in names}}, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_memory_root_lists_its_characters_and_finds_characters_json_beside_it(tmp_path: Path) -> None:
    root = tmp_path / "app" / "memory"
    folders.healthy(root)
    folders.pending_tail(root)
    (root / "new-character").mkdir()  # empty: still a character beside the others
    beside = listing(tmp_path / "app" / "config" / "characters.json", ["healthy"])
    with resolve(root) as found:
        assert (found.kind, found.is_zip, found.root, found.memory_root) == ("root", False, root, root)
        assert [c.name for c in found.characters] == ["healthy", "new-character", "pending-tail"]
        assert found.characters_file == str(beside) and found.refused == []
    with resolve(root, "healthy") as only:
        assert [c.path for c in only.characters] == [root / "healthy"]
    with pytest.raises(UnknownCharacterError, match="no character named 'nobody'"):
        resolve(root, "nobody")
    given = listing(tmp_path / "other.json", ["pending-tail"])
    assert resolve(root, characters_file=given).characters_file == str(given)
    with pytest.raises(UnreadableInputError, match=r"no such file \(--characters\)"):
        resolve(root, characters_file=tmp_path / "nowhere.json")


def test_a_character_folder_is_one_character_of_its_parent(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path / "memory")
    found = resolve(b.path)
    assert (found.kind, found.memory_root, [c.name for c in found.characters]) == (
        "character",
        tmp_path / "memory",
        ["healthy"],
    )


def test_a_cloud_save_staging_folder_is_named_after_its_unit(tmp_path: Path) -> None:
    unit = tmp_path / "characters" / "Lan"
    folders.healthy(unit, "memory")
    (unit / "profile.json").write_text("{}", encoding="utf-8")
    (found,) = resolve(unit / "memory").characters
    assert (found.name, found.path) == ("Lan", unit / "memory")
    # Below a root, <name>/memory/<files> is the character <name>, its files in memory/.
    (staged,) = resolve(tmp_path / "characters").characters
    assert (staged.name, staged.path) == ("Lan", unit / "memory")


def test_a_folder_without_characters_is_its_own_error(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    with pytest.raises(NoCharacterError, match="no character folder found here") as raised:
        resolve(docs)
    assert isinstance(raised.value, UnreadableInputError)  # check's exit 2 as before


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: None, "no such file or folder"),
        (lambda p: p.write_bytes(b""), "an empty file, neither a folder nor a .zip export"),
        (lambda p: p.write_bytes(b"hi"), "neither a folder nor a .zip export"),
        (lambda p: os.mkfifo(p), "neither a folder nor a .zip export"),
    ],
)
def test_what_is_not_an_input_says_why(tmp_path: Path, make, words) -> None:
    make(tmp_path / "x")
    with pytest.raises(UnreadableInputError, match=words):
        resolve(tmp_path / "x")


def test_a_zip_of_a_character_folder_is_named_after_the_zip_and_removed_on_close(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path / "memory")
    z = zip_folder(b.path, tmp_path / "Lan.zip")
    with resolve(z) as found:
        assert found.is_zip and found.zip_path == z and found.kind == "character"
        assert [c.name for c in found.characters] == ["Lan"]
        copy = found.root
        assert (copy / "events.ndjson").is_file() and stat.S_IMODE(copy.stat().st_mode) == 0o700
    assert not copy.exists()


def test_a_zip_of_a_root_in_wrapper_folders_and_its_refused_members(tmp_path: Path) -> None:
    folders.healthy(tmp_path / "memory")
    folders.pending_tail(tmp_path / "memory")
    z = zip_folder(tmp_path / "memory", tmp_path / "export.zip", prefix="export/memory/")
    with zipfile.ZipFile(z, "a") as zf:
        zf.writestr("export/memory/../../evil.txt", "x")
    with resolve(z) as found:
        assert found.kind == "root" and [c.name for c in found.characters] == ["healthy", "pending-tail"]
        assert [(f.code, f.file) for f in found.refused] == [("input.refused", "export/memory/../../evil.txt")]
    assert not (tmp_path / "evil.txt").exists()


def test_an_unopened_zip_is_only_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folders.healthy(tmp_path / "memory")
    z = zip_folder(tmp_path / "memory", tmp_path / "export.zip")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    found = resolve(z, extract=False)
    assert (found.kind, found.is_zip, found.characters, found.memory_root) == ("zip", True, [], None)
    assert list((tmp_path / "tmp").iterdir()) == []  # nothing extracted


def test_a_zips_copy_never_reads_a_characters_json_beside_the_temp_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders.healthy(tmp_path / "memory")
    z = zip_folder(tmp_path / "memory", tmp_path / "export.zip")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    listing(tmp_path / "tmp" / "config" / "characters.json", ["healthy"])  # ../config beside the copy
    with resolve(z) as found:
        assert found.memory_root is not None and found.memory_root.parent == tmp_path / "tmp"
        assert found.characters_file is None


def test_a_link_to_a_folder_outside_the_root_is_listed_refused(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    folders.healthy(root)
    folders.healthy(tmp_path / "elsewhere", "away")
    (root / "away").symlink_to(tmp_path / "elsewhere" / "away")
    found = resolve(root)
    away = next(c for c in found.characters if c.name == "away")
    assert away.refusal is not None and away.refusal.code == "input.refused"
    assert "outside the memory root" in away.refusal.message
