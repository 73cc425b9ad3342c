"""Benchmark ``memory-inspector bundle`` on a generated 1,000,000-event character.

    .venv/bin/python bench/bench_bundle.py [--events N] [--entries N] [--repeat N] [--no-levers]

One run measures, round by round on the same (warm) files, each contender once per round, and
prints the median and the best of ``--repeat`` rounds, wall and CPU (this process's):

- the baseline: zipping the character's files as they are with Python's ``zipfile``
  (DEFLATE, level 6), in this process;
- the bundle: :func:`inspector.core.bundle.write_bundle` in this process: the diagnosis of the
  original (``check.json``/``check.txt``), every file redacted, DEFLATE at zipfile's default
  (level 6), the manifest, the atomic replace;
- the levers, side by side (unless ``--no-levers``): the bundle with every journal record
  redacted by the generic walk (:meth:`BundleRedactor.value`) instead of its payload shape's
  compiled plan, which is what the bundle did before issue 28; the two bundles' members (but the
  manifest, which records when it was made) must be byte-identical, and the run says so.

Target (issue 28): bundle <= 2.5x the baseline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import CHARACTER, generate_character  # noqa: E402

from inspector.core.bundle import rules as R  # noqa: E402
from inspector.core.bundle import write as bundle_write  # noqa: E402
from inspector.core.bundle import write_bundle  # noqa: E402
from inspector.core.bundle.redact import BundleRedactor  # noqa: E402

TARGET = 2.5
SECRET = b"bench secret of thirty-two bytes"
#: The members' time, the same for every contender (so their zips can be compared).
_NOW = datetime(2026, 3, 1, 12, 0, 0)


class GenericWalkRedactor(BundleRedactor):
    """The lever turned off: every journal record by the generic walk."""

    def record(self, event_id: str, etype: str, ts: str, payload: Any) -> dict[str, Any]:
        rec = {"event_id": event_id, "type": etype, "ts": ts, "payload": payload}
        return self.value(rec, R.KINDS["journal"])  # type: ignore[no-any-return]


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    """``(wall, CPU)`` seconds of ``run()`` (CPU: this process's, steadier on a busy machine)."""
    t0, c0 = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - t0, time.process_time() - c0


def zip_baseline(char_dir: Path, out: Path) -> tuple[float, float]:
    def run() -> None:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            for p in sorted(char_dir.rglob("*")):
                if p.is_file():
                    zf.write(p, f"{CHARACTER}/{p.relative_to(char_dir).as_posix()}")

    return _timed(run)


def bundle(char_dir: Path, out: Path, redactor: type[BundleRedactor] = BundleRedactor) -> tuple[float, float]:
    bundle_write.BundleRedactor = redactor  # type: ignore[misc]
    try:
        return _timed(lambda: write_bundle(char_dir, out, secret=SECRET, force=True, now=_NOW))
    finally:
        bundle_write.BundleRedactor = BundleRedactor  # type: ignore[misc]


def _members(path: Path) -> dict[str, int]:
    """Each member's CRC, but the manifest's (it records when it was made)."""
    with zipfile.ZipFile(path) as zf:
        return {i.filename: i.CRC for i in zf.infolist() if i.filename != "manifest.json"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--entries", type=int, default=4_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-levers", action="store_true", help="only the baseline and the bundle")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-bundle-") as tmp:
        char_dir = Path(tmp) / "root" / CHARACTER
        t0 = time.perf_counter()
        generate_character(char_dir, args.events, args.entries)
        size = sum(p.stat().st_size for p in char_dir.rglob("*") if p.is_file())
        print(f"generated {args.events:,} events, {size / 2**20:,.0f} MiB in {time.perf_counter() - t0:.1f} s")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        contenders: dict[str, Callable[[Path], tuple[float, float]]] = {
            "zipfile": lambda out: zip_baseline(char_dir, out),
            "bundle": lambda out: bundle(char_dir, out),
        }
        if not args.no_levers:
            contenders["bundle, generic walk"] = lambda out: bundle(char_dir, out, GenericWalkRedactor)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
        outs = {name: Path(tmp) / f"{i}.zip" for i, name in enumerate(contenders)}
        for r in range(args.repeat):
            for name, run in contenders.items():
                times[name].append(run(outs[name]))
            row = ", ".join(f"{name} {t[-1][0]:.2f} s (CPU {t[-1][1]:.2f} s)" for name, t in times.items())
            print(f"round {r + 1}: {row}")
        base = statistics.median(w for w, _c in times["zipfile"])
        base_cpu = statistics.median(c for _w, c in times["zipfile"])
        for name, t in times.items():
            med = statistics.median(w for w, _c in t)
            cpu = statistics.median(c for _w, c in t)
            mib = os.path.getsize(outs[name]) / 2**20
            print(
                f"{name}: median {med:.2f} s, best {min(w for w, _c in t):.2f} s, CPU {cpu:.2f} s ({mib:,.1f} MiB);"
                f" {med / base:.2f}x zipfile, CPU {cpu / base_cpu:.2f}x"
            )
        if "bundle, generic walk" in outs:
            same = _members(outs["bundle"]) == _members(outs["bundle, generic walk"])
            print(f"plan and generic walk give the same members: {'yes' if same else 'NO'}")
        ratio = statistics.median(w for w, _c in times["bundle"]) / base
        print(f"bundle / zipfile = {ratio:.2f}x (target <= {TARGET}x: {'met' if ratio <= TARGET else 'MISSED'})")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
