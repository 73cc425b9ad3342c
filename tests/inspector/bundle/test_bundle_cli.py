"""``memory-inspector bundle``: exit codes, refusals, the sender's secret and ``--guess``."""

from __future__ import annotations

import json
import os
import stat
import zipfile

from inspector.cli import main
from journal import fixtures


def test_bundle_writes_refuses_and_answers_a_guess(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = fixtures.healthy(tmp_path / "root").path
    before = fixtures.tree_snapshot(tmp_path / "root")
    out = tmp_path / "case.zip"
    assert main(["bundle", str(path), "-o", str(out)]) == 0
    assert zipfile.is_zipfile(out) and "redacted" in capsys.readouterr().out
    assert main(["bundle", str(path), "-o", str(out)]) == 1  # exists
    assert "--force" in capsys.readouterr().err
    assert main(["bundle", str(path), "-o", str(out), "--force"]) == 0
    assert main(["bundle", str(path), "-o", str(path / "in.zip")]) == 1  # inside PATH
    assert fixtures.tree_snapshot(tmp_path / "root") == before
    assert main(["bundle", str(tmp_path / "nothing"), "-o", str(tmp_path / "x.zip")]) == 2
    assert main(["bundle", str(path)]) == 2
    secret = tmp_path / "data" / "memory-inspector" / "bundle-secret.key"
    assert secret.is_file() and (secret.stat().st_mode & 0o077) == 0
    capsys.readouterr()
    assert main(["bundle", "--guess", "Master likes green tea"]) == 0
    token = capsys.readouterr().out.split("  (key")[0]
    with zipfile.ZipFile(out) as zf:
        [character] = json.loads(zf.read("manifest.json"))["characters"]
        assert token.encode() in zf.read(f"{character['folder']}/facts.json")


def test_the_secret_folder_is_private_whatever_the_umask(tmp_path, monkeypatch):
    from inspector.core.bundle import load_or_create_secret

    folder = tmp_path / "data" / "memory-inspector"
    old = os.umask(0)
    try:
        load_or_create_secret(folder / "bundle-secret.key")
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "bundle-secret.key").stat().st_mode) & 0o077 == 0


def test_guess_without_a_secret_writes_nothing(tmp_path, monkeypatch, capsys):
    from inspector.core.bundle import secret_path

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("APPDATA", str(tmp_path / "appdata"))
    before = sorted(p for p in tmp_path.rglob("*"))
    assert main(["bundle", "--guess", "Master likes green tea"]) == 2
    err = capsys.readouterr().err
    assert "no redaction secret" in err and "nothing written" in err
    assert not secret_path().exists()
    assert sorted(p for p in tmp_path.rglob("*")) == before


def test_a_fifo_as_path_is_refused_before_anything_opens_it(tmp_path, monkeypatch, capsys):
    """A FIFO given as PATH: exit 2 at once. Timeout-free: any open of it that could block (one
    without O_NONBLOCK, or a zip reader's) fails the test instead of hanging it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    fifo = tmp_path / "case.fifo"
    os.mkfifo(fifo)
    real_open = os.open

    def guarded_open(path, flags, *args, **kwargs):
        if os.fspath(path) == str(fifo) and not flags & os.O_NONBLOCK:
            raise AssertionError("a blocking open of the FIFO")
        return real_open(path, flags, *args, **kwargs)

    def no_zip(*_a, **_k):
        raise AssertionError("the FIFO was read as a zip")

    monkeypatch.setattr(os, "open", guarded_open)
    monkeypatch.setattr(zipfile, "ZipFile", no_zip)
    monkeypatch.setattr(zipfile, "is_zipfile", no_zip)
    assert main(["bundle", str(fifo), "-o", str(tmp_path / "case.zip")]) == 2
    err = capsys.readouterr().err
    assert str(fifo) in err and "neither a folder nor" in err
    assert not (tmp_path / "case.zip").exists()
