"""Where an entry sits in a view or shard, which events touch it, and searching a JSON tree."""

from __future__ import annotations

import json

from inspector.core.views import (
    build_provenance,
    entry_at,
    files_for_event,
    list_view_files,
    load_file,
    locate_entry,
    provenance_of,
    search_tree,
)
from journal.diagnosis import EventInfo

PERSONA = {"master": {"facts": [{"id": "card_1", "text": "Name"}, {"id": "prom_ref_2", "text": "Tea"}]}, "neko": {}}
REFLECTIONS = [{"id": "ref_a", "text": "x"}, {"id": "ref_b", "text": "Oolong"}]


def test_locate_and_reverse():
    assert locate_entry("persona.json", PERSONA, "master/prom_ref_2") == ("master", "facts", 1)
    assert locate_entry("reflections.json", REFLECTIONS, "ref_b") == (1,)
    assert locate_entry("reflections.json", REFLECTIONS, "master/ref_b") is None
    assert locate_entry("reflection_archive/2026-01-01_0a1b2c3d.json", REFLECTIONS, "ref_a") == (0,)
    assert locate_entry("persona_archive/2026-01-01_0a1b2c3d.json", [{"id": "card_1"}], "master/card_1") == (0,)
    assert entry_at("persona.json", PERSONA, ("master", "facts", 1, "text")) == "master/prom_ref_2"
    assert entry_at("reflections.json", REFLECTIONS, (1, "text")) == "ref_b"
    assert entry_at("persona_archive/x.json", [{"id": "card_1"}], (0,)) == "*/card_1"
    assert entry_at("persona.json", PERSONA, ("neko",)) is None


def test_files_for_event_prefer_the_view_then_the_named_shard():
    ev = EventInfo(0, 1, 0, "e", "reflection.state_changed", "t", "ref_a")
    assert files_for_event(ev, {"archive_shard_path": "2026-01-01_0a1b2c3d.json"}) == [
        "reflections.json",
        "reflection_archive/2026-01-01_0a1b2c3d.json",
    ]
    hostile = files_for_event(ev, {"archive_shard_path": "../../etc/passwd"})
    assert hostile == ["reflections.json"]


def test_provenance_index():
    index = build_provenance(["ref_a", None, "master/card_1", "ref_a"])
    assert provenance_of(index, "ref_a") == [0, 3]
    assert provenance_of(index, "*/card_1") == [2]
    assert provenance_of(index, "ref_zzz") == []


def test_search_tree_finds_keys_and_values_in_order():
    assert search_tree(PERSONA, "tea") == [("master", "facts", 1, "text")]
    assert search_tree(REFLECTIONS, "ID")[:2] == [(0, "id"), (1, "id")]


def test_listing_and_loading_files(tmp_path):
    (tmp_path / "reflections.json").write_text(json.dumps(REFLECTIONS))
    (tmp_path / "persona.json").write_text("{broken")
    (tmp_path / "reflection_archive").mkdir()
    (tmp_path / "reflection_archive" / "2026-01-01_0a1b2c3d.json").write_text("[]")
    files = list_view_files(tmp_path)
    assert files == ["reflections.json", "persona.json", "facts.json", "reflection_archive/2026-01-01_0a1b2c3d.json"]
    assert load_file(tmp_path, "reflections.json").value == REFLECTIONS
    assert "not valid JSON" in load_file(tmp_path, "persona.json").error
    assert load_file(tmp_path, "facts.json").missing
