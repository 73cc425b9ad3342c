"""Which characters the server's start ensures and reconciles: ``characters.json`` as it reads it
(memory-format §9.1, §9.8 item 10). Expected values are the notes' (and the server lines they cite)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from journal.serverrules import DEFAULT_CHARACTERS, CharacterList, find_characters_file, read_characters, reconciles


def listing(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "config" / "characters.json"
    path.parent.mkdir()
    path.write_bytes(data)
    return path


def test_the_keys_of_the_catgirl_object_are_listed(tmp_path: Path) -> None:
    doc = {"主人": {"档案名": "哥哥"}, "猫娘": {"小天": {}, "test": {}}, "当前猫娘": "小天"}
    path = listing(tmp_path, json.dumps(doc, ensure_ascii=False).encode())
    got = read_characters(path)
    assert (got.path, got.names, got.error, got.defaults) == (str(path), frozenset({"小天", "test"}), None, False)
    assert got.document == doc  # persona ensure's cards come from it
    assert (reconciles(got, "小天"), reconciles(got, "someone")) == (True, False)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"{garbage", "is not JSON"),
        (b"", "is not JSON"),
        (b'\xef\xbb\xbf{"\xe7\x8c\xab\xe5\xa8\x98": {"a": {}}}', "is not JSON"),  # json rejects the BOM
        ('{"猫娘": {"茶": {}}}'.encode("gbk"), "is not JSON"),  # not UTF-8
        (b'[{"\xe7\x8c\xab\xe5\xa8\x98": {}}]', "is a JSON list, not an object"),
        (b"null", "is a JSON null, not an object"),
    ],
)
def test_an_unreadable_file_gives_the_defaults_which_list_only_test(tmp_path: Path, data: bytes, words: str) -> None:
    got = read_characters(listing(tmp_path, data))
    assert (got.names, got.defaults, got.document) == (frozenset({"test"}), True, None)
    assert got.error is not None and words in got.error and "default characters" in got.error
    # a folder of another name is then neither ensured nor reconciled; one named "test" is
    assert (reconciles(got, "小天"), reconciles(got, "test")) == (False, True)


def test_a_folder_where_the_file_should_be_cannot_be_read_so_the_defaults_are_used(tmp_path: Path) -> None:
    path = tmp_path / "characters.json"
    path.mkdir()
    got = read_characters(path)
    assert (got.names, got.defaults) == (DEFAULT_CHARACTERS, True)
    assert got.error is not None and "cannot be read" in got.error


@pytest.mark.parametrize("section", ['"猫娘": ["a"]', '"猫娘": null', '"猫娘": "a"', '"主人": {}', '"猫娘": {}'])
def test_a_dict_without_a_catgirl_object_lists_no_character(tmp_path: Path, section: str) -> None:
    got = read_characters(listing(tmp_path, ("{" + section + "}").encode()))
    assert (got.names, got.defaults) == (frozenset(), False)
    assert reconciles(got, "test") is False
    assert (got.error is None) == (section == '"猫娘": {}')  # an empty object is a list of none, said plainly


def test_a_fifo_is_not_read_so_the_list_is_not_known(tmp_path: Path) -> None:
    path = tmp_path / "characters.json"
    os.mkfifo(path)
    got = read_characters(path)
    assert (got.names, got.defaults) == (None, False)
    assert reconciles(got, "test") is None


def test_no_characters_json_found_is_not_known(tmp_path: Path) -> None:
    root = tmp_path / "app" / "memory"
    root.mkdir(parents=True)
    assert find_characters_file(root) is None
    assert reconciles(CharacterList(), "test") is None
