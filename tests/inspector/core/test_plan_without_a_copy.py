"""The plan predicts what a run writes from the diagnosis's own pass of the engine, without a
scratch copy (issue 28), and that plan is the one the dry run on a scratch copy gives, on every
fixture case: the tail, up to an event, and a park. The exact path stays, as the fallback and as
this oracle (``predict_run`` taken away, the plan runs the reconciler on a copy).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from inspector.core import replay as gr
from inspector.core.replay import Scope
from inspector.core.replay import plan as replay_plan
from journal.fixtures import CASES
from tests.inspector.replay_cases import CHARACTER, FOLDER_CASES, build_case

pytestmark = pytest.mark.usefixtures("replay_env")


def fixed_clock() -> str:
    return "2026-12-01T12:00:00.000000"


def _build(root: Path, kind: str, case: str) -> tuple[Path, str]:
    if kind == "fixtures":
        return CASES[case](root, case).path, case
    return build_case(root, case), CHARACTER


def _what_it_plans(plan: gr.Plan) -> dict[str, object]:
    return {
        "events": plan.events,
        "block": plan.block,
        "blocks": plan.blocks,
        "held": plan.held,
        "applied_beyond": plan.applied_beyond,
        "unapplied": plan.unapplied,
        "diff": plan.diff,
        "predicted": plan.predicted,
        "predicted_applied_set": plan.predicted_applied_set,
        "writes": plan.writes,
        "has_work": plan.has_work,
        "park": plan.park,
        "report": dataclasses.replace(plan.dry_report, rescans=0),
    }


def _scopes(plan: gr.Plan) -> list[Scope]:
    scopes = [Scope()]
    if plan.unapplied:
        scopes.append(Scope("until", plan.unapplied[0].event_id))
    if plan.held:
        scopes.append(Scope("park", park=plan.held[0].event_id))
    return scopes


@pytest.mark.parametrize(
    ("kind", "case"), [("fixtures", c) for c in CASES] + [("replay_cases", c) for c in FOLDER_CASES]
)
def test_the_plan_from_the_engine_is_the_plan_of_a_dry_run(tmp_path, monkeypatch, kind, case):
    root = tmp_path / "memory"
    root.mkdir()
    _cd, character = _build(root, kind, case)
    target = gr.target_of(root, character)
    for scope in _scopes(gr.make_plan(target, clock=fixed_clock)):
        fast = gr.make_plan(target, scope, clock=fixed_clock)
        with monkeypatch.context() as m:
            m.setattr(replay_plan, "predict_run", lambda *_a, **_k: None)
            exact = gr.make_plan(target, scope, clock=fixed_clock)
        assert exact.predicted_by == "dry_run"
        assert fast.predicted_by == ("dry_run" if "views" in case else "engine"), scope
        assert _what_it_plans(fast) == _what_it_plans(exact), scope


@pytest.mark.parametrize(
    ("kind", "case"), [("fixtures", c) for c in CASES] + [("replay_cases", c) for c in FOLDER_CASES]
)
def test_the_look_after_the_apply_from_the_plans_read_is_a_fresh_look(tmp_path, backups, kind, case):
    root = tmp_path / "memory"
    root.mkdir()
    cd, character = _build(root, kind, case)
    plan = gr.make_plan(gr.target_of(root, character), clock=fixed_clock)
    read = plan.journal_read
    assert gr.folder_state(cd, read) == gr.folder_state(cd)
    outcome = gr.execute(plan, backup_root=backups, clock=fixed_clock)
    if plan.has_work:
        assert outcome.after is not None and outcome.after == gr.folder_state(cd)  # read afresh
        assert gr.folder_state(cd, read) == gr.folder_state(cd)
        assert plan.journal_read is None  # let go once used
