"""The arguments several commands take, each declared once with its one help text.

Every command module still owns its parser (``add_parser(subparsers)``, :mod:`inspector.cli`
assembles them); what a PATH may be, how ``--character`` picks a character, what ``--json`` is and
what ``--redact`` hides are worded here, so that ``check --help`` and ``diff --help`` cannot drift
apart. Each adder takes only what is the command's own: the name of its positional, its JSON
schema number, a note on what a command does with a zip.
"""

from __future__ import annotations

import argparse

#: What a PATH given to a command may be (:func:`journal.inputs.resolve` reads each of them).
PATH_KINDS = "memory root, character folder or .zip export"

#: What ``--redact`` does in every command that prints text (:mod:`inspector.core.redaction`):
#: ``--json`` through ``redact_document``, the lines for people through ``redact_message``.
REDACT_HELP = "the window's redaction: text as tokens in --json; digests and damaged lines' previews hidden in messages"


def add_path(
    p: argparse.ArgumentParser,
    name: str = "path",
    *,
    role: str | None = None,
    note: str | None = None,
    optional: bool = False,
) -> None:
    """The positional PATH.

    Args:
        p: the command's parser.
        name: the positional's name (``a`` and ``b`` for ``diff``).
        role: what this PATH is to the command, said before its kinds (``the first export``).
        note: what the command does with it, said after its kinds (``not needed with --guess``).
        optional: PATH may be left out (the note says what happens then).
    """
    text = f"{role}: {PATH_KINDS}" if role else PATH_KINDS
    if note:
        text += f" ({note})"
    if optional:
        p.add_argument(name, nargs="?", help=text)
    else:
        p.add_argument(name, help=text)


def add_character(p: argparse.ArgumentParser, *, holder: str = "PATH") -> None:
    """``--character NAME`` for a command that reads one character: needed only when ``holder``
    (its input, as the help names it) holds several."""
    p.add_argument("--character", metavar="NAME", help=f"the character (needed when {holder} holds several)")


def add_only_character(p: argparse.ArgumentParser) -> None:
    """``--character NAME`` for a command that reads every character of PATH unless told one."""
    p.add_argument("--character", metavar="NAME", help="only this character (default: every character of PATH)")


def add_json(p: argparse.ArgumentParser, *, schema: int) -> None:
    """``--json``: the command's document, in its ``schema`` (each is described in the README)."""
    p.add_argument("--json", action="store_true", help=f"machine-readable output (schema {schema}, see README)")


def add_redact(p: argparse.ArgumentParser) -> None:
    """``--redact``: the window's redaction of what the command prints (:data:`REDACT_HELP`)."""
    p.add_argument("--redact", action="store_true", help=REDACT_HELP)


def add_yes(p: argparse.ArgumentParser) -> None:
    """``--yes``: the guarded commands' questions answered yes."""
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
