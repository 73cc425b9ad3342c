"""Step 7: put a backup back (:func:`plan_restore`, :func:`execute_restore`), verified against its
manifest, into a folder that comes from outside the backup (:func:`restore_target`: the person's
``--to``, or the index of backups), one atomic replace per file through :mod:`journal.fs`;
the order of the steps is :func:`inspector.core.replay.flow.restore_flow`."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from inspector.core.dirs import default_backup_root
from inspector.core.prompter import ASK_RESTORE, Question
from inspector.core.replay.backup import (
    Backup,
    IndexEntry,
    _walk_regular_files,
    create_backup,
    load_backup,
    restore_target,
    verify_backup,
)
from inspector.core.replay.describe import describe_restore_plan
from inspector.core.replay.errors import BackupError, BadInputError
from inspector.core.replay.fingerprints import _sha256_file
from inspector.core.replay.preflight import check_launcher_lock, folder_writable
from inspector.core.replay.stamps import _now_iso, _tool_version, _who
from journal import fs
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.reader import read_journal


@dataclass(slots=True)
class RestorePlan:
    """What putting a backup back would do (a pure value; nothing is written to make it).

    Files created in the folder after the backup (a shard a replay created, a temp file, newer
    files of the server) are removed, so the folder becomes byte-identical to the backup; they are
    not lost: :func:`execute_restore` first takes a ``pre-restore`` backup of the folder as it is,
    which makes the restore itself undoable. A folder created after the backup (an archive folder
    a replay created) is removed too once it is empty; one that still holds something the backup
    does not manage (a link, which backups never follow) is left alone.

    Attributes:
        backup: the backup.
        target: the character folder it is put back into, absolute (``None`` when nothing
            trusted names one: then ``refusal`` says why).
        via: where ``target`` comes from: ``--to`` (the person), ``index`` (the index of backups)
            or ``""``.
        refusal: why restore refuses before comparing anything (the backup is not vouched for by
            the index, or the folder would be written through a link); ``None`` otherwise.
        entry: the index entry that vouches for the backup, when one does.
        problems: the backup does not match its manifest (restore refuses).
        replace: files whose content differs.
        create: files of the backup missing from the folder.
        remove: files in the folder that the backup does not have.
        remove_dirs: folders the backup does not have, deepest first.
        unchanged: files already identical.
        new_events: events in the folder's journal that the backup's journal does not have (they
            leave the folder, and stay in the pre-restore backup).
    """

    backup: Backup
    target: Path | None
    via: str = ""
    refusal: str | None = None
    entry: IndexEntry | None = None
    problems: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)
    create: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    remove_dirs: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    new_events: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems and self.refusal is None

    @property
    def has_work(self) -> bool:
        return bool(self.replace or self.create or self.remove or self.remove_dirs)

    @property
    def refused_because(self) -> str:
        """The reason restore refuses this plan, in words (empty when it may go on)."""
        if self.refusal is not None:
            return self.refusal
        if self.problems:
            return "the backup does not match its manifest: " + self.problems[0]
        return ""


def _linked_part(dest: Path, rel: str, *, folder: bool = False) -> Path | None:
    """The first folder between ``dest`` and ``dest/rel`` (``rel`` itself too, when it names a
    ``folder``) that is a link: writes would leave the character folder through it."""
    parts = PurePosixPath(rel).parts
    cur = dest
    for part in parts if folder else parts[:-1]:
        cur = cur / part
        if cur.is_symlink():
            return cur
    return None


def plan_restore(
    backup_path: str | os.PathLike[str],
    to: str | os.PathLike[str] | None = None,
    *,
    index_path: str | os.PathLike[str] | None = None,
) -> RestorePlan:
    """Verify a backup against its manifest, find where it goes (:func:`restore_target`) and
    compare it with that folder.

    Args:
        to: the character folder to restore into, as the person named it (``--to``); without it,
            the one the index of backups recorded when the backup was taken.
        index_path: the index of backups (default: :func:`default_index_path`).

    Raises:
        BadInputError: not a backup folder, or the folder cannot take it (its parent is gone, it is
            a link, a file, or not a character folder; see :func:`restore_target`).
    """
    backup = load_backup(backup_path)
    where = restore_target(backup, to, index_path=index_path)
    if where.bad_input:
        raise BadInputError(str(where.problem))
    rp = RestorePlan(backup, where.path, where.via, where.problem, where.entry, problems=verify_backup(backup))
    if not where.ok or where.path is None:
        return rp
    dest = where.path
    hashes = backup.hashes()
    for rel, folder in [*((f, False) for f in sorted(hashes)), *((d, True) for d in backup.dirs)]:
        linked = _linked_part(dest, rel, folder=folder)
        if linked is not None:
            rp.refusal = f"{linked} is a link: restore does not write through links"
            return rp
    live, live_dirs, _ = _walk_regular_files(dest) if dest.is_dir() else ([], [], [])
    for rel in sorted(hashes):
        p = dest / rel
        if not p.is_file() or p.is_symlink():
            rp.create.append(rel)
        elif _sha256_file(p) == hashes[rel]:
            rp.unchanged.append(rel)
        else:
            rp.replace.append(rel)
    rp.remove = [rel for rel in live if rel not in hashes]
    kept = set(backup.dirs)
    rp.remove_dirs = sorted((d for d in live_dirs if d not in kept), key=lambda d: (-d.count("/"), d))
    if JOURNAL_NAME in hashes and (dest / JOURNAL_NAME).is_file():
        old = {e.event_id for e in read_journal(backup.files_dir / JOURNAL_NAME).events}
        rp.new_events = sum(1 for e in read_journal(dest / JOURNAL_NAME).events if e.event_id not in old)
    return rp


@dataclass(slots=True)
class RestoreOutcome:
    """What a restore did.

    Attributes:
        status: ``restored`` | ``nothing_to_do`` | ``refused`` | ``failed``.
        pre_restore: the backup of the folder taken just before (undo the restore with it).
        written: files replaced or created.
        removed: files removed.
        problems: differences left after the restore (empty when verified).
    """

    status: str
    plan: RestorePlan
    message: str = ""
    pre_restore: Backup | None = None
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    report_path: Path | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.status in ("restored", "nothing_to_do") else 1


def _restore_order(rel: str) -> tuple[int, str]:
    """Journal first, the sentinel last: a crash in between leaves a folder replay can converge."""
    if rel == JOURNAL_NAME:
        return (0, rel)
    if rel == SENTINEL_NAME:
        return (2, rel)
    return (1, rel)


def _pre_restore_root(rp: RestorePlan, backup_root: str | os.PathLike[str] | None) -> Path:
    """Where the pre-restore backup goes: as asked; else the backup root the index recorded for
    this backup, when it is still where the index says; else the backup root in the user's data
    folder (never beside a backup the index does not place there)."""
    if backup_root is not None:
        return Path(backup_root)
    if rp.entry is not None and rp.entry.path == rp.backup.path.resolve():
        return rp.entry.path.parent.parent
    return default_backup_root()


def execute_restore(
    rp: RestorePlan,
    *,
    backup_root: str | os.PathLike[str] | None = None,
    index_path: str | os.PathLike[str] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    writable: Callable[[Path], bool] = folder_writable,
) -> RestoreOutcome:
    """Put the backup back: refuse what the plan refused, refuse while the server runs, plan again
    (the same target, found the same way, and the same manifest, or refuse), back up the folder as
    it is, then swap each file in atomically (:func:`journal.fs.atomic_write_bytes`), remove the
    files the backup does not have, and verify the folder against the manifest.

    Args:
        backup_root: where the pre-restore backup goes (default: beside the backup's own group
            when the index records the backup there, else :func:`default_backup_root`).
        index_path: the index of backups (default: :func:`default_index_path`); the pre-restore
            backup is recorded there too.
    """
    out = RestoreOutcome("refused", rp)
    if not rp.ok or rp.target is None:
        out.message = rp.refused_because or "nothing says where this backup belongs"
        return out
    server = check_launcher_lock(state_dir)
    if server.state != "free":
        out.message = f"{server.message}: stop N.E.K.O before restoring"
        return out
    dest = rp.target
    if dest.is_dir() and not writable(dest):
        out.message = f"{dest} is not writable"
        return out
    # Re-compare right now: what is on disk at this moment is what the pre-restore backup keeps.
    try:
        again = plan_restore(rp.backup.path, dest if rp.via == "--to" else None, index_path=index_path)
    except BadInputError as exc:
        out.message = str(exc)
        return out
    if again.backup.manifest_sha256 != rp.backup.manifest_sha256 or again.target != dest:
        out.message = "the backup or where it goes changed since the plan; nothing was written: plan again"
        return out
    rp = again
    out.plan = rp
    if not rp.ok:
        out.message = rp.refused_because
        return out
    if not rp.has_work:
        out.status, out.message = "nothing_to_do", "the folder already equals the backup"
        return out
    root = _pre_restore_root(rp, backup_root)
    if fs.is_inside(root, dest):
        out.message = f"the pre-restore backup would go to {root}, inside {dest}; choose a backup folder outside it"
        return out
    try:
        if dest.is_dir():
            out.pre_restore = create_backup(
                dest, root, character=rp.backup.character, kind="pre-restore", index_path=index_path
            )
        hashes = rp.backup.hashes()
        fs.ensure_dir(dest)
        for d in rp.backup.dirs:
            fs.ensure_dir(dest / d)
        for rel in sorted(rp.replace + rp.create, key=_restore_order):
            data = (rp.backup.files_dir / rel).read_bytes()
            if hashlib.sha256(data).hexdigest() != hashes[rel]:
                raise BackupError(f"{rel} changed in the backup while restoring")
            if dest.is_symlink() or _linked_part(dest, rel) is not None:
                raise BackupError(f"a folder on the way to {dest / rel} became a link while restoring")
            fs.ensure_dir((dest / rel).parent)
            fs.atomic_write_bytes(dest / rel, data)
            out.written.append(rel)
        for rel in rp.remove:
            fs.remove_file(dest / rel)
            out.removed.append(rel)
        for rel in rp.remove_dirs:
            folder = dest / rel
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                # An empty folder: rmdir is atomic by itself; journal.fs makes it durable.
                os.rmdir(folder)
                fs.fsync_dir(folder.parent)
                out.removed.append(rel + "/")
    except (OSError, BackupError) as exc:
        out.status = "failed"
        out.message = f"restore failed: {exc}"
        if out.pre_restore is not None:
            out.message += f"; the folder as it was is in {out.pre_restore.path}"
        _write_restore_report(out)
        return out
    after = plan_restore(rp.backup.path, dest, index_path=index_path)
    out.problems = (
        [f"replace {r}" for r in after.replace]
        + [f"create {r}" for r in after.create]
        + [f"remove {r}" for r in after.remove]
    )
    if out.problems:
        out.status, out.message = "failed", "the folder does not match the backup after restoring: " + out.problems[0]
    else:
        out.status, out.message = (
            "restored",
            f"{len(out.written)} file(s) put back, {len(out.removed)} removed; verified",
        )
    _write_restore_report(out)
    return out


def _write_restore_report(out: RestoreOutcome) -> None:
    """Write ``report.json`` into the pre-restore backup (the record of what the restore replaced)."""
    if out.pre_restore is None:
        return
    report = {
        "schema": 1,
        "kind": "restore",
        "tool": _tool_version(),
        "who": _who(),
        "host": socket.gethostname(),
        "at": _now_iso(),
        "character": out.plan.backup.character,
        "folder": str(out.plan.target),
        "folder_from": out.plan.via,
        "restored_from": str(out.plan.backup.path),
        "pre_restore_backup": str(out.pre_restore.path),
        "outcome": {
            "status": out.status,
            "message": out.message,
            "written": out.written,
            "removed": out.removed,
            "problems": out.problems,
        },
    }
    path = out.pre_restore.report_path
    fs.atomic_write_bytes(path, json.dumps(report, indent=2, ensure_ascii=False).encode("utf-8"))
    out.report_path = path


def restore_question(rp: RestorePlan) -> Question:
    """The "put this backup back?" question (the plan itself is in ``details``)."""
    return Question(
        ASK_RESTORE,
        "Restore backup",
        f"Put the backup of {rp.backup.character} from {rp.backup.created_at} back into {rp.target}? "
        "The folder as it is now is backed up first.",
        "\n".join(describe_restore_plan(rp)),
    )
