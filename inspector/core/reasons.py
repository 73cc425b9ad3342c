"""Why replay stops at an event, or why an event behind the sentinel is flagged: one table of
texts for the timeline, the detail pane, the replay preview and the guarded replay.

Each reason says what it means for the folder and what a person can do about it. Where that is
a guarded replay of one scope, the suggestion is a :class:`Do`, worded for the surface that shows
it (:func:`inspector.core.advice.advice_text`: flags on the command line, the window's actions
and keys in the window).
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.advice import Surface, advice_text
from journal.finding import Advice


@dataclass(frozen=True, slots=True)
class Do:
    """A suggestion that is a guarded replay of one scope: ``lead``, the action, then ``tail``."""

    lead: str
    action: str
    tail: str = ""

    def text(self, surface: Surface) -> str:
        how = advice_text(Advice(self.action, "NAME", "EVENT_ID" if self.action == "park" else None), surface)
        return f"{self.lead} {how}.{' ' + self.tail if self.tail else ''}"


@dataclass(frozen=True, slots=True)
class ReasonText:
    """The words for one reason code.

    Attributes:
        title: completes "Blocked at event #N (type): it ..." (or "... it ..." for a flag).
        why: what it means for the folder.
        actions: what a person can do, one suggestion per item (:meth:`actions_for` words them).
    """

    title: str
    why: str
    actions: tuple[str | Do, ...]

    def actions_for(self, surface: Surface) -> tuple[str, ...]:
        """:attr:`actions` worded for ``surface``."""
        return tuple(a if isinstance(a, str) else a.text(surface) for a in self.actions)

    def paragraph(self, surface: Surface) -> str:
        """:attr:`why` and :attr:`actions` as one paragraph (tooltips, the detail pane)."""
        return f"{self.why} What you can do: {' '.join(self.actions_for(surface))}"


#: How a person goes past an event that can never apply (the only way: never automatic).
_PARK_ADVICE = Do(
    "If you decide to go past it, park it:",
    "park",
    "Park is guarded like replay: plan, backup, fingerprint check, report, and an audit line in "
    "events_parked.ndjson.",
)

#: Reason code (:data:`journal.diagnosis.BLOCK_REASONS`, ``ORPHAN_REASONS``, ``SUSPECT_REASONS``,
#: ``PENDING_REASONS``, ``parked``, and the guarded replay's ``sentinel_write``) → its words.
REASONS: dict[str, ReasonText] = {
    "no_handler": ReasonText(
        "has no replay handler",
        "No replay handler is registered for this event type, so our guarded replay holds it, and with it "
        "every later event of the entries it touches (later events may depend on it). Events of other "
        "entries still replay. The memory server's own start stops here for good (see what its next start does).",
        (
            "If its type is one of the ten reserved/legacy names, no version of the memory server "
            "can replay it: check in its payload whether its effect is already in the views.",
            "If a newer memory server or inspector handles this type, upgrade and replay again.",
            _PARK_ADVICE,
        ),
    ),
    "view_drift": ReasonText(
        "expects a persona text that is no longer there",
        "The entry's current text does not hash to the value the event was computed for, so "
        "applying its evidence would attach it to a different text. Something edited the entry "
        "after the merge (or the memory server wrote a text whose hash can never match).",
        (
            "Compare the entry's text in the Views tab with the event's payload.",
            "If an older persona.json from a backup or cloud save has the expected text, restore it and replay again.",
            "If the current text is right, copy the evidence fields from the payload onto the entry "
            "by hand (with a backup), then park the event.",
            _PARK_ADVICE,
        ),
    ),
    "corrupt_view": ReasonText(
        "cannot load its view",
        "The view file it writes is not valid JSON or has the wrong top-level type. Replay never "
        "overwrites it (the memory server would replace a corrupt persona.json with an empty one "
        "at startup, losing its entries). Our replay holds everything after it.",
        (
            "Restore that file from a backup or a cloud save, or repair the JSON by hand, before the "
            "memory server starts.",
            "Then replay again: the event and the ones after it are still pending.",
        ),
    ),
    "corrupt_shard": ReasonText(
        "names an archive shard that is corrupt",
        "The shard exists but is not a JSON list. It holds other archived entries, so it is "
        "never overwritten; the archived entry stays only in this event's payload.",
        (
            "Repair the shard's JSON by hand (it usually holds other entries), then replay again. If the "
            "shard is a link leading out of the folder, replace it with a regular file.",
            "Or move the shard aside, replay (it is recreated with this entry), and merge the "
            "moved-aside entries back by hand.",
        ),
    ),
    "bad_shard_name": ReasonText(
        "names an invalid archive shard",
        "The shard basename in its payload does not match YYYY-MM-DD_<8 hex>.json; it may point "
        "outside the archive folder. Nothing is written for it.",
        (
            "The payload is damaged or was not written by the memory server: inspect its payload.",
            "The archived entry is in its entry_snapshot; copy it into a valid shard by hand if you "
            "need it, then park the event.",
        ),
    ),
    "handler_error": ReasonText(
        "made its handler fail",
        "The handler raised an unexpected error; our replay holds the entries it touches (everything "
        "after it, when they are not known).",
        (
            "Read the message: a payload of the wrong shape or an unreadable file are the usual causes.",
            "If the data looks right, report it as a bug with the event's payload (redacted).",
        ),
    ),
    "sentinel_write": ReasonText(
        "was applied but the sentinel could not be saved",
        "The handler succeeded, then writing events_applied.json failed (disk full, permissions). "
        "The event will be replayed again, which is harmless: handlers are idempotent.",
        ("Free disk space or fix the permissions of the folder, then replay again.",),
    ),
    "archive_entry_lost": ReasonText(
        "lost its archived entry",
        "An archive event behind the sentinel whose entry is in neither the view nor its named "
        "shard: the archived entry was lost.",
        (
            "The entry is still in this event's entry_snapshot, in its payload.",
            Do("Our guarded replay can put it back into its shard from that snapshot:", "repair_orphans"),
            "Or look for the shard in a backup or cloud save.",
        ),
    ),
    "held": ReasonText(
        "waits behind a held event",
        "An earlier event of the same entry cannot be applied, so our guarded replay holds this one "
        "too, in order: applying it first could put newer values under older ones.",
        (
            "Look at the event that holds it (its reason says what to do).",
            "When that event applies, or a person parks it, this one replays at the next replay.",
        ),
    ),
    "parked": ReasonText(
        "was parked by a person",
        "A person decided to go past this event with a guarded park; replay never applies it. The "
        "decision is recorded in events_parked.ndjson and in the park's report.",
        ("Nothing to do; the audit line says who parked it and why.",),
    ),
    "view_differs": ReasonText(
        "would still change its view",
        "Behind the sentinel, yet applying it again would still change the view (a heuristic: its "
        "effect is not visible, or something outside the journal changed it since).",
        (
            "Compare the entry in the Views tab with the event's payload.",
            "If the change made outside the journal was intended, there is nothing to do.",
        ),
    ),
}
