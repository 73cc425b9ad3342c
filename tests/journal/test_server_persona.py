"""The server's persona ensure (memory-format §9.9), one test per fact, and the cases §9.9 verified.

Every expected value is written out here from the notes, never computed by the code under test:
the new entry's 25 keys (fact 6), the ids (``card_``/``legacy_`` + 8 hex of a sha256, facts 4 and
5) and the saved bytes (``json.dumps(..., ensure_ascii=False, indent=2)`` in UTF-8, fact 8; one
test spells the bytes out by hand). Each case is a real folder: ``<app>/memory/<name>`` beside
``<app>/config/characters.json`` (§9.1), read through :func:`persona_ensure_at`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from journal.serverpersona import (
    Cards,
    EnsureRun,
    FileInput,
    PersonaEnsurePrediction,
    Unknown,
    cards_from,
    is_empty,
    persona_ensure_at,
    predict_persona_ensure,
)
from journal.serverrules import CharacterList, find_characters_file, read_characters

NAME = "小天"
ME = "哥哥"

#: Cards with nothing to sync: both synced (the master card is a non-empty dict), no entries.
QUIET = {"主人": {"name": "reserved only"}, "猫娘": {NAME: {"name": "reserved only"}}}


# -- oracles, from the notes -----------------------------------------------------------------------


def entry(eid: str, text: str, source: str, *, protected: bool = False) -> dict[str, Any]:
    """Fact 6: a new entry, its 25 keys in the notes' order."""
    return {
        "id": eid,
        "text": text,
        "source": source,
        "source_id": None,
        "recent_mentions": [],
        "suppress": False,
        "suppressed_at": None,
        "protected": protected,
        "reinforcement": 0.0,
        "disputation": 0.0,
        "rein_last_signal_at": None,
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "sub_zero_last_increment_date": None,
        "user_fact_reinforce_count": 0,
        "merged_from_ids": [],
        "token_count": None,
        "token_count_text_sha256": None,
        "token_count_tokenizer": None,
        "version_history": [],
        "embedding": None,
        "embedding_text_sha256": None,
        "embedding_model_id": None,
        "last_refine_cluster_hash": None,
        "last_refine_at": None,
    }


def card_id(entity: str, key: str) -> str:
    """Fact 5: ``card_<first 8 hex of sha256("<entity>:<key>")>``."""
    return "card_" + hashlib.sha256(f"{entity}:{key}".encode()).hexdigest()[:8]


def legacy_id(text: str) -> str:
    """Fact 4: ``legacy_<first 8 hex of sha256(UTF-8 text)>``."""
    return "legacy_" + hashlib.sha256(text.encode()).hexdigest()[:8]


def card(entity: str, key: str, text: str) -> dict[str, Any]:
    return entry(card_id(entity, key), text, "character_card", protected=True)


def setting(text: str) -> dict[str, Any]:
    return entry(legacy_id(text), text, "settings")


def server_bytes(obj: Any) -> bytes:
    """Fact 8: what the server writes."""
    return json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8")


def other(eid: str, **fields: Any) -> dict[str, Any]:
    """An entry of another source, as a file may hold it (never normalised by ensure)."""
    return {"id": eid, "text": f"text of {eid}", "source": "reflection", **fields}


# -- folders --------------------------------------------------------------------------------------


def folder(
    tmp_path: Path,
    characters: Any = QUIET,
    persona: bytes | Any = None,
    settings: Any = None,
    *,
    settings_at: str = "char",
) -> Path:
    """``<app>/memory/<NAME>`` with its ``persona.json`` and settings file, beside ``config/characters.json``."""
    root = tmp_path / "app" / "memory"
    char = root / NAME
    char.mkdir(parents=True)
    config = tmp_path / "app" / "config"
    config.mkdir()
    if characters is not None:
        data = characters if isinstance(characters, bytes) else json.dumps(characters, ensure_ascii=False).encode()
        (config / "characters.json").write_bytes(data)
    if persona is not None:
        data = persona if isinstance(persona, bytes) else json.dumps(persona, ensure_ascii=False).encode()
        (char / "persona.json").write_bytes(data)
    if settings is not None:
        data = settings if isinstance(settings, bytes) else json.dumps(settings, ensure_ascii=False).encode()
        (char / "settings.json" if settings_at == "char" else root / f"settings_{NAME}.json").write_bytes(data)
    return char


