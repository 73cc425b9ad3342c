"""``memory-inspector chat`` (issue 26 item 5): the turns around an event, by the one event syntax,
the CLI's one privacy rule, its JSON contract and exit codes; nothing written."""

from __future__ import annotations

import hashlib
import json
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from inspector.cli import main
from journal import fixtures as folders
from journal.events import JOURNAL_NAME
from journal.fixtures.chatdb import write_chat_db
from journal.layout import CHAT_DB


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["chat", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """``pending-tail`` with a chat history: turns 45 and 10 minutes before event #9, 30 s after it,
    and 5 minutes after it."""
    b = folders.pending_tail(tmp_path)
    at = datetime.fromisoformat(json.loads((b.path / JOURNAL_NAME).read_text().splitlines()[9])["ts"])
    write_chat_db(
        b.path / CHAT_DB,
        [
            (at - timedelta(minutes=45), [("human", "too early")]),
            (at - timedelta(minutes=10), [("human", "my secret words"), ("ai", [{"type": "text", "text": "ok"}])]),
            (at + timedelta(seconds=30), [("human", "right after")]),
            (at + timedelta(minutes=5), [("ai", "too late")]),
        ],
    )
    return b.path


def test_around_an_event_shows_the_turns_before_it_without_their_words(capsys, folder: Path) -> None:
    before = tree(folder)
    code, out, err = run(capsys, str(folder), "--around", "#9")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "around event #9 reflection.evidence_updated" in lines[1]
    assert "3 turns of 5 rows" in lines[2] and "matched to events by time only" in lines[3]
    turns = [ln.split() for ln in lines if ln.startswith("    ")]
    assert [t[2] for t in turns] == ["human", "ai", "human"]
    assert "secret" not in out and "‹text, 15 chars›" in out  # the CLI's one privacy rule
    assert tree(folder) == before


def test_show_text_prints_the_words_and_redact_keeps_them_out(capsys, folder: Path) -> None:
    _, out, _ = run(capsys, str(folder), "--around", "#9", "--show-text")
    assert "my secret words" in out and "right after" in out and "too early" not in out
    _, out, _ = run(capsys, str(folder), "--around", "#9", "--show-text", "--redact")
    assert "secret" not in out


def test_json_has_the_words_and_the_window_and_redact_tokenizes_them(capsys, folder: Path) -> None:
    code, out, _ = run(capsys, str(folder), "--around", "#9", "--minutes", "60", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == 1 and doc["event"]["index"] == 9 and doc["read"] == "backup"
    assert [t["text"] for t in doc["turns"]] == ["too early", "my secret words", "ok", "right after"]
    assert doc["rows"] == 5 and doc["link"].startswith("turns are matched to events by time only")
    _, out, _ = run(capsys, str(folder), "--around", "#9", "--json", "--redact")
    assert "secret" not in out and len(json.loads(out)["turns"]) == 3


def test_an_id_prefix_and_between_two_times(capsys, folder: Path) -> None:
    event_id = json.loads((folder / JOURNAL_NAME).read_text().splitlines()[9])["event_id"]
    _, by_prefix, _ = run(capsys, str(folder), "--around", event_id[:8], "--json")
    _, by_index, _ = run(capsys, str(folder), "--around", "#9", "--json")
    assert json.loads(by_prefix) == json.loads(by_index)
    code, out, _ = run(capsys, str(folder), "--between", "2026-05-01T09:01:35", "2026-05-01 08:00", "--json")
    assert code == 0 and len(json.loads(out)["turns"]) == 4 and json.loads(out)["event"] is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--around", "#99"], "no event '#99'"),
        (["--around", "nope"], "no event 'nope'"),
        (["--between", "soon", "later"], "not a time: 'soon'"),
        (["--around", "#9", "--character", "bob"], "bob"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(capsys, folder: Path, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, str(folder), *argv)
    assert code == 2 and out == "" and message in err and err.startswith("memory-inspector chat: error: ")


def test_no_chat_history_is_exit_1(capsys, tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    code, out, err = run(capsys, str(b.path), "--around", "#9")
    assert code == 1 and out == "" and "no time_indexed.db here" in err


def test_a_zip_export_is_read_from_its_private_copy(capsys, folder: Path, tmp_path: Path) -> None:
    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, f"{folder.name}/{p.relative_to(folder)}")
    code, out, _ = run(capsys, str(export), "--around", "#9", "--json")
    assert code == 0 and len(json.loads(out)["turns"]) == 3


def test_around_and_between_are_one_or_the_other(capsys, folder: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["chat", str(folder)])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["chat", str(folder), "--around", "#9", "--between", "a", "b"])
    assert exc.value.code == 2


def test_several_characters_need_one_named_as_every_command_says(capsys, folder: Path) -> None:
    folders.healthy(folder.parent)
    code, out, err = run(capsys, str(folder.parent), "--around", "#9")
    assert code == 2 and out == ""
    assert err.strip().endswith("holds 2 characters ('healthy', 'pending-tail'): name one with --character")
    code, _, _ = run(capsys, str(folder.parent), "--around", "#9", "--character", "pending-tail")
    assert code == 0
