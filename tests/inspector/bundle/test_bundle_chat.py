"""The chat history in a support bundle (issue 26 item 5): left out unless the sender includes it;
then rebuilt from a private copy with every message's words keyed, the facts index left out, and
the db (with a hot ``-journal`` beside it) only read."""

from __future__ import annotations

import sqlite3
import zipfile
from datetime import datetime
from pathlib import Path

from inspector.cli import main
from inspector.core.bundle import write_bundle
from inspector.core.redaction import Redactor
from journal import fixtures
from journal.chat import read_chat
from journal.fixtures.chatdb import write_chat_db

WORDS = "Master moved to Lisbon in spring"
CALLS = [
    (datetime(2026, 5, 1, 10, 0, 0, 500000), [("human", WORDS), ("ai", [{"type": "text", "text": "Lisbon, wow"}])]),
    (datetime(2026, 5, 1, 10, 5), [("system", "a summary of Lisbon")]),
]


def _folder(tmp_path: Path) -> Path:
    b = fixtures.healthy(tmp_path / "memory")
    db = Path(write_chat_db(b.path / "time_indexed.db", CALLS))
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE facts_fts_meta(key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO facts_fts_meta VALUES ('note', ?)", (WORDS,))
    conn.commit()
    conn.close()
    return b.path


def _db_of(out: Path, tmp_path: Path) -> Path | None:
    with zipfile.ZipFile(out) as zf:
        names = [n for n in zf.namelist() if n.endswith("/time_indexed.db")]
        if not names:
            return None
        target = tmp_path / "bundled.db"
        target.write_bytes(zf.read(names[0]))
        return target


def test_the_chat_history_is_left_out_by_default(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    out = tmp_path / "case.zip"
    result = write_bundle(folder.parent, out, secret=b"k" * 32)
    assert _db_of(out, tmp_path) is None
    reasons = [o["reason"] for o in result.manifest["omitted"]]
    assert any("the chat history (SQLite): left out unless the sender includes it" in r for r in reasons)


def test_included_every_message_is_keyed_and_the_db_only_read(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    db = folder / "time_indexed.db"
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()}
    out = tmp_path / "case.zip"
    write_bundle(folder.parent, out, secret=b"k" * 32, include_chat=True)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()} == before
    with zipfile.ZipFile(out) as zf:
        assert not [n for n in zf.namelist() if b"Lisbon" in zf.read(n)]  # no member holds a word of it
    bundled = _db_of(out, tmp_path)
    assert bundled is not None
    got = read_chat(bundled)
    original = read_chat(db)
    assert [(t.row, t.role, t.stored_time) for t in got.turns] == [
        (t.row, t.role, t.stored_time) for t in original.turns
    ]
    base = Redactor(b"k" * 32)
    assert [t.text for t in got.turns] == [
        base.token(WORDS),
        base.token("Lisbon, wow"),
        base.token("a summary of Lisbon"),
    ]
    conn = sqlite3.connect(bundled)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert tables == {"time_indexed_original", "time_indexed_compressed"}  # the facts index is left out


def test_the_command_includes_it_only_when_asked(tmp_path: Path, capsys) -> None:
    folder = _folder(tmp_path)
    out = tmp_path / "case.zip"
    assert main(["bundle", str(folder.parent), "-o", str(out), "--include-chat"]) == 0
    capsys.readouterr()
    bundled = _db_of(out, tmp_path)
    assert bundled is not None and read_chat(bundled).rows == 3
