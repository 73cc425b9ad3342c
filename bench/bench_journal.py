"""Benchmark: the journal's read path against bare JSON loops, and its write path against fsync.

Generates (once, into a temp folder) a journal of N realistic events: a few thousand distinct
reflection and persona entries, payloads shaped as in memory-format §3.5 (evidence snapshots,
state changes, merges, and archive events carrying full entry snapshots), non-ASCII text included.

Read: :func:`journal.read_journal` (every line classified, events kept, defects located) and
:func:`journal.iter_journal` (the same classification, batches dropped as it goes) against

* the limit: ``for line in open(p, 'rb'): orjson.loads(line)``;
* what the memory server does: a text-mode line loop with ``json.loads`` (stdlib).

Read targets (wall time, issue 28): ``iter_journal`` <= 0.9x the orjson loop and >= 3x faster than
the stdlib loop; ``read_journal`` (which keeps every event) <= 1.1x the orjson loop.

Write: :meth:`journal.EventLog.record_and_save` on a view of a few hundred reflections, appending
to the big generated journal (each call changes one field of one entry), against two fsync limits
measured with :mod:`journal.fs` on the same disk in the same run:

* (a) the fsyncs it must do: one durable append, an atomic replace of the view with its real
  bytes and an atomic replace of the sentinel; the target (>= 0.7x) is judged against this one;
* (b) one durable append plus two atomic replaces of small files: the same calls with no view to
  write, so it also counts the cost of writing the view's bytes against record_and_save.

Every figure is the best of ``--repeat`` rounds (rounds interleave the contenders).

Usage::

    .venv/bin/python bench/bench_journal.py [--events 1000000] [--writes 300] [--repeat 3] [--dir PATH]

It prints a table; it is not a timed test.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from journal import JOURNAL_NAME, EventLog, fs, iter_journal, last_event_id, read_journal, write_sentinel
from journal.events import Event, encode_event, make_event

CHARACTER = "Alice"

#: Read targets (wall): contender -> (at most this many times the orjson loop, at least this many
#: times faster than the stdlib loop, or None).
READ_TARGETS: dict[str, tuple[float, float | None]] = {
    "journal.iter_journal": (0.9, 3.0),
    "journal.read_journal": (1.1, None),
}
TEXTS = [
    "Master relaxes with green tea in the evening",
    "主人喜欢在晚上喝绿茶放松",
    "ご主人様は雨の日に本を読むのが好き",
    "Master is learning to play the piano and practises on Sundays",
    "主人最近工作很忙，经常加班到深夜",
    "Neko and Master watched the fireworks together; 一起看了烟花",
    "Master dislikes coriander (香菜) intensely",
    "Master's cat is called Mochi もち and sleeps on the keyboard",
]
SOURCES = ["user_fact", "user_confirm", "user_rebut", "user_ignore", "user_keyword_rebut", "archive_sweep"]


# -- generation ------------------------------------------------------------------------------------


def uuid4_str(rng: random.Random) -> str:
    """A canonical uuid4 string from a seeded generator (reproducible journals)."""
    h = f"{rng.getrandbits(128):032x}"
    h = h[:12] + "4" + h[13:16] + "89ab"[int(h[16], 16) % 4] + h[17:]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Generator:
    """Realistic events over a fixed population of reflection and persona entries."""

    def __init__(self, rng: random.Random, reflections: int = 3000, persona: int = 1500) -> None:
        self.rng = rng
        self.ref_ids = [f"ref_{rng.getrandbits(64):016x}" for _ in range(reflections)]
        self.persona = [
            (rng.choice(["master", "neko", "relationship", "@subject/group_chat:9f2c"]), f"prom_{rid}")
            for rid in self.ref_ids[:persona]
        ]
        self.t = 1_767_225_600.0  # 2026-01-01, local naive timestamps follow

    def ts(self) -> str:
        self.t += self.rng.uniform(0.5, 30.0)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.t)) + f".{self.rng.randint(0, 999999):06d}"

    def evidence(self) -> dict[str, Any]:
        rng = self.rng
        return {
            "reinforcement": round(rng.uniform(-3, 6), 6),
            "disputation": round(rng.uniform(0, 3), 6),
            "rein_last_signal_at": self.ts() if rng.random() < 0.8 else None,
            "disp_last_signal_at": self.ts() if rng.random() < 0.4 else None,
            "sub_zero_days": rng.randint(0, 20),
            "user_fact_reinforce_count": rng.randint(0, 12),
        }

    def reflection_entry(self, rid: str) -> dict[str, Any]:
        rng = self.rng
        return {
            "id": rid,
            "text": rng.choice(TEXTS),
            "entity": rng.choice(["master", "neko", "relationship"]),
            "status": rng.choice(["promoted", "denied"]),
            "source_fact_ids": sorted(
                f"fact_20260{rng.randint(1, 6)}0112{rng.randint(1000, 9999)}_{rng.getrandbits(32):08x}"
                for _ in range(rng.randint(1, 4))
            ),
            "created_at": self.ts(),
            "feedback": None,
            "next_eligible_at": self.ts(),
            **self.evidence(),
            "sub_zero_last_increment_date": None,
            "last_promote_attempt_at": self.ts(),
            "promote_attempt_count": rng.randint(0, 5),
            "promoted_at": self.ts(),
            "recent_mentions": [],
            "suppress": False,
            "suppressed_at": None,
            "relation_type": None,
            "subject": None,
            "temporal_scope": None,
            "event_when_raw": None,
            "event_start_at": None,
            "event_end_at": None,
            "schema_version": 2,
            "embedding": None,
            "embedding_text_sha256": None,
            "embedding_model_id": None,
        }

    def event(self) -> Event:
        rng = self.rng
        roll = rng.random()
        if roll < 0.60:
            payload: dict[str, Any] = {"reflection_id": rng.choice(self.ref_ids), **self.evidence()}
            if rng.random() < 0.2:
                payload["sub_zero_last_increment_date"] = self.ts()[:10]
            if rng.random() < 0.1:
                payload["last_promote_attempt_at"] = self.ts()
                payload["promote_attempt_count"] = rng.randint(1, 5)
            payload["source"] = rng.choice(SOURCES)
            etype = "reflection.evidence_updated"
        elif roll < 0.80:
            entity, entry = rng.choice(self.persona)
            payload = {"entity_key": entity, "entry_id": entry, **self.evidence(), "source": rng.choice(SOURCES)}
            etype = "persona.evidence_updated"
        elif roll < 0.88:
            to = rng.choice(["confirmed", "promoted", "merged", "denied", "promote_blocked"])
            payload = {"reflection_id": rng.choice(self.ref_ids), "from": "pending", "to": to, "ts": self.ts()}
            if to == "merged":
                payload["absorbed_into"] = rng.choice(self.persona)[1]
            if to in ("denied", "promote_blocked"):
                payload["reason"] = "max promote attempts" if to == "promote_blocked" else "user rebuttal"
            etype = "reflection.state_changed"
        elif roll < 0.92:
            entity, entry = rng.choice(self.persona)
            merge_ts = self.ts()
            payload = {
                "entity_key": entity,
                "entry_id": entry,
                "rewrite_text_sha256": hashlib.sha256(rng.choice(TEXTS).encode()).hexdigest(),
                "reinforcement": round(rng.uniform(0, 6), 6),
                "disputation": 0.0,
                "rein_last_signal_at": merge_ts,
                "disp_last_signal_at": merge_ts,
                "sub_zero_days": 0,
                "merged_from_ids": rng.sample(self.ref_ids, rng.randint(1, 4)),
                "source": "promote_merge",
                "event_when_raw": None,
                "event_start_at": merge_ts,
                "event_end_at": None,
                "speaker_provenance": {"speaker_id": "master", "speaker_trust": 1.0},
            }
            etype = "persona.entry_updated"
        elif roll < 0.97:
            rid = rng.choice(self.ref_ids)
            at = self.ts()
            shard = f"{at[:10]}_{rng.getrandbits(32):08x}.json"
            snapshot = {
                **self.reflection_entry(rid),
                "archived_at": at,
                "status": "archived",
                "archive_shard_path": shard,
            }
            payload = {
                "reflection_id": rid,
                "from": "promoted",
                "to": "archived",
                "archive_shard_path": shard,
                "archived_at": at,
                "entry_snapshot": snapshot,
            }
            etype = "reflection.state_changed"
        else:
            entity, entry = rng.choice(self.persona)
            at = self.ts()
            shard = f"{at[:10]}_{rng.getrandbits(32):08x}.json"
            text = rng.choice(TEXTS)
            snapshot = {
                "id": entry,
                "text": text,
                "source": "reflection",
                "source_id": entry[5:],
                "protected": False,
                "recent_mentions": [],
                "suppress": False,
                "suppressed_at": None,
                **self.evidence(),
                "sub_zero_last_increment_date": at[:10],
                "merged_from_ids": [entry[5:]],
                "version_history": [
                    {"text": rng.choice(TEXTS), "replaced_at": self.ts(), "reason": "merge", "source_fact_id": None}
                ],
                "archived_at": at,
                "archive_shard_path": shard,
            }
            payload = {
                "entity_key": entity,
                "entry_id": entry,
                "archive_shard_path": shard,
                "archived_at": at,
                "text": text,
                "source": "reflection",
                "entry_snapshot": snapshot,
            }
            etype = "persona.fact_added"
        return make_event(uuid4_str(rng), etype, self.ts(), payload)


def generate(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    gen = Generator(rng)
    with open(path, "wb") as fh:
        batch: list[bytes] = []
        for _ in range(n):
            batch.append(encode_event(gen.event()))
            if len(batch) == 10_000:
                fh.write(b"".join(batch))
                batch.clear()
        fh.write(b"".join(batch))


def make_view(rng: random.Random, entries: int) -> list[dict[str, Any]]:
    gen = Generator(rng, reflections=entries, persona=0)
    return [{**gen.reflection_entry(rid), "status": "confirmed"} for rid in gen.ref_ids]


# -- read contenders ---------------------------------------------------------------------------------


def orjson_loop(path: Path) -> int:
    n = 0
    loads = orjson.loads
    with open(path, "rb") as fh:
        for line in fh:
            loads(line)
            n += 1
    return n


def stdlib_loop(path: Path) -> int:
    # The memory server: text-mode lines, stripped, blank ones skipped, json.loads each.
    n = 0
    loads = json.loads
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            loads(line)
            n += 1
    return n


def reader_whole(path: Path) -> int:
    result = read_journal(path)
    if result.defects:
        raise AssertionError(f"unexpected defects: {result.defects[:3]}")
    return len(result.events)


def reader_streaming(path: Path) -> int:
    n = 0
    for events, defects in iter_journal(path):
        if defects:
            raise AssertionError(f"unexpected defects: {defects[:3]}")
        n += len(events)
    return n


def timed(fn: Callable[[Path], int], path: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of this process, records seen) for one run of ``fn``."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    n = fn(path)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    gc.collect()  # free what the contender kept, outside its timing
    return wall, cpu, n


# -- write contenders ---------------------------------------------------------------------------------


SMALL = b'{\n  "last_applied_event_id": "00000000-0000-4000-8000-000000000000",\n  "ts": "2026-01-01T00:00:00"\n}'


def fsync_limit(folder: Path, writes: int, line: bytes, view: bytes = SMALL) -> tuple[float, float]:
    """(wall seconds, CPU seconds) for ``writes`` x (one durable append + two atomic replaces).

    With ``view`` set to the real view's bytes it is the I/O alone of record_and_save (no JSON work);
    by default both replaced files are small.
    """
    folder.mkdir(parents=True, exist_ok=True)
    journal = folder / JOURNAL_NAME
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(writes):
        fs.durable_append(journal, line)
        fs.atomic_write_bytes(folder / "view.json", view)
        fs.atomic_write_bytes(folder / "events_applied.json", SMALL)
    return time.perf_counter() - wall, time.process_time() - cpu


def record_and_save_loop(log: EventLog, writes: int, ids: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) for ``writes`` record_and_save calls, each changing one entry."""

    def bump(view: list[dict[str, Any]]) -> None:
        view[i % len(view)]["reinforcement"] = i / 10

    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(writes):
        payload = {"reflection_id": ids[i % len(ids)], "reinforcement": i / 10, "source": "user_fact"}
        log.record_and_save(CHARACTER, "reflection.evidence_updated", payload, bump, view="reflections.json")
    return time.perf_counter() - wall, time.process_time() - cpu


