"""The fault regime's harness: the fork-server client, the counters, and the recovery invariants.

Invariants checked after every recovery (issue "Reliability regime", Harness section):

1. every event that was durable before the crash is still in the journal (for compaction: the
   journal is the old one or exactly the seeds);
2. after reconciliation the views equal the fold of the journal's events over the starting folder,
   computed by :mod:`tests.faults.model` (not by the handlers under test);
3. every archived entry is in its named shard exactly once (and in no other shard);
4. the sentinel never points past an event whose effect is not durable (checked on the crashed
   folder, before recovery, entry by entry);
5. no temp litter (``.nkatmp*.tmp``) remains;
6. a second reconciliation changes no byte.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal import EventLog, Reconciler, ReplayReport, fs, read_journal, read_sentinel
from journal.codec import loads_exact
from journal.events import JOURNAL_NAME
from journal.shards import is_shard_name
from tests.faults import crashkit, model
from tests.faults.scenarios import CHAR, SCENARIOS

REPO = Path(__file__).resolve().parents[2]


# -- folders -------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def scratch_dir(prefix: str = "mi-faults-") -> Iterator[Path]:
    """A private temp folder, on tmpfs when the machine has one.

    The crash suites model durability through the fault hook (process crashes keep the page
    cache, and :func:`crashkit.durability_violations` checks fsync ordering on the trace), so real
    fsync latency adds nothing but minutes; the real-disk behaviour (real ENOSPC, real replace
    failures) is covered by ``tests/journal/test_fs.py`` and the soaks, which run on the disk.
    """
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def snapshot_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def temp_litter(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob(fs.TEMP_PREFIX + "*" + fs.TEMP_SUFFIX))


def read_state(char_dir: Path) -> tuple[model.State, list[str]]:
    """The covered part of a folder as it is on disk, plus what could not be parsed."""
    state = model.State()
    problems: list[str] = []
    for name, kind in ((model.REFLECTIONS, list), (model.PERSONA, dict)):
        p = char_dir / name
        if not p.exists():
            continue
        try:
            obj = loads_exact(p.read_bytes())
        except ValueError as exc:
            problems.append(f"{name} is corrupt: {exc}")
            continue
        if not isinstance(obj, kind):
            problems.append(f"{name} has top level {type(obj).__name__}")
            continue
        state.views[name] = obj
    for archive in (model.REFLECTION_ARCHIVE, model.PERSONA_ARCHIVE):
        folder = char_dir / archive
        if not folder.is_dir():
            continue
        for sub in sorted(os.listdir(folder)):
            if not is_shard_name(sub):
                continue
            try:
                obj = loads_exact((folder / sub).read_bytes())
            except ValueError as exc:
                problems.append(f"{archive}/{sub} is corrupt: {exc}")
                continue
            if not isinstance(obj, list):
                problems.append(f"{archive}/{sub} is not a list")
                continue
            state.shards[(archive, sub)] = obj
    return state, problems


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def journal_records(root: Path) -> tuple[list[tuple[str, str, Any]], Any]:
    """``[(event_id, type, payload)]`` of the character's journal, and the whole read."""
    read = read_journal(root / CHAR / JOURNAL_NAME)
    return [(e.event_id, e.type, e.payload) for e in read.events], read


# -- what a crash state is checked against ---------------------------------------------------------------


@dataclass
class Baseline:
    """The starting folder of a scenario, as the invariants need it.

    Attributes:
        state: covered views and shards of the starting folder.
        events: ``(event_id, type, payload)`` of its journal.
        lines: physical lines of its journal (new defects may appear only after them).
        seeds: for compaction: the ``(type, payload)`` seeds the scenario writes.
        compaction: the operation replaces the journal on purpose.
        defect_lines: lines of the starting journal that already were defects (a torn tail).
    """

    state: model.State
    events: list[tuple[str, str, Any]]
    lines: int
    seeds: list[tuple[str, Any]] | None = None
    compaction: bool = False
    defect_lines: frozenset[int] = frozenset()

    @classmethod
    def of(cls, root: Path, *, compaction: bool = False) -> Baseline:
        from tests.faults.scenarios import seeds_from_views

        state, problems = read_state(root / CHAR)
        assert not problems, problems
        events, read = journal_records(root)
        seeds = [(t, p) for t, p in seeds_from_views(root / CHAR)] if compaction else None
        return cls(state, events, read.lines, seeds, compaction, frozenset(d.line for d in read.defects))


