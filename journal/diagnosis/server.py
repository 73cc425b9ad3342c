"""The server model: what the memory server's next start does to one character folder.

Memory-format §9, step by step: persona ensure, then reconcile with the server's reader and
sentinel rules, then the outbox. Its replay is the tail-decision engine
(:func:`journal.engine.decide_tail`) run with the server's rules: its reader's records, its
sentinel lookup, no applied set and no park, a stop of everything at the first record it cannot
apply, and *our* handlers (:func:`journal.handlers.try_apply`) on an in-memory overlay of the
folder with the server's documented deviations, each one named function of
:mod:`journal.serverrules`. Nothing is written. The findings it adds have codes starting
``server.``; the diagnosis's other findings describe what our guarded replay does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from journal.codec import same_json
from journal.diagnosis.checks import Character
from journal.diagnosis.folder import ProjectionStore
from journal.diagnosis.server_after import predict_after_reconcile
from journal.diagnosis.values import EntryChange, ServerStart, ServerStop
from journal.engine import Apply, TailPass, decide_tail
from journal.events import JOURNAL_NAME, SENTINEL_NAME, Event
from journal.finding import Advice
from journal.handlers import archive_target, try_apply
from journal.reader import events_at, iter_journal_from
from journal.recorded import recorded_ensure
from journal.repair import undecodable_fragments
from journal.sentinel import SentinelInfo
from journal.serverpersona import persona_ensure_at
from journal.serverrules import (
    CharacterList,
    ServerReader,
    ServerRecord,
    Undecodable,
    append_glues,
    live_write_orphans,
    outside,
    reconciles,
    relpath_or_abs,
    sentinel_after,
    sentinel_undecodable,
    server_assigns,
    server_outcome,
    server_reader,
    server_reads_journal,
    server_reads_sentinel,
    server_records_at,
    server_sentinel,
    server_sentinel_writable,
    server_shard_path,
    server_shard_state,
    shard_write_place,
    swept_temp_files,
    without_shard,
)
from journal.views import PERSONA, REFLECTIONS, copy_json

#: At most this many changed entries are listed (``changes_total`` counts them all).
MAX_CHANGES = 100


def predict_server_start(c: Character, characters: CharacterList) -> ServerStart:
    """The server's next start for ``c`` (run after the checks; reads what they found)."""
    s = ServerStart(reconciles(characters, c.diag.name), characters.path)
    s.outbox = c.outbox_pending
    if s.reconciled is False:
        s.sentinel = c.diag.sentinel
        s.persona = ("skip", "persona ensure and replay do not run for a character the server does not reconcile")
        return s
    folder = c.folder
    assert folder is not None
    view = folder.view(PERSONA, dict)
    ensure = recorded_ensure(c.dir, c.recorded) or persona_ensure_at(
        c.dir, c.diag.name, characters, refused="a link leading out of the folder" if view.refused else None
    )
    s.persona = (ensure.action, ensure.message)
    s.persona_ensure = ensure
    if not server_reads_journal(c.diag.journal.unreadable):
        s.sentinel = c.diag.sentinel
        if ensure.writes:  # persona ensure runs before reconcile, whatever the journal is
            s.writes = [(PERSONA, False)]
            s.deletes = _swept(c, s.writes)
        s.notes.append(
            f"what its reconcile and the migrations after it do is not predicted: {c.diag.journal.unreadable}"
        )
        return s
    if not server_reads_sentinel(c.sentinel_read):
        s.sentinel = SentinelInfo("unknown")
        s.notes.append(
            f"its read of {SENTINEL_NAME} cannot be predicted: the file {c.sentinel_read.message} (a FIFO blocks "
            "the start, a link is followed wherever it leads)"
        )
        return s
    reader = server_reader(c.defects, c.bom_lines)
    s.sentinel, start, floor = server_sentinel(c.sentinel_read, c.diag.sentinel, c.events, reader)
    s.hidden_lines = reader.hidden_lines
    s.start_index = start if start < len(c.events) else None
    s.raises = sentinel_undecodable(c.sentinel_read) or _journal_undecodable(c)
    if s.raises is not None:
        # Its reconcile raises before it applies anything (§9.8.1-2): every record after its
        # sentinel stays unapplied, and its live writes orphan them.
        s.unapplied = _ServerRecords(c, reader, start, floor).total()
        if ensure.writes:
            s.writes = [(PERSONA, False)]
        predict_after_reconcile(c, s, ProjectionStore(folder), ensure.returned)
        s.deletes = [*_swept(c, s.writes), *s.deletes]
        return s
    # The pending persona events meet the persona as ensure leaves it (§9.9).
    replaced = {PERSONA: ensure.persona_after} if ensure.writes and ensure.persona_after is not None else None
    store = ProjectionStore(folder, replaced=replaced)
    written: set[str] = set()
    records = _ServerRecords(c, reader, start, floor)
    # The tail-decision engine with the server's rules: its reader's records, no applied set, no
    # park, and its replay stops everything at the first record it cannot apply (§4.1 step 4).
    decided = decide_tail(
        records,
        apply=_server_apply(c, s, store, written),
        tail_pass=TailPass.for_server(s.sentinel.event_id),
        index=lambda eid: _index_of(c, eid),
    )
    last_id: str | None = None
    for k, d in enumerate(decided.decisions):
        if s.stop is None and d.type.startswith("persona."):
            s.persona_events += 1
        if d.kind == "applies":
            s.applied += 1
            last_id = d.event_id or None  # a record its reader takes with a null id: it writes null
        elif d.kind == "blocked" and s.stop is None:
            index = d.index if d.index >= 0 else None
            line = records.lines[k]
            s.stop = ServerStop(index, line, d.event_id, d.type, d.reason or "handler_error", d.message or "")
        elif d.kind == "held" and d.event_id in c.applied:
            s.ours_past_stop += 1
    s.replays = records.count
    s.unapplied = records.count - s.applied
    s.sentinel_after = sentinel_after(s.applied, last_id, 0)
    if ensure.writes:
        written.add(PERSONA)
    if s.applied:
        written.add(SENTINEL_NAME)
    # the store's writes, then the shards written where a payload's basename leads (once each)
    s.writes = [(w, False) for w in sorted(written)] + [w for w in dict.fromkeys(s.writes) if w[0] not in written]
    predict_after_reconcile(c, s, store, ensure.returned)
    s.deletes = [*_swept(c, s.writes), *s.deletes]
    for change in _changes(store):
        s.changes_total += 1
        if len(s.changes) < MAX_CHANGES:
            s.changes.append(change)
    return s


