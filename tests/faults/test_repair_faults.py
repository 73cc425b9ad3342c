"""The fault regime for the journal repair (issue 24): crashes at every filesystem call, crashes of
the repair that recovers from a crash, and injected EIO / ENOSPC / EACCES and short writes.

The repair's invariants, checked on every crashed or failed folder (before any recovery):

1. the journal is exactly the old bytes or exactly the repaired bytes, never a mix;
2. when it is the repaired bytes, every fragment is recorded in ``events.ndjson.damaged``
   (written ahead of the replace);
3. ``events.ndjson.damaged`` only grew: its old bytes are a prefix of it, and no fragment is
   recorded twice;
4. no other file changed, and nothing is left in the folder but temp files the next run sweeps;
5. the reconciler's own crash invariants hold (events survive, the sentinel is not past a
   non-durable effect: :func:`tests.faults.harness.check_crashed`).

After a fault-free repair (the recovery):

6. the journal is the repaired bytes: valid UTF-8, no ``invalid_utf8`` line, every event id and its
   record bytes as before, in order;
7. every fragment is recorded exactly once, and :func:`journal.repair.reassemble` gives the old
   journal back from the repaired one and the records;
8. no temp litter, no other file changed, and another repair changes no byte.

The dry pass's trace is also checked for fsync ordering (:func:`crashkit.durability_violations`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from journal import JournalError, fs
from journal.events import JOURNAL_NAME
from journal.reader import read_journal
from journal.repair import DAMAGED_NAME, plan_repair, read_damaged, reassemble, repair_journal, rewrite
from tests.faults import crashkit
from tests.faults.harness import REPO, Baseline, Zygote, check_crashed, scratch_dir, snapshot_files
from tests.faults.repair_scenarios import REPAIR_SCENARIOS
from tests.faults.scenarios import CHAR
from tests.faults.tally import count, violation
from tests.faults.test_io_faults import Inject, _cases
from tests.journal import _repair_kit as kit

NAME = "journal_repair"
#: Distinct crashed states whose recovery is crashed in turn (each at every one of its calls).
RECOVERY_STATES = 6
SEED = 20260824


class RepairZygote(Zygote):
    """The fault regime's fork server, with the repair scenarios in its table."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.faults._repair_zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=REPO,
            env=env,
        )


@contextlib.contextmanager
def repair_zygote() -> Iterator[RepairZygote]:
    z = RepairZygote()
    try:
        yield z
    finally:
        z.close()


@dataclass
class Expected:
    """What the repair of a starting folder must come to.

    Attributes:
        old, new: the journal before and after the repair.
        keys: the fragments' ``.damaged`` keys.
        damaged: the ``.damaged`` bytes of the starting folder.
        others: every other file of the starting folder (temp files aside), by SHA-256.
        base: the reconciler's baseline of the starting folder.
    """

    old: bytes
    new: bytes
    keys: frozenset[tuple[str, int, str]]
    damaged: bytes
    others: dict[str, str]
    base: Baseline

    @classmethod
    def of(cls, root: Path, old: bytes | None = None) -> Expected:
        """``old``: the journal before the first repair, when ``root`` is a crashed copy whose journal
        is still that one (the expected result does not depend on the crash)."""
        cd = root / CHAR
        data = old if old is not None else (cd / JOURNAL_NAME).read_bytes()
        plan = plan_repair(cd)
        assert plan.sha256 == hashlib.sha256(data).hexdigest() and plan.has_work
        damaged = cd / DAMAGED_NAME
        return cls(
            data,
            rewrite(data, plan.fragments),
            frozenset(f.key(plan.sha256) for f in plan.fragments),
            damaged.read_bytes() if damaged.exists() else b"",
            _others(cd),
            Baseline.of(root),
        )


def _others(cd: Path) -> dict[str, str]:
    return {
        k: v
        for k, v in kit.hash_files(cd).items()
        if k not in (JOURNAL_NAME, DAMAGED_NAME) and not fs.is_temp_name(os.path.basename(k))
    }


def _key_counts(cd: Path) -> dict[tuple[str, int, str], int]:
    out: dict[tuple[str, int, str], int] = {}
    for r in read_damaged(cd).records:
        key = (r["journal_sha256"], r["offset"], r["sha256"])
        out[key] = out.get(key, 0) + 1
    return out


