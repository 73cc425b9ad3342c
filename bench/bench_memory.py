"""Benchmark what ``memory-inspector check --json`` keeps per event, and how its time scales.

    .venv/bin/python bench/bench_memory.py [--sizes 1000000,3000000] [--repeat 3] [--keep DIR]

For each size (the benchmarks' healthy character, ``bench/benchkit.py``, reused from ``--keep DIR``), one
run measures round by round, interleaved (each round: the bare orjson loop over every size's
journal, then ``check --json`` of each size as a child process), the median of ``--repeat``:

- memory per event: (peak RSS at the largest size - peak RSS at the smallest) / the difference in
  events (what the interpreter and the modules take cancels out);
- ``check`` / the orjson loop at each size (wall and CPU);
- scaling: t(largest) / t(smallest) against the ratio of their events.

Targets (issue 28): memory per event <= 220 B; at 10M vs 1M events, t(10M) / t(1M) <= 11.
A size whose ``check`` takes longer than ``--max-seconds`` is measured once and reported as such.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchkit import bench_character, orjson_loop, precompile, run_child  # noqa: E402

from journal.events import JOURNAL_NAME  # noqa: E402

#: Targets: bytes kept per event; t(big) / t(small) per 10x more events.
TARGET_PER_EVENT = 220
TARGET_SCALING_10X = 11.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000000,3000000", help="event counts, comma-separated")
    ap.add_argument("--entries", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; the median of each is reported")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR/<size> (reused when there already)")
    ap.add_argument("--max-seconds", type=float, default=600.0, help="a size slower than this runs once")
    ap.add_argument("--no-precompile", action="store_true")
    args = ap.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if len(sizes) < 2:
        ap.error("--sizes needs two sizes at least")
    if not args.no_precompile:
        precompile()
    dirs: dict[int, Path] = {}
    contexts = []
    try:
        for n in sizes:
            keep = None if args.keep is None else str(Path(args.keep) / str(n))
            ctx = bench_character(keep, n, args.entries, f"bench-memory-{n}-")
            contexts.append(ctx)
            dirs[n] = ctx.__enter__()
        loops: dict[int, list[tuple[float, float]]] = {n: [] for n in sizes}
        runs: dict[int, list[tuple[float, int, int, bytes, float]]] = {n: [] for n in sizes}
        slow: set[int] = set()
        for n in sizes:
            orjson_loop(dirs[n] / JOURNAL_NAME)  # warm the page cache
        for round_no in range(args.repeat):
            for n in sizes:
                if n in slow:
                    continue
                loops[n].append(orjson_loop(dirs[n] / JOURNAL_NAME))
                runs[n].append(run_child([sys.executable, "-m", "inspector", "check", str(dirs[n]), "--json"]))
                wall, rss, code, err, cpu = runs[n][-1]
                if code not in (0, 1):
                    print(f"check failed at {n:,}: exit {code}: {err.decode(errors='replace')}", file=sys.stderr)
                    return 1
                if wall > args.max_seconds:
                    slow.add(n)
                print(
                    f"  round {round_no + 1}, {n:>11,} events: loop {loops[n][-1][0]:7.2f} s, "
                    f"check {wall:7.2f} s ({cpu:6.2f} s CPU), peak RSS {rss / 1e6:7.0f} MB",
                    flush=True,
                )
        med = statistics.median
        print(f"medians of {args.repeat} rounds; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        for n in sizes:
            w, c = med(r[0] for r in runs[n]), med(r[4] for r in runs[n])
            lw, lc = med(x[0] for x in loops[n]), med(x[1] for x in loops[n])
            rss = med(r[1] for r in runs[n])
            print(
                f"{n:>11,} events: check {w:7.2f} s wall {c:7.2f} s CPU, peak RSS {rss / 1e6:6.0f} MB; "
                f"orjson loop {lw:6.2f} s wall {lc:6.2f} s CPU; check / loop {w / lw:.2f}x [CPU {c / lc:.2f}x]"
                + ("  (one run: slower than --max-seconds)" if n in slow else "")
            )
        small, big = sizes[0], sizes[-1]
        per_event = (med(r[1] for r in runs[big]) - med(r[1] for r in runs[small])) / (big - small)
        verdict = "OK" if per_event <= TARGET_PER_EVENT else "MISSED"
        print(f"memory per event: {per_event:.0f} B   (target <= {TARGET_PER_EVENT} B)  {verdict}")
        t_ratio = med(r[0] for r in runs[big]) / med(r[0] for r in runs[small])
        cpu_ratio = med(r[4] for r in runs[big]) / med(r[4] for r in runs[small])
        limit = TARGET_SCALING_10X * (big / small) / 10
        verdict = "OK" if t_ratio <= limit else "MISSED"
        print(
            f"t({big:,}) / t({small:,}) = {t_ratio:.2f} [CPU {cpu_ratio:.2f}] for {big / small:.0f}x the events "
            f"(target <= {limit:.1f}: {TARGET_SCALING_10X:.0f} per 10x)  {verdict}"
        )
    finally:
        for ctx in reversed(contexts):
            ctx.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
