"""The five idempotent replay handlers, their registry, and what an event touches.

A handler is ``fn(store, payload) -> bool`` (whether something changed). It loads its view from
the :class:`~journal.stores.Store`, applies the payload, and saves only if something changed, before
it returns (memory-format §3.5).

Two deliberate differences from the memory server:

* a corrupt target shard makes an archive handler **raise** (replay pauses at the event) instead
  of returning "no change" and letting the sentinel move past the only recovery copy;
* a shard basename that does not match ``YYYY-MM-DD_<8 hex>.json`` raises before anything is
  written.

What a handler does to the one entry it finds is a function of its own (:func:`set_reflection_evidence`,
:func:`set_persona_evidence`, :func:`set_persona_entry`, :func:`set_reflection_state`, and for
archives :func:`removes_entry` / :func:`archive_snapshot`), shared with the entry history
(:mod:`journal.history`), which applies the same rules to an entry reconstructed from the journal.
:data:`FIELD_RULES` names the field-setting function of each event type.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from journal.codec import same_json
from journal.errors import (
    BadShardNameError,
    PayloadError,
    ShardCorruptError,
    UnknownEventTypeError,
    ViewCorruptError,
    ViewDriftError,
)
from journal.events import ALL_EVENT_TYPES, EntryKeys
from journal.events import entry_ref as entry_ref  # what an event touches: its home is the vocabulary
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, shard_entry_ids, validate_shard_name
from journal.stores import Store
from journal.views import PERSONA, REFLECTIONS

#: Keys ``reflection.evidence_updated`` copies (memory-format §3.5 (a)).
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
#: Keys ``persona.evidence_updated`` copies (§3.5 (b)): the evidence set without the throttle.
PERSONA_EVIDENCE_KEYS = REFLECTION_EVIDENCE_KEYS[:7]
EVENT_TIME_KEYS = ("event_when_raw", "event_start_at", "event_end_at")
#: Keys ``persona.entry_updated`` copies besides speaker provenance (§3.5 (c)).
PERSONA_ENTRY_KEYS = (*PERSONA_EVIDENCE_KEYS, "merged_from_ids", *EVENT_TIME_KEYS)
SPEAKER_KEYS = ("speaker_id", "speaker_trust", "speaker_label", "speaker_provenance_mixed")


# -- helpers -----------------------------------------------------------------------------------


#: JSON scalars: immutable, so the entry may hold the payload's own object.
_SCALARS = (str, int, float, bool, type(None))


def _assign(entry: dict[str, Any], key: str, value: Any) -> bool:
    """Set ``entry[key] = value`` (a private copy) unless it already holds that JSON value."""
    if key in entry and same_json(entry[key], value):
        return False
    entry[key] = value if type(value) in _SCALARS else copy.deepcopy(value)
    return True


def _copy_keys(entry: dict[str, Any], source: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """Copy the keys of ``keys`` that are present in ``source``; an absent key never clears one."""
    changed = False
    for key in keys:
        if key in source and _assign(entry, key, source[key]):
            changed = True
    return changed


def find_entry(items: Any, entry_id: Any) -> dict[str, Any] | None:
    """The first dict of ``items`` whose ``id`` equals ``entry_id`` (how every handler finds its entry)."""
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, dict) and item.get("id") == entry_id:
            return item
    return None


def find_persona_entry(persona: Any, entity_key: Any, entry_id: Any) -> dict[str, Any] | None:
    """The entry ``persona[entity_key].facts[id == entry_id]``; ``None`` when any step is missing."""
    section = persona.get(entity_key) if isinstance(persona, dict) and isinstance(entity_key, str) else None
    if not isinstance(section, dict):
        return None
    return find_entry(section.get("facts"), entry_id)


def archive_snapshot(basename: str | None, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The entry copy an archive event puts into shard ``basename``: its ``entry_snapshot`` when
    both are present, else ``None`` (no shard step, e.g. an early-schema event).

    Raises:
        PayloadError: the snapshot has no id, so it cannot be found again idempotently.
    """
    snapshot = payload.get("entry_snapshot")
    if basename is None or not isinstance(snapshot, dict):
        return None
    sid = snapshot.get("id")
    if not isinstance(sid, str) or not sid:
        raise PayloadError(f"entry_snapshot for shard {basename} has no id; it cannot be archived idempotently")
    return snapshot


