"""Benchmark: replay of pending evidence events vs the fsync limit of the same disk.

Builds a character folder with realistic views (memory-format §2.2/§2.3: a few hundred reflections
and persona entries with their full field sets), appends N pending ``reflection.evidence_updated``
/ ``persona.evidence_updated`` events (every one changes its entry, so every step must save its
view), then reconciles it with the real :class:`journal.Reconciler`.

The limit is what each replay step must do on disk whatever the code around it: one atomic
durable replace of the view plus one of the sentinel. It is measured in the same run, on the same
disk, with :mod:`journal.fs` on small files, so the ratio says how much the reconciler's own work
(reading the sentinel, loading, applying, serialising) costs on top of the fsyncs.

The disk's fsync latency drifts (other processes share it), so the limit is measured *during*
the replay, in short blocks between events, and that time is excluded from the replay's. Two limits
are printed: the one over small files, and the same two replaces with a view file as large as the
real views (the fsync of a few hundred KiB costs more than that of a few bytes).

Usage::

    .venv/bin/python bench/bench_replay.py [--events 10000] [--entries 300] [--dir PATH] [--profile]

Prints figures and ratios; it is not a timed test.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import pstats
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from journal import EventLog, ReconcileHooks, Reconciler, fs
from journal.events import JOURNAL_NAME, Event, encode_event, new_event
from journal.views import PERSONA, REFLECTIONS, write_sentinel

CHARACTER = "Alice"


def _ts(rng: random.Random) -> str:
    day = f"2026-0{rng.randint(1, 6)}-{rng.randint(10, 28)}"
    return f"{day}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:00.{rng.randint(100000, 999999)}"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def make_reflection(rng: random.Random, i: int) -> dict[str, Any]:
    """A reflection with the fields of memory-format §2.2."""
    status = rng.choice(["pending", "confirmed", "confirmed", "promoted", "merged", "promote_blocked"])
    return {
        "id": f"ref_{_hex(rng, 16)}",
        "text": f"主人 likes to relax with green tea in the evening, variant {i}; 今晚也一起喝茶吧。",
        "entity": rng.choice(["master", "neko", "relationship"]),
        "status": status,
        "source_fact_ids": sorted(f"fact_20260423{rng.randint(100000, 999999)}_{_hex(rng, 8)}" for _ in range(3)),
        "created_at": _ts(rng),
        "feedback": None,
        "next_eligible_at": _ts(rng),
        "reinforcement": round(rng.uniform(0, 3), 3),
        "disputation": round(rng.uniform(0, 1), 3),
        "rein_last_signal_at": _ts(rng),
        "disp_last_signal_at": None,
        "sub_zero_days": rng.randint(0, 5),
        "sub_zero_last_increment_date": None,
        "user_fact_reinforce_count": rng.randint(0, 4),
        "last_promote_attempt_at": None,
        "promote_attempt_count": 0,
        "confirmed_at": _ts(rng),
        "absorbed_into": None,
        "promote_blocked_reason": None,
        "auto_confirmed": False,
        "recent_mentions": [],
        "suppress": False,
        "suppressed_at": None,
        "relation_type": None,
        "subject": "habit",
        "temporal_scope": None,
        "event_when_raw": None,
        "event_start_at": None,
        "event_end_at": None,
        "schema_version": 2,
        "embedding": None,
        "embedding_text_sha256": None,
        "embedding_model_id": None,
        "last_refine_cluster_hash": None,
        "last_refine_at": None,
    }


def make_persona_entry(rng: random.Random, i: int) -> dict[str, Any]:
    """A persona entry with the fields of memory-format §2.3."""
    text = f"Master drinks green tea every evening ({i}); 喜欢抹茶。"
    return {
        "id": f"prom_ref_{_hex(rng, 16)}",
        "text": text,
        "source": "reflection",
        "source_id": f"ref_{_hex(rng, 16)}",
        "protected": False,
        "recent_mentions": [],
        "suppress": False,
        "suppressed_at": None,
        "reinforcement": round(rng.uniform(0, 3), 3),
        "disputation": 0.0,
        "rein_last_signal_at": _ts(rng),
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "sub_zero_last_increment_date": None,
        "user_fact_reinforce_count": rng.randint(0, 3),
        "merged_from_ids": [f"ref_{_hex(rng, 16)}"],
        "token_count": rng.randint(8, 40),
        "token_count_text_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "token_count_tokenizer": "cl100k_base",
        "embedding": None,
        "embedding_text_sha256": None,
        "embedding_model_id": None,
        "version_history": [],
        "last_refine_cluster_hash": None,
        "last_refine_at": None,
    }


def build_folder(root: Path, n_events: int, n_entries: int, seed: int = 7) -> Path:
    """A character folder with ``n_entries`` reflections and persona entries and ``n_events`` pending
    evidence events after the sentinel."""
    rng = random.Random(seed)
    cd = root / CHARACTER
    cd.mkdir(parents=True)
    reflections = [make_reflection(rng, i) for i in range(n_entries)]
    sections = ["master", "neko", "relationship"]
    persona: dict[str, Any] = {s: {"facts": []} for s in sections}
    for i in range(n_entries):
        persona[sections[i % 3]]["facts"].append(make_persona_entry(rng, i))
    fs.atomic_write_json(cd / REFLECTIONS, reflections)
    fs.atomic_write_json(cd / PERSONA, persona)

    seed_event = new_event("reflection.evidence_updated", {"reflection_id": reflections[0]["id"]})
    lines = [encode_event(seed_event)]
    persona_refs = [(s, e["id"]) for s in sections for e in persona[s]["facts"]]
    for k in range(n_events):
        value = round(3.0 + k * 0.001, 3)  # strictly increasing: every event changes its entry
        if k % 2 == 0:
            ref = reflections[rng.randrange(n_entries)]
            payload: dict[str, Any] = {
                "reflection_id": ref["id"],
                "reinforcement": value,
                "disputation": 0.0,
                "rein_last_signal_at": _ts(rng),
                "disp_last_signal_at": None,
                "sub_zero_days": 0,
                "user_fact_reinforce_count": k % 5,
                "source": "user_fact",
            }
            lines.append(encode_event(new_event("reflection.evidence_updated", payload)))
        else:
            section, eid = persona_refs[rng.randrange(len(persona_refs))]
            payload = {
                "entity_key": section,
                "entry_id": eid,
                "reinforcement": value,
                "disputation": 0.0,
                "rein_last_signal_at": _ts(rng),
                "disp_last_signal_at": None,
                "sub_zero_days": 0,
                "user_fact_reinforce_count": k % 5,
                "source": "user_confirm",
            }
            lines.append(encode_event(new_event("persona.evidence_updated", payload)))
    (cd / JOURNAL_NAME).write_bytes(b"".join(lines))
    write_sentinel(cd, seed_event.event_id)
    return cd


class LimitProbe:
    """Measures the fsync limit *during* the replay, so both see the same disk at the same moments.

    Every ``every`` events (from the reconciler's ``after_event`` hook, outside its lock) it runs
    ``steps`` limit steps on small files (the brief's limit) and ``steps`` on files as large as the
    view; the time spent here is subtracted from the replay's time.
    """

    def __init__(self, folder: Path, view_bytes: int, every: int, steps: int) -> None:
        self.folder = folder / "limit"
        self.folder.mkdir()
        self.small = b"[" + b" " * 254 + b"]"
        self.sized = b"[" + b" " * max(0, view_bytes - 2) + b"]"
        self.every, self.steps = every, steps
        self.count = 0
        self.small_s = self.sized_s = 0.0
        self.small_n = self.sized_n = 0
        self.overhead = 0.0

    def _step(self, view: bytes, i: int) -> None:
        fs.atomic_write_bytes(self.folder / "view.json", view)
        fs.atomic_write_json(self.folder / "events_applied.json", {"last_applied_event_id": str(i), "ts": "x"})

    def run_block(self) -> None:
        t0 = time.perf_counter()
        for i in range(self.steps):
            self._step(self.small, i)
        t1 = time.perf_counter()
        for i in range(self.steps):
            self._step(self.sized, i)
        t2 = time.perf_counter()
        self.small_s += t1 - t0
        self.sized_s += t2 - t1
        self.small_n += self.steps
        self.sized_n += self.steps
        self.overhead += t2 - t0

    def after_event(self, _ev: Event) -> None:
        self.count += 1
        if self.count % self.every == 0:
            self.run_block()


def run_replay(root: Path, probe: LimitProbe, profile: bool) -> tuple[float, Any]:
    reconciler = Reconciler(EventLog(root), hooks=ReconcileHooks(after_event=probe.after_event))
    prof = cProfile.Profile() if profile else None
    probe.run_block()
    t0 = time.perf_counter()
    before = probe.overhead
    if prof:
        prof.enable()
    report = reconciler.reconcile(CHARACTER)
    if prof:
        prof.disable()
    elapsed = time.perf_counter() - t0 - (probe.overhead - before)
    probe.run_block()
    if prof:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(20)
        print(out.getvalue())
    return elapsed, report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000, help="pending evidence events (default 10000)")
    ap.add_argument("--entries", type=int, default=300, help="reflections and persona entries (default 300 each)")
    ap.add_argument("--every", type=int, default=50, help="measure the limit every N replayed events (default 50)")
    ap.add_argument("--steps", type=int, default=5, help="limit steps per measurement (default 5)")
    ap.add_argument("--dir", type=Path, default=None, help="where to build the folder (default: a temp dir under ./)")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of the replay")
    args = ap.parse_args(argv)

    base = Path(tempfile.mkdtemp(prefix="bench-replay-", dir=args.dir or Path.cwd()))
    try:
        root = base / "memory"
        cd = build_folder(root, args.events, args.entries)
        refl_bytes = (cd / REFLECTIONS).stat().st_size
        pers_bytes = (cd / PERSONA).stat().st_size
        journal_kib = (cd / JOURNAL_NAME).stat().st_size / 1024
        probe = LimitProbe(base, (refl_bytes + pers_bytes) // 2, args.every, args.steps)

        elapsed, report = run_replay(root, probe, args.profile)
        n = len(report.applied)
        rate = n / elapsed
        limit_small = probe.small_n / probe.small_s
        limit_sized = probe.sized_n / probe.sized_s
        print(
            f"folder: {args.entries} reflections ({refl_bytes / 1024:.0f} KiB) + {args.entries} persona entries "
            f"({pers_bytes / 1024:.0f} KiB), journal {journal_kib:.0f} KiB with {args.events} pending events"
        )
        print(
            f"replay: {n} events applied, {report.changed} changed, stopped={report.stopped}, "
            f"rescans={report.rescans}, {elapsed:.2f} s (limit measurements excluded)"
        )
        print(f"  replay                      : {rate:8.0f} events/s ({1e3 / rate:.3f} ms/event)")
        print(
            f"  limit, small files          : {limit_small:8.0f} steps/s  ({1e3 / limit_small:.3f} ms/step: "
            "atomic view replace + atomic sentinel replace)"
        )
        print(f"  limit, view-sized view file : {limit_sized:8.0f} steps/s  ({1e3 / limit_sized:.3f} ms/step)")
        print(f"  ratio replay / small-file limit : {rate / limit_small:.2f}")
        print(f"  ratio replay / sized-file limit : {rate / limit_sized:.2f}")
        print(
            json.dumps(
                {
                    "events": n,
                    "entries": args.entries,
                    "replay_events_per_s": round(rate, 1),
                    "limit_small_steps_per_s": round(limit_small, 1),
                    "limit_sized_steps_per_s": round(limit_sized, 1),
                    "ratio_small": round(rate / limit_small, 3),
                    "ratio_sized": round(rate / limit_sized, 3),
                }
            )
        )
        return 0 if report.complete and n == args.events else 1
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