def predict(char: Path, **kwargs: Any) -> PersonaEnsurePrediction:
    """The prediction for ``char``; it reads and never writes (the persona's bytes stay)."""
    path = char / "persona.json"
    before = path.read_bytes() if path.is_file() else None
    found = find_characters_file(char.parent)
    listed = CharacterList() if found is None else read_characters(found)
    got = persona_ensure_at(char, NAME, listed, **kwargs)
    assert (path.read_bytes() if path.is_file() else None) == before
    return got


def assert_saves(got: PersonaEnsurePrediction, action: str, expected: dict[str, Any]) -> None:
    assert (got.action, got.writes, got.handlers_raise, got.may_rewrite) == (action, True, False, False)
    assert got.persona_after == expected
    assert got.bytes_after == server_bytes(expected)


def assert_keeps(got: PersonaEnsurePrediction, file_dict: dict[str, Any]) -> None:
    assert (got.action, got.writes, got.bytes_after, got.changes, got.may_rewrite) == ("keep", False, None, (), False)
    assert got.persona_after == file_dict


# -- fact 1: reading -------------------------------------------------------------------------------

#: The fresh persona for cards {"主人": {"档案名": ME}, "猫娘": {NAME: {"昵称": NAME}}}, no settings.
CARDS = {"主人": {"档案名": ME}, "猫娘": {NAME: {"昵称": NAME}}}
FRESH = {
    "neko": {"facts": [card("neko", "昵称", f"昵称: {NAME}")]},
    "master": {"facts": [card("master", "档案名", f"档案名: {ME}")]},
    "relationship": {"facts": []},
}


def test_fact1_a_persona_that_is_not_utf8_raises_and_is_kept(tmp_path: Path) -> None:
    data = json.dumps({"neko": {"facts": [other("r1", text="主人喜欢茶")]}}, ensure_ascii=False).encode("gbk")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    got = predict(folder(tmp_path, CARDS, data))
    assert (got.action, got.writes, got.bytes_after, got.persona_after) == ("raises", False, None, None)
    assert got.handlers_raise  # every persona handler's read raises the same way
    assert got.error is not None and "UnicodeDecodeError" in got.error


@pytest.mark.parametrize(
    "data",
    [
        b"",  # an empty file is not JSON
        b"{garbage",
        b'\xef\xbb\xbf{"neko": {"facts": []}}',  # json rejects a UTF-8 BOM
        b'[{"id": "r1"}]',  # a list top level
        b'"text"',
        b"null",
    ],
)
def test_fact1_an_unreadable_persona_is_replaced_with_a_fresh_one(tmp_path: Path, data: bytes) -> None:
    got = predict(folder(tmp_path, CARDS, data))
    assert_saves(got, "replace", FRESH)
    assert "lost" in got.message


def test_fact1_a_missing_persona_is_created(tmp_path: Path) -> None:
    got = predict(folder(tmp_path, CARDS))
    assert_saves(got, "create", FRESH)
    assert [m for m in got.missing_inputs if "settings.json" in m]  # the fill had no settings file


def test_fact1_a_folder_is_read_as_an_oserror_and_its_save_fails(tmp_path: Path) -> None:
    char = folder(tmp_path, CARDS)
    (char / "persona.json").mkdir()
    got = predict(char)
    assert (got.action, got.writes, got.handlers_raise, got.persona_after) == ("raises", False, True, None)


def test_fact1_a_fifo_or_a_refused_link_is_not_predicted(tmp_path: Path) -> None:
    char = folder(tmp_path, CARDS)
    os.mkfifo(char / "persona.json")
    assert predict(char).action == "unknown"  # never opened: the server's open would block
    (char / "persona.json").unlink()
    (char / "persona.json").write_text("{}")
    got = predict(char, refused="a symbolic link leading out of the character folder")
    assert (got.action, got.writes, got.persona_after) == ("unknown", False, None)


