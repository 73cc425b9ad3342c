"""Benchmark the entry history (``journal.history``) on a generated 1,000,000-event character.

    .venv/bin/python bench/bench_history.py [--events N] [--entries N] [--repeat N] [--keep DIR]
    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_history.py --chart [--chart-events N] [--repeat N]

It builds the same healthy, realistic character as ``bench/bench_check.py`` (a few thousand
reflections and persona entries; evidence updates, merges, lifecycle changes, archives), diagnoses
it once in this process, and then measures, round by round on the same warm page cache (the best
of ``--repeat`` rounds is reported):

- **one entry's history**, once the diagnosis exists: ``JournalHistory.entry`` for an entry with
  the median number of events, against its baseline, a bare ``orjson.loads`` of only that entry's
  lines, read by their offsets (``seek`` + ``readline``; the offsets come from the diagnosis).
  Reported twice: on a :class:`~journal.history.JournalHistory` that has already indexed the
  journal's entries and read the views (what the window keeps beside its diagnosis), and cold
  (a new one, so the index and the views are part of the time). Target: ≤ 2× the baseline.
- **the state at an arbitrary event, for all entries**: ``JournalHistory.state_at`` at the middle
  event and at the last one, against one ``check`` of the journal: ``memory-inspector check PATH
  --json`` as a child process (as ``bench_check`` runs it), and the in-process diagnosis
  (``diagnose_character``) beside it. Target: ≤ 1.0× one check.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import CHARACTER, bench_character, generate_character, precompile, run_child  # noqa: E402

from journal.diagnosis import diagnose_character  # noqa: E402
from journal.events import JOURNAL_NAME  # noqa: E402
from journal.history import EntryKey, JournalHistory  # noqa: E402

TARGET_ENTRY = 2.0
TARGET_STATE = 1.0


def best(fn: Callable[[], object], repeat: int) -> float:
    """The best wall time of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bare_parse(path: Path, offsets: list[int]) -> None:
    """The baseline: ``orjson.loads`` of the lines at ``offsets``, read by seek + readline."""
    loads = orjson.loads
    with open(path, "rb") as fh:
        for off in offsets:
            fh.seek(off)
            loads(fh.readline())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--entries", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; the best of N of each measurement is reported")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR (reused when it already exists)")
    ap.add_argument("--no-precompile", action="store_true", help="do not compile journal/ and inspector/ first")
    ap.add_argument(
        "--chart",
        action="store_true",
        help="instead: the window's history chart for an entry of --chart-events events, against a bare line plot",
    )
    ap.add_argument("--chart-events", type=int, default=100_000)
    args = ap.parse_args(argv)
    if args.chart:
        return bench_chart(args.chart_events, args.repeat, args.keep)
    if not args.no_precompile:
        precompile()
    with bench_character(args.keep, args.events, args.entries, "bench-history-") as char_dir:
        journal = char_dir / JOURNAL_NAME
        print(f"journal: {journal} ({journal.stat().st_size / 1e6:.1f} MB)")
        bare_parse(journal, [])  # open once

        t0 = time.perf_counter()
        diag = diagnose_character(char_dir)
        diagnose_s = time.perf_counter() - t0
        events = diag.events
        n = len(events)
        history = JournalHistory(diag)
        t0 = time.perf_counter()
        index = history.index()
        index_s = time.perf_counter() - t0
        # An entry with the median number of events (persona entries have more in this mix).
        sizes = sorted((len(v), ref) for ref, v in index.items() if ref is not None)
        count, ref = sizes[len(sizes) // 2]
        indices = index[ref]
        first = events[indices[0]]
        key = EntryKey(ref) if first.type.startswith("reflection.") else EntryKey(*reversed(ref.split("/", 1)))
        offsets = [events[i].offset for i in indices]
        history.entry(key)  # the views are read on first use, and kept
        print(f"{n:,} events; diagnosis in-process {diagnose_s:.2f} s; entry index {index_s * 1e3:.0f} ms (once)")
        print(f"entry {ref}: {count} events (median of {len(sizes):,} entries)")

        check_cmd = [sys.executable, "-m", "inspector", "check", str(char_dir), "--json"]
        rows: dict[str, list[float]] = {k: [] for k in ("bare", "warm", "cold", "mid", "last", "check")}
        for round_no in range(args.repeat):
            rows["bare"].append(best(lambda: bare_parse(journal, offsets), 5))
            rows["warm"].append(best(lambda: history.entry(key), 5))
            rows["cold"].append(best(lambda: JournalHistory(diag).entry(key), 1))
            rows["mid"].append(best(lambda: history.state_at(n // 2), 1))
            rows["last"].append(best(lambda: history.state_at(n - 1), 1))
            wall, _rss, code, err, _cpu = run_child(check_cmd)
            if code not in (0, 1):
                print(f"check failed: exit {code}: {err.decode(errors='replace')}", file=sys.stderr)
                return 1
            rows["check"].append(wall)
            print(
                f"  round {round_no + 1}: bare {rows['bare'][-1] * 1e3:.2f} ms, entry {rows['warm'][-1] * 1e3:.2f} ms "
                f"(cold {rows['cold'][-1] * 1e3:.0f} ms), state_at mid {rows['mid'][-1]:.2f} s, "
                f"last {rows['last'][-1]:.2f} s, check {wall:.2f} s",
                flush=True,
            )
        b = {k: min(v) for k, v in rows.items()}
        ok = lambda good: "OK" if good else "MISSED"  # noqa: E731
        print(f"best of {args.repeat} rounds; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"bare orjson parse of the entry's {count} lines by offset: {b['bare'] * 1e3:8.2f} ms")
        r = b["warm"] / b["bare"]
        print(
            f"entry history (index and views kept):       {b['warm'] * 1e3:8.2f} ms  {r:5.2f}x  "
            f"(target <= {TARGET_ENTRY:.1f}x)  {ok(r <= TARGET_ENTRY)}"
        )
        r = b["cold"] / b["bare"]
        print(
            f"entry history (cold: index and views too):  {b['cold'] * 1e3:8.2f} ms  {r:5.2f}x  "
            f"(target <= {TARGET_ENTRY:.1f}x)  {ok(r <= TARGET_ENTRY)}"
        )
        print(f"check --json (child process):  {b['check']:6.2f} s   (in-process diagnosis {diagnose_s:.2f} s)")
        for name, label in (("mid", f"state_at #{n // 2:,}"), ("last", f"state_at #{n - 1:,}")):
            r = b[name] / b["check"]
            print(
                f"{label + ':':<30} {b[name]:6.2f} s  {r:5.2f}x check  (target <= {TARGET_STATE:.1f}x)  "
                f"{ok(r <= TARGET_STATE)}   [{b[name] / diagnose_s:.2f}x the in-process diagnosis]"
            )
        print(
            f"(median round: entry {statistics.median(rows['warm']) * 1e3:.2f} ms, "
            f"state_at last {statistics.median(rows['last']):.2f} s)"
        )
    return 0


# -- the window's chart (issue 18 item 3) ------------------------------------------------------------

TARGET_CHART = 2.0


def bench_chart(touching: int, repeat: int, keep: str | None) -> int:
    """The history chart of one entry touched by ``touching`` events, against a bare line plot.

    Both sides, in the same run, offscreen: build the widget, give it the data, let the event
    loop settle (``processEvents``) and force one paint (``grab``). The chart's side starts from
    the :class:`~journal.history.EntryHistory` (its numpy arrays are part of the time); the bare
    side from ready numpy arrays: ``pg.PlotWidget().plot(x, y)`` of the same points' reinforcement,
    and, for reference, of all three series it draws. Target: <= 2x the bare plot.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from inspector.widgets.history_panel import SERIES, HistoryChart, chart_arrays

    app = QApplication.instance() or QApplication([])
    tmp = None
    if keep:
        root = Path(keep)
    else:
        tmp = tempfile.mkdtemp(prefix="bench-chart-")
        root = Path(tmp)
    char_dir = root / CHARACTER
    try:
        if not (char_dir / JOURNAL_NAME).exists():
            # Two entries: the reflection gets ~61% of bench_check's mix of events.
            generate_character(char_dir, int(touching / 0.6) + 1000, 2)
        history = JournalHistory(diagnose_character(char_dir))
        index = history.index()
        ref = max((r for r in index if r is not None), key=lambda r: len(index[r]))
        key = EntryKey(ref) if "/" not in ref else EntryKey(*reversed(ref.split("/", 1)))
        t0 = time.perf_counter()
        entry = history.entry(key)
        print(f"entry {ref}: {len(entry.points):,} events (history built in {time.perf_counter() - t0:.2f} s)")
        arrays = chart_arrays(entry)
        x = arrays.x
        series = [arrays.values[name] for name, *_ in SERIES]
        size = (900, 500)

        def draw(widget: Any, fill: Callable[[Any], None]) -> None:
            widget.resize(*size)
            fill(widget)
            app.processEvents()
            widget.grab()
            widget.deleteLater()

        def chart() -> None:
            draw(HistoryChart(), lambda w: w.set_history(entry))

        def chart_prebuilt() -> None:  # the arrays built in the controller's worker
            draw(HistoryChart(), lambda w: w.set_history(entry, chart_arrays_ready))

        def bare() -> None:
            draw(pg.PlotWidget(), lambda w: w.plot(x, series[0]))

        def bare_all() -> None:
            draw(pg.PlotWidget(), lambda w: [w.plot(x, y) for y in series])

        chart_arrays_ready = arrays
        cases = {"chart": chart, "chart_pre": chart_prebuilt, "bare": bare, "bare_all": bare_all}
        rows: dict[str, list[float]] = {k: [] for k in cases}
        arrays_s = []
        for fn in cases.values():
            fn()  # warm: first-use costs (fonts, symbol atlas) are not drawing
        for round_no in range(repeat):
            for name, fn in cases.items():
                rows[name].append(best(fn, 5))
                app.processEvents()
            arrays_s.append(best(lambda: chart_arrays(entry), 5))
            print(
                f"  round {round_no + 1}: chart {rows['chart'][-1] * 1e3:.1f} ms "
                f"(arrays ready {rows['chart_pre'][-1] * 1e3:.1f} ms), bare line {rows['bare'][-1] * 1e3:.1f} ms, "
                f"bare 3 lines {rows['bare_all'][-1] * 1e3:.1f} ms",
                flush=True,
            )
        b = {k: min(v) for k, v in rows.items()}
        ok = "OK" if b["chart"] / b["bare"] <= TARGET_CHART else "MISSED"
        print(f"best of {repeat} rounds of 5; {len(x):,} points; {size[0]}x{size[1]} offscreen")
        print(f"bare line plot, pg.PlotWidget().plot(x, y):      {b['bare'] * 1e3:7.1f} ms")
        print(f"bare line plot of the chart's 3 series:          {b['bare_all'] * 1e3:7.1f} ms")
        print(
            f"history chart (arrays built in it):              {b['chart'] * 1e3:7.1f} ms  "
            f"{b['chart'] / b['bare']:5.2f}x the bare line  (target <= {TARGET_CHART:.1f}x)  {ok}   "
            f"[{b['chart'] / b['bare_all']:.2f}x the 3 bare lines]"
        )
        print(
            f"history chart (arrays ready, from the worker):   {b['chart_pre'] * 1e3:7.1f} ms  "
            f"{b['chart_pre'] / b['bare']:5.2f}x the bare line   "
            f"[{b['chart_pre'] / b['bare_all']:.2f}x the 3 bare lines]"
        )
        print(f"of which chart_arrays (numpy, once):             {min(arrays_s) * 1e3:7.1f} ms")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
