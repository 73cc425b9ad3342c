"""Builders of memory folders in the real on-disk format, one function per diagnosis case.

Every folder is written through the journal package's own writers (``EventLog.record_and_save``,
``EventLog.archive_*``, ``EventLog.append``, ``journal.fs``); raw bytes are written only where a
defect has to be manufactured (a torn line, a corrupt shard). Where the memory server behaves
differently from our ``EventLog`` (it advances the sentinel unconditionally, glues an append onto
a torn line, appends to the shard after the sentinel), the builder does what the server does, step
by step, with the same primitives.

Output is deterministic: inside :class:`Deterministic` every uuid4 and every timestamp the journal
package asks for comes from a seeded sequence, so building the same case twice gives
byte-identical files. Shipped (Qt-free, like the rest of the package) so that ``scripts/make_sample.py``
(the bundled sample) and ``bench/`` can use it without importing ``tests``; the diagnosis, CLI and
GUI tests use it too, with the zip, launcher-lock and tree-snapshot helpers at the end.

Typical use::

    from journal import fixtures

    built = fixtures.pending_tail(tmp_path)         # tmp_path is the memory root
    built.path                                      # tmp_path / "pending-tail"
    built.ids["tail1"]                              # the event id of a labelled event
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from journal import fs
from journal.events import JOURNAL_NAME, Event, encode_event, new_event
from journal.log import EventLog
from journal.shards import REFLECTION_ARCHIVE, choose_shard, ensure_shard
from journal.views import PERSONA, REFLECTIONS, load_view, save_view, write_sentinel

BASE_TIME = datetime(2026, 5, 1, 9, 0, 0)
ARCHIVE_DAY = date(2026, 5, 1)
#: Pass this as ``now`` to the diagnosis so the compaction age of fixture journals stays small.
FIXTURE_NOW = datetime(2026, 5, 2, 9, 0, 0)

# -- determinism ------------------------------------------------------------------------------------


class Deterministic:
    """Seeded uuid4s and a ticking clock for everything the journal package generates.

    Patches ``uuid.uuid4`` (event ids and shard uuid8s) and every ``now_iso`` the ``journal``
    modules hold, for the duration of the ``with`` block. The clock starts at ``start`` and
    advances by ``step`` at each call, so timestamps are distinct and ordered.
    """

    def __init__(
        self, seed: str, start: datetime = BASE_TIME, step: timedelta = timedelta(seconds=1, microseconds=250_000)
    ) -> None:
        self.seed = seed
        self.start = start
        self.step = step
        self._n_uuid = 0
        self._n_time = 0
        self._saved: list[tuple[object, str, object]] = []

    def uuid4(self) -> uuid.UUID:
        self._n_uuid += 1
        digest = hashlib.sha256(f"{self.seed}:{self._n_uuid}".encode()).digest()
        return uuid.UUID(bytes=digest[:16], version=4)

    def now_iso(self) -> str:
        t = self.start + self._n_time * self.step
        self._n_time += 1
        return t.isoformat()

    def _patch(self, owner: object, attr: str, value: object) -> None:
        self._saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, value)

    def __enter__(self) -> Deterministic:
        import journal.events

        original_now = journal.events.now_iso
        self._patch(uuid, "uuid4", self.uuid4)
        for name, module in list(sys.modules.items()):
            is_journal = name == "journal" or name.startswith("journal.")
            if is_journal and getattr(module, "now_iso", None) is original_now:
                self._patch(module, "now_iso", self.now_iso)
        return self

    def __exit__(self, *exc: object) -> None:
        while self._saved:
            owner, attr, value = self._saved.pop()
            setattr(owner, attr, value)


# -- what a builder returns ----------------------------------------------------------------------------


@dataclass
class Built:
    """A character folder made by a builder.

    Attributes:
        root: the memory root.
        name: the character name.
        path: the character folder.
        events: every event id written, in journal order (including recovered glued events).
        ids: labelled event ids, e.g. ``ids["legacy"]``.
        notes: other facts a test needs (shard basenames, entry ids).
    """

    root: Path
    name: str
    path: Path
    events: list[str] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)


# -- views at the start -------------------------------------------------------------------------------

REFLECTION_IDS = ("ref_1a2b3c4d5e6f7081", "ref_2b3c4d5e6f708192", "ref_3c4d5e6f708192a3", "ref_4d5e6f708192a3b4")
PERSONA_ENTRY = ("master", "prom_ref_77aa88bb99cc00dd")
PERSONA_ARCHIVABLE = ("neko", "legacy_5e6f7a8b")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _reflection(i: int, rid: str, text: str, status: str = "pending") -> dict[str, Any]:
    return {
        "id": rid,
        "text": text,
        "entity": ("master", "neko", "relationship")[i % 3],
        "status": status,
        "source_fact_ids": sorted([f"fact_20260420100{i}00_{i:08x}", f"fact_20260421110{i}00_{i + 16:08x}"]),
        "created_at": f"2026-04-2{i}T10:00:00",
        "feedback": None,
        "next_eligible_at": f"2026-04-2{i}T10:30:00",
        "reinforcement": 0.0,
        "disputation": 0.0,
        "rein_last_signal_at": None,
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "sub_zero_last_increment_date": None,
        "user_fact_reinforce_count": 0,
        "recent_mentions": [],
        "suppress": False,
        "schema_version": 2,
    }


def persona_entry(
    eid: str, text: str, source: str = "reflection", *, protected: bool = False, **fields: Any
) -> dict[str, Any]:
    """A persona entry with every field of memory-format §2.3 at its default; ``fields`` override
    values in place (key order is kept, so the bytes stay those of a real folder)."""
    entry: dict[str, Any] = {
        "id": eid,
        "text": text,
        "source": source,
        "source_id": None,
        "protected": protected,
        "recent_mentions": [],
        "suppress": False,
        "suppressed_at": None,
        "reinforcement": 0.0,
        "disputation": 0.0,
        "rein_last_signal_at": None,
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "sub_zero_last_increment_date": None,
        "user_fact_reinforce_count": 0,
        "merged_from_ids": [],
    }
    entry.update(fields)
    return entry


def seed_views(char_dir: Path) -> None:
    """The views a character has before any journaled event: facts, reflections, persona."""
    fs.ensure_dir(char_dir)
    facts = [
        {
            "id": "fact_20260423120000_1a2b3c4d",
            "text": "Master likes green tea",
            "importance": 6,
            "entity": "master",
            "source": "user_observation",
            "tags": [],
            "hash": "1a2b3c4d5e6f7081",
            "created_at": "2026-04-23T12:00:00",
            "event_when_raw": None,
            "event_start_at": "2026-04-23T12:00:00",
            "event_end_at": None,
            "schema_version": 2,
            "absorbed": True,
            "signal_processed": True,
            "embedding": None,
            "embedding_text_sha256": None,
            "embedding_model_id": None,
        }
    ]
    texts = (
        "Master relaxes with tea in the evening",
        "Master practises the piano on Sundays",
        "主人 prefers quiet mornings",
        "Master dislikes thunderstorms",
    )
    reflections = [_reflection(i, rid, texts[i]) for i, rid in enumerate(REFLECTION_IDS)]
    persona = {
        "master": {
            "facts": [
                persona_entry("card_1a2b3c4d", "Name: Alice", "character_card", protected=True),
                persona_entry(PERSONA_ENTRY[1], "Master drinks green tea", "reflection"),
            ]
        },
        "neko": {"facts": [persona_entry(PERSONA_ARCHIVABLE[1], "Neko once liked rainy days", "settings")]},
        "relationship": {"facts": []},
    }
    fs.atomic_write_json(char_dir / "facts.json", facts)
    fs.atomic_write_json(char_dir / REFLECTIONS, reflections)
    fs.atomic_write_json(char_dir / PERSONA, persona)


# -- live writers, as the memory server's producers use record_and_save -----------------------------------

REFLECTION_EVIDENCE = (
    "reinforcement",
    "disputation",
    "rein_last_signal_at",
    "disp_last_signal_at",
    "sub_zero_days",
    "user_fact_reinforce_count",
    "sub_zero_last_increment_date",
    "last_promote_attempt_at",
    "promote_attempt_count",
)


def _find(items: list[Any], eid: str) -> dict[str, Any]:
    return next(e for e in items if isinstance(e, dict) and e.get("id") == eid)


def reflection_evidence_payload(
    rid: str, reinforcement: float, *, at: str, source: str = "user_fact"
) -> dict[str, Any]:
    return {
        "reflection_id": rid,
        "reinforcement": reinforcement,
        "disputation": 0.0,
        "rein_last_signal_at": at,
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": 1,
        "source": source,
    }


def persona_evidence_payload(
    key: str, eid: str, reinforcement: float, *, at: str, source: str = "user_confirm"
) -> dict[str, Any]:
    return {
        "entity_key": key,
        "entry_id": eid,
        "reinforcement": reinforcement,
        "disputation": 0.0,
        "rein_last_signal_at": at,
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": 1,
        "source": source,
    }


def _apply_reflection_evidence(payload: dict[str, Any]) -> Callable[[list[Any]], None]:
    def mutate(view: list[Any]) -> None:
        entry = _find(view, payload["reflection_id"])
        entry.update({k: payload[k] for k in REFLECTION_EVIDENCE if k in payload})

    return mutate


def _apply_persona_evidence(payload: dict[str, Any], text: str | None = None) -> Callable[[dict[str, Any]], None]:
    def mutate(view: dict[str, Any]) -> None:
        entry = _find(view[payload["entity_key"]]["facts"], payload["entry_id"])
        entry.update({k: payload[k] for k in REFLECTION_EVIDENCE[:7] if k in payload})
        if "merged_from_ids" in payload:
            entry["merged_from_ids"] = list(payload["merged_from_ids"])
        if text is not None:
            entry["text"] = text

    return mutate


def _apply_state(payload: dict[str, Any]) -> Callable[[list[Any]], None]:
    def mutate(view: list[Any]) -> None:
        entry = _find(view, payload["reflection_id"])
        entry["status"] = payload["to"]
        entry[f"{payload['to']}_at"] = payload["ts"]
        if "absorbed_into" in payload:
            entry["absorbed_into"] = payload["absorbed_into"]

    return mutate


class Writer:
    """The memory server's live writers, over one character, through ``EventLog``."""

    def __init__(self, root: Path, name: str) -> None:
        self.log = EventLog(root)
        self.name = name
        self.path = root / name
        self.events: list[str] = []

    def now(self) -> str:
        from journal import events

        return events.now_iso()

    def _record(self, event_type: str, payload: dict[str, Any], mutate: Callable[[Any], Any], view: str) -> Event:
        ev = self.log.record_and_save(self.name, event_type, payload, mutate, view=view)
        self.events.append(ev.event_id)
        return ev

    def reflection_evidence(self, rid: str, reinforcement: float) -> Event:
        payload = reflection_evidence_payload(rid, reinforcement, at=self.now())
        return self._record("reflection.evidence_updated", payload, _apply_reflection_evidence(payload), REFLECTIONS)

    def persona_evidence(self, key: str, eid: str, reinforcement: float, *, change_view: bool = True) -> Event:
        payload = persona_evidence_payload(key, eid, reinforcement, at=self.now())
        mutate = _apply_persona_evidence(payload) if change_view else (lambda view: None)
        return self._record("persona.evidence_updated", payload, mutate, PERSONA)

    def state_change(self, rid: str, to: str, *, absorbed_into: str | None = None) -> Event:
        current = _find(load_view(self.path / REFLECTIONS, list), rid)
        payload: dict[str, Any] = {"reflection_id": rid, "from": current.get("status"), "to": to, "ts": self.now()}
        if absorbed_into is not None:
            payload["absorbed_into"] = absorbed_into
        return self._record("reflection.state_changed", payload, _apply_state(payload), REFLECTIONS)

    def merge_payload(self, key: str, eid: str, new_text: str, merged_from: list[str]) -> dict[str, Any]:
        at = self.now()
        return {
            "entity_key": key,
            "entry_id": eid,
            "rewrite_text_sha256": _sha(new_text),
            "reinforcement": 2.5,
            "disputation": 0.0,
            "rein_last_signal_at": at,
            "disp_last_signal_at": at,
            "sub_zero_days": 0,
            "merged_from_ids": merged_from,
            "source": "promote_merge",
        }

    def merge(self, key: str, eid: str, new_text: str, merged_from: list[str]) -> Event:
        """Merge on promote, as the server does it: evidence first (view untouched), then the rewrite."""
        self.persona_evidence(key, eid, 2.5, change_view=False)
        payload = self.merge_payload(key, eid, new_text, merged_from)
        return self._record("persona.entry_updated", payload, _apply_persona_evidence(payload, new_text), PERSONA)

    def archive_reflection(self, rid: str, day: date = ARCHIVE_DAY) -> Event:
        ev = self.log.archive_reflection(self.name, rid, today=day)
        assert ev is not None
        self.events.append(ev.event_id)
        return ev

    def archive_persona(self, key: str, eid: str, day: date = ARCHIVE_DAY) -> Event:
        ev = self.log.archive_persona_entry(self.name, key, eid, today=day)
        assert ev is not None
        self.events.append(ev.event_id)
        return ev

    def append_only(self, event_type: str, payload: dict[str, Any]) -> Event:
        """The crash window: the event is durable, the view was never saved, the sentinel not moved."""
        ev = self.log.append(self.name, event_type, payload)
        self.events.append(ev.event_id)
        return ev

    def server_record(self, event_type: str, payload: dict[str, Any], mutate: Callable[[Any], Any], view: str) -> Event:
        """The memory server's record_and_save: append, save the view, then set the sentinel to this
        event unconditionally (which orphans an unapplied tail; ours refuses to)."""
        current = load_view(self.path / view, list if view == REFLECTIONS else dict)
        ev = self.log.append(self.name, event_type, payload)
        result = mutate(current)
        save_view(self.path / view, current if result is None else result)
        write_sentinel(self.path, ev.event_id)
        self.events.append(ev.event_id)
        return ev