# -- fact 2: v1 keys -------------------------------------------------------------------------------


def test_fact2_v1_keys_move_to_the_end_and_dynamics_becomes_facts(tmp_path: Path) -> None:
    # Verified case (1): ai/user/dynamics in a compact ASCII-escaped file.
    m, r0, r1, r2, r3 = (other(i) for i in ("m", "r0", "r1", "r2", "r3"))
    persona = {
        "user": {"facts": [r1]},
        "__meta__": {"dynamics": [m], "v": 1},
        "ai": {"facts": [r0], "dynamics": [r2], "note": "n"},
        "relationship": {"dynamics": [r3]},
    }
    data = json.dumps(persona, separators=(",", ":")).encode()
    got = predict(folder(tmp_path, QUIET, data))
    expected = {
        "__meta__": {"v": 1, "facts": [m]},  # no facts before: added at the end of the section
        "relationship": {"facts": [r3]},
        "master": {"facts": [r1]},  # user: popped and re-inserted, at the end
        "neko": {"facts": [r2], "note": "n"},  # facts keeps its place, loses its old value
    }
    assert_saves(got, "rewrite", expected)
    assert list(json.loads(got.bytes_after or b"")) == ["__meta__", "relationship", "master", "neko"]


def test_fact2_an_old_key_stays_when_the_new_one_exists(tmp_path: Path) -> None:
    persona = {"user": {"facts": [other("r1")]}, "master": {"facts": [other("r2")]}, "neko": {"facts": []}}
    assert_keeps(predict(folder(tmp_path, QUIET, persona)), persona)


# -- fact 3: emptiness -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "empty"),
    [
        ({}, True),
        ({"neko": {"facts": []}, "master": {}}, True),
        ({"neko": [1, 2]}, True),  # a list top-level value is no dict value
        ({"neko": {"facts": "text", "n": 3}}, True),  # only lists count
        ({"neko": {"anything": [1]}}, False),  # under any key
        ({"__meta__": {"facts": [{"id": "__evidence_migration_v1__"}]}}, False),
    ],
)
def test_fact3_emptiness(persona: dict[str, Any], empty: bool) -> None:
    assert is_empty(persona) is empty


def test_fact3_a_marker_only_persona_is_not_empty(tmp_path: Path) -> None:
    persona = {"__meta__": {"facts": [{"id": "__evidence_migration_v1__", "text": "done"}]}}
    # not empty: no fill; the card sync creates neko and master in memory only, with no change
    assert_keeps(predict(folder(tmp_path, QUIET, persona)), persona)


def test_fact3_an_empty_persona_is_filled_and_always_saved(tmp_path: Path) -> None:
    persona = {"neko": {"facts": [], "k": "v"}, "notes": [1, 2], "x": 5}
    got = predict(folder(tmp_path, QUIET, persona))  # no settings: the fill adds nothing
    expected = {
        "neko": {"facts": [], "k": "v"},
        "notes": [1, 2],
        "x": 5,
        "master": {"facts": []},
        "relationship": {"facts": []},
    }
    assert_saves(got, "rewrite", expected)


# -- fact 4: the settings fill ---------------------------------------------------------------------

#: A master card with a name (the master key), and a neko card with nothing to sync.
NAMED = {"主人": {"档案名": ME}, "猫娘": {NAME: {"name": "reserved only"}}}


def test_fact4_settings_fill_routes_skips_dedups_and_formats(tmp_path: Path) -> None:
    # Verified case (2): an empty persona plus settings.json.
    settings = {
        ME: {"称呼": ME, "空": "  ", "无": None, "列": [], "典": {}},
        NAME: {"爱好": ["猫", "茶"], "设定": {"a": 1}, "年龄": 0, "已婚": False, "身高": 1.5, "真": True},
        "其他": {"称呼": ME},
        "另一个": {"称呼": ME, "地点": "东京"},
        "标量": 5,
    }
    got = predict(folder(tmp_path, NAMED, b"{}", settings))
    expected = {
        "neko": {
            "facts": [
                setting("爱好: ['猫', '茶']"),
                setting("设定: {'a': 1}"),
                setting("年龄: 0"),
                setting("已婚: False"),
                setting("身高: 1.5"),
                setting("真: True"),
            ]
        },
        # the fill's entry, then the card sync's change puts the card entry first
        "master": {"facts": [card("master", "档案名", f"档案名: {ME}"), setting(f"称呼: {ME}")]},
        # "另一个"'s 称呼 is already in relationship: skipped
        "relationship": {"facts": [setting(f"称呼: {ME}"), setting("地点: 东京")]},
    }
    assert_saves(got, "rewrite", expected)
    assert got.missing_inputs == ()


