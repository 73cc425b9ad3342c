"""``memory-inspector cloud`` and ``check`` on cloud-save units (issue 26): what they print, their
exit codes, and a read-only proof (bytes and mtimes of the unit, the local folder, the db and its
``-journal``) around every command."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from inspector.cli import main
from journal import fixtures
from journal.fixtures import cloudunit
from journal.fixtures.chatdb import write_chat_db

NAME = "小满.N.E.K.O"
CALLS = [
    (datetime(2026, 5, 1, 10), [("human", "早"), ("ai", "早上好")]),
    (datetime(2026, 5, 1, 10, 5), [("human", "x")]),
]


def state(*paths: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for p in paths:
        out.update({f"{p}:{k}": v for k, v in fixtures.tree_snapshot(p).items()})
        for dirpath, _dirs, files in os.walk(p):
            for f in files:
                st = os.lstat(os.path.join(dirpath, f))
                out[os.path.join(dirpath, f)] = (st.st_size, st.st_mtime_ns)
    return out


def run(capsys: pytest.CaptureFixture[str], *argv: str, watch: tuple[Path, ...] = ()) -> tuple[int, str, str]:
    before = state(*watch)
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert state(*watch) == before  # nothing read was written
    return code, out, err


def hot_journal(db: Path) -> None:
    """Leave a hot ``-journal`` beside ``db``, as a crash mid-write does."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA cache_size=1")
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO time_indexed_original (session_id, message) VALUES (?, ?)", [("s", "x" * 2000)] * 200)
    saved = {s: Path(str(db) + s).read_bytes() for s in ("", "-journal")}
    conn.execute("ROLLBACK")
    conn.close()
    for suffix, data in saved.items():
        Path(str(db) + suffix).write_bytes(data)


@pytest.fixture
def cloud(tmp_path: Path) -> cloudunit.CloudBuilt:
    src = fixtures.healthy(tmp_path / "src")
    write_chat_db(src.path / "time_indexed.db", CALLS)
    return cloudunit.upload(tmp_path / "N.E.K.O", src.path, NAME)


def test_check_opens_a_cloud_save_root_and_a_unit_by_the_units_name(
    capsys: pytest.CaptureFixture[str], cloud: cloudunit.CloudBuilt
) -> None:
    assert cloud.unit is not None
    for path in (cloud.root, cloud.unit, cloud.unit / "memory", cloud.root / "characters"):
        code, out, _ = run(capsys, "check", str(path), "--json", watch=(cloud.anchor,))
        assert code == 0, out
        [c] = json.loads(out)["characters"]
        assert c["name"] == NAME
        assert c["server_start"] is None
        assert c["server_start_not_applicable"] == "not applicable: a cloud-save unit is not a memory folder"
        assert [f["code"] for f in c["findings"]] == ["journal.absent"]
    code, out, _ = run(capsys, "check", str(cloud.unit), watch=(cloud.anchor,))
    assert "Not applicable: a cloud-save unit is not a memory folder." in out
    assert f"\n{NAME}\n" in out and "\nmemory\n" not in out  # the character's heading is the unit's name
    assert "Fingerprint: matches" in out and "meta.json: updated_at_utc 2026-12-01T18:28:55.769302Z" in out
    assert out.startswith(f"memory-inspector check: {cloud.unit} (cloud-save unit, 1 character)")
    code, out, _ = run(capsys, "check", str(cloud.root), watch=(cloud.anchor,))
    assert out.startswith(f"memory-inspector check: {cloud.root} (cloud-save root, 1 character)")


def test_check_reports_a_units_findings(capsys: pytest.CaptureFixture[str], cloud: cloudunit.CloudBuilt) -> None:
    assert cloud.unit is not None
    facts = cloud.unit / "memory" / "facts.json"
    facts.write_bytes(facts.read_bytes() + b" ")
    code, out, _ = run(capsys, "check", str(cloud.root), "--json")
    assert code == 1
    codes = {f["code"] for f in json.loads(out)["characters"][0]["findings"]}
    assert {"cloud.fingerprint_differs", "cloud.manifest_differs", "cloud.layouts_differ"} <= codes