def _swept(c: Character, writes: list[tuple[str, bool]]) -> list[str]:
    """The temp files its atomic writes sweep from the folders they write into (§4.5 correction),
    relative to the character folder."""
    now = (c.now or datetime.now()).timestamp()
    folders = sorted({os.path.dirname(path) for path, out in writes if not out})
    return [os.path.join(f, name) if f else name for f in folders for name in swept_temp_files(c.dir / f, now)]


class _ServerRecords:
    """The server's records after its sentinel (our events from ``start``, and the repeated ids
    from byte ``floor``), in file order, read again with their payloads, as the engine takes them:
    ``(our index, or -1 for a repeated copy, the event, True)``; the server sees every one of them.

    Attributes:
        count: every record met, including those that changed under us (the server would meet
            something else there, and apply nothing of ours).
        lines: the line of each record yielded, in order (one per decision of the engine).
    """

    def __init__(self, c: Character, reader: ServerReader, start: int, floor: int) -> None:
        self._c, self._reader, self._start, self._floor = c, reader, start, floor
        self.count = 0
        self.lines: list[int] = []

    def total(self) -> int:
        """How many records the iteration meets (its final :attr:`count`), without reading them:
        our events from ``start`` its reader sees, and the repeated copies from byte ``floor``."""
        events, hidden = self._c.events, self._reader.hidden_lines
        ours = sum(1 for j in range(self._start, len(events)) if events.line(j) not in hidden)
        return ours + sum(1 for r in self._reader.duplicates if r.offset >= self._floor)

    def __iter__(self) -> Iterator[tuple[int, Event, bool]]:
        for index, record, ev in self._records():
            self.count += 1
            if ev is None:  # the line changed under us: the server would meet something else
                continue
            self.lines.append(record.line if record is not None else ev.line)
            yield (index if index is not None else -1), ev, True

    def _records(self) -> Iterator[tuple[int | None, ServerRecord | None, Event | None]]:
        c, reader, start = self._c, self._reader, self._start
        events = c.events
        n = len(events)
        dups = [r for r in reader.duplicates if r.offset >= self._floor]
        dup_events = events_at(c.journal_path, (r.offset for r in dups if r.kind == "duplicate")) if dups else {}
        only = [r for r in dups if r.kind == "only_server"]
        if only:
            dup_events.update(server_records_at(c.journal_path, only))
        k = 0
        if start < n:
            i = start
            for batch, _defects in iter_journal_from(c.journal_path, events.offset(start), events.line(start) - 1):
                for ev in batch:
                    while i < n and events.offset(i) < ev.offset:
                        if events.line(i) not in reader.hidden_lines:
                            yield i, None, None  # not found again: the file changed under us
                        i += 1
                    if not (i < n and events.offset(i) == ev.offset and events.event_id(i) == ev.event_id):
                        continue
                    while k < len(dups) and dups[k].offset < ev.offset:
                        yield None, dups[k], dup_events.get(dups[k].offset)
                        k += 1
                    if events.line(i) not in reader.hidden_lines:
                        yield i, None, ev
                    i += 1
            for j in range(i, n):
                if events.line(j) not in reader.hidden_lines:
                    yield j, None, None
        for r in dups[k:]:
            yield None, r, dup_events.get(r.offset)


