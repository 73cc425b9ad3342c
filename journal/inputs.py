"""What a PATH given to the inspector holds, decided in one place (:func:`resolve`): a memory root,
one character folder, a zip export of either (extracted safely), a cloud-save layout; and
the character folders of a memory root (memory-format §1.2, §6.1). Every command, the window's
loader and the re-diagnosis read PATH through :func:`resolve`.

Findings about refused input (zip members, links) are made here, as :class:`journal.finding.Finding`
values; a support bundle's recorded facts of its original are read here (:mod:`journal.recorded`).
This module sits below the :mod:`journal.diagnosis` package, which reads PATH through it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import weakref
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from journal import fs
from journal.errors import UnknownCharacterError, UnreadableInputError
from journal.events import JOURNAL_NAME
from journal.finding import Finding
from journal.layout import CHARACTER_MARKERS
from journal.recorded import Recorded, read_recorded, remake_refused
from journal.serverrules import find_characters_file
from journal.views import PERSONA, REFLECTIONS

if TYPE_CHECKING:
    from journal.cloudsave.layout import CloudInput

class TempRoot:
    """Owns a private temp folder; removes it when closed or garbage-collected."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._finalizer = weakref.finalize(self, shutil.rmtree, path, True)

    def close(self) -> None:
        self._finalizer()


@dataclass(frozen=True, slots=True)
class ZipLimits:
    """What a zip export may expand to before it is refused as a zip bomb.

    Attributes:
        max_total_bytes: uncompressed bytes in all (declared sizes are checked first, then the
            bytes actually written are counted, so a lying header does not help).
        max_members: entries in the archive.
    """

    max_total_bytes: int = 2 << 30
    max_members: int = 100_000


