"""The five idempotent replay handlers, their registry, and the stores they read and write.

A handler is ``fn(store, payload) -> bool`` (whether something changed). It loads its view from
the store, applies the payload, and saves only if something changed, before it returns. Handlers
reach files only through a :class:`Store`, so the same code runs against the real folder
(:class:`FolderStore`), a scratch copy (``FolderStore(durable=False)``) or an in-memory overlay
that never writes to disk (:class:`MemoryStore`).
"""

from __future__ import annotations

import copy
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from journal import fs
from journal.errors import (
    BadShardNameError,
    PayloadError,
    ShardCorruptError,
    UnknownEventTypeError,
    ViewCorruptError,
    ViewDriftError,
)
from journal.events import ALL_EVENT_TYPES
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, load_shard, shard_path, validate_shard_name
from journal.views import PERSONA, REFLECTIONS, SentinelRead, load_view, read_sentinel, write_sentinel

REFLECTION_EVIDENCE_KEYS = (
    "reinforcement",
    "disputation",
    "rein_last_signal_at",
    "disp_last_signal_at",
    "sub_zero_days",
    "sub_zero_last_increment_date",
    "user_fact_reinforce_count",
    "last_promote_attempt_at",
    "promote_attempt_count",
)
PERSONA_EVIDENCE_KEYS = REFLECTION_EVIDENCE_KEYS[:7]
EVENT_TIME_KEYS = ("event_when_raw", "event_start_at", "event_end_at")
SPEAKER_KEYS = ("speaker_id", "speaker_trust", "speaker_label", "speaker_provenance_mixed")


# -- stores ------------------------------------------------------------------------------------


class Store(Protocol):
    """Where handlers and the reconciler read and write one character folder's files."""

    char_dir: Path

    def view_exists(self, name: str) -> bool: ...

    def load_view(self, name: str, expected: type) -> Any:
        """Missing → empty ``expected()``. Raises ViewCorruptError."""
        ...

    def save_view(self, name: str, obj: Any) -> None: ...

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        """``None`` when missing. Raises BadShardNameError, ShardCorruptError."""
        ...

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None: ...

    def read_sentinel(self) -> SentinelRead: ...

    def write_sentinel(self, event_id: str | None) -> None: ...


class FolderStore:
    """The real files of one character folder; every write goes through :mod:`journal.fs`.

    Args:
        char_dir: the character folder.
        durable: ``False`` skips fsync (scratch copies only).
    """

    def __init__(self, char_dir: str | os.PathLike[str], *, durable: bool = True) -> None:
        self.char_dir = Path(char_dir)
        self.durable = durable

    def view_exists(self, name: str) -> bool:
        return (self.char_dir / name).exists()

    def load_view(self, name: str, expected: type) -> Any:
        return load_view(self.char_dir / name, expected)

    def save_view(self, name: str, obj: Any) -> None:
        fs.atomic_write_json(self.char_dir / name, obj, durable=self.durable)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        return load_shard(shard_path(self.char_dir / archive, basename))

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        path = shard_path(self.char_dir / archive, basename)
        if self.durable:
            fs.ensure_dir(path.parent)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        fs.atomic_write_json(path, entries, durable=self.durable)

    def read_sentinel(self) -> SentinelRead:
        return read_sentinel(self.char_dir)

    def write_sentinel(self, event_id: str | None) -> None:
        if self.durable:
            write_sentinel(self.char_dir, event_id)
        else:
            from journal.events import SENTINEL_NAME, now_iso

            fs.atomic_write_json(
                self.char_dir / SENTINEL_NAME, {"last_applied_event_id": event_id, "ts": now_iso()}, durable=False
            )


_MISSING = object()