def _healthy_history(w: Writer) -> dict[str, str]:
    """A realistic, fully applied history: evidence, a confirmation, a merge, two archives."""
    r1, r2, r3, _ = REFLECTION_IDS
    key, pid = PERSONA_ENTRY
    ids: dict[str, str] = {}
    ids["evidence"] = w.reflection_evidence(r1, 1.2).event_id
    w.reflection_evidence(r2, 2.1)
    w.persona_evidence(key, pid, 1.5)
    ids["confirmed"] = w.state_change(r1, "confirmed").event_id
    ids["merge"] = w.merge(key, pid, "Master drinks green tea every evening", [r2]).event_id
    ids["merged"] = w.state_change(r2, "merged", absorbed_into=pid).event_id
    ids["archive_reflection"] = w.archive_reflection(r3).event_id
    ids["archive_persona"] = w.archive_persona(*PERSONA_ARCHIVABLE).event_id
    return ids


def _outbox_line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def _start(root: Path, name: str, seed: str | None) -> tuple[Deterministic, Writer]:
    det = Deterministic(seed or name)
    w = Writer(root, name)
    return det, w


def _built(root: Path, w: Writer, ids: dict[str, str], **notes: Any) -> Built:
    return Built(root, w.name, w.path, list(w.events), ids, dict(notes))


