"""Every plan, guard finding and result as text, shared by the command line and the window."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from journal.dryrun import FolderDiff

if TYPE_CHECKING:
    from inspector.core.replay.execute import ReplayOutcome
    from inspector.core.replay.plan import Plan
    from inspector.core.replay.preflight import Preflight
    from inspector.core.replay.restore import RestoreOutcome, RestorePlan


#: How many events that cannot be applied a plan explains one by one.
_MAX_BLOCKS = 10


def _short(value: Any, limit: int = 70) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_preflight(pf: Preflight) -> list[str]:
    """The first guard's findings, one line each."""
    out = [f"Server: {pf.server.message}"]
    out += [f"Refused: {r.message}" for r in pf.refusals]
    out += [f"Warning: {w.message}" for w in pf.warnings]
    return out


def describe_diff(diff: FolderDiff, max_entries: int = 50) -> list[str]:
    """The per-file diff: entries with field-level before/after, shard entries added, sentinel."""
    out: list[str] = []
    for change in diff.entries[:max_entries]:
        out.append(f"  {change.file} {change.entry}: {change.kind}")
        for f in change.fields:
            out.append(f"      {f.field}: {_short(f.before)} → {_short(f.after)}")
    if len(diff.entries) > max_entries:
        out.append(f"  … and {len(diff.entries) - max_entries} more entries")
    for added in diff.shard_entries_added:
        out.append(f"  {added.file}: + entry {added.entry_id}")
    if diff.sentinel_before != diff.sentinel_after:
        out.append(f"  events_applied.json: {diff.sentinel_before} → {diff.sentinel_after}")
    if not out:
        out.append("  (no file changes)")
    return out


def _sentinel_line(plan: Plan) -> str:
    where = {
        "ok": f"at #{plan.sentinel_index}",
        "missing": "missing: the whole journal replays (handlers are idempotent)",
        "null": "null: the whole journal replays",
        "malformed": "malformed: the whole journal replays",
        "unknown_id": f"names {plan.sentinel_id}, which is not in the journal: the whole journal replays",
    }.get(plan.sentinel_state, plan.sentinel_state)
    return f"Sentinel: {where}; {plan.total_events} events, {plan.pending} pending"


def describe_plan(plan: Plan, max_events: int = 50) -> list[str]:
    """The plan as text: scope, sentinel, events that would apply, where it stops and why, diff
    (for the ``repair_journal`` scope: :func:`describe_journal_repair`)."""
    out = [f"Plan for {plan.target.character} ({plan.char_dir}), {plan.created_at}", f"Scope: {plan.scope.describe()}"]
    if plan.journal_repair is not None:
        return out + describe_journal_repair(plan, max_events)
    if not plan.journal_present:
        out.append("No journal (events.ndjson) in this folder: nothing to replay (a cloud-save export has views only).")
    if plan.journal_present:
        out.append(_sentinel_line(plan))
    if plan.applied_beyond:
        out.append(
            f"Already applied past the sentinel (events_applied_set.json; not run again): {len(plan.applied_beyond)}"
        )
    if plan.park is not None:
        park = plan.park
        out.append(f"Park {park.event.label()}: it is never applied, and replay goes past it.")
        out.append(f"  Why it is held: {park.reason}")
        out.append("  The decision is recorded in events_parked.ndjson and in the report (who, when, why).")
        if park.released:
            out.append(f"  With it parked, {len(park.released)} held event(s) apply:")
            out += [f"    {e.label()}" for e in park.released[:max_events]]
    verb = "re-apply" if plan.scope.kind == "repair" else "apply"
    out.append(f"Would {verb} {len(plan.events)} event(s):")
    out += [f"  {e.label()}" for e in plan.events[:max_events]]
    if len(plan.events) > max_events:
        out.append(f"  … and {len(plan.events) - max_events} more")
    blocks = plan.blocks or ([plan.block] if plan.block is not None else [])
    for block in blocks[:_MAX_BLOCKS]:
        out += block.lines()
    if len(blocks) > _MAX_BLOCKS:
        out.append(f"… and {len(blocks) - _MAX_BLOCKS} more events that cannot be applied (see the report)")
    if plan.held:
        out.append(
            f"Held, not applied: {len(plan.held)} event(s) (the ones above, and every later one touching an entry "
            "they hold); the sentinel stays just before the first:"
        )
        out += [f"  {e.label()}" for e in plan.held[:max_events]]
        if len(plan.held) > max_events:
            out.append(f"  … and {len(plan.held) - max_events} more")
    if plan.temp_files and plan.has_work:
        out.append(
            f"Also removes {len(plan.temp_files)} leftover temp file(s) of interrupted writes: "
            + ", ".join(plan.temp_files)
        )
    for orphan in plan.unrepairable:
        assert orphan.block is not None
        out.append("Cannot repair:")
        out += ["  " + line for line in orphan.block.lines()]
    if plan.undecodable:
        out.append(
            f"Note: {len(plan.undecodable)} fragment(s) of events.ndjson are not UTF-8, so the memory server cannot "
            "read this journal and replays nothing for this character at any start; the 'repair journal' scope "
            "(--repair-journal) moves them out."
        )
    if plan.scope.kind != "repair":
        lost = [o for o in plan.orphans if o.repairable]
        if lost:
            out.append(
                f"Note: {len(lost)} orphaned archive event(s) behind the sentinel; "
                "the 'repair orphans' scope puts their entries back."
            )
    out.append("Changes:")
    out += describe_diff(plan.diff)
    beyond = plan.dry_report.applied_beyond
    if beyond or plan.applied_beyond:
        out.append(
            f"  events_applied_set.json: {len(beyond)} event(s) recorded as applied past the sentinel"
            + ("" if beyond else " (removed)")
        )
    return out