#: The events whose handler writes one view and nothing else (the archive events also write shards),
#: with the view's top-level type: where the server's `!=` can make a save none (§9.8.9).
_EVIDENCE_VIEWS: dict[str, tuple[str, type]] = {
    "reflection.evidence_updated": (REFLECTIONS, list),
    "persona.evidence_updated": (PERSONA, dict),
    "persona.entry_updated": (PERSONA, dict),
}


def _loaded(store: ProjectionStore, view: tuple[str, type]) -> Any:
    """A copy of the part of a view the next handler sees (``None`` when it cannot be loaded)."""
    try:
        return copy_json(store.load_view(*view))
    except Exception:
        return None  # the handler meets the same failure and says why


def _journal_undecodable(c: Character) -> Undecodable | None:
    """The first byte of the journal the server's reader cannot decode (§9.8.1): its reader opens the
    journal as UTF-8 text, so one such byte anywhere makes its whole read raise. They are the
    fragments the journal repair moves out (:func:`journal.repair.undecodable_fragments`, the one
    home of which bytes those are; it reads again only the damaged lines our reader located)."""
    fragments = undecodable_fragments(c.journal_path, c.defects)
    if not fragments:
        return None
    first = fragments[0]
    return Undecodable(JOURNAL_NAME, first.offset + first.bad_at, first.line)


def _index_of(c: Character, event_id: str) -> int:
    i = c.events.index_of(event_id)
    return -1 if i is None else i


def _server_apply(c: Character, s: ServerStart, store: ProjectionStore, written: set[str]) -> Apply:
    """The server's apply step: our handlers, with its deviations where ours raise (§3.5 (d)/(e),
    §9.7: :func:`journal.serverrules.server_outcome`)."""

    def run(ev: Event, payload: Any) -> tuple[str, str] | None:
        store.focus(payload)
        view = _EVIDENCE_VIEWS.get(ev.type)
        before = _loaded(store, view) if view is not None else None
        reason = try_apply(c.registry, store, ev.type, payload)[0]
        saved = reason is None and view is not None and before is not None and view[0] in store.written
        if saved and view is not None:
            # The server assigns a field only where its `!=` sees a change (0 against 0.0 is none):
            # such fields keep the view's values, and with no other change it saves nothing (§9.8.9).
            kept = server_assigns(before, _loaded(store, view))
            store.save_view(view[0], kept)
            if kept is before:
                store.written.discard(view[0])
        written.update(store.written)
        return reason

    def apply(index: int, ev: Event, payload: Any) -> tuple[tuple[str, str] | None, bool]:
        reason = run(ev, payload)
        if reason is None and not server_sentinel_writable(ev.event_id):
            return (
                "sentinel_write",
                "the handler ran, but the sentinel write fails: the event id holds a lone surrogate, which the "
                "server cannot encode as UTF-8 (SentinelAdvanceError); every later start stops here again",
            ), False
        if reason is None:
            return None, False
        outcome = server_outcome(reason[0])
        target = archive_target(ev.type, payload) if outcome != "stop" and isinstance(payload, dict) else None
        if target is not None and isinstance(target.shard, str):
            path = server_shard_path(c.dir, target.archive, target.shard)
            found, detail = server_shard_state(c.dir, path, target.entry_id)
            if found == "undecodable":
                why = (
                    f"UnicodeDecodeError: the shard {relpath_or_abs(c.dir, path)!r} is {detail}; the server's archive "
                    "step does not take it for a corrupt shard, its handler raises and its replay stops here"
                )
                return ("handler_error", why), False
            if outcome == "write":
                if found == "fails":
                    why = f"the server's write of {relpath_or_abs(c.dir, path)!r} fails: {detail}"
                    return ("handler_error", why), False
                if found == "corrupt":
                    outcome = server_outcome("corrupt_shard")  # what the name leads to is no list: a corrupt shard
                else:
                    if found != "holds":
                        s.writes.append((relpath_or_abs(c.dir, path), outside(c.dir, path)))
                        s.stray.append((relpath_or_abs(c.dir, path), shard_write_place(c.dir, target.archive, path)))
                    return run(ev, without_shard(payload)), False
        if outcome == "pass":
            if index >= 0:
                s.passed.append(index)
            return None, False
        return reason, False

    return apply