def test_fact4_the_settings_file_falls_back_to_the_memory_root(tmp_path: Path) -> None:
    char = folder(tmp_path, NAMED, b"{}", {NAME: {"k": "root"}}, settings_at="root")
    assert (predict(char).persona_after or {})["neko"] == {"facts": [setting("k: root")]}
    (char / "settings.json").write_text(json.dumps({NAME: {"k": "own"}}), encoding="utf-8")
    assert (predict(char).persona_after or {})["neko"] == {"facts": [setting("k: own")]}


@pytest.mark.parametrize("data", [b"{bad", b"[1, 2]", "{}".encode("utf-16")])
def test_fact4_an_unreadable_settings_file_adds_nothing(tmp_path: Path, data: bytes) -> None:
    got = predict(folder(tmp_path, QUIET, b"{}", data))
    assert_saves(got, "rewrite", {"neko": {"facts": []}, "master": {"facts": []}, "relationship": {"facts": []}})
    assert got.missing_inputs == ()


def test_fact4_without_the_masters_name_the_routing_is_not_known(tmp_path: Path) -> None:
    # no 档案名 on the master card: name_mapping['human'] is the localized default's
    got = predict(folder(tmp_path, QUIET, b"{}", {"某人": {"k": "v"}}))
    assert (got.action, got.writes, got.bytes_after, got.may_rewrite) == ("rewrite", True, None, False)
    assert [m for m in got.missing_inputs if "档案名" in m]


# -- fact 5: the card sync -------------------------------------------------------------------------


def test_fact5_the_expected_list(tmp_path: Path) -> None:
    neko = {
        "昵称": NAME,
        "voice_id": "v",  # reserved (and a legacy flat key)
        "name": "n",
        "描述": "d",
        "空": "  ",
        "无": None,
        "列": [],
        "典": {"a": 1},  # any dict is skipped
        "假": False,
        "零": 0,
        "爱好": ["猫", 1, ["a"]],
        "__ai_context.note": "一句完整的话",
        "__ai_contextual": "普通",
    }
    got = predict(folder(tmp_path, {"主人": {}, "猫娘": {NAME: neko}}))
    expected = {
        "neko": {
            "facts": [
                card("neko", "昵称", f"昵称: {NAME}"),
                card("neko", "假", "假: False"),
                card("neko", "零", "零: 0"),
                card("neko", "爱好", "爱好: 猫、1、['a']"),
                card("neko", "__ai_context.note", "一句完整的话"),
                card("neko", "__ai_contextual", "__ai_contextual: 普通"),
            ]
        },
        "master": {"facts": []},  # an empty master card is not synced
        "relationship": {"facts": []},
    }
    assert_saves(got, "create", expected)