# -- the cases --------------------------------------------------------------------------------------


def healthy(root: Path, name: str = "healthy", *, seed: str | None = None) -> Built:
    """Every event applied, the sentinel on the last one, views and shards consistent; an outbox
    whose only operation finished. The diagnosis finds nothing."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        op = str(uuid.uuid4())
        fs.durable_append(
            w.path / "outbox.ndjson",
            _outbox_line(
                {"op_id": op, "type": "extract_facts", "payload": {"messages": []}, "status": "pending", "ts": w.now()}
            )
            + _outbox_line({"op_id": op, "status": "done", "ts": w.now()}),
        )
    return _built(root, w, ids)


def pending_tail(root: Path, name: str = "pending-tail", *, seed: str | None = None) -> Built:
    """Two events durable in the journal whose views were never saved (a crash after the append):
    pending, and replay would apply both."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        _healthy_history(w)
        r1 = REFLECTION_IDS[0]
        ids = {
            "tail1": w.append_only(
                "reflection.evidence_updated", reflection_evidence_payload(r1, 1.9, at=w.now())
            ).event_id,
            "tail2": w.append_only(
                "persona.evidence_updated", persona_evidence_payload(*PERSONA_ENTRY, 3.1, at=w.now())
            ).event_id,
        }
    return _built(root, w, ids)


