"""An independent model of what the journal's events do to a character folder.

The fault suites compare the folder after recovery with the fold of the journal's events computed
here, so this module deliberately does not import ``journal.handlers``: it restates memory-format
§3.5 (the five handled events) on plain Python values. A folder state is a :class:`State`: the two
covered views (``None`` when the file does not exist) and the archive shards by ``(archive,
basename)``.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any

REFLECTIONS = "reflections.json"
PERSONA = "persona.json"
REFLECTION_ARCHIVE = "reflection_archive"
PERSONA_ARCHIVE = "persona_archive"

REFLECTION_KEYS = (
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
PERSONA_KEYS = REFLECTION_KEYS[:7]
EVENT_TIME_KEYS = ("event_when_raw", "event_start_at", "event_end_at")


@dataclass
class State:
    """The covered part of a character folder.

    Attributes:
        views: ``reflections.json`` / ``persona.json`` → parsed value, or ``None`` when missing.
        shards: ``(archive, basename)`` → list of entries.
    """

    views: dict[str, Any] = field(default_factory=lambda: {REFLECTIONS: None, PERSONA: None})
    shards: dict[tuple[str, str], list[Any]] = field(default_factory=dict)

    def copy(self) -> State:
        return State(copy.deepcopy(self.views), copy.deepcopy(self.shards))

    def non_empty_shards(self) -> dict[tuple[str, str], list[Any]]:
        """Shards holding entries (an empty ``[]`` shard is legal litter of an interrupted archive)."""
        return {k: v for k, v in self.shards.items() if v}


class UnmodelledEvent(Exception):
    """An event this model does not cover; a scenario must not produce it."""


def _find(items: Any, entry_id: Any) -> dict[str, Any] | None:
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, dict) and item.get("id") == entry_id:
            return item
    return None


def _copy_present(entry: dict[str, Any], payload: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if key in payload:
            entry[key] = copy.deepcopy(payload[key])


def _heal(state: State, archive: str, payload: dict[str, Any]) -> None:
    name = payload.get("archive_shard_path")
    snapshot = payload.get("entry_snapshot")
    if name is None or not isinstance(snapshot, dict):
        return
    shard = state.shards.setdefault((archive, name), [])
    if not any(isinstance(e, dict) and e.get("id") == snapshot.get("id") for e in shard):
        shard.append(copy.deepcopy(snapshot))


def apply_to_view(view_name: str, view: Any, event_type: str, payload: dict[str, Any]) -> Any:
    """What a live writer's mutation does to the loaded view (in place); returns the view.

    Only the view part: archive events' shard appends are the EventLog's business.
    """
    state = State()
    state.views[view_name] = view
    apply(state, event_type, payload)
    return state.views[view_name]


def apply(state: State, event_type: str, payload: Any) -> None:
    """Apply one event to ``state`` in place, as memory-format §3.5 says the handler does."""
    p = payload if isinstance(payload, dict) else {}
    refl = state.views.get(REFLECTIONS)
    persona = state.views.get(PERSONA)
    if event_type == "reflection.evidence_updated":
        entry = _find(refl, p.get("reflection_id")) if p.get("reflection_id") else None
        if entry is not None:
            _copy_present(entry, p, REFLECTION_KEYS)
    elif event_type == "persona.evidence_updated":
        entry = _persona_entry(persona, p)
        if entry is not None:
            _copy_present(entry, p, PERSONA_KEYS)
    elif event_type == "persona.entry_updated":
        entry = _persona_entry(persona, p)
        if entry is not None:
            digest = hashlib.sha256(str(entry.get("text") or "").encode("utf-8")).hexdigest()
            if p.get("rewrite_text_sha256") and digest != p["rewrite_text_sha256"]:
                raise UnmodelledEvent("view drift: replay would stop here")
            _copy_present(entry, p, (*PERSONA_KEYS, "merged_from_ids", *EVENT_TIME_KEYS))
    elif event_type == "reflection.state_changed":
        rid, to = p.get("reflection_id"), p.get("to")
        if not rid or not to:
            return
        if to == "archived":
            _heal(state, REFLECTION_ARCHIVE, p)
            if isinstance(refl, list):
                refl[:] = [e for e in refl if not (isinstance(e, dict) and e.get("id") == rid)]
            return
        entry = _find(refl, rid)
        if entry is None:
            return
        entry["status"] = to
        if p.get("ts"):
            entry[f"{to}_at"] = p["ts"]
        if "absorbed_into" in p:
            entry["absorbed_into"] = p["absorbed_into"]
        if to == "promote_blocked" and "reason" in p:
            entry["promote_blocked_reason"] = p["reason"]
        if to == "denied" and "reason" in p:
            entry["denied_reason"] = p["reason"]
        if "reject_explanation" in p:
            entry["reject_reason"] = p["reject_explanation"]
    elif event_type == "persona.fact_added":
        if not p.get("archive_shard_path"):
            return
        _heal(state, PERSONA_ARCHIVE, p)
        section = persona.get(p.get("entity_key")) if isinstance(persona, dict) else None
        if isinstance(section, dict) and isinstance(section.get("facts"), list):
            eid = p.get("entry_id")
            section["facts"] = [e for e in section["facts"] if not (isinstance(e, dict) and e.get("id") == eid)]
    else:
        raise UnmodelledEvent(f"no model for {event_type!r}")


def _persona_entry(persona: Any, p: dict[str, Any]) -> dict[str, Any] | None:
    if not p.get("entity_key") or not p.get("entry_id") or not isinstance(persona, dict):
        return None
    section = persona.get(p["entity_key"])
    if not isinstance(section, dict):
        return None
    return _find(section.get("facts"), p["entry_id"])


def fold(base: State, events: list[tuple[str, Any]]) -> State:
    """``base`` with every ``(type, payload)`` applied in order (a new value)."""
    state = base.copy()
    for event_type, payload in events:
        apply(state, event_type, payload)
    return state


# -- entry-level views of a state, for "which prefix of the journal does this entry reflect" ------


def entry_values(state: State) -> dict[str, Any]:
    """Every covered entry of ``state`` by a stable key, with shard membership as separate keys.

    Keys: ``r/<id>`` (a reflection in the view), ``p/<section>/<id>`` (a persona entry),
    ``s/<archive>/<id>`` (the list of shard basenames holding that id, one per copy).
    A missing view gives no keys; a key absent from the result means "not there".
    """
    out: dict[str, Any] = {}
    refl = state.views.get(REFLECTIONS)
    if isinstance(refl, list):
        for e in refl:
            if isinstance(e, dict) and isinstance(e.get("id"), str):
                out.setdefault(f"r/{e['id']}", e)
    persona = state.views.get(PERSONA)
    if isinstance(persona, dict):
        for key, section in persona.items():
            facts = section.get("facts") if isinstance(section, dict) else None
            for e in facts if isinstance(facts, list) else []:
                if isinstance(e, dict) and isinstance(e.get("id"), str):
                    out.setdefault(f"p/{key}/{e['id']}", e)
    for (archive, name), entries in sorted(state.shards.items()):
        for e in entries:
            if isinstance(e, dict):
                out.setdefault(f"s/{archive}/{e.get('id')}", []).append((name, e))
    return out
