"""Which files of a character folder go into a support bundle, under which member names, and how.

Member names are built from known parts only: the fixed names of the memory files, shard
basenames that match the shard pattern, temp-file names of a safe alphabet, other names keyed
(``file-<8 hex>``) when the bundle is redacted, and a character folder ``character-<8 hex>`` (or,
not redacted, a name that passes :func:`safe_folder_name`). Nothing a hostile folder holds
can put ``..``, an absolute path, a control character or a drive letter into the zip.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inspector.core.bundle import rules as R
from journal import fs, layout
from journal.events import JOURNAL_NAME
from journal.shards import is_shard_name

#: Names a file inside the bundle may have when it is not one of the known names.
_SAFE_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}|\.[A-Za-z0-9_][A-Za-z0-9_.\-]{0,126}")

#: The bundle's own members at its top: no character folder may take one of these names.
RESERVED_TOP = frozenset({"manifest.json", "check.json", "check.txt", "__MACOSX"})


def safe_folder_name(name: str) -> bool:
    """Whether a character's name can be a folder name in the zip as it is: 1-128 characters, no
    path separator, drive colon, wildcard, control or format character, not ``.``-leading, no
    trailing space or dot, not one of the bundle's own names."""
    if not name or len(name) > 128 or name in RESERVED_TOP or name.startswith("."):
        return False
    if name != name.strip() or name.endswith("."):
        return False
    if any(c in '/\\:*?"<>|' for c in name):
        return False
    return all(not unicodedata.category(c).startswith("C") for c in name)


def safe_file_name(name: str) -> bool:
    return _SAFE_FILE.fullmatch(name) is not None and ".." not in name


@dataclass(frozen=True, slots=True)
class Planned:
    """One file to bundle.

    Attributes:
        member: its path inside the character's folder in the zip (known parts only).
        source: the file to read.
        how: ``journal``, ``json``, ``ndjson``, ``timestamp`` or ``damaged`` (a temp file: its
            content goes whole).
        kind: the keep-list kind (``json`` and ``ndjson``).
        size: its size in bytes.
    """

    member: str
    source: Path
    how: str
    kind: str = "generic"
    size: int = 0


@dataclass(frozen=True, slots=True)
class Omitted:
    """A file or folder left out, and why (``what`` is its name when safe to show)."""

    what: str
    reason: str


@dataclass(slots=True)
class FolderPlan:
    files: list[Planned]
    folders: list[str]  # member folders to create even when empty (archive folders)
    omitted: list[Omitted]

    @property
    def size(self) -> int:
        return sum(p.size for p in self.files)


def _shown(name: str) -> str:
    return name if safe_file_name(name) else "(a name that is not shown)"


def _classify(name: str, member: str) -> tuple[str, str] | None:
    """``(how, kind)`` for a top-level file of a character folder, or ``None``."""
    if name == JOURNAL_NAME:
        return ("journal", "journal")
    if name in layout.NDJSON_FILES:
        return ("ndjson", layout.NDJSON_FILES[name])
    if name in layout.JSON_FILES:
        return ("json", layout.JSON_FILES[name])
    if name in layout.TIMESTAMP_FILES:
        return ("timestamp", "generic")
    if fs.is_leftover_temp(name) and safe_file_name(name):
        return ("damaged", "generic")
    if name.endswith(".json") and safe_file_name(member):
        return ("json", "generic")
    return None


