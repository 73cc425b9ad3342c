"""``history`` diagnoses without the server model (``diagnose_path(..., server_model=False)``): the
states, findings and histories it shows are those of the whole diagnosis, only the prediction of the
memory server's next start is left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import journal.compaction
import journal.diagnosis.character as character_module
from inspector.cli import main
from journal import fixtures as folders
from journal.diagnosis import diagnose_path
from journal.diagnosis.values import is_server_start_finding
from journal.fixtures import FIXTURE_NOW
from journal.history import JournalHistory


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path_factory.mktemp("runtime")))
    monkeypatch.setattr(journal.compaction, "_now", lambda: FIXTURE_NOW)


@pytest.mark.parametrize("case", sorted(folders.CASES))
def test_all_but_the_server_start_is_the_whole_diagnosis(tmp_path: Path, case: str) -> None:
    folders.CASES[case](tmp_path)
    with diagnose_path(tmp_path) as whole, diagnose_path(tmp_path, server_model=False) as light:
        assert [c.name for c in light.characters] == [c.name for c in whole.characters]
        for w, lt in zip(whole.characters, light.characters, strict=True):
            assert lt.server_start is None
            assert [(e.event_id, e.state, e.reason) for e in lt.events] == [
                (e.event_id, e.state, e.reason) for e in w.events
            ]
            assert lt.findings == [f for f in w.findings if not is_server_start_finding(f)]
            if w.events:  # a history reads the journal (views-only has none)
                h_whole, h_light = JournalHistory(w), JournalHistory(lt)
                assert [m.to_json() for m in h_light.moved()] == [m.to_json() for m in h_whole.moved()]
                last = len(w.events) - 1
                assert h_light.state_at(last).to_json() == h_whole.state_at(last).to_json()


def _no_model(*_args: object) -> None:
    raise AssertionError("history ran the server model")


def test_history_runs_no_server_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folders.pending_tail(tmp_path)
    monkeypatch.setattr(character_module, "predict_server_start", _no_model)
    assert main(["history", str(tmp_path), "--at", "#9", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["at"]["index"] == 9 and doc["entries"]