@dataclass
class Outcome:
    """What one checked state produced (for messages)."""

    label: str
    problems: list[str] = field(default_factory=list)


def _journal_problems(base: Baseline, events: list[tuple[str, str, Any]], durable: list[str]) -> list[str]:
    problems: list[str] = []
    if base.compaction:
        old = [(t, _canon(p)) for _, t, p in base.events]
        now = [(t, _canon(p)) for _, t, p in events]
        seeds = [(t, _canon(p)) for t, p in base.seeds or []]
        if now not in (old, seeds):
            problems.append(
                f"journal is neither the old one ({len(old)}) nor the seeds ({len(seeds)}): {len(now)} events"
            )
        return problems
    prefix = [(i, t, _canon(p)) for i, t, p in events[: len(base.events)]]
    want = [(i, t, _canon(p)) for i, t, p in base.events]
    if prefix != want:
        problems.append("events of the starting journal were lost or changed")
    ids = [i for i, _, _ in events]
    missing = [d for d in durable if d not in ids]
    if missing:
        problems.append(f"durable events lost: {missing}")
    if len(set(ids)) != len(ids):
        problems.append("duplicate event ids in the journal")
    return problems


def check_crashed(root: Path, base: Baseline, durable: list[str]) -> list[str]:
    """Invariants of a crashed folder, before any recovery: events survive, nothing is torn
    except the journal's last line, and the sentinel does not point past a non-durable effect."""
    char_dir = root / CHAR
    events, _ = journal_records(root)
    problems = _journal_problems(base, events, durable)
    disk, corrupt = read_state(char_dir)
    problems += corrupt
    sentinel = read_sentinel(char_dir)
    ids = [i for i, _, _ in events]
    start = ids.index(sentinel.event_id) + 1 if sentinel.event_id in ids else 0
    # Entry by entry, the folder must show the effect of some prefix of the journal that includes
    # every event up to the sentinel.
    typed = [(t, p) for _, t, p in events]
    prefixes = []
    state = base.state.copy()
    for j in range(len(typed) + 1):
        if j:
            model.apply(state, *typed[j - 1])
        if j >= start:
            prefixes.append({k: _canon(v) for k, v in model.entry_values(state).items()})
    now = {k: _canon(v) for k, v in model.entry_values(disk).items()}
    absent = _canon(None)
    for key in sorted(set(now).union(*prefixes)):
        if all(p.get(key, absent) != now.get(key, absent) for p in prefixes):
            problems.append(
                f"sentinel {'at #' + str(start - 1) if start else 'absent'} but entry {key} matches no "
                f"journal prefix from there on: {now.get(key, absent)[:200]}"
            )
    return problems


def reconcile(root: Path) -> ReplayReport:
    return Reconciler(EventLog(root)).reconcile(CHAR)


def check_recovered(root: Path, base: Baseline, durable: list[str], report: ReplayReport) -> list[str]:
    """Invariants after a recovery round, including that a second round changes no byte."""
    char_dir = root / CHAR
    problems: list[str] = []
    if not report.complete:
        problems.append(f"recovery did not complete: {report.stopped}")
    events, read = journal_records(root)
    problems += _journal_problems(base, events, durable)
    early = [
        d for d in read.defects if d.line <= base.lines and d.line not in base.defect_lines and not base.compaction
    ]
    if early:
        problems.append(f"defects inside the starting journal: {early}")
    disk, corrupt = read_state(char_dir)
    problems += corrupt
    expected = model.fold(base.state, [(t, p) for _, t, p in events])
    for name in (model.REFLECTIONS, model.PERSONA):
        if _canon(disk.views[name]) != _canon(expected.views[name]):
            problems.append(f"{name} differs from the fold of the journal")
    if _canon(sorted(disk.non_empty_shards().items())) != _canon(sorted(expected.non_empty_shards().items())):
        problems.append(
            f"shards differ from the fold: {sorted(disk.non_empty_shards())} vs {sorted(expected.non_empty_shards())}"
        )
    for _, t, p in events:
        snap = p.get("entry_snapshot") if isinstance(p, dict) else None
        if not isinstance(snap, dict):
            continue
        archive = model.REFLECTION_ARCHIVE if t == "reflection.state_changed" else model.PERSONA_ARCHIVE
        homes = [
            name
            for (a, name), entries in disk.shards.items()
            if a == archive
            for e in entries
            if e.get("id") == snap.get("id")
        ]
        if homes != [p.get("archive_shard_path")]:
            problems.append(
                f"archived entry {snap.get('id')} is in shards {homes}, expected once in {p.get('archive_shard_path')}"
            )
    sentinel = read_sentinel(char_dir)
    last = events[-1][0] if events else None
    if sentinel.event_id != last:
        problems.append(f"sentinel {sentinel.state}:{sentinel.event_id} is not the last event {last}")
    litter = temp_litter(root)
    if litter:
        problems.append(f"temp litter left: {litter}")
    before = snapshot_files(root)
    again = reconcile(root)
    after = snapshot_files(root)
    if before != after:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        problems.append(f"a second reconciliation changed {changed}")
    if again.applied:
        problems.append(f"a second reconciliation applied {len(again.applied)} events")
    return problems