def test_cloud_shows_the_unit_and_exits_0_when_it_verifies(
    capsys: pytest.CaptureFixture[str], cloud: cloudunit.CloudBuilt
) -> None:
    code, out, _ = run(capsys, "cloud", str(cloud.root), watch=(cloud.anchor,))
    assert code == 0
    assert f"character {NAME}  (both layouts)" in out
    assert "both layouts hold the same bytes" in out and "fingerprint: matches (raw db hash)" in out
    assert "memory server's next start: not applicable: a cloud-save unit is not a memory folder" in out
    assert "‹text, 10 chars›" in out and "小满.N.E.K.O ‹" not in out  # the profile's text by the privacy rule
    code, out, _ = run(capsys, "cloud", str(cloud.root), "--json", "--redact", watch=(cloud.anchor,))
    [u] = json.loads(out)["units"]
    assert u["fingerprint"]["state"] == "matches" and u["meta"]["sequence_number"] == 1
    assert NAME not in json.dumps(u["profile"], ensure_ascii=False)


def test_cloud_against_a_local_folder_exit_codes_and_the_deleted_chat_history(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cloud: cloudunit.CloudBuilt
) -> None:
    local = fixtures.healthy(tmp_path / "local")
    write_chat_db(local.path / "time_indexed.db", CALLS)
    shutil.copyfile(cloud.memory / "time_indexed.db", local.path / "time_indexed.db")
    watch = (cloud.anchor, local.path)
    code, out, _ = run(capsys, "cloud", str(cloud.root), "--against", str(local.path), watch=watch)
    assert code == 0 and "changes nothing" in out
    # a unit without a db deletes the local one: an error with its rows
    (cloud.memory / "time_indexed.db").unlink()
    assert cloud.legacy is not None
    (cloud.legacy / "time_indexed.db").unlink()
    hot_journal(local.path / "time_indexed.db")
    code, out, _ = run(capsys, "cloud", str(cloud.root), "--against", str(local.path), "--json", watch=watch)
    assert code == 1
    d = json.loads(out)["download"]
    assert d["deletes"] == ["time_indexed.db"] and d["chat_rows_lost"] == 3
    assert [(f["code"], f["severity"]) for f in d["findings"]] == [("download.deletes_chat", "error")]
    assert d["binding"] == "not compared" and d["profile"] == "not compared"
    assert "events.ndjson" in d["stays"]
    code, out, _ = run(capsys, "cloud", str(cloud.root), "--against", str(local.path), watch=watch)
    assert "3 chat rows are lost" in out and "until the memory server process restarts" in out


def test_cloud_against_refuses_a_root_of_several_characters_by_the_one_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cloud: cloudunit.CloudBuilt
) -> None:
    """``--against`` compares one unit: a root of several, none named, is refused as every command
    that reads one character refuses it (``SeveralCharactersError.only``), and one named is read."""
    other = fixtures.healthy(tmp_path / "other")
    cloudunit.upload(cloud.anchor, other.path, "Other")
    local = fixtures.healthy(tmp_path / "local")
    watch = (cloud.anchor, local.path)
    code, _, err = run(capsys, "cloud", str(cloud.root), "--against", str(local.path), watch=watch)
    assert code == 2
    assert f"{cloud.root} holds 2 characters (" in err and "): name one with --character" in err
    assert repr(NAME) in err and repr("Other") in err
    code, out, _ = run(
        capsys, "cloud", str(cloud.root), "--character", NAME, "--against", str(local.path), "--json", watch=watch
    )
    assert code in (0, 1) and json.loads(out)["download"] is not None


def test_cloud_exit_2_when_an_input_cannot_be_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "cloud", str(tmp_path / "missing"))
    assert code == 2 and "no such file or folder" in err
    fixtures.healthy(tmp_path / "memory")
    code, _, err = run(capsys, "cloud", str(tmp_path / "memory"))
    assert code == 2 and "no cloud save found here" in err