def test_fact5_card_entries_out_of_sync(tmp_path: Path) -> None:
    # Verified case (3): one text changed, one field added, one removed, card entries behind
    # others (moved to the head); an in-sync master with a duplicate, left unmoved.
    cards = {"主人": {"档案名": ME}, "猫娘": {NAME: {"昵称": NAME, "年龄": 15, "爱好": ["猫", "茶"]}}}
    nick = {"id": card_id("neko", "昵称"), "text": f"昵称: {NAME}", "source": "character_card", "protected": True}
    hobby = {
        "id": card_id("neko", "爱好"),
        "source": "character_card",
        "text": "爱好: 猫",
        "token_count": 12,
        "reinforcement": 2.5,
        "embedding": [0.1, 0.2],
        "embedding_model_id": "m",
    }
    gone = {"id": card_id("neko", "旧字段"), "text": "旧字段: x", "source": "character_card"}
    dup1 = {"id": card_id("master", "档案名"), "text": f"档案名: {ME}", "source": "character_card"}
    dup2 = {**dup1, "reinforcement": 1.0}
    persona = {
        "neko": {"facts": [other("r1"), hobby, nick, gone]},
        "master": {"facts": [other("s1"), dup1, other("r2"), dup2]},
    }
    got = predict(folder(tmp_path, cards, persona))
    hobby_after = {
        "id": card_id("neko", "爱好"),
        "source": "character_card",
        "text": "爱好: 猫、茶",
        "token_count": None,  # kept in place, nulled
        "reinforcement": 2.5,  # evidence untouched, entry not normalised
        "embedding": None,
        "embedding_model_id": None,
        "token_count_text_sha256": None,  # missing ones appended, in fact 5's order
        "token_count_tokenizer": None,
        "embedding_text_sha256": None,
    }
    expected = {
        "neko": {"facts": [nick, card("neko", "年龄", "年龄: 15"), hobby_after, other("r1")]},
        "master": {"facts": [other("s1"), dup1, other("r2"), dup2]},  # no change there: nothing moves
    }
    assert_saves(got, "rewrite", expected)
    assert list(got.persona_after["neko"]["facts"][2]) == list(hobby_after)  # type: ignore[index]
    # the changes name ids and fields, never a text
    assert got.changes and not [c for c in got.changes if NAME in c or "猫" in c or ME in c]


def test_fact5_without_a_change_nothing_moves(tmp_path: Path) -> None:
    cards = {"主人": {"name": "x"}, "猫娘": {NAME: {"昵称": NAME, "年龄": 15}}}
    nick = {"id": card_id("neko", "昵称"), "text": f"昵称: {NAME}", "source": "character_card"}
    age = {"id": card_id("neko", "年龄"), "text": "年龄: 15", "source": "character_card"}
    persona = {"neko": {"facts": [other("r1"), age, nick, {**nick, "x": 1}]}, "master": {"facts": []}}
    # off the head, out of card order, duplicated: all stay, nothing is written
    assert_keeps(predict(folder(tmp_path, cards, persona)), persona)


def test_fact5_an_id_less_card_entry_is_a_change(tmp_path: Path) -> None:
    cards = {"主人": {"name": "x"}, "猫娘": {NAME: {"昵称": NAME}}}
    nick = {"id": card_id("neko", "昵称"), "text": f"昵称: {NAME}", "source": "character_card"}
    persona = {"neko": {"facts": [other("r1"), nick, {"text": "no id", "source": "character_card"}]}}
    got = predict(folder(tmp_path, cards, persona))
    # indexed under "", which no card field is: removed, and the section is rebuilt card first
    assert_saves(got, "rewrite", {"neko": {"facts": [nick, other("r1")]}, "master": {"facts": []}})


def test_fact5_a_changed_section_keeps_the_later_duplicate(tmp_path: Path) -> None:
    cards = {"主人": {"name": "x"}, "猫娘": {NAME: {"昵称": NAME, "年龄": 15, "爱好": "茶"}}}
    old = {"id": card_id("neko", "昵称"), "text": "昵称: 旧", "source": "character_card"}
    nick = {"id": card_id("neko", "昵称"), "text": f"昵称: {NAME}", "source": "character_card", "n": 2}
    age = {"id": card_id("neko", "年龄"), "text": "年龄: 15", "source": "character_card"}
    persona = {"neko": {"facts": [other("r1"), old, age, nick]}, "master": {"facts": []}}
    got = predict(folder(tmp_path, cards, persona))  # 爱好 is missing: a change
    expected = {"neko": {"facts": [nick, age, card("neko", "爱好", "爱好: 茶"), other("r1")]}, "master": {"facts": []}}
    assert_saves(got, "rewrite", expected)


