"""An apply writes what its plan planned, including a plan that only moves the sentinel (issue 23).

When the sentinel names an event glued onto a torn fragment, the memory server's reader cannot see
it and its next start replays the whole journal, rolling values back (``server.sentinel_unseen``).
Our dry run plans the fix: the sentinel goes back to the last event the server can see, and the
glued event is recorded in the applied set. The apply must write exactly that; afterwards the
server model predicts a start that changes no view.
"""

from __future__ import annotations

import pytest

from inspector.cli import main
from journal.appliedset import applied_beyond, read_applied_set
from journal.diagnosis import diagnose_character
from journal.views import read_sentinel
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