class MemoryStore:
    """An overlay over a character folder that reads lazily and keeps every write in memory.

    It never writes to disk, so it is safe on any folder (exports, read-only media). Used for
    diagnosis checks ("would this handler change anything?") and fast dry runs.

    Attributes:
        written: names of views / ``archive/basename`` shards / ``events_applied.json`` written.
    """

    def __init__(self, char_dir: str | os.PathLike[str]) -> None:
        self.char_dir = Path(char_dir)
        self._views: dict[str, Any] = {}
        self._shards: dict[tuple[str, str], Any] = {}
        self._sentinel: SentinelRead | None = None
        self.written: set[str] = set()

    def view_exists(self, name: str) -> bool:
        if name in self._views:
            return self._views[name] is not _MISSING
        return (self.char_dir / name).exists()

    def load_view(self, name: str, expected: type) -> Any:
        if name not in self._views:
            # A corrupt view raises on every call, as on disk; nothing is cached.
            self._views[name] = load_view(self.char_dir / name, expected, missing=_MISSING)
        obj = self._views[name]
        if obj is _MISSING:
            return expected()
        if not isinstance(obj, expected):
            raise ViewCorruptError(f"{name} has a top-level {type(obj).__name__}, expected a {expected.__name__}")
        return obj

    def save_view(self, name: str, obj: Any) -> None:
        self._views[name] = obj
        self.written.add(name)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        validate_shard_name(basename)
        key = (archive, basename)
        if key not in self._shards:
            self._shards[key] = load_shard(shard_path(self.char_dir / archive, basename))
        value: list[Any] | None = self._shards[key]
        return value

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        validate_shard_name(basename)
        self._shards[(archive, basename)] = entries
        self.written.add(f"{archive}/{basename}")

    def read_sentinel(self) -> SentinelRead:
        if self._sentinel is None:
            self._sentinel = read_sentinel(self.char_dir)
        return self._sentinel

    def write_sentinel(self, event_id: str | None) -> None:
        self._sentinel = SentinelRead("ok", event_id) if event_id is not None else SentinelRead("null")
        self.written.add("events_applied.json")

    def view(self, name: str) -> Any:
        """The in-memory value of a view (after writes), or ``None`` if never loaded."""
        value = self._views.get(name)
        return None if value is _MISSING else value

    def shard(self, archive: str, basename: str) -> Any:
        return self._shards.get((archive, basename))

    def discard(self) -> None:
        """Forget every load and write; the next read comes from disk again."""
        self._views.clear()
        self._shards.clear()
        self._sentinel = None
        self.written.clear()


# -- helpers -----------------------------------------------------------------------------------


def _copy_keys(entry: dict[str, Any], payload: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if key in payload:
            entry[key] = copy.deepcopy(payload[key])


def _find(items: Any, entry_id: Any) -> dict[str, Any] | None:
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, dict) and item.get("id") == entry_id:
            return item
    return None


def _persona_entry(persona: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any] | None:
    key = payload.get("entity_key")
    section = persona.get(key) if isinstance(key, str) else None
    if not isinstance(section, dict):
        return None
    return _find(section.get("facts"), payload.get("entry_id"))


def _heal_shard(store: Store, archive: str, payload: dict[str, Any]) -> bool:
    """Make sure the entry snapshot is in its named shard (the archive-recovery step)."""
    basename = payload.get("archive_shard_path")
    snapshot = payload.get("entry_snapshot")
    if basename is None or not isinstance(snapshot, dict):
        return False
    validate_shard_name(basename)
    current = store.load_shard(archive, basename)  # corrupt → raises: replay pauses (deliberate fix)
    if current is None:
        store.save_shard(archive, basename, [copy.deepcopy(snapshot)])
        return True
    if any(isinstance(e, dict) and e.get("id") == snapshot.get("id") for e in current):
        return False
    store.save_shard(archive, basename, [*current, copy.deepcopy(snapshot)])
    return True


# -- the five handlers ---------------------------------------------------------------------------


def reflection_evidence_updated(store: Store, payload: dict[str, Any]) -> bool:
    """Copy the evidence keys present in the payload onto the reflection (``reflections.json``)."""
    rid = payload.get("reflection_id")
    if not rid:
        return False
    reflections = store.load_view(REFLECTIONS, list)
    entry = _find(reflections, rid)
    if entry is None:
        return False
    before = copy.deepcopy(entry)
    _copy_keys(entry, payload, REFLECTION_EVIDENCE_KEYS)
    if entry == before:
        return False
    store.save_view(REFLECTIONS, reflections)
    return True


def persona_evidence_updated(store: Store, payload: dict[str, Any]) -> bool:
    """Copy the evidence keys present in the payload onto the persona entry (``persona.json``)."""
    if not payload.get("entity_key") or not payload.get("entry_id"):
        return False
    persona = store.load_view(PERSONA, dict)
    entry = _persona_entry(persona, payload)
    if entry is None:
        return False
    before = copy.deepcopy(entry)
    _copy_keys(entry, payload, PERSONA_EVIDENCE_KEYS)
    if entry == before:
        return False
    store.save_view(PERSONA, persona)
    return True


