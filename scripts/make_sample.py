"""Regenerate ``resources/sample/``: the memory root the window opens when no PATH is given.

    .venv/bin/python scripts/make_sample.py [--out DIR]

One character per state the inspector shows — healthy; pending tail; blocked by an unregistered
legacy type; orphaned by a later live write; glued torn line; archive entry lost; persona drift —
written through the journal package's own writers by its fixture builder
(``journal/fixtures/``). Ids and timestamps come from seeded sequences, so running it
twice gives byte-identical files; a test checks that the committed sample is exactly what this
script produces.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file: import this checkout's journal package
    sys.path.insert(0, str(REPO))

from journal.fixtures import SAMPLE_CASES, build_sample  # noqa: E402

DEFAULT_OUT = REPO / "resources" / "sample"


def regenerate(out: Path) -> None:
    """Build the sample into a fresh folder beside ``out``, then swap it in."""
    staging = out.with_name(out.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    build_sample(staging)
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the bundled sample memory root.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where to write it (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    regenerate(args.out)
    print(f"wrote {args.out}: {', '.join(SAMPLE_CASES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
