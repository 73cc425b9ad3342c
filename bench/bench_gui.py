"""Benchmark the window on a generated 1,000,000-event character.

    .venv/bin/python bench/bench_gui.py [--events N] [--appends N] [--keep DIR]

One run measures, on the same files and a warm page cache:

- the limit: a bare ``orjson.loads`` loop over the journal's lines;
- *first rows visible*: from ``open`` to the first paint of the timeline with rows in it
  (the preview of the first megabyte), in a fresh child process with the offscreen platform;
- *full analysis shown*: from ``open`` to the first paint after the diagnosis was merged into the
  window (states, sentinel, badges, findings);
- the child's peak RSS (``wait4``), over the whole run including the live phase;
- live latency: a separate writer process appends ``--appends`` events (``EventLog.append``: one
  write + fsync each, 50 ms apart) and prints when each was acknowledged; the window records when
  each became a row in the model. p50 / p95 of the difference (``CLOCK_MONOTONIC`` is shared);
- the cost of one incremental update (reading the new bytes in the watcher thread, plus inserting
  the rows on the GUI thread), median per append, on a 10,000-event character and on the big one:
  it must not grow with the journal.

Targets (issue 5): first rows ≤ 1 s; full analysis ≤ 2× the orjson loop; peak RSS ≤ 800 MB;
append → row p95 ≤ 250 ms; incremental cost flat from 10k to 1M events.
The character comes from ``bench_check.generate_character`` (a healthy, realistic journal).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson  # noqa: E402
from bench_check import CHARACTER, generate_character  # noqa: E402

from journal.events import JOURNAL_NAME  # noqa: E402

APPEND_INTERVAL = 0.05


def orjson_loop(path: Path) -> float:
    """Wall seconds of a bare ``orjson.loads`` loop over the file's lines (the limit)."""
    t0 = time.perf_counter()
    loads = orjson.loads
    with open(path, "rb") as fh:
        for line in fh:
            loads(line)
    return time.perf_counter() - t0


# -- the writer process ---------------------------------------------------------------------------


def writer(root: Path, count: int) -> int:
    """Append ``count`` fsync'd events; print ``event_id monotonic_ack`` after each."""
    from journal import EventLog

    log = EventLog(root)
    for i in range(count):
        payload = {"reflection_id": f"ref_bench_{i % 50:04d}", "reinforcement": float(i), "source": "user_fact"}
        event = log.append(CHARACTER, "reflection.evidence_updated", payload)
        print(event.event_id, time.monotonic(), flush=True)
        time.sleep(APPEND_INTERVAL)  # a steady writer, not a burst the debounce would merge
    return 0


# -- the window process -----------------------------------------------------------------------------


