"""File ▸ Compare with shows what ``diff`` finds (issue 25): the events whose record changed, the
files that differ with their field paths, and what a side could not read."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from inspector.controllers.support import compare_with_rows
from inspector.widgets.compare_panel import ComparePanel
from journal import fixtures
from journal.events import JOURNAL_NAME

pytestmark = pytest.mark.gui

NAME = "healthy"


def _tops(panel: ComparePanel) -> dict[str, list[str]]:
    tree = panel.entries
    out = {}
    for i in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(i)
        out[item.text(0)] = [item.text(1)] + [
            f"{item.child(k).text(0)}|{item.child(k).text(2)}|{item.child(k).text(3)}" for k in range(item.childCount())
        ]
    return out


def test_the_panel_lists_changed_records_files_and_what_was_not_read(qtbot, tmp_path: Path):
    fixtures.healthy(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    a, b = tmp_path / "a" / NAME, tmp_path / "b" / NAME
    lines = (b / JOURNAL_NAME).read_bytes().split(b"\n")
    record = json.loads(lines[1])
    record["payload"]["reinforcement"] = 99.0
    lines[1] = json.dumps(record).encode()
    (b / JOURNAL_NAME).write_bytes(b"\n".join(lines))
    (b / "facts_archive.json").write_text('[{"id": "f1", "n": 0.0}]')
    (a / "facts_archive.json").write_text('[{"id": "f1", "n": 0}]')
    panel = ComparePanel(compare_with_rows(a, b, None))
    qtbot.addWidget(panel)
    tops = _tops(panel)
    event = tops[f"event · {record['event_id']}"]
    assert event[0] == "changed (#1)" and event[1].startswith("payload.reinforcement|") and event[1].endswith("|99.0")
    assert tops["file · facts_archive.json"] == ["changed (value)", "[0].n|0|0.0"]
    assert "1 event changed · 1 file differs" in panel.summary.text()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_the_panel_says_what_a_side_could_not_read(qtbot, tmp_path: Path):
    fixtures.healthy(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    a, b = tmp_path / "a" / NAME, tmp_path / "b" / NAME
    (b / JOURNAL_NAME).unlink()
    os.mkfifo(b / JOURNAL_NAME)
    panel = ComparePanel(compare_with_rows(a, b, None))
    qtbot.addWidget(panel)
    assert "Not read whole: B events.ndjson" in panel.summary.text()
    assert any(k.startswith("B events.ndjson") and v[0] == "not read" for k, v in _tops(panel).items())
