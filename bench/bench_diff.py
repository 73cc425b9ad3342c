"""Benchmark ``memory-inspector diff`` of two generated 1,000,000-event journals that diverge at 900k.

    .venv/bin/python bench/bench_diff.py [--events N] [--diverge-at FRACTION] [--repeat N]

A is a generated healthy character (``bench_check``'s generator); B is A's first 90 % of lines
followed by as many new events (new ids) as A has after them. One run measures, round by round,
the best of ``--repeat``, both as child processes (interpreter start-up included):

- the baseline: ``memory-inspector check A --json``;
- ``memory-inspector diff A B --json``.

Target: diff <= 1.5x one check.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import CHARACTER, generate_character, precompile, run_child  # noqa: E402

from journal.events import JOURNAL_NAME  # noqa: E402
from journal.views import write_sentinel  # noqa: E402


def make_b(a: Path, b: Path, at: float) -> int:
    """B: A's lines up to ``at`` of them, then A's later lines under new event ids."""
    shutil.copytree(a, b)
    lines = (a / JOURNAL_NAME).read_bytes().split(b"\n")[:-1]
    cut = int(len(lines) * at)
    out = lines[:cut]
    last = ""
    for line in lines[cut:]:
        last = str(uuid.uuid4())
        out.append(b'{"event_id": "' + last.encode() + line[line.index(b'", "type"') :])
    (b / JOURNAL_NAME).write_bytes(b"\n".join(out) + b"\n")
    write_sentinel(b, last)
    return cut


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--entries", type=int, default=4_000)
    ap.add_argument("--diverge-at", type=float, default=0.9)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    precompile()
    exe = [sys.executable, "-m", "inspector"]
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as tmp:
        a = Path(tmp) / "a" / CHARACTER
        generate_character(a, args.events, args.entries)
        cut = make_b(a, Path(tmp) / "b" / CHARACTER, args.diverge_at)
        print(f"A: {args.events:,} events; B diverges at event {cut:,}")
        checks, diffs = [], []
        for r in range(args.repeat):
            wall, _rss, code, err, _cpu = run_child([*exe, "check", str(a), "--json"])
            assert code in (0, 1), err
            checks.append(wall)
            wall, _rss, code, err, _cpu = run_child([*exe, "diff", str(a), str(Path(tmp) / "b" / CHARACTER), "--json"])
            assert code == 1, err
            diffs.append(wall)
            print(f"round {r + 1}: check {checks[-1]:.2f} s, diff {diffs[-1]:.2f} s, {diffs[-1] / checks[-1]:.2f}x")
        c, d = min(checks), min(diffs)
        verdict = "met" if d <= 1.5 * c else "MISSED"
        print(f"best: check {c:.2f} s, diff {d:.2f} s; diff / check = {d / c:.2f}x (target <= 1.5x: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
