"""One step of an entry's history: what one event does to the entry, by the replay handlers' rules.

The handlers of :mod:`journal.handlers` find an entry in a view file and apply a field-setting
function to it (:data:`journal.handlers.FIELD_RULES`), or archive it (:func:`~journal.handlers.removes_entry`,
:func:`~journal.handlers.archive_snapshot`). This module applies those same functions to an entry
reconstructed from the journal alone, so the history never holds a second copy of a rule. Only
what the handlers check against the files themselves (the text hash of ``persona.entry_updated``,
a corrupt view or shard) cannot be known here: the diagnosis says where replay stops, and the
event's state (``blocked``) says so.
"""

from __future__ import annotations

import copy
from typing import Any

from journal.errors import JournalError
from journal.events import REPLAYABLE_EVENT_TYPES
from journal.handlers import (
    FIELD_RULES,
    PERSONA_ENTRY_KEYS,
    REFLECTION_EVIDENCE_KEYS,
    SPEAKER_KEYS,
    archive_snapshot,
    checked_basename,
    removes_entry,
    state_target,
    text_sha256,
)
from journal.history.values import PLACEMENT, SHARD, TEXT_SHA256, EntryState

#: Statuses a reflection can have (memory-format §2.2); ``<status>_at`` is their lifecycle stamp.
STATUSES = ("pending", "confirmed", "denied", "promoted", "merged", "archived", "promote_blocked")

#: Fields of an archived entry's snapshot the history shows besides its text: what the handlers
#: set, the lifecycle stamps and reasons, and the archive's own stamps.
SNAPSHOT_KEYS = frozenset(
    {
        *REFLECTION_EVIDENCE_KEYS,
        *PERSONA_ENTRY_KEYS,
        *SPEAKER_KEYS,
        "status",
        "absorbed_into",
        "promote_blocked_reason",
        "denied_reason",
        "reject_reason",
        "text",
        "archived_at",
        "archive_shard_path",
        *(f"{s}_at" for s in STATUSES),
    }
)

#: What an event did to its entry (:attr:`journal.history.Point.effect`).
EFFECTS = ("changed", "unchanged", "absent", "refused", "no_handler", "parked", "blocked")


def step(state: EntryState | None, event_type: str, payload: Any) -> tuple[EntryState, str]:
    """The entry after one event, and the event's effect, by the handlers' rules.

    Args:
        state: the entry before the event (``None``: no event has touched it yet; every field is
            unknown).
        event_type: the event's type.
        payload: the event's payload as read (``null`` counts as ``{}``, as replay passes it).

    Returns:
        ``(after, effect)``. ``effect`` is ``changed`` / ``unchanged`` (the rule ran; ``unchanged``:
        it set values the entry already had), ``absent`` (a no-op: an earlier event archived the
        entry, so the handler finds nothing in the view), ``refused`` (the handler raises on this
        payload before it writes anything: not an object, a bad shard name, a snapshot without an
        id, a ``to`` that is not a string), or ``no_handler`` (the type has no replay rule). A
        no-op returns ``state`` itself.
    """
    before = state if state is not None else EntryState()
    if not payload:
        payload = {}
    if not isinstance(payload, dict):
        return before, "refused"
    try:
        if removes_entry(event_type, payload):
            return _archive(before, event_type, payload)
        rule = FIELD_RULES.get(event_type)
        if rule is None:
            # persona.fact_added without a shard: handled, and it does nothing.
            return before, "unchanged" if event_type in REPLAYABLE_EVENT_TYPES else "no_handler"
        extra: tuple[Any, ...] = ()
        if event_type == "reflection.state_changed":
            to = state_target(payload)
            if to is None:
                return before, "unchanged"  # the handler's "no change" for a missing `to`
            extra = (to,)
    except JournalError:
        return before, "refused"
    if before.placement in ("archive", "removed"):
        return before, "absent"
    fields = dict(before.fields)
    changed = bool(rule(fields, payload, *extra))
    placement_known = before.placement == "view"
    if event_type == "persona.entry_updated" and payload.get("rewrite_text_sha256"):
        # The handler applied it only because the entry's text hashed to this value.
        changed |= fields.get(TEXT_SHA256) != payload["rewrite_text_sha256"]
        fields[TEXT_SHA256] = payload["rewrite_text_sha256"]
    if not changed and placement_known:
        return before, "unchanged"
    # The rule ran, so the handler found the entry in its view: that much is known now.
    return EntryState(fields, "view", None), "changed" if changed else "unchanged"


def _archive(before: EntryState, event_type: str, payload: dict[str, Any]) -> tuple[EntryState, str]:
    """An archive event: the snapshot goes into its shard (unless that shard already holds the
    entry), and the entry leaves the view."""
    basename = checked_basename(payload)
    snapshot = archive_snapshot(basename, payload)
    if snapshot is None:
        # Early-schema event: only the removal; no copy is made anywhere.
        if before.placement in ("archive", "removed"):
            return before, "absent"
        fields = dict(before.fields)
        if event_type == "persona.fact_added" and "text" in payload:
            fields["text"] = copy.deepcopy(payload["text"])
            fields[TEXT_SHA256] = text_sha256(payload["text"])
        return EntryState(fields, "removed", None), "changed"
    own = payload.get("reflection_id" if event_type == "reflection.state_changed" else "entry_id")
    if snapshot["id"] != own:
        # The copy goes into the shard under another entry's id: this entry only leaves the view.
        if before.placement in ("archive", "removed"):
            return before, "absent"
        return EntryState(dict(before.fields), "removed", None), "changed"
    if before.placement == "archive" and before.shard == basename:
        return before, "absent"  # that shard holds it already: the handler changes nothing
    fields = {k: copy.deepcopy(v) for k, v in snapshot.items() if k in SNAPSHOT_KEYS}
    if "text" in snapshot:
        fields[TEXT_SHA256] = text_sha256(snapshot["text"])
    return EntryState(fields, "archive", basename), "changed"


__all__ = ["EFFECTS", "PLACEMENT", "SHARD", "SNAPSHOT_KEYS", "STATUSES", "step"]