def _heal_shard(store: Store, archive: str, basename: str | None, snapshot: dict[str, Any] | None) -> bool:
    """Make sure ``snapshot`` (from :func:`archive_snapshot`) is in shard ``basename`` (archive
    recovery). Returns whether it wrote.

    Raises:
        ShardCorruptError: the shard exists but is not a JSON list (the deliberate fix: replay
            pauses, the view keeps the entry).
    """
    if basename is None or snapshot is None:
        return False
    sid = snapshot["id"]
    current = store.load_shard(archive, basename)
    if current is None:
        store.save_shard(archive, basename, [copy.deepcopy(snapshot)])
        return True
    if sid in shard_entry_ids(current):
        return False
    store.save_shard(archive, basename, [*current, copy.deepcopy(snapshot)])
    return True


def text_sha256(text: Any) -> str:
    """The hex SHA-256 of an entry's text as ``persona.entry_updated`` checks it (null → ``""``)."""
    if text is None:
        text = ""
    return hashlib.sha256(str(text).encode("utf-8")).hexdigest()


# -- what each event does to the one entry it finds (shared with journal.history) ------------------


def set_reflection_evidence(entry: dict[str, Any], payload: dict[str, Any]) -> bool:
    """``reflection.evidence_updated`` on its reflection: copy the evidence keys present in the
    payload (memory-format §3.5 (a)); ``source`` is ignored. Returns whether a value changed."""
    return _copy_keys(entry, payload, REFLECTION_EVIDENCE_KEYS)


def set_persona_evidence(entry: dict[str, Any], payload: dict[str, Any]) -> bool:
    """``persona.evidence_updated`` on its entry: copy the evidence keys present in the payload
    (§3.5 (b), the reflection set without the promotion throttle). Returns whether a value changed."""
    return _copy_keys(entry, payload, PERSONA_EVIDENCE_KEYS)


def set_persona_entry(entry: dict[str, Any], payload: dict[str, Any]) -> bool:
    """``persona.entry_updated`` on its entry, once the text hash matched (§3.5 (c)): copy the
    evidence keys, ``merged_from_ids`` and the event-time keys, and replace speaker provenance
    (a non-dict provenance counts as ``{}``: it clears the four keys). Returns whether a value
    changed."""
    changed = _copy_keys(entry, payload, PERSONA_ENTRY_KEYS)
    if "speaker_provenance" in payload:
        provenance = payload["speaker_provenance"]
        if not isinstance(provenance, dict):
            provenance = {}
        before = {k: entry[k] for k in SPEAKER_KEYS if k in entry}
        after = {k: provenance[k] for k in SPEAKER_KEYS if k in provenance}
        changed |= not same_json(before, after)
        if changed:
            # Remove and re-add, as the memory server does on every save: the keys end up last.
            for key in SPEAKER_KEYS:
                entry.pop(key, None)
            entry.update(copy.deepcopy(after))
    return changed


def state_target(payload: dict[str, Any]) -> str | None:
    """The ``to`` of a ``reflection.state_changed`` payload; ``None`` (no change) when it or the
    ``reflection_id`` is missing or empty.

    Raises:
        PayloadError: ``to`` is not a string.
    """
    to = payload.get("to")
    if not payload.get("reflection_id") or not to:
        return None
    if not isinstance(to, str):
        raise PayloadError(f"reflection.state_changed: 'to' is a {type(to).__name__}, not a status string")
    return to


