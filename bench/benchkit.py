"""What the benchmarks share: their generated character (one generator loop), the orjson loop they
are measured against, and how a child process is timed.

Shipped with the benchmarks (``bench/``), never imported by the project or its tests. The
character is healthy and realistic: a few thousand reflections and persona entries, evidence
updates, merges with matching text hashes, lifecycle changes and archives, views that hold the
final state, and the sentinel on the last event (:func:`generate_character`); a tail of pending
events can be appended after it (:func:`append_pending`). Both draw their events from one
:class:`EventMaker`.
"""

from __future__ import annotations

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
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
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

#: The character's journal starts here (naive local time), one event every ~2 s.
BASE_TIME = time.mktime((2026, 1, 1, 0, 0, 0, 0, 0, -1))


def _ts(rng_base: float, i: int) -> str:
    # Naive local ISO timestamps, one every ~2 s, as the server writes them.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(rng_base + 2 * i)) + f".{(i * 7919) % 1000000:06d}"


class EventMaker:
    """The one generator loop: the next event of the character, drawn from ``rng``.

    ``reflections`` and ``persona`` (``(section key, entry)`` pairs) are the live entries events
    pick from. With ``apply`` each event is also applied to the entry it touches, so the entries
    end as the views of a healthy folder hold them; without, they stay as they are (the events are
    pending).
    """

    def __init__(
        self,
        rng: random.Random,
        reflections: list[dict[str, Any]],
        persona: list[tuple[str, dict[str, Any]]],
        *,
        apply: bool,
    ) -> None:
        self.rng = rng
        self.reflections = reflections
        self.persona = persona
        self.apply = apply

    def start(self, i: int) -> tuple[str, str, float, dict[str, Any]]:
        """The ``ts``, id, kind draw and evidence values of event ``i``."""
        rng = self.rng
        ts = _ts(BASE_TIME, i)
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
        return ts, eid, r, values

    def archive(self, entry: dict[str, Any], shard: str, ts: str) -> tuple[str, dict[str, Any]]:
        """A reflection's archive into ``shard``: the event, and (its ``entry_snapshot``) the entry
        the shard receives."""
        snap = {**entry, "archived_at": ts, "status": "archived", "archive_shard_path": shard}
        payload = {
            "reflection_id": entry["id"],
            "from": entry["status"],
            "to": "archived",
            "archive_shard_path": shard,
            "archived_at": ts,
            "entry_snapshot": snap,
        }
        return "reflection.state_changed", payload

    def ordinary(self, r: float, ts: str, values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """An evidence update, a persona evidence update, a merge or a state change, by ``r``."""
        rng = self.rng
        refl, pers = self.reflections, self.persona
        if r < 0.55:
            entry = refl[rng.randrange(len(refl))]
            payload = {"reflection_id": entry["id"], **values, "source": "user_fact"}
            if self.apply:
                entry.update(values)
            return "reflection.evidence_updated", payload
        if r < 0.88:
            key, entry = pers[rng.randrange(len(pers))]
            payload = {"entity_key": key, "entry_id": entry["id"], **values, "source": "user_confirm"}
            if self.apply:
                entry.update(values)
            return "persona.evidence_updated", payload
        if r < 0.94:
            key, entry = pers[rng.randrange(len(pers))]
            merged = [*entry["merged_from_ids"], refl[rng.randrange(len(refl))]["id"]][-8:]
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
            if self.apply:
                entry.update({k: payload[k] for k in EVIDENCE})
                entry["merged_from_ids"] = merged
            return "persona.entry_updated", payload
        entry = refl[rng.randrange(len(refl))]
        to = rng.choice(("confirmed", "promoted", "denied"))
        payload = {"reflection_id": entry["id"], "from": entry["status"], "to": to, "ts": ts}
        if self.apply:
            entry["status"] = to
            entry[f"{to}_at"] = ts
        return "reflection.state_changed", payload


def generate_character(char_dir: Path, events: int, entries: int, seed: int = 4) -> None:
    """Write a healthy character folder with ``events`` journal events over ``entries`` entries:
    the last events archive reflections (into shards it writes), and the views and the sentinel
    hold the state after the last event."""
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
    persona: dict[str, Any] = {k: {"facts": []} for k in keys}
    pers_index = []
    for i in range(n_pers):
        key = keys[i % 3]
        eid = f"prom_ref_{hashlib.sha256(f'p{i}'.encode()).hexdigest()[:16]}"
        entry = persona_entry(eid, f"Persona fact {i}: 主人 drinks green tea")
        persona[key]["facts"].append(entry)
        pers_index.append((key, entry))
    refl_ids = list(reflections)
    maker = EventMaker(rng, list(reflections.values()), pers_index, apply=True)
    archived: set[str] = set()
    last_id = None
    n_archive = min(len(refl_ids) // 10, events // 100)
    archive_from = events - n_archive
    with open(char_dir / JOURNAL_NAME, "wb", buffering=1 << 20) as fh:
        for i in range(events):
            ts, eid, r, values = maker.start(i)
            if i >= archive_from:
                rid = refl_ids[i - archive_from]
                shard = f"2026-02-{1 + (i - archive_from) // 500 % 28:02d}_{(i - archive_from) // 500:08x}.json"
                etype, payload = maker.archive(reflections[rid], shard, ts)
                archived.add(rid)
                shard_dir = char_dir / "reflection_archive"
                shard_dir.mkdir(exist_ok=True)
                shard_file = shard_dir / shard
                current = json.loads(shard_file.read_text()) if shard_file.exists() else []
                current.append(payload["entry_snapshot"])
                shard_file.write_text(json.dumps(current, indent=2, ensure_ascii=False))
            else:
                etype, payload = maker.ordinary(r, ts, values)
            fh.write(encode_event(make_event(eid, etype, ts, payload)))
            last_id = eid
    atomic_write_json(
        char_dir / REFLECTIONS, [e for rid, e in reflections.items() if rid not in archived], durable=False
    )
    atomic_write_json(char_dir / PERSONA, persona, durable=False)
    atomic_write_json(
        char_dir / "events_applied.json", {"last_applied_event_id": last_id, "ts": "2026-03-01T00:00:00"}, durable=False
    )


def append_pending(char_dir: Path, start: int, pending: int, seed: int = 28) -> None:
    """Append ``pending`` events after the journal's ``start`` events, leaving the views and the
    sentinel as they are: every one of them is pending, most change their entry, and a few
    archive a live reflection into a new shard."""
    rng = random.Random(seed)
    reflections = json.loads((char_dir / REFLECTIONS).read_text(encoding="utf-8"))
    persona = json.loads((char_dir / PERSONA).read_text(encoding="utf-8"))
    live = [e for e in reflections if isinstance(e, dict)]
    maker = EventMaker(rng, live, [(key, e) for key, section in persona.items() for e in section["facts"]], apply=False)
    shards = 0
    with open(char_dir / JOURNAL_NAME, "ab", buffering=1 << 20) as fh:
        for i in range(start, start + pending):
            ts, eid, r, values = maker.start(i)
            if r < 0.005 and len(live) > 1:
                shard = f"2026-03-{1 + shards % 28:02d}_{0x28000000 + shards // 20:08x}.json"
                shards += 1
                etype, payload = maker.archive(live.pop(rng.randrange(len(live))), shard, ts)
            else:
                etype, payload = maker.ordinary(r, ts, values)
            fh.write(encode_event(make_event(eid, etype, ts, payload)))


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
            # Generated beside and renamed when whole: an interrupted run leaves no half-written
            # folder that a later run would reuse as the benchmark's character.
            partial = root / f"{CHARACTER}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            shutil.rmtree(char_dir, ignore_errors=True)
            t0 = time.perf_counter()
            generate_character(partial, events, entries)
            partial.rename(char_dir)
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
