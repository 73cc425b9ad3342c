"""``memory-inspector replay … --park EVENT_ID``: going past a held event a person has decided about,
through the same guards as replay (server lock, plan with diff, backup, fingerprints, report)."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core import replay as gr
from inspector.core.prompter import HeadlessPrompter
from journal.appliedset import APPLIED_SET_NAME
from journal.events import JOURNAL_NAME
from journal.fixtures import server_lock_held
from journal.park import PARKED_NAME, read_parked
from journal.reader import read_journal
from journal.views import read_sentinel
from tests.inspector.replay_cases import CHARACTER, hash_tree
from tests.journal._replay_kit import evidence, persona_by_id, persona_evidence
from tests.journal.test_wedge import Wedge, build_wedge

pytestmark = pytest.mark.usefixtures("replay_env")


@pytest.fixture(autouse=True)
def _no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


def replay(root: Path, backups: Path, *extra: str) -> int:
    return main(["replay", str(root), "--character", CHARACTER, "--backup-dir", str(backups), *extra])


@pytest.fixture
def wedged(tmp_path: Path) -> tuple[Wedge, dict[str, str]]:
    """The torn merge (held for good), a live write past it, a crashed event of the merged entry
    (held behind it) and a crashed event of another entry."""
    w = build_wedge(tmp_path)
    assert w.merge is not None
    ids = {"merge": w.merge.event_id}
    ids["live"] = w.our_write("ref_b", 2.0).event_id
    ids["held"] = w.pending("persona.evidence_updated", persona_evidence("master", "prom_a", 4.0)).event_id
    ids["other"] = w.pending("reflection.evidence_updated", evidence("ref_a", 3.0)).event_id
    return w, ids


def _backups(backups: Path) -> list[Path]:
    folder = backups / CHARACTER
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_park_applies_the_entrys_held_events_records_the_decision_and_takes_a_backup(wedged, backups, capsys):
    w, ids = wedged
    before = hash_tree(w.cd)
    assert replay(w.root, backups, "--park", ids["merge"], "--yes") == 0
    out = capsys.readouterr().out
    assert f"Park #1 (line 2) persona.entry_updated master/prom_a  [{ids['merge']}]" in out
    assert "Why it is held: view_drift:" in out
    assert "With it parked, 1 held event(s) apply:" in out
    assert "persona.json master/prom_a: changed" in out and "reinforcement: 2.0 → 4.0" in out
    assert "Result: applied" in out and "Parked event #1" in out
    # The held event of the entry applied, the merge itself never did.
    prom_a = persona_by_id(w.cd)["prom_a"]
    assert prom_a["reinforcement"] == 4.0 and prom_a["text"] == "old text"
    events = read_journal(w.cd / JOURNAL_NAME).events
    assert read_sentinel(w.cd).event_id == events[-1].event_id
    assert not (w.cd / APPLIED_SET_NAME).exists()
    # The audit file: one line, the decision.
    (line,) = (w.cd / PARKED_NAME).read_bytes().splitlines()
    record = json.loads(line)
    assert list(record) == ["event_id", "type", "index", "line", "event_ts", "parked_at", "by", "host", "reason"]
    assert (record["event_id"], record["type"], record["index"], record["line"]) == (
        ids["merge"],
        "persona.entry_updated",
        1,
        2,
    )
    assert record["event_ts"] == events[1].ts and record["reason"].startswith("view_drift: persona entry master/prom_a")
    # The backup is of the folder before anything was written (no park record in it); the report
    # records the decision.
    (backup,) = _backups(backups)
    assert gr.load_backup(backup).hashes() == before
    report = json.loads((backup / "report.json").read_text())
    assert report["plan"]["scope"] == {"kind": "park", "until": None, "park": ids["merge"]}
    assert report["plan"]["park"]["event_id"] == ids["merge"]
    assert report["plan"]["park"]["released"] == [ids["held"]]
    assert report["outcome"]["parked"]["event_id"] == ids["merge"]
    assert report["outcome"]["parked"]["by"] == record["by"] and report["outcome"]["matches_plan"]
    assert report["outcome"]["status"] == "applied" and report["outcome"]["applied"] == [ids["held"], ids["other"]]
    # Replay never applies a parked event: the next round has nothing to do.
    assert gr.run_guarded_replay(
        gr.ReplayRequest(w.root, CHARACTER, backup_root=backups), HeadlessPrompter(True)
    ).status == "nothing_to_do"


def test_a_dry_run_of_park_shows_the_plan_and_writes_nothing(wedged, backups, capsys):
    w, ids = wedged
    before = hash_tree(w.root)
    assert replay(w.root, backups, "--park", ids["merge"], "--dry-run") == 0
    out = capsys.readouterr().out
    assert "With it parked, 1 held event(s) apply:" in out and "Dry run:" in out
    assert hash_tree(w.root) == before and not backups.exists()


def test_without_park_the_same_folder_stops_at_the_held_merge(wedged, backups, capsys):
    w, _ = wedged
    assert replay(w.root, backups, "--yes") == 1
    out = capsys.readouterr().out
    assert "reason: view_drift" in out and "Held, not applied: 2 event(s)" in out
    assert read_sentinel(w.cd).event_id == w.e0.event_id
    assert not (w.cd / PARKED_NAME).exists()


@pytest.mark.parametrize("which", ["live", "other", "unknown", "e0"])
def test_park_of_an_event_that_is_not_held_is_refused_with_exit_2_and_writes_nothing(
    wedged, backups, capsys, which
):
    w, ids = wedged
    ids = {**ids, "unknown": "no-such-event", "e0": w.e0.event_id}
    before = hash_tree(w.root)
    for extra in ((), ("--dry-run",)):
        assert replay(w.root, backups, "--park", ids[which], "--yes", *extra) == 2
        err = capsys.readouterr().err
        assert err.startswith("memory-inspector replay: ")
        assert ("no event" in err) if which == "unknown" else ("is not held" in err and "nothing was written" in err)
    assert hash_tree(w.root) == before and not backups.exists()


def test_park_of_an_already_parked_event_is_refused(wedged, backups, capsys):
    w, ids = wedged
    assert replay(w.root, backups, "--park", ids["merge"], "--yes") == 0
    capsys.readouterr()
    before = hash_tree(w.root)
    assert replay(w.root, backups, "--park", ids["merge"], "--yes") == 2
    assert "already parked" in capsys.readouterr().err
    assert hash_tree(w.root) == before
    assert len(read_parked(w.cd).records) == 1


def test_park_cannot_be_combined_with_until_or_repair(wedged, backups, capsys):
    w, ids = wedged
    before = hash_tree(w.root)
    assert replay(w.root, backups, "--park", ids["merge"], "--until", ids["other"]) == 2
    assert replay(w.root, backups, "--park", ids["merge"], "--repair-orphans") == 2
    assert "cannot be combined" in capsys.readouterr().err
    assert hash_tree(w.root) == before


def test_park_is_refused_while_the_server_runs(wedged, backups, tmp_path, capsys):
    w, ids = wedged
    before = hash_tree(w.root)
    with server_lock_held(tmp_path / "runtime"):
        assert replay(w.root, backups, "--park", ids["merge"], "--yes") == 1
    assert "Refused: the memory server is running" in capsys.readouterr().out
    assert hash_tree(w.root) == before and not backups.exists()


def test_park_without_yes_and_no_terminal_refuses(wedged, backups, capsys):
    w, ids = wedged
    before = hash_tree(w.root)
    assert replay(w.root, backups, "--park", ids["merge"]) == 1
    assert "stdin is not a terminal" in capsys.readouterr().err
    assert hash_tree(w.root) == before


def test_park_through_the_steps_the_window_runs(wedged, backups):
    """The window calls make_plan and execute itself (off the GUI thread): park is a scope of both."""
    w, ids = wedged
    target = gr.target_of(w.root, CHARACTER)
    plan = gr.make_plan(target, gr.Scope("park", park=ids["merge"]))
    assert plan.has_work and plan.park is not None and plan.complete
    assert [e.event_id for e in plan.park.released] == [ids["held"]]
    assert [e.event_id for e in plan.events] == [ids["held"], ids["other"]]
    outcome = gr.execute(plan, backup_root=backups)
    assert outcome.status == "applied" and outcome.parked is not None and outcome.mismatches == []
    assert read_parked(w.cd).ids == {ids["merge"]}
    assert outcome.report is not None and outcome.report.parked == [ids["merge"]]
    with pytest.raises(gr.BadInputError, match="not held"):
        gr.make_plan(target, gr.Scope("park", park=ids["held"]))


def test_park_of_an_empty_id_is_refused_and_not_a_plain_replay(wedged, backups, capsys):
    w, _ids = wedged
    before = hash_tree(w.cd)
    assert replay(w.root, backups, "--park", "", "--yes") == 2
    captured = capsys.readouterr()
    assert "--park needs an event id" in captured.err and captured.out == ""
    assert hash_tree(w.cd) == before and not _backups(backups)


def test_park_of_an_empty_id_with_until_is_a_conflict(wedged, backups, capsys):
    w, ids = wedged
    assert replay(w.root, backups, "--park", "", "--until", ids["other"], "--yes") == 2
    assert "cannot be combined" in capsys.readouterr().err


def test_an_unreadable_parked_file_refuses_park_with_exit_2(wedged, backups, capsys):
    w, ids = wedged
    os.mkfifo(w.cd / PARKED_NAME)
    before = hash_tree(w.cd)
    assert replay(w.root, backups, "--park", ids["merge"], "--yes") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and PARKED_NAME in err and hash_tree(w.cd) == before
    assert not _backups(backups)