def set_reflection_state(entry: dict[str, Any], payload: dict[str, Any], to: str) -> bool:
    """``reflection.state_changed`` to any ``to`` but ``archived`` on its reflection (§3.5 (d)):
    ``status``, ``<to>_at`` (when ``ts`` is set), ``absorbed_into`` (when present),
    ``promote_blocked_reason`` / ``denied_reason`` from ``reason`` (only for those targets) and
    ``reject_reason`` from ``reject_explanation``. ``from`` is never checked. Returns whether a
    value changed."""
    changed = _assign(entry, "status", to)
    if payload.get("ts"):
        changed |= _assign(entry, f"{to}_at", payload["ts"])
    if "absorbed_into" in payload:
        changed |= _assign(entry, "absorbed_into", payload["absorbed_into"])
    if "reason" in payload and to == "promote_blocked":
        changed |= _assign(entry, "promote_blocked_reason", payload["reason"])
    if "reason" in payload and to == "denied":
        changed |= _assign(entry, "denied_reason", payload["reason"])
    if "reject_explanation" in payload:
        changed |= _assign(entry, "reject_reason", payload["reject_explanation"])
    return changed


def removes_entry(event_type: object, payload: dict[str, Any]) -> bool:
    """Whether the event archives its entry: it removes it from the view (and first puts its
    snapshot into a shard, see :func:`archive_snapshot`). ``reflection.state_changed`` to
    ``archived``; ``persona.fact_added`` with an ``archive_shard_path`` (without one it does
    nothing and still counts as handled)."""
    if event_type == "reflection.state_changed":
        return payload.get("to") == "archived"
    if event_type == "persona.fact_added":
        return bool(payload.get("archive_shard_path"))
    return False


def checked_basename(payload: dict[str, Any]) -> str | None:
    """The payload's shard basename, validated; ``None`` when absent or empty.

    Raises:
        BadShardNameError: present but not a valid basename (before anything is written).
    """
    basename = payload.get("archive_shard_path")
    if not basename:
        return None
    return validate_shard_name(basename)


#: The field-setting function of each event type that changes an entry in place (archive events
#: remove it instead: :func:`removes_entry`). ``reflection.state_changed``'s takes its
#: :func:`state_target` as a third argument.
FIELD_RULES: dict[str, Callable[..., bool]] = {
    "reflection.evidence_updated": set_reflection_evidence,
    "persona.evidence_updated": set_persona_evidence,
    "persona.entry_updated": set_persona_entry,
    "reflection.state_changed": set_reflection_state,
}


# -- the five handlers ---------------------------------------------------------------------------


def reflection_evidence_updated(store: Store, payload: dict[str, Any]) -> bool:
    """``reflection.evidence_updated``: :func:`set_reflection_evidence` on the reflection in
    ``reflections.json`` (memory-format §3.5 (a)).

    Raises:
        ViewCorruptError: ``reflections.json`` is not JSON or not a list.
    """
    rid = payload.get("reflection_id")
    if not rid:
        return False
    reflections = store.load_view(REFLECTIONS, list)
    entry = find_entry(reflections, rid)
    if entry is None or not set_reflection_evidence(entry, payload):
        return False
    store.save_view(REFLECTIONS, reflections)
    return True


def persona_evidence_updated(store: Store, payload: dict[str, Any]) -> bool:
    """``persona.evidence_updated``: :func:`set_persona_evidence` on
    ``persona[entity_key].facts[id == entry_id]`` (§3.5 (b)).

    Raises:
        ViewCorruptError: ``persona.json`` is not JSON or not a dict.
    """
    entity_key, entry_id = payload.get("entity_key"), payload.get("entry_id")
    if not entity_key or not entry_id:
        return False
    persona = store.load_view(PERSONA, dict)
    entry = find_persona_entry(persona, entity_key, entry_id)
    if entry is None or not set_persona_evidence(entry, payload):
        return False
    store.save_view(PERSONA, persona)
    return True


