"""Benchmark ``memory-inspector bundle`` on a generated 1,000,000-event character.

    .venv/bin/python bench/bench_bundle.py [--events N] [--entries N] [--repeat N]

One run measures, round by round on the same (warm) files, the best of ``--repeat``:

- the baseline: zipping the character's files as they are with Python's ``zipfile``
  (DEFLATE, level 6), in this process;
- the bundle: :func:`inspector.core.bundle.write_bundle` in this process: the diagnosis of the
  original (``check.json``/``check.txt``), every file redacted, DEFLATE at zipfile's default
  (level 6), the manifest, the atomic replace.

Target: bundle <= 2.0x the baseline.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import CHARACTER, generate_character  # noqa: E402

from inspector.core.bundle import write_bundle  # noqa: E402


def zip_baseline(char_dir: Path, out: Path) -> float:
    t0 = time.perf_counter()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for p in sorted(char_dir.rglob("*")):
            if p.is_file():
                zf.write(p, f"{CHARACTER}/{p.relative_to(char_dir).as_posix()}")
    return time.perf_counter() - t0


def bundle(char_dir: Path, out: Path) -> float:
    t0 = time.perf_counter()
    write_bundle(char_dir, out, secret=b"bench secret of thirty-two bytes", force=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--entries", type=int, default=4_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-bundle-") as tmp:
        char_dir = Path(tmp) / "root" / CHARACTER
        t0 = time.perf_counter()
        generate_character(char_dir, args.events, args.entries)
        size = sum(p.stat().st_size for p in char_dir.rglob("*") if p.is_file())
        print(f"generated {args.events:,} events, {size / 2**20:,.0f} MiB in {time.perf_counter() - t0:.1f} s")
        base, ours = [], []
        for r in range(args.repeat):
            base.append(zip_baseline(char_dir, Path(tmp) / "plain.zip"))
            ours.append(bundle(char_dir, Path(tmp) / "case.zip"))
            print(f"round {r + 1}: zipfile {base[-1]:.2f} s, bundle {ours[-1]:.2f} s, {ours[-1] / base[-1]:.2f}x")
        b, o = min(base), min(ours)
        plain, case = os.path.getsize(Path(tmp) / "plain.zip"), os.path.getsize(Path(tmp) / "case.zip")
        verdict = "met" if o <= 2.0 * b else "MISSED"
        print(f"best: zipfile {b:.2f} s ({plain / 2**20:,.1f} MiB), bundle {o:.2f} s ({case / 2**20:,.1f} MiB)")
        print(f"bundle / zipfile = {o / b:.2f}x (target <= 2.0x: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
