"""Suite 6: concurrency soak.

In this process: three writer threads doing ``record_and_save`` on entries each of them owns, an
appender thread leaving bare durable events (what a writer killed between append and view save
leaves, so the no-orphaning rule keeps the sentinel back and the reconciler has work), a
reconciler thread running rounds back to back, and a compactor that every few seconds compacts
while the writers keep going (seeds derived from the views under the character lock; compaction
refuses while an unapplied tail exists, so the compactor reconciles and retries, one replay round
at a time). In a separate process: an inspector-like reader polling the folder (see
``_inspector_poller``).

Checked: no acknowledged event lost or duplicated (every one since the last compaction is in the
journal once, in its thread's order), every entry ends with its last acknowledged value, the
reader never raises, never sees a defect or a duplicate, never sees the sentinel move backwards
except across a compaction, and its view of the journal equals the file; then a final
reconciliation leaves the folder complete with no temp litter, and a second one changes nothing.
Replay rounds run one at a time: a round frozen between two steps by a second round can revert a
live write at its probe bound, the known limit pinned in ``test_known_limits.py``.

The folder lives on the real disk (``tmp_path``). ``MI_SOAK_SECONDS`` (default 30) sets the length.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from journal import EventLog, Reconciler, UnappliedTailError, read_journal, read_sentinel
from journal.events import JOURNAL_NAME
from journal.views import load_view
from tests.faults import model
from tests.faults.harness import REPO, snapshot_files, temp_litter
from tests.faults.scenarios import (
    CHAR,
    SOAK_PERSONA,
    SOAK_REFLECTIONS,
    persona_evidence,
    prepare_soak,
    record,
    refl_evidence,
    seeds_from_views,
)
from tests.faults.tally import count, violation

SECONDS = float(os.environ.get("MI_SOAK_SECONDS", "30"))
COMPACT_EVERY = 8.0
WRITERS = 3


class Soak:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.log = EventLog(root)
        self.stop = threading.Event()
        self.errors: list[str] = []
        #: event ids in acknowledgement order, per thread
        self.acked: dict[str, list[str]] = {}
        #: entry key -> last acknowledged payload
        self.last_value: dict[str, dict[str, Any]] = {}
        self.rounds = 0
        self.replayed = 0
        self.compactions = 0
        self.refusals = 0
        self.frozen = 0
        #: one replay round at a time: the compactor's reconcile+compact and the reconciler's rounds
        self.rounds_lock = threading.Lock()
        self._lock = threading.Lock()

    def _ack(self, thread: str, event_id: str, key: str, payload: dict[str, Any]) -> None:
        with self._lock:
            self.acked.setdefault(thread, []).append(event_id)
            self.last_value[key] = payload

    def _guard(self, name: str, body: Any) -> Any:
        def run() -> None:
            try:
                body(name)
            except BaseException as exc:  # the soak fails; the other threads stop
                self.errors.append(f"{name}: {exc!r}")
                self.stop.set()

        return threading.Thread(target=run, name=f"soak-{name}")

    def writer(self, name: str) -> None:
        w = int(name[-1])
        rng = random.Random(w)
        mine_r = SOAK_REFLECTIONS[w * 6 : (w + 1) * 6]
        mine_p = SOAK_PERSONA[w * 3 : (w + 1) * 3]
        n = 0
        while not self.stop.wait(rng.uniform(0, 0.02)):
            n += 1
            if rng.random() < 0.6:
                rid = rng.choice(mine_r)
                payload = refl_evidence(rid, w * 1_000_000 + n)
                ev = record(self.log, "reflection.evidence_updated", payload)
                self._ack(name, ev.event_id, f"r/{rid}", payload)
            else:
                eid = rng.choice(mine_p)
                payload = persona_evidence("neko", eid, w * 1_000_000 + n)
                ev = record(self.log, "persona.evidence_updated", payload)
                self._ack(name, ev.event_id, f"p/{eid}", payload)

    def appender(self, name: str) -> None:
        rng = random.Random(99)
        mine = SOAK_REFLECTIONS[WRITERS * 6 :]
        n = 0
        while not self.stop.wait(rng.uniform(0.1, 0.4)):
            n += 1
            rid = rng.choice(mine)
            payload = refl_evidence(rid, 9_000_000 + n)
            ev = self.log.append(CHAR, "reflection.evidence_updated", payload)
            self._ack(name, ev.event_id, f"r/{rid}", payload)

    def reconciler(self, name: str) -> None:
        rng = random.Random(7)
        reconciler = Reconciler(self.log)
        while not self.stop.wait(rng.uniform(0, 0.03)):
            with self.rounds_lock:
                self._round(reconciler)

    def _round(self, reconciler: Reconciler) -> None:
        report = reconciler.reconcile(CHAR)
        self.rounds += 1
        self.replayed += len(report.applied)
        self.frozen += report.frozen
        if report.stopped is not None:
            raise AssertionError(f"replay stopped: {report.stopped}")

    def compactor(self, name: str) -> None:
        """Compacts while the writers keep writing: the seeds are derived under the character lock
        (a callable), and compaction refuses while the appender's events are still unapplied. It
        does not run during a replay round (see tests/faults/test_known_limits.py)."""
        reconciler = Reconciler(self.log)
        while not self.stop.wait(COMPACT_EVERY):
            for _ in range(200):
                with self.rounds_lock:
                    self._round(reconciler)
                    try:
                        self.log.compact(CHAR, lambda: seeds_from_views(self.root / CHAR))
                    except UnappliedTailError:
                        self.refusals += 1
                    else:
                        self.compactions += 1
                        break
                if self.stop.wait(0.005):
                    return


def _poller(char_dir: Any, out: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.faults._inspector_poller", str(char_dir), str(out)],
        stdin=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )


def _entry_values(char_dir: Any) -> dict[str, Any]:
    refl = {e["id"]: e for e in load_view(char_dir / model.REFLECTIONS, list)}
    neko = {e["id"]: e for e in load_view(char_dir / model.PERSONA, dict)["neko"]["facts"]}
    return {**{f"r/{k}": v for k, v in refl.items()}, **{f"p/{k}": v for k, v in neko.items()}}


@pytest.mark.slow
@pytest.mark.timeout(max(600.0, SECONDS + 300))  # a long MI_SOAK_SECONDS run outlasts the 600 s default
def test_writers_reconciler_compaction_and_a_reader_process_at_once(tmp_path):
    root = tmp_path / "root"
    prepare_soak(root)
    char_dir = root / CHAR
    out = tmp_path / "poller.json"
    soak = Soak(root)
    threads = [soak._guard(f"writer{i}", soak.writer) for i in range(WRITERS)]
    threads += [soak._guard(n, getattr(soak, n)) for n in ("appender", "reconciler", "compactor")]
    poller = _poller(char_dir, out)
    started = time.monotonic()
    try:
        for t in threads:
            t.start()
        soak.stop.wait(SECONDS)
    finally:
        soak.stop.set()
        for t in threads:
            t.join()
        assert poller.stdin is not None
        poller.stdin.write(b"stop\n")
        poller.stdin.close()
        poller.wait(timeout=60)
    count("soak seconds", time.monotonic() - started)
    found = list(soak.errors)
    if poller.returncode != 0:
        found.append(f"the reader process exited with {poller.returncode}")
    seen = json.loads(out.read_text()) if out.exists() else {"stats": {}, "problems": ["no summary"], "event_ids": []}
    stats = seen["stats"]
    found += [f"reader: {p}" for p in seen["problems"]]

    read = read_journal(char_dir / JOURNAL_NAME)
    ids = [e.event_id for e in read.events]
    found += [f"journal defect: {d}" for d in read.defects]
    if len(ids) != len(set(ids)):
        found.append("duplicate event ids in the journal")
    if seen["event_ids"] != ids:
        found.append(f"the reader's journal ({len(seen['event_ids'])} events) differs from the file ({len(ids)})")
    position = {eid: i for i, eid in enumerate(ids)}
    acked = 0
    for thread, events in soak.acked.items():
        # Compaction replaces the events before it by seeds; every event after it must be there:
        # the ones missing from the journal form a prefix of each thread's acknowledgements.
        acked += len(events)
        present = [eid in position for eid in events]
        kept = events[present.index(True) :] if True in present else []
        lost = [eid for eid in kept if eid not in position]
        if lost or (not soak.compactions and len(kept) != len(events)):
            found.append(f"{thread}: acknowledged events lost after the last compaction, e.g. {lost[:3]}")
        elif [position[eid] for eid in kept] != sorted(position[eid] for eid in kept):
            found.append(f"{thread}: acknowledged events out of order in the journal")

    report = Reconciler(soak.log).reconcile(CHAR)
    if not report.complete:
        found.append(f"final reconciliation incomplete: {report}")
    values = _entry_values(char_dir)
    for key, payload in soak.last_value.items():
        keys = model.REFLECTION_KEYS if key.startswith("r/") else model.PERSONA_KEYS
        want = {k: payload[k] for k in keys if k in payload}
        got = {k: values[key].get(k) for k in want}
        if got != want:
            found.append(f"{key} ends as {got}, its last acknowledged value is {want}")
    sentinel = read_sentinel(char_dir).event_id
    last = read_journal(char_dir / JOURNAL_NAME).events[-1].event_id
    if sentinel != last:
        found.append(f"sentinel {sentinel} is not at the journal end {last}")
    if temp_litter(root):
        found.append(f"temp litter: {temp_litter(root)}")
    before = snapshot_files(root)
    Reconciler(soak.log).reconcile(CHAR)
    if snapshot_files(root) != before:
        found.append("a second reconciliation changed files")

    print(
        f"soak: {SECONDS:.0f} s, {acked} acknowledged events, {soak.rounds} reconcile rounds, "
        f"{soak.replayed} events replayed, {soak.frozen} frozen rounds, "
        f"{soak.compactions} compactions ({soak.refusals} refused); "
        f"reader: {stats.get('polls')} polls, {stats.get('sentinel_moves')} sentinel moves, "
        f"{stats.get('resets')} resets"
    )
    for message in found:
        violation(f"concurrency soak: {message}")
    assert not found, "\n".join(found[:20])
    assert acked > 100 and soak.rounds >= 2 and soak.replayed > 10 and stats.get("polls", 0) > 100
    assert soak.compactions >= (1 if SECONDS >= COMPACT_EVERY + 2 else 0)
    assert stats.get("resets", 0) >= soak.compactions