def _size(n: int) -> str:
    return f"{n:,} byte{'' if n == 1 else 's'}"


def describe_journal_repair(plan: Plan, max_fragments: int = 50) -> list[str]:
    """A ``repair_journal`` plan as text, after its heading: each fragment (where it is, what it is,
    never its bytes' text), what is kept, and the change to each file."""
    repair = plan.journal_repair
    assert repair is not None
    if not repair.present:
        return ["No journal (events.ndjson) in this folder: nothing to repair.", "Changes:", "  (no file changes)"]
    out = [_sentinel_line(plan)]
    damage = (
        f"; {repair.decodable_damage} damaged line(s) that are UTF-8 stay as they are (the memory server skips them)"
        if repair.decodable_damage
        else ""
    )
    if not repair.has_work:
        out.append(f"Nothing to repair: every line of events.ndjson is valid UTF-8{damage}.")
        return [*out, "Changes:", "  (no file changes)"]
    out.append(
        f"The memory server opens events.ndjson as UTF-8 text, so {len(repair.fragments)} fragment(s) that are not "
        f"UTF-8 stop its replay of {plan.target.character} at every start. Each moves to events.ndjson.damaged "
        "(lossless: its bytes, where they were, their SHA-256):"
    )
    for f in repair.fragments[:max_fragments]:
        what = (
            f"the bytes before event {f.event_id}, which was glued onto them and stays, on its own line"
            if f.kind == "glued"
            else "the whole line" + (" and its newline" if f.newline else " (the unterminated last line)")
        )
        note = ""
        if f.offset in repair.recorded:
            note = " (recorded in events.ndjson.damaged already, by an interrupted repair)"
        out.append(f"  line {f.line}, offset {f.offset}: {f.preview()}, {what}{note}")
    if len(repair.fragments) > max_fragments:
        out.append(f"  … and {len(repair.fragments) - max_fragments} more (see the report)")
    glued = f" ({repair.glued} of them glued onto a fragment, now on a line of its own)" if repair.glued else ""
    out.append(f"Keeps all {repair.records} complete record(s) byte for byte, in order{glued}{damage}.")
    out.append(
        "Only bytes that are not UTF-8 move: damage that is UTF-8 (malformed JSON, an ASCII torn tail) is not touched. "
        "The sentinel, the applied set and the views are not touched, and nothing is replayed."
    )
    if plan.pending:
        out.append(
            f"Afterwards the memory server can read the journal again; the {plan.pending} pending event(s) are "
            "replayed by its next start (memory-inspector check says how far it gets), or by memory-inspector replay."
        )
    if plan.temp_files:
        out.append(
            f"Also removes {len(plan.temp_files)} leftover temp file(s) of interrupted writes: "
            + ", ".join(plan.temp_files)
        )
    todo = len(repair.to_record)
    out.append("Changes:")
    out.append(f"  events.ndjson: rewritten, {_size(repair.size)} → {_size(repair.new_size)}")
    created = "" if repair.damaged_present else " (created)"
    out.append(f"  events.ndjson.damaged: +{todo} fragment(s){created}")
    return out


