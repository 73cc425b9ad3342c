"""Command-line entry point ``memory-inspector``: the window by default, or a headless subcommand.

    memory-inspector [PATH] [--redact] [--screenshot OUT.png] [--size WxH]     the window (sample data without PATH)
    memory-inspector check PATH [--character NAME] [--json] [--all-events] [--redact]
    memory-inspector replay PATH [--character NAME] [--dry-run] [--until EVENT_ID] [--repair-orphans]
                            [--park EVENT_ID] [--repair-journal] [--yes] [--backup-dir DIR]
                            [--i-know-the-server-is-stopped]
    memory-inspector restore BACKUP [--to DIR] [--dry-run] [--yes]
    memory-inspector history PATH [--character NAME] [--entry ENTRY [--entity KEY]] [--at EVENT]
                            [--between EVENT_A EVENT_B] [--json] [--redact]
    memory-inspector bundle PATH -o CASE.zip [--character NAME] [--no-redact] [--force] [--screenshots]
                            | --guess TEXT
    memory-inspector diff A B [--character NAME] [--json] [--redact]
    memory-inspector cloud UNIT [--character NAME] [--against LOCAL [--characters FILE]] [--json] [--redact]

Each command's module owns its parser (its ``add_parser(subparsers)`` registers it, with
``set_defaults(run=...)``); this module only assembles them, and only imports the module of the
command it runs. Exit codes: :class:`inspector.core.output.ExitCode`.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Sequence

from inspector import __version__
from inspector.core import cli_args
from inspector.core.output import ExitCode
from inspector.core.text import one_line

#: Each subcommand and the module that owns its parser and runs it.
COMMANDS = {
    "check": "inspector.check_cmd",
    "replay": "inspector.replay_cmd",
    "restore": "inspector.replay_cmd",
    "history": "inspector.history_cmd",
    "bundle": "inspector.bundle_cmd",
    "diff": "inspector.diff_cmd",
    "chat": "inspector.chat_cmd",
    "cloud": "inspector.cloud_cmd",
}

SUBCOMMANDS = tuple(COMMANDS)


class _Parser(argparse.ArgumentParser):
    """argparse that exits with 2 and a one-line reason (its default, made explicit)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(ExitCode.BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_gui_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="memory-inspector",
        description="Inspect, diagnose and safely replay AI-companion memory folders. "
        f"Subcommands for scripts: {', '.join(SUBCOMMANDS)} (see 'memory-inspector check --help').",
    )
    p.add_argument("--version", action="version", version=f"memory-inspector {__version__}")
    cli_args.add_path(p, note="default: bundled sample", optional=True)
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


def build_command_parser(*commands: str) -> argparse.ArgumentParser:
    """The parser of the subcommands: each registered by its own module (only those of
    ``commands`` when given, so that running one imports only its module)."""
    p = _Parser(prog="memory-inspector", description="Headless commands for terminals and scripts.")
    subparsers = p.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for module in dict.fromkeys(COMMANDS[c] for c in commands or SUBCOMMANDS):
        importlib.import_module(module).add_parser(subparsers)
    return p


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in parser._actions:  # argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            sub: argparse.ArgumentParser = action.choices[command]
            return sub
    raise ValueError(command)


def command_help(command: str) -> str:
    """The ``--help`` text of one subcommand."""
    return _subparser(build_command_parser(command), command).format_help()


def misspelt_command(word: str) -> str | None:
    """The subcommand ``word`` is a near miss of (``chek`` → ``check``), or ``None``: a word that
    is a subcommand, an option, or a path that exists is none (``memory-inspector chek`` opens an
    existing folder ``chek`` in the window)."""
    if word in COMMANDS or word.startswith("-") or os.path.lexists(word):
        return None
    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1)
    return close[0] if close else None


def main(argv: Sequence[str] | None = None, *, exit_now: bool = False) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit code.

    ``exit_now``: this is the whole program (see :func:`run`), so ``check`` may end the process
    itself once its output is written, rather than spend time freeing what it built.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in COMMANDS:
        parser = build_command_parser(args_list[0])
        args, extra = parser.parse_known_args(args_list)
        if extra:  # said by the subcommand's parser, as argparse says its other errors
            _subparser(parser, args_list[0]).error(f"unrecognized arguments: {' '.join(extra)}")
        args.exit_now = exit_now
        return int(args.run(args))
    if args_list and (guess := misspelt_command(args_list[0])) is not None:
        print(
            f"memory-inspector: error: no command or path {one_line(repr(args_list[0]))} (did you mean {guess!r}?)",
            file=sys.stderr,
        )
        return ExitCode.BAD_INPUT
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
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        # Nothing more can be written; point stdout at /dev/null so the exit's flush is silent too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = ExitCode.BROKEN_PIPE
    sys.exit(int(code))


if __name__ == "__main__":
    run()
