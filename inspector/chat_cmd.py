"""``memory-inspector chat``: the chat turns stored beside a character's journal (read-only).

    memory-inspector chat PATH [--character NAME] --around EVENT [--minutes N] [--json] [--show-text] [--redact]
    memory-inspector chat PATH [--character NAME] --between T1 T2 [--json] [--show-text] [--redact]

The memory server stores every chat turn in ``time_indexed.db`` (cloudsave-format §6). Nothing links
a turn to an event but the time, so ``--around EVENT`` shows the turns from N minutes before the
event's ``ts`` to one minute after it (events are written after the turns that caused them). The db
is read from a private copy (:mod:`journal.chat`): never opened read-write, nothing written.

What the text for people shows of a message is the CLI's one privacy rule
(:func:`inspector.core.output.value_text`): its kind and size, unless ``--show-text``; ``--json``
has the words; ``--redact`` applies the window's redaction to them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inspector.core import cli_args, output
from inspector.core.output import ExitCode
from inspector.core.redaction import redact_document, redact_message
from inspector.core.text import count, one_line
from journal.chat import DEFAULT_MINUTES, ChatError, ChatRead, parse_naive_time, read_chat, window_around
from journal.chat.turns import NO_LINK, db_of
from journal.diagnosis import DiagnosisInputError
from journal.diagnosis.eventlist import find_events
from journal.diagnosis.lookup import CharacterJournal, character_journal

PROG = "memory-inspector chat"
SCHEMA = 1


def add_parser(subparsers: Any) -> None:
    """Register ``chat`` on the subcommands' parser (:mod:`inspector.cli` assembles them)."""
    p = subparsers.add_parser(
        "chat",
        help="the chat turns around an event (time_indexed.db)",
        description="The chat turns the memory server stored (time_indexed.db), around an event's time or between "
        "two times. Matched by time only: no identifier links a turn to an event. Read-only.",
        epilog="exit codes: 0 written; 1 the chat history cannot be read; 2 bad input (PATH, character, event or "
        "time not found, bad arguments); 130 interrupted",
    )
    cli_args.add_path(p)
    cli_args.add_character(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--around", metavar="EVENT", help="an event (#index, id or id prefix): the turns before it")
    which.add_argument("--between", nargs=2, metavar=("T1", "T2"), help="two times (2026-05-01T09:00, or a space)")
    p.add_argument(
        "--minutes",
        type=_minutes,
        default=DEFAULT_MINUTES,
        help=f"with --around: how many minutes before the event (default {DEFAULT_MINUTES}); one after it is shown",
    )
    cli_args.add_json(p, schema=SCHEMA)
    p.add_argument(
        "--show-text", action="store_true", help="print the messages' words (by default: their size; not with --redact)"
    )
    cli_args.add_redact(p)
    p.set_defaults(run=run_chat)


def _minutes(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of minutes: {text!r}") from None
    if not 0 <= n <= 7 * 24 * 60:
        raise argparse.ArgumentTypeError(f"{n}: between 0 and {7 * 24 * 60} minutes")
    return n


def run_chat(args: argparse.Namespace) -> int:
    """Run the command for parsed ``args``; returns the exit code."""
    try:
        # Only the journal's events are needed (to find the one --around names), not a diagnosis.
        with character_journal(args.path, character=args.character, read_events=args.around is not None) as c:
            event, start, end = _window(c, args)
            read = read_chat(db_of(c.path), start=start, end=end, folder=c.path)
    except DiagnosisInputError as exc:
        return output.error(PROG, str(exc))
    except ChatError as exc:
        return output.error(PROG, str(exc), ExitCode.PROBLEMS)
    except KeyboardInterrupt:
        return output.interrupted(PROG)
    if args.json:
        doc = {"schema": SCHEMA, "character": c.name, "event": event, **read.to_json()}
        output.write_json(sys.stdout, redact_document(doc) if args.redact else doc)
    else:
        for line in human(c.name, event, read, show_text=args.show_text and not args.redact):
            print(redact_message(line) if args.redact else line)
    return ExitCode.OK


def _window(c: CharacterJournal, args: argparse.Namespace) -> tuple[dict[str, Any] | None, Any, Any]:
    """The event asked about (``None`` with ``--between``) and the window of time."""
    if args.between is not None:
        t1, t2 = (parse_naive_time(t) for t in args.between)
        for given, parsed in zip(args.between, (t1, t2), strict=True):
            if parsed is None:
                raise DiagnosisInputError(f"not a time: {given!r} (e.g. 2026-05-01T09:00:00)")
        return None, min(t1, t2), max(t1, t2)  # type: ignore[type-var]
    found = find_events(c.events, args.around)
    if not found:
        raise DiagnosisInputError(f"no event {args.around!r} in {c.name!r}")
    if len(found) > 1:
        ids = ", ".join(c.events[i].event_id for i in found[:5])
        raise DiagnosisInputError(f"{args.around!r} names {len(found)} events ({ids}, …): give more of the id")
    e = c.events[found[0]]
    try:
        start, end = window_around(e.ts, args.minutes)
    except ChatError:
        raise DiagnosisInputError(f"event #{found[0]} has no usable ts ({e.ts!r})") from None
    return {"index": found[0], "event_id": e.event_id, "type": e.type, "ts": e.ts}, start, end


def human(name: str, event: dict[str, Any] | None, read: ChatRead, *, show_text: bool) -> list[str]:
    """The reading for people, one line per turn."""
    lines = [f"{PROG}: {one_line(name)}: {read.db}"]
    if event is not None:
        lines.append(f"  around event #{event['index']} {one_line(event['type'])} ({event['ts']})")
    lines.append(f"  from {read.start} to {read.end}: {count(len(read.turns), 'turn')} of {read.rows:,} rows")
    lines.append(f"  note: {NO_LINK}")
    if read.method == "copy":
        lines.append("  note: read from a private copy of the db and its -journal (the db was being written)")
    if read.untimed:
        lines.append(f"  note: {count(read.untimed, 'row')} with a time that cannot be parsed, not shown")
    for t in read.turns:
        words = (t.text or "") if show_text else output.value_text(t.text)
        problem = f"  [{t.problem}]" if t.problem else ""
        lines.append(f"    {t.stored_time:<26}  {t.role:<7}  {one_line(words)}{one_line(problem)}")
    return lines