def check_failed(root: Path, exp: Expected) -> list[str]:
    """Invariants 1 to 5 on a crashed or failed folder."""
    cd = root / CHAR
    problems: list[str] = []
    journal = (cd / JOURNAL_NAME).read_bytes()
    if journal not in (exp.old, exp.new):
        problems.append(f"the journal is neither the old ({len(exp.old)} B) nor the repaired ({len(exp.new)} B) one")
    damaged = (cd / DAMAGED_NAME).read_bytes() if (cd / DAMAGED_NAME).exists() else b""
    if not damaged.startswith(exp.damaged):
        problems.append("events.ndjson.damaged lost or changed bytes it had")
    counts = _key_counts(cd)
    if any(n > 1 for n in counts.values()):
        problems.append("a fragment is recorded twice in events.ndjson.damaged")
    if journal == exp.new and not exp.keys <= set(counts):
        problems.append("the journal was replaced before every fragment was recorded")
    if _others(cd) != exp.others:
        problems.append("a file other than the journal and events.ndjson.damaged changed")
    problems += [f"reconciler invariant: {p}" for p in check_crashed(root, exp.base, [])]
    return problems


def check_repaired(root: Path, exp: Expected) -> list[str]:
    """Invariants 6 to 8 after a fault-free repair of a crashed or failed folder."""
    cd = root / CHAR
    problems: list[str] = []
    journal = (cd / JOURNAL_NAME).read_bytes()
    if journal != exp.new:
        problems.append("the recovered journal is not the repaired bytes")
    try:
        journal.decode("utf-8")
    except UnicodeDecodeError:
        problems.append("the recovered journal is not UTF-8")
    if [d for d in read_journal(cd / JOURNAL_NAME).defects if d.kind == "invalid_utf8"]:
        problems.append("an invalid_utf8 line is left")
    if kit.records_of(journal) != kit.records_of(exp.old):
        problems.append("an event or its record bytes changed")
    counts = _key_counts(cd)
    if {k: n for k, n in counts.items() if k in exp.keys} != dict.fromkeys(exp.keys, 1):
        problems.append(f"fragments not recorded exactly once: {sorted(counts.values())}")
    sha = hashlib.sha256(exp.old).hexdigest()
    records = [r for r in read_damaged(cd).records if r["journal_sha256"] == sha]
    if reassemble(journal, records) != exp.old:
        problems.append("the records do not give the old journal back")
    litter = [str(p.relative_to(root)) for p in root.rglob(fs.TEMP_PREFIX + "*" + fs.TEMP_SUFFIX)]
    if litter:
        problems.append(f"temp litter left: {litter}")
    if _others(cd) != exp.others:
        problems.append("a file other than the journal and events.ndjson.damaged changed")
    before = snapshot_files(root)
    again = repair_journal(cd)
    if again.rewritten or snapshot_files(root) != before:
        problems.append("another repair changed the folder")
    return problems


def _dry_pass(root: Path) -> list[crashkit.TraceCall]:
    recorder = crashkit.Recorder()
    previous = fs.set_fault_hook(recorder)
    try:
        REPAIR_SCENARIOS[NAME].run(root)
    finally:
        fs.set_fault_hook(previous)
    return recorder.trace


def _crash(z: RepairZygote, start: Path, point: crashkit.CrashPoint, work: Path) -> tuple[Path, list[str]]:
    root = work / "root"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(start, root)
    side = work / "side.txt"
    side.unlink(missing_ok=True)
    code = z.crash(NAME, root, point, side)
    if code == crashkit.EXIT_CRASHED:
        return root, []
    what = {crashkit.EXIT_DIVERGED: "diverged from the dry pass", crashkit.EXIT_FINISHED: "finished before the point"}
    return root, [f"the child {what.get(code, f'failed (exit {code}): {z.stderr()[-800:]}')}"]


def _crash_everywhere(z: RepairZygote, start: Path, exp: Expected, work: Path, label: str) -> list[str]:
    """Crash a repair of ``start`` before and after each of its calls (torn writes included),
    check the crashed folder, recover it, check again."""
    dry = work / "dry"
    shutil.rmtree(dry, ignore_errors=True)
    shutil.copytree(start, dry)
    trace = _dry_pass(dry)
    found = [f"{label} dry pass: {p}" for p in crashkit.durability_violations(trace, returned=True)]
    points = crashkit.crash_points(trace, dry)
    assert {p.index for p in points} == {t.index for t in trace}
    for point in points:
        root, problems = _crash(z, start, point, work)
        problems += check_failed(root, exp)
        repair_journal(root / CHAR)
        problems += check_repaired(root, exp)
        count("crash states")
        if label != "repair":
            count("recovery crash states")
        found += [f"{label} {point.label}: {p}" for p in problems]
    return found


@pytest.fixture
def template() -> Iterator[tuple[Path, Path]]:
    with scratch_dir("mi-repair-faults-") as work:
        t = work / "template"
        REPAIR_SCENARIOS[NAME].prepare(t)
        yield t, work


def test_the_repair_has_crash_points_and_a_clean_durability_order(template):
    t, work = template
    dry = work / "dry"
    shutil.copytree(t, dry)
    trace = _dry_pass(dry)
    ops = [t.op for t in trace if t.phase == "before"]
    assert ops.count("replace") == 1 and "write" in ops
    problems = crashkit.durability_violations(trace, returned=True)
    for p in problems:
        violation(f"{NAME}: {p}")
    assert not problems