def _changes(store: ProjectionStore) -> Iterator[EntryChange]:
    for name, ref, before, after in store.changed_entries():
        if after is None:
            yield EntryChange(name, ref, removed=True)
            continue
        old = before or {}
        fields = []
        for key in [*old, *(k for k in after if k not in old)]:
            b, a = old.get(key, None), after.get(key, None)
            if key not in old or key not in after or not same_json(b, a):
                fields.append((key, b, a))
        yield EntryChange(name, ref, tuple(fields), added=before is None)


# -- the findings -----------------------------------------------------------------------------------


def check_server_start(c: Character, s: ServerStart) -> None:
    """The ``server.*`` findings: where the server's next start does harm, or differs from what
    our guarded replay would do (README: Where we deliberately differ from the memory server)."""
    add = c.findings.add
    defaults = c.characters.defaults  # §9.8 item 10: it cannot use the file, and uses its defaults
    if s.characters_file is not None and (s.reconciled is None or defaults):
        add("server.characters_file", "warning", f"{s.characters_file} {_characters_error(c)}")
    if s.reconciled is False:
        where = (
            "the memory server's default characters (only 'test'), which it uses because its characters.json "
            "cannot be used"
            if defaults
            else s.characters_file
        )
        add(
            "server.not_reconciled",
            "info",
            f"{c.diag.name} is not listed in {where}: the memory server never reconciles it "
            "(its outbox still runs, if it has one)",
        )
        s.notes.append("not reconciled: the character is not in characters.json")
        return
    _persona_findings(c, s)
    _undecodable_findings(c, s)
    _sentinel_findings(c, s)
    _replay_findings(c, s)
    _row_notes(c, s)


def _characters_error(c: Character) -> str:
    return c.characters.error or "cannot be read"


def _persona_findings(c: Character, s: ServerStart) -> None:
    if s.persona[0] != "replace":
        return
    pending_persona = s.persona_events
    if pending_persona == 1:
        lost = "; the persona event it replays then finds no entry, and the sentinel moves past it"
    elif pending_persona:
        lost = f"; the {pending_persona} persona events it replays then find no entry, and the sentinel moves past them"
    else:
        lost = ""
    c.findings.add(
        "server.persona_replaced",
        "error",
        f"starting the memory server replaces persona.json with a fresh persona built from the character card, "
        f"before it replays{lost}: the persona's content is lost. First restore persona.json from a backup or the "
        "cloud save; do not start the server until then",
        file=PERSONA,
    )


def _undecodable_findings(c: Character, s: ServerStart) -> None:
    """§9.8.1-2: bytes that are not UTF-8 in the journal or the sentinel stop the server's
    reconcile of the character for good."""
    u = s.raises
    if u is None:
        return
    left = s.unapplied
    tail = (
        f"; its live writes keep appending and moving the sentinel, so the {left} record"
        f"{'s' if left != 1 else ''} after its sentinel {'are' if left != 1 else 'is'} orphaned write by write"
        if left
        else ""
    )
    if u.file == JOURNAL_NAME:
        c.findings.add(
            "server.journal_undecodable",
            "error",
            f"the memory server cannot read {JOURNAL_NAME}: the byte at offset {u.offset} (line {u.line}) is not "
            "UTF-8 (a torn append that cut a multi-byte character, or an append glued onto one). Its reader opens "
            "the journal as UTF-8 text, so its reconcile raises and it replays nothing for this character, at the "
            f"next start and every later one{tail}. Repair the journal first, with the server stopped: a "
            "guarded repair keeps every complete record and moves the undecodable bytes into "
            "events.ndjson.damaged",
            file=JOURNAL_NAME,
            advice=Advice("repair_journal", c.diag.name),
        )
    else:
        c.findings.add(
            "server.sentinel_undecodable",
            "error",
            f"the memory server cannot read {SENTINEL_NAME}: the byte at offset {u.offset} is not UTF-8. Its read "
            "catches only JSON and OS errors, so its reconcile raises and it replays nothing for this character, "
            f"at the next start and every later one{tail}. Our guarded replay takes it as malformed (a full "
            "replay); replacing the file is what a replay or a restore does",
            file=SENTINEL_NAME,
        )


