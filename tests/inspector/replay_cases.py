"""Character folders in the real format for the guarded-replay tests, one per case.

The shared builder (``journal.fixtures``) makes the diagnosis cases; these variants add what a
replay test needs on top: an applicable event *before* each blocked one (so a real apply happens,
a backup is taken and the sentinel must land just before the block), a pending archive event, and a
lost persona archive entry. Built through ``journal``'s own writers; where the case is a quirk of
the memory server (a live write that orphans a tail, a crash between an archive event and its shard
append, a glued line) the files are written the way the memory server leaves them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from journal import fs
from journal.events import JOURNAL_NAME, encode_event, new_event
from journal.log import EventLog
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, ensure_shard
from journal.views import PERSONA, REFLECTIONS, load_view, write_sentinel

CHARACTER = "Alice"

#: Cases whose folder replay can work on (the zip and the server lock are separate fixtures).
FOLDER_CASES = (
    "healthy",
    "pending_tail",
    "legacy_block",
    "legacy_orphaned",
    "glued",
    "torn_tail",
    "archive_lost",
    "persona_drift",
    "corrupt_shard",
    "hostile_shard",
    "views_only",
)

#: The reason replay stops with, per case (others run to the end).
BLOCKED = {
    "legacy_block": "no_handler",
    "persona_drift": "view_drift",
    "corrupt_shard": "corrupt_shard",
    "hostile_shard": "bad_shard_name",
}

SHARD = "2026-05-01_0a1b2c3d.json"


def _reflection(rid: str, text: str, status: str = "pending") -> dict[str, Any]:
    return {
        "id": rid,
        "text": text,
        "entity": "master",
        "status": status,
        "source_fact_ids": [f"fact_{rid}"],
        "created_at": "2026-04-20T10:00:00",
        "reinforcement": 0.0,
        "disputation": 0.0,
        "rein_last_signal_at": None,
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": 0,
    }


def _persona_entry(eid: str, text: str) -> dict[str, Any]:
    return {
        "id": eid,
        "text": text,
        "source": "reflection",
        "protected": False,
        "reinforcement": 1.0,
        "disputation": 0.0,
        "rein_last_signal_at": None,
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "merged_from_ids": [],
    }


def _set_fields(view: list[dict[str, Any]], rid: str, fields: dict[str, Any]) -> None:
    for entry in view:
        if entry.get("id") == rid:
            entry.update(fields)


def _seed_views(cd: Path) -> None:
    fs.ensure_dir(cd)
    fs.atomic_write_json(
        cd / REFLECTIONS,
        [
            _reflection("ref_00000000000000a1", "Master likes green tea"),
            _reflection("ref_00000000000000a2", "Master walks in the morning"),
            _reflection("ref_00000000000000a3", "Master reads at night ☾"),
        ],
    )
    fs.atomic_write_json(
        cd / PERSONA,
        {
            "master": {"facts": [_persona_entry("prom_ref_77", "Master drinks green tea every evening")]},
            "neko": {"facts": [_persona_entry("manual_20260401120000_1a2b3c4d", "Neko is curious")]},
            "relationship": {"facts": []},
        },
    )


def _healthy(log: EventLog) -> None:
    """Three applied evidence events, the sentinel at the end."""
    cd = log.char_dir(CHARACTER)
    _seed_views(cd)
    for i, rid in enumerate(("ref_00000000000000a1", "ref_00000000000000a2", "ref_00000000000000a1")):
        fields = {"reinforcement": 0.5 * (i + 1), "rein_last_signal_at": f"2026-04-2{i + 1}T09:00:00"}
        log.record_and_save(
            CHARACTER,
            "reflection.evidence_updated",
            {"reflection_id": rid, "source": "user_fact", **fields},
            lambda v, rid=rid, fields=fields: _set_fields(v, rid, fields),
            view=REFLECTIONS,
        )


def _append_pending_tail(log: EventLog) -> None:
    """Evidence, a lifecycle change, persona evidence and an archive event, none applied."""
    cd = log.char_dir(CHARACTER)
    log.append(
        CHARACTER,
        "reflection.evidence_updated",
        {"reflection_id": "ref_00000000000000a2", "reinforcement": 1.5, "user_fact_reinforce_count": 2},
    )
    log.append(
        CHARACTER,
        "reflection.state_changed",
        {"reflection_id": "ref_00000000000000a1", "from": "pending", "to": "confirmed", "ts": "2026-04-23T08:00:00"},
    )
    log.append(
        CHARACTER,
        "persona.evidence_updated",
        {"entity_key": "master", "entry_id": "prom_ref_77", "reinforcement": 2.5, "disputation": 0.25},
    )
    entry = next(e for e in load_view(cd / REFLECTIONS, list) if e["id"] == "ref_00000000000000a3")
    ensure_shard(cd / REFLECTION_ARCHIVE, SHARD)  # the memory server creates the shard as [] first
    snapshot = {**entry, "status": "archived", "archived_at": "2026-05-01T10:00:00", "archive_shard_path": SHARD}
    log.append(
        CHARACTER,
        "reflection.state_changed",
        {
            "reflection_id": "ref_00000000000000a3",
            "from": "pending",
            "to": "archived",
            "archive_shard_path": SHARD,
            "archived_at": "2026-05-01T10:00:00",
            "entry_snapshot": snapshot,
        },
    )


def _pending_then_archive(log: EventLog, shard: str, *, corrupt: bool = False) -> None:
    """One applicable evidence event, then an archive event naming ``shard``."""
    cd = log.char_dir(CHARACTER)
    log.append(
        CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a2", "reinforcement": 1.5}
    )
    if corrupt:
        fs.ensure_dir(cd / REFLECTION_ARCHIVE)
        fs.atomic_write_bytes(cd / REFLECTION_ARCHIVE / shard, b'[{"id": "ref_old", "text": "trunc')
    entry = next(e for e in load_view(cd / REFLECTIONS, list) if e["id"] == "ref_00000000000000a3")
    log.append(
        CHARACTER,
        "reflection.state_changed",
        {
            "reflection_id": "ref_00000000000000a3",
            "to": "archived",
            "archive_shard_path": shard,
            "entry_snapshot": {**entry, "status": "archived", "archive_shard_path": shard},
        },
    )
    log.append(
        CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1", "reinforcement": 3.0}
    )


def build_case(root: Path, case: str) -> Path:
    """Build ``root/Alice`` as ``case``; returns the character folder."""
    log = EventLog(root)
    cd = log.char_dir(CHARACTER)
    if case == "views_only":
        _seed_views(cd)
        return cd
    _healthy(log)
    if case == "healthy":
        pass
    elif case == "pending_tail":
        _append_pending_tail(log)
    elif case in ("legacy_block", "legacy_orphaned"):
        log.append(
            CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a2", "reinforcement": 1.5}
        )
        log.append(CHARACTER, "fact.added", {"fact_id": "fact_legacy", "text": "legacy"})
        last = log.append(
            CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1", "reinforcement": 4.0}
        )
        if case == "legacy_orphaned":
            # The memory server's live write sets the sentinel to the journal end unconditionally.
            write_sentinel(cd, last.event_id)
    elif case == "glued":
        log.append(
            CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a2", "reinforcement": 1.5}
        )
        torn = encode_event(new_event("reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1"}))
        glued = encode_event(
            new_event("reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1", "reinforcement": 2.75})
        )
        with open(cd / JOURNAL_NAME, "ab") as fh:  # the memory server appends without checking for "\n"
            fh.write(torn[: len(torn) // 2] + glued)
    elif case == "torn_tail":
        log.append(
            CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a2", "reinforcement": 1.5}
        )
        torn = encode_event(new_event("reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1"}))
        with open(cd / JOURNAL_NAME, "ab") as fh:
            fh.write(torn[:40])
    elif case == "archive_lost":
        # Crash window of the memory server: event + view removal + sentinel, no shard append.
        reflections = load_view(cd / REFLECTIONS, list)
        entry = next(e for e in reflections if e["id"] == "ref_00000000000000a3")
        ensure_shard(cd / REFLECTION_ARCHIVE, SHARD)
        snapshot = {**entry, "status": "archived", "archived_at": "2026-05-01T10:00:00", "archive_shard_path": SHARD}
        ev = log.append(
            CHARACTER,
            "reflection.state_changed",
            {
                "reflection_id": "ref_00000000000000a3",
                "from": "pending",
                "to": "archived",
                "archive_shard_path": SHARD,
                "archived_at": "2026-05-01T10:00:00",
                "entry_snapshot": snapshot,
            },
        )
        fs.atomic_write_json(cd / REFLECTIONS, [e for e in reflections if e["id"] != "ref_00000000000000a3"])
        write_sentinel(cd, ev.event_id)
    elif case == "persona_drift":
        log.append(
            CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a2", "reinforcement": 1.5}
        )
        log.append(
            CHARACTER,
            "persona.entry_updated",
            {
                "entity_key": "master",
                "entry_id": "prom_ref_77",
                "rewrite_text_sha256": hashlib.sha256(b"Master drinks oolong").hexdigest(),
                "reinforcement": 3.0,
                "merged_from_ids": ["ref_x"],
            },
        )
    elif case == "corrupt_shard":
        _pending_then_archive(log, SHARD, corrupt=True)
    elif case == "hostile_shard":
        _pending_then_archive(log, "../../evil.json")
    else:
        raise ValueError(case)
    return cd


def add_persona_orphan(root: Path) -> str:
    """Add a lost persona archive entry (crash window) behind the sentinel; returns the entry id."""
    log = EventLog(root)
    cd = log.char_dir(CHARACTER)
    persona = load_view(cd / PERSONA, dict)
    entry = persona["neko"]["facts"][0]
    shard = "2026-05-02_0b1c2d3e.json"
    ensure_shard(cd / PERSONA_ARCHIVE, shard)
    snapshot = {**entry, "archived_at": "2026-05-02T10:00:00", "archive_shard_path": shard}
    ev = log.append(
        CHARACTER,
        "persona.fact_added",
        {
            "entity_key": "neko",
            "entry_id": entry["id"],
            "archive_shard_path": shard,
            "archived_at": "2026-05-02T10:00:00",
            "text": entry["text"],
            "entry_snapshot": snapshot,
        },
    )
    persona["neko"]["facts"] = []
    fs.atomic_write_json(cd / PERSONA, persona)
    write_sentinel(cd, ev.event_id)
    return str(entry["id"])


def hash_tree(root: Path) -> dict[str, str]:
    """Relative path → SHA-256 of every regular file under ``root`` (links not followed)."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def make_old(cd: Path, seconds: float = 3600) -> None:
    """Backdate every file so the recent-writes warning does not fire."""
    for dirpath, _dirs, files in os.walk(cd):
        for name in files:
            p = Path(dirpath) / name
            st = p.stat()
            os.utime(p, (st.st_atime - seconds, st.st_mtime - seconds))


def unapplied(cd: Path) -> list[Any]:
    """The events a plan of ``cd`` lists as not applied yet (the "up to event" choices)."""
    from inspector.core import replay as gr

    return gr.make_plan(gr.target_of(cd.parent, cd.name)).unapplied
