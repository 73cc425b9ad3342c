"""``memory-inspector bundle``: write a redacted support bundle of a memory folder (issue 17)."""

from __future__ import annotations

import argparse
import sys
import time

from inspector.check_cmd import ScanMeter, _is_terminal
from inspector.core.bundle import BundleError, load_or_create_secret, secret_path, write_bundle
from inspector.core.redaction import Redactor
from inspector.core.text import one_line
from journal.diagnosis import DiagnosisInputError

PROG = "memory-inspector bundle"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", help="memory root, character folder or .zip export (only read)")
    p.add_argument("-o", "--output", metavar="CASE.zip", help="the bundle to write (never inside PATH)")
    p.add_argument("--character", metavar="NAME", help="only this character")
    p.add_argument("--no-redact", action="store_true", help="copy the files as they are (recorded in the manifest)")
    p.add_argument("--force", action="store_true", help="replace CASE.zip if it exists")
    p.add_argument(
        "--guess",
        metavar="TEXT",
        help="print the token TEXT has under your redaction secret (to answer a developer's guess); writes nothing",
    )


class _BundleMeter(ScanMeter):
    """check's one-line terminal meter, worded for a bundle."""

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if total <= 0 or now - self.start < 0.5:
            return
        if self.shown_at is not None and now - self.shown_at < 0.2 and done < total:
            return
        self.shown_at = now
        text = f"{PROG}: {done * 100 // total}% · {done / 2**20:,.0f} of {total / 2**20:,.0f} MiB"
        text = text[: self.columns - 1]
        self.width = max(self.width, len(text))
        self._write("\r" + text.ljust(self.width))


def run_bundle(args: argparse.Namespace) -> int:
    """Exit codes: 0 written; 1 refused (the output exists, or lies inside PATH); 2 bad input;
    130 interrupted."""
    try:
        secret = load_or_create_secret()
    except OSError as exc:
        print(f"{PROG}: error: the redaction secret ({secret_path()}): {one_line(str(exc))}", file=sys.stderr)
        return 2
    if args.guess is not None:
        r = Redactor(secret)
        print(f"{r.token(args.guess)}  (key {r.key_id})")
        return 0
    if not args.path or not args.output:
        print(f"{PROG}: error: PATH and -o CASE.zip are required", file=sys.stderr)
        return 2
    meter = _BundleMeter(sys.stderr, time.monotonic) if _is_terminal(sys.stderr) else None
    try:
        result = write_bundle(
            args.path,
            args.output,
            secret=secret,
            character=args.character,
            redact=not args.no_redact,
            force=args.force,
            progress=meter,
        )
    except DiagnosisInputError as exc:
        _clear(meter)
        print(f"{PROG}: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except BundleError as exc:
        _clear(meter)
        print(f"{PROG}: refused: {one_line(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:
        _clear(meter)
        print(f"{PROG}: error: cannot write {one_line(args.output)}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _clear(meter)
        print(f"\n{PROG}: interrupted; nothing was written", file=sys.stderr)
        return 130
    _clear(meter)
    m = result.manifest
    state = "redacted" if m["redacted"] else "NOT redacted (--no-redact)"
    chars = m["characters"]
    print(
        f"{PROG}: wrote {one_line(str(result.path))} ({result.size:,} bytes, "
        f"{len(chars)} character{'s' if len(chars) != 1 else ''}, {state})"
    )
    omitted = m["omitted"]
    if omitted:
        print(f"{PROG}: left out {len(omitted)} item(s); the manifest lists them", file=sys.stderr)
    return 0


def _clear(meter: _BundleMeter | None) -> None:
    if meter is not None:
        meter.clear()