def persona_entry_updated(store: Store, payload: dict[str, Any]) -> bool:
    """``persona.entry_updated`` (merge on promote, §3.5 (c)): check the text hash, then
    :func:`set_persona_entry`.

    A missing ``persona.json`` means no change.

    Raises:
        ViewDriftError: the entry's current text does not hash to ``rewrite_text_sha256`` (the
            message names the entry and both hashes; the payload cannot restore the text).
        ViewCorruptError: ``persona.json`` is not JSON or not a dict.
    """
    entity_key, entry_id = payload.get("entity_key"), payload.get("entry_id")
    if not entity_key or not entry_id:
        return False
    if not store.view_exists(PERSONA):
        return False
    persona = store.load_view(PERSONA, dict)
    entry = find_persona_entry(persona, entity_key, entry_id)
    if entry is None:
        return False
    expected = payload.get("rewrite_text_sha256")
    if expected:
        actual = text_sha256(entry.get("text"))
        if actual != expected:
            raise ViewDriftError(
                f"persona entry {entity_key}/{entry_id}: its text hashes to sha256 {actual}, but the event "
                f"expects {expected}; the view drifted from the journal and the payload cannot restore the text"
            )
    if not set_persona_entry(entry, payload):
        return False
    store.save_view(PERSONA, persona)
    return True


def reflection_state_changed(store: Store, payload: dict[str, Any]) -> bool:
    """``reflection.state_changed`` (§3.5 (d)), dispatched on ``to`` (:func:`state_target`).

    ``to == "archived"``: put ``entry_snapshot`` into shard ``archive_shard_path`` (when both are
    present), then remove every reflection with ``reflection_id`` from ``reflections.json``. Any
    other ``to``: :func:`set_reflection_state` on the reflection.

    Raises:
        BadShardNameError: invalid ``archive_shard_path``; nothing is written.
        ShardCorruptError: the named shard is corrupt; nothing is written, the view keeps the entry.
        PayloadError: ``to`` is not a string, or the snapshot has no id.
        ViewCorruptError: ``reflections.json`` is not JSON or not a list.
    """
    to = state_target(payload)
    if to is None:
        return False
    rid = payload["reflection_id"]
    if removes_entry("reflection.state_changed", payload):
        basename = checked_basename(payload)
        changed = _heal_shard(store, REFLECTION_ARCHIVE, basename, archive_snapshot(basename, payload))
        if not store.view_exists(REFLECTIONS):
            return changed
        reflections = store.load_view(REFLECTIONS, list)
        kept = [e for e in reflections if not (isinstance(e, dict) and e.get("id") == rid)]
        if len(kept) != len(reflections):
            store.save_view(REFLECTIONS, kept)
            changed = True
        return changed
    reflections = store.load_view(REFLECTIONS, list)
    entry = find_entry(reflections, rid)
    if entry is None or not set_reflection_state(entry, payload, to):
        return False
    store.save_view(REFLECTIONS, reflections)
    return True


def persona_fact_added(store: Store, payload: dict[str, Any]) -> bool:
    """``persona.fact_added`` (§3.5 (e)): persona archive recovery.

    Without ``archive_shard_path`` it does nothing and still counts as handled
    (:func:`removes_entry`). Otherwise: put ``entry_snapshot`` into ``persona_archive/<basename>``
    (when it is a dict), then remove the entry from ``persona[entity_key].facts``. A missing
    ``persona.json`` or section returns the result of the shard step.

    Raises:
        BadShardNameError: invalid ``archive_shard_path``; nothing is written.
        ShardCorruptError: the named shard is corrupt; nothing is written, the view keeps the entry.
        PayloadError: the snapshot has no id.
        ViewCorruptError: ``persona.json`` is not JSON or not a dict.
    """
    basename = checked_basename(payload)
    if basename is None:
        return False
    entity_key, entry_id = payload.get("entity_key"), payload.get("entry_id")
    if not entity_key or not entry_id:
        return False
    changed = _heal_shard(store, PERSONA_ARCHIVE, basename, archive_snapshot(basename, payload))
    if not store.view_exists(PERSONA):
        return changed
    persona = store.load_view(PERSONA, dict)
    section = persona.get(entity_key) if isinstance(entity_key, str) else None
    if not isinstance(section, dict) or not isinstance(section.get("facts"), list):
        return changed
    facts = section["facts"]
    kept = [e for e in facts if not (isinstance(e, dict) and e.get("id") == entry_id)]
    if len(kept) != len(facts):
        section["facts"] = kept
        store.save_view(PERSONA, persona)
        changed = True
    return changed


