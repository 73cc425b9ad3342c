"""The small scenarios the fault suites crash, fail and recover, and the folders they start from.

A scenario is a pair of functions: ``prepare(root)`` builds the starting folder of character
:data:`CHAR` under a memory root (fault-free, through the journal's own API so that the starting
folder is consistent), and ``run(root)`` performs the operation under test. ``run`` must be
deterministic given the folder (same filesystem calls in the same order), because the crash
suites count the calls in a dry pass and then crash a child at each of them; only ids, temp names
and timestamps may differ.

This module is imported both by the tests and by the forked children of ``_zygote``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from journal import EventLog, Reconciler, encode_event, new_event
from journal import fixtures as folders
from journal.events import JOURNAL_NAME
from journal.views import load_view
from tests.faults import model

#: Unicode, a space and a dot: character folder names are used verbatim (memory-format §1.1).
CHAR = "Kuro 猫.v2"
#: Archive scenarios pass a fixed day so the dry pass and the crashing child choose alike.
TODAY = date(2026, 5, 1)

#: Called by scenarios after each API call returns (the crash child records it on a side channel).
Note = Callable[[str], None]


def _noop(_: str) -> None:
    return None


def reflection(rid: str, text: str, status: str = "confirmed", rein: float = 1.2) -> dict[str, Any]:
    return {
        "id": rid,
        "text": text,
        "entity": "master",
        "status": status,
        "source_fact_ids": ["fact_20260420100000_1a2b3c4d"],
        "created_at": "2026-04-20T10:00:00",
        "feedback": None,
        "next_eligible_at": "2026-04-20T10:30:00",
        "reinforcement": rein,
        "disputation": 0.0,
        "rein_last_signal_at": "2026-04-22T09:00:00",
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "sub_zero_last_increment_date": None,
        "user_fact_reinforce_count": 1,
        "schema_version": 2,
    }


def persona_entry(eid: str, text: str, *, protected: bool = False) -> dict[str, Any]:
    source = "character_card" if protected else "reflection"
    return folders.persona_entry(eid, text, source, protected=protected, reinforcement=0.5)


REFLECTION_IDS = [f"ref_{i:016x}" for i in (0xA1, 0xB2, 0xC3, 0xD4, 0xE5)]
PERSONA_IDS = ["card_1a2b3c4d", "prom_ref_77", "prom_ref_88", "manual_20260401120000_0badcafe"]


def base_views() -> tuple[list[Any], dict[str, Any]]:
    reflections = [
        reflection(REFLECTION_IDS[0], "Master relaxes with green tea in the evening 🍵"),
        reflection(REFLECTION_IDS[1], "Master dislikes rainy Mondays", status="pending", rein=0.4),
        reflection(REFLECTION_IDS[2], "主人喜欢猫", rein=2.1),
        reflection(REFLECTION_IDS[3], "Master is learning the violin", status="pending", rein=-0.5),
        reflection(REFLECTION_IDS[4], "Master walks the dog at 7", rein=0.9),
    ]
    persona = {
        "master": {
            "facts": [
                persona_entry(PERSONA_IDS[0], "Name: Alice", protected=True),
                persona_entry(PERSONA_IDS[1], "Master drinks green tea every evening"),
                persona_entry(PERSONA_IDS[2], "Master works from home"),
            ]
        },
        "neko": {"facts": [persona_entry(PERSONA_IDS[3], "Kuro likes sunny windowsills")]},
        "relationship": {"facts": []},
    }
    return reflections, persona


def write_views(char_dir: Path) -> None:
    from journal import fs

    reflections, persona = base_views()
    fs.ensure_dir(char_dir)
    fs.atomic_write_json(char_dir / model.REFLECTIONS, reflections)
    fs.atomic_write_json(char_dir / model.PERSONA, persona)


# -- payloads -------------------------------------------------------------------------------------


def refl_evidence(rid: str, n: int) -> dict[str, Any]:
    return {
        "reflection_id": rid,
        "reinforcement": round(1.0 + n / 10, 3),
        "disputation": 0.0,
        "rein_last_signal_at": f"2026-04-23T12:{n % 60:02d}:00",
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": n,
        "source": "user_fact",
    }


def persona_evidence(entity: str, eid: str, n: int) -> dict[str, Any]:
    return {
        "entity_key": entity,
        "entry_id": eid,
        "reinforcement": round(0.5 + n / 10, 3),
        "disputation": round(n / 100, 3),
        "rein_last_signal_at": f"2026-04-24T08:{n % 60:02d}:00",
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": n,
        "source": "user_confirm",
    }


def state_change(rid: str, to: str, n: int) -> dict[str, Any]:
    return {"reflection_id": rid, "from": "confirmed", "to": to, "ts": f"2026-04-25T10:00:{n % 60:02d}"}


VIEW_OF = {
    "reflection.evidence_updated": model.REFLECTIONS,
    "reflection.state_changed": model.REFLECTIONS,
    "persona.evidence_updated": model.PERSONA,
    "persona.entry_updated": model.PERSONA,
    "persona.fact_added": model.PERSONA,
}


def record(log: EventLog, event_type: str, payload: dict[str, Any]) -> Any:
    """``record_and_save`` with the live writer's mutation taken from the model."""
    view = VIEW_OF[event_type]
    return log.record_and_save(
        CHAR, event_type, payload, lambda v: model.apply_to_view(view, v, event_type, payload), view=view
    )