def _sentinel_findings(c: Character, s: ServerStart) -> None:
    ours = c.diag.sentinel
    if ours.state == "ok" and s.sentinel.state != "ok":
        bom = ours.index is not None and c.events.line(ours.index) in c.bom_lines
        why = "its line starts with a UTF-8 BOM" if bom else "it is glued onto a torn fragment"
        c.findings.add(
            "server.sentinel_unseen",
            "error",
            f"the sentinel names event {ours.event_id}, which the memory server's reader cannot see ({why}): its "
            f"next start replays the whole journal ({s.replays} events)",
            event_id=ours.event_id,
            file=SENTINEL_NAME,
        )
    if s.sentinel.state != "ok" and s.replays and s.raises is None:
        changed = (
            f"; it changes {s.changes_total} entr{'ies' if s.changes_total != 1 else 'y'}" if s.changes_total else ""
        )
        worst = _rollbacks(s)
        stops = (
            f" and stops at {_where(s.stop)} ({s.stop.reason}), leaving what it applied before that"
            if s.stop is not None
            else ""
        )
        c.findings.add(
            "server.full_replay",
            "error" if worst and ours.state == "ok" else "warning",
            f"the memory server's next start replays the whole journal from the first event{changed}{worst}{stops}; "
            "a full replay applies old snapshots again, so it is not harmless",
            file=SENTINEL_NAME,
        )


def _rollbacks(s: ServerStart) -> str:
    shown = []
    for ch in s.changes:
        for name, before, after in ch.fields:
            if isinstance(before, (int, float)) and isinstance(after, (int, float)) and not isinstance(before, bool):
                shown.append(f"{ch.entry} {name} {before} → {after}")
            if len(shown) >= 3:
                break
        if len(shown) >= 3:
            break
    return f" ({'; '.join(shown)})" if shown else ""


def _where(stop: ServerStop) -> str:
    return f"event #{stop.index}" if stop.index is not None else f"line {stop.line}"