# -- main -----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated journal")
    parser.add_argument("--writes", type=int, default=300, help="record_and_save calls per round")
    parser.add_argument("--entries", type=int, default=300, help="reflections in the view record_and_save saves")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best of each is reported")
    parser.add_argument("--seed", type=int, default=20260501)
    parser.add_argument("--dir", type=Path, help="work folder (default: a new temp folder, removed at the end)")
    parser.add_argument("--skip-whole", action="store_true", help="skip read_journal (keeps every event in memory)")
    args = parser.parse_args(argv)

    own_dir = args.dir is None
    work = Path(tempfile.mkdtemp(prefix="bench-journal-")) if own_dir else args.dir
    work.mkdir(parents=True, exist_ok=True)
    try:
        return run(args, work)
    finally:
        if own_dir:
            shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path) -> int:
    root = work / "memory"
    cd = root / CHARACTER
    cd.mkdir(parents=True, exist_ok=True)
    journal = cd / JOURNAL_NAME
    marker = work / f"generated-{args.events}-{args.seed}"
    if not marker.exists() or not journal.exists():
        print(f"generating {args.events:,} events into {journal} ...", flush=True)
        start = time.perf_counter()
        generate(journal, args.events, args.seed)
        marker.write_text(str(journal.stat().st_size))
        print(f"  {time.perf_counter() - start:.1f} s", flush=True)
    size = int(marker.read_text())
    os.truncate(journal, size)  # drop what an earlier run's record_and_save appended
    print(
        f"journal: {args.events:,} events, {size / 2**20:.1f} MiB ({size / args.events:.0f} B/line); "
        f"python {sys.version.split()[0]}, orjson {orjson.__version__}, {os.cpu_count()} CPUs",
        flush=True,
    )

    contenders: list[tuple[str, Callable[[Path], int]]] = [
        ("orjson line loop (limit)", orjson_loop),
        ("stdlib json line loop (server)", stdlib_loop),
        ("journal.iter_journal", reader_streaming),
    ]
    if not args.skip_whole:
        contenders.append(("journal.read_journal", reader_whole))
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for round_no in range(args.repeat):
        for name, fn in contenders:
            w, c, n = timed(fn, journal)
            if n != args.events:
                raise AssertionError(f"{name} saw {n} records, expected {args.events}")
            wall[name] = min(wall.get(name, float("inf")), w)
            cpu[name] = min(cpu.get(name, float("inf")), c)
            print(f"  round {round_no + 1}: {name:<32} {w:7.2f} s wall {c:7.2f} s cpu", flush=True)

    # Writes: record_and_save appends to the big journal, so they run after the reads.
    rng = random.Random(args.seed + 1)
    view = make_view(rng, args.entries)
    fs.atomic_write_json(cd / "reflections.json", view)
    ids = [e["id"] for e in view]
    log = EventLog(root)
    write_sentinel(cd, last_event_id(journal)[1])  # a healthy folder: the sentinel advances
    line = encode_event(
        make_event(
            "00000000-0000-4000-8000-000000000000",
            "reflection.evidence_updated",
            "2026-01-01T00:00:00",
            {"reflection_id": ids[0], "reinforcement": 1.0},
        )
    )
    view_bytes = (cd / "reflections.json").stat().st_size
    view_data = (cd / "reflections.json").read_bytes()
    inf = float("inf")
    best: dict[str, tuple[float, float]] = {"must": (inf, inf), "small": (inf, inf), "record": (inf, inf)}
    for round_no in range(args.repeat):
        # Interleaved: (b), record_and_save, (a); the best wall and the best CPU of each are kept.
        times = {
            "small": fsync_limit(work / f"limit{round_no}", args.writes, line),
            "record": record_and_save_loop(log, args.writes, ids),
            "must": fsync_limit(work / f"io{round_no}", args.writes, line, view_data),
        }
        for name, (w, c) in times.items():
            best[name] = (min(best[name][0], w), min(best[name][1], c))
        print(
            f"  round {round_no + 1}: limit (a) {args.writes / times['must'][0]:7.1f}/s   "
            f"limit (b) {args.writes / times['small'][0]:7.1f}/s   "
            f"record_and_save {args.writes / times['record'][0]:7.1f}/s",
            flush=True,
        )
    sentinel = json.loads((cd / "events_applied.json").read_bytes())["last_applied_event_id"]
    if sentinel != last_event_id(journal)[1]:
        raise AssertionError("the sentinel did not follow record_and_save")
    os.truncate(journal, size)

    base_w, base_c = wall["orjson line loop (limit)"], cpu["orjson line loop (limit)"]
    std_w, std_c = wall["stdlib json line loop (server)"], cpu["stdlib json line loop (server)"]
    print()
    print(
        f"READ  N = {args.events:,} events, {size / 2**20:.0f} MiB, best of {args.repeat}; "
        f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(
        f"  {'contender':<32} {'wall':>8} {'cpu':>8}  {'vs orjson (wall/cpu)':>21}  "
        f"{'faster than stdlib (wall/cpu)':>30}  targets (wall)"
    )
    for name, _ in contenders:
        w, c = wall[name], cpu[name]
        line_out = (
            f"  {name:<32} {w:7.2f}s {c:7.2f}s  {w / base_w:9.2f}x / {c / base_c:5.2f}x  "
            f"{std_w / w:17.2f}x / {std_c / c:5.2f}x"
        )
        target = READ_TARGETS.get(name)
        if target is not None:
            most, least = target
            verdicts = [f"<= {most:.1f}x orjson: {'met' if w / base_w <= most else 'NOT met'}"]
            if least is not None:
                verdicts.append(f">= {least:.0f}x faster than stdlib: {'met' if std_w / w >= least else 'NOT met'}")
            line_out += "  " + ", ".join(verdicts)
        print(line_out)
    per_s = {name: args.writes / w for name, (w, _) in best.items()}
    cpu_ms = {name: c / args.writes * 1000 for name, (_, c) in best.items()}
    ratio_must, ratio_small = per_s["record"] / per_s["must"], per_s["record"] / per_s["small"]
    print()
    print(
        f"WRITE view of {args.entries} reflections ({view_bytes / 1024:.0f} KiB), journal of {args.events:,} events, "
        f"{args.writes} calls per round, best of {args.repeat}"
    )
    kib = f"{view_bytes / 1024:.0f} KiB"
    rows = [
        ("must", f"(a) the fsyncs it must do: 1 durable append + atomic replace of the {kib} view + of the sentinel"),
        ("small", "(b) 1 durable append + 2 atomic replaces of small files"),
        ("record", "EventLog.record_and_save"),
    ]
    width = max(len(label) for _, label in rows)
    print(f"  {'':<{width}} {'calls/s':>8} {'CPU/call':>10}")
    for name, label in rows:
        print(f"  {label:<{width}} {per_s[name]:8.1f} {cpu_ms[name]:7.2f} ms")
    print(
        f"  ratio vs (a), the fsyncs it must do: {ratio_must:.2f}x   target >=0.7x: "
        f"{'met' if ratio_must >= 0.7 else 'NOT met'}"
    )
    print(
        f"  ratio vs (b), small files:           {ratio_small:.2f}x   target >=0.7x: "
        f"{'met' if ratio_small >= 0.7 else 'NOT met'}   ((a) itself is {per_s['must'] / per_s['small']:.2f}x of (b))"
    )
    print(
        f"  CPU per call beyond the I/O of (a): {cpu_ms['record'] - cpu_ms['must']:.2f} ms "
        "(loading, checking and encoding the view, the event, the sentinel check)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