# -- registry ------------------------------------------------------------------------------------

Handler = Callable[[Store, dict[str, Any]], bool]

#: The production handlers.
_BUILTIN: dict[str, Handler] = {
    "reflection.evidence_updated": reflection_evidence_updated,
    "persona.evidence_updated": persona_evidence_updated,
    "persona.entry_updated": persona_entry_updated,
    "reflection.state_changed": reflection_state_changed,
    "persona.fact_added": persona_fact_added,
}


class HandlerRegistry:
    """Event type → handler. Registering a name outside the vocabulary is an error.

    A type without a registered handler stops replay (the reconciler's ``no_handler``).
    Registering a second handler for a name replaces the first.
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def register(self, event_type: str, handler: Handler) -> None:
        """Register ``handler`` for ``event_type``.

        Raises:
            UnknownEventTypeError: ``event_type`` is not one of the 15 declared names.
        """
        if not isinstance(event_type, str) or event_type not in ALL_EVENT_TYPES:
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
    for name, handler in _BUILTIN.items():
        registry.register(name, handler)
    return registry


def run_handler(handler: Handler, store: Store, payload: Any) -> bool:
    """Run ``handler`` with ``payload or {}`` (memory-format §4.1).

    Raises:
        PayloadError: the payload is not empty and not an object.
        Whatever the handler raises.
    """
    if not payload:
        payload = {}
    if not isinstance(payload, dict):
        raise PayloadError(f"payload is a {type(payload).__name__}, not an object")
    return bool(handler(store, payload))


def try_apply(
    registry: HandlerRegistry, store: Store, event_type: str, payload: Any
) -> tuple[tuple[str, str] | None, bool]:
    """Run the handler replay runs for one event: where replay stops, and why (the one home of
    that rule, design record: Startup recovery).

    Returns:
        ``(None, changed)`` when the event applied; ``((reason, message), False)`` when replay
        stops at it: ``no_handler``, or the handler raised (classified by :func:`block_reason`).
    """
    handler = registry.get(event_type)
    if handler is None:
        what = repr(event_type) if event_type else "(missing type)"
        return ("no_handler", f"no replay handler is registered for {what}"), False
    try:
        changed = run_handler(handler, store, payload)
    except Exception as exc:
        return block_reason(exc), False
    return None, changed


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
    """The archive destination of an archive event (with a snapshot), else ``None``.

    ``payload`` is the payload, or its :class:`~journal.events.EntryKeys`.
    """
    if not isinstance(payload, (dict, EntryKeys)) or not payload.get("archive_shard_path"):
        return None
    snapshot = payload.get("entry_snapshot")
    if not isinstance(snapshot, dict):
        return None
    if event_type == "reflection.state_changed" and payload.get("to") == "archived":
        eid = snapshot.get("id") or payload.get("reflection_id")
        if not isinstance(eid, str) or not eid:
            return None
        return ArchiveTarget(REFLECTION_ARCHIVE, payload.get("archive_shard_path"), eid, REFLECTIONS)
    if event_type == "persona.fact_added":
        eid = snapshot.get("id") or payload.get("entry_id")
        if not isinstance(eid, str) or not eid:
            return None
        ek = payload.get("entity_key")
        return ArchiveTarget(
            PERSONA_ARCHIVE, payload.get("archive_shard_path"), eid, PERSONA, ek if isinstance(ek, str) else None
        )
    return None
