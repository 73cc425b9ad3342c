"""Command-line entry point ``memory-inspector``: the window by default, or a headless subcommand.

    memory-inspector [PATH] [--redact] [--screenshot OUT.png] [--size WxH]     the window (sample data without PATH)
    memory-inspector check PATH [--character NAME] [--json] [--all-events]
    memory-inspector replay PATH [--character NAME] [--dry-run] [--until EVENT_ID] [--repair-orphans]
                            [--park EVENT_ID] [--repair-journal] [--yes] [--backup-dir DIR]
                            [--i-know-the-server-is-stopped]
    memory-inspector restore BACKUP [--to DIR] [--dry-run] [--yes]
    memory-inspector history PATH [--character NAME] [--entry ID [--entity KEY]] [--at EVENT_ID]
                            [--between EVENT_A EVENT_B] [--json]
    memory-inspector bundle PATH -o CASE.zip [--character NAME] [--no-redact] [--force] [--screenshots]
                            | --guess TEXT
    memory-inspector diff A B [--character NAME] [--json]

Exit codes of the subcommands: 0 ok, 1 problems found / refused / stopped, 2 bad input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from inspector import __version__

SUBCOMMANDS = ("check", "replay", "restore", "history", "bundle", "diff")


class _Parser(argparse.ArgumentParser):
    """argparse that exits with 2 and a one-line reason (its default, made explicit)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_gui_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="memory-inspector",
        description="Inspect, diagnose and safely replay AI-companion memory folders. "
        f"Subcommands for scripts: {', '.join(SUBCOMMANDS)} (see 'memory-inspector check --help').",
    )
    p.add_argument("--version", action="version", version=f"memory-inspector {__version__}")
    p.add_argument("path", nargs="?", help="memory root, character folder or .zip export (default: bundled sample)")
    p.add_argument("--redact", action="store_true", help="hide entry text and chat content (for screenshots)")
    p.add_argument("--screenshot", metavar="OUT.png", help="load, render the main window to a PNG and exit")
    p.add_argument(
        "--size", metavar="WxH", type=_window_size, help="the window's size, e.g. 900x600 (default: 1440x880)"
    )
    return p


def _window_size(text: str) -> tuple[int, int]:
    """``WxH`` → ``(W, H)``, each between 200 and 10000 pixels."""
    try:
        w, h = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size like 900x600: {text!r}") from None
    if not (200 <= w <= 10_000 and 200 <= h <= 10_000):
        raise argparse.ArgumentTypeError(f"{text}: width and height must be between 200 and 10000")
    return w, h


def build_command_parser(command: str) -> argparse.ArgumentParser:
    if command == "check":
        p = _Parser(
            prog="memory-inspector check",
            description="Diagnose a memory folder (read-only).",
            epilog="exit codes: 0 only info findings; 1 a warning or an error; 2 PATH unreadable, holding no "
            "character folder, or bad arguments; 130 interrupted",
        )
        p.add_argument("path", help="memory root, character folder or .zip export")
        p.add_argument("--character", metavar="NAME", help="only this character")
        p.add_argument("--json", action="store_true", help="machine-readable output (schema 1, see README)")
        p.add_argument("--all-events", action="store_true", help="list applied events too")
        p.add_argument(
            "--characters",
            metavar="FILE",
            help="the memory server's characters.json (default: ../config/characters.json beside the memory root)",
        )
        return p
    if command == "replay":
        from inspector.replay_cmd import add_replay_arguments

        p = _Parser(
            prog="memory-inspector replay",
            description="Guarded replay of pending events, or (--repair-journal) a guarded repair of a journal the "
            "memory server cannot read.",
        )
        add_replay_arguments(p)
        return p
    if command == "restore":
        p = _Parser(prog="memory-inspector restore", description="Put a replay backup back.")
        p.add_argument("backup", help="a backup folder written by replay")
        p.add_argument(
            "--to",
            metavar="DIR",
            help="the character folder to restore into (default: the one the index of backups recorded)",
        )
        p.add_argument("--dry-run", action="store_true", help="compare and print what would change; change nothing")
        p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        return p
    if command == "history":
        from inspector.history_cmd import add_arguments

        p = _Parser(
            prog="memory-inspector history",
            description="An entry's covered fields after each event; the state at an event; a diff between two "
            "events; without --entry/--at/--between, the views that moved without an event (read-only).",
            epilog="exit codes: 0 written; 1 the journal changed since it was read or cannot be read; 2 bad input "
            "(PATH, character, entry or event not found, bad arguments); 130 interrupted",
        )
        add_arguments(p)
        return p
    if command == "bundle":
        from inspector.bundle_cmd import add_arguments as add_bundle_arguments

        p = _Parser(
            prog="memory-inspector bundle",
            description="Write a redacted support bundle of a memory folder (PATH is only read).",
            epilog="exit codes: 0 written; 1 refused (CASE.zip exists, or lies inside PATH); 2 bad input; "
            "130 interrupted",
        )
        add_bundle_arguments(p)
        return p
    if command == "diff":
        from inspector.diff_cmd import add_arguments as add_diff_arguments

        p = _Parser(
            prog="memory-inspector diff",
            description="Compare two exports of a character (folders or zips; both only read).",
            epilog="exit codes: 0 identical; 1 differences; 2 bad input",
        )
        add_diff_arguments(p)
        return p
    raise ValueError(command)


def main(argv: Sequence[str] | None = None, *, exit_now: bool = False) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit code.

    ``exit_now``: this is the whole program (see :func:`run`), so ``check`` may end the process
    itself once its output is written, rather than spend time freeing what it built.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in SUBCOMMANDS:
        command = args_list[0]
        args = build_command_parser(command).parse_args(args_list[1:])
        if command == "check":
            from inspector.check_cmd import run_check

            return run_check(args, exit_now=exit_now)
        if command == "replay":
            from inspector.replay_cmd import run_replay

            return run_replay(args)
        if command == "history":
            from inspector.history_cmd import run_history

            return run_history(args)
        if command == "bundle":
            from inspector.bundle_cmd import run_bundle

            return run_bundle(args)
        if command == "diff":
            from inspector.diff_cmd import run_diff

            return run_diff(args)
        from inspector.replay_cmd import run_restore

        return run_restore(args)
    args = build_gui_parser().parse_args(args_list)
    from inspector.app import run_gui

    return run_gui(args.path, redact=args.redact, screenshot=args.screenshot, size=args.size)


def run() -> None:
    """The ``memory-inspector`` program (console script and ``python -m inspector``).

    Ctrl+C anywhere a command does not handle it itself ends the program with 130 and one line.
    A reader that stops early (``check ... | head``) ends it quietly with 141, as a shell tool does.
    """
    try:
        code = main(exit_now=True)
    except KeyboardInterrupt:
        print("\nmemory-inspector: interrupted", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        # Nothing more can be written; point stdout at /dev/null so the exit's flush is silent too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 141
    sys.exit(code)


if __name__ == "__main__":
    run()
