"""Step 3: the backup, a private copy of the character folder *outside* it with a SHA-256 manifest
(:func:`create_backup`), recorded in the index of backups in the app's own data folder; reading,
verifying and listing backups; and the one rule for where a backup may be put back
(:func:`restore_target`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from inspector.core.dirs import (
    PRIVATE_DIR_MODE,
    default_index_path,
    make_private_dirs,
)
from inspector.core.replay.errors import BackupError, BadInputError
from inspector.core.replay.fingerprints import _sha256_file
from inspector.core.replay.stamps import _now_iso, _tool_version, _who
from inspector.core.replay.target import ReplayTarget
from journal import fs
from journal.codec import loads_exact
from journal.inputs import is_character_folder
from journal.log import check_character_name

MANIFEST_NAME = "manifest.json"
REPORT_NAME = "report.json"
BACKUP_FILES = "files"


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
    checks = [(target.char_dir, "the character folder")]
    if target.root is not None and target.source.resolve() == target.root.resolve():
        checks.append((target.root, "the memory root"))
    for inside, what in checks:
        if inside is not None and fs.is_inside(root, inside):
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

    Every file in it may have been edited by someone else; restore takes its target from the
    index of backups or from the person (:func:`restore_target`), never from these files.

    Attributes:
        path: the backup folder.
        character: the character it was taken from.
        source: the folder the manifest says it was taken from. Shown, never used as a target.
        kind: ``replay`` (taken before a replay) or ``pre-restore`` (taken before a restore).
        created_at: local ISO-8601 with offset.
        files: every regular file, with its SHA-256 and size.
        dirs: every folder (relative), so empty folders come back too.
        skipped: entries not copied (links, which are never followed), with the reason.
        manifest_sha256: SHA-256 of the ``manifest.json`` bytes this value was read from (or
            written as).
    """

    path: Path
    character: str
    source: Path
    kind: str
    created_at: str
    files: list[BackupFile]
    dirs: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    manifest_sha256: str = ""

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
            # The folder's own name makes every manifest unique, so its hash names one backup.
            "name": self.path.name.removeprefix(".partial-"),
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


