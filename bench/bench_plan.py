"""Benchmark ``memory-inspector replay --dry-run`` (the guarded replay's plan) against one ``check``.

    .venv/bin/python bench/bench_plan.py [--events N] [--pending K] [--entries N] [--repeat N]
                                         [--keep DIR] [--apply] [--no-precompile]

The character is the benchmarks' generated one (``bench/benchkit.py``: a few thousand reflections
and persona entries, evidence updates, merges with matching text hashes, lifecycle changes and
archives), with ``--pending`` events appended by the same generator loop and not applied yet
(``benchkit.append_pending``): the views and the sentinel are those of the events before them, and
the pending events (evidence updates, merges, state changes and a few archives into new shards)
change the views when replayed.

One run measures, round by round on the same file and the same (warm) page cache, each as a child
process (wall time including interpreter start-up, peak RSS from ``wait4``), the best of
``--repeat``:

- the baseline: ``memory-inspector check PATH --json``;
- ``memory-inspector replay PATH --dry-run`` (the plan of the pending tail: writes nothing).

Targets (issue 28): the dry run <= 3x one check, its peak RSS <= 1.5x check's.

``--apply`` then measures the apply once, separately (its durable per-event writes are the design
record's): ``replay PATH --yes`` on a copy of the folder, with the backup in a temp folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchkit import CHARACTER, append_pending, generate_character, orjson_loop, precompile, run_child  # noqa: E402

from journal.events import JOURNAL_NAME, SENTINEL_NAME  # noqa: E402

#: Targets: dry run / check (wall), dry run / check (peak RSS).
TARGET_TIME = 3.0
TARGET_RSS = 1.5


def plan_character(keep: str | None, events: int, pending: int, entries: int) -> tuple[Path, str | None]:
    """The benchmark's folder: generated into ``keep`` (reused when its journal is there), or into
    a temporary folder (returned second, for removal)."""
    tmp = None if keep else tempfile.mkdtemp(prefix="bench-plan-")
    root = Path(keep) if keep else Path(tmp or "")
    char_dir = root / CHARACTER
    if not (char_dir / JOURNAL_NAME).exists():
        t0 = time.perf_counter()
        generate_character(char_dir, events - pending, entries)
        append_pending(char_dir, events - pending, pending)
        print(f"generated {events:,} events ({pending:,} pending) over {entries:,} entries "
              f"in {time.perf_counter() - t0:.1f} s")
    return char_dir, tmp


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--pending", type=int, default=10_000)
    ap.add_argument("--entries", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; the best of N of each measurement is reported")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR (reused when it already exists)")
    ap.add_argument("--apply", action="store_true", help="then measure one `replay --yes` on a copy of the folder")
    ap.add_argument("--no-precompile", action="store_true", help="do not compile journal/ and inspector/ first")
    args = ap.parse_args(argv)
    if not 0 < args.pending < args.events:
        ap.error("--pending must be between 1 and --events - 1")
    if not args.no_precompile:
        precompile()
    char_dir, tmp = plan_character(args.keep, args.events, args.pending, args.entries)
    try:
        journal = char_dir / JOURNAL_NAME
        print(f"journal: {journal} ({journal.stat().st_size / 1e6:.1f} MB)")
        orjson_loop(journal)  # warm the page cache
        sentinel = (char_dir / SENTINEL_NAME).read_bytes()
        check_cmd = [sys.executable, "-m", "inspector", "check", str(char_dir), "--json"]
        plan_cmd = [sys.executable, "-m", "inspector", "replay", str(char_dir), "--dry-run"]
        checks, plans = [], []
        for round_no in range(args.repeat):
            checks.append(run_child(check_cmd))
            plans.append(run_child(plan_cmd))
            print(f"  round {round_no + 1}: check {checks[-1][0]:.2f} s ({checks[-1][1] / 1e6:.0f} MB), "
                  f"replay --dry-run {plans[-1][0]:.2f} s ({plans[-1][1] / 1e6:.0f} MB)", flush=True)
        for what, runs, ok_codes in (("check", checks, {0, 1}), ("replay --dry-run", plans, {0})):
            bad = {r[2] for r in runs} - ok_codes
            if bad:
                print(f"{what} failed: exit {bad}: {runs[0][3].decode(errors='replace')[-2000:]}", file=sys.stderr)
                return 1
        assert (char_dir / SENTINEL_NAME).read_bytes() == sentinel, "the dry run wrote the sentinel"
        best_check, best_plan = min(r[0] for r in checks), min(r[0] for r in plans)
        rss_check, rss_plan = max(r[1] for r in checks), max(r[1] for r in plans)
        ok = lambda good: "OK" if good else "MISSED"  # noqa: E731
        print(f"best of {args.repeat} rounds; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"check --json:      {best_check:7.2f} s   peak RSS {rss_check / 1e6:6.0f} MB")
        print(f"replay --dry-run:  {best_plan:7.2f} s   peak RSS {rss_plan / 1e6:6.0f} MB")
        ratio = best_plan / best_check
        print(f"dry run / check, time: {ratio:.2f}x   (target <= {TARGET_TIME:.1f}x)  {ok(ratio <= TARGET_TIME)}")
        mem = rss_plan / rss_check
        print(f"dry run / check, peak RSS: {mem:.2f}x   (target <= {TARGET_RSS:.1f}x)  {ok(mem <= TARGET_RSS)}")
        if args.apply:
            measure_apply(char_dir)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def measure_apply(char_dir: Path) -> None:
    """One guarded replay (plan, backup, apply, verify) of a copy of the folder, as a child process."""
    with tempfile.TemporaryDirectory(prefix="bench-plan-apply-") as tmp:
        copy = Path(tmp) / "root" / CHARACTER
        shutil.copytree(char_dir, copy)
        cmd = [sys.executable, "-m", "inspector", "replay", str(copy), "--yes", "--backup-dir", str(Path(tmp) / "b")]
        env_home = {**os.environ, "XDG_DATA_HOME": str(Path(tmp) / "data")}  # its own index of backups
        t0 = time.perf_counter()
        wall, rss, code, err, cpu = run_child_env(cmd, env_home)
        print(f"replay --yes (plan + backup + apply + verify, a copy): {wall:.2f} s wall, {cpu:.2f} s CPU, "
              f"peak RSS {rss / 1e6:.0f} MB, exit {code}  ({time.perf_counter() - t0:.1f} s)")
        if code != 0:
            print(err.decode(errors="replace")[-2000:], file=sys.stderr)


def run_child_env(cmd: list[str], env: dict[str, str]) -> tuple[float, int, int, bytes, float]:
    """:func:`benchkit.run_child` with another environment."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        return run_child(cmd)
    finally:
        os.environ.clear()
        os.environ.update(saved)


if __name__ == "__main__":
    sys.exit(main())