def persona_entry_updated(store: Store, payload: dict[str, Any]) -> bool:
    """Merge-on-promote: check the text hash, then copy evidence, ``merged_from_ids``, event time
    and speaker provenance.

    Raises:
        ViewDriftError: the entry's current text does not hash to ``rewrite_text_sha256``.
    """
    if not payload.get("entity_key") or not payload.get("entry_id"):
        return False
    if not store.view_exists(PERSONA):
        return False
    persona = store.load_view(PERSONA, dict)
    entry = _persona_entry(persona, payload)
    if entry is None:
        return False
    expected = payload.get("rewrite_text_sha256")
    if expected:
        text = entry.get("text")
        actual = hashlib.sha256(("" if text is None else str(text)).encode("utf-8")).hexdigest()
        if actual != expected:
            raise ViewDriftError(
                f"persona entry {payload['entity_key']}/{payload['entry_id']}: text hashes to {actual}, "
                f"the event expects {expected}; the payload cannot restore the text"
            )
    before = copy.deepcopy(entry)
    _copy_keys(entry, payload, (*PERSONA_EVIDENCE_KEYS, "merged_from_ids", *EVENT_TIME_KEYS))
    if "speaker_provenance" in payload:
        provenance = payload["speaker_provenance"] if isinstance(payload["speaker_provenance"], dict) else {}
        for key in SPEAKER_KEYS:
            entry.pop(key, None)
        _copy_keys(entry, provenance, SPEAKER_KEYS)
    if entry == before:
        return False
    store.save_view(PERSONA, persona)
    return True


def reflection_state_changed(store: Store, payload: dict[str, Any]) -> bool:
    """Lifecycle change of a reflection; ``to == "archived"`` also heals the archive shard.

    Raises:
        BadShardNameError, ShardCorruptError: for archive events; nothing is written.
    """
    rid = payload.get("reflection_id")
    to = payload.get("to")
    if not rid or not to:
        return False
    if to == "archived":
        changed = _heal_shard(store, REFLECTION_ARCHIVE, payload)
        if not store.view_exists(REFLECTIONS):
            return changed
        reflections = store.load_view(REFLECTIONS, list)
        kept = [e for e in reflections if not (isinstance(e, dict) and e.get("id") == rid)]
        if len(kept) != len(reflections):
            store.save_view(REFLECTIONS, kept)
            changed = True
        return changed
    reflections = store.load_view(REFLECTIONS, list)
    entry = _find(reflections, rid)
    if entry is None:
        return False
    before = copy.deepcopy(entry)
    entry["status"] = to
    if payload.get("ts"):
        entry[f"{to}_at"] = payload["ts"]
    if "absorbed_into" in payload:
        entry["absorbed_into"] = payload["absorbed_into"]
    if to == "promote_blocked" and "reason" in payload:
        entry["promote_blocked_reason"] = payload["reason"]
    if to == "denied" and "reason" in payload:
        entry["denied_reason"] = payload["reason"]
    if "reject_explanation" in payload:
        entry["reject_reason"] = payload["reject_explanation"]
    if entry == before:
        return False
    store.save_view(REFLECTIONS, reflections)
    return True


def persona_fact_added(store: Store, payload: dict[str, Any]) -> bool:
    """Persona archive recovery: heal the shard, then remove the entry from ``persona.json``.

    Without ``archive_shard_path`` it does nothing and still counts as handled.

    Raises:
        BadShardNameError, ShardCorruptError: nothing is written.
    """
    if not payload.get("archive_shard_path"):
        return False
    changed = _heal_shard(store, PERSONA_ARCHIVE, payload)
    if not store.view_exists(PERSONA):
        return changed
    persona = store.load_view(PERSONA, dict)
    key = payload.get("entity_key")
    section = persona.get(key) if isinstance(key, str) else None
    if not isinstance(section, dict) or not isinstance(section.get("facts"), list):
        return changed
    eid = payload.get("entry_id")
    kept = [e for e in section["facts"] if not (isinstance(e, dict) and e.get("id") == eid)]
    if len(kept) != len(section["facts"]):
        section["facts"] = kept
        store.save_view(PERSONA, persona)
        changed = True
    return changed


