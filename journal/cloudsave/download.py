"""What a download of a unit does to a local character folder (cloudsave-format §3.2-3.4).

:func:`plan_download` says which allow-listed files it replaces, creates and deletes (an
allow-listed local file absent from the unit is deleted, ``time_indexed.db`` included) and what
stays. :func:`preview_download` then applies the download, as §3.2 does it, to a private scratch
copy of the local folder (:func:`apply_download`) and runs the diagnosis on it: what the memory
server's next start does afterwards is the same server model ``check`` uses, read from that
copy's ``server_start``. The local folder and the unit are only read.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal.chat import ChatError, read_chat
from journal.cloudsave.dbhash import shadow_sha256
from journal.cloudsave.layout import managed_files
from journal.cloudsave.meta import CHARACTERS_KEY, read_json
from journal.cloudsave.verify import FileHash, UnitCheck, hash_memory
from journal.diagnosis.character import diagnose_character
from journal.diagnosis.values import CharacterDiagnosis
from journal.finding import Finding
from journal.layout import CHAT_DB
from journal.serverrules import CharacterList, read_characters

#: What §3.3 says the memory server does until its process restarts.
CACHE_NOTE = (
    "until the memory server process restarts, it keeps its cached pre-download facts and persona for a "
    "character it had loaded (/reload carries them over and does not reconcile), and its next save can write "
    "them back over the downloaded files"
)
BINDING_NOTE = "the binding is not compared: a memory folder does not hold it"


@dataclass(slots=True)
class FileChange:
    """One allow-listed file and what a download does to it: ``replace``, ``create``, ``delete``
    or ``same``; both sides' hashes (the db's by the server's rule: a shadow copy's)."""

    name: str
    action: str
    local_sha256: str | None = None
    cloud_sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "action": self.action,
            "local_sha256": self.local_sha256,
            "cloud_sha256": self.cloud_sha256,
        }


@dataclass(slots=True)
class DownloadPlan:
    """The files a download touches, and what it leaves.

    Attributes:
        files: every allow-listed name on either side, by name.
        stays: the local files and folders it never touches (journal, sentinel, outbox, cursors,
            shards, any file not on the list).
        chat_rows_lost: with ``time_indexed.db`` deleted, how many rows it holds (``None``: not
            deleted, or not countable: ``chat_problem`` says why).
        profile: ``same``, ``differs`` or ``not compared`` (no ``characters.json`` found or given).
    """

    files: list[FileChange] = field(default_factory=list)
    stays: list[str] = field(default_factory=list)
    chat_rows_lost: int | None = None
    chat_problem: str | None = None
    profile: str = "not compared"
    characters_file: str | None = None

    def of(self, action: str) -> list[str]:
        return [f.name for f in self.files if f.action == action]

    @property
    def changes_something(self) -> bool:
        return any(f.action != "same" for f in self.files) or self.profile == "differs"


def _same(local: FileHash, cloud: FileHash, local_dir: Path) -> tuple[bool, str | None]:
    """Whether both sides hold the same file, and the local hash as the server compares it (the
    db: a shadow copy's hash, the cloud db being itself a shadow copy)."""
    if local.sha256 == cloud.sha256:
        return True, local.sha256
    if local.name == CHAT_DB:
        shadow = shadow_sha256(local_dir / CHAT_DB)
        return shadow is not None and shadow == cloud.sha256, shadow or local.sha256
    return False, local.sha256


def plan_download(unit: UnitCheck, local_dir: Path, characters_file: str | None = None) -> DownloadPlan:
    """What a download of ``unit`` does to the character folder ``local_dir`` (§3.2 steps 3-6)."""
    plan = DownloadPlan(characters_file=characters_file)
    cloud = {n: h for n, h in unit.hashes.items() if h.regular}  # the server exports regular files only
    local = hash_memory(local_dir)
    for name in sorted(set(cloud) | set(local)):
        c, lo = cloud.get(name), local.get(name)
        if c is None and lo is not None:
            plan.files.append(FileChange(name, "delete", lo.sha256, None))
        elif c is not None and lo is None:
            plan.files.append(FileChange(name, "create", None, c.sha256))
        elif c is not None and lo is not None:
            same, local_hash = _same(lo, c, local_dir)
            plan.files.append(FileChange(name, "same" if same else "replace", local_hash, c.sha256))
    managed = set(managed_files(local_dir))
    try:
        plan.stays = sorted(n for n in os.listdir(local_dir) if n not in managed)
    except OSError:
        plan.stays = []
    if CHAT_DB in plan.of("delete"):
        try:
            plan.chat_rows_lost = read_chat(local_dir / CHAT_DB, folder=local_dir).rows
        except ChatError as exc:
            plan.chat_problem = str(exc)
    if characters_file is not None:
        doc = read_json(Path(characters_file)).value
        section = doc.get(CHARACTERS_KEY) if isinstance(doc, dict) else None
        local_profile = section.get(unit.unit.name) if isinstance(section, dict) else None
        plan.profile = "same" if local_profile == unit.files.profile.value else "differs"
    return plan


def apply_download(unit: UnitCheck, plan: DownloadPlan, folder: Path) -> None:
    """Apply ``plan`` to ``folder`` as §3.2 does: each file of the unit copied in (the db's pages
    too, which is what the server's in-place backup leaves), then the delete set removed.

    Only ever called on a private scratch copy: never on a user's folder.
    """
    mem = unit.unit.memory_dir
    assert mem is not None or not plan.of("create") + plan.of("replace")
    for change in plan.files:
        target = folder / change.name
        if change.action in ("create", "replace") and mem is not None:
            if os.path.lexists(target):
                os.remove(target)
            shutil.copyfile(mem / change.name, target)
        elif change.action == "delete":
            os.remove(target)


def _scratch_copy(local_dir: Path, into: Path) -> Path:
    """A copy of the character folder (links kept as links, never followed; the db's sidecars too)."""
    target = into / local_dir.name
    shutil.copytree(local_dir, target, symlinks=True)
    return target


@dataclass(slots=True)
class DownloadPreview:
    """A download's plan and what the memory server's next start does afterwards.

    Attributes:
        after: the diagnosis of the scratch copy after the download (its ``server_start`` is
            the prediction; its paths are the scratch copy's, which is removed).
        replaced: its ``view.replaced`` finding: entries whose journal values disagree with the
            downloaded views.
    """

    plan: DownloadPlan
    after: CharacterDiagnosis
    replaced: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=lambda: [CACHE_NOTE, BINDING_NOTE])


def preview_download(
    unit: UnitCheck,
    local_dir: Path,
    *,
    name: str | None = None,
    characters_file: str | None = None,
) -> DownloadPreview:
    """Plan the download of ``unit`` into ``local_dir``, apply it to a scratch copy and diagnose
    that copy (the server model of ``check``); the scratch copy is removed before returning."""
    plan = plan_download(unit, local_dir, characters_file)
    listed = read_characters(characters_file) if characters_file is not None else CharacterList()
    scratch = Path(tempfile.mkdtemp(prefix="memory-inspector-download-"))
    try:
        copy = _scratch_copy(local_dir, scratch)
        apply_download(unit, plan, copy)
        after = diagnose_character(copy, root=str(scratch), name=name or local_dir.name, characters=listed)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    replaced = [f for f in after.findings if f.code == "view.replaced"]
    return DownloadPreview(plan, after, replaced)
