"""Suite 1: enumerated crash points.

For each scenario a dry pass counts and records its filesystem calls; then, for every call, a
forked child runs the scenario and dies with ``os._exit`` immediately before it and immediately
after it, and for every write also after tearing it (0 bytes, 1 byte, half, all but one, zeros of
the full length, half then zeros). The parent checks the crashed folder, recovers it with the
reconciler and checks the invariants of :mod:`tests.faults.harness`.
"""

from __future__ import annotations

import shutil

import pytest

from tests.faults import crashkit
from tests.faults.harness import (
    Baseline,
    check_recovered,
    crash_and_check,
    dry_pass,
    reconcile,
    scratch_dir,
    zygote,
)
from tests.faults.scenarios import SCENARIOS
from tests.faults.tally import count, violation


def test_the_scenarios_have_at_least_300_crash_points_and_a_clean_durability_order():
    total = 0
    problems = []
    with scratch_dir() as work:
        for name, scenario in SCENARIOS.items():
            root = work / name
            scenario.prepare(root)
            trace, notes, error = dry_pass(name, root)
            assert error is None, f"{name}: {error!r}"
            assert notes, f"{name}: no API call returned"
            total += len(crashkit.crash_points(trace, root))
            problems += [f"{name}: {p}" for p in crashkit.durability_violations(trace, returned=True)]
    for p in problems:
        violation(p)
    assert not problems
    assert total >= 300


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_crash_before_or_after_any_call_recovers_with_every_invariant(name):
    scenario = SCENARIOS[name]
    found: list[str] = []
    with scratch_dir() as work, zygote() as z:
        template = work / "template"
        scenario.prepare(template)
        base = Baseline.of(template, compaction=scenario.compaction)
        dry = work / "dry"
        shutil.copytree(template, dry)
        trace, _, error = dry_pass(name, dry)
        assert error is None
        points = crashkit.crash_points(trace, dry)
        calls = {t.index for t in trace}
        assert {p.index for p in points} == calls == set(range(len(calls)))
        for point in points:
            root, durable, problems = crash_and_check(z, name, template, base, point, work)
            report = reconcile(root)
            problems += check_recovered(root, base, durable, report)
            count("crash states")
            for p in problems:
                message = f"{name} {point.label}: {p}"
                violation(message)
                found.append(message)
    assert not found, "\n".join(found[:30])