class _ZipBombError(Exception):
    pass


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a zip member must not be extracted, or ``None``."""
    name = info.filename
    if "\x00" in name:
        return "a NUL byte in its name"
    mode = info.external_attr >> 16
    if mode and stat.S_ISLNK(mode):
        return "it is a symbolic link"
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "it is not a regular file or folder"
    norm = name.replace("\\", "/")
    # A colon in the first part is a drive letter ("C:x", "C:/x") or a Windows stream: never a folder.
    if norm.startswith("/") or re.match(r"[A-Za-z]:", norm) or ":" in norm.split("/")[0]:
        return "an absolute path"
    if ".." in norm.split("/"):
        return "'..' would put it outside the extraction folder"
    if info.flag_bits & 0x1:
        return "it is encrypted"
    return None


def _member_parts(info: zipfile.ZipInfo) -> list[str]:
    return [p for p in info.filename.replace("\\", "/").split("/") if p not in ("", ".")]


def extract_zip(
    zip_path: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    limits: ZipLimits | None = None,
    *,
    strict: bool = False,
    private: bool = True,
) -> list[Finding]:
    """Extract a zip export into ``dest`` safely: the one extractor of ``check`` and of replay.

    Refused members: a NUL byte, a link, a special file (FIFO, device, socket), an absolute path
    or drive letter, ``..``, encryption, a second member of the same name, a member whose folder
    would resolve outside ``dest``, a member larger than its header declares. :class:`ZipLimits`
    bounds the member count and the uncompressed bytes (declared sizes first, then the bytes
    actually written).

    Args:
        zip_path: the archive.
        dest: the folder to fill (created when missing).
        limits: the zip-bomb bounds (default :class:`ZipLimits`).
        strict: refuse the whole archive at the first refused member, instead of skipping the
            member and reporting it. The members' names are all checked before anything is
            written.
        private: create folders ``0o700`` and files ``0o600`` (a private temp copy); otherwise
            the umask's defaults.

    Returns:
        One ``input.refused`` finding per skipped member (always empty when ``strict``).

    Raises:
        UnreadableInputError: not a readable zip, over a limit, or (``strict``) a refused member.
    """
    limits = ZipLimits() if limits is None else limits
    dest = Path(dest)
    dir_mode, file_mode = (0o700, 0o600) if private else (0o777, 0o666)
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise UnreadableInputError(f"{zip_path}: not a readable zip file: {exc}") from exc
    refused: list[Finding] = []

    def refuse(name: str, why: str) -> None:
        if strict:
            raise UnreadableInputError(f"{zip_path}: zip member {name!r} refused: {why}")
        refused.append(Finding("input.refused", "error", f"zip member {name!r} refused: {why}", file=name))

    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_members:
            raise UnreadableInputError(
                f"{zip_path}: {len(infos):,} members, over the limit of {limits.max_members:,}: refused as a zip bomb"
            )
        declared = sum(i.file_size for i in infos)
        if declared > limits.max_total_bytes:
            raise UnreadableInputError(
                f"{zip_path}: expands to {declared:,} bytes, over the limit of {limits.max_total_bytes:,}: "
                "refused as a zip bomb"
            )
        if strict:  # every name is judged before the first byte is written
            names: set[str] = set()
            for info in infos:
                problem = _member_problem(info)
                if problem is not None:
                    refuse(info.filename, problem)
                key = "/".join(_member_parts(info))
                if key and not info.is_dir():
                    if key in names:
                        refuse(info.filename, "a second member with the same name")
                    names.add(key)
        seen: set[str] = set()
        written = 0
        for info in infos:
            problem = _member_problem(info)
            if problem is not None:
                refuse(info.filename, problem)
                continue
            parts = _member_parts(info)
            if not parts:
                continue
            key = "/".join(parts)
            target = dest.joinpath(*parts)
            if info.is_dir():
                try:
                    target.mkdir(parents=True, exist_ok=True, mode=dir_mode)
                except OSError as exc:
                    refuse(info.filename, f"cannot be created: {exc.strerror or exc}")
                continue
            if key in seen:
                refuse(info.filename, "a second member with the same name")
                continue
            seen.add(key)
            try:
                target.parent.mkdir(parents=True, exist_ok=True, mode=dir_mode)
            except OSError as exc:
                refuse(info.filename, f"cannot be created: {exc.strerror or exc}")
                continue
            if not fs.is_inside(target.parent, dest):
                refuse(info.filename, "it would land outside the extraction folder")
                continue
            try:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), file_mode)
            except OSError as exc:
                refuse(info.filename, f"cannot be created: {exc.strerror or exc}")
                continue
            member_written = 0
            try:
                with zf.open(info) as src, os.fdopen(fd, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        member_written += len(chunk)
                        if written > limits.max_total_bytes:
                            raise _ZipBombError
                        if member_written > info.file_size:
                            raise ValueError("it is larger than its header declares")
                        dst.write(chunk)
            except _ZipBombError:
                raise UnreadableInputError(
                    f"{zip_path}: expands beyond the limit of {limits.max_total_bytes:,} bytes: refused as a zip bomb"
                ) from None
            except Exception as exc:  # damaged member (CRC, truncated, unsupported method): skip it
                with contextlib.suppress(OSError):
                    target.unlink()
                refuse(info.filename, f"cannot be extracted: {exc}")
    return refused


def is_character_folder(path: Path) -> bool:
    try:
        return bool(CHARACTER_MARKERS & set(os.listdir(path)))
    except OSError:
        return False


def holds_characters(entries: list[CharacterEntry]) -> bool:
    """Whether the sub-folders of a memory root (:func:`characters_in`) hold any character: one of
    them has a memory file, or cannot be looked into (its diagnosis says why), or is a refused
    link. Then every sub-folder is a character, an empty one included (the server creates them
    lazily). When none does, the folder is not a memory root at all."""
    for e in entries:
        if e.refusal is not None or is_character_folder(e.path):
            return True
        try:
            os.listdir(e.path)
        except OSError:
            return True
    return False


_IGNORED_ROOT_NAMES = frozenset({"__MACOSX"})


def descend(folder: Path) -> Path:
    """In an extracted zip, go down through single wrapper folders (``export/memory/...``)."""
    cur = folder
    for _ in range(16):
        if is_character_folder(cur):
            break
        try:
            kids = [e for e in os.scandir(cur) if not e.name.startswith(".") and e.name not in _IGNORED_ROOT_NAMES]
        except OSError:
            break
        dirs = [e for e in kids if e.is_dir(follow_symlinks=False)]
        if len(dirs) == 1 and len(kids) == 1:
            cur = Path(dirs[0].path)
            continue
        break
    return cur


@dataclass(frozen=True, slots=True)
class CharacterEntry:
    name: str
    path: Path
    refusal: Finding | None = None


def characters_in(root: Path, root_real: str) -> list[CharacterEntry]:
    """Character folders of a memory root: every sub-folder but dot-folders; files are ignored.

    Symbolic links to folders are not followed: they are listed with an ``input.refused`` finding.
    """
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        raise UnreadableInputError(f"{root}: cannot be listed: {exc.strerror or exc}") from exc
    out: list[CharacterEntry] = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _IGNORED_ROOT_NAMES:
            continue
        path = Path(entry.path)
        if entry.is_symlink():
            if not path.is_dir():
                continue
            inside = fs.is_inside(path, root_real)
            why = (
                "a symbolic link to another folder of the memory root; not followed (that folder is checked under "
                "its own name)"
                if inside
                else "a symbolic link pointing outside the memory root; not followed"
            )
            out.append(
                CharacterEntry(
                    entry.name,
                    path,
                    Finding("input.refused", "info" if inside else "warning", f"{entry.name} is {why}"),
                )
            )
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        out.append(CharacterEntry(entry.name, path))
    return out


# -- the one resolver of a PATH ------------------------------------------------------------------


class NoCharacterError(UnreadableInputError):
    """PATH was read and holds no character folder (the window shows such a folder as empty)."""


#: ``kind`` of a zip export that :func:`resolve` was asked not to open (``extract=False``).
UNOPENED_ZIP = "zip"


@dataclass(slots=True)
class ResolvedInput:
    """What a PATH holds, as :func:`resolve` decided it.

    For an extracted zip, :attr:`root` is a private temp folder that this value owns: call
    :meth:`close` (or use the value as a context manager) to remove it; it is also removed when
    the value is garbage-collected, unless :meth:`take_temp` handed it on.

    Attributes:
        path: the PATH as given.
        kind: ``root`` (a memory root: one sub-folder per character), ``character`` (PATH is one
            character folder, or a zip of one), or ``zip`` (a zip export left unopened,
            ``extract=False``: no characters are known).
        root: the folder read: PATH (absolute), a zip's extracted copy, or the zip itself when
            unopened.
        memory_root: the folder holding the character folders (a character folder's parent);
            ``None`` for an unopened zip.
        characters: the character folders by name (only the one asked for, when one was); a link
            is listed with its refusal and not followed.
        characters_file: the memory server's ``characters.json`` for this memory root: the one
            given (``--characters``), else the one beside it (``../config/characters.json``,
            memory-format §9.1; for a zip, only inside its copy), else ``None`` (a support bundle
            records what its original read instead: :attr:`recorded`).
        refused: ``input.refused`` findings about the input as a whole (zip members not extracted,
            and those a support bundle's manifest records of its original).
        zip_path: the zip export, when PATH is one.
        recorded: a support bundle's facts of its original (:mod:`journal.recorded`),
            when PATH is a bundle.
        cloud: the cloud-save layout PATH is (:class:`journal.cloudsave.layout.CloudInput`: a
            cloud-save root, a unit, a legacy folder or a download backup), or ``None``.
    """

    path: str
    kind: str
    root: Path
    memory_root: Path | None = None
    characters: list[CharacterEntry] = field(default_factory=list)
    characters_file: str | None = None
    refused: list[Finding] = field(default_factory=list)
    zip_path: Path | None = None
    recorded: Recorded | None = None
    cloud: CloudInput | None = None
    _temp: TempRoot | None = field(default=None, repr=False, compare=False)

    @property
    def is_cloud_unit(self) -> bool:
        """PATH is a cloud-save unit (not a memory folder: no server start applies to it); a
        download backup holds a memory folder, so it is none."""
        return self.cloud is not None and self.cloud.kind != "backup"

    @property
    def is_zip(self) -> bool:
        return self.zip_path is not None

    def take_temp(self) -> TempRoot | None:
        """Hand the zip's extracted copy on to a longer-lived owner (a diagnosis); this value then
        no longer removes it."""
        temp, self._temp = self._temp, None
        return temp

    def close(self) -> None:
        """Remove the private temp folder of an extracted zip (no-op otherwise; idempotent)."""
        if self._temp is not None:
            self._temp.close()

    def __enter__(self) -> ResolvedInput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve(
    path: str | os.PathLike[str],
    character: str | None = None,
    *,
    extract: bool = True,
    zip_limits: ZipLimits | None = None,
    characters_file: str | os.PathLike[str] | None = None,
    cloud: bool = False,
) -> ResolvedInput:
    """What ``path`` means, for every command, the window's loader and the re-diagnosis.

    A cloud-save layout (:func:`journal.cloudsave.layout.find_cloud`: a cloud-save root, a unit
    ``characters/<name>/`` or its ``memory/``, the legacy ``memory/<name>/``, a download backup) is
    its characters, named as the units name them, each read from the memory folder the server
    reads (:attr:`ResolvedInput.cloud`). A folder holding memory files (``events.ndjson``,
    ``persona.json``, …) is one character (:func:`is_character_folder`); any other folder is a
    memory root whose sub-folders are characters (:func:`characters_in`). A zip is
    extracted to a private temp folder (:func:`extract_zip`: refused members become
    :attr:`ResolvedInput.refused`), through single wrapper folders (:func:`descend`); a zip of one
    character folder is named after the zip.

    Args:
        path: the PATH.
        character: only this character (``--character``).
        extract: open a zip (default); ``False`` reports it as kind ``zip`` without reading it
            (replay refuses it, the window's preview skips it).
        zip_limits: the zip-bomb bounds (default :class:`ZipLimits`).
        characters_file: the memory server's ``characters.json`` (``--characters``).
        cloud: PATH is said to be a cloud save (``memory-inspector cloud``): a folder of managed
            files and no journal, below ``memory/`` or as the whole of a zip, is then a legacy
            cloud-save folder sent alone, not a views-only character.

    Raises:
        UnreadableInputError: PATH does not exist or cannot be read, is neither a folder nor a
            zip, or the zip is corrupt or too big; ``characters_file`` does not exist.
        NoCharacterError: PATH was read and holds no character folder.
        UnknownCharacterError: ``character`` is not among PATH's characters.
    """
    given = os.fspath(path)
    if characters_file is not None and not os.path.lexists(characters_file):
        raise UnreadableInputError(f"{os.fspath(characters_file)}: no such file (--characters)")
    given_file = None if characters_file is None else os.fspath(characters_file)
    p = Path(given)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise UnreadableInputError(f"{given}: no such file or folder") from None
    except OSError as exc:
        raise UnreadableInputError(f"{given}: cannot be read: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(st.st_mode):
        try:
            os.listdir(p)
        except OSError as exc:
            raise UnreadableInputError(f"{given}: cannot be listed: {exc.strerror or exc}") from exc
        found = ResolvedInput(given, "root", p.absolute(), characters_file=given_file)
        _open_folder(found, p, character, zip_stem=None, cloud=cloud)
        return found
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableInputError(f"{given}: neither a folder nor a .zip export")
    try:
        is_zip = zipfile.is_zipfile(p)
    except OSError as exc:
        raise UnreadableInputError(f"{given}: cannot be read: {exc.strerror or exc}") from exc
    if not is_zip:
        empty = "an empty file, " if st.st_size == 0 else ""
        raise UnreadableInputError(f"{given}: {empty}neither a folder nor a .zip export")
    if not extract:
        return ResolvedInput(given, UNOPENED_ZIP, p.absolute(), characters_file=given_file, zip_path=p)
    temp = TempRoot(tempfile.mkdtemp(prefix="memory-inspector-zip-"))
    found = ResolvedInput(given, "root", Path(temp.path), characters_file=given_file, zip_path=p, _temp=temp)
    try:
        found.refused = extract_zip(p, temp.path, zip_limits)
        found.recorded = read_recorded(temp.path)  # a support bundle: its manifest's facts of the original
        if found.recorded is not None:
            found.refused = [*found.refused, *found.recorded.findings]
        base = descend(Path(temp.path))
        if found.recorded is not None:
            remake_refused(found.recorded, base)  # what the original refused, refused here again
        _open_folder(found, base, character, zip_stem=p.stem, cloud=cloud)
    except BaseException:
        found.close()
        raise
    return found


def _open_folder(
    found: ResolvedInput, base: Path, character: str | None, zip_stem: str | None, cloud: bool = False
) -> None:
    """Fill ``found`` from the folder ``base`` (PATH, or where a zip's copy starts)."""
    root_real = os.path.realpath(found.root)
    from journal.cloudsave.layout import find_cloud  # journal.cloudsave reads the allow-list here

    layout = find_cloud(base, export=None if found.zip_path is None else found.root, alone=cloud)
    if layout is not None:
        found.cloud = layout
        one = layout.kind in ("unit", "legacy") and len(layout.units) == 1
        found.kind = "character" if one else "root"
        found.memory_root = base.absolute()
        entries = [CharacterEntry(u.name, u.memory_dir) for u in layout.units if u.memory_dir is not None]
    elif is_character_folder(base):
        found.kind = "character"
        found.memory_root = base.parent.absolute()
        name = base.name
        if zip_stem is not None and base == found.root:
            name = zip_stem
        entries = [CharacterEntry(name, base)]
    else:
        found.kind = "root"
        found.memory_root = base.absolute()
        entries = characters_in(base, root_real)
        if not holds_characters(entries) and not found.refused:  # refused zip members are reported instead
            files = ", ".join(f for f in (JOURNAL_NAME, PERSONA, REFLECTIONS) if f in CHARACTER_MARKERS)
            raise NoCharacterError(
                f"{found.path}: no character folder found here: a memory root holds one folder per character, "
                f"each with its memory files ({files}, …); a character folder holds those files itself"
            )
    if character is not None:
        entries = [e for e in entries if e.name == character]
        if not entries:
            raise UnknownCharacterError(f"{found.path}: no character named {character!r}")
    found.characters = entries
    if found.is_cloud_unit:
        return  # a unit's profiles are its own, and no server start applies to it
    if found.characters_file is None and (found.recorded is None or found.recorded.characters is None):
        beside = find_characters_file(found.memory_root)
        # A zip's copy is a folder of its own: what lies beside the temp folder is not the export's.
        if beside is not None and (found.zip_path is None or fs.is_inside(beside, found.root)):
            found.characters_file = beside
