"""Comparing two exports: the fixture pairs of issue 17, and the command's contract."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.compare import compare_paths
from journal import fixtures
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.log import EventLog
from journal.reconcile import Reconciler
from journal.views import PERSONA, load_view, save_view

NAME = "healthy"


@pytest.fixture
def pair(tmp_path):
    """A: the healthy fixture; B: a copy, which each test changes."""
    a = tmp_path / "a"
    fixtures.healthy(a)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    return a / NAME, b / NAME


def _compare(a: Path, b: Path):
    snap_a, snap_b = fixtures.tree_snapshot(a), fixtures.tree_snapshot(b)
    result = compare_paths(a, b)
    assert fixtures.tree_snapshot(a) == snap_a and fixtures.tree_snapshot(b) == snap_b  # both only read
    return result


def test_identical(pair):
    result = _compare(*pair)
    assert result.identical and result.journal.common_prefix == result.journal.a.events > 0
    assert result.journal.diverges_at is None and result.entries == []


def test_b_is_a_plus_new_events(pair):
    a, b = pair
    w = fixtures.Writer(b.parent, NAME, fixtures.Deterministic("more"))
    ev = w.reflection_evidence(fixtures.REFLECTION_IDS[0], 2.7)
    result = _compare(a, b)
    j = result.journal
    assert j.common_prefix == j.a.events and j.diverges_at == j.a.events
    assert [e.event_id for e in j.only_b] == [ev.event_id] and j.only_a == []
    assert j.only_b[0].index == j.a.events and j.only_b[0].type == "reflection.evidence_updated"
    assert j.b.sentinel_index == j.a.events and j.a.sentinel_index == j.a.events - 1
    changed = [e for e in result.entries if e.view == "reflections"]
    assert changed and changed[0].entry == fixtures.REFLECTION_IDS[0]
    assert ("reinforcement", 1.2, 2.7) in {(f.field, f.before, f.after) for f in changed[0].fields}


def test_b_restored_from_an_older_backup(tmp_path):
    old = tmp_path / "old"
    fixtures.healthy(old)
    new = tmp_path / "new"
    shutil.copytree(old, new)
    w = fixtures.Writer(new, NAME, fixtures.Deterministic("later"))
    w.reflection_evidence(fixtures.REFLECTION_IDS[0], 2.7)
    w.reflection_evidence(fixtures.REFLECTION_IDS[1], 3.3)
    result = _compare(new / NAME, old / NAME)  # A: the live folder; B: restored from the backup
    j = result.journal
    assert j.b.events == j.a.events - 2 and len(j.only_a) == 2 and j.only_b == []
    assert j.a.sentinel_event_id != j.b.sentinel_event_id and j.b.sentinel_index == j.b.events - 1


def test_b_after_a_correction_merge_changes_text_with_no_event(pair):
    a, b = pair
    persona = load_view(b / PERSONA, dict)
    entry = persona["master"]["facts"][1]
    before = entry["text"]
    entry["text"] = "Master drinks green tea, but only on weekends"
    save_view(b / PERSONA, persona)
    result = _compare(a, b)
    assert result.journal.identical
    (e,) = result.entries
    assert e.view == "persona" and e.entry == f"master/{entry['id']}" and e.change == "changed"
    assert [(f.field, f.before, f.after) for f in e.fields] == [("text", before, entry["text"])]


def test_b_after_a_full_replay_that_rolled_evidence_back(tmp_path):
    """Format notes §9.4: two merges into one entry, then a replay from the start stops at the first
    merge (its text hash no longer matches) with the older evidence."""
    a_root = tmp_path / "a"
    built = fixtures.healthy(a_root)
    key, pid = fixtures.PERSONA_ENTRY
    w = fixtures.Writer(a_root, NAME, fixtures.Deterministic("second merge"))
    w.merge(key, pid, "Master drinks green tea every evening, slowly", list(fixtures.REFLECTION_IDS[1:3]))
    w.persona_evidence(key, pid, 3.5)
    b_root = tmp_path / "b"
    shutil.copytree(a_root, b_root)
    (b_root / NAME / SENTINEL_NAME).unlink()  # the server will replay from the start
    Reconciler(EventLog(b_root)).reconcile(NAME)
    result = _compare(built.path, b_root / NAME)
    assert result.journal.b.sentinel_index is not None and result.journal.b.sentinel_index < result.journal.a.events
    rolled = [e for e in result.entries if e.entry == f"{key}/{pid}"]
    assert rolled, result.entries
    fields = {f.field: (f.before, f.after) for f in rolled[0].fields}
    assert fields["reinforcement"][0] == 3.5 and fields["reinforcement"][1] < 3.5


def test_one_side_damaged(pair):
    a, b = pair
    with open(b / JOURNAL_NAME, "ab") as fh:
        fh.write(b'{"event_id": "torn')
    (b / "facts.json").write_bytes(b"[{not json")
    result = _compare(a, b)
    j = result.journal
    assert j.a.damage == [] and [d.kind for d in j.b.damage] == ["torn_tail"]
    assert not result.identical
    assert [(p.side, p.file) for p in result.view_problems] == [("b", "facts.json")]
    assert not any(e.view == "facts" for e in result.entries)


def test_entries_moved_into_archive_shards_name_the_shard(tmp_path):
    a_root = tmp_path / "a"
    fixtures.healthy(a_root)
    b_root = tmp_path / "b"
    shutil.copytree(a_root, b_root)
    w = fixtures.Writer(b_root, NAME, fixtures.Deterministic("archive"))
    w.archive_reflection(fixtures.REFLECTION_IDS[3])
    result = _compare(a_root / NAME, b_root / NAME)
    (moved,) = [e for e in result.entries if e.entry == fixtures.REFLECTION_IDS[3]]
    assert moved.change == "archived" and moved.shard.startswith("reflection_archive/")


def test_outbox_added_and_finished(pair):
    a, b = pair
    op = "00000000-0000-4000-8000-000000000001"
    with open(a / "outbox.ndjson", "ab") as fh:
        pending = {"op_id": op, "type": "synth_reflection", "payload": {}, "status": "pending"}
        fh.write(json.dumps(pending).encode() + b"\n")
    shutil.copy(a / "outbox.ndjson", b / "outbox.ndjson")
    new = "00000000-0000-4000-8000-000000000002"
    with open(b / "outbox.ndjson", "ab") as fh:
        fh.write(json.dumps({"op_id": op, "status": "done"}).encode() + b"\n")
        fh.write(json.dumps({"op_id": new, "type": "check_feedback", "payload": {}, "status": "pending"}).encode())
        fh.write(b"\n")
    result = _compare(a, b)
    assert result.outbox.added == (new,) and result.outbox.finished == (op,)


def test_zips_compare_like_folders(pair, tmp_path):
    a, b = pair
    za = fixtures.zip_export(a, tmp_path / "a.zip")
    zb = fixtures.zip_export(b, tmp_path / "b.zip")
    assert compare_paths(za, zb).identical
    assert compare_paths(za, b).identical


def test_cli_exit_codes_and_json(pair, capsys):
    a, b = pair
    assert main(["diff", str(a), str(b)]) == 0
    assert "identical" in capsys.readouterr().out
    (b / "facts.json").write_bytes(b"[]")
    assert main(["diff", str(a), str(b), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == 2 and doc["identical"] is False and doc["status"] == "different"
    keys = {"schema", "a", "b", "character", "identical", "status", "problems", "journal", "files", "states"}
    assert set(doc) == keys | {"views", "outbox"}
    assert [f["file"] for f in doc["files"]] == ["facts.json"]
    assert {e["change"] for e in doc["views"]["entries"]} == {"removed"}
    assert main(["diff", str(a), str(a.parent / "missing")]) == 2
    assert main(["diff", str(a.parent), str(b)]) == 1  # a root with one character is that character
    assert main(["diff", str(a.parent), str(b), "--character", "nobody"]) == 2