def _legacy_payload(w: Writer) -> dict[str, Any]:
    return {"reflection_id": REFLECTION_IDS[0], "surfaced_at": w.now(), "source": "legacy"}


def legacy_type_blocked(root: Path, name: str = "blocked-legacy-type", *, seed: str | None = None) -> Built:
    """An older server wrote ``reflection.surfaced`` (declared, but no handler); replay pauses there.
    A later live write by our EventLog leaves the sentinel alone, so its event waits behind it."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        _healthy_history(w)
        ids = {"legacy": w.append_only("reflection.surfaced", _legacy_payload(w)).event_id}
        ids["after"] = w.reflection_evidence(REFLECTION_IDS[3], 0.7).event_id
    return _built(root, w, ids)


def legacy_type_orphaned(root: Path, name: str = "orphaned-by-live-write", *, seed: str | None = None) -> Built:
    """Paused on ``reflection.surfaced``, then a live write of the memory server set the sentinel to
    its own event: the legacy event is now behind the sentinel without ever having been applied."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        _healthy_history(w)
        ids = {"legacy": w.append_only("reflection.surfaced", _legacy_payload(w)).event_id}
        payload = reflection_evidence_payload(REFLECTION_IDS[3], 0.7, at=w.now())
        ids["live"] = w.server_record(
            "reflection.evidence_updated", payload, _apply_reflection_evidence(payload), REFLECTIONS
        ).event_id
    return _built(root, w, ids)


