"""Command-line entry point ``memory-inspector``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from inspector import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-inspector",
        description="Inspect, diagnose and safely replay AI-companion memory folders.",
    )
    parser.add_argument("--version", action="version", version=f"memory-inspector {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    print("memory-inspector: the window is not built yet (see the open issues).", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