@pytest.mark.parametrize("section", [[other("r1")], "text", None, 5])
def test_fact5_a_section_that_is_not_a_dict_raises_and_the_file_is_kept(tmp_path: Path, section: Any) -> None:
    # The further case "a list section": AttributeError, file kept; the handlers read it as it is.
    persona = {"neko": section, "master": {"facts": [other("r2")]}}
    got = predict(folder(tmp_path, QUIET, persona))
    assert (got.action, got.writes, got.bytes_after, got.handlers_raise) == ("raises", False, None, False)
    assert got.persona_after == persona
    assert got.error is not None and "AttributeError" in got.error


def test_fact5_facts_that_cannot_be_iterated_raise(tmp_path: Path) -> None:
    persona = {"neko": {"facts": 5}, "master": {"facts": [other("r2")]}}
    got = predict(folder(tmp_path, QUIET, persona))
    assert (got.action, got.persona_after) == ("raises", persona)
    assert got.error is not None and "TypeError" in got.error


def test_fact5_an_empty_master_card_is_not_synced(tmp_path: Path) -> None:
    persona = {"ai": {"facts": [other("r1")]}}
    got = predict(folder(tmp_path, {"主人": {}, "猫娘": {NAME: {}}}, persona))
    assert_saves(got, "rewrite", {"neko": {"facts": [other("r1")]}})  # no master section created
    got = predict(folder(tmp_path / "b", {"主人": {"name": "x"}, "猫娘": {NAME: {}}}, persona))
    assert_saves(got, "rewrite", {"neko": {"facts": [other("r1")]}, "master": {"facts": []}})


# -- fact 6: the new entry -------------------------------------------------------------------------


def test_fact6_a_new_entry_has_25_keys_in_order(tmp_path: Path) -> None:
    got = predict(folder(tmp_path, CARDS))
    new = (got.persona_after or {})["neko"]["facts"][0]
    assert list(new) == [
        "id", "text", "source", "source_id", "recent_mentions", "suppress", "suppressed_at", "protected",
        "reinforcement", "disputation", "rein_last_signal_at", "disp_last_signal_at", "sub_zero_days",
        "sub_zero_last_increment_date", "user_fact_reinforce_count", "merged_from_ids", "token_count",
        "token_count_text_sha256", "token_count_tokenizer", "version_history", "embedding",
        "embedding_text_sha256", "embedding_model_id", "last_refine_cluster_hash", "last_refine_at",
    ]  # fmt: skip
    assert (new["source"], new["protected"], new["reinforcement"], new["sub_zero_days"]) == (
        "character_card",
        True,
        0.0,
        0,
    )
    assert type(new["reinforcement"]) is float and type(new["sub_zero_days"]) is int


# -- fact 7: the cards -----------------------------------------------------------------------------


def test_fact7_override_profile_and_rename_event_lines(tmp_path: Path) -> None:
    neko = {
        "昵称": NAME,
        "性格": "旧",
        "_reserved": {
            "persona_override": {"profile": {"性格": "  温柔 ", "口癖": "喵", "爱好": "  ", "雷点": 0, "other": "x"}},
            "ai_context": {
                "rename_events": [
                    {"type": "profile_rename", "text": " 以前叫小白 "},
                    {"type": "other", "text": "not a rename"},
                    {"type": "profile_rename", "text": "后来改名"},
                ]
            },
        },
        "__ai_context.profile_rename_events": "taken",
    }
    got = predict(folder(tmp_path, {"主人": {}, "猫娘": {NAME: neko}}))
    assert (got.persona_after or {})["neko"]["facts"] == [
        card("neko", "昵称", f"昵称: {NAME}"),
        card("neko", "性格", "性格: 温柔"),  # set in place, stripped
        card("neko", "__ai_context.profile_rename_events", "taken"),
        card("neko", "口癖", "口癖: 喵"),  # appended
        card("neko", "__ai_context.profile_rename_events.2", "以前叫小白\n后来改名"),
    ]
    assert got.bytes_after is not None