def window_run(root: Path, appends: int, out: Path) -> int:
    """Open ``root`` in the real window (offscreen), time it, then measure live appends."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["MEMORY_INSPECTOR_CONFIG_DIR"] = tempfile.mkdtemp(prefix="bench-gui-cfg-")
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer

    from inspector.app import build_window, make_application
    from inspector.core import live
    from inspector.core.prompter import HeadlessPrompter
    from inspector.widgets import session as session_mod

    costs_watch: list[float] = []
    costs_gui: list[float] = []
    real_process = live.LiveFolder.process
    real_apply = session_mod.SessionController._apply_live

    def timed_process(self, paths):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        result = real_process(self, paths)
        if any(u.rows for u in result):
            costs_watch.append(time.perf_counter() - t0)
        return result

    def timed_apply(self, gen, updates):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        real_apply(self, gen, updates)
        if any(u.rows for u in updates):
            costs_gui.append(time.perf_counter() - t0)

    live.LiveFolder.process = timed_process  # type: ignore[method-assign]
    session_mod.SessionController._apply_live = timed_apply  # type: ignore[method-assign]

    app = make_application()
    window = build_window(prompter=HeadlessPrompter(), replay=False)
    window.show()
    app.processEvents()
    session = window.session
    model = session.timeline_model
    marks: dict[str, float] = {}
    real_diagnose = session._diagnose

    def timed_diagnose(path, **kwargs):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return real_diagnose(path, **kwargs)
        finally:
            marks["diagnosis"] = time.perf_counter() - t

    session._diagnose = timed_diagnose

    class PaintWatch(QObject):
        def eventFilter(self, obj, event):  # type: ignore[no-untyped-def]
            if event.type() == QEvent.Type.Paint and model.rowCount() > 0:
                now = time.perf_counter()
                marks.setdefault("first_rows", now)
                if "loaded" in marks and "analysis_shown" not in marks:
                    marks["analysis_shown"] = now
                    loop.quit()
            return False

    watch = PaintWatch()
    window.timeline.viewport().installEventFilter(watch)
    loop = QEventLoop()
    session.loaded.connect(lambda _f: marks.setdefault("loaded", time.perf_counter()))
    failed: list[str] = []
    session.load_failed.connect(lambda *a: (failed.append(repr(a)), loop.quit()))
    give_up = QTimer()
    give_up.setSingleShot(True)
    give_up.timeout.connect(lambda: (failed.append("no analysis after 600 s"), loop.quit()))
    give_up.start(600_000)
    t0 = time.perf_counter()
    session.open_path(root / CHARACTER)
    loop.exec()
    give_up.stop()
    if failed:
        raise SystemExit(f"the window did not load {root}: {failed[0]}")
    result: dict[str, object] = {
        "events": len(session.timeline().events),
        "first_rows": marks["first_rows"] - t0,
        "loaded": marks["loaded"] - t0,
        "analysis_shown": marks["analysis_shown"] - t0,
        "diagnosis": marks["diagnosis"],
    }

    if appends == 0:
        window.close()
        out.write_text(json.dumps(result))
        return 0
    arrived: dict[str, float] = {}

    def on_rows(_parent, first, last):  # type: ignore[no-untyped-def]
        now = time.monotonic()
        for pos in range(first, last + 1):
            row = model.row_at(pos)
            arrived.setdefault(getattr(row, "event_id", ""), now)

    model.rowsInserted.connect(on_rows)
    proc = subprocess.Popen(
        [sys.executable, __file__, "--writer", str(root), "--appends", str(appends)],
        stdout=subprocess.PIPE,
        text=True,
    )
    acks: dict[str, float] = {}
    assert proc.stdout is not None
    reader = QTimer()

    def pump() -> None:
        # Read the writer's acknowledgements without blocking the event loop for long.
        import select

        while select.select([proc.stdout], [], [], 0)[0]:
            line = proc.stdout.readline()
            if not line:
                break
            eid, ack = line.split()
            acks[eid] = float(ack)
        if proc.poll() is not None and len(acks) >= appends and all(e in arrived for e in acks):
            loop.quit()

    reader.timeout.connect(pump)
    reader.start(2)
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(loop.quit)
    deadline.start(int((appends * APPEND_INTERVAL + 120) * 1000))
    loop.exec()
    reader.stop()
    proc.wait(30)
    latencies = sorted(arrived[e] - a for e, a in acks.items() if e in arrived)
    result["appends"] = len(acks)
    result["arrived"] = len(latencies)
    result["latencies"] = latencies
    result["cost_watch"] = costs_watch
    result["cost_gui"] = costs_gui
    window.close()
    import resource

    result["maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out.write_text(json.dumps(result))
    return 0


# -- the parent ----------------------------------------------------------------------------------------


def run_window(root: Path, appends: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-gui-out-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, __file__, "--window", str(root), "--appends", str(appends), "--out", str(out)]
        proc = subprocess.Popen(cmd)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"window run failed with exit {os.waitstatus_to_exitcode(status)}")
        result = json.loads(out.read_text())
    result["peak_rss"] = usage.ru_maxrss * 1024
    return result


def measure_rediagnosis(char_dir: Path) -> tuple[float, int]:
    """Wall time and peak RSS of one re-diagnosis child process, as the window runs it."""
    cmd = [sys.executable, "-m", "inspector.core.rediagnose", str(char_dir), str(char_dir), CHARACTER, "0"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("the re-diagnosis child failed")
    return time.perf_counter() - t0, usage.ru_maxrss * 1024


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def ensure_character(root: Path, events: int, entries: int) -> Path:
    journal = root / CHARACTER / JOURNAL_NAME
    if not journal.exists():
        t0 = time.perf_counter()
        generate_character(root / CHARACTER, events, entries)
        print(f"generated {events:,} events over {entries:,} entries in {time.perf_counter() - t0:.1f} s")
    return journal


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--small", type=int, default=10_000, help="events of the small character (cost comparison)")
    ap.add_argument("--entries", type=int, default=4000)
    ap.add_argument("--appends", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3, help="best of N for the timings of opening")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR (reused when it already exists)")
    ap.add_argument("--writer", metavar="ROOT", help=argparse.SUPPRESS)
    ap.add_argument("--window", metavar="ROOT", help=argparse.SUPPRESS)
    ap.add_argument("--out", metavar="FILE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.writer:
        return writer(Path(args.writer), args.appends)
    if args.window:
        return window_run(Path(args.window), args.appends, Path(args.out))

    tmp = None
    base = Path(args.keep) if args.keep else Path(tmp := tempfile.mkdtemp(prefix="bench-gui-"))
    try:
        big, small = base / f"big-{args.events}", base / f"small-{args.small}"
        journal = ensure_character(big, args.events, args.entries)
        ensure_character(small, args.small, min(args.entries, max(10, args.small // 10)))
        # Appends change the folders: work on copies so --keep stays reusable.
        work = Path(tempfile.mkdtemp(prefix="bench-gui-work-", dir=base))
        shutil.copytree(big, work / "big")
        shutil.copytree(small, work / "small")
        journal = work / "big" / CHARACTER / JOURNAL_NAME
        print(f"journal: {args.events:,} events, {journal.stat().st_size / 1e6:.1f} MB")
        orjson_loop(journal)  # warm the page cache
        limit = min(orjson_loop(journal) for _ in range(3))
        small_run = run_window(work / "small", args.appends)
        big_run = run_window(work / "big", args.appends)
        opens = [big_run] + [run_window(work / "big", 0) for _ in range(args.repeat - 1)]
        rediag_wall, rediag_rss = measure_rediagnosis(work / "big" / CHARACTER)
        shutil.rmtree(work, ignore_errors=True)

        first = min(r["first_rows"] for r in opens)
        best = min(opens, key=lambda r: r["analysis_shown"])
        shown, diagnosis = best["analysis_shown"], best["diagnosis"]
        lat = big_run["latencies"]
        p50, p95 = percentile(lat, 0.5), percentile(lat, 0.95)
        rss = big_run["peak_rss"]

        def cost(run: dict) -> float:
            watch, gui = run["cost_watch"], run["cost_gui"]
            return (statistics.median(watch) if watch else 0.0) + (statistics.median(gui) if gui else 0.0)

        c_small, c_big = cost(small_run), cost(big_run)
        ok = lambda good: "OK" if good else "MISSED"  # noqa: E731
        print(f"orjson.loads loop (the limit):      {limit:7.2f} s   (best of 3; opening: best of {len(opens)})")
        print(f"first rows visible:                 {first:7.2f} s   (target <= 1 s)  {ok(first <= 1.0)}")
        print(f"full analysis shown:                {shown:7.2f} s   = {shown / limit:.2f}x the orjson loop "
              f"(target <= 2x)  {ok(shown <= 2 * limit)}")
        print(f"  of which journal.diagnosis.diagnose_path: {diagnosis:.2f} s ({diagnosis / limit:.2f}x); "
              f"the window's own share: {shown - diagnosis:.2f} s ({(shown - diagnosis) / limit:.2f}x)")
        print(f"peak RSS of the window process:     {rss / 2**20:7.0f} MiB (target <= 800 MB)  {ok(rss <= 800e6)}"
              f"   (a re-diagnosis child process: {rediag_wall:.1f} s, {rediag_rss / 2**20:.0f} MiB)")
        print(f"append -> row in model ({big_run['arrived']}/{big_run['appends']} appends): "
              f"p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms   (target p95 <= 250 ms)  {ok(p95 <= 0.25)}")
        print(f"incremental update cost (median per append, watcher read + GUI insert): "
              f"{small_run['events']:,} events {c_small * 1000:.2f} ms, {big_run['events']:,} events "
              f"{c_big * 1000:.2f} ms   = {c_big / c_small if c_small else float('nan'):.2f}x  "
              f"(must not grow)  {ok(c_big <= max(2 * c_small, c_small + 0.002))}")
        small_p95 = percentile(small_run["latencies"], 0.95)
        print(f"(small character: first rows {small_run['first_rows']:.2f} s, analysis shown "
              f"{small_run['analysis_shown']:.2f} s, append p95 {small_p95 * 1000:.0f} ms)")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
