"""``memory-inspector history``: an entry's covered fields after each event, and the views that moved.

    memory-inspector history PATH [--character NAME] --entry ENTRY [--entity KEY] [--json] [--redact]
    memory-inspector history PATH [--character NAME] --at EVENT [--entry ENTRY [--entity KEY]] [--json] [--redact]
    memory-inspector history PATH [--character NAME] --between EVENT_A EVENT_B [--json] [--redact]
    memory-inspector history PATH [--character NAME] [--json] [--redact]

PATH is what ``check`` takes (a memory root, a character folder, or a ``.zip`` export), read the
same way (:func:`journal.diagnosis.diagnose_path`); ``--character`` is needed only when PATH holds
several characters. ``--entry`` takes an entry as ``check`` names it (a reflection id, or
``ENTITY/ID`` for a persona entry: :meth:`journal.history.JournalHistory.find_entry`), a persona
entry's id alone when only one entity has it, or an id with ``--entity KEY``. ``--at`` and
``--between`` take events as the window's Ctrl+G does: an id, the start of one event's id, or
``#index`` (:meth:`journal.history.JournalHistory.event`). Values are the stored ones, as the
events carry them (decay is not applied).

What the text for people shows of a value is the CLI's one privacy rule
(:func:`inspector.core.output.value_text`): numbers, booleans and null as they are, text and other
values only as their kind and size. ``--json`` has the values. ``--redact`` applies the window's
redaction (:func:`inspector.core.redaction.redact_document`): to the values in ``--json``, and to
the messages in both forms (a damaged line's preview, a text's digest).

Exit codes: 0 the output was written; 1 the journal could not give the history (it changed since
it was read, or cannot be read: one line on stderr); 2 bad input (PATH unreadable, no such
character, several characters and no ``--character``, no event touches the entry, an entry id of
several entities or an event prefix of several events (the candidates are listed), no such event,
bad arguments: one line on stderr, nothing on stdout); 130 interrupted.

JSON shapes (``--json``; UTF-8, two-space indent; ``schema`` 1). Throughout, ``entry`` is
``{"id", "entity", "ref"}`` (``entity`` null for a reflection; ``ref`` is the diagnosis's name,
``<entity>/<id>`` for a persona entry), and ``fields`` maps each *known* field to its stored
value: a field left out is unknown (no event has set it yet). Besides the handlers' own fields
(evidence, status and ``<status>_at``, reasons, ``absorbed_into``, ``merged_from_ids``, event-time
and speaker keys, and an archive snapshot's ``text``, ``archived_at``, ``archive_shard_path``),
``fields`` holds ``text_sha256`` (as a merge's ``rewrite_text_sha256`` or a snapshot's text says),
``placement`` (``view`` / ``archive`` / ``removed``) and, for ``archive``, ``shard``.

- ``--entry``: ``{"schema", "character", "entry", "sentinel_index", "last_applied", "view",
  "points"}``. ``points``: one per event touching the entry, in journal order: ``{"index",
  "event_id", "type", "ts", "state", "reason", "shown_state", "effect", "noop", "changed",
  "fields", "view_agrees"}``; ``state``/``reason`` are the diagnosis's (``shown_state`` shows
  ``held`` / ``parked`` for those reasons), ``effect`` ∈ ``changed``, ``unchanged``, ``absent``
  (no-op: archived earlier), ``refused``, ``no_handler``, ``parked``, ``blocked``; ``changed``
  lists the fields the event changed; ``view_agrees`` is set on the last applied point only.
  ``view``: ``{"index", "agrees", "differences": [{"name", "point", "view"}], "message"}``
  (``{"unknown": true}`` for a side that lacks the field).
- ``--at EVENT_ID --entry ID``: ``{"schema", "character", "at": {"index", "event_id"}, "entry",
  "point", "fields"}``: the entry after its last point at or before the event (``point`` and
  ``fields`` null when no event had touched it yet).
- ``--at EVENT_ID``: ``{"schema", "character", "at", "entries": [{"entry", "point", "fields"}]}``,
  every entry an event up to it touches (reflections first, then persona entries by entity).
- ``--between A B``: ``{"schema", "character", "from": {"index", "event_id"}, "to": {...},
  "changes": [{"entry", "fields": [{"name", "before", "after"}]}]}``: every entry whose fields
  differ, before (at A) → after (at B); an unknown side is left out.
- neither ``--entry``, ``--at`` nor ``--between``: the views that moved without an event:
  ``{"schema", "character", "moved": [{"entry", "code", "severity", "index", "event_id", "state",
  "differences", "message", "finding"}]}``. ``code`` is ``view.moved_on`` (``info``), the code
  ``check`` gives an applied merge whose text moved on; ``finding`` names the diagnosis's own
  finding on that event (``view.moved_on`` / ``event.suspect``) when it has one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

from inspector.core import cli_args, output
from inspector.core.output import ExitCode
from inspector.core.redaction import redact_document, redact_message
from inspector.core.text import count, one_line
from journal.diagnosis import DiagnosisInputError, diagnose_path
from journal.history import (
    PLACEMENT,
    UNKNOWN,
    EntryHistory,
    EntryState,
    FieldChange,
    HistoryDiff,
    HistoryError,
    HistoryInputError,
    JournalHistory,
    MovedView,
    StateAt,
)

PROG = "memory-inspector history"
SCHEMA = 1


def add_parser(subparsers: Any) -> None:
    """Register ``history`` on the subcommands' parser (:mod:`inspector.cli` assembles them)."""
    p = subparsers.add_parser(
        "history",
        help="an entry's fields after each event; the state at an event; a diff between two",
        description="An entry's covered fields after each event; the state at an event; a diff between two "
        "events; without --entry/--at/--between, the views that moved without an event (read-only).",
        epilog="exit codes: 0 written; 1 the journal changed since it was read or cannot be read; 2 bad input "
        "(PATH, character, entry or event not found, bad arguments); 130 interrupted",
    )
    cli_args.add_path(p)
    cli_args.add_character(p)
    p.add_argument(
        "--entry",
        metavar="ENTRY",
        help="an entry as check names it (a reflection id, or ENTITY/ID for a persona entry), or a persona "
        "entry's id alone when one entity has it",
    )
    p.add_argument("--entity", metavar="KEY", help="the persona entry's entity key (master, neko, ...)")
    p.add_argument(
        "--at",
        metavar="EVENT",
        help="the state as of this event (of --entry, or of every entry): an event id, the start of one, or "
        "#index, as Ctrl+G takes it",
    )
    p.add_argument(
        "--between", nargs=2, metavar=("EVENT_A", "EVENT_B"), help="what differs between two events (as --at)"
    )
    cli_args.add_json(p, schema=SCHEMA)
    cli_args.add_redact(p)
    p.set_defaults(run=run_history)


