"""Suite 3: crash during recovery.

Starting states are crashed folders of suite 1's scenarios whose recovery has work to do (a
seeded sample, distinct by the recovery's call sequence), plus the replay scenario's pending tail.
A dry pass records the recovery's calls (and checks their durability order); then a child runs the
recovery and dies before and after each of them (torn writes included), and the parent recovers
again and checks every invariant.
For the longest recovery, the second recovery is crashed too, at a seeded sample of its calls.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from tests.faults import crashkit
from tests.faults.harness import (
    Baseline,
    Zygote,
    check_crashed,
    check_recovered,
    crash_and_check,
    dry_pass,
    reconcile,
    scratch_dir,
    zygote,
)
from tests.faults.scenarios import SCENARIOS
from tests.faults.tally import count, violation

#: Distinct starting states per scenario, and how many crash points are tried to find them.
STATES_PER_SCENARIO = 3
TRIES_PER_SCENARIO = 16
SEED = 20260501


def _signature(trace: list[crashkit.TraceCall], root: Path) -> tuple[tuple[str, str], ...]:
    return tuple((t.op, crashkit.normalize(t.path, root)) for t in trace if t.phase == "before")


def _starting_states(z: Zygote, name: str, template: Path, base: Baseline, work: Path) -> list[tuple[Path, list[str]]]:
    """Crashed copies of ``template`` whose recovery writes something, each with its durable ids."""
    dry = work / "dry"
    shutil.copytree(template, dry)
    trace, _, _ = dry_pass(name, dry)
    points = crashkit.crash_points(trace, dry)
    random.Random(f"{SEED}-{name}").shuffle(points)
    found: list[tuple[Path, list[str]]] = []
    seen: set[tuple[tuple[str, str], ...]] = set()
    for point in points[:TRIES_PER_SCENARIO]:
        root, durable, problems = crash_and_check(z, name, template, base, point, work)
        assert not problems, problems
        probe = work / "probe"
        shutil.rmtree(probe, ignore_errors=True)
        shutil.copytree(root, probe)
        rtrace, _, _ = dry_pass("recovery", probe)
        sig = _signature(rtrace, probe)
        if rtrace and sig not in seen:
            seen.add(sig)
            keep = work / f"start{len(found)}"
            shutil.copytree(root, keep)
            found.append((keep, durable))
        if len(found) >= STATES_PER_SCENARIO:
            break
    return found


def _crash_recovery_everywhere(
    z: Zygote, label: str, start: Path, base: Baseline, durable: list[str], work: Path, *, sample: int | None = None
) -> list[str]:
    """Crash the recovery of ``start`` at each of its points (or a seeded sample); recover again."""
    dry = work / "rdry"
    shutil.rmtree(dry, ignore_errors=True)
    shutil.copytree(start, dry)
    rtrace, _, error = dry_pass("recovery", dry)
    assert error is None, error
    found = [f"{label} / recovery: {p}" for p in crashkit.durability_violations(rtrace, returned=True)]
    points = crashkit.crash_points(rtrace, dry)
    if sample is not None and len(points) > sample:
        points = random.Random(f"{SEED}-{label}").sample(points, sample)
    for point in points:
        root, more_durable, problems = crash_and_check(z, "recovery", start, base, point, work)
        report = reconcile(root)
        problems += check_recovered(root, base, durable + more_durable, report)
        count("crash states")
        count("recovery crash states")
        found += [f"{label} / recovery {point.label}: {p}" for p in problems]
    return found


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_crash_at_any_call_of_recovery_converges_on_the_next_recovery(name):
    scenario = SCENARIOS[name]
    found: list[str] = []
    with scratch_dir() as work, zygote() as z:
        template = work / "template"
        scenario.prepare(template)
        base = Baseline.of(template, compaction=scenario.compaction)
        starts = _starting_states(z, name, template, base, work)
        if name == "replay_round":
            starts.insert(0, (template, []))  # the pending tail itself is recovery work
        assert starts, f"{name}: no crash state left recovery any work"
        for i, (start, durable) in enumerate(starts):
            found += _crash_recovery_everywhere(z, f"{name} start{i}", start, base, durable, work)
    for message in found:
        violation(message)
    assert not found, "\n".join(found[:30])


def test_a_crash_during_the_second_recovery_also_converges():
    """Crash the replay round's recovery, then crash the next recovery too (a seeded sample)."""
    name = "replay_round"
    found: list[str] = []
    rng = random.Random(SEED)
    with scratch_dir() as work, zygote() as z:
        template = work / "template"
        SCENARIOS[name].prepare(template)
        base = Baseline.of(template)
        dry = work / "dry"
        shutil.copytree(template, dry)
        rtrace, _, _ = dry_pass("recovery", dry)
        first_points = rng.sample(crashkit.crash_points(rtrace, dry), 8)
        for j, point in enumerate(first_points):
            root, durable, problems = crash_and_check(z, "recovery", template, base, point, work)
            found += [f"first crash {point.label}: {p}" for p in problems]
            start = work / f"second{j}"
            shutil.copytree(root, start)
            problems = check_crashed(start, base, durable)
            found += [f"first crash {point.label}: {p}" for p in problems]
            found += _crash_recovery_everywhere(z, f"after {point.label}", start, base, durable, work, sample=12)
    for message in found:
        violation(message)
    assert not found, "\n".join(found[:30])
