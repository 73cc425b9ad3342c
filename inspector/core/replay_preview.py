"""What replaying up to a pending or blocked event would change, from a dry run on a scratch copy.

Replay is in file order: an event cannot be applied without the pending events before it, so
the preview is the dry run of the tail up to and including the event (``until``), and says so.
An event replay cannot apply holds the entries it touches; later events of those entries wait
behind it, and events of other entries still apply (:mod:`journal.holds`).
The original folder is only read (``journal.dryrun.dry_run`` works on a copy).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from inspector.core.timeline import REASON_TEXT
from journal.diagnosis import EventInfo
from journal.dryrun import FolderDiff, dry_run
from journal.replayreport import ReplayReport


@dataclass(slots=True)
class ReplayPreview:
    """The dry-run outcome for one event.

    Attributes:
        event_id: the event asked about.
        report: the reconciler's report of the dry run.
        diff: per-file diff (view entries with field-level before/after, shard entries added,
            sentinel before/after).
        reached: replay applied this event (did not stop before or at it).
        summary: the outcome in words.
    """

    event_id: str
    report: ReplayReport
    diff: FolderDiff
    reached: bool
    summary: str


def preview_replay(char_dir: str | os.PathLike[str], event: EventInfo) -> ReplayPreview:
    """Dry-run the pending tail up to ``event`` and describe the result."""
    run = dry_run(char_dir, until=event.event_id)
    report = run.report
    reached = event.event_id in report.applied
    before = max(0, len(report.applied) - (1 if reached else 0))
    own = next((b for b in report.blocks if b.event_id == event.event_id), None)
    stop = report.stopped
    if own is not None:
        why = REASON_TEXT.get(own.reason, own.reason)
        summary = f"Replay cannot apply this event: {why} ({own.message}); it holds the entries it touches."
    elif event.event_id in report.held and stop is not None:
        summary = (
            "Replay holds this event: an earlier event of the same entry cannot be applied "
            f"(first: event #{stop.index}, {stop.type}: {stop.reason}), so it waits behind it."
        )
    elif reached:
        others = f" after the {before} pending event{'s' if before != 1 else ''} before it" if before else ""
        changes = "changes nothing" if run.diff.empty else "changes what is listed below"
        summary = f"Replaying this event{others} {changes}."
    else:
        summary = "This event is not after the sentinel: replay would not apply it."
    return ReplayPreview(event.event_id, report, run.diff, reached, summary)


def diff_as_tree(diff: FolderDiff, focus: str | None = None) -> dict[str, Any]:
    """The diff as a JSON-like value for a tree: one node per changed entry (the event's own entry
    first), its fields as ``{"before", "after"}``, then shard entries added and the sentinel."""
    tree: dict[str, Any] = {}
    entries = sorted(diff.entries, key=lambda e: (e.entry != focus, e.file, e.entry))
    for change in entries:
        label = f"{change.file} · {change.entry} ({change.kind})"
        tree[label] = {f.field: {"before": f.before, "after": f.after} for f in change.fields} or change.kind
    if diff.shard_entries_added:
        added: dict[str, list[str]] = {}
        for s in diff.shard_entries_added:
            added.setdefault(s.file, []).append(s.entry_id)
        tree["shard entries added"] = added
    if diff.sentinel_before != diff.sentinel_after:
        tree["sentinel"] = {"before": diff.sentinel_before, "after": diff.sentinel_after}
    if not tree:
        tree["no change"] = "replaying leaves every view, shard and the sentinel as they are"
    return tree
