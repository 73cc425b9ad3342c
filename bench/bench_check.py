"""Benchmark ``memory-inspector check --json`` on a generated 1,000,000-event character.

    .venv/bin/python bench/bench_check.py [--events N] [--entries N] [--repeat N] [--keep DIR] [--profile N]

One run measures, on the same file and the same (warm) page cache, round by round (the loop,
then ``check``, then jq, ``--repeat`` times; the best of each is reported):

- ``check``: ``memory-inspector check PATH --json`` as a child process (wall time including
  interpreter start-up, and its peak RSS from ``wait4``);
- the limit: a bare ``for line in f: orjson.loads(line)`` loop over the journal's lines, in this
  process;
- what a support engineer runs today: ``jq -c 'select(.type == "persona.entry_updated")'``.

Targets: check <= 1.0x the orjson loop, >= 5x faster than jq, peak RSS <= 500 MB.
``--profile N`` then runs ``check`` once more under cProfile and prints its N most expensive
functions (own time and cumulative time), to say where the time goes.
The generated character is healthy and realistic: a few thousand reflections and persona
entries, evidence updates, merges with matching text hashes, lifecycle changes and archives,
views that hold the final state, and the sentinel on the last event.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from journal.events import JOURNAL_NAME, encode_event, make_event  # noqa: E402
from journal.fixtures import persona_entry  # noqa: E402
from journal.fs import atomic_write_json  # noqa: E402
from journal.views import PERSONA, REFLECTIONS  # noqa: E402

CHARACTER = "bench"
EVIDENCE = (
    "reinforcement",
    "disputation",
    "rein_last_signal_at",
    "disp_last_signal_at",
    "sub_zero_days",
    "user_fact_reinforce_count",
)


def _ts(rng_base: float, i: int) -> str:
    # Naive local ISO timestamps, one every ~2 s, as the server writes them.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(rng_base + 2 * i)) + f".{(i * 7919) % 1000000:06d}"


def generate_character(char_dir: Path, events: int, entries: int, seed: int = 4) -> None:
    """Write a healthy character folder with ``events`` journal events over ``entries`` entries."""
    rng = random.Random(seed)
    char_dir.mkdir(parents=True, exist_ok=True)
    n_refl = max(1, entries * 3 // 4)
    n_pers = max(1, entries - n_refl)
    keys = ("master", "neko", "relationship")
    reflections = {}
    for i in range(n_refl):
        rid = f"ref_{hashlib.sha256(f'r{i}'.encode()).hexdigest()[:16]}"
        reflections[rid] = {
            "id": rid,
            "text": f"Reflection number {i}: master likes tea at {i % 24}h",
            "entity": keys[i % 3],
            "status": "pending",
            "source_fact_ids": [f"fact_{i}_a", f"fact_{i}_b"],
            "created_at": "2026-01-01T10:00:00",
            "feedback": None,
            "next_eligible_at": None,
            "reinforcement": 0.0,
            "disputation": 0.0,
            "rein_last_signal_at": None,
            "disp_last_signal_at": None,
            "sub_zero_days": 0,
            "sub_zero_last_increment_date": None,
            "user_fact_reinforce_count": 0,
        }
    persona: dict = {k: {"facts": []} for k in keys}
    pers_index = []
    for i in range(n_pers):
        key = keys[i % 3]
        eid = f"prom_ref_{hashlib.sha256(f'p{i}'.encode()).hexdigest()[:16]}"
        entry = persona_entry(eid, f"Persona fact {i}: 主人 drinks green tea")
        persona[key]["facts"].append(entry)
        pers_index.append((key, entry))
    refl_ids = list(reflections)
    base = time.mktime((2026, 1, 1, 0, 0, 0, 0, 0, -1))
    archived: set[str] = set()
    last_id = None
    n_archive = min(len(refl_ids) // 10, events // 100)
    archive_from = events - n_archive
    with open(char_dir / JOURNAL_NAME, "wb", buffering=1 << 20) as fh:
        for i in range(events):
            ts = _ts(base, i)
            eid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            r = rng.random()
            values = {
                "reinforcement": round(rng.random() * 3, 3),
                "disputation": round(rng.random(), 3),
                "rein_last_signal_at": ts,
                "disp_last_signal_at": None,
                "sub_zero_days": rng.randrange(3),
                "user_fact_reinforce_count": rng.randrange(5),
            }
            if i >= archive_from:
                rid = refl_ids[i - archive_from]
                entry = reflections[rid]
                shard = f"2026-02-{1 + (i - archive_from) // 500 % 28:02d}_{(i - archive_from) // 500:08x}.json"
                snap = {**entry, "archived_at": ts, "status": "archived", "archive_shard_path": shard}
                payload = {
                    "reflection_id": rid,
                    "from": entry["status"],
                    "to": "archived",
                    "archive_shard_path": shard,
                    "archived_at": ts,
                    "entry_snapshot": snap,
                }
                etype = "reflection.state_changed"
                archived.add(rid)
                shard_dir = char_dir / "reflection_archive"
                shard_dir.mkdir(exist_ok=True)
                shard_file = shard_dir / shard
                current = json.loads(shard_file.read_text()) if shard_file.exists() else []
                current.append(snap)
                shard_file.write_text(json.dumps(current, indent=2, ensure_ascii=False))
            elif r < 0.55:
                rid = refl_ids[rng.randrange(len(refl_ids))]
                payload = {"reflection_id": rid, **values, "source": "user_fact"}
                reflections[rid].update(values)
                etype = "reflection.evidence_updated"
            elif r < 0.88:
                key, entry = pers_index[rng.randrange(len(pers_index))]
                payload = {"entity_key": key, "entry_id": entry["id"], **values, "source": "user_confirm"}
                entry.update(values)
                etype = "persona.evidence_updated"
            elif r < 0.94:
                key, entry = pers_index[rng.randrange(len(pers_index))]
                merged = [*entry["merged_from_ids"], refl_ids[rng.randrange(len(refl_ids))]][-8:]
                payload = {
                    "entity_key": key,
                    "entry_id": entry["id"],
                    "rewrite_text_sha256": hashlib.sha256(entry["text"].encode()).hexdigest(),
                    **values,
                    "disp_last_signal_at": ts,
                    "sub_zero_days": 0,
                    "merged_from_ids": merged,
                    "source": "promote_merge",
                }
                entry.update({k: payload[k] for k in EVIDENCE})
                entry["merged_from_ids"] = merged
                etype = "persona.entry_updated"
            else:
                rid = refl_ids[rng.randrange(len(refl_ids))]
                to = rng.choice(("confirmed", "promoted", "denied"))
                payload = {"reflection_id": rid, "from": reflections[rid]["status"], "to": to, "ts": ts}
                reflections[rid]["status"] = to
                reflections[rid][f"{to}_at"] = ts
                etype = "reflection.state_changed"
            fh.write(encode_event(make_event(eid, etype, ts, payload)))
            last_id = eid
    atomic_write_json(
        char_dir / REFLECTIONS, [e for rid, e in reflections.items() if rid not in archived], durable=False
    )
    atomic_write_json(char_dir / PERSONA, persona, durable=False)
    atomic_write_json(
        char_dir / "events_applied.json", {"last_applied_event_id": last_id, "ts": "2026-03-01T00:00:00"}, durable=False
    )



@contextlib.contextmanager
def bench_character(keep: str | None, events: int, entries: int, prefix: str) -> Iterator[Path]:
    """The benchmark's character folder: generated into ``keep`` (reused when its journal is
    there already), or into a temporary folder removed afterwards."""
    tmp = None if keep else tempfile.mkdtemp(prefix=prefix)
    root = Path(keep) if keep else Path(tmp or "")
    char_dir = root / CHARACTER
    try:
        journal = char_dir / JOURNAL_NAME
        if not journal.exists():
            t0 = time.perf_counter()
            generate_character(char_dir, events, entries)
            print(f"generated {events:,} events over {entries:,} entries in {time.perf_counter() - t0:.1f} s")
        yield char_dir
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

def orjson_loop(path: Path) -> tuple[float, float]:
    """Wall and CPU seconds of a bare ``orjson.loads`` loop over the file's lines."""
    t0, c0 = time.perf_counter(), time.process_time()
    loads = orjson.loads
    with open(path, "rb") as fh:
        for line in fh:
            loads(line)
    return time.perf_counter() - t0, time.process_time() - c0


