"""The diagnosis reports how far its journal scans got, and a report that raises cancels it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import journal.diagnosis.scan as diagnose_scan
import journal.inputs as inputs_module  # where a zip export is extracted (the one resolver)
from journal import fixtures as folders
from journal.diagnosis import diagnose_path
from journal.events import JOURNAL_NAME


def test_progress_covers_every_journal_once_and_never_goes_back(tmp_path: Path, monkeypatch: Any) -> None:
    root = tmp_path / "memory"
    for build in (folders.healthy, folders.pending_tail, folders.glued_torn_line, folders.views_only_export):
        build(root)
    total = sum(os.path.getsize(p) for p in root.glob(f"*/{JOURNAL_NAME}"))
    monkeypatch.setattr(diagnose_scan, "REPORT_EVERY", 256)
    seen: list[tuple[int, int]] = []
    with diagnose_path(root, progress=lambda done, of: seen.append((done, of))) as diag:
        assert len(diag.characters) == 4
    assert {of for _, of in seen} == {total}
    done = [d for d, _ in seen]
    assert done[0] == 0 and done[-1] == total and done == sorted(done)
    assert len(set(done)) > 6  # reports inside the journals, not only between characters


def test_a_raising_report_cancels_and_removes_the_extracted_zip(tmp_path: Path, monkeypatch: Any) -> None:
    built = folders.healthy(tmp_path / "memory")
    archive = folders.zip_export(built.path.parent, tmp_path / "export.zip")
    monkeypatch.setattr(diagnose_scan, "REPORT_EVERY", 256)
    made: list[str] = []
    real_mkdtemp = inputs_module.tempfile.mkdtemp

    def mkdtemp(*args: Any, **kwargs: Any) -> str:
        made.append(real_mkdtemp(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(inputs_module.tempfile, "mkdtemp", mkdtemp)

    class Stop(Exception):
        pass

    def stop(done: int, total: int) -> None:
        if done:
            raise Stop

    with pytest.raises(Stop):
        diagnose_path(archive, progress=stop)
    assert len(made) == 1 and not os.path.exists(made[0])