def _torn(line: bytes, keep: int) -> bytes:
    return line[: max(1, min(keep, len(line) - 2))]


def glued_torn_line(root: Path, name: str = "glued-torn-line", *, seed: str | None = None) -> Built:
    """A crash tore an append; the memory server's next append (which never checks for a trailing
    newline) was glued onto the fragment, and it set the sentinel to the glued event."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        r4 = REFLECTION_IDS[3]
        lost = new_event("reflection.evidence_updated", reflection_evidence_payload(r4, 0.4, at=w.now()))
        fs.durable_append(w.path / JOURNAL_NAME, _torn(encode_event(lost), 70), keep_lines_apart=False)
        payload = reflection_evidence_payload(r4, 0.9, at=w.now())
        glued = new_event("reflection.evidence_updated", payload)
        fs.durable_append(w.path / JOURNAL_NAME, encode_event(glued), keep_lines_apart=False)
        view = load_view(w.path / REFLECTIONS, list)
        _apply_reflection_evidence(payload)(view)
        save_view(w.path / REFLECTIONS, view)
        write_sentinel(w.path, glued.event_id)
        w.events.append(glued.event_id)
        ids["glued"] = glued.event_id
    return _built(root, w, ids, lost_event=lost.event_id)


def torn_tail(root: Path, name: str = "torn-tail", *, seed: str | None = None) -> Built:
    """The last append was torn by a crash and nothing was written after it."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        lost = new_event("reflection.evidence_updated", reflection_evidence_payload(REFLECTION_IDS[3], 0.4, at=w.now()))
        fs.durable_append(w.path / JOURNAL_NAME, _torn(encode_event(lost), 90), keep_lines_apart=False)
    return _built(root, w, ids, lost_event=lost.event_id)