def run_child(cmd: list[str]) -> tuple[float, int, int, bytes, float]:
    """Wall time, peak RSS (bytes), exit code, stderr and CPU seconds (user + system, its own
    children included) of a child process; stdout and stderr go to temp files (a pipe read only
    after the child ends would block a child that writes more than the pipe holds)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(cmd, stdout=out, stderr=errors)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        err = errors.read()
    rss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return wall, rss, proc.returncode, err, usage.ru_utime + usage.ru_stime


def precompile() -> None:
    """Compile the project's modules to bytecode (``__pycache__``, ignored by git).

    A program's modules are compiled once: ``pip install`` of a package compiles them, and an
    editable install writes the bytecode on its first run. Unless, as on these machines,
    ``PYTHONDONTWRITEBYTECODE`` is set: then every ``check`` would compile ~5,000 lines of this
    project again (~80 ms), which no installed copy does.
    """
    ok = all(compileall.compile_dir(ROOT / pkg, quiet=1) for pkg in ("journal", "inspector"))
    print(f"bytecode: journal/ and inspector/ precompiled ({'ok' if ok else 'FAILED'}; --no-precompile to skip)")


#: Targets: check / loop, jq / check, peak RSS of check (bytes).
TARGET_VS_LOOP = 1.0
TARGET_VS_JQ = 5.0
TARGET_RSS = 500e6


_PROFILE_CHILD = """
import cProfile, os, sys
out, path = sys.argv[1:]
prof = cProfile.Profile()
prof.enable()
from inspector import check_cmd
from inspector.cli import main

