"""The re-diagnosis of a watched character reads the server's characters.json the window's
diagnosis read (--characters or the one beside the memory root), never a second search of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.controllers.dispatch import GuiDispatcher
from inspector.controllers.session import SessionController
from inspector.core.jobs import CancelToken
from inspector.core.rediagnose import diagnose_in_child
from journal import fixtures as folders
from journal.diagnosis import diagnose_path

WAIT_MS = 20_000


@pytest.fixture(autouse=True)
def _no_real_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))


def write_characters(path: Path, names: list[str]) -> None:
    doc = {"主人": {"档案名": "主人"}, "猫娘": {n: {"昵称": n} for n in names}, "当前猫娘": names[0]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


@pytest.fixture
def app(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``<app>/memory/pending-tail``; the ``characters.json`` beside it lists someone else, the
    one named with --characters lists it."""
    built = folders.pending_tail(tmp_path / "app" / "memory")
    write_characters(tmp_path / "app" / "config" / "characters.json", ["someone-else"])
    given = tmp_path / "given.json"
    write_characters(given, [built.path.name])
    return tmp_path / "app" / "memory", built.path, given


def test_the_child_reads_the_characters_file_it_is_given_and_no_other(app) -> None:
    root, char, given = app
    d = diagnose_path(root, characters_file=given)
    assert d.characters_file == str(given)
    (first,) = d.characters
    assert first.server_start is not None and first.server_start.reconciled is True
    last = len(first.events) - 1
    delta = diagnose_in_child(str(char), str(root), char.name, last, characters_file=d.characters_file)
    assert delta.server_start is not None and delta.server_start.reconciled is True
    assert delta.server_start.characters_file == str(given)
    # Told none (the first diagnosis read none), it reads none: the file beside the root is not looked for.
    blind = diagnose_in_child(str(char), str(root), char.name, last)
    assert blind.server_start is not None and blind.server_start.characters_file is None


def test_the_diagnosis_records_the_file_beside_the_memory_root(app) -> None:
    root, _char, _given = app
    d = diagnose_path(root)
    assert d.characters_file == str(root.parent / "config" / "characters.json")
    assert d.characters[0].server_start is not None and d.characters[0].server_start.reconciled is False


def test_the_window_rediagnoses_with_the_file_its_diagnosis_read(qtbot, app) -> None:
    root, char, given = app

    def diagnose(path, *, progress=None):
        return diagnose_path(path, progress=progress, characters_file=given)

    s = SessionController(GuiDispatcher(), diagnose=diagnose, watch=False)
    try:
        with qtbot.waitSignal(s.loaded, timeout=WAIT_MS):
            assert s.open_path(root)
        work = s.rediagnosis_work(char.name)
        assert work is not None
        delta = work(CancelToken())
        assert delta.server_start is not None and delta.server_start.reconciled is True
        assert delta.server_start.characters_file == str(given)
    finally:
        s.close()
