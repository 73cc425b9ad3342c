"""``memory-inspector diff A B``: compare two exports of one character (both only read)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from inspector.core import cli_args, output
from inspector.core.compare import COMPARE_SCHEMA, Comparison, SideStates, ValueChange, compare_paths
from inspector.core.compare.tree import json_type, plain
from inspector.core.output import ExitCode
from inspector.core.redaction import redact_document, redact_message
from inspector.core.text import count, one_line
from journal.diagnosis import DiagnosisInputError

PROG = "memory-inspector diff"

#: At most this many events / entries per list are printed for people (``--json`` has them all).
SHOWN = 20


def add_parser(subparsers: Any) -> None:
    """Register ``diff`` on the subcommands' parser (:mod:`inspector.cli` assembles them)."""
    p = subparsers.add_parser(
        "diff",
        help="compare two exports of a character",
        description="Compare two exports of a character (folders or zips; both only read).",
        epilog="exit codes: 0 identical; 1 differences; 2 bad input, or a side not read whole (refused or unreadable)",
    )
    cli_args.add_path(p, "a", role="the first export")
    cli_args.add_path(p, "b", role="the second export")
    cli_args.add_character(p, holder="an export")
    cli_args.add_json(p, schema=COMPARE_SCHEMA)
    cli_args.add_redact(p)
    p.set_defaults(run=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    """Exit codes: 0 identical, 1 differences, 2 bad input (a side that could not be read whole
    or had refused input, too: what was not read cannot be called equal)."""
    meters: list[output.Meter] = []

    def meter_of(side: str) -> output.Meter | None:
        for m in meters:
            output.clear(m)  # A's line is done when B's read starts
        m = output.meter(f"{PROG}: reading {side}")
        if m is not None:
            meters.append(m)
        return m

    try:
        try:
            result = compare_paths(args.a, args.b, character=args.character, progress=meter_of)
        finally:
            for m in meters:
                output.clear(m)
    except DiagnosisInputError as exc:
        return output.error(PROG, str(exc))
    except KeyboardInterrupt:
        return output.interrupted(PROG)
    if args.json:
        doc = result.to_json()
        output.write_json(sys.stdout, redact_document(doc) if args.redact else doc)
    else:
        for line in human(result):
            print(redact_message(line) if args.redact else line)
    return ExitCode.BAD_INPUT if result.status == "unreadable" else ExitCode.of(result.identical)


def _value(v: Any) -> str:
    text = output.value_text(plain(v))  # the CLI's one privacy rule: no text of the folder is printed
    return one_line(text if len(text) <= 80 else text[:77] + "…")


def _change(c: ValueChange) -> str:
    """One difference at a field path, for people (a type change names both types)."""
    where = one_line(c.path) if c.path else "(the whole value)"
    if c.kind == "added":
        return f"{where}: only in B: {_value(c.after)}"
    if c.kind == "removed":
        return f"{where}: only in A: {_value(c.before)}"
    kinds = f" ({json_type(c.before)} → {json_type(c.after)})" if c.kind == "type" else ""
    return f"{where}: {_value(c.before)} → {_value(c.after)}{kinds}"


def _changes(changes: tuple[ValueChange, ...], total: int, indent: str) -> Iterator[str]:
    for c in changes[:SHOWN]:
        yield f"{indent}{_change(c)}"
    if total > min(len(changes), SHOWN):
        yield f"{indent}… and {total - min(len(changes), SHOWN):,} more"


def _states(name: str, s: SideStates) -> Iterator[str]:
    counts = ", ".join(f"{n:,} {state}" for state, n in s.counts.items() if n and state != "defects")
    blocked = f"; blocked at #{s.blocked.index} ({s.blocked_reason})" if s.blocked is not None else ""
    yield f"states {name}  {counts or 'no events'}{blocked}"
    for p in s.parked[:SHOWN]:
        where = (
            f"#{p.index} {p.state}" + (f" ({p.reason})" if p.reason else "")
            if p.index is not None
            else "not in the journal"
        )
        yield f"  parked  {one_line(p.event_id)}: {where}"


def _journal(c: Comparison) -> Iterator[str]:
    j = c.journal
    for name, side in (("A", j.a), ("B", j.b)):
        if not side.present:
            yield f"journal {name}  none"
            continue
        where = f" at event #{side.sentinel_index}" if side.sentinel_index is not None else ""
        yield (
            f"journal {name}  {count(side.events, 'event')}, {count(len(side.damage), 'damaged line')}; "
            f"sentinel {side.sentinel_state}{where}" + (f"; {one_line(side.error)}" if side.error else "")
        )
        for d in side.damage[:SHOWN]:
            yield f"  damage  line {d.line}: {d.kind}"
    yield f"common prefix  {count(j.common_prefix, 'event')}" + (
        f"; they diverge at #{j.diverges_at}" if j.diverges_at is not None else ""
    )
    if j.changed:
        yield f"changed  {count(len(j.changed), 'event')} with the same id and another record"
        for e in j.changed[:SHOWN]:
            at = f"#{e.index_a}" if e.index_a == e.index_b else f"#{e.index_a} in A, #{e.index_b} in B"
            yield f"  {at:<8} {one_line(e.type)}  {one_line(e.event_id)}"
            yield from _changes(e.changes, e.total, "      ")
        if len(j.changed) > SHOWN:
            yield f"  … and {len(j.changed) - SHOWN:,} more"
    for name, other, damage in (("A", "B", j.damage_only_a), ("B", "A", j.damage_only_b)):
        if damage:
            yield f"damage only in {name}  {count(len(damage), 'damaged line')} that {other} does not have"
            for d in damage[:SHOWN]:
                yield f"  line {d.line}: {d.kind}"
    for name, only in (("A", j.only_a), ("B", j.only_b)):
        if only:
            yield f"only in {name}  {count(len(only), 'event')}"
            for e in only[:SHOWN]:
                yield f"  #{e.index:<7} line {e.line:<7} {one_line(e.type)}  {one_line(e.event_id)}"
            if len(only) > SHOWN:
                yield f"  … and {len(only) - SHOWN:,} more"


def human(c: Comparison) -> Iterator[str]:
    """The comparison for people, one line at a time."""
    yield f"{PROG}: {one_line(c.character)}: A = {one_line(c.a)}, B = {one_line(c.b)}"
    for p in c.problems:
        where = f"{one_line(p.file)}: " if p.file else ""
        yield f"unreadable {p.side.upper()}  {where}{one_line(p.message)} ({p.code})"
    if c.identical:
        yield "identical"
        return
    if c.journal.identical and not c.files:
        yield "no difference in what could be read; the comparison is not whole"
        return
    yield from _journal(c)
    if c.files:
        yield f"files  {count(len(c.files), 'file')} {'differs' if len(c.files) == 1 else 'differ'}"
        for f in c.files[: SHOWN * 5]:
            how = f" by {f.rule}" if f.change == "changed" else ""
            note = f" ({one_line(f.note)})" if f.note else ""
            yield f"  {one_line(f.file)}  {f.change}{how}{note}"
            yield from _changes(f.changes, f.total, "      ")
    st = c.states
    for name, side in (("A", st.a), ("B", st.b)):
        yield from _states(name, side)
    for s in st.changes[:SHOWN]:
        yield (
            f"  state  {one_line(s.event_id)}: A #{s.index_a} {s.state_a}"
            + (f" ({s.reason_a})" if s.reason_a else "")
            + f", B #{s.index_b} {s.state_b}"
            + (f" ({s.reason_b})" if s.reason_b else "")
        )
    for p in c.view_problems:
        yield f"view {p.side.upper()} {p.file}: {one_line(p.message)} (its entries are not compared)"
    if c.entries:
        yield f"views  {count(len(c.entries), 'entry', 'entries')} differ"
        for e in c.entries[: SHOWN * 5]:
            where = f" → {e.shard}" if e.shard else ""
            yield f"  {e.view:<11} {one_line(e.entry)}  {e.change}{where}"
            for fc in e.fields:
                yield f"      {one_line(fc.field)}: {_value(fc.before)} → {_value(fc.after)}"
    o = c.outbox
    if not o.identical:
        yield (
            f"outbox  {count(len(o.added), 'operation')} added, {len(o.finished)} finished, "
            f"{len(o.dead_lettered)} dead-lettered"
        )
