"""The bundled sample (resources/sample): exactly what scripts/make_sample.py writes, and every state."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from journal import fixtures as folders
from journal.diagnosis import diagnose_path
from resources import path as resource_path

REPO = Path(__file__).resolve().parent.parent


def _make_sample_module():
    spec = importlib.util.spec_from_file_location("make_sample", REPO / "scripts" / "make_sample.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerating_the_sample_gives_the_committed_files_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "sample"
    _make_sample_module().regenerate(out)
    assert folders.tree_snapshot(out) == folders.tree_snapshot(resource_path("sample"))
    _make_sample_module().regenerate(out)  # over an existing folder: same bytes again
    assert folders.tree_snapshot(out) == folders.tree_snapshot(resource_path("sample"))


def test_the_sample_shows_every_state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path))
    d = diagnose_path(resource_path("sample"), now=folders.FIXTURE_NOW)
    by_name = {c.name: c for c in d.characters}
    assert list(by_name) == sorted(folders.SAMPLE_CASES)
    assert by_name["healthy"].findings == []

    def states(name: str) -> set[tuple[str, str | None]]:
        return {(e.state, e.reason) for e in by_name[name].events if e.state != "applied"}

    assert states("pending-tail") == {("pending", None)}
    # our live write after the pause is recorded in the applied set: applied, never run again
    assert states("blocked-legacy-type") == {("blocked", "no_handler")}
    assert states("orphaned-by-live-write") == {("orphaned", "no_handler")}
    assert [x.kind for x in by_name["glued-torn-line"].defects] == ["glued"]
    assert states("archive-entry-lost") == {("orphaned", "archive_entry_lost")}
    assert states("persona-drift") == {("blocked", "view_drift")}
    # the wedge: the torn merge holds its entry; the crashed reflection write after it still replays
    wedged = by_name["wedged-merge"]
    assert states("wedged-merge") == {("blocked", "view_drift"), ("pending", None)}
    assert [f.code for f in wedged.findings if f.code in ("replay.held", "server.replay_stops")] == [
        "server.replay_stops",
        "replay.held",
    ]
    # the glued-sentinel character: the server cannot see the event its sentinel names
    glued = by_name["glued-torn-line"]
    assert glued.server_start is not None and glued.server_start.sentinel.state == "unknown_id"
    assert "server.sentinel_unseen" in [f.code for f in glued.findings]
    # the Outbox tab has something to show: a pending operation and a dead letter
    assert {f.code for f in by_name["outbox-backlog"].findings} >= {"outbox.pending", "outbox.dead_letter"}
