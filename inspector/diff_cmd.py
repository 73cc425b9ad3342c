"""``memory-inspector diff A B``: compare two exports of one character (both only read)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from inspector.core import output
from inspector.core.compare import Comparison, compare_paths
from inspector.core.output import ExitCode
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
        epilog="exit codes: 0 identical; 1 differences; 2 bad input",
    )
    p.add_argument("a", help="the first export: memory root, character folder or .zip")
    p.add_argument("b", help="the second export")
    p.add_argument("--character", metavar="NAME", help="the character (needed when an export holds several)")
    p.add_argument("--json", action="store_true", help="machine-readable output (schema 1, see README)")
    p.set_defaults(run=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    """Exit codes: 0 identical, 1 differences, 2 bad input."""
    try:
        result = compare_paths(args.a, args.b, character=args.character)
    except DiagnosisInputError as exc:
        return output.error(PROG, str(exc))
    if args.json:
        output.write_json(sys.stdout, result.to_json())
    else:
        for line in human(result):
            print(line)
    return ExitCode.of(result.identical)


def _value(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return one_line(text if len(text) <= 80 else text[:77] + "…")


def human(c: Comparison) -> Iterator[str]:
    """The comparison for people, one line at a time."""
    j = c.journal
    yield f"{PROG}: {one_line(c.character)}: A = {one_line(c.a)}, B = {one_line(c.b)}"
    if c.identical:
        yield "identical"
        return
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
    for name, only in (("A", j.only_a), ("B", j.only_b)):
        if only:
            yield f"only in {name}  {count(len(only), 'event')}"
            for e in only[:SHOWN]:
                yield f"  #{e.index:<7} line {e.line:<7} {one_line(e.type)}  {one_line(e.event_id)}"
            if len(only) > SHOWN:
                yield f"  … and {len(only) - SHOWN:,} more"
    for p in c.view_problems:
        yield f"view {p.side.upper()} {p.file}: {one_line(p.message)} (not compared)"
    if c.entries:
        yield f"views  {count(len(c.entries), 'entry', 'entries')} differ"
        for e in c.entries[:SHOWN * 5]:
            where = f" → {e.shard}" if e.shard else ""
            yield f"  {e.view:<11} {one_line(e.entry)}  {e.change}{where}"
            for f in e.fields:
                yield f"      {one_line(f.field)}: {_value(f.before)} → {_value(f.after)}"
    o = c.outbox
    if not o.identical:
        yield (
            f"outbox  {count(len(o.added), 'operation')} added, {len(o.finished)} finished, "
            f"{len(o.dead_lettered)} dead-lettered"
        )