def leave_now(code):
    prof.disable()
    prof.dump_stats(out)
    sys.stdout.flush()
    os._exit(code)

check_cmd.leave_now = leave_now
main(["check", path, "--json"], exit_now=True)
"""


def profile_check(char_dir: Path, top: int) -> None:
    """Run ``check --json`` once under cProfile (a child process) and print where its time goes."""
    with tempfile.TemporaryDirectory(prefix="bench-check-prof-") as tmp:
        stats_file = Path(tmp) / "check.prof"
        # ``check`` ends its process with os._exit once its output is flushed (cProfile's own -o
        # would never be written), so the profile is dumped just before that exit.
        cmd = [sys.executable, "-c", _PROFILE_CHILD, str(stats_file), str(char_dir)]
        wall, _, code, err, _ = run_child(cmd)
        if code not in (0, 1):
            print(f"profiled check failed: exit {code}: {err.decode(errors='replace')}", file=sys.stderr)
            return
        import pstats

        stats = pstats.Stats(str(stats_file))
        total = stats.total_tt  # type: ignore[attr-defined]
        print(f"\ncProfile of check --json: {wall:.2f} s wall under the profiler, {total:.2f} s profiled")
        for key, title in (("tottime", "own time"), ("cumulative", "cumulative time")):
            print(f"-- top {top} by {title} --")
            width = 0
            rows = []
            for func, (_cc, ncalls, tt, ct, _callers) in sorted(
                stats.stats.items(),  # type: ignore[attr-defined]
                key=lambda kv: kv[1][2] if key == "tottime" else kv[1][3],
                reverse=True,
            )[:top]:
                filename, line, name = func
                where = f"{name} ({_short(filename)}:{line})" if line else name
                width = max(width, len(where))
                rows.append((where, ncalls, tt, ct))
            print(f"  {'function':<{width}} {'calls':>9} {'own s':>7} {'cum s':>7} {'own %':>6}")
            for where, ncalls, tt, ct in rows:
                print(f"  {where:<{width}} {ncalls:>9} {tt:7.2f} {ct:7.2f} {100 * tt / total:5.1f}%")


def _short(filename: str) -> str:
    try:
        return str(Path(filename).resolve().relative_to(ROOT))
    except ValueError:
        return Path(filename).name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--entries", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; the best of N of each measurement is reported")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR (reused when it already exists)")
    ap.add_argument("--profile", type=int, metavar="N", default=0,
                    help="then profile one check run and print its N most expensive functions")
    ap.add_argument(
        "--no-precompile",
        action="store_true",
        help="do not compile journal/ and inspector/ to bytecode first (start-up then compiles them)",
    )
    args = ap.parse_args(argv)
    if not args.no_precompile:
        precompile()

    with bench_character(args.keep, args.events, args.entries, "bench-check-") as char_dir:
        journal = char_dir / JOURNAL_NAME
        size = journal.stat().st_size
        print(f"journal: {journal} ({size / 1e6:.1f} MB)")
        orjson_loop(journal)  # warm the page cache

        check_cmd = [sys.executable, "-m", "inspector", "check", str(char_dir), "--json"]
        jq = shutil.which("jq")
        jq_cmd = None if jq is None else [jq, "-c", 'select(.type == "persona.entry_updated")', str(journal)]
        # Rounds of (loop, check, jq), so that each comparison is made under the same load from
        # the machine's other tenants; the best of each is kept.
        loops, runs, jq_runs = [], [], []
        for round_no in range(args.repeat):
            loops.append(orjson_loop(journal))
            runs.append(run_child(check_cmd))
            if jq_cmd is not None:
                jq_runs.append(run_child(jq_cmd))
            line = f"  round {round_no + 1}: loop {loops[-1][0]:.2f} s, check {runs[-1][0]:.2f} s"
            if jq_runs:
                line += f", jq {jq_runs[-1][0]:.2f} s"
            print(line, flush=True)
        best_loop, cpu_loop = min(w for w, _ in loops), min(c for _, c in loops)
        best_check = min(r[0] for r in runs)
        cpu_check = min(r[4] for r in runs)
        peak = max(r[1] for r in runs)
        codes = {r[2] for r in runs}
        if codes - {0, 1}:
            print(f"check failed: exit {codes}: {runs[0][3].decode(errors='replace')}", file=sys.stderr)
            return 1
        best_jq = cpu_jq = None
        if jq_runs:
            best_jq, cpu_jq = min(r[0] for r in jq_runs), min(r[4] for r in jq_runs)

        ok = lambda good: "OK" if good else "MISSED"  # noqa: E731
        print(f"best of {args.repeat} rounds; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"orjson.loads loop (the limit):    {best_loop:6.2f} s wall  {cpu_loop:6.2f} s CPU")
        print(f"check --json (child process):     {best_check:6.2f} s wall  {cpu_check:6.2f} s CPU   "
              f"exit {sorted(codes)}")
        if best_jq is not None:
            print(f"jq select(persona.entry_updated): {best_jq:6.2f} s wall  {cpu_jq:6.2f} s CPU")
        ratio = best_check / best_loop
        print(f"check / orjson loop: {ratio:.2f}x   (target <= {TARGET_VS_LOOP:.1f}x)  {ok(ratio <= TARGET_VS_LOOP)}"
              f"   [CPU: {cpu_check / cpu_loop:.2f}x]")
        if best_jq is not None and cpu_jq is not None:
            speedup = best_jq / best_check
            print(f"jq / check: {speedup:.2f}x faster   (target >= {TARGET_VS_JQ:.0f}x)  {ok(speedup >= TARGET_VS_JQ)}"
                  f"   [CPU: {cpu_jq / cpu_check:.2f}x]")
        else:
            print("jq not installed: jq comparison skipped")
        print(f"peak RSS of check: {peak / 2**20:.0f} MiB = {peak / 1e6:.0f} MB   "
              f"(target <= {TARGET_RSS / 1e6:.0f} MB)  {ok(peak <= TARGET_RSS)}")
        if args.profile:
            profile_check(char_dir, args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