def test_fact7_a_rename_sentence_is_localized_and_not_known(tmp_path: Path) -> None:
    events = [{"type": "profile_rename", "old_name": "小白", "new_name": NAME}]
    neko = {"昵称": NAME, "_reserved": {"ai_context": {"rename_events": events}}}
    got = predict(folder(tmp_path, {"主人": {}, "猫娘": {NAME: neko}}))
    assert (got.action, got.writes, got.bytes_after) == ("create", True, None)
    assert [m for m in got.missing_inputs if "rename" in m]
    persona = {"neko": {"facts": [other("r1")]}}
    got = predict(folder(tmp_path / "b", {"主人": {}, "猫娘": {NAME: neko}}, persona))
    assert (got.action, got.writes, got.may_rewrite, got.persona_after) == ("keep", False, True, persona)


def test_fact7_the_catgirl_card_is_migrated_the_master_card_is_not(tmp_path: Path) -> None:
    cards = {
        "主人": {"pngtuber": "m.png"},
        "猫娘": {NAME: {"昵称": NAME, "pngtuber": "p.png", "pngtuber_idle_image": "i.png", "_reserved": "broken"}},
    }
    got = predict(folder(tmp_path, cards))
    after = got.persona_after or {}
    assert after["neko"]["facts"] == [card("neko", "昵称", f"昵称: {NAME}")]
    assert after["master"]["facts"] == [card("master", "pngtuber", "pngtuber: m.png")]


def test_fact7_cards_and_name_mapping_from_characters_json() -> None:
    doc = {"主人": {"档案名": ME, "性别": "男"}, "猫娘": {NAME: {"昵称": NAME}, "other": {}}}
    got = cards_from(CharacterList("/c.json", frozenset(doc["猫娘"]), None, doc), NAME)
    assert got == Cards({"昵称": NAME, "_reserved": {}}, {"档案名": ME, "性别": "男"}, ME)
    assert cards_from(CharacterList("/c.json", frozenset(), None, doc), "absent").neko is None
    # no 档案名: the default master card's, not known here
    nameless = {"主人": {"性别": "男"}, "猫娘": {NAME: {}}}
    assert isinstance(cards_from(CharacterList("/c.json", None, None, nameless), NAME).human, Unknown)
    # no 主人 at all: the default master card
    got = cards_from(CharacterList("/c.json", None, None, {"猫娘": {NAME: {}}}), NAME)
    assert isinstance(got.master, Unknown) and isinstance(got.human, Unknown)
    # a catgirl map that is not a dict: aget_character_data raises
    assert cards_from(CharacterList("/c.json", None, None, {"主人": {}, "猫娘": ["x"]}), NAME).error


def test_fact7_without_a_readable_characters_json_the_cards_are_the_unknown_defaults(tmp_path: Path) -> None:
    persona = {"neko": {"facts": [other("r1")]}, "master": {"facts": []}}
    got = predict(folder(tmp_path, None, persona))  # no characters.json found
    assert (got.action, got.writes, got.may_rewrite, got.persona_after) == ("keep", False, True, persona)
    assert [m for m in got.missing_inputs if "no characters.json found" in m]
    got = predict(folder(tmp_path / "b", None))
    assert (got.action, got.writes, got.bytes_after, got.may_rewrite) == ("create", True, None, False)
    broken = read_characters(folder(tmp_path / "c", b"{bad").parent.parent / "config" / "characters.json")
    assert cards_from(broken, NAME).neko is None  # only "test" is listed, and ensured
    assert isinstance(cards_from(broken, "test").neko, Unknown)


def test_fact7_when_aget_character_data_raises_the_fill_raises_and_the_sync_changes_nothing() -> None:
    raising = Cards(error="its '猫娘' is a JSON list: AttributeError")
    empty = predict_persona_ensure(FileInput("bytes", b"{}"), NAME, raising, FileInput("missing"))
    assert (empty.action, empty.persona_after, empty.handlers_raise) == ("raises", {}, False)
    full = {"neko": {"facts": [other("r1")]}}
    got = predict_persona_ensure(FileInput("bytes", json.dumps(full).encode()), NAME, raising, FileInput("missing"))
    assert_keeps(got, full)


# -- fact 8: saving --------------------------------------------------------------------------------


