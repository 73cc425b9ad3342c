"""journal.cloudsave: every layout opened, a unit verified, a download planned and predicted
(issue 26 items 1-4; cloudsave-format §1-§5). Units are built in the server's byte format by
journal.fixtures.cloudunit; every test that reads a unit proves it left the bytes alone."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from journal import fixtures
from journal.cloudsave import open_cloud, preview_download, verify_input
from journal.cloudsave.canonical import canonical_json, payload_fingerprint
from journal.cloudsave.dbhash import file_sha256, shadow_sha256
from journal.cloudsave.opening import NotCloudSaveError
from journal.cloudsave.verify import UnitCheck
from journal.diagnosis import diagnose_character, diagnose_path
from journal.fixtures import cloudunit
from journal.fixtures.chatdb import write_chat_db
from journal.fixtures.cloudunit import CloudBuilt
from journal.views import load_view, save_view

NAME = "小满.N.E.K.O"
CALLS = [
    (datetime(2026, 5, 1, 10, 0, 0, 500000), [("human", "早"), ("ai", "早上好")]),
    (datetime(2026, 5, 1, 10, 5), [("human", "tea?")]),
]


def proof(*paths: Path) -> dict[str, object]:
    """Bytes and mtimes of everything under ``paths`` (a db's -journal included when there)."""
    out: dict[str, object] = {}
    for p in paths:
        out[str(p)] = fixtures.tree_snapshot(p)
        for dirpath, _dirs, files in os.walk(p):
            for f in files:
                st = os.lstat(os.path.join(dirpath, f))
                out[os.path.join(dirpath, f)] = (st.st_size, st.st_mtime_ns)
    return out


class Watched(list[Path]):
    """Paths a test registers (``append``/``extend``); each is proven unchanged when it ends."""

    def __init__(self) -> None:
        super().__init__()
        self.before: dict[str, object] = {}

    def append(self, p: Path) -> None:
        super().append(p)
        self.before.update(proof(p))

    def extend(self, ps: object) -> None:
        for p in ps:  # type: ignore[attr-defined]
            self.append(p)


@pytest.fixture
def readonly() -> Iterator[Watched]:
    w = Watched()
    yield w
    after: dict[str, object] = {}
    for p in w:
        after.update(proof(p))
    assert after == w.before


def local_with_db(root: Path, name: str = "healthy") -> fixtures.Built:
    b = fixtures.healthy(root, name)
    write_chat_db(b.path / "time_indexed.db", CALLS)
    return b


def unit(tmp_path: Path, *, db: bool = True, **kw: object) -> tuple[fixtures.Built, CloudBuilt]:
    b = local_with_db(tmp_path / "src") if db else fixtures.healthy(tmp_path / "src")
    return b, cloudunit.upload(tmp_path / "N.E.K.O", b.path, NAME, **kw)  # type: ignore[arg-type]


def checks(path: Path) -> list[UnitCheck]:
    with open_cloud(path) as opened:
        return verify_input(opened.found)


def codes(c: UnitCheck) -> list[tuple[str, str]]:
    return [(f.code, f.severity) for f in c.findings]


# -- §2.2: the canonical JSON and the fingerprint --------------------------------------------------


def test_canonical_json_is_the_servers_format() -> None:
    doc = {"b": [1.0, 1e-07, "é\n/\u2028"], "a": {"z": True, "é": None}}
    assert canonical_json(doc) == '{"a":{"z":true,"é":null},"b":[1.0,1e-07,"é\\n/\u2028"]}'.encode()


def test_the_fingerprint_covers_only_the_stable_binding_keys() -> None:
    base = payload_fingerprint("A", {"x": 1}, {"model_ref": "m", "asset_state": "ready"}, {"facts.json": "00"})
    assert base == payload_fingerprint(
        "A", {"x": 1}, {"model_ref": "m", "asset_state": "missing"}, {"facts.json": "00"}
    )
    assert base != payload_fingerprint("A", {"x": 1}, {"model_ref": "n"}, {"facts.json": "00"})
    assert base.startswith("sha256:") and len(base) == 7 + 64


def test_the_shadow_hash_is_the_servers_shadow_copy_and_a_shadow_of_a_shadow_is_itself(tmp_path: Path) -> None:
    db = Path(write_chat_db(tmp_path / "time_indexed.db", CALLS))
    before = proof(tmp_path)
    copy = tmp_path / "server-copy"
    copy.mkdir()
    shutil.copy(db, copy / "src.db")  # the server's rw shadow copy, run on a copy: never on the file read
    cloudunit.shadow_copy(copy / "src.db", copy / "shadow.db")
    assert shadow_sha256(db) == file_sha256(copy / "shadow.db") != file_sha256(db)
    assert shadow_sha256(copy / "shadow.db") == file_sha256(copy / "shadow.db")
    shutil.rmtree(copy)
    assert proof(tmp_path) == before


def test_the_shadow_hash_of_a_db_with_a_hot_journal_reads_the_committed_state(tmp_path: Path) -> None:
    db = Path(write_chat_db(tmp_path / "a" / "time_indexed.db", CALLS)) if (tmp_path / "a").mkdir() is None else None
    assert db is not None
    clean = shadow_sha256(db)
    # a crash mid-write: copy the db and its -journal while a write transaction is open
    hot = tmp_path / "hot"
    hot.mkdir()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA cache_size=1")
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO time_indexed_original (session_id, message) VALUES (?, ?)", [("s", "x" * 2000)] * 200)
    shutil.copy(db, hot / "time_indexed.db")
    shutil.copy(str(db) + "-journal", hot / "time_indexed.db-journal")
    conn.execute("ROLLBACK")
    conn.close()
    before = proof(hot)
    assert shadow_sha256(hot / "time_indexed.db") == clean  # the copy rolled back, not the file
    assert proof(hot) == before


# -- §1: every layout ------------------------------------------------------------------------------


def test_every_layout_names_the_character_as_the_unit_does(tmp_path: Path, readonly: Watched) -> None:
    _, built = unit(tmp_path)
    readonly.append(built.anchor)
    assert built.unit is not None and built.legacy is not None
    for path, kind in ((built.root, "cloudsave"), (built.unit, "unit"), (built.legacy, "legacy")):
        with open_cloud(path) as opened:
            assert opened.found.kind == kind
            assert [u.name for u in opened.found.units] == [NAME]
            assert opened.found.anchor == built.anchor
            [u] = opened.found.units
            assert u.layout == "both layouts" and u.memory_dir == built.unit / "memory"
    [c] = checks(built.root)
    assert c.fingerprint.state == "matches" and c.fingerprint.db_hash == "raw"
    assert c.fingerprint.recorded == built.fingerprint
    assert c.layouts_same is True and c.findings == []
    assert c.manifest.present and c.manifest.checked > 0 and not (c.manifest.differs or c.manifest.missing)


@pytest.mark.parametrize("which", ["root", "unit", "legacy"])
def test_a_zip_of_any_layout_opens_the_same(tmp_path: Path, which: str) -> None:
    _, built = unit(tmp_path)
    folder = {"root": built.root, "unit": built.unit, "legacy": built.legacy}[which]
    assert folder is not None
    zpath = tmp_path / f"{which}.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        base = built.anchor if which == "root" else folder.parent
        for dirpath, _dirs, files in os.walk(folder):
            for f in files:
                p = Path(dirpath) / f
                zf.write(p, p.relative_to(base).as_posix())
    with open_cloud(zpath) as opened:
        assert [u.name for u in opened.found.units] == [NAME]
        [c] = verify_input(opened.found)
        expected = "not recorded" if which == "legacy" else "matches"
        assert c.fingerprint.state == expected
        temp = opened.found.path
    assert not temp.exists()  # the private copy is removed


def test_a_download_backup_opens_as_the_character_it_backed_up(tmp_path: Path) -> None:
    b, built = unit(tmp_path)
    local = fixtures.pending_tail(tmp_path / "N.E.K.O" / "memory", NAME)
    backup = cloudunit.download(built, local.path)
    for path in (backup.parent, backup.parent.parent):
        with open_cloud(path) as opened:
            assert opened.found.kind == "backup"
            [u] = opened.found.units
            assert u.name == NAME and u.legacy_dir == backup / "runtime" / "memory" / NAME
    del b


def test_a_folder_that_is_no_cloud_save_is_refused_in_one_line(tmp_path: Path) -> None:
    fixtures.healthy(tmp_path)
    with pytest.raises(NotCloudSaveError, match="no cloud save found here"):
        open_cloud(tmp_path)


# -- §2: verify --------------------------------------------------------------------------------------


def test_a_tampered_unit_differs_and_the_manifest_names_the_file(tmp_path: Path, readonly: Watched) -> None:
    _, built = unit(tmp_path)
    assert built.unit is not None
    facts = built.unit / "memory" / "facts.json"
    facts.write_bytes(facts.read_bytes().replace(b"[", b"[ ", 1))
    readonly.append(built.anchor)
    [c] = checks(built.root)
    assert c.fingerprint.state == "differs"
    assert ("cloud.fingerprint_differs", "warning") in codes(c)
    assert c.manifest.differs == [f"characters/{NAME}/memory/facts.json"]
    assert ("cloud.layouts_differ", "warning") in codes(c)
    assert c.layouts_differing == ["facts.json"]


def test_a_half_written_unit_names_the_missing_entry_and_the_temp_file(tmp_path: Path) -> None:
    _, built = unit(tmp_path)
    assert built.unit is not None
    (built.unit / "memory" / "reflections.json").unlink()
    (built.unit / "memory" / ".reflections.json.ab12cd34.tmp").write_bytes(b"[")
    [c] = checks(built.root)
    assert c.manifest.missing == [f"characters/{NAME}/memory/reflections.json"]
    assert c.manifest.extra == [f"characters/{NAME}/memory/.reflections.json.ab12cd34.tmp"]
    assert {
        ("cloud.manifest_missing", "warning"),
        ("cloud.manifest_extra", "info"),
        ("cloud.fingerprint_differs", "warning"),
    } <= set(codes(c))


def test_without_a_manifest_the_files_cannot_be_named(tmp_path: Path) -> None:
    _, built = unit(tmp_path, db=False, manifest=False)
    assert built.unit is not None
    (built.unit / "memory" / "facts.json").write_text("[]", encoding="utf-8")
    [c] = checks(built.unit)
    assert c.fingerprint.state == "differs" and not c.manifest.present
    assert c.fingerprint.note == "without a manifest.json the files that differ cannot be named"


def test_a_db_hash_alone_never_calls_the_unit_tampered(tmp_path: Path) -> None:
    # Another SQLite version made the uploader's shadow copy: meta.json's fingerprint holds a db hash
    # that neither the raw file nor our shadow copy gives, while the manifest matches every file.
    b, built = unit(tmp_path)
    assert built.unit is not None
    meta = json.loads((built.unit / "meta.json").read_text(encoding="utf-8"))
    hashes = {n: file_sha256(built.unit / "memory" / n) for n in built.files}
    hashes["time_indexed.db"] = "0" * 64
    meta["payload_fingerprint"] = payload_fingerprint(
        NAME, cloudunit.default_profile(NAME), cloudunit.default_binding(NAME), hashes
    )
    cloudunit.write_server_json(built.unit / "meta.json", meta)
    cloudunit.rebuild_manifest(built.root)
    [c] = checks(built.root)
    assert c.fingerprint.state == "differs"
    assert codes(c) == [("cloud.fingerprint_differs", "info")]
    assert "SQLite version may explain it" in c.findings[0].message
    del b


def test_a_db_that_is_no_shadow_copy_matches_by_its_shadow_hash(tmp_path: Path) -> None:
    b, built = unit(tmp_path)
    assert built.unit is not None
    shutil.copyfile(b.path / "time_indexed.db", built.unit / "memory" / "time_indexed.db")  # raw, not a shadow
    [c] = checks(built.unit)
    assert (c.fingerprint.state, c.fingerprint.db_hash) == ("matches", "shadow")


def test_a_legacy_only_root_reads_the_profile_from_characters_json(tmp_path: Path) -> None:
    _, built = unit(tmp_path, sharded=False)
    assert built.unit is None and built.legacy is not None
    [c] = checks(built.root)
    assert c.unit.layout == "legacy" and c.unit.memory_dir == built.legacy
    assert c.fingerprint.state == "not recorded" and not c.files.meta.exists
    assert c.files.profile_source == "profiles/characters.json[猫娘]"
    assert c.files.profile.value == cloudunit.default_profile(NAME)


def test_an_empty_sharded_memory_falls_back_to_the_legacy_folder(tmp_path: Path) -> None:
    _, built = unit(tmp_path, db=False)
    assert built.unit is not None and built.legacy is not None
    for f in (built.unit / "memory").iterdir():
        f.unlink()
    [c] = checks(built.root)
    assert c.unit.memory_dir == built.legacy
    assert ("cloud.layouts_differ", "warning") in codes(c)


def test_an_allow_listed_name_that_is_not_a_regular_file(tmp_path: Path) -> None:
    _, built = unit(tmp_path, db=False)
    assert built.unit is not None
    (built.unit / "memory" / "surfaced.json").mkdir()
    [c] = checks(built.unit)
    assert ("cloud.not_regular", "error") in codes(c)
    assert c.fingerprint.state == "matches"  # the server exports regular files only


def test_a_tombstoned_character_and_a_fenced_root(tmp_path: Path) -> None:
    _, built = unit(tmp_path, db=False)
    cloudunit.tombstone(built)
    cloudunit.root_state(built.anchor, "bootstrap_importing", f"single_character_download:{NAME}")
    [c] = checks(built.root)
    assert ("cloud.tombstoned", "warning") in codes(c)
    fenced = [f for f in c.findings if f.code == "cloud.write_fenced"]
    assert [f.severity for f in fenced] == ["warning"] and "bootstrap_importing" in fenced[0].message


def test_root_state_is_read_only_beside_the_opened_root(tmp_path: Path) -> None:
    # a unit sent alone has no anchor: nothing above it is read, whatever is there
    _, built = unit(tmp_path, db=False)
    assert built.unit is not None
    alone = tmp_path / "ticket" / NAME
    shutil.copytree(built.unit, alone)
    cloudunit.root_state(tmp_path, "maintenance_readonly")
    cloudunit.root_state(tmp_path / "ticket", "maintenance_readonly")
    with open_cloud(alone) as opened:
        assert opened.found.anchor is None
        [c] = verify_input(opened.found)
    assert c.surroundings.root_state is None and "cloud.write_fenced" not in [f.code for f in c.findings]


# -- §3: what a download does ------------------------------------------------------------------------


def _edited_source(tmp_path: Path, status: str = "pending") -> fixtures.Built:
    """The folder another device uploaded: the same history, one reflection's status edited."""
    b = fixtures.healthy(tmp_path / "other-device")
    reflections = load_view(b.path / "reflections.json", list)
    reflections[0]["status"] = status
    save_view(b.path / "reflections.json", reflections)
    return b


def _oracle(built: CloudBuilt, local: Path, tmp_path: Path) -> object:
    """The server's download (the fixture's, §3.2) applied to a copy, diagnosed by our model."""
    copy = tmp_path / "oracle" / local.name
    shutil.copytree(local, copy)
    cloudunit.download(built, copy, anchor=tmp_path / "oracle")
    c = diagnose_character(copy, root=str(copy.parent), name=NAME)
    assert c.server_start is not None
    return c.server_start.to_json()


def test_sentinel_at_the_end_the_start_does_nothing_and_journal_and_views_disagree(
    tmp_path: Path, readonly: Watched
) -> None:
    src = _edited_source(tmp_path)
    built = cloudunit.upload(tmp_path / "N.E.K.O", src.path, NAME)
    local = fixtures.healthy(tmp_path / "local")
    readonly.extend([built.anchor, local.path])
    [c] = checks(built.root)
    p = preview_download(c, local.path, name=NAME)
    assert p.plan.of("replace") == ["reflections.json"] and not p.plan.of("delete")
    assert {"events.ndjson", "events_applied.json", "reflection_archive", "persona_archive"} <= set(p.plan.stays)
    assert p.after.server_start is not None and p.after.server_start.replays == 0
    [f] = p.replaced
    assert 'status "pending" in the view, "confirmed" by the journal' in f.message
    assert p.after.server_start.to_json() == _oracle(built, local.path, tmp_path)


def test_a_pending_tail_is_replayed_onto_the_cloud_views(tmp_path: Path, readonly: Watched) -> None:
    src = fixtures.healthy(tmp_path / "other-device")
    reflections = load_view(src.path / "reflections.json", list)
    reflections[0]["reinforcement"] = 1.0
    save_view(src.path / "reflections.json", reflections)
    built = cloudunit.upload(tmp_path / "N.E.K.O", src.path, NAME)
    local = fixtures.pending_tail(tmp_path / "local")
    readonly.extend([built.anchor, local.path])
    [c] = checks(built.root)
    p = preview_download(c, local.path, name=NAME)
    s = p.after.server_start
    assert s is not None and s.replays == 2 and s.applied == 2
    changed = {ch.entry: ch for ch in s.changes}
    reflection = changed[fixtures.REFLECTION_IDS[0]]
    assert ("reinforcement", 1.0, 1.9) in [(n, b, a) for n, b, a in reflection.fields]
    assert s.to_json() == _oracle(built, local.path, tmp_path)


def test_a_pending_merge_whose_hash_no_longer_matches_pauses_the_start(tmp_path: Path) -> None:
    src = fixtures.persona_drift(tmp_path / "other-device")  # the cloud keeps the old text
    built = cloudunit.upload(tmp_path / "N.E.K.O", src.path, NAME)
    local = fixtures.persona_drift(tmp_path / "local")
    persona = load_view(local.path / "persona.json", dict)
    key, pid = fixtures.PERSONA_ENTRY
    [entry] = [e for e in persona[key]["facts"] if e.get("id") == pid]
    entry["text"] = "Master drinks matcha, not green tea"  # the local view already has the merge's text
    save_view(local.path / "persona.json", persona)
    before = diagnose_character(local.path, root=str(local.path.parent))
    assert before.server_start is not None and before.server_start.stop is None
    [c] = checks(built.root)
    p = preview_download(c, local.path, name=NAME)
    s = p.after.server_start
    assert s is not None and s.stop is not None and s.stop.type == "persona.entry_updated"
    assert s.to_json() == _oracle(built, local.path, tmp_path)


def test_a_fresh_device_start_does_nothing(tmp_path: Path) -> None:
    _, built = unit(tmp_path)
    fresh = tmp_path / "fresh" / NAME
    fresh.mkdir(parents=True)
    [c] = checks(built.root)
    p = preview_download(c, fresh, name=NAME)
    assert sorted(p.plan.of("create")) == sorted(built.files) and not p.plan.of("delete")
    s = p.after.server_start
    assert s is not None and s.replays == 0 and p.replaced == []
    assert list(fresh.iterdir()) == []


def test_a_unit_without_a_db_deletes_the_local_chat_history(tmp_path: Path, readonly: Watched) -> None:
    _, built = unit(tmp_path, db=False)
    local = local_with_db(tmp_path / "local")
    readonly.extend([built.anchor, local.path])
    [c] = checks(built.root)
    p = preview_download(c, local.path, name=NAME)
    assert p.plan.of("delete") == ["time_indexed.db"]
    assert p.plan.chat_rows_lost == sum(len(m) for _, m in CALLS)
    assert p.plan.changes_something


def test_an_identical_download_changes_nothing(tmp_path: Path) -> None:
    b, built = unit(tmp_path)
    [c] = checks(built.root)
    p = preview_download(c, b.path, name=NAME)
    assert not p.plan.changes_something and set(p.plan.of("same")) == set(built.files)


def test_the_profile_is_compared_only_with_a_characters_json(tmp_path: Path) -> None:
    b, built = unit(tmp_path, db=False)
    [c] = checks(built.root)
    assert preview_download(c, b.path).plan.profile == "not compared"
    cj = tmp_path / "characters.json"
    cloudunit.write_server_json(cj, {"猫娘": {NAME: cloudunit.default_profile(NAME)}})
    assert preview_download(c, b.path, characters_file=str(cj)).plan.profile == "same"
    cloudunit.write_server_json(cj, {"猫娘": {NAME: {"档案名": "other"}}})
    plan = preview_download(c, b.path, characters_file=str(cj)).plan
    assert plan.profile == "differs" and plan.changes_something


# -- §4: after a download ----------------------------------------------------------------------------


def test_after_a_download_check_names_it_with_the_backup_as_evidence(tmp_path: Path) -> None:
    src = _edited_source(tmp_path)
    anchor = tmp_path / "N.E.K.O"
    built = cloudunit.upload(anchor, src.path, NAME)
    local = fixtures.healthy(anchor / "memory", NAME)
    backup = cloudunit.download(built, local.path)
    d = diagnose_path(anchor / "memory")
    with d:
        [c] = d.characters
        replaced = [f for f in c.findings if f.code == "view.replaced"]
        assert "event.suspect" not in [f.code for f in c.findings]
    [f] = replaced
    assert f.severity == "warning" and "cloud download" in f.message and str(backup) in f.message
    assert 'status "pending" in the view, "confirmed" by the journal' in f.message


def test_root_state_last_migration_result_is_evidence_too(tmp_path: Path) -> None:
    src = _edited_source(tmp_path)
    anchor = tmp_path / "N.E.K.O"
    built = cloudunit.upload(anchor, src.path, NAME)
    local = fixtures.healthy(anchor / "memory", NAME)
    cloudunit.download(built, local.path)
    shutil.rmtree(anchor / "cloudsave_backups")
    cloudunit.root_state(anchor, "normal", f"single_character_download:{NAME}")
    with diagnose_path(anchor / "memory") as d:
        [f] = [f for f in d.characters[0].findings if f.code == "view.replaced"]
    assert "last_migration_result single_character_download" in f.message
