"""The chat history reader (issue 26 item 5, cloudsave-format §6): safe while the server writes,
matched to events by parsed time, and never a write to the db or beside it."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import threading
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from journal.chat import ChatError, parse_message, parse_naive_time, read_chat, window_around
from journal.fixtures.chatdb import message_json, write_chat_db
from journal.layout import CHAT_DB

AT = datetime(2026, 5, 1, 9, 0, 35)


def state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file of ``folder``: its SHA-256 and mtime (what a read must leave as it is)."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def calls(*offsets_minutes: float, role: str = "human") -> list[tuple[datetime, list[tuple[str, str]]]]:
    return [(AT + timedelta(minutes=m), [(role, f"said at {m:+}")]) for m in offsets_minutes]


def test_the_window_is_thirty_minutes_before_to_one_after_by_parsed_time(tmp_path: Path) -> None:
    db = write_chat_db(tmp_path / CHAT_DB, calls(-45, -30, -10, 0.5, 1, 1.5, 5))
    start, end = window_around("2026-05-01T09:00:35")
    assert (start, end) == (AT - timedelta(minutes=30), AT + timedelta(minutes=1))
    read = read_chat(db, start=start, end=end)
    assert [t.text for t in read.turns] == ["said at -30", "said at -10", "said at +0.5", "said at +1"]
    assert read.rows == 7 and read.method == "backup" and read.untimed == 0
    # a string comparison would be wrong: the db's space sorts before the event's "T"
    assert "2026-05-01 09:01:05" < "2026-05-01T09:00:35" and read.turns[2].stored_time == "2026-05-01 09:01:05"


def test_times_parse_as_the_servers_readers_do() -> None:
    assert parse_naive_time("2026-08-17 09:30:00.123456") == datetime(2026, 8, 17, 9, 30, 0, 123456)
    assert parse_naive_time("2026-08-17T09:31:00") == datetime(2026, 8, 17, 9, 31)
    assert parse_naive_time("2026-08-17 09:31:00+02:00") == datetime(2026, 8, 17, 9, 31)  # the offset is dropped
    assert parse_naive_time(b"2026-08-17 09:31:00") == datetime(2026, 8, 17, 9, 31)
    assert parse_naive_time("yesterday") is None and parse_naive_time(None) is None
    with pytest.raises(ChatError):
        window_around("not a time")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (message_json("human", "hello"), ("human", "hello", None)),
        (
            message_json("ai", [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]),
            ("ai", "a\nb", None),
        ),
        (message_json("system", []), ("system", "", None)),
        (message_json("tool", "x"), ("unknown", "x", "unknown type 'tool'")),
        ('{"type": "human"}', ("human", None, "no data.content")),
        ("plain words", ("unknown", "plain words", "not JSON: shown as it is stored")),
        ("[1, 2]", ("unknown", "[1, 2]", "not a JSON object: shown as it is stored")),
    ],
)
def test_messages_read_as_role_words_and_a_problem(raw: str, expected: tuple) -> None:
    assert parse_message(raw) == expected


def test_bad_rows_are_located_never_fatal(tmp_path: Path) -> None:
    db = write_chat_db(tmp_path / CHAT_DB, calls(0))
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES ('s', CAST(? AS TEXT), ?)",
        (b'{"type": "human", "data": {"content": "caf\xe9"}}', "2026-05-01 09:00:40"),
    )
    conn.execute("INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES ('s', 'x', 'soon')")
    conn.commit()
    conn.close()
    read = read_chat(db)
    assert read.rows == 3 and read.untimed == 1 and len(read.turns) == 2
    bad = read.turns[1]
    assert bad.text == "caf\ufffd" and bad.problem == "not UTF-8 at byte 42: shown with replacements"


def test_a_plain_read_writes_nothing_into_the_folder(tmp_path: Path) -> None:
    write_chat_db(tmp_path / CHAT_DB, calls(0, 1))
    before = state(tmp_path)
    assert len(read_chat(tmp_path / CHAT_DB, folder=tmp_path).turns) == 2
    assert state(tmp_path) == before  # no -journal, -wal or -shm left beside it, no byte changed


_HOT = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("PRAGMA cache_size = 1")
conn.execute("BEGIN")
for i in range(3000):
    conn.execute("INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES ('torn', ?, ?)",
                 ("x" * 200, "2026-05-01 09:00:00"))
os._exit(0)  # a crash mid-transaction: the changed pages are in the db, the -journal is hot
"""


