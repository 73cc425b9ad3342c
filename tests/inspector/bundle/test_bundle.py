"""The support bundle: it diagnoses like the original, it holds none of the original's text, and it
is written atomically, outside its input, never over a file unless asked."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from inspector.core.bundle import BundleCancelledError, BundleRefusedError, write_bundle
from inspector.core.redaction import Redactor
from journal import fixtures
from tests.inspector.bundle.conftest import (
    INPUTS,
    AsBundled,
    diagnose,
    forms,
    members,
    same_verdicts,
    secrets_of,
    verdict,
)

IDS = [name for name, _ in INPUTS]


@pytest.fixture(params=INPUTS, ids=IDS)
def case(request, tmp_path):
    _name, build = request.param
    return Path(build(tmp_path))


def _bundle(path: Path, tmp_path: Path, secret: bytes, **kw) -> Path:
    out = tmp_path / "out" / "case.zip"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_bundle(path, out, secret=secret, **kw)
    return out


def test_a_bundle_diagnoses_as_its_original(case, tmp_path, secret):
    before = fixtures.tree_snapshot(case)
    out = _bundle(case, tmp_path, secret)
    assert fixtures.tree_snapshot(case) == before  # PATH was only read
    with diagnose(case) as original, diagnose(out) as bundled:
        same_verdicts(original, bundled, out, secret)


def test_not_one_string_of_the_original_text_is_in_the_bundle(case, tmp_path, secret):
    hidden = secrets_of(case)
    out = _bundle(case, tmp_path, secret)
    leaks = []
    for name, data in members(out).items():
        for s in hidden:
            if any(f in data for f in forms(s)) or s in name:
                leaks.append((name, s))
    assert leaks == []


def test_the_proof_finds_text_when_nothing_is_redacted(tmp_path, secret):
    """The proof above is not vacuous: without redaction it finds the texts."""
    path = fixtures.healthy(tmp_path / "root").path
    hidden = secrets_of(path)
    assert "Master likes green tea" in hidden
    out = _bundle(path, tmp_path, secret, redact=False)
    data = b"".join(members(out).values())
    assert any(f in data for s in hidden for f in forms(s))


def test_a_zip_export_bundles_like_its_folder(tmp_path, secret):
    root = tmp_path / "sample"
    shutil.copytree(fixtures_sample(), root)
    exported = fixtures.zip_export(root, tmp_path / "export.zip")
    out = _bundle(exported, tmp_path, secret)
    with diagnose(root) as original, diagnose(out) as bundled:
        same_verdicts(original, bundled, out, secret)


def fixtures_sample() -> Path:
    from tests.inspector.bundle.conftest import SAMPLE

    return SAMPLE


def test_manifest_check_json_and_check_txt_name_no_full_path(tmp_path, secret):
    path = fixtures.glued_torn_line(tmp_path / "root").path
    out = _bundle(path, tmp_path, secret)
    got = members(out)
    import json

    manifest = json.loads(got["manifest.json"])
    [folder] = [c["folder"] for c in manifest["characters"]]
    assert folder == f"character-{Redactor(secret).tag(path.name)}"
    assert manifest["redacted"] is True and manifest["input"] == folder  # the input is that character's folder
    assert {"version", "python", "qt", "os", "created_at", "redaction_key_id"} <= set(manifest)
    names = {f["name"] for f in manifest["files"]}
    assert names == set(got) - {"manifest.json"} - {n for n in got if n.endswith("/")}
    import hashlib

    for f in manifest["files"]:
        assert hashlib.sha256(got[f["name"]]).hexdigest() == f["sha256"] and len(got[f["name"]]) == f["size"]
    check = json.loads(got["check.json"])
    assert check["schema"] == 1 and check["path"] == folder
    for name, data in got.items():
        assert str(tmp_path).encode() not in data, name
        assert path.name.encode() not in data, name  # nor the character's name
    assert b"not valid JSON" not in got["check.txt"] or b"\xe2\x80\xb9damaged preview" in got["check.txt"]


def test_no_redact_is_explicit_and_recorded(tmp_path, secret):
    import json

    path = fixtures.healthy(tmp_path / "root").path
    out = _bundle(path, tmp_path, secret, redact=False)
    got = members(out)
    assert json.loads(got["manifest.json"])["redacted"] is False
    assert got[f"{path.name}/events.ndjson"] == (path / "events.ndjson").read_bytes()


def test_the_output_is_refused_inside_path_and_over_a_file(tmp_path, secret):
    path = fixtures.healthy(tmp_path / "root").path
    before = fixtures.tree_snapshot(tmp_path / "root")
    with pytest.raises(BundleRefusedError, match="inside the input"):
        write_bundle(tmp_path / "root", path / "case.zip", secret=secret)
    with pytest.raises(BundleRefusedError, match="inside the input"):
        write_bundle(path, path / "reflection_archive" / "case.zip", secret=secret)
    assert fixtures.tree_snapshot(tmp_path / "root") == before
    out = tmp_path / "case.zip"
    out.write_bytes(b"keep me")
    with pytest.raises(BundleRefusedError, match="already exists"):
        write_bundle(path, out, secret=secret)
    assert out.read_bytes() == b"keep me"
    write_bundle(path, out, secret=secret, force=True)
    assert zipfile.is_zipfile(out)


def test_cancel_and_failure_leave_nothing_behind(tmp_path, secret, monkeypatch):
    path = fixtures.healthy(tmp_path / "root").path
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    calls = []

    def progress(done, total):
        calls.append((done, total))

    with pytest.raises(BundleCancelledError):
        write_bundle(path, out_dir / "case.zip", secret=secret, progress=progress, cancelled=lambda: len(calls) > 3)
    assert os.listdir(out_dir) == []
    from inspector.core.bundle import write as write_mod

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write_mod.fs, "replace_file", boom)
    with pytest.raises(OSError):
        write_bundle(path, out_dir / "case.zip", secret=secret)
    assert os.listdir(out_dir) == []


def test_progress_counts_up_to_its_total(tmp_path, secret):
    path = fixtures.healthy(tmp_path / "root").path
    seen = []
    _bundle(path, tmp_path, secret, progress=lambda d, t: seen.append((d, t)))
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and seen[-1][0] == seen[-1][1] > 0


def test_hostile_names_never_reach_the_zip(tmp_path, secret):
    root = tmp_path / "root"
    built = fixtures.healthy(root, "evil\u202e\x1b:name")
    (built.path / "reflection_archive" / "..\x07 odd.json").write_bytes(b"[]")
    os.symlink("/etc", built.path / "link")
    out = _bundle(root, tmp_path, secret)
    for name in members(out):
        parts = name.rstrip("/").split("/")
        assert ".." not in parts and not name.startswith("/")
        assert all(c.isprintable() for c in name), name
    with diagnose(root) as original, diagnose(out) as bundled:
        a, b = verdict(original, AsBundled(secret)), verdict(bundled)
        assert [c["counts"] for c in a] == [c["counts"] for c in b]


def test_tokens_are_keyed_by_the_sender_secret(tmp_path, secret):
    path = fixtures.healthy(tmp_path / "root").path
    other = b"another secret of 32 bytes......"
    one = members(_bundle(path, tmp_path / "a", secret))
    two = members(_bundle(path, tmp_path / "b", other))
    a, b = (f"character-{Redactor(s).tag(path.name)}" for s in (secret, other))
    assert a != b
    assert one[f"{a}/reflections.json"] != two[f"{b}/reflections.json"]
    import hashlib

    digest = hashlib.sha256(b"Master likes green tea").hexdigest()
    for data in one.values():
        assert digest[:8].encode() not in data


def test_the_readme_lists_every_kept_key():
    from inspector.core.bundle import rules

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("**What is kept, per file kind.**") : readme.index("**Values derived from text**")]
    missing = sorted({k for kind in rules.KINDS.values() for k in kind if f"`{k}`" not in section})
    assert missing == []
