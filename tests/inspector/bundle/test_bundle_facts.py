"""What the bundle cannot hold stays a fact: the server's characters.json, refused input (zip
members, a FIFO journal, a view linked outside the root) and an unreadable journal are recorded in
the manifest, and the bundle's diagnosis reads them back, so its verdicts equal the original's."""

from __future__ import annotations

import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from inspector.core.bundle import write_bundle
from journal import fixtures, fs
from journal.events import SENTINEL_NAME
from tests.inspector.bundle.conftest import diagnose, manifest_of, members, same_verdicts


def _bundle(path: Path, tmp_path: Path, secret: bytes) -> Path:
    out = tmp_path / "out" / "case.zip"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_bundle(path, out, secret=secret)
    return out


def _codes(diag, code: str) -> list[tuple[str, str]]:
    return sorted((f.code, f.severity) for c in diag.characters for f in c.findings if f.code == code)


def test_characters_json_is_a_fact_of_the_manifest(tmp_path, secret):
    root = tmp_path / "app" / "memory"
    fixtures.healthy(root)
    fixtures.pending_tail(root)
    fixtures.healthy(root, "小天")
    config = tmp_path / "app" / "config"
    config.mkdir(parents=True)
    card = "a card text only the characters file holds"
    doc = {"主人": {"档案名": "主人"}, "猫娘": {n: {"昵称": card} for n in ("小天", "healthy")}, "当前猫娘": "小天"}
    (config / "characters.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    out = _bundle(root, tmp_path, secret)
    got = members(out)
    assert not any(n.endswith("characters.json") for n in got)
    assert not any(card.encode() in data for data in got.values())
    facts = manifest_of(out)["facts"]
    assert len(facts["characters_json"]["names"]) == 2
    with diagnose(root) as original, diagnose(out) as bundled:
        assert _codes(original, "server.not_reconciled") == [("server.not_reconciled", "info")]
        assert [c.server_start.persona[0] for c in original.characters if c.name == "healthy"] == ["rewrite"]
        same_verdicts(original, bundled, out, secret)


def _zip_with_refused_members(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    fixtures.healthy(root)
    exported = fixtures.zip_export(root, tmp_path / "export.zip")
    with zipfile.ZipFile(exported, "a") as zf:
        zf.writestr("../outside.json", b"{}")
        link = zipfile.ZipInfo("healthy/link.json")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, b"/etc/passwd")
    return exported


def test_refused_zip_members_stay_findings(tmp_path, secret):
    exported = _zip_with_refused_members(tmp_path)
    out = _bundle(exported, tmp_path, secret)
    with diagnose(exported) as original, diagnose(out) as bundled:
        assert _codes(original, "input.refused") == [("input.refused", "error")] * 2
        assert _codes(bundled, "input.refused") == _codes(original, "input.refused")
        same_verdicts(original, bundled, out, secret)
    assert len(manifest_of(out)["facts"]["input_findings"]) == 2


@pytest.mark.parametrize("what", ["events.ndjson", "persona.json", SENTINEL_NAME])
def test_a_fifo_stays_refused(tmp_path, secret, what):
    path = fixtures.healthy(tmp_path / "root").path
    (path / what).unlink()
    os.mkfifo(path / what)
    out = _bundle(path.parent, tmp_path, secret)
    [fact] = manifest_of(out)["facts"]["characters"][manifest_of(out)["characters"][0]["folder"]]["refused"]
    assert (fact["what"], fact["kind"], fact["finding"]["code"]) == (what, "special", "input.refused")
    with diagnose(path.parent) as original, diagnose(out) as bundled:
        assert any(f.code == "input.refused" and f.file == what for f in original.characters[0].findings)
        same_verdicts(original, bundled, out, secret)


@pytest.mark.parametrize("what", ["persona.json", "reflections.json", "events.ndjson"])
def test_a_link_leading_outside_the_root_stays_refused(tmp_path, secret, what):
    path = fixtures.healthy(tmp_path / "root").path
    outside = tmp_path / "elsewhere.json"
    outside.write_bytes((path / what).read_bytes())
    (path / what).unlink()
    os.symlink(outside, path / what)
    out = _bundle(path.parent, tmp_path, secret)
    assert not any(n.endswith(f"/{what}") for n in members(out))
    with diagnose(path.parent) as original, diagnose(out) as bundled:
        assert any(f.code == "input.refused" and f.file == what for f in original.characters[0].findings)
        same_verdicts(original, bundled, out, secret)


def _unreadable_case(tmp_path: Path, secret: bytes) -> tuple[Path, Path]:
    path = fixtures.pending_tail(tmp_path / "root").path
    out = _bundle(path.parent, tmp_path, secret)
    return path, out


def _check_unreadable(path: Path, out: Path, secret: bytes) -> None:
    folder = manifest_of(out)["characters"][0]["folder"]
    assert f"{folder}/events.ndjson" not in members(out)  # no empty member standing for it
    [fact] = manifest_of(out)["facts"]["characters"][folder]["unreadable"]
    assert fact["what"] == "events.ndjson" and fact["finding"] == {"code": "journal.absent", "severity": "error"}
    with diagnose(path.parent) as original, diagnose(out) as bundled:
        assert [(f.code, f.severity) for f in original.characters[0].findings if f.code == "journal.absent"] == [
            ("journal.absent", "error")
        ]
        same_verdicts(original, bundled, out, secret)


def _mode_000_is_readable(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.write_bytes(b"x")
    probe.chmod(0)
    try:
        with open(probe, "rb"):
            return True
    except PermissionError:
        return False
    finally:
        probe.chmod(0o600)


def test_an_unreadable_journal_stays_unreadable(tmp_path, secret):
    if _mode_000_is_readable(tmp_path):
        pytest.skip("mode 000 does not make a file unreadable here (running as root); the next test covers it")
    path = fixtures.pending_tail(tmp_path / "root").path
    (path / "events.ndjson").chmod(0)
    try:
        out = _bundle(path.parent, tmp_path, secret)
        _check_unreadable(path, out, secret)
    finally:
        (path / "events.ndjson").chmod(0o600)


def test_a_journal_that_cannot_be_read_stays_unreadable(tmp_path, secret, monkeypatch):
    """As the test above, with the permission error made where every reader opens a file
    (:func:`journal.fs.open_regular`), so it runs whoever runs it."""
    path = fixtures.pending_tail(tmp_path / "root").path
    journal = str(path / "events.ndjson")
    real = fs.open_regular

    def denied(p):
        if os.fspath(p) == journal:
            raise PermissionError(13, "Permission denied", journal)
        return real(p)

    monkeypatch.setattr(fs, "open_regular", denied)
    out = _bundle(path.parent, tmp_path, secret)
    _check_unreadable(path, out, secret)


def test_a_character_folder_that_is_a_link_stays_refused(tmp_path, secret):
    root = tmp_path / "root"
    fixtures.healthy(root)
    away = fixtures.pending_tail(tmp_path / "elsewhere").path
    os.symlink(away, root / "away")  # leads out of the memory root
    os.symlink(root / "healthy", root / "alias")  # another folder of the memory root
    out = _bundle(root, tmp_path, secret)
    kinds = sorted(r["kind"] for c in manifest_of(out)["facts"]["characters"].values() for r in c.get("refused", []))
    assert kinds == ["link", "link_inside"]
    with diagnose(root) as original, diagnose(out) as bundled:
        assert sorted(s for code, s in _codes(original, "input.refused")) == ["info", "warning"]
        same_verdicts(original, bundled, out, secret)


@pytest.mark.parametrize(("what", "real"), [("persona.json", "persona-real.json"), ("events.ndjson", "journal.bak")])
def test_a_link_to_a_file_of_the_folder_is_read_through_as_the_original_is(tmp_path, secret, what, real):
    """The diagnosis follows a link that stays in the folder; a bundle holds no link, so its file
    goes in redacted as the kind of file the link names, and the bundle's check re-makes the link."""
    path = fixtures.pending_tail(tmp_path / "root").path
    os.rename(path / what, path / real)
    os.symlink(real, path / what)
    out = _bundle(path.parent, tmp_path, secret)
    [fact] = manifest_of(out)["facts"]["characters"][manifest_of(out)["characters"][0]["folder"]]["refused"]
    assert (fact["what"], fact["kind"]) == (what, "link_to")
    with diagnose(path.parent) as original, diagnose(out) as bundled:
        assert original.characters[0].journal.events > 0
        same_verdicts(original, bundled, out, secret)


@pytest.mark.parametrize("what", ["persona.json", "reflections.json"])
def test_a_view_that_cannot_be_read_stays_unreadable(tmp_path, secret, monkeypatch, what):
    """A view the sender cannot read is left out of the bundle, recorded with its reason, and read
    as unreadable by the bundle's check (view.corrupt, replay meeting the same OSError)."""
    path = fixtures.pending_tail(tmp_path / "root").path
    view = str(path / what)
    real = fs.open_regular

    def denied(p):
        if os.fspath(p) == view:
            raise PermissionError(13, "Permission denied", view)
        return real(p)

    monkeypatch.setattr(fs, "open_regular", denied)
    out = _bundle(path.parent, tmp_path, secret)
    folder = manifest_of(out)["characters"][0]["folder"]
    assert f"{folder}/{what}" not in members(out)
    [fact] = manifest_of(out)["facts"]["characters"][folder]["unreadable"]
    assert fact["what"] == what and fact["finding"] == {"code": "view.corrupt", "severity": "error"}
    with diagnose(path.parent) as original, diagnose(out) as bundled:
        assert any(f.code == "view.corrupt" and f.file == what for f in original.characters[0].findings)
        same_verdicts(original, bundled, out, secret)


def test_a_shard_that_cannot_be_read_stays_unreadable(tmp_path, secret, monkeypatch):
    path = fixtures.pending_tail(tmp_path / "root").path
    [shard] = sorted((path / "reflection_archive").glob("*.json"))
    real = fs.open_regular

    def denied(p):
        if os.fspath(p) == str(shard):
            raise PermissionError(13, "Permission denied", str(shard))
        return real(p)

    monkeypatch.setattr(fs, "open_regular", denied)
    out = _bundle(path.parent, tmp_path, secret)
    folder = manifest_of(out)["characters"][0]["folder"]
    rel = f"reflection_archive/{shard.name}"
    assert f"{folder}/{rel}" not in members(out)
    [fact] = manifest_of(out)["facts"]["characters"][folder]["unreadable"]
    assert fact["what"] == rel and fact["finding"] == {"code": "shard.corrupt", "severity": "error"}
    with diagnose(path.parent) as original, diagnose(out) as bundled:
        same_verdicts(original, bundled, out, secret)