def _hot_journal(folder: Path, committed: int) -> Path:
    db = write_chat_db(folder / CHAT_DB, calls(*range(committed)))
    subprocess.run([sys.executable, "-c", _HOT, db], check=True)
    journal = folder / (CHAT_DB + "-journal")
    assert journal.stat().st_size > 0, "the crash left no hot journal"
    return Path(db)


def test_a_hot_journal_reads_the_committed_rows_from_a_copy_and_leaves_both_files(tmp_path: Path) -> None:
    db = _hot_journal(tmp_path, committed=12)
    before = state(tmp_path)
    read = read_chat(db, folder=tmp_path)
    assert read.method == "copy" and read.rows == 12  # never the 3000 uncommitted rows
    assert all(t.session_id != "torn" for t in read.turns)
    assert state(tmp_path) == before  # the hot journal was not rolled back in place


def test_a_concurrent_writer_never_gets_database_is_locked(tmp_path: Path) -> None:
    db = write_chat_db(tmp_path / CHAT_DB, calls(*range(50)))
    errors: list[BaseException] = []
    done = threading.Event()

    def writer() -> None:
        conn = sqlite3.connect(db)  # the server passes no timeout: the driver's 5 s
        try:
            for i in range(300):
                conn.execute(
                    "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES ('w', ?, ?)",
                    (message_json("human", f"w{i}"), "2026-05-01 10:00:00"),
                )
                conn.commit()
        except BaseException as exc:
            errors.append(exc)
        finally:
            conn.close()
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    reads = 0
    while not done.is_set() or reads == 0:
        read = read_chat(db)
        assert read.rows >= 50
        reads += 1
    thread.join()
    assert errors == [] and reads > 0
    assert read_chat(db).rows == 350


def test_a_wal_db_is_read_with_its_committed_wal_pages(tmp_path: Path) -> None:
    db = write_chat_db(tmp_path / CHAT_DB, calls(0))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute(
        "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES ('s', ?, ?)",
        (message_json("ai", "in the wal"), "2026-05-01 09:00:40"),
    )
    conn.commit()
    try:
        assert (tmp_path / (CHAT_DB + "-wal")).stat().st_size > 0
        before = state(tmp_path)
        read = read_chat(db, folder=tmp_path)
        assert [t.text for t in read.turns] == ["said at +0", "in the wal"] and read.method == "copy"
        assert state(tmp_path) == before  # not even the -shm's read marks
    finally:
        conn.close()


def test_what_is_no_chat_history_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ChatError, match=r"no time_indexed\.db here"):
        read_chat(tmp_path / CHAT_DB)
    (tmp_path / CHAT_DB).write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(ChatError, match="not a readable SQLite database"):
        read_chat(tmp_path / CHAT_DB)
    (tmp_path / CHAT_DB).unlink()
    sqlite3.connect(tmp_path / CHAT_DB).execute("CREATE TABLE other (x)").connection.close()
    with pytest.raises(ChatError, match="no time_indexed_original table"):
        read_chat(tmp_path / CHAT_DB)


def test_a_link_out_of_the_folder_and_a_fifo_are_refused(tmp_path: Path) -> None:
    folder, elsewhere = tmp_path / "alice", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    write_chat_db(elsewhere / CHAT_DB, calls(0))
    (folder / CHAT_DB).symlink_to(elsewhere / CHAT_DB)
    with pytest.raises(ChatError, match="link leading out of the character folder"):
        read_chat(folder / CHAT_DB, folder=folder)
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    (folder / CHAT_DB).unlink()
    os.mkfifo(folder / CHAT_DB)
    with pytest.raises(ChatError, match="not a regular file"):
        read_chat(folder / CHAT_DB, folder=folder)