def applied_history(root: Path) -> None:
    """Views plus a journal of four applied events, sentinel at the end."""
    write_views(root / CHAR)
    log = EventLog(root)
    record(log, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[0], 1))
    record(log, "persona.evidence_updated", persona_evidence("master", PERSONA_IDS[1], 2))
    record(log, "reflection.state_changed", state_change(REFLECTION_IDS[2], "promoted", 3))
    record(log, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[1], 4))


# -- the scenarios ----------------------------------------------------------------------------------


def prepare_first_append(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)  # the memory root exists; the character folder does not


def run_first_append(root: Path, note: Note = _noop) -> None:
    EventLog(root).append(CHAR, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[0], 9))
    note("append")


def prepare_first_record(root: Path) -> None:
    write_views(root / CHAR)  # views of a server version that had no journal yet


def run_first_record(root: Path, note: Note = _noop) -> None:
    record(EventLog(root), "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[0], 7))
    note("record")


def run_record_and_save(root: Path, note: Note = _noop) -> None:
    log = EventLog(root)
    record(log, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[4], 11))
    note("record 1")
    record(log, "persona.evidence_updated", persona_evidence("neko", PERSONA_IDS[3], 12))
    note("record 2")


def prepare_torn_tail(root: Path) -> None:
    applied_history(root)
    torn = encode_event(new_event("reflection.evidence_updated", refl_evidence(REFLECTION_IDS[3], 5)))
    with open(root / CHAR / JOURNAL_NAME, "ab") as fh:
        fh.write(torn[: len(torn) // 2])  # a crashed append: no fsync reached, never acknowledged


def run_record_after_torn_tail(root: Path, note: Note = _noop) -> None:
    record(EventLog(root), "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[3], 13))
    note("record")


def prepare_pending_tail(root: Path) -> None:
    applied_history(root)
    # A durable event whose view change never happened (a crashed writer): replay must apply it,
    # and the next live write must not orphan it by advancing the sentinel.
    EventLog(root).append(CHAR, "persona.evidence_updated", persona_evidence("master", PERSONA_IDS[2], 6))


def run_record_with_pending_tail(root: Path, note: Note = _noop) -> None:
    record(EventLog(root), "persona.evidence_updated", persona_evidence("master", PERSONA_IDS[1], 14))
    note("record")


def run_archive_reflection(root: Path, note: Note = _noop) -> None:
    EventLog(root).archive_reflection(CHAR, REFLECTION_IDS[3], today=TODAY)
    note("archive")


def prepare_persona_shard(root: Path) -> None:
    from journal.shards import PERSONA_ARCHIVE, append_entries

    applied_history(root)
    old = {**persona_entry("legacy_0a0b0c0d", "an older archived entry"), "archived_at": "2026-05-01T01:00:00"}
    append_entries(root / CHAR / PERSONA_ARCHIVE, f"{TODAY.isoformat()}_00c0ffee.json", [old])


def run_archive_persona(root: Path, note: Note = _noop) -> None:
    EventLog(root).archive_persona_entry(CHAR, "master", PERSONA_IDS[2], today=TODAY)
    note("archive")


def prepare_replay_round(root: Path) -> None:
    """A pending tail of five events after the sentinel, two of them archive recoveries whose shard
    append never happened (the entries are still in the views, the shards do not exist)."""
    applied_history(root)
    log = EventLog(root)
    reflections, persona = base_views()
    snap_r = {**reflections[4], "archived_at": "2026-05-01T03:00:00.4", "status": "archived"}
    snap_r["archive_shard_path"] = "2026-05-01_0a1b2c3d.json"
    snap_p = {
        **persona["master"]["facts"][1],
        "archived_at": "2026-05-01T03:00:01",
        "archive_shard_path": "2026-05-01_1b2c3d4e.json",
    }
    log.append(CHAR, "reflection.evidence_updated", refl_evidence(REFLECTION_IDS[0], 21))
    log.append(CHAR, "persona.evidence_updated", persona_evidence("neko", PERSONA_IDS[3], 22))
    log.append(CHAR, "reflection.state_changed", state_change(REFLECTION_IDS[1], "denied", 23))
    log.append(
        CHAR,
        "reflection.state_changed",
        {
            "reflection_id": REFLECTION_IDS[4],
            "from": "confirmed",
            "to": "archived",
            "archive_shard_path": snap_r["archive_shard_path"],
            "archived_at": snap_r["archived_at"],
            "entry_snapshot": snap_r,
        },
    )
    log.append(
        CHAR,
        "persona.fact_added",
        {
            "entity_key": "master",
            "entry_id": PERSONA_IDS[1],
            "archive_shard_path": snap_p["archive_shard_path"],
            "archived_at": snap_p["archived_at"],
            "text": snap_p["text"],
            "source": snap_p["source"],
            "entry_snapshot": snap_p,
        },
    )


def run_replay_round(root: Path, note: Note = _noop) -> None:
    report = Reconciler(EventLog(root)).reconcile(CHAR)
    if report.stopped is not None:
        raise OSError(f"replay stopped: {report.stopped.reason}: {report.stopped.message}")
    note("reconcile")


def seeds_from_views(char_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """Snapshot seed events for every covered entry (what a compaction caller supplies)."""
    seeds: list[tuple[str, dict[str, Any]]] = []
    for e in load_view(char_dir / model.REFLECTIONS, list):
        seeds.append(
            (
                "reflection.evidence_updated",
                {
                    "reflection_id": e["id"],
                    **{k: e[k] for k in model.REFLECTION_KEYS if k in e},
                    "source": "migration_seed",
                },
            )
        )
    for key, section in load_view(char_dir / model.PERSONA, dict).items():
        for e in section.get("facts", []):
            seeds.append(
                (
                    "persona.evidence_updated",
                    {
                        "entity_key": key,
                        "entry_id": e["id"],
                        **{k: e[k] for k in model.PERSONA_KEYS if k in e},
                        "source": "migration_seed",
                    },
                )
            )
    return seeds


def run_compaction(root: Path, note: Note = _noop) -> None:
    EventLog(root).compact(CHAR, seeds_from_views(root / CHAR))
    note("compact")


@dataclass(frozen=True)
class Scenario:
    """One crashable operation.

    Attributes:
        name: short id used in test ids and reports.
        prepare: builds the starting folder (fault-free).
        run: the operation under test.
        compaction: the journal is replaced on purpose, so "events survive" reads "old or seeds".
    """

    name: str
    prepare: Callable[[Path], None]
    run: Callable[..., None]
    compaction: bool = False


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("first_append", prepare_first_append, run_first_append),
        Scenario("first_record", prepare_first_record, run_first_record),
        Scenario("record_and_save", applied_history, run_record_and_save),
        Scenario("record_after_torn_tail", prepare_torn_tail, run_record_after_torn_tail),
        Scenario("record_with_pending_tail", prepare_pending_tail, run_record_with_pending_tail),
        Scenario("archive_reflection", applied_history, run_archive_reflection),
        Scenario("archive_persona", prepare_persona_shard, run_archive_persona),
        Scenario("replay_round", prepare_replay_round, run_replay_round),
        Scenario("compaction", applied_history, run_compaction, compaction=True),
    )
}


def run_recovery(root: Path, note: Note = _noop) -> None:
    """What a restart does: one reconciliation round of the character (the crash-during-recovery
    suite crashes this)."""
    run_replay_round(root, note)


# -- the soaks' folder ---------------------------------------------------------------------------------

SOAK_REFLECTIONS = [f"ref_{0x5000 + i:016x}" for i in range(24)]
SOAK_PERSONA = [f"manual_20260401120000_{i:08x}" for i in range(12)]


def prepare_soak(root: Path) -> None:
    """Views with more entries (the kill soak archives a few of them as it goes) and one applied event."""
    from journal import fs

    char_dir = root / CHAR
    reflections, persona = base_views()
    reflections += [reflection(rid, f"soak reflection {i}") for i, rid in enumerate(SOAK_REFLECTIONS)]
    persona["neko"]["facts"] += [persona_entry(eid, f"soak persona entry {i}") for i, eid in enumerate(SOAK_PERSONA)]
    fs.ensure_dir(char_dir)
    fs.atomic_write_json(char_dir / model.REFLECTIONS, reflections)
    fs.atomic_write_json(char_dir / model.PERSONA, persona)
    record(EventLog(root), "reflection.evidence_updated", refl_evidence(SOAK_REFLECTIONS[0], 0))


def load_reflection_ids(root: Path) -> list[str]:
    """Soak reflections still in the view."""
    ids = {e.get("id") for e in load_view(root / CHAR / model.REFLECTIONS, list) if isinstance(e, dict)}
    return [rid for rid in SOAK_REFLECTIONS if rid in ids]


def load_persona_ids(root: Path, section: str) -> list[str]:
    """Soak persona entries still in ``section``."""
    facts = load_view(root / CHAR / model.PERSONA, dict).get(section, {}).get("facts", [])
    ids = {e.get("id") for e in facts if isinstance(e, dict)}
    return [eid for eid in SOAK_PERSONA if eid in ids]
