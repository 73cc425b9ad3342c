"""``memory-inspector replay`` and ``memory-inspector restore``: guarded replay from a terminal.

Both print what they would do first (the same text the window shows), then ask on the terminal
unless ``--yes`` was given; when stdin is not a terminal they refuse instead of guessing.

``restore`` writes only into a folder named from outside the backup: ``--to DIR``, or the one the
index of backups recorded when the backup was taken (see
:func:`inspector.core.replay.restore_target`).

``replay --park EVENT_ID`` goes past a held event a person has decided about: the same guards, a
plan showing what replaying that entry's held events changes, then the decision recorded in
``events_parked.ndjson`` and in the report. An event replay does not hold is refused (exit 2,
nothing written).

``replay --repair-journal`` repairs a journal the memory server cannot read (bytes that are not
UTF-8): the same guards, a plan listing each fragment (where, how long, never its text) and what is
kept, then the fragments moved into ``events.ndjson.damaged`` and the journal rewritten atomically
(:mod:`journal.repair`). Nothing is replayed.

Exit codes: 0 everything planned was applied (or restored, or nothing was pending); 1 replay
holds events it cannot apply, was cancelled or declined, or a guard refused (restore: the backup
is not vouched for by the index); 2 bad input (restore: the folder cannot take the backup; replay:
an empty or unknown event id, an event that is not held given to ``--park``, or an
``events_parked.ndjson`` / ``events_applied_set.json`` that cannot be read).

Both drive the one flow of :mod:`inspector.core.replay.flow` (the window drives the same one);
this module only answers its questions on the terminal and prints.

Everything printed is escaped as ``check`` escapes it (:func:`inspector.core.text.one_line`, its
one home): ids, types and paths come from the folder or the command line, and control characters
in them must not reach the terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from inspector.core import cli_args, output
from inspector.core.output import ExitCode, Meter
from inspector.core.prompter import ASK_APPLY, ASK_RECENT_WRITES, ASK_RESTORE, Question
from inspector.core.replay.flow import (
    BadInputError,
    Control,
    ReplayRequest,
    Review,
    Scope,
    Work,
    run_guarded_replay,
    run_guarded_restore,
)
from inspector.core.text import one_line

#: Questions that ``--yes`` answers; any other question (the offer to extract a zip) is only
#: ever answered by a person.
_CONFIRMATIONS = (ASK_APPLY, ASK_RECENT_WRITES, ASK_RESTORE)


class NotATerminalError(Exception):
    """A confirmation was needed, ``--yes`` was not given and stdin is not a terminal."""


class TerminalPrompter:
    """The :class:`~inspector.core.prompter.Prompter` of a terminal; ``--yes`` answers the
    confirmations. It never opens anything, so the choosers answer ``None``.

    Args:
        assume_yes: answer ``confirm_apply`` / ``recent_writes`` / ``confirm_restore`` with yes.
        stdin, stdout: the streams (default: ``sys.stdin`` / ``sys.stdout`` at call time).
    """

    def __init__(self, *, assume_yes: bool, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.assume_yes = assume_yes
        self._stdin = stdin
        self._stdout = stdout

    @property
    def stdin(self) -> TextIO:
        return self._stdin or sys.stdin

    @property
    def stdout(self) -> TextIO:
        return self._stdout or sys.stdout

    def _interactive(self) -> bool:
        try:
            return bool(self.stdin.isatty())
        except (AttributeError, ValueError, OSError):
            return False

    def ask(self, question: Question) -> bool:
        """Print the question and read y/N (``--yes`` answers confirmations without reading)."""
        if self.assume_yes and question.key in _CONFIRMATIONS:
            print(f"{_escaped(question.text)} [y/N] yes (--yes)", file=self.stdout)
            return True
        if not self._interactive():
            if question.key in _CONFIRMATIONS:
                raise NotATerminalError(
                    "stdin is not a terminal, so nobody can confirm: nothing was changed "
                    "(pass --yes to confirm without asking, or --dry-run to only see the plan)"
                )
            return False
        print(f"{_escaped(question.text)} [y/N] ", end="", file=self.stdout, flush=True)
        answer = self.stdin.readline()
        return answer.strip().lower() in ("y", "yes")

    def notify(self, text: str, *, title: str = "", level: str = "info") -> None:
        print(_escaped(text), file=self.stdout)

    def review(self, review: Review) -> bool:
        """The plan was printed already: a plan with work is confirmed like any question; one
        without has nothing to confirm."""
        return review.asked(self.ask)

    def choose_backup(self, backups: Any, start: Path) -> Path | None:
        return None  # the command line names the backup

    def show_result(self, run: Any) -> None:
        for line in run.lines:
            print(_escaped(line), file=self.stdout)

    def choose_folder(self, start: str) -> str | None:
        return None

    def choose_zip(self, start: str) -> str | None:
        return None

    def ask_event_id(self) -> str | None:
        return None

    def choose_save_path(self, title: str, start: str, filters: Sequence[str]) -> str | None:
        return None

    def show_error(self, title: str, message: str) -> None:
        print(_escaped(f"{title}: {message}"), file=sys.stderr)


def _escaped(text: str) -> str:
    """``text`` with each line escaped (:func:`inspector.core.text.one_line`); lines stay lines."""
    return "\n".join(one_line(line) for line in text.split("\n"))


def _err(command: str, message: str) -> None:
    """One line on stderr: the message escaped, a newline in it included."""
    print(f"memory-inspector {command}: {one_line(message)}", file=sys.stderr)


@contextlib.contextmanager
def _cancel_on_interrupt(cancel: threading.Event) -> Iterator[None]:
    """The first Ctrl-C cancels between events (the folder stays consistent); restore the handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum: int, _frame: object) -> None:
        if not cancel.is_set():
            print("\ncancelling (a plan at once, an apply after the current event)…", file=sys.stderr)
        cancel.set()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class TerminalProgress:
    """Progress on a terminal's stderr, the one meter of every command
    (:class:`inspector.core.output.Meter`): while the plan reads the journal,
    ``memory-inspector replay: planning, reading the journal 45% · 180 of 400 MiB``, cleared
    before the plan is printed; while applying, ``memory-inspector replay: applying 30% · 3 of 10
    events``, cleared before the result is printed. Nothing when stderr is not a terminal.

    Args:
        stream: where the line goes (default: ``sys.stderr`` at call time).
        tty: whether it is a terminal (default: ask the stream).
    """

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None) -> None:
        self._stream = stream
        self.tty = output.is_terminal(self.stream) if tty is None else tty
        self.meter: Meter | None = None

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stderr

    def begin(self, work: Work) -> None:
        self.end(work)
        if self.tty:
            reading = work.unit == "bytes"
            label = "planning, reading the journal" if reading else "applying"
            self.meter = Meter(self.stream, label=f"memory-inspector replay: {label}", unit=work.unit)

    def end(self, work: Work) -> None:
        output.clear(self.meter)
        self.meter = None

    def __call__(self, done: int, total: int) -> None:
        if self.meter is not None:
            self.meter(done, total)