# -- registry ------------------------------------------------------------------------------------

Handler = Callable[[Store, dict[str, Any]], bool]


class HandlerRegistry:
    """Event type → handler. Registering a name outside the vocabulary is an error."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def register(self, event_type: str, handler: Handler) -> None:
        if event_type not in ALL_EVENT_TYPES:
            raise UnknownEventTypeError(f"cannot register a handler for undeclared event type {event_type!r}")
        self._handlers[event_type] = handler

    def get(self, event_type: object) -> Handler | None:
        return self._handlers.get(event_type) if isinstance(event_type, str) else None

    def __contains__(self, event_type: object) -> bool:
        return self.get(event_type) is not None

    def names(self) -> frozenset[str]:
        return frozenset(self._handlers)


def default_registry() -> HandlerRegistry:
    """A registry with the five production handlers."""
    registry = HandlerRegistry()
    registry.register("reflection.evidence_updated", reflection_evidence_updated)
    registry.register("persona.evidence_updated", persona_evidence_updated)
    registry.register("persona.entry_updated", persona_entry_updated)
    registry.register("reflection.state_changed", reflection_state_changed)
    registry.register("persona.fact_added", persona_fact_added)
    return registry


def run_handler(handler: Handler, store: Store, payload: Any) -> bool:
    """Run ``handler`` with ``payload or {}``; a non-dict payload raises PayloadError."""
    if not payload:
        payload = {}
    if not isinstance(payload, dict):
        raise PayloadError(f"payload is a {type(payload).__name__}, not an object")
    return handler(store, payload)


def block_reason(exc: BaseException) -> tuple[str, str]:
    """Map a handler's exception to ``(reason, message)``; reason ∈ the diagnosis BLOCK_REASONS."""
    if isinstance(exc, ViewDriftError):
        return "view_drift", str(exc)
    if isinstance(exc, ViewCorruptError):
        return "corrupt_view", str(exc)
    if isinstance(exc, ShardCorruptError):
        return "corrupt_shard", str(exc)
    if isinstance(exc, BadShardNameError):
        return "bad_shard_name", str(exc)
    return "handler_error", f"{type(exc).__name__}: {exc}"


# -- what an event touches -------------------------------------------------------------------------


def entry_ref(event_type: object, payload: Any) -> str | None:
    """The entry an event touches: ``reflection_id``, or ``"<entity_key>/<entry_id>"``."""
    if not isinstance(payload, dict) or not isinstance(event_type, str):
        return None
    if event_type.startswith("reflection."):
        rid = payload.get("reflection_id")
        return rid if isinstance(rid, str) and rid else None
    if event_type.startswith("persona."):
        ek, eid = payload.get("entity_key"), payload.get("entry_id")
        if isinstance(ek, str) and isinstance(eid, str) and ek and eid:
            return f"{ek}/{eid}"
    return None


@dataclass(frozen=True, slots=True)
class ArchiveTarget:
    """Where an archive event's entry must end up.

    Attributes:
        archive: ``reflection_archive`` or ``persona_archive``.
        shard: the basename from the payload (not yet validated).
        entry_id: the archived entry's id.
        view: the view the entry leaves (``reflections.json`` / ``persona.json``).
        entity_key: for persona entries, the section key.
    """

    archive: str
    shard: Any
    entry_id: str
    view: str
    entity_key: str | None = None


def archive_target(event_type: object, payload: Any) -> ArchiveTarget | None:
    """The archive destination of an archive event (with a snapshot), else ``None``."""
    if not isinstance(payload, dict) or payload.get("archive_shard_path") is None:
        return None
    snapshot = payload.get("entry_snapshot")
    if not isinstance(snapshot, dict):
        return None
    if event_type == "reflection.state_changed" and payload.get("to") == "archived":
        eid = snapshot.get("id") or payload.get("reflection_id")
        return ArchiveTarget(REFLECTION_ARCHIVE, payload["archive_shard_path"], str(eid), REFLECTIONS)
    if event_type == "persona.fact_added":
        eid = snapshot.get("id") or payload.get("entry_id")
        ek = payload.get("entity_key")
        return ArchiveTarget(
            PERSONA_ARCHIVE, payload["archive_shard_path"], str(eid), PERSONA, ek if isinstance(ek, str) else None
        )
    return None
