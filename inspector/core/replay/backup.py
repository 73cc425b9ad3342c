"""Step 3: the backup, a copy of the character folder *outside* it with a SHA-256 manifest
(:func:`create_backup`), and reading, verifying and listing backups."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from inspector.core.replay.errors import BackupError, BadInputError
from inspector.core.replay.fingerprints import _sha256_file
from inspector.core.replay.stamps import _now_iso, _tool_version, _who
from inspector.core.replay.target import ReplayTarget
from journal import fs
from journal.codec import loads_exact as parse_json_bytes
from journal.log import check_character_name

MANIFEST_NAME = "manifest.json"
REPORT_NAME = "report.json"
BACKUP_FILES = "files"


def default_backup_root(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """``backups/`` in the user's data folder for memory-inspector.

    Linux: ``$XDG_DATA_HOME/memory-inspector/backups`` (default ``~/.local/share/...``); macOS:
    ``~/Library/Application Support/memory-inspector/backups``; Windows:
    ``%LOCALAPPDATA%\\memory-inspector\\backups``.
    """
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    if platform.startswith("win"):
        base = Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else home / "AppData" / "Local"
    elif platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    return base / "memory-inspector" / "backups"


def check_backup_root(backup_root: str | os.PathLike[str], target: ReplayTarget) -> Path:
    """Refuse a backup folder inside the character folder, or inside the memory root when PATH
    named the memory root.

    Inside the root it would look like a character folder to the memory server (and a cloud
    restore deletes unknown folders there). When PATH was the character folder itself, its parent
    is not known to be a memory root (it may be a home folder holding the data folder), so only
    the character folder is checked.

    Raises:
        BadInputError: it is inside.
    """
    root = Path(backup_root).expanduser()
    resolved = root.resolve()
    checks = [(target.char_dir, "the character folder")]
    if target.root is not None and target.source.resolve() == target.root.resolve():
        checks.append((target.root, "the memory root"))
    for inside, what in checks:
        if inside is not None and resolved.is_relative_to(inside.resolve()):
            raise BadInputError(f"the backup folder {root} is inside {what} {inside}; choose one outside it")
    return root


@dataclass(frozen=True, slots=True)
class BackupFile:
    """One file of a backup manifest."""

    path: str
    sha256: str
    size: int


@dataclass(slots=True)
class Backup:
    """A backup folder: ``manifest.json``, ``files/`` (the copy) and, after a run, ``report.json``.

    Attributes:
        path: the backup folder.
        character: the character it was taken from.
        source: the character folder it was taken from (where restore puts it back).
        kind: ``replay`` (taken before a replay) or ``pre-restore`` (taken before a restore).
        created_at: local ISO-8601 with offset.
        files: every regular file, with its SHA-256 and size.
        dirs: every folder (relative), so empty folders come back too.
        skipped: entries not copied (links, which are never followed), with the reason.
    """

    path: Path
    character: str
    source: Path
    kind: str
    created_at: str
    files: list[BackupFile]
    dirs: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    @property
    def files_dir(self) -> Path:
        return self.path / BACKUP_FILES

    @property
    def report_path(self) -> Path:
        return self.path / REPORT_NAME

    def hashes(self) -> dict[str, str]:
        return {f.path: f.sha256 for f in self.files}

    def manifest(self) -> dict[str, Any]:
        return {
            "schema": 1,
            "kind": self.kind,
            "tool": _tool_version(),
            "character": self.character,
            "source": str(self.source),
            "created_at": self.created_at,
            "created_by": _who(),
            "files": [{"path": f.path, "sha256": f.sha256, "size": f.size} for f in self.files],
            "dirs": list(self.dirs),
            "skipped": list(self.skipped),
        }


def _walk_regular_files(char_dir: Path) -> tuple[list[str], list[str], list[dict[str, str]]]:
    """Relative POSIX paths of regular files and folders under ``char_dir``; links skipped."""
    files: list[str] = []
    dirs: list[str] = []
    skipped: list[dict[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(char_dir, followlinks=False):
        base = Path(dirpath)
        rel_base = base.relative_to(char_dir)
        for d in sorted(dirnames):
            p = base / d
            rel = (rel_base / d).as_posix()
            if p.is_symlink():
                skipped.append({"path": rel, "reason": "link (not followed)"})
                dirnames.remove(d)
            else:
                dirs.append(rel)
        for name in sorted(filenames):
            p = base / name
            rel = (rel_base / name).as_posix()
            if p.is_symlink():
                skipped.append({"path": rel, "reason": "link (not followed)"})
            elif p.is_file():
                files.append(rel)
            else:
                skipped.append({"path": rel, "reason": "not a regular file"})
    return sorted(files), sorted(dirs), skipped


def create_backup(
    char_dir: str | os.PathLike[str],
    backup_root: str | os.PathLike[str],
    *,
    character: str | None = None,
    kind: str = "replay",
) -> Backup:
    """Copy a character folder to ``<backup_root>/<character>/<timestamp>-<hex>/`` with a manifest.

    The copy is written into a ``.partial-…`` folder, every file and the manifest durably through
    :mod:`journal.fs`, read back and verified, and only then renamed to its final name, so a folder
    without the ``.partial`` prefix is always a complete backup. Links are never followed.

    Raises:
        BackupError: a file could not be read or written (the partial folder is removed).
    """
    src = Path(char_dir)
    name = character or src.name
    group = Path(backup_root) / name
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    final = group / f"{stamp}-{secrets.token_hex(3)}"
    staging = group / f".partial-{final.name}"
    try:
        fs.ensure_dir(staging / BACKUP_FILES)
        files, dirs, skipped = _walk_regular_files(src)
        entries: list[BackupFile] = []
        for d in dirs:
            fs.ensure_dir(staging / BACKUP_FILES / d)
        for rel in files:
            data = (src / rel).read_bytes()
            fs.atomic_write_bytes(staging / BACKUP_FILES / rel, data)
            entries.append(BackupFile(rel, hashlib.sha256(data).hexdigest(), len(data)))
        backup = Backup(staging, name, src.resolve(), kind, _now_iso(), entries, dirs, skipped)
        problems = verify_backup(backup)
        if problems:
            raise BackupError(f"the backup does not read back as written: {problems[0]}")
        fs.atomic_write_json(staging / MANIFEST_NAME, backup.manifest())
        fs.replace_file(staging, final)
    except (OSError, BackupError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, BackupError):
            raise
        raise BackupError(f"could not back up {src} to {group}: {exc}") from exc
    backup.path = final
    return backup


def load_backup(path: str | os.PathLike[str]) -> Backup:
    """Read a backup folder's manifest.

    Raises:
        BadInputError: not a backup folder (no readable manifest of ours).
    """
    p = Path(path)
    try:
        data = parse_json_bytes((p / MANIFEST_NAME).read_bytes())
    except FileNotFoundError as exc:
        raise BadInputError(f"{p}: not a backup folder (no {MANIFEST_NAME})") from exc
    except (OSError, ValueError) as exc:
        raise BadInputError(f"{p}: unreadable {MANIFEST_NAME}: {exc}") from exc
    try:
        if data.get("schema") != 1:
            raise ValueError(f"unknown schema {data.get('schema')!r}")
        files = [BackupFile(str(f["path"]), str(f["sha256"]), int(f["size"])) for f in data["files"]]
        for f in files:
            rel = PurePosixPath(f.path)
            if rel.is_absolute() or ".." in rel.parts:
                raise ValueError(f"file path {f.path!r} leaves the folder")
        return Backup(
            p,
            check_character_name(data["character"]),
            Path(data["source"]),
            str(data.get("kind", "replay")),
            str(data.get("created_at", "")),
            files,
            [str(d) for d in data.get("dirs", [])],
            list(data.get("skipped", [])),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise BadInputError(f"{p}: {MANIFEST_NAME} is not a backup manifest: {exc}") from exc


def verify_backup(backup: Backup) -> list[str]:
    """Check every file of the backup against its manifest; returns the problems (empty: intact).

    A missing file, a size or hash mismatch, and a file in ``files/`` that the manifest does not
    list are problems.
    """
    problems: list[str] = []
    listed = set()
    for f in backup.files:
        listed.add(f.path)
        p = backup.files_dir / f.path
        try:
            if p.is_symlink() or not p.is_file():
                problems.append(f"{f.path}: missing from the backup")
                continue
            if p.stat().st_size != f.size:
                problems.append(f"{f.path}: {p.stat().st_size} bytes, the manifest says {f.size}")
                continue
            if _sha256_file(p) != f.sha256:
                problems.append(f"{f.path}: content differs from the manifest (SHA-256)")
        except OSError as exc:
            problems.append(f"{f.path}: unreadable: {exc.strerror or exc}")
    if backup.files_dir.is_dir():
        present, _, _ = _walk_regular_files(backup.files_dir)
        problems += [f"{rel}: in the backup but not in its manifest" for rel in present if rel not in listed]
    else:
        problems.append(f"{BACKUP_FILES}/ is missing")
    return problems


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """A backup as listed for choosing one to restore.

    Attributes:
        status: the outcome recorded in its report (``applied``, ``stopped``, ...), or ``None``.
    """

    path: Path
    character: str
    kind: str
    created_at: str
    status: str | None

    def label(self) -> str:
        status = f", replay {self.status}" if self.status else ""
        return f"{self.created_at} — {self.character} ({self.kind}{status})"


def list_backups(backup_root: str | os.PathLike[str], character: str | None = None) -> list[BackupSummary]:
    """Complete backups under ``backup_root`` (of one character, or all), newest first."""
    root = Path(backup_root)
    groups = [root / character] if character else ([p for p in root.iterdir() if p.is_dir()] if root.is_dir() else [])
    out = []
    for group in groups:
        if not group.is_dir():
            continue
        for p in group.iterdir():
            if p.name.startswith(".") or not (p / MANIFEST_NAME).is_file():
                continue
            try:
                b = load_backup(p)
            except BadInputError:
                continue
            status = None
            with contextlib.suppress(OSError, ValueError, AttributeError):
                status = parse_json_bytes((p / REPORT_NAME).read_bytes()).get("outcome", {}).get("status")
            out.append(BackupSummary(p, b.character, b.kind, b.created_at, status))
    return sorted(out, key=lambda s: s.path.name, reverse=True)
