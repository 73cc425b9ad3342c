"""``memory-inspector cloud``: a cloud-save unit verified, and what a download of it would do.

    memory-inspector cloud UNIT [--character NAME] [--against LOCAL [--characters FILE]] [--json] [--redact]

UNIT is a cloud-save root, one unit ``cloudsave/characters/<name>/``, the legacy
``cloudsave/memory/<name>/``, a download backup or a zip of any of these (:mod:`journal.cloudsave`).
``--against LOCAL`` (a memory root, character folder or zip) says which files a download replaces,
creates and deletes, and what the memory server's next start does afterwards, by the server model
of ``check`` run on a scratch copy. Nothing is written to UNIT or LOCAL.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from inspector.core import cli_args, output
from inspector.core.cloud_report import KINDS, SCHEMA, document, preview_lines, unit_lines, worst
from inspector.core.output import ExitCode
from inspector.core.redaction import redact_document, redact_message
from inspector.core.text import count
from journal.cloudsave import DownloadPreview, UnitCheck, open_cloud, preview_download, verify_input
from journal.diagnosis import DiagnosisInputError
from journal.errors import SeveralCharactersError
from journal.inputs import resolve

PROG = "memory-inspector cloud"


def add_parser(subparsers: Any) -> None:
    """Register ``cloud`` on the subcommands' parser (:mod:`inspector.cli` assembles them)."""
    p = subparsers.add_parser(
        "cloud",
        help="verify a cloud-save unit, and what a download of it would do",
        description="Verify a cloud-save unit (fingerprint, manifest, layouts, fence, tombstone) and, with "
        "--against, say what downloading it into a local character folder would do. Read-only.",
        epilog="exit codes: 0 nothing to report (with --against: the download changes nothing); 1 findings (with "
        "--against: the download changes something); 2 an input cannot be read; 130 interrupted",
    )
    p.add_argument("unit", help="cloud-save root, unit, legacy folder, download backup, or a .zip of one")
    cli_args.add_character(p, holder="UNIT")
    p.add_argument("--against", metavar="LOCAL", help="the local memory root or character folder a download fills")
    p.add_argument("--characters", metavar="FILE", help="LOCAL's characters.json (the profile is compared)")
    cli_args.add_json(p, schema=SCHEMA)
    cli_args.add_redact(p)
    p.set_defaults(run=run_cloud)


def _pick(checks: list[UnitCheck], character: str | None, path: str) -> list[UnitCheck]:
    if character is not None:
        picked = [c for c in checks if c.unit.name == character]
        if not picked:
            raise DiagnosisInputError(f"{path}: no character named {character!r} in this cloud save")
        return picked
    return checks


def run_cloud(args: argparse.Namespace) -> int:
    """Run the command for parsed ``args``; returns the exit code."""
    preview: DownloadPreview | None = None
    try:
        with open_cloud(args.unit) as opened:
            checks = _pick(verify_input(opened.found), args.character, args.unit)
            if args.against is not None:
                preview = _preview(SeveralCharactersError.only(args.unit, checks), args)
            doc = document(opened, checks, preview, args.against, redact=args.redact)
            lines = _human(opened.path, opened.found.kind, checks, preview, args.against)
    except DiagnosisInputError as exc:
        return output.error(PROG, str(exc))
    except KeyboardInterrupt:
        return output.interrupted(PROG)
    if args.json:
        output.write_json(sys.stdout, redact_document(doc) if args.redact else doc)
    else:
        for line in lines:
            print(redact_message(line) if args.redact else line)
    if preview is not None:
        return ExitCode.of(not preview.plan.changes_something)
    return ExitCode.of(worst(checks) in ("none", "info"))


def _preview(check: UnitCheck, args: argparse.Namespace) -> DownloadPreview:
    with resolve(args.against, characters_file=args.characters) as local:
        entries = local.characters
        if len(entries) > 1:
            entries = [e for e in entries if e.name == check.unit.name]
        if len(entries) != 1 or entries[0].refusal is not None:
            raise DiagnosisInputError(
                f"{args.against}: no character folder {check.unit.name!r} to download into (give its folder)"
            )
        folder = Path(entries[0].path)
        return preview_download(check, folder, name=check.unit.name, characters_file=local.characters_file)


def _human(
    path: str, kind: str, checks: list[UnitCheck], preview: DownloadPreview | None, local: str | None
) -> list[str]:
    lines = [f"{PROG}: {path} ({KINDS.get(kind, kind)}, {count(len(checks), 'character')})"]
    for c in checks:
        lines.extend(unit_lines(c))
    if preview is not None:
        lines.extend(preview_lines(preview, local or ""))
    return lines