def describe_outcome(outcome: ReplayOutcome) -> list[str]:
    """The result as text (shown next to the plan)."""
    out = [f"Result: {outcome.status} — {outcome.message}"]
    if outcome.parked is not None:
        p = outcome.parked
        out.append(f"Parked event #{p.index} ({p.type}) [{p.event_id}], by {p.by} on {p.host} at {p.parked_at}.")
    if outcome.applied:
        changed = outcome.report.changed if outcome.report else 0
        out.append(f"Applied {len(outcome.applied)} event(s); {changed} changed a file.")
    if outcome.journal_repair is not None:
        r = outcome.journal_repair
        out.append(
            f"events.ndjson: {_size(r.repair.size)} → {_size(r.repair.new_size)}; events.ndjson.damaged: "
            f"+{len(r.recorded)} fragment(s)" + (f" ({len(r.already)} recorded already)" if r.already else "")
        )
    if outcome.block is not None:
        out += outcome.block.lines()
    if outcome.report is not None and outcome.report.held:
        out.append(f"Held, not applied: {len(outcome.report.held)} event(s).")
    if outcome.changed_files:
        out.append("Changed since the plan: " + ", ".join(outcome.changed_files))
    if outcome.mismatches:
        out.append("Differs from the dry run's prediction: " + ", ".join(outcome.mismatches))
    if outcome.after is not None:
        out.append(f"Now: {outcome.after.describe()}")
    if outcome.backup is not None:
        out.append(f"Backup: {outcome.backup.path}  (undo: memory-inspector restore {outcome.backup.path})")
    if outcome.report_path is not None:
        out.append(f"Report: {outcome.report_path}")
    return out


def describe_restore_plan(rp: RestorePlan) -> list[str]:
    """The restore plan as text: the backup, the folder it goes into in full (and who named that
    folder), then what changes or why restore refuses."""
    b = rp.backup
    out = [f"Backup {b.path} ({b.kind}, {b.created_at}) of {b.character}"]
    if rp.target is None:
        out.append("Into: (no folder: nothing outside the backup says where it belongs)")
    else:
        whose = {
            "--to": "the folder you named with --to",
            "index": "recorded in the index of backups when it was taken",
        }
        out.append(f"Into: {rp.target}  ({whose.get(rp.via, rp.via)})")
        if rp.target.name != b.character:
            out.append(f"Note: the folder is named {rp.target.name}; the backup is of {b.character}.")
    if rp.refusal is not None:
        out.append(f"Restore refuses: {rp.refusal}")
        return out
    if rp.problems:
        out.append("The backup does not match its manifest; restore refuses:")
        out += [f"  {p}" for p in rp.problems]
        return out
    if not rp.has_work:
        out.append("The folder already equals the backup: nothing to restore.")
        return out
    out += [f"  replace {rel}" for rel in rp.replace]
    out += [f"  create  {rel}" for rel in rp.create]
    out += [f"  remove  {rel}  (created after the backup; kept in the pre-restore backup)" for rel in rp.remove]
    out += [f"  remove  {rel}/  (an empty folder created after the backup)" for rel in rp.remove_dirs]
    out.append(f"  {len(rp.unchanged)} file(s) already identical")
    if rp.new_events:
        out.append(
            f"Warning: the journal has {rp.new_events} event(s) written after the backup; they leave the "
            "folder (and stay in the pre-restore backup)."
        )
    return out


def describe_restore_outcome(out: RestoreOutcome) -> list[str]:
    """The restore result as text."""
    lines = [f"Result: {out.status} — {out.message}"]
    if out.pre_restore is not None:
        where = out.pre_restore.path
        lines.append(f"The folder as it was before: {where}  (undo: memory-inspector restore {where})")
    return lines