def test_fact8_the_saved_bytes(tmp_path: Path) -> None:
    persona = b'{"user":{"facts":[{"id":"r1","text":"\\u732b"}]},"ai":{"facts":[{"id":"r2","text":"\\u8336"}]}}'
    got = predict(folder(tmp_path, QUIET, persona))
    assert got.action == "rewrite"
    assert got.bytes_after == (
        '{\n  "master": {\n    "facts": [\n      {\n        "id": "r1",\n        "text": "猫"\n      }\n    ]\n  },\n'
        '  "neko": {\n    "facts": [\n      {\n        "id": "r2",\n        "text": "茶"\n      }\n    ]\n  }\n}'
    ).encode()


def test_fact8_an_already_synced_file_in_foreign_formatting_is_not_written(tmp_path: Path) -> None:
    # Verified case (4): the same bytes stay, whatever their formatting.
    cards = {"主人": {"档案名": ME}, "猫娘": {NAME: {"昵称": NAME}}}
    persona = {
        "neko": {"facts": [card("neko", "昵称", f"昵称: {NAME}"), other("r1")]},
        "master": {"facts": [card("master", "档案名", f"档案名: {ME}")]},
    }
    data = json.dumps(persona, separators=(",", ":")).encode() + b"\n"
    assert_keeps(predict(folder(tmp_path, cards, data)), persona)


def test_fact8_a_save_that_fails_raises_and_keeps_the_file(tmp_path: Path) -> None:
    persona = b'{"ai": {"facts": [{"id": "r1", "text": "\\ud800"}]}}'  # a lone surrogate: UTF-8 cannot write it
    got = predict(folder(tmp_path, QUIET, persona))
    assert (got.action, got.writes, got.handlers_raise) == ("raises", False, False)
    assert got.persona_after == {"ai": {"facts": [{"id": "r1", "text": "\ud800"}]}}


# -- the inputs ------------------------------------------------------------------------------------


def test_a_settings_fifo_blocks_the_fill_so_the_start_is_not_predicted(tmp_path: Path) -> None:
    char = folder(tmp_path, QUIET, b"{}")
    os.mkfifo(char / "settings.json")
    assert predict(char).action == "unknown"
    full = {"neko": {"facts": [other("r1")]}, "master": {"facts": []}}
    (char / "persona.json").write_text(json.dumps(full), encoding="utf-8")
    assert_keeps(predict(char), full)  # no fill: the FIFO is never read


def test_the_run_records_what_it_could_not_know() -> None:
    run = EnsureRun()
    run.unknown("x")
    run.unknown("x")
    assert (run.missing, run.inexact) == (["x"], True)


# -- the replay after ensure: its changes are against the persona ensure leaves (§9.9) ----------------


def test_after_a_rewrite_the_replays_changes_are_those_of_the_pending_events_only(tmp_path: Path) -> None:
    from journal.diagnosis import diagnose_character
    from journal.fixtures import PERSONA_ENTRY, pending_tail

    root = tmp_path / "app" / "memory"
    b = pending_tail(root)  # its tail2 sets master/prom_ref… reinforcement to 3.1
    config = tmp_path / "app" / "config"
    config.mkdir()
    cards = {"主人": {"档案名": ME}, "猫娘": {b.name: {"昵称": NAME}}}
    (config / "characters.json").write_text(json.dumps(cards, ensure_ascii=False), encoding="utf-8")
    s = diagnose_character(b.path, characters=read_characters(config / "characters.json")).server_start
    assert s is not None and s.persona[0] == "rewrite"  # the card sync: entries added, one removed
    persona = [c for c in s.changes if c.file == "persona.json"]
    # The card entries ensure added are ensure's changes (s.persona_ensure.changes), not the replay's.
    assert [(c.entry, c.added, c.removed) for c in persona] == [("/".join(PERSONA_ENTRY), False, False)]
    key, eid = PERSONA_ENTRY
    view = json.loads((b.path / "persona.json").read_text(encoding="utf-8"))
    before = next(e for e in view[key]["facts"] if e["id"] == eid)["reinforcement"]
    assert before != 3.1 and ("reinforcement", before, 3.1) in persona[0].fields