def add_parser(subparsers: Any) -> None:
    """Register ``replay`` and ``restore`` on the subcommands' parser (:mod:`inspector.cli`
    assembles them)."""
    p = subparsers.add_parser(
        "replay",
        help="guarded replay of pending events (or --repair-journal)",
        description="Guarded replay of pending events, or (--repair-journal) a guarded repair of a journal the "
        "memory server cannot read.",
        epilog="exit codes: 0 everything planned was applied (or nothing was pending); 1 events held, cancelled "
        "(Ctrl+C), declined or refused by a guard; 2 bad input",
    )
    _add_replay_arguments(p)
    p.set_defaults(run=run_replay)
    p = subparsers.add_parser(
        "restore",
        help="put a replay backup back",
        description="Put a replay backup back.",
        epilog="exit codes: 0 restored; 1 declined, or the backup is not vouched for by the index; 2 the folder "
        "cannot take the backup, or bad arguments; 130 interrupted",
    )
    p.add_argument("backup", help="a backup folder written by replay")
    p.add_argument(
        "--to",
        metavar="DIR",
        help="the character folder to restore into (default: the one the index of backups recorded)",
    )
    p.add_argument("--dry-run", action="store_true", help="compare and print what would change; change nothing")
    cli_args.add_yes(p)
    p.set_defaults(run=run_restore)