def run_history(args: argparse.Namespace) -> int:
    """Run the command for parsed ``args``; returns the exit code."""
    if args.entity is not None and args.entry is None:
        return _bad("--entity needs --entry")
    if args.between is not None and (args.at is not None or args.entry is not None):
        return _bad("--between shows every entry: it takes neither --at nor --entry")
    meter = output.meter(f"{PROG}: reading the journal")
    try:
        try:
            # the states, not the server's next start: history shows none of its predictions
            diagnosis = diagnose_path(args.path, character=args.character, progress=meter, server_model=False)
        finally:
            output.clear(meter)
        with diagnosis:
            character = diagnosis.only_character()
            doc, text = _produce(JournalHistory(character), args)
    except (DiagnosisInputError, HistoryInputError) as exc:
        return _bad(str(exc))
    except HistoryError as exc:
        return output.error(PROG, str(exc), ExitCode.PROBLEMS)
    except KeyboardInterrupt:
        return output.interrupted(PROG)
    if args.json:
        doc = {"schema": SCHEMA, "character": character.name, **doc}
        output.write_json(sys.stdout, redact_document(doc) if args.redact else doc)
    else:
        sys.stdout.write("\n".join(redact_message(line) for line in text.split("\n")) if args.redact else text)
    return ExitCode.OK


def _bad(message: str) -> int:
    return output.error(PROG, message)