# -- the index of backups -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One backup as recorded in the index when it was taken.

    Attributes:
        path: the backup folder (absolute).
        name: its folder name.
        character: the character.
        kind: ``replay`` or ``pre-restore``.
        target: the character folder it was taken from (absolute): where restore puts it back.
        manifest_sha256: SHA-256 of its ``manifest.json`` as written.
        created_at: local ISO-8601 with offset.
    """

    path: Path
    name: str
    character: str
    kind: str
    target: Path
    manifest_sha256: str
    created_at: str

    def to_json(self) -> dict[str, str]:
        return {
            "path": str(self.path),
            "name": self.name,
            "character": self.character,
            "kind": self.kind,
            "target": str(self.target),
            "manifest_sha256": self.manifest_sha256,
            "created_at": self.created_at,
        }

    @classmethod
    def from_json(cls, data: Any) -> IndexEntry:
        """Raises ValueError (or KeyError, TypeError) for anything but a well-formed entry."""
        path, target, sha = Path(data["path"]), Path(data["target"]), str(data["manifest_sha256"])
        if not (path.is_absolute() and target.is_absolute()):
            raise ValueError("paths must be absolute")
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise ValueError("not a SHA-256")
        return cls(
            path,
            str(data.get("name", path.name)),
            check_character_name(data["character"]),
            str(data.get("kind", "replay")),
            target,
            sha,
            str(data.get("created_at", "")),
        )


@dataclass(frozen=True, slots=True)
class BackupIndex:
    """The index of backups as read (:func:`read_index`); reading it never raises.

    Attributes:
        path: the index file.
        entries: the well-formed entries (a malformed one is left out: its backup is then not in
            the index).
        missing: there is no index file (no backup was taken here yet).
        problem: the file exists but cannot be read or is not an index; ``None`` otherwise.
    """

    path: Path
    entries: tuple[IndexEntry, ...] = ()
    missing: bool = False
    problem: str | None = None

    def by_path(self, backup_path: Path) -> IndexEntry | None:
        """The entry of the backup folder at ``backup_path`` (compared resolved)."""
        want = backup_path.resolve()
        return next((e for e in self.entries if e.path == want), None)

    def by_manifest(self, manifest_sha256: str) -> IndexEntry | None:
        """The entry whose manifest has this hash (a backup folder that was moved)."""
        return next((e for e in self.entries if e.manifest_sha256 == manifest_sha256), None)


def read_index(index_path: str | os.PathLike[str] | None = None) -> BackupIndex:
    """Read the index of backups (default: :func:`default_index_path`); never raises."""
    p = Path(index_path) if index_path is not None else default_index_path()
    try:
        data = loads_exact(p.read_bytes())
    except FileNotFoundError:
        return BackupIndex(p, missing=True)
    except OSError as exc:
        return BackupIndex(p, problem=f"cannot read it: {exc.strerror or exc}")
    except ValueError as exc:
        return BackupIndex(p, problem=f"not JSON: {exc}")
    if not isinstance(data, dict) or data.get("schema") != 1 or not isinstance(data.get("backups"), list):
        return BackupIndex(p, problem="not an index of backups (schema 1)")
    entries = []
    for raw in data["backups"]:
        with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
            entries.append(IndexEntry.from_json(raw))
    return BackupIndex(p, tuple(entries))


#: Serialises read-modify-write of the index within this process (the window's worker threads);
#: ``flock`` on its folder does it between processes where there is one.
_INDEX_LOCK = threading.Lock()


@contextlib.contextmanager
def _index_locked(folder: Path) -> Iterator[None]:
    with _INDEX_LOCK:
        try:
            import fcntl
        except ImportError:  # Windows: one process at a time is the documented limit
            yield
            return
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock


def record_in_index(entry: IndexEntry, index_path: str | os.PathLike[str] | None = None) -> Path:
    """Add (or replace) ``entry`` in the index, atomically (:func:`journal.fs.atomic_write_json`).

    A corrupt index is kept aside as ``backup-index.json.corrupt-<time>`` and a new one started:
    the backups it listed then restore only with ``--to``.

    Returns:
        The index file.

    Raises:
        OSError: the index could not be written.
    """
    p = Path(index_path) if index_path is not None else default_index_path()
    make_private_dirs(p.parent)
    with _index_locked(p.parent):
        index = read_index(p)
        if index.problem is not None and p.is_file():
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            fs.replace_file(p, p.with_name(f"{p.name}.corrupt-{stamp}-{secrets.token_hex(2)}"))
        entries = [e for e in index.entries if e.path != entry.path] + [entry]
        fs.atomic_write_json(p, {"schema": 1, "backups": [e.to_json() for e in entries]})
    return p


# -- taking a backup ------------------------------------------------------------------------------


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
    index_path: str | os.PathLike[str] | None = None,
) -> Backup:
    """Copy a character folder to ``<backup_root>/<character>/<timestamp>-<hex>/`` with a manifest,
    and record it in the index of backups.

    The copy is written into a ``.partial-…`` folder, every file and the manifest durably through
    :mod:`journal.fs`, read back and verified, and only then renamed to its final name, so a folder
    without the ``.partial`` prefix is always a complete backup. Links are never followed. Every
    folder the backup creates (the backup root and its character folder included, when missing)
    has mode 0700; every file 0600. The backup is complete once the index names it: if the index
    cannot be written, the backup is removed again.

    Args:
        index_path: the index of backups (default: :func:`default_index_path`).

    Raises:
        BackupError: a file could not be read or written (the partial folder is removed).
    """
    src = Path(char_dir)
    name = character or src.name
    group = Path(backup_root) / name
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    final = group / f"{stamp}-{secrets.token_hex(3)}"
    staging = group / f".partial-{final.name}"
    renamed = False
    try:
        make_private_dirs(group)
        os.mkdir(staging, PRIVATE_DIR_MODE)  # new and private before anything is copied into it
        os.chmod(staging, PRIVATE_DIR_MODE)
        fs.fsync_dir(group)
        make_private_dirs(staging / BACKUP_FILES)
        files, dirs, skipped = _walk_regular_files(src)
        entries: list[BackupFile] = []
        for d in dirs:
            make_private_dirs(staging / BACKUP_FILES / d)
        for rel in files:
            data = (src / rel).read_bytes()
            fs.atomic_write_bytes(staging / BACKUP_FILES / rel, data)
            entries.append(BackupFile(rel, hashlib.sha256(data).hexdigest(), len(data)))
        backup = Backup(staging, name, src.resolve(), kind, _now_iso(), entries, dirs, skipped)
        problems = verify_backup(backup)
        if problems:
            raise BackupError(f"the backup does not read back as written: {problems[0]}")
        fs.atomic_write_json(staging / MANIFEST_NAME, backup.manifest())
        backup.manifest_sha256 = _sha256_file(staging / MANIFEST_NAME)
        fs.replace_file(staging, final)
        renamed = True
        entry = IndexEntry(
            final.resolve(), final.name, name, kind, backup.source, backup.manifest_sha256, backup.created_at
        )
        record_in_index(entry, index_path)
    except (OSError, BackupError) as exc:
        shutil.rmtree(final if renamed else staging, ignore_errors=True)
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
        raw = (p / MANIFEST_NAME).read_bytes()
        data = loads_exact(raw)
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
            if not rel.parts or rel.is_absolute() or ".." in rel.parts:
                raise ValueError(f"file path {f.path!r} leaves the folder")
        dirs = [str(d) for d in data.get("dirs", [])]
        for d in dirs:
            rel = PurePosixPath(d)
            if rel.is_absolute() or ".." in rel.parts:
                raise ValueError(f"folder {d!r} leaves the folder")
        return Backup(
            p,
            check_character_name(data["character"]),
            Path(str(data.get("source", ""))),
            str(data.get("kind", "replay")),
            str(data.get("created_at", "")),
            files,
            dirs,
            list(data.get("skipped", [])),
            hashlib.sha256(raw).hexdigest(),
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


# -- where a backup may be put back ---------------------------------------------------------------

#: Why a backup cannot be put back (:attr:`RestoreTarget.code`). The first three are about trust:
#: nothing outside the backup vouches for it (restore refuses, exit 1). The others are about the
#: folder itself (bad input, exit 2: name another one with ``--to``).
TRUST_REFUSALS = ("index_unreadable", "not_indexed", "manifest_changed")
FOLDER_REFUSALS = ("target_gone", "not_a_folder", "not_a_character_folder", "link", "overlaps_backup")

_SHORT = {
    "index_unreadable": "the index of backups is unreadable",
    "not_indexed": "not in the index of backups",
    "manifest_changed": "its manifest was edited after the backup",
    "target_gone": "its folder is gone",
    "not_a_folder": "its folder is now a file",
    "not_a_character_folder": "its folder is no longer a character folder",
    "link": "its folder is now a link",
    "overlaps_backup": "its folder and the backup overlap",
}


@dataclass(frozen=True, slots=True)
class RestoreTarget:
    """Where a backup would be put back, and whether it may be (:func:`restore_target`).

    Attributes:
        path: the folder, absolute; ``None`` when nothing trusted names one.
        via: ``--to`` (the person named it), ``index`` (recorded when the backup was taken) or
            ``""`` (neither).
        code: ``None`` when restorable, else one of :data:`TRUST_REFUSALS` / :data:`FOLDER_REFUSALS`.
        problem: the reason, for people (``None`` when restorable).
        entry: the index entry that vouches for the backup (found by its folder, or by its
            manifest's hash when the folder was moved), when one does.
    """

    path: Path | None
    via: str
    code: str | None = None
    problem: str | None = None
    entry: IndexEntry | None = None

    @property
    def ok(self) -> bool:
        return self.code is None

    @property
    def bad_input(self) -> bool:
        """The folder is unusable (exit 2), rather than the backup untrusted (exit 1)."""
        return self.code in FOLDER_REFUSALS

    def short(self) -> str:
        """The reason in a few words (for a list); empty when restorable."""
        return _SHORT.get(self.code or "", "")


def _folder_problem(dest: Path, backup: Backup, via: str) -> tuple[str, str] | None:
    """Why ``dest`` cannot take ``backup`` (``(code, reason)``), or ``None``."""
    character = backup.character
    if via == "index" and dest.resolve() != dest:
        return "link", f"{dest} is now a link (to {dest.resolve()}); restore does not follow links"
    if dest.is_symlink():
        return "link", f"{dest} is a link; restore does not follow links"
    if not dest.parent.is_dir():
        return "target_gone", f"{dest.parent} does not exist: cannot restore {character} there"
    here = backup.path.resolve()
    if fs.is_inside(here, dest) or fs.is_inside(dest, here):
        return "overlaps_backup", f"{dest} and the backup {here} are inside one another"
    if dest.exists() and not dest.is_dir():
        return "not_a_folder", f"{dest} is not a folder"
    if dest.is_dir():
        if is_character_folder(dest):
            return None
        try:
            empty = not any(dest.iterdir())
        except OSError as exc:
            return "not_a_character_folder", f"{dest} cannot be read: {exc.strerror or exc}"
        if empty and dest.name == character:
            return None
        hint = f" (did you mean {dest / character}?)" if (dest / character).is_dir() else ""
        return (
            "not_a_character_folder",
            f"{dest} is not a character folder{hint}: restore writes only into a character folder, "
            f"or into an empty or missing folder named {character}",
        )
    if dest.name != character:
        return (
            "not_a_character_folder",
            f"{dest} does not exist and is not named {character}: restore creates only a missing "
            f"character folder of the backup's own name",
        )
    return None


def restore_target(
    backup: Backup,
    to: str | os.PathLike[str] | None = None,
    *,
    index: BackupIndex | None = None,
    index_path: str | os.PathLike[str] | None = None,
) -> RestoreTarget:
    """The one rule for where a backup may be put back. Nothing inside the backup is trusted.

    The target is ``to`` when the person gave one (resolved), else the folder the index of backups
    recorded when this backup was taken. The entry is found by the backup's folder, whose
    ``manifest.json`` must still have the SHA-256 recorded there; or, for a backup folder that was
    moved or copied, by that SHA-256 alone (a manifest byte-identical to a recorded one, whose files
    verify against it, is that backup). The manifest's own ``source`` is never used. Either way the folder must still
    be a character folder (:func:`journal.inputs.is_character_folder`), or an empty or missing
    folder named after the backup's character, inside a folder that exists; not a link; and not
    inside the backup (or the other way round). An index entry whose manifest hash differs refuses
    even with ``to``: the backup was edited after it was taken.

    Args:
        index: the index, already read (:func:`list_backups` reads it once).
        index_path: where to read it from otherwise (default: :func:`default_index_path`).
    """
    idx = index if index is not None else read_index(index_path)
    recorded = idx.by_path(backup.path)
    if recorded is not None and recorded.manifest_sha256 != backup.manifest_sha256:
        return RestoreTarget(
            Path(to).expanduser().resolve() if to is not None else None,
            "--to" if to is not None else "",
            "manifest_changed",
            f"{backup.path / MANIFEST_NAME} is not the manifest recorded when this backup was taken "
            f"(its SHA-256 differs from the one in {idx.path}): it was edited or replaced, so nothing "
            "in this backup can be trusted; restore refuses",
        )
    entry = recorded or idx.by_manifest(backup.manifest_sha256)
    if to is not None:
        dest, via = Path(to).expanduser().resolve(), "--to"
    else:
        how = "; pass --to DIR to name the character folder to restore into"
        if idx.problem is not None:
            return RestoreTarget(
                None,
                "",
                "index_unreadable",
                f"the index of backups {idx.path} is unusable ({idx.problem}), so nothing says where "
                f"this backup belongs (restore never uses the folder named inside a backup){how}",
            )
        if entry is None:
            yet = ", which does not exist yet" if idx.missing else ""
            return RestoreTarget(
                None,
                "",
                "not_indexed",
                f"{backup.path} is not in the index of backups ({idx.path}{yet}), so nothing says where "
                f"it belongs (restore never uses the folder named inside a backup){how}",
            )
        dest, via = entry.target, "index"
    problem = _folder_problem(dest, backup, via)
    if problem is not None:
        return RestoreTarget(dest, via, *problem, entry=entry)
    return RestoreTarget(dest, via, entry=entry)


# -- listing --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """A backup as listed for choosing one to restore.

    Attributes:
        status: the outcome recorded in its report (``applied``, ``stopped``, ...), or ``None``.
            Shown only: like every file of a backup, the report may have been edited.
        target: where it would be put back (:func:`restore_target`).
    """

    path: Path
    character: str
    kind: str
    created_at: str
    status: str | None
    target: RestoreTarget

    @property
    def restorable(self) -> bool:
        return self.target.ok

    def label(self) -> str:
        status = f", replay {self.status}" if self.status else ""
        text = f"{self.created_at} — {self.character} ({self.kind}{status})"
        if not self.restorable:
            return f"{text} — not restorable: {self.target.short()}"
        return f"{text} → {self.target.path}"


def list_backups(
    backup_root: str | os.PathLike[str],
    character: str | None = None,
    *,
    index_path: str | os.PathLike[str] | None = None,
) -> list[BackupSummary]:
    """Complete backups under ``backup_root`` (of one character, or all), newest first, each with
    where it would be put back and whether it may be (:func:`restore_target` without ``--to``)."""
    root = Path(backup_root)
    groups = [root / character] if character else ([p for p in root.iterdir() if p.is_dir()] if root.is_dir() else [])
    index = read_index(index_path)
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
                status = loads_exact((p / REPORT_NAME).read_bytes()).get("outcome", {}).get("status")
            out.append(BackupSummary(p, b.character, b.kind, b.created_at, status, restore_target(b, index=index)))
    return sorted(out, key=lambda s: s.path.name, reverse=True)
