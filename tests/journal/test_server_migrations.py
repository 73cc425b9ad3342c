"""What the server's start does after reconcile: its one-shot migrations (issue 24 item 4;
memory-format §9.8 item 7, ``app/memory_server/evidence_loops.py``, ``memory/archive_shards.py``).

The evidence migration runs when ``persona.json`` (as persona ensure leaves it) lacks the marker
``__meta__/__evidence_migration_v1__``; each seed is a live ``record_and_save``, which appends an
event and moves the sentinel to the journal end, so whatever reconcile left unapplied is orphaned
during the same start, and its first append after a torn last line is glued onto it. The archive
migration converts a flat ``reflections_archive.json`` into shards, writes its marker and deletes the
flat file.
"""

from __future__ import annotations

import json
from pathlib import Path

from journal import fs
from journal.diagnosis import diagnose_character
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.fixtures import REFLECTION_IDS, healthy, legacy_type_blocked, torn_tail, views_only_export
from journal.servermigrations import MARKER_SECTION
from journal.serverrules import read_characters
from journal.shards import REFLECTION_ARCHIVE
from journal.views import PERSONA, REFLECTIONS


def _drop_marker(cd: Path) -> None:
    persona = json.loads((cd / PERSONA).read_text(encoding="utf-8"))
    del persona[MARKER_SECTION]
    fs.atomic_write_json(cd / PERSONA, persona)


def _codes(d):
    return {f.code: f for f in d.findings}


def test_with_its_marker_the_evidence_migration_does_not_run(tmp_path: Path) -> None:
    s = diagnose_character(healthy(tmp_path).path).server_start
    assert s is not None and s.evidence_seeds is None and s.writes == []
    assert s.to_json()["after_reconcile"] == {"evidence_migration": None, "archive_migration": None}


def test_without_its_marker_it_seeds_what_has_no_signal_yet_and_saves_the_marker(tmp_path: Path) -> None:
    cd = healthy(tmp_path).path
    _drop_marker(cd)
    # one reflection promoted without a signal timestamp: a seed (promoted: reinforcement 2.0)
    refl = json.loads((cd / REFLECTIONS).read_text(encoding="utf-8"))
    target = next(r for r in refl if r["id"] == REFLECTION_IDS[3])
    target.update(status="promoted", rein_last_signal_at=None, disp_last_signal_at=None)
    fs.atomic_write_json(cd / REFLECTIONS, refl)
    s = diagnose_character(cd).server_start
    assert s is not None
    # seeds: that reflection, plus each unprotected persona entry with no evidence and no signal yet
    persona = json.loads((cd / PERSONA).read_text(encoding="utf-8"))
    unsignalled = [
        e
        for k, sec in persona.items()
        for e in sec["facts"]
        if not e.get("protected")
        and not (e.get("rein_last_signal_at") or e.get("disp_last_signal_at"))
        and not (e.get("reinforcement") or e.get("disputation"))
    ]
    assert s.evidence_seeds == 1 + len(unsignalled)
    assert s.migration_orphans == 0  # reconcile left nothing unapplied
    paths = [p for p, _ in s.writes]
    assert {JOURNAL_NAME, SENTINEL_NAME, REFLECTIONS, PERSONA} <= set(paths)
    assert "server.migration_orphans" not in _codes(diagnose_character(cd))


def test_its_live_writes_orphan_what_reconcile_left_unapplied_during_the_same_start(tmp_path: Path) -> None:
    b = legacy_type_blocked(tmp_path)  # the server's replay stops at an event without a handler
    _drop_marker(b.path)
    refl = json.loads((b.path / REFLECTIONS).read_text(encoding="utf-8"))
    refl[0].update(status="confirmed", rein_last_signal_at=None, disp_last_signal_at=None)
    fs.atomic_write_json(b.path / REFLECTIONS, refl)
    d = diagnose_character(b.path)
    s = d.server_start
    assert s is not None and s.stop is not None and s.unapplied > 0
    assert s.evidence_seeds and s.migration_orphans == s.unapplied
    f = _codes(d)["server.migration_orphans"]
    assert f.severity == "error" and f"the {s.unapplied} record" in f.message and "this very start" in f.message
    assert s.to_json()["after_reconcile"]["evidence_migration"] == {
        "seeds": s.evidence_seeds,
        "orphans": s.unapplied,
        "glues": False,
    }


def test_after_a_torn_last_line_its_first_append_is_glued_and_lost(tmp_path: Path) -> None:
    b = torn_tail(tmp_path)
    _drop_marker(b.path)
    refl = json.loads((b.path / REFLECTIONS).read_text(encoding="utf-8"))
    refl[0].update(status="denied", rein_last_signal_at=None, disp_last_signal_at=None)
    fs.atomic_write_json(b.path / REFLECTIONS, refl)
    d = diagnose_character(b.path)
    s = d.server_start
    assert s is not None and s.evidence_seeds and s.migration_glues
    glued = _codes(d)["server.next_append_glued"]
    assert glued.severity == "error" and "evidence migration" in glued.message and "every later start" in glued.message


