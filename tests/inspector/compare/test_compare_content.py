"""``diff`` sees every difference (issue 25, the `diff A B` section): records by content, every
listed file by parsed value, the rest by bytes, damage as content, and exit 2 for a side that
could not be read whole or had refused input."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.compare import compare_paths
from journal import fixtures, fs
from journal.appliedset import APPLIED_SET_NAME
from journal.events import JOURNAL_NAME
from journal.park import PARKED_NAME, ParkRecord, record_park
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.views import PERSONA, REFLECTIONS
from tests.helpers.other_user import run_python_as_other_user

NAME = "healthy"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """A: the healthy fixture; B: a copy, which each test changes."""
    fixtures.healthy(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    return tmp_path / "a" / NAME, tmp_path / "b" / NAME


def _compare(a: Path, b: Path, **kw):
    snap_a, snap_b = fixtures.tree_snapshot(a), fixtures.tree_snapshot(b)
    result = compare_paths(a, b, **kw)
    assert fixtures.tree_snapshot(a) == snap_a and fixtures.tree_snapshot(b) == snap_b  # both only read
    return result


def _edit_line(path: Path, index: int, edit) -> dict:
    """Rewrite the record on line ``index`` (0-based) of an ndjson file through ``edit(obj)``."""
    lines = path.read_bytes().split(b"\n")
    obj = json.loads(lines[index])
    edit(obj)
    lines[index] = json.dumps(obj).encode()
    path.write_bytes(b"\n".join(lines))
    return obj


def _second_record(b: Path) -> dict:
    return json.loads((b / JOURNAL_NAME).read_bytes().split(b"\n")[1])


# -- item 1: content, not ids ---------------------------------------------------------------------


def test_same_ids_and_views_but_a_payload_field_differs(pair, capsys):
    a, b = pair
    before = _second_record(b)["payload"]["reinforcement"]
    obj = _edit_line(b / JOURNAL_NAME, 1, lambda o: o["payload"].update(reinforcement=99.0))
    result = _compare(a, b)
    j = result.journal
    assert not result.identical and result.status == "different"
    assert j.only_a == j.only_b == [] and j.common_prefix == j.a.events  # the same ids in the same order
    (changed,) = j.changed
    assert (changed.event_id, changed.index_a, changed.index_b) == (obj["event_id"], 1, 1)
    assert [(c.path, c.kind, c.before, c.after) for c in changed.changes] == [
        ("payload.reinforcement", "changed", before, 99.0)
    ]
    assert result.files == []  # the views are equal
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert f"payload.reinforcement: {before} → 99.0" in out and obj["event_id"] in out
    assert out.index("common prefix") < out.index("changed  1 event")  # beside the divergence point


def test_key_order_and_spacing_of_a_record_are_no_difference(pair):
    a, b = pair
    lines = (b / JOURNAL_NAME).read_bytes().split(b"\n")
    obj = json.loads(lines[1])
    lines[1] = json.dumps(dict(reversed(list(obj.items()))), separators=(",", ":")).encode()
    (b / JOURNAL_NAME).write_bytes(b"\n".join(lines))
    assert _compare(a, b).identical


def test_type_and_ts_of_a_record_are_compared(pair):
    a, b = pair
    _edit_line(b / JOURNAL_NAME, 0, lambda o: o.update(ts="2030-01-01T00:00:00"))
    _edit_line(b / JOURNAL_NAME, 1, lambda o: o["payload"].update(sub_zero_days=0.0))
    j = _compare(a, b).journal
    paths = {(c.path, c.kind) for e in j.changed for c in e.changes}
    assert paths == {("ts", "changed"), ("payload.sub_zero_days", "type")}


def test_an_event_both_hold_past_the_divergence_is_compared_at_its_two_indices(pair):
    a, b = pair
    lines = (b / JOURNAL_NAME).read_bytes().split(b"\n")
    extra = json.loads(lines[0])
    extra["event_id"] = "00000000-0000-4000-8000-00000000beef"
    second = json.loads(lines[1])
    second["payload"]["disputation"] = 5.0
    lines[1:2] = [json.dumps(extra).encode(), json.dumps(second).encode()]
    (b / JOURNAL_NAME).write_bytes(b"\n".join(lines))
    j = _compare(a, b).journal
    assert j.diverges_at == 1 and [e.event_id for e in j.only_b] == [extra["event_id"]]
    (changed,) = j.changed
    assert (changed.event_id, changed.index_a, changed.index_b) == (second["event_id"], 1, 2)
    assert [c.path for c in changed.changes] == ["payload.disputation"]


# -- item 2: every file ---------------------------------------------------------------------------


def _json_edit(name: str, edit):
    def run(folder: Path) -> None:
        path = folder / name
        obj = json.loads(path.read_bytes()) if path.exists() else None
        path.write_text(json.dumps(edit(obj), indent=2))

    return run


def _shard(folder: Path, archive: str) -> str:
    return sorted(p.name for p in (folder / archive).iterdir())[0]


def _edit_shard(folder: Path) -> None:
    name = _shard(folder, REFLECTION_ARCHIVE)
    path = folder / REFLECTION_ARCHIVE / name
    entries = json.loads(path.read_bytes())
    entries[0]["status"] = "promoted-elsewhere"
    path.write_text(json.dumps(entries))


def _park(folder: Path) -> None:
    record_park(folder, ParkRecord("e-x", "persona.entry_updated", 3, 4, "t", "p", "alice", "laptop", "why"))


def _outbox_done(folder: Path) -> None:
    op = json.loads((folder / "outbox.ndjson").read_bytes().split(b"\n")[0])["op_id"]
    with open(folder / "outbox.ndjson", "ab") as fh:
        fh.write(json.dumps({"op_id": op, "status": "done", "ts": "2026-05-02T00:00:00"}).encode() + b"\n")


EDITS = {
    "facts_archive.json": (_json_edit("facts_archive.json", lambda _: [{"id": "f1", "text": "x"}]), "[0]"),
    "reflections_archive.json": (_json_edit("reflections_archive.json", lambda _: [{"id": "r", "n": 1}]), "[0]"),
    "surfaced.json": (_json_edit("surfaced.json", lambda _: [{"reflection_id": "r"}]), "[0]"),
    APPLIED_SET_NAME: (_json_edit(APPLIED_SET_NAME, lambda _: {"ids": ["x"]}), ""),
    "settings.json": (_json_edit("settings.json", lambda _: {"k": 1}), ""),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_file_only_one_side_has(pair, name):
    a, b = pair
    edit, _ = EDITS[name]
    edit(b)
    result = _compare(a, b)
    assert [(f.file, f.change) for f in result.files] == [(name, "added")] and not result.identical


@pytest.mark.parametrize(
    ("edit", "file", "path"),
    [
        (_edit_shard, REFLECTION_ARCHIVE, "[0].status"),
        (_park, PARKED_NAME, "[1]"),
        (_outbox_done, "outbox.ndjson", "[2]"),
        (_json_edit("facts.json", lambda v: [{**v[0], "text": "changed"}, *v[1:]]), "facts.json", "[0].text"),
        (_json_edit("events_applied.json", lambda v: {**v, "ts": "2030-01-01"}), "events_applied.json", "ts"),
    ],
    ids=["shard-entry-field", "park-record", "outbox-line", "facts-text", "sentinel-ts"],
)
def test_a_listed_file_differs_by_value(pair, edit, file, path):
    a, b = pair
    for folder in (a, b) if file == PARKED_NAME else ():
        _park(folder)  # both have a park file; B's has one more record
    edit(b)
    result = _compare(a, b)
    (diff,) = result.files
    assert diff.file.startswith(file) and diff.change == "changed" and diff.rule in ("value", "lines")
    assert [c.path.startswith(path) for c in diff.changes] == [True], diff.changes
    assert not result.identical


def test_zero_against_zero_point_zero_in_a_view_is_a_type_change_and_key_order_is_not(pair):
    a, b = pair
    refl = json.loads((b / REFLECTIONS).read_bytes())
    key = next(k for k, v in refl[0].items() if type(v) is int)
    refl[0][key] = float(refl[0][key])
    refl[1] = dict(reversed(list(refl[1].items())))  # key order only
    (b / REFLECTIONS).write_text(json.dumps(refl, indent=1))
    (diff,) = _compare(a, b).files
    assert [(c.path, c.kind) for c in diff.changes] == [(f"[0].{key}", "type")]


def test_key_order_and_spacing_of_a_view_are_no_difference(pair):
    a, b = pair
    persona = json.loads((b / PERSONA).read_bytes())
    (b / PERSONA).write_text(json.dumps(dict(reversed(list(persona.items()))), separators=(",", ":")))
    assert _compare(a, b).identical


def test_unknown_files_and_the_database_by_bytes(pair, capsys):
    a, b = pair
    for folder, data in ((a, b"SQLite format 3\x00one"), (b, b"SQLite format 3\x00two")):
        (folder / "time_indexed.db").write_bytes(data)
        (folder / "notes.txt").write_bytes(b'{"a": 1}')  # the same bytes: equal
    (b / "notes.txt").write_bytes(b'{"a":1}')  # unknown: by bytes, although the same JSON value
    (b / "extra").mkdir()
    (b / "extra" / "x.bin").write_bytes(b"\x00")
    result = _compare(a, b)
    assert [(f.file, f.change, f.rule) for f in result.files] == [
        ("extra/x.bin", "added", "bytes"),
        ("notes.txt", "changed", "bytes"),
        ("time_indexed.db", "changed", "bytes"),
    ]
    assert main(["diff", str(a), str(b)]) == 1
    assert "time_indexed.db  changed by bytes" in capsys.readouterr().out


def test_event_states_and_park_decisions_of_both_sides_come_from_the_diagnosis(tmp_path, capsys):
    built = fixtures.pending_tail(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    b = tmp_path / "b" / built.path.name
    tail1 = built.ids["tail1"]
    record_park(b, ParkRecord(tail1, "reflection.evidence_updated", None, None, "t", "p", "alice", "laptop", "why"))
    result = _compare(built.path, b)
    st = result.states
    assert st.a.counts["pending"] == 2 and st.a.parked == ()
    (parked,) = st.b.parked
    assert parked.event_id == tail1 and (parked.state, parked.reason) == ("applied", "parked")
    (change,) = [c for c in st.changes if c.event_id == tail1]
    assert (change.state_a, change.state_b, change.reason_b) == ("pending", "applied", "parked")
    assert [f.file for f in result.files] == [PARKED_NAME]
    assert main(["diff", str(built.path), str(b)]) == 1
    out = capsys.readouterr().out
    assert f"parked  {tail1}: #" in out and "states A  " in out and "2 pending" in out


# -- item 3: exit codes, damage is content ----------------------------------------------------------


def test_the_same_torn_tail_on_both_sides_is_equal_and_a_different_one_is_not(pair, capsys):
    a, b = pair
    for folder in (a, b):
        with open(folder / JOURNAL_NAME, "ab") as fh:
            fh.write(b'{"event_id": "torn')
    result = _compare(a, b)
    assert result.identical and [d.kind for d in result.journal.a.damage] == ["torn_tail"]
    assert main(["diff", str(a), str(b)]) == 0
    capsys.readouterr()
    with open(b / JOURNAL_NAME, "ab") as fh:
        fh.write(b"x")
    result = _compare(a, b)
    j = result.journal
    assert not result.identical and [d.kind for d in j.damage_only_a] == [d.kind for d in j.damage_only_b] == [
        "torn_tail"
    ]
    assert j.changed == [] and j.only_a == j.only_b == []
    assert main(["diff", str(a), str(b)]) == 1
    assert "damage only in B" in capsys.readouterr().out


def test_a_damaged_line_that_is_json_is_compared_by_value(pair):
    a, b = pair
    first = (a / JOURNAL_NAME).read_bytes().split(b"\n")[0]
    for folder, dup in ((a, first), (b, json.dumps(json.loads(first), separators=(",", ":")).encode())):
        with open(folder / JOURNAL_NAME, "ab") as fh:
            fh.write(dup + b"\n")  # a second copy of the first id: damage, by value
    result = _compare(a, b)
    assert [d.kind for d in result.journal.a.damage] == ["duplicate_event_id"] and result.identical


def test_byte_identical_exports_with_the_same_corrupt_view_are_identical(pair, capsys):
    a, b = pair
    for folder in (a, b):
        (folder / "facts.json").write_bytes(b"[{not json")
    result = _compare(a, b)
    assert result.identical and [(p.side, p.file) for p in result.view_problems] == [
        ("a", "facts.json"),
        ("b", "facts.json"),
    ]
    assert main(["diff", str(a), str(b)]) == 0
    capsys.readouterr()
    (b / "facts.json").write_bytes(b"[{not json either")
    result = _compare(a, b)
    assert [(f.file, f.rule) for f in result.files] == [("facts.json", "value")]
    assert not result.identical


def test_a_zip_with_refused_members_against_itself_is_exit_2_and_says_why(pair, tmp_path, capsys):
    a, _ = pair
    z = fixtures.zip_export(a, tmp_path / "a.zip")
    fixtures.add_zip_member(z, "../escape.json", b"[]")
    fixtures.add_zip_member(z, f"{NAME}/link.json", b"/etc/passwd", symlink=True)
    result = compare_paths(z, z)
    assert result.status == "unreadable" and not result.identical
    refused = [(p.side, p.code) for p in result.problems]
    assert refused.count(("a", "input.refused")) == 2 and refused.count(("b", "input.refused")) == 2
    assert result.files == [] and result.journal.identical  # what was read is equal
    assert main(["diff", str(z), str(z)]) == 2
    out = capsys.readouterr().out
    assert "unreadable A" in out and "../escape.json" in out and "link" in out and "identical\n" not in out
    assert main(["diff", str(z), str(z), "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "unreadable" and {p["side"] for p in doc["problems"]} == {"a", "b"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_journal_against_an_empty_one_is_exit_2(pair, capsys):
    a, b = pair
    (a / JOURNAL_NAME).unlink()
    os.mkfifo(a / JOURNAL_NAME)  # never opened: reading it would hang
    (b / JOURNAL_NAME).write_bytes(b"")
    result = compare_paths(a, b)
    assert result.status == "unreadable"
    assert [(p.side, p.file) for p in result.problems] == [("a", JOURNAL_NAME)]
    assert main(["diff", str(a), str(b)]) == 2


def test_a_journal_that_is_a_folder_is_exit_2(pair):
    a, b = pair
    (a / JOURNAL_NAME).unlink()
    (a / JOURNAL_NAME).mkdir()
    (b / JOURNAL_NAME).write_bytes(b"")
    result = compare_paths(a, b)
    assert result.status == "unreadable" and [p.side for p in result.problems] == ["a"]


def test_a_journal_that_cannot_be_read_against_an_empty_one_is_exit_2(pair, monkeypatch, capsys):
    """The read refused as a mode-000 file refuses it (root reads anything: the refusal is
    simulated at the one function every reader opens with; the test below runs it for real)."""
    a, b = pair
    (b / JOURNAL_NAME).write_bytes(b"")
    real = fs.open_regular
    locked = str(a / JOURNAL_NAME)

    def refuse(path):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real(path)

    monkeypatch.setattr(fs, "open_regular", refuse)
    result = compare_paths(a, b)
    assert result.status == "unreadable"
    assert [(p.side, p.file) for p in result.problems] == [("a", JOURNAL_NAME)]
    assert "Permission denied" in result.problems[0].message
    assert main(["diff", str(a), str(b)]) == 2
    assert "unreadable A  events.ndjson" in capsys.readouterr().out


@pytest.fixture
def shared_base() -> Iterator[Path]:
    """A temp folder another user can read (pytest's own is private to this user)."""
    base = Path(tempfile.mkdtemp(prefix="compare-unreadable-"))
    os.chmod(base, 0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_an_unreadable_journal_against_an_empty_one_is_exit_2(shared_base):
    a_root, b_root = shared_base / "a", shared_base / "b"
    fixtures.healthy(a_root)
    shutil.copytree(a_root, b_root)
    (b_root / NAME / JOURNAL_NAME).write_bytes(b"")
    (shared_base / "runtime").mkdir()
    for dirpath, _dirs, files in os.walk(shared_base):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(Path(dirpath) / f, 0o644)
    (a_root / NAME / JOURNAL_NAME).chmod(0)
    # As nobody when we are root (root reads anything); skipped, with the reason, where nobody
    # cannot run this tree's code from here.
    proc = run_python_as_other_user(
        ["-m", "inspector", "diff", str(a_root / NAME), str(b_root / NAME), "--json"],
        env={**os.environ, "NEKO_RUNTIME_STATE_DIR": str(shared_base / "runtime")},
        cwd=shared_base,
        reads=[a_root / NAME, b_root / NAME],
    )
    assert "Traceback" not in proc.stderr.decode(errors="replace"), proc.stderr.decode(errors="replace")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["status"] == "unreadable" and doc["identical"] is False
    (problem,) = doc["problems"]
    assert problem["side"] == "a" and problem["file"] == JOURNAL_NAME and "ermission" in problem["message"]


# -- item 4: an unknown --character -----------------------------------------------------------------


def test_an_unknown_character_is_exit_2_for_character_folders_and_roots(pair, capsys):
    a, b = pair
    assert main(["diff", str(a), str(b), "--character", NAME]) == 0
    assert main(["diff", str(a), str(b), "--character", "nobody"]) == 2
    assert "nobody" in capsys.readouterr().err
    assert main(["diff", str(a.parent), str(b.parent), "--character", "nobody"]) == 2


def test_persona_archive_shards_are_listed_files(pair):
    a, b = pair
    name = _shard(b, PERSONA_ARCHIVE)
    path = b / PERSONA_ARCHIVE / name
    path.write_text(json.dumps(json.loads(path.read_bytes()), separators=(",", ":")))  # spacing only
    assert _compare(a, b).identical
    entries = json.loads(path.read_bytes())
    entries[0]["archived_at"] = "2030-01-01T00:00:00"
    path.write_text(json.dumps(entries))
    (diff,) = _compare(a, b).files
    assert diff.file == f"{PERSONA_ARCHIVE}/{name}" and [c.path for c in diff.changes] == ["[0].archived_at"]


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_given_as_a_path_is_exit_2_and_never_read(pair, tmp_path, capsys):
    _a, b = pair
    fifo = tmp_path / "export.zip"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    assert main(["diff", str(fifo), str(b)]) == 2
    assert main(["diff", str(b), str(fifo)]) == 2
    assert "neither a folder nor a .zip" in capsys.readouterr().err