def _archive_payload(w: Writer, rid: str, shard: str) -> dict[str, Any]:
    entry = _find(load_view(w.path / REFLECTIONS, list), rid)
    archived_at = w.now()
    snapshot = {**entry, "archived_at": archived_at, "status": "archived", "archive_shard_path": shard}
    return {
        "reflection_id": rid,
        "from": entry.get("status"),
        "to": "archived",
        "archive_shard_path": shard,
        "archived_at": archived_at,
        "entry_snapshot": snapshot,
    }


def archive_entry_lost(root: Path, name: str = "archive-entry-lost", *, seed: str | None = None) -> Built:
    """The memory server's archive order, interrupted: shard created as ``[]``, event appended, entry
    removed from the view, sentinel advanced; then the crash, before the shard append. The entry
    is now in neither the view nor the shard: only the event payload holds it."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        rid = REFLECTION_IDS[3]
        archive = w.path / REFLECTION_ARCHIVE
        shard = choose_shard(archive, date(2026, 5, 2))
        ensure_shard(archive, shard)
        payload = _archive_payload(w, rid, shard)

        def remove(view: list[Any]) -> list[Any]:
            return [e for e in view if not (isinstance(e, dict) and e.get("id") == rid)]

        ids["lost"] = w.server_record("reflection.state_changed", payload, remove, REFLECTIONS).event_id
    return _built(root, w, ids, shard=shard, entry=rid)


def persona_drift(root: Path, name: str = "persona-drift", *, seed: str | None = None) -> Built:
    """A merge's ``persona.entry_updated`` is durable but the process died before persona.json was
    saved: the view keeps the old text, the event's hash names the new one, and replay of that
    event fails the hash check forever."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        key, pid = PERSONA_ENTRY
        payload = w.merge_payload(
            key, pid, "Master drinks matcha, not green tea", [REFLECTION_IDS[1], REFLECTION_IDS[3]]
        )
        ids["drift"] = w.append_only("persona.entry_updated", payload).event_id
    return _built(root, w, ids)


def wedged_merge(root: Path, name: str = "wedged-merge", *, seed: str | None = None) -> Built:
    """The recovery wedge: a persona merge torn by a crash (as :func:`persona_drift`: its text hash
    can never match), then a live write of our EventLog to a reflection (the sentinel stays before the
    merge, so the write is recorded in the applied set), then a crashed write to another reflection
    (durable, never applied). Our replay holds only the merged entry: the crashed reflection write
    replays at the next start, with no one acting. The server's start stops at the merge."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        key, pid = PERSONA_ENTRY
        payload = w.merge_payload(key, pid, "Master drinks matcha, not green tea", [REFLECTION_IDS[1]])
        ids["wedge"] = w.append_only("persona.entry_updated", payload).event_id
        ids["live"] = w.reflection_evidence(REFLECTION_IDS[0], 2.9).event_id
        crashed = reflection_evidence_payload(REFLECTION_IDS[3], 0.9, at=w.now())
        ids["crashed"] = w.append_only("reflection.evidence_updated", crashed).event_id
    return _built(root, w, ids)


def corrupt_shard(root: Path, name: str = "corrupt-shard", *, seed: str | None = None) -> Built:
    """An archive event is pending (crash after the append) and the shard it names was damaged
    since: replay must pause there rather than overwrite it."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        rid = REFLECTION_IDS[3]
        archive = w.path / REFLECTION_ARCHIVE
        shard = choose_shard(archive, date(2026, 5, 2))
        ensure_shard(archive, shard)
        ids["pending_archive"] = w.append_only("reflection.state_changed", _archive_payload(w, rid, shard)).event_id
        fs.atomic_write_bytes(archive / shard, b'[\n  {\n    "id": "ref_4d5e6f708192a3b4",\n    "text": "Master dis')
    return _built(root, w, ids, shard=shard)