# -- dry passes ------------------------------------------------------------------------------------------------


def dry_pass(name: str, root: Path) -> tuple[list[crashkit.TraceCall], list[str], BaseException | None]:
    """Run scenario ``name`` (or ``"recovery"``) in-process with a recording hook.

    Returns the trace, the notes of returned API calls and the exception it raised (if any).
    """
    from tests.faults.scenarios import run_recovery

    run = run_recovery if name == "recovery" else SCENARIOS[name].run
    recorder = crashkit.Recorder()
    notes: list[str] = []
    previous = fs.set_fault_hook(recorder)
    error: BaseException | None = None
    try:
        run(root, notes.append)
    except Exception as exc:
        error = exc
    finally:
        fs.set_fault_hook(previous)
    return recorder.trace, notes, error


# -- the fork server ------------------------------------------------------------------------------------------------


class Zygote:
    """Client of ``tests/faults/_zygote.py`` (one per test; closed and reaped by :meth:`close`).

    Args:
        pass_fds: descriptors the zygote (and so its children) inherit, e.g. an ack pipe.
    """

    def __init__(self, pass_fds: tuple[int, ...] = ()) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.faults._zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=REPO,
            env=env,
            pass_fds=pass_fds,
        )

    def request(self, msg: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"zygote did not answer {msg['op']} within {timeout} s")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"zygote died: {self.stderr()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def crash(self, scenario: str, root: Path, point: crashkit.CrashPoint, side: Path) -> int:
        reply = self.request(
            {"op": "crash", "scenario": scenario, "root": str(root), "point": point.to_json(), "side": str(side)}
        )
        code: int = reply["code"]
        return code

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")[-4000:]

    def close(self) -> None:
        try:
            if self.proc.poll() is None and self.proc.stdin is not None:
                with contextlib.suppress(BrokenPipeError):
                    self.proc.stdin.write(b'{"op": "quit"}\n')
                    self.proc.stdin.flush()
                    self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self._stderr.close()


@contextlib.contextmanager
def zygote(pass_fds: tuple[int, ...] = ()) -> Iterator[Zygote]:
    z = Zygote(pass_fds)
    try:
        yield z
    finally:
        z.close()


def crash_and_check(
    z: Zygote,
    scenario: str,
    template: Path,
    base: Baseline,
    point: crashkit.CrashPoint,
    work: Path,
) -> tuple[Path, list[str], list[str]]:
    """Copy ``template`` to a fresh root, crash ``scenario`` there at ``point``, check the crashed
    folder. Returns the crashed root (not yet recovered), the ids the child made durable, and the
    problems found."""
    root = work / "root"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(template, root)
    side = work / "side.txt"
    side.unlink(missing_ok=True)
    code = z.crash(scenario, root, point, side)
    problems: list[str] = []
    if code == crashkit.EXIT_DIVERGED:
        problems.append("the child's calls diverged from the dry pass")
    elif code == crashkit.EXIT_FINISHED:
        problems.append("the child finished without reaching the crash point")
    elif code != crashkit.EXIT_CRASHED:
        problems.append(f"the child failed (exit {code}): {z.stderr()[-1500:]}")
    durable, _ = crashkit.read_side(side)
    problems += check_crashed(root, base, durable)
    return root, durable, problems