def _replay_findings(c: Character, s: ServerStart) -> None:
    add = c.findings.add
    if s.stop is not None:
        left = s.unapplied - 1
        add(
            "server.replay_stops",
            "error",
            f"the memory server's next start stops at {_where(s.stop)} ({s.stop.type or '(missing type)'}: "
            f"{s.stop.reason}) after applying {s.applied}"
            + (f"; the {left} after it stay unapplied" if left > 0 else "")
            + (
                f" by it ({s.ours_past_stop} of them our guarded replay already applied, so their effect is in the "
                "views)"
                if s.ours_past_stop
                else ""
            )
            + f", and its next live write moves the sentinel past {'them' if left > 0 else 'it'} for good "
            "(memory-format §9.6)",
            event_id=s.stop.event_id,
        )
    for index in s.passed:
        add(
            "server.shard_passed",
            "error",
            f"event #{index} archives into a corrupt shard: the memory server keeps the entry in the view and moves "
            "the sentinel past the event, so no later start retries it; our guarded replay pauses there instead",
            event_id=c.events.event_id(index),
        )
    for path, place in s.stray:
        where = {
            "outside": "outside the character folder: an archive event names a shard basename that leads out of it",
            "folder": "outside its shard folder, inside the character folder: an archive event names a shard "
            "basename that leads out of the shard folder",
            "shard_folder": "in the shard folder, under a name that is not a shard basename (no shard reader reads "
            "it, so the archived entry is out of reach)",
        }[place]
        add(
            "server.writes_outside",
            "error",
            f"the memory server's next start writes {path!r}, {where}; the server does not check the name: do not "
            "start the server on this folder",
            file=None if place == "outside" else path,
        )
    dups = [d for d in c.defects if d.kind == "duplicate_event_id"]
    if dups:
        lines = ", ".join(str(d.line) for d in dups[:5]) + (" …" if len(dups) > 5 else "")
        add(
            "server.duplicate_replayed",
            "warning",
            f"the memory server replays each repeated event id again (line{'s' if len(dups) != 1 else ''} {lines}) "
            "whenever its replay reaches it; our reader skips later copies",
            file=JOURNAL_NAME,
        )
    only = [d for d in c.defects if d.kind == "missing_event_id" and d.server_reads]
    if only:
        lines = ", ".join(str(d.line) for d in only[:5]) + (" …" if len(only) > 5 else "")
        add(
            "server.reader_differs",
            "warning",
            f"the memory server's reader takes line{'s' if len(only) != 1 else ''} {lines} as "
            f"{'records' if len(only) != 1 else 'a record'} (an object with an event_id key that is null or not "
            "valid Unicode; it checks only that the key is there), which our reader does not: its replay runs "
            f"{'them' if len(only) != 1 else 'it'}; a null id leaves its sentinel null, so every later start replays "
            "the whole journal, and an id with a lone surrogate fails its sentinel write, so every start stops there",
            file=JOURNAL_NAME,
        )
    if c.bom_lines:
        lines = ", ".join(str(n) for n in c.bom_lines[:5]) + (" …" if len(c.bom_lines) > 5 else "")
        add(
            "server.reader_differs",
            "warning",
            f"the memory server's reader skips line{'s' if len(c.bom_lines) != 1 else ''} {lines}: "
            f"{'each starts' if len(c.bom_lines) != 1 else 'it starts'} with a UTF-8 BOM (a file saved by a "
            "Windows editor), which its JSON parser rejects, so its replay never applies the event there; our "
            "reader reads past the BOM (memory-format §9.8.5)",
            file=JOURNAL_NAME,
        )
    if s.evidence_seeds and s.migration_orphans:
        n = s.migration_orphans
        add(
            "server.migration_orphans",
            "error",
            f"after reconcile, the memory server's one-shot evidence migration (persona.json lacks its marker "
            f"__meta__/__evidence_migration_v1__) makes {s.evidence_seeds} live write"
            f"{'s' if s.evidence_seeds != 1 else ''}, each appending an event and moving the sentinel to the journal "
            f"end: the {n} record{'s' if n != 1 else ''} reconcile left unapplied {'are' if n != 1 else 'is'} "
            "orphaned during this very start (memory-format §9.8.7). Fix what stops its replay first",
            file=PERSONA,
        )
    torn = any(d.kind == "torn_tail" for d in c.defects)
    if append_glues(torn) and s.migration_glues:
        add(
            "server.next_append_glued",
            "error",
            "the journal ends in a torn line, and the memory server's evidence migration appends during its next "
            "start: its first event is glued onto the fragment and lost, and the sentinel then names an event its "
            "reader cannot see, so every later start replays the whole journal; our library writes a newline first",
            file=JOURNAL_NAME,
        )
    elif append_glues(torn):
        add(
            "server.next_append_glued",
            "warning",
            "the journal ends in a torn line: the memory server's next journal write is glued onto it, and both are "
            "lost as one bad line; our library writes a newline first",
            file=JOURNAL_NAME,
        )


def _row_notes(c: Character, s: ServerStart) -> None:
    """The server's side of each deliberate difference that applies to this folder, in words."""
    notes = s.notes
    if live_write_orphans(s.unapplied):
        notes.append(
            "its next live write moves the sentinel to the journal end: "
            + (
                "the record its start leaves unapplied is orphaned"
                if s.unapplied == 1
                else f"the {s.unapplied} records its start leaves unapplied are orphaned"
            )
        )
    lost = [o for o in c.diag.archive_orphans if o.problem is None]
    if lost:
        notes.append(
            f"it does not recover the {len(lost)} archived entr{'ies' if len(lost) != 1 else 'y'} lost between the "
            "journal event and the shard append (our guarded replay's repair of orphaned archive events can)"
        )
        s.advice.append(Advice("repair_orphans", c.diag.name))
    if s.passed:
        notes.append("a corrupt shard is treated as holding the entry: the view keeps it and the sentinel moves on")
    if any(d.kind == "duplicate_event_id" for d in c.defects):
        notes.append(
            "a repeated event id is replayed again; when its replay ends on a copy, the sentinel names an id whose "
            "first line comes earlier, so every later start replays from there again"
        )
    if append_glues(any(d.kind == "torn_tail" for d in c.defects)):
        notes.append("an append after the torn last line is glued onto it")
    if s.deletes:
        notes.append(
            f"its first atomic write into a folder deletes the temp files there older than 24 h: "
            f"{', '.join(s.deletes[:5])}{' …' if len(s.deletes) > 5 else ''}"
        )
    elif c.findings.has("tempfile.leftover"):
        notes.append(
            "every atomic write of the server deletes the temp files older than 24 h in the folder it writes into; "
            "its next start writes into none of the folders that hold them, or they are younger"
        )