def plan_folder(folder: Path, file_name: Callable[[str], str] = str, *, include_chat: bool = False) -> FolderPlan:
    """What of ``folder`` goes into the bundle. Links are never followed; special files, links,
    unknown folders and files that are not JSON are left out with a reason. ``file_name`` gives a
    name the format notes do not define its name in the bundle (a redacting bundle keys it:
    :meth:`~inspector.core.bundle.redact.BundleRedactor.file_name`). ``include_chat``: the sender
    ticked the chat history in: ``time_indexed.db`` goes in as a rebuilt copy
    (:mod:`inspector.core.bundle.chat`), its sidecars still left out.

    Raises:
        OSError: the folder cannot be listed.
    """
    plan = FolderPlan([], [], [])

    def _shown(name: str) -> str:
        got = file_name(name)
        return got if safe_file_name(got) else "(a name that is not shown)"

    entries = sorted(os.scandir(folder), key=lambda e: e.name)
    aliases = _aliases(folder)
    for entry in entries:
        name = entry.name
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            plan.omitted.append(Omitted(_shown(name), "a symbolic link: not followed"))
            continue
        if include_chat and name == layout.CHAT_DB and stat.S_ISREG(st.st_mode):
            plan.files.append(Planned(name, Path(entry.path), "chat", "chat", st.st_size))
            continue
        omitted_reason = next((why for prefix, why in R.OMITTED_PREFIXES if name.startswith(prefix)), None)
        if omitted_reason is not None:
            plan.omitted.append(Omitted(_shown(name), omitted_reason))
            continue
        if stat.S_ISDIR(st.st_mode):
            if name in layout.ARCHIVE_FOLDERS:
                _plan_archive(Path(entry.path), name, plan, file_name)
            else:
                plan.omitted.append(Omitted(_shown(name), "a folder the bundle does not know"))
            continue
        if not stat.S_ISREG(st.st_mode):
            plan.omitted.append(Omitted(_shown(name), "not a regular file"))
            continue
        member = file_name(name)
        how = _classify(name, member)
        alias = aliases.get(name)
        if alias is not None and (how is None or how[1] == "generic"):
            how = _classify(alias, member) or how  # read through a link by that name: redacted as that file
        if how is None:
            plan.omitted.append(Omitted(_shown(name), "not a file the bundle knows (only memory files and JSON)"))
            continue
        plan.files.append(Planned(member, Path(entry.path), how[0], how[1], st.st_size))
    return plan


def inner_links(char_dir: Path) -> list[tuple[str, str]]:
    """``(link, target)`` relative to ``char_dir``: the links of the folder and of its shard
    folders that lead to a regular file inside it. The diagnosis reads through them; a bundle
    holds no link, so it redacts the file as the kind the link names (:func:`plan_folder`) and
    records the link for its check to re-make (:mod:`inspector.core.bundle.facts`)."""
    out: list[tuple[str, str]] = []
    if os.path.islink(char_dir):
        return out
    real = os.path.realpath(char_dir)
    for sub in ("", *layout.ARCHIVE_FOLDERS):
        folder = char_dir / sub if sub else char_dir
        if sub and (os.path.islink(folder) or not folder.is_dir()):
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if not e.is_symlink():
                continue
            to = os.path.realpath(e.path)
            if to != real and fs.is_inside(to, real) and os.path.isfile(to):
                link = f"{sub}/{e.name}" if sub else e.name
                out.append((link, os.path.relpath(to, real).replace(os.sep, "/")))
    return out


def _aliases(folder: Path) -> dict[str, str]:
    """Top-level file name → the name of a top-level link that leads to it (the first, by name)."""
    out: dict[str, str] = {}
    for link, target in inner_links(folder):
        if "/" not in link and "/" not in target:
            out.setdefault(target, link)
    return out


def _plan_archive(folder: Path, archive: str, plan: FolderPlan, file_name: Callable[[str], str]) -> None:
    plan.folders.append(archive)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        plan.omitted.append(Omitted(archive, f"cannot be listed: {exc.strerror or exc}"))
        return
    unnamed = 0
    for entry in entries:
        name = entry.name
        st = entry.stat(follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            what = "a symbolic link: not followed" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            shown = file_name(name)
            plan.omitted.append(Omitted(f"{archive}/{_shown(shown)}", what))
            continue
        if is_shard_name(name):
            plan.files.append(Planned(f"{archive}/{name}", Path(entry.path), "json", "view", st.st_size))
        elif name == layout.MIGRATION_MARKER:
            plan.files.append(Planned(f"{archive}/{name}", Path(entry.path), "json", "migration_marker", st.st_size))
        else:
            # A file that is not a shard is reported by name pattern only (shard.bad_name): a name
            # that cannot be shown safely becomes another name that is not a shard either.
            name = file_name(name)
            if not safe_file_name(name):
                unnamed += 1
                name = f"unnamed-{unnamed}.bad"
            plan.files.append(Planned(f"{archive}/{name}", Path(entry.path), "json", "generic", st.st_size))