def _produce(history: JournalHistory, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The JSON document's body and the text for people, for the form ``args`` asks for."""
    key = None if args.entry is None else history.find_entry(args.entry, args.entity)
    name = history.diagnosis.name
    if args.between is not None:
        diff = history.diff(history.event(args.between[0]), history.event(args.between[1]))
        return diff.to_json(), render_diff(name, diff)
    if args.at is not None:
        at = history.event(args.at)
        if key is None:
            state = history.state_at(at)
            return state.to_json(), render_state(name, state)
        entry = history.entry(key)
        point = entry.at(at.index)
        doc = {
            "at": at.to_json(),
            "entry": key.to_json(),
            "point": None if point is None else point.index,
            "fields": None if point is None else point.entry.known(),
        }
        return doc, render_entry_at(name, entry, at.index)
    if key is not None:
        entry = history.entry(key)
        return entry.to_json(), render_entry(name, entry)
    moved = history.moved()
    return {"moved": [m.to_json() for m in moved]}, render_moved(name, moved)


# -- for people ----------------------------------------------------------------------------------

#: Longest value shown in a table cell; text stays out of terminals (its length is shown).
_CELL = 40


def shown(name: str, value: Any) -> str:
    """One value for a terminal, by the CLI's one privacy rule (:func:`inspector.core.output.value_text`:
    numbers, booleans and null as they are, any other value as its kind and size), long ones cut."""
    if value is UNKNOWN:
        return "unknown"
    if name == PLACEMENT:  # the history's own word (view / archive / removed), not the folder's text
        return str(value)
    text = one_line(output.value_text(value))
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


def _changes(changes: Iterable[FieldChange]) -> str:
    return ", ".join(f"{one_line(c.name)}: {shown(c.name, c.before)} → {shown(c.name, c.after)}" for c in changes)


def render_entry(character: str, history: EntryHistory) -> str:
    """The history table: one row per point, with the fields the event changed."""
    key = history.key
    kind = "reflection" if key.entity is None else "persona entry"
    lines = [f"{one_line(character)}: {kind} {one_line(key.ref)}: {count(len(history.points), 'event')}"]
    sentinel = "no usable sentinel" if history.sentinel_index is None else f"sentinel at #{history.sentinel_index}"
    lines.append(f"  {sentinel}; values are stored ones, as the events carry them (no decay)")
    lines.append(_view_line(history))
    lines.append(f"  {'#':>8}  {'state':<9} {'effect':<10} {'type':<28} {'ts':<26} changes")
    before = EntryState()
    for p in history.points:
        diff = before.changes_to(p.entry)
        row = _changes(diff) if diff else "(none)"
        mark = " ← last applied" if p.view_agrees is not None else ""
        lines.append(
            f"  {'#' + str(p.index):>8}  {p.shown_state:<9} {p.effect:<10} {one_line(p.type):<28} "
            f"{one_line(p.ts):<26} {row}{mark}"
        )
        before = p.entry
    return "\n".join(lines) + "\n"


def _view_line(history: EntryHistory) -> str:
    v = history.view
    if v.index is None:
        return "  no applied event: nothing to compare the current view with"
    if v.agrees is None:
        return f"  the current view cannot be compared with #{v.index}: {one_line(v.message or '')}"
    if v.agrees:
        return f"  the current view agrees with #{v.index}, the last applied event"
    return f"  the current view moved on from #{v.index}, the last applied event, without an event: " + _changes(
        v.differences
    )


def render_entry_at(character: str, history: EntryHistory, index: int) -> str:
    point = history.at(index)
    head = f"{one_line(character)}: {one_line(history.key.ref)} as of event #{index}"
    if point is None:
        return head + ": no event had touched it yet\n"
    lines = [head + f" (its last event then: #{point.index}, {point.shown_state}, {point.effect})"]
    lines += [f"  {one_line(name)}: {shown(name, value)}" for name, value in sorted(point.entry.known().items())]
    return "\n".join(lines) + "\n"


def render_state(character: str, state: StateAt) -> str:
    lines = [f"{one_line(character)}: {count(len(state.entries), 'entry', 'entries')} as of event #{state.at.index}"]
    for item in state.to_json()["entries"]:
        fields = ", ".join(f"{one_line(k)}: {shown(k, v)}" for k, v in sorted(item["fields"].items()))
        lines.append(f"  {one_line(item['entry']['ref'])} (#{item['point']}): {fields}")
    return "\n".join(lines) + "\n"


def render_diff(character: str, diff: HistoryDiff) -> str:
    n = len(diff.entries)
    lines = [f"{one_line(character)}: #{diff.a.index} → #{diff.b.index}: {count(n, 'entry', 'entries')} differ"]
    for e in diff.entries:
        lines.append(f"  {one_line(e.key.ref)}: {_changes(e.changes)}")
    return "\n".join(lines) + "\n"


def render_moved(character: str, moved: list[MovedView]) -> str:
    if not moved:
        return f"{one_line(character)}: every view agrees with its last applied event\n"
    lines = [f"{one_line(character)}: {count(len(moved), 'view')} moved without an event"]
    for m in moved:
        lines.append(f"  {m.severity}: {m.code}: {one_line(m.message)}")
        lines.append(f"    {_changes(m.differences)}")
    return "\n".join(lines) + "\n"
