"""The prediction of a run from the diagnosis's own pass (:func:`journal.dryrun.predict_run`) is the
dry run on a scratch copy (:func:`journal.dryrun.dry_run`, the exact path): the same bytes of every
view, shard, sentinel (with the injected clock's ``ts``) and applied set, the same diff and the
same report, on every fixture case and every scope (the tail, up to each pending event, parking
each held event), and on generated tails. Where it cannot be exact it says so, and the caller takes
the dry run.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import fixtures as folders
from journal import fs
from journal.diagnosis import diagnose_character
from journal.dryrun import DryRun, dry_run, predict_run
from journal.events import JOURNAL_NAME, encode_event, make_event
from journal.views import PERSONA, REFLECTIONS, load_view
from tests.inspector.replay_cases import FOLDER_CASES, build_case
from tests.journal.test_diagnose_predicts_replay import _payload, actions


def clock() -> str:
    return "2026-12-01T12:00:00.000000"


def _same(fast: DryRun | None, exact: DryRun) -> None:
    assert fast is not None
    assert fast.predicted == exact.predicted
    assert fast.applied_set == exact.applied_set
    assert fast.applied_set_changed == exact.applied_set_changed
    assert fast.diff == exact.diff
    # A dry run without ``until`` probes the journal once more after draining; nothing else differs.
    assert dataclasses.replace(fast.report, rescans=0) == dataclasses.replace(exact.report, rescans=0)


def _folders(root: Path) -> list[tuple[str, Path]]:
    out = []
    for name, build in folders.CASES.items():
        (root / "fixtures").mkdir(exist_ok=True)
        out.append((name, build(root / "fixtures", name).path))
    for case in FOLDER_CASES:
        (root / case).mkdir()
        out.append((case, build_case(root / case, case)))
    return out


def _run(cd: Path) -> Any:
    d = diagnose_character(cd, keep_run=True)
    return None if d.tail is None else d.tail.run


def test_the_prediction_is_the_dry_run_on_every_fixture_case(tmp_path: Path) -> None:
    for name, cd in _folders(tmp_path):
        run = _run(cd)
        if run is None:
            assert name in ("views-only", "views_only")  # no journal: the dry run it is
            continue
        last = run.events.event_id(len(run.events) - 1) if len(run.events) else None
        _same(predict_run(run, until=last, clock=clock), dry_run(cd, until=last, clock=clock))
        _same(predict_run(run, clock=clock), dry_run(cd, clock=clock))


def test_the_prediction_is_the_dry_run_up_to_each_pending_event(tmp_path: Path) -> None:
    checked = 0
    for _name, cd in _folders(tmp_path):
        run = _run(cd)
        if run is None:
            continue
        for d in run.decisions.decisions:
            _same(predict_run(run, until=d.event_id, clock=clock), dry_run(cd, until=d.event_id, clock=clock))
            checked += 1
        # An event behind the sentinel, or none of the journal: nothing is in scope.
        for until in ([run.events.event_id(0)] if len(run.events) else []) + ["no-such-event"]:
            _same(predict_run(run, until=until, clock=clock), dry_run(cd, until=until, clock=clock))
    assert checked > 20


def test_the_prediction_is_the_dry_run_parking_each_held_event(tmp_path: Path) -> None:
    checked = 0
    for _name, cd in _folders(tmp_path):
        run = _run(cd)
        if run is None:
            continue
        for d in run.decisions.decisions:
            if d.kind in ("held", "blocked"):
                _same(predict_run(run.again(park=d.event_id), clock=clock), dry_run(cd, park=d.event_id, clock=clock))
                checked += 1
    assert checked >= 5


def test_a_folder_the_prediction_cannot_be_sure_of_is_left_to_the_dry_run(tmp_path: Path) -> None:
    cd = build_case(tmp_path, "pending_tail")
    assert predict_run(_run(cd), clock=clock) is not None
    real = cd / "reflections.real.json"
    os.replace(cd / REFLECTIONS, real)
    os.symlink(real.name, cd / REFLECTIONS)  # a link inside the folder: the copy holds its target
    assert predict_run(_run(cd), clock=clock) is None
    from journal.handlers import default_registry, reflection_evidence_updated

    os.replace(real, cd / REFLECTIONS)
    registry = default_registry()
    registry.register("reflection.evidence_updated", lambda store, payload: reflection_evidence_updated(store, payload))
    d = diagnose_character(cd, keep_run=True, registry=registry)
    assert d.tail is not None and predict_run(d.tail.run, clock=clock) is None  # not the production handlers


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tail=st.lists(actions, min_size=1, max_size=12),
    corrupt=st.sampled_from([None, REFLECTIONS, PERSONA, "shard"]),
    until=st.one_of(st.none(), st.integers(0, 11)),
    twins=st.booleans(),
)
def test_the_prediction_is_the_dry_run_on_generated_tails(
    tmp_path_factory: Any, tail: list[tuple[Any, ...]], corrupt: str | None, until: int | None, twins: bool
) -> None:
    root = tmp_path_factory.mktemp("predict")
    b = folders.healthy(root)
    if twins:  # two entries with one id, each: a handler changes the first and archives both
        reflections = load_view(b.path / REFLECTIONS, list)
        reflections.insert(0, {**reflections[-1], "text": "a twin"})
        persona = load_view(b.path / PERSONA, dict)
        for section in persona.values():
            section["facts"] = [*section["facts"], *({**e, "text": "a twin"} for e in section["facts"])]
        fs.atomic_write_json(b.path / REFLECTIONS, reflections)
        fs.atomic_write_json(b.path / PERSONA, persona)
    for i, action in enumerate(tail):
        etype, payload = _payload(action)
        fs.durable_append(b.path / JOURNAL_NAME, encode_event(make_event(f"tail-{i}", etype, "t", payload)))
    if corrupt == "shard":
        (b.path / "reflection_archive").mkdir(exist_ok=True)
        fs.atomic_write_bytes(b.path / "reflection_archive" / "2026-05-03_00aa11bb.json", b'{"not": "a list"}')
    elif corrupt:
        fs.atomic_write_bytes(b.path / corrupt, b"[{")
    bound = None if until is None else f"tail-{min(until, len(tail) - 1)}"
    run = _run(b.path)
    fast = predict_run(run, until=bound, clock=clock)
    _same(fast, dry_run(b.path, until=bound, clock=clock))


@pytest.mark.parametrize("case", ["pending_tail", "glued", "persona_drift"])
def test_the_dry_run_links_the_journal_and_never_copies_it(tmp_path: Path, case: str, monkeypatch: Any) -> None:
    cd = build_case(tmp_path, case)
    import shutil

    copied: list[str] = []
    real_copyfile = shutil.copyfile

    def copyfile(src: Any, dst: Any, **kwargs: Any) -> Any:
        copied.append(Path(src).name)
        return real_copyfile(src, dst, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", copyfile)
    exact = dry_run(cd, clock=clock)
    assert JOURNAL_NAME not in copied and REFLECTIONS in copied
    _same(predict_run(_run(cd), clock=clock), exact)
