"""An apply writes what its plan planned, byte for byte, including a plan that only moves the
sentinel (issue 23).

When the sentinel names an event glued onto a torn fragment, the memory server's reader cannot see
it and its next start replays the whole journal, rolling values back (``server.sentinel_unseen``).
Our dry run plans the fix: the sentinel goes back to the last event the server can see, and the
glued event is recorded in the applied set. The apply must write exactly that; afterwards the
server model predicts a start that changes no view.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core import replay as gr
from journal.appliedset import APPLIED_SET_NAME, applied_beyond, read_applied_set
from journal.diagnosis import diagnose_character
from journal.dryrun import replay_files
from journal.fixtures import CASES
from journal.views import read_sentinel
from tests.inspector.replay_cases import CHARACTER, FOLDER_CASES, build_case
from tests.journal.test_server_model import twice_merged

pytestmark = pytest.mark.usefixtures("replay_env")

NAME = "twice-merged"


def codes(diag):
    return {f.code for f in diag.findings}


def test_the_apply_moves_a_sentinel_off_a_glued_event_as_the_dry_run_planned(tmp_path, backups, capsys):
    root = tmp_path / "memory"
    root.mkdir()
    ids = twice_merged(root, NAME, glued=True)
    cd = ids["path"]
    before = diagnose_character(cd)
    assert {"server.sentinel_unseen", "server.full_replay"} <= codes(before)
    assert before.tail is not None and before.tail.moves_sentinel  # the engine: a run writes the sentinel
    visible_last, glued = ids["events"][-2], ids["glued"]
    assert before.tail.sentinel_after == visible_last and before.tail.applied_beyond == [glued]

    assert main(["replay", str(root), "--character", NAME, "--backup-dir", str(backups), "--dry-run"]) == 0
    planned = capsys.readouterr().out
    assert "nothing to apply" not in planned.lower()
    assert read_sentinel(cd).event_id == glued  # a dry run writes nothing

    assert main(["replay", str(root), "--character", NAME, "--backup-dir", str(backups), "--yes"]) == 0
    out = capsys.readouterr().out
    assert "nothing_to_do" not in out and "Result: applied" in out
    sentinel = read_sentinel(cd)
    assert sentinel.event_id == visible_last
    assert list(applied_beyond(read_applied_set(cd, sentinel), sentinel.event_id)) == [glued]

    after = diagnose_character(cd)
    assert not {"server.sentinel_unseen", "server.full_replay"} & codes(after)
    assert after.server_start is not None and after.server_start.changes_total == 0
    assert after.counts() == before.counts()  # every event is still applied, by our reading
    assert after.tail is not None and not after.tail.moves_sentinel


# -- every fixture case: the apply writes the bytes the dry run planned ---------------------------------


def fixed_clock() -> str:
    return "2026-12-01T12:00:00.000000"


def _written(cd: Path) -> dict[str, bytes]:
    out = replay_files(cd)
    record = cd / APPLIED_SET_NAME
    if record.is_file():
        out[APPLIED_SET_NAME] = record.read_bytes()
    return out


def _planned(plan) -> dict[str, bytes]:
    out = dict(plan.predicted)
    if plan.predicted_applied_set is not None:
        out[APPLIED_SET_NAME] = plan.predicted_applied_set
    return out


def _build(root: Path, kind: str, case: str) -> tuple[Path, str]:
    if kind == "fixtures":
        return CASES[case](root, case).path, case
    return build_case(root, case), CHARACTER


@pytest.mark.parametrize(
    ("kind", "case"), [("fixtures", c) for c in CASES] + [("replay_cases", c) for c in FOLDER_CASES]
)
def test_replay_yes_writes_exactly_the_bytes_replay_dry_run_planned(tmp_path, backups, kind, case):
    root = tmp_path / "memory"
    root.mkdir()
    cd, character = _build(root, kind, case)
    target = gr.target_of(root, character)
    dry = gr.make_plan(target, clock=fixed_clock)  # what `replay --dry-run` prints and keeps
    plan = gr.make_plan(target, clock=fixed_clock)  # `replay --yes` plans again, then applies
    assert _planned(plan) == _planned(dry)
    outcome = gr.execute(plan, backup_root=backups, clock=fixed_clock)
    if not plan.has_work:
        assert outcome.status in ("nothing_to_do", "stopped") and outcome.backup is None
    else:
        assert outcome.status in ("applied", "stopped"), outcome.message
        assert outcome.mismatches == []
    assert _written(cd) == _planned(dry)