def test_a_flat_archive_is_converted_into_shards_and_deleted(tmp_path: Path) -> None:
    cd = healthy(tmp_path).path
    flat = [
        {"id": "ref_aaaaaaaaaaaaaaaa", "archived_at": "2026-03-02T10:00:00"},
        {"id": "ref_bbbbbbbbbbbbbbbb", "archived_at": "2026-03-05T11:00:00"},
        {"id": "ref_cccccccccccccccc"},
    ]
    (cd / "reflections_archive.json").write_text(json.dumps(flat), encoding="utf-8")
    s = diagnose_character(cd).server_start
    assert s is not None and s.archive is not None
    assert s.archive.dates == ("2026-03-02", "2026-03-05") and s.archive.undated == 1
    assert f"{REFLECTION_ARCHIVE}/.migrated_from_flat" in [p for p, _ in s.writes]
    assert "reflections_archive.json" in s.deletes
    assert s.to_json()["after_reconcile"]["archive_migration"] == {"dates": ["2026-03-02", "2026-03-05"], "undated": 1}

    (cd / REFLECTION_ARCHIVE).mkdir(exist_ok=True)
    (cd / REFLECTION_ARCHIVE / ".migrated_from_flat").write_text("{}", encoding="utf-8")
    s = diagnose_character(cd).server_start
    assert s is not None and s.archive is None and "reflections_archive.json" not in s.deletes


def test_a_flat_archive_that_is_not_a_list_is_kept(tmp_path: Path) -> None:
    cd = healthy(tmp_path).path
    (cd / "reflections_archive.json").write_text('{"not": "a list"}', encoding="utf-8")
    s = diagnose_character(cd).server_start
    assert s is not None and s.archive is None and s.deletes == []


def test_when_persona_ensure_raises_the_evidence_migration_returns_at_once(tmp_path: Path) -> None:
    # The migration's own aensure_persona (evidence_loops.py:636-640) finds nothing cached after the
    # start's ensure raised, runs the same steps on the same file, raises again, and returns: no
    # seed, no marker, although the file lacks it (memory-format §9.8.7, §9.9 fact 5).
    root = tmp_path / "app" / "memory"
    cd = healthy(root).path
    _drop_marker(cd)
    persona = json.loads((cd / PERSONA).read_text(encoding="utf-8"))
    persona["neko"] = []  # the neko card sync's setdefault on it raises (AttributeError)
    fs.atomic_write_json(cd / PERSONA, persona)
    config = tmp_path / "app" / "config"
    config.mkdir()
    (config / "characters.json").write_text(json.dumps({"主人": {}, "猫娘": {"healthy": {}}}), encoding="utf-8")
    s = diagnose_character(cd, characters=read_characters(config / "characters.json")).server_start
    assert s is not None and s.persona[0] == "raises"
    assert s.evidence_seeds is None and s.migration_orphans == 0
    assert PERSONA not in [p for p, _ in s.writes]


def test_without_a_journal_the_start_still_ensures_the_persona_and_runs_its_migrations(tmp_path: Path) -> None:
    # A missing journal is no records to the server (memory/event_log.py:284-285): its reconcile
    # replays nothing and its start goes on; the migration's live writes then create the journal.
    cd = views_only_export(tmp_path).path
    _drop_marker(cd)
    d = diagnose_character(cd)
    assert not d.journal.present
    s = d.server_start
    assert s is not None and s.replays == 0 and s.evidence_seeds
    assert {JOURNAL_NAME, SENTINEL_NAME, PERSONA} <= {p for p, _ in s.writes}
    assert s.sentinel_after.by == "live_write"


def test_with_a_journal_it_cannot_read_persona_ensure_still_writes_and_the_rest_is_not_predicted(
    tmp_path: Path,
) -> None:
    root = tmp_path / "app" / "memory"
    cd = healthy(root).path
    (cd / JOURNAL_NAME).unlink()
    (cd / JOURNAL_NAME).mkdir()  # there, but no file: its open raises
    config = tmp_path / "app" / "config"
    config.mkdir()
    cards = {"主人": {"档案名": "哥哥"}, "猫娘": {"healthy": {"昵称": "小天"}}}  # the card sync rewrites persona.json
    (config / "characters.json").write_text(json.dumps(cards, ensure_ascii=False), encoding="utf-8")
    s = diagnose_character(cd, characters=read_characters(config / "characters.json")).server_start
    assert s is not None and s.persona[0] == "rewrite"
    assert s.writes == [(PERSONA, False)] and s.evidence_seeds is None and s.replays == 0
    assert any("not predicted" in n and JOURNAL_NAME in n for n in s.notes)
