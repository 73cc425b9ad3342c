"""The server model's last step: what the memory server's start does after reconcile (memory-format
§9.8 item 7), from the folder as reconcile leaves it in the model's overlay.

1. The evidence migration, when ``persona.json`` (as persona ensure leaves it) lacks its marker:
   each seed is a live ``record_and_save``, which appends an event and moves the sentinel to the
   journal end unconditionally, so whatever reconcile left unapplied is orphaned during the same
   start, and the first append after a torn last line is glued onto it. Then the marker is saved.
2. The archive migration: a flat ``reflections_archive.json`` becomes shards, its marker
   ``reflection_archive/.migrated_from_flat`` is written, and the flat file is deleted.
"""

from __future__ import annotations

from typing import Any

from journal.diagnosis.checks import Character
from journal.diagnosis.folder import ProjectionStore
from journal.diagnosis.values import ServerStart
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.layout import MIGRATION_MARKER
from journal.servermigrations import (
    FLAT_ARCHIVE,
    archive_migration,
    evidence_seeds,
    has_evidence_marker,
    reflection_needs_seed,
)
from journal.serverrules import append_glues, sentinel_after
from journal.shards import REFLECTION_ARCHIVE
from journal.views import PERSONA, REFLECTIONS


def predict_after_reconcile(c: Character, s: ServerStart, store: ProjectionStore, persona_after_ensure: Any) -> None:
    """Fill ``s.evidence_seeds``, ``s.migration_orphans``, ``s.migration_glues`` and ``s.archive``,
    move ``s.sentinel_after`` where the migration's live writes leave it, and add their writes and
    deletions (call it after the replay's prediction).

    Args:
        persona_after_ensure: the persona the migration's own persona ensure returns
            (:attr:`journal.serverpersona.PersonaEnsurePrediction.returned`; ``None``: it raises
            or is not known, and the evidence migration returns at once). The
            migration seeds from the views as reconcile leaves them, which is what the server's
            migration reads: its reflections from the file (``_aload_reflections_full``), its
            persona from the persona cache, which ensure filled and every persona handler that
            changes the file replaces with what it saved (``memory/evidence_handlers.py:219``,
            ``:303``, ``:479``); the card sync that call redoes on the cache changes nothing a
            replayed event can touch (their payloads never carry a text).
    """
    folder = c.folder
    assert folder is not None
    writes = [w for w, _ in s.writes]
    if persona_after_ensure is not None and not has_evidence_marker(persona_after_ensure):
        reflections, persona = _views_after_reconcile(c, store, persona_after_ensure)
        s.evidence_seeds = evidence_seeds(reflections, persona)
        if s.evidence_seeds:
            s.sentinel_after = sentinel_after(s.applied, s.sentinel_after.event_id, s.evidence_seeds)
            s.migration_orphans = s.unapplied
            s.migration_glues = append_glues(any(d.kind == "torn_tail" for d in c.defects))
            writes += [JOURNAL_NAME, SENTINEL_NAME]
            if any(reflection_needs_seed(r) for r in reflections):
                writes.append(REFLECTIONS)
        writes.append(PERSONA)  # the marker
        n = s.evidence_seeds
        s.notes.append(
            "after reconcile, its one-shot evidence migration runs (persona.json lacks its marker): "
            + (
                f"{n} live write{'s' if n != 1 else ''}, each appending an event and moving the sentinel to the "
                "journal end, then it saves the marker"
                if n
                else "it finds nothing to seed and saves the marker"
            )
        )
    migration = archive_migration(c.dir)
    if migration is not None:
        s.archive = migration
        writes.append(f"{REFLECTION_ARCHIVE}/{MIGRATION_MARKER}")
        s.deletes.append(FLAT_ARCHIVE)
        dates = "dates not read here" if migration.dates is None else ", ".join(migration.dates) or "no dated entry"
        undated = f"; {migration.undated} undated entries go under the day it runs" if migration.undated else ""
        s.notes.append(
            f"after reconcile, its archive migration converts {FLAT_ARCHIVE} into shards ({dates}{undated}), "
            f"writes {REFLECTION_ARCHIVE}/{MIGRATION_MARKER} and deletes the flat file"
        )
    known = {w for w, _ in s.writes}
    s.writes += [(w, False) for w in dict.fromkeys(writes) if w not in known]


def _views_after_reconcile(c: Character, store: ProjectionStore, persona: Any) -> tuple[list[Any], Any]:
    """The reflections and the persona as reconcile leaves them: the folder's views with every entry
    the replay changed (the overlay's), on the persona ensure left."""
    assert c.folder is not None
    changed: dict[tuple[str, str], Any] = {
        (name, ref): after for name, ref, _before, after in store.changed_entries()
    }
    view = c.folder.view(REFLECTIONS, list)
    reflections: list[Any] = []
    for r in view.value if view.exists and isinstance(view.value, list) else []:
        key = (REFLECTIONS, r.get("id")) if isinstance(r, dict) and isinstance(r.get("id"), str) else None
        if key is not None and key in changed:
            if changed[key] is not None:
                reflections.append(changed[key])
            continue
        reflections.append(r)
    if not isinstance(persona, dict):
        return reflections, persona
    merged: dict[str, Any] = {}
    for section_key, section in persona.items():
        facts = section.get("facts") if isinstance(section, dict) else None
        if not isinstance(facts, list):
            merged[section_key] = section
            continue
        out = []
        for e in facts:
            ref = (PERSONA, f"{section_key}/{e.get('id')}") if isinstance(e, dict) else None
            if ref is not None and ref in changed:
                if changed[ref] is not None:
                    out.append(changed[ref])
                continue
            out.append(e)
        merged[section_key] = {**section, "facts": out}
    return reflections, merged