def _add_replay_arguments(p: argparse.ArgumentParser) -> None:
    cli_args.add_path(p, note="a .zip export is extracted first, if you agree")
    cli_args.add_character(p)
    p.add_argument("--dry-run", action="store_true", help="print the plan and diff; change nothing")
    p.add_argument("--until", metavar="EVENT_ID", help="replay up to and including this event")
    p.add_argument("--repair-orphans", action="store_true", help="re-apply orphaned archive events")
    p.add_argument(
        "--park",
        metavar="EVENT_ID",
        help="go past this held event for good: it is never applied (recorded in events_parked.ndjson)",
    )
    p.add_argument(
        "--repair-journal",
        action="store_true",
        help="repair a journal the memory server cannot read: move its bytes that are not UTF-8 (torn appends) "
        "into events.ndjson.damaged, keeping every record byte for byte; nothing is replayed",
    )
    cli_args.add_yes(p)
    p.add_argument("--backup-dir", metavar="DIR", help="where backups and reports go")
    p.add_argument(
        "--i-know-the-server-is-stopped",
        dest="override_server_lock",
        action="store_true",
        help="replay even though the launcher lock is held (recorded in the report)",
    )


def run_replay(args: argparse.Namespace) -> int:
    """``memory-inspector replay PATH [--character NAME] ...`` (see :mod:`inspector.cli`)."""
    park = getattr(args, "park", None)
    until = args.until
    repair_journal = bool(getattr(args, "repair_journal", False))
    given = (until is not None, args.repair_orphans, park is not None, repair_journal)
    if sum(1 for g in given if g) > 1:
        _err("replay", "--until, --repair-orphans, --park and --repair-journal cannot be combined")
        return ExitCode.BAD_INPUT
    for option, value in (("--park", park), ("--until", until)):
        if value == "":  # not a plain replay: an empty id names no event
            _err("replay", f"{option} needs an event id (it was empty); nothing was written")
            return ExitCode.BAD_INPUT
    if repair_journal:
        scope = Scope("repair_journal")
    elif park is not None:
        scope = Scope("park", park=park)
    elif args.repair_orphans:
        scope = Scope("repair")
    elif until is not None:
        scope = Scope("until", until)
    else:
        scope = Scope()
    request = ReplayRequest(
        path=Path(args.path).expanduser(),
        character=args.character,
        scope=scope,
        backup_root=Path(args.backup_dir).expanduser() if args.backup_dir else None,
        override_server_lock=bool(getattr(args, "override_server_lock", False)),
        dry_run=bool(args.dry_run),
    )
    prompter = TerminalPrompter(assume_yes=bool(args.yes))
    cancel = threading.Event()
    progress = TerminalProgress()
    control = Control(lambda: not cancel.is_set(), progress, progress.begin, progress.end)
    try:
        with _cancel_on_interrupt(cancel):
            run = run_guarded_replay(request, prompter, control=control)
    except BadInputError as exc:
        _err("replay", str(exc))
        return ExitCode.BAD_INPUT
    except NotATerminalError as exc:
        _err("replay", str(exc))
        return ExitCode.PROBLEMS
    for line in run.lines:
        print(_escaped(line))
    return ExitCode(run.exit_code)


def run_restore(args: argparse.Namespace) -> int:
    """``memory-inspector restore BACKUP [--to DIR] [--dry-run] [--yes]`` (see :mod:`inspector.cli`).

    ``args.to`` (optional): the character folder to restore into; without it, the folder the index
    of backups recorded for this backup.
    """
    prompter = TerminalPrompter(assume_yes=bool(args.yes))
    to = getattr(args, "to", None)
    try:
        run = run_guarded_restore(
            Path(args.backup).expanduser(),
            prompter,
            to=Path(to).expanduser() if to else None,
            dry_run=bool(getattr(args, "dry_run", False)),
        )
    except BadInputError as exc:
        _err("restore", str(exc))
        return ExitCode.BAD_INPUT
    except NotATerminalError as exc:
        _err("restore", str(exc))
        return ExitCode.PROBLEMS
    for line in run.lines:
        print(_escaped(line))
    return ExitCode(run.exit_code)
