"""A character's journal read from a PATH without a diagnosis (:mod:`journal.diagnosis.lookup`): the
same events, in the same order, with the same refusals, as the diagnosis of that PATH reads; and
``chat --around`` finds its event through it, never diagnosing the folder."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

import journal.compaction
import journal.diagnosis.character as character_module
from inspector.cli import main
from journal import fixtures as folders
from journal.diagnosis import diagnose_path
from journal.diagnosis.eventlist import find_events
from journal.diagnosis.lookup import character_journal
from journal.errors import SeveralCharactersError, UnknownCharacterError, UnreadableInputError
from journal.events import JOURNAL_NAME
from journal.fixtures import FIXTURE_NOW


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path_factory.mktemp("runtime")))
    monkeypatch.setattr(journal.compaction, "_now", lambda: FIXTURE_NOW)


def _read(events) -> list[tuple[str, str, str, int]]:
    return [(e.event_id, e.type, e.ts, e.line) for e in events]


def _same_as_the_diagnosis(path: Path, character: str | None = None) -> None:
    with diagnose_path(path, character=character) as diagnosis:
        c = diagnosis.only_character()
        with character_journal(path, character=character) as j:
            assert (j.name, _read(j.events), j.unreadable) == (c.name, _read(c.events), c.journal.unreadable)
            assert all(f in c.findings for f in j.findings)  # the read's findings are the diagnosis's
            if c.events:  # the one event syntax names the same event in both
                last = f"#{len(c.events) - 1}"
                assert find_events(j.events, last) == find_events(c.events, last)
                prefix = c.events[0].event_id[:6]
                assert find_events(j.events, prefix) == find_events(c.events, prefix)


@pytest.mark.parametrize("case", sorted(folders.CASES))
def test_the_events_are_the_diagnosis_events(tmp_path: Path, case: str) -> None:
    folders.CASES[case](tmp_path)
    _same_as_the_diagnosis(tmp_path)


def test_a_zipped_character_folder(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path / "src")
    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as z:
        for p in sorted(b.path.rglob("*")):
            z.write(p, p.relative_to(b.path).as_posix())
    _same_as_the_diagnosis(export)
    with character_journal(export) as j:
        private = Path(j.path)
        assert private.is_dir()
    assert not private.exists()  # the zip's extracted copy goes with the block


def test_a_journal_linked_out_of_the_root_is_refused_as_the_diagnosis_refuses_it(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path / "root")
    away = tmp_path / "elsewhere.ndjson"
    os.replace(b.path / JOURNAL_NAME, away)
    (b.path / JOURNAL_NAME).symlink_to(away)
    _same_as_the_diagnosis(tmp_path / "root")
    with character_journal(tmp_path / "root") as j:
        assert len(j.events) == 0 and j.unreadable is not None and "input.refused" in {f.code for f in j.findings}


def test_a_fifo_journal_is_not_waited_on(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    (b.path / JOURNAL_NAME).unlink()
    os.mkfifo(b.path / JOURNAL_NAME)
    _same_as_the_diagnosis(tmp_path)


def test_several_characters_need_one_named(tmp_path: Path) -> None:
    folders.pending_tail(tmp_path / "root", name="one")
    folders.pending_tail(tmp_path / "root", name="two")
    with pytest.raises(SeveralCharactersError, match="name one with --character"), character_journal(tmp_path / "root"):
        pass
    with pytest.raises(UnknownCharacterError), character_journal(tmp_path / "root", character="three"):
        pass
    _same_as_the_diagnosis(tmp_path / "root", "two")


def test_a_character_folder_linked_out_of_the_root_is_refused(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path / "elsewhere", name="away")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "away").symlink_to(b.path)
    with pytest.raises(UnreadableInputError, match="away"), character_journal(tmp_path / "root", character="away"):
        pass


def test_without_events_the_journal_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = folders.pending_tail(tmp_path)
    monkeypatch.setattr(character_module, "_read_journal", _never)
    with character_journal(tmp_path, read_events=False) as j:
        assert (j.name, Path(j.path), len(j.events)) == (b.path.name, b.path.absolute(), 0)


def _never(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("a whole diagnosis (or a read) where only the event is needed")


def test_chat_around_an_event_does_not_diagnose_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    b = folders.pending_tail(tmp_path)
    monkeypatch.setattr(character_module, "_run", _never)  # the steps of diagnose_character after its start
    monkeypatch.setattr(character_module, "diagnose_character", _never)
    code = main(["chat", str(b.path), "--around", "#9"])
    out, err = capsys.readouterr()
    # pending-tail has no chat history: exit 1 says so, after event #9 was found in the journal
    assert code == 1 and out == "" and "time_indexed.db" in err
    code = main(["chat", str(b.path), "--around", "#999"])
    assert code == 2 and "no event '#999'" in capsys.readouterr().err