HOSTILE_BASENAME = "../../../escaped.json"


def hostile_shard_basename(root: Path, name: str = "hostile-shard-basename", *, seed: str | None = None) -> Built:
    """A pending archive event whose ``archive_shard_path`` climbs out of the shard folder."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        payload = _archive_payload(w, REFLECTION_IDS[3], HOSTILE_BASENAME)
        ids["hostile"] = w.append_only("reflection.state_changed", payload).event_id
    return _built(root, w, ids)


def views_only_export(root: Path, name: str = "views-only", *, seed: str | None = None) -> Built:
    """A cloud-save export: the allow-listed views only; no journal, sentinel, outbox or shards."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        fs.atomic_write_json(w.path / "recent.json", [{"role": "system", "content": "summary memo"}])
        fs.atomic_write_json(w.path / "settings.json", {"favourite_drink": "tea"})
    return _built(root, w, {})


def outbox_backlog(root: Path, name: str = "outbox-backlog", *, seed: str | None = None) -> Built:
    """A healthy journal with an outbox holding a pending op (2 failed attempts), a dead letter
    (abandoned after 5 attempts) and a finished op; plus two temp files left by crashed writes."""
    det, w = _start(root, name, seed)
    with det:
        seed_views(w.path)
        ids = _healthy_history(w)
        pending, dead, done = (str(uuid.uuid4()) for _ in range(3))
        lines = [
            {"op_id": pending, "type": "synth_reflection", "payload": {}, "status": "pending", "ts": w.now()},
            {"op_id": dead, "type": "check_feedback", "payload": {"messages": []}, "status": "pending", "ts": w.now()},
            {"op_id": done, "type": "extract_facts", "payload": {"messages": []}, "status": "pending", "ts": w.now()},
        ]
        lines += [{"op_id": pending, "status": "attempt", "ts": w.now()} for _ in range(2)]
        lines += [{"op_id": dead, "status": "attempt", "ts": w.now()} for _ in range(5)]
        lines += [{"op_id": dead, "status": "done", "ts": w.now()}, {"op_id": done, "status": "done", "ts": w.now()}]
        fs.durable_append(w.path / "outbox.ndjson", b"".join(_outbox_line(r) for r in lines))
        (w.path / ".nkatmp0a1b2c3d.tmp").write_bytes(b'{"half": ')
        (w.path / ".persona.json.k3x9_q2z.tmp").write_bytes(b"")
    return _built(root, w, ids, pending_op=pending, dead_op=dead)


# -- zips ---------------------------------------------------------------------------------------------

ZIP_TIME = (2026, 5, 1, 9, 0, 0)


def zip_export(folder: Path, zip_path: Path, *, prefix: str | None = None) -> Path:
    """Zip ``folder`` the way a user sends an export: members under ``prefix`` (default: the
    folder's name), deterministic (sorted, fixed times and modes)."""
    top = folder.name if prefix is None else prefix
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder).as_posix()
            arc = f"{top}/{rel}" if top else rel
            info = zipfile.ZipInfo(arc + ("/" if path.is_dir() else ""), ZIP_TIME)
            info.external_attr = ((0o40755 if path.is_dir() else 0o100644) << 16) | (0x10 if path.is_dir() else 0)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, b"" if path.is_dir() else path.read_bytes())
    return zip_path


