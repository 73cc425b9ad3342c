"""``memory-inspector check``: the headless diagnosis, for terminals and support scripts.

Exit codes: 0 when every finding is ``info``; 1 when any is ``warning`` or ``error``; 2 when PATH
cannot be read or the arguments are wrong (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from inspector.core import cli_args, output
from inspector.core.check_report import PROG, write_human, write_json
from inspector.core.output import ExitCode
from inspector.core.redaction import redact_document, redact_message
from inspector.core.text import one_line
from journal.diagnosis import (
    DiagnosisInputError,
    diagnose_path,
)
from journal.diagnosis.values import DIAGNOSIS_SCHEMA


def add_parser(subparsers: Any) -> None:
    """Register ``check`` on the subcommands' parser (:mod:`inspector.cli` assembles them)."""
    p = subparsers.add_parser(
        "check",
        help="diagnose a memory folder (read-only)",
        description="Diagnose a memory folder (read-only).",
        epilog="exit codes: 0 only info findings; 1 a warning or an error; 2 PATH unreadable, holding no "
        "character folder, or bad arguments; 130 interrupted",
    )
    cli_args.add_path(p)
    cli_args.add_only_character(p)
    cli_args.add_json(p, schema=DIAGNOSIS_SCHEMA)
    p.add_argument("--all-events", action="store_true", help="list applied events too")
    cli_args.add_redact(p)
    p.add_argument(
        "--characters",
        metavar="FILE",
        help="the memory server's characters.json (default: ../config/characters.json beside the memory root)",
    )
    p.set_defaults(run=run_check)


def run_check(args: argparse.Namespace, *, exit_now: bool | None = None) -> int:
    """Run the command for parsed ``args`` (path, character, json, all_events).

    On a terminal, a one-line meter on stderr follows a scan that takes a while. Ctrl+C stops the
    command with exit code 130 and one line on stderr (and a zip's extracted copy is removed).

    ``exit_now`` (the command run as a program; default: ``args.exit_now``, which :mod:`inspector.cli`
    sets): end the process as soon as the output is flushed, with the diagnosis still alive,
    rather than return and free it (see :func:`leave_now`).
    """
    if exit_now is None:
        exit_now = bool(getattr(args, "exit_now", False))
    meter = output.meter(f"{PROG}: reading journals")
    try:
        try:
            diagnosis = diagnose_path(
                args.path,
                character=args.character,
                progress=meter,
                characters_file=getattr(args, "characters", None),
            )
        finally:
            output.clear(meter)
        redact = bool(getattr(args, "redact", False))
        message = redact_message if redact else str
        with diagnosis:
            if args.json and redact:
                output.write_json(sys.stdout, redact_document(diagnosis.to_json(args.all_events)))
            elif args.json:
                write_json(diagnosis, sys.stdout, all_events=args.all_events)
            elif redact:
                out = output.FilteredLines(sys.stdout, redact_message)
                write_human(diagnosis, out, all_events=args.all_events)  # type: ignore[arg-type]
                out.close()
            else:
                write_human(diagnosis, sys.stdout, all_events=args.all_events)
            if args.json:
                for finding in diagnosis.findings:
                    print(f"{PROG}: {finding.severity}: {one_line(message(finding.message))}", file=sys.stderr)
            worst = diagnosis.worst_severity()
    except DiagnosisInputError as exc:
        return output.error(PROG, str(exc))
    except KeyboardInterrupt:
        return output.interrupted(PROG)
    code = ExitCode.of(worst == "info")
    if exit_now:
        leave_now(code)  # `diagnosis` is still referenced here, so it is never freed
    return code


def leave_now(code: int) -> None:
    """End the process with ``code`` at once, once stdout and stderr are flushed.

    The diagnosis of a big journal is millions of small objects: freeing them one by one at exit
    costs ~50 ms per million events, for memory the system takes back anyway. Only call this when
    nothing else is left to do (temporary folders removed, output written). If flushing fails
    (a closed pipe), it returns, so the usual exit reports the error.
    """
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return
    os._exit(code)