def test_a_crash_at_any_call_of_the_repair_leaves_old_or_new_and_the_next_repair_converges(template):
    t, work = template
    exp = Expected.of(t)
    with repair_zygote() as z:
        found = _crash_everywhere(z, t, exp, work, "repair")
    for message in found:
        violation(message)
    assert not found, "\n".join(found[:30])


def test_a_crash_of_the_repair_that_recovers_from_a_crash_converges_too(template):
    """Starting states: crashed folders whose journal is still the old one (a torn or complete
    ``.damaged`` append, temp litter), distinct by the recovery's calls; each recovery is crashed at
    every call in turn."""
    t, work = template
    exp = Expected.of(t)
    dry = work / "dry0"
    shutil.copytree(t, dry)
    points = crashkit.crash_points(_dry_pass(dry), dry)
    random.Random(SEED).shuffle(points)
    found: list[str] = []
    seen: set[tuple[tuple[str, str], ...]] = set()
    states = 0
    with repair_zygote() as z:
        for point in points:
            if states >= RECOVERY_STATES:
                break
            root, problems = _crash(z, t, point, work)
            assert not problems, problems
            if (root / CHAR / JOURNAL_NAME).read_bytes() != exp.old:
                continue  # already repaired: its recovery has nothing to do
            probe = work / "probe"
            shutil.rmtree(probe, ignore_errors=True)
            shutil.copytree(root, probe)
            signature = tuple(
                (c.op, crashkit.normalize(c.path, probe)) for c in _dry_pass(probe) if c.phase == "before"
            )
            if signature in seen:
                continue
            seen.add(signature)
            states += 1
            start = work / f"start{states}"
            shutil.copytree(root, start)
            state = Expected.of(start, exp.old)
            state.others, state.base = exp.others, exp.base
            found += _crash_everywhere(z, start, state, work, f"recovery from {point.label}")
    assert states >= 3, f"only {states} distinct recovery states"
    for message in found:
        violation(message)
    assert not found, "\n".join(found[:30])


def _run_case(t: Path, exp: Expected, work: Path, case: tuple[int, int | None, str, str | None]) -> list[str]:
    index, err, mode, short = case
    root = work / "root"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(t, root)
    side_path = work / "side.txt"
    side_path.unlink(missing_ok=True)
    side = crashkit.SideChannel(str(side_path))
    hook = Inject(index, err, mode, side, short)
    raised: BaseException | None = None
    previous = fs.set_fault_hook(hook)
    try:
        repair_journal(root / CHAR)
    except (OSError, JournalError) as exc:
        raised = exc
    finally:
        fs.set_fault_hook(previous)
        os.close(side.fd)
    problems: list[str] = []
    if not hook.fired:
        problems.append("the fault was never injected (the calls diverged from the dry pass)")
    expect_success = short in ("once", "all")
    if raised is None and not expect_success:
        count("silent successes")
        problems.append("silent success: the repair returned normally although a call failed")
    if raised is not None and expect_success:
        problems.append(f"a short write that was continued made the repair fail: {raised!r}")
    if raised is None:
        problems += [
            f"success not durable: {p}" for p in crashkit.durability_violations(hook.recorder.trace, returned=True)
        ]
    problems += check_failed(root, exp)
    repair_journal(root / CHAR)  # the fault has cleared
    problems += check_repaired(root, exp)
    return problems


@pytest.mark.parametrize("start", ["fresh", "after a torn record and with temp litter"])
def test_injected_errors_make_the_repair_raise_lose_nothing_and_the_next_repair_converges(template, start):
    t, work = template
    exp = Expected.of(t)
    if start != "fresh":
        # A crashed earlier repair: half a record in .damaged, a temp file of the journal's replace.
        cd = t / CHAR
        plan = plan_repair(cd)
        from journal.repair import encode_record

        line = encode_record(plan.fragments[0].record(plan.size, plan.sha256, "t"))
        (cd / DAMAGED_NAME).write_bytes(line[: len(line) // 2])
        (cd / f"{fs.TEMP_PREFIX}0badcafe{fs.TEMP_SUFFIX}").write_bytes(exp.new[:100])
        exp = Expected.of(t)
    dry = work / "dry"
    shutil.copytree(t, dry)
    trace = _dry_pass(dry)
    found: list[str] = []
    for case in _cases(trace):
        problems = _run_case(t, exp, work, case)
        count("fault cases")
        index, err, mode, short = case
        what = f"{errno.errorcode[err]} {mode}" if err is not None else f"short write ({short})"
        op = next(c for c in trace if c.index == index)
        found += [f"{start} #{index} {op.op} {crashkit.normalize(op.path, dry)} {what}: {p}" for p in problems]
    for message in found:
        violation(message)
    assert not found, "\n".join(found[:30])