def add_zip_member(zip_path: Path, name: str, data: bytes = b"x", *, symlink: bool = False) -> None:
    """Append one raw member (for hostile names: ``../x``, ``/abs``, a symbolic link)."""
    with zipfile.ZipFile(zip_path, "a") as zf:
        info = zipfile.ZipInfo(name, ZIP_TIME)
        info.external_attr = (0o120777 if symlink else 0o100644) << 16
        info.create_system = 3
        zf.writestr(info, data)


# -- the launcher lock -------------------------------------------------------------------------------


@contextlib.contextmanager
def server_lock_held(runtime_dir: Path) -> Iterator[Path]:
    """Act as a running memory server: hold ``flock`` on ``launcher.lock`` in ``runtime_dir`` and
    point ``NEKO_RUNTIME_STATE_DIR`` at it for the duration (restored afterwards). POSIX only."""
    import fcntl  # here, so that the rest of the builder (and the sample script) runs anywhere

    runtime_dir.mkdir(parents=True, exist_ok=True)
    lock = runtime_dir / "launcher.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    saved = os.environ.get("NEKO_RUNTIME_STATE_DIR")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        (runtime_dir / "launcher.json").write_text(
            json.dumps({"schema": 1, "state": "ready", "app": "N.E.K.O", "pid": os.getpid()}), encoding="utf-8"
        )
        os.environ["NEKO_RUNTIME_STATE_DIR"] = str(runtime_dir)
        yield lock
    finally:
        if saved is None:
            os.environ.pop("NEKO_RUNTIME_STATE_DIR", None)
        else:
            os.environ["NEKO_RUNTIME_STATE_DIR"] = saved
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# -- all of them --------------------------------------------------------------------------------------

#: The builders of the cases the issue lists, by default character name.
CASES: dict[str, Callable[..., Built]] = {
    "healthy": healthy,
    "pending-tail": pending_tail,
    "blocked-legacy-type": legacy_type_blocked,
    "orphaned-by-live-write": legacy_type_orphaned,
    "glued-torn-line": glued_torn_line,
    "torn-tail": torn_tail,
    "archive-entry-lost": archive_entry_lost,
    "persona-drift": persona_drift,
    "wedged-merge": wedged_merge,
    "corrupt-shard": corrupt_shard,
    "hostile-shard-basename": hostile_shard_basename,
    "views-only": views_only_export,
    "outbox-backlog": outbox_backlog,
}

#: The characters of the bundled sample (resources/sample): together they show every state.
SAMPLE_CASES = (
    "healthy",
    "pending-tail",
    "blocked-legacy-type",
    "orphaned-by-live-write",
    "glued-torn-line",
    "archive-entry-lost",
    "persona-drift",
    "wedged-merge",
    "outbox-backlog",
)


def build_sample(root: Path) -> dict[str, Built]:
    """The bundled sample memory root: one character per state (see :data:`SAMPLE_CASES`)."""
    root.mkdir(parents=True, exist_ok=True)
    return {name: CASES[name](root, name) for name in SAMPLE_CASES}


# -- "nothing inside PATH changed" ------------------------------------------------------------------


def tree_snapshot(path: Path) -> dict[str, tuple[str, str]]:
    """Every entry under ``path`` (``path`` itself included, links not followed): relative path →
    (kind, SHA-256 of a file's bytes / a link's target / ``""`` for a folder). Compare two
    snapshots to prove that nothing was created, changed or deleted."""
    out: dict[str, tuple[str, str]] = {}

    def visit(p: Path, rel: str) -> None:
        st = os.lstat(p)
        if os.path.islink(p):
            out[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            out[rel] = ("dir", "")
            for child in sorted(os.listdir(p)):
                visit(p / child, f"{rel}/{child}" if rel else child)
        elif p.is_file():
            out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
        else:
            out[rel] = ("other", str(st.st_mode))

    visit(path, "")
    return out
