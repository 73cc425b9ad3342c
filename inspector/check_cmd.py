"""``memory-inspector check``: the headless diagnosis, for terminals and support scripts.

Exit codes: 0 when every finding is ``info``; 1 when any is ``warning`` or ``error``; 2 when PATH
cannot be read or the arguments are wrong (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

from inspector.core.check_report import PROG, write_human, write_json
from inspector.core.text import one_line
from journal.diagnosis import (
    DiagnosisInputError,
    diagnose_path,
)


def run_check(args: argparse.Namespace, *, exit_now: bool = False) -> int:
    """Run the command for parsed ``args`` (path, character, json, all_events).

    On a terminal, a one-line meter on stderr follows a scan that takes a while. Ctrl+C stops the
    command with exit code 130 and one line on stderr (a forked scanning child is killed, and a
    zip's extracted copy removed).

    ``exit_now`` (the command run as a program): end the process as soon as the output is
    flushed, with the diagnosis still alive, rather than return and free it (see :func:`leave_now`).
    """
    meter = ScanMeter(sys.stderr) if _is_terminal(sys.stderr) else None
    try:
        try:
            diagnosis = diagnose_path(
                args.path,
                character=args.character,
                progress=meter,
                characters_file=getattr(args, "characters", None),
            )
        finally:
            if meter is not None:
                meter.clear()
        with diagnosis:
            if args.json:
                write_json(diagnosis, sys.stdout, all_events=args.all_events)
                for finding in diagnosis.findings:
                    print(f"{PROG}: {finding.severity}: {one_line(finding.message)}", file=sys.stderr)
            else:
                write_human(diagnosis, sys.stdout, all_events=args.all_events)
            worst = diagnosis.worst_severity()
    except DiagnosisInputError as exc:
        print(f"{PROG}: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    code = 0 if worst == "info" else 1
    if exit_now:
        leave_now(code)  # `diagnosis` is still referenced here, so it is never freed
    return code


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


#: How long a scan runs before the meter shows, and how often the meter changes (seconds).
METER_AFTER = 0.5
METER_EVERY = 0.2


class ScanMeter:
    """The ``progress`` callback of :func:`journal.diagnosis.diagnose_path` for a terminal: one
    line, rewritten in place, such as ``memory-inspector check: reading journals 45% · 180 of
    400 MiB``. Quick scans show nothing. Nothing it does can stop the scan (a write error is
    ignored). ``label`` is what comes before the figures (``replay`` shows its plan's read so)."""

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        columns: int | None = None,
        label: str = f"{PROG}: reading journals",
    ) -> None:
        self.stream = stream
        self.label = label
        self.clock = clock
        self.start = clock()
        self.shown_at: float | None = None
        self.width = 0
        if columns is None:
            try:
                columns = os.get_terminal_size(stream.fileno()).columns
            except (AttributeError, OSError, ValueError):
                columns = 80
        # A line that wraps cannot be rewritten with "\r": stay within the terminal's width.
        self.columns = max(20, columns)

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if total <= 0 or now - self.start < METER_AFTER:
            return
        if self.shown_at is not None and now - self.shown_at < METER_EVERY and done < total:
            return
        self.shown_at = now
        text = f"{self.label} {done * 100 // total}% · {done / 2**20:,.0f} of {total / 2**20:,.0f} MiB"
        text = text[: self.columns - 1]
        self.width = max(self.width, len(text))
        self._write("\r" + text.ljust(self.width))

    def clear(self) -> None:
        """Blank the line, if anything was shown (and a ``^C`` the terminal echoed after it)."""
        if self.width:
            self._write("\r" + " " * min(self.width + 2, self.columns - 1) + "\r")
            self.width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass


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
