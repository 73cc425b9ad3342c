"""Writing a support bundle: the diagnosis of the original, the redacted members, the manifest.

The zip is written to a temp file beside the output, fsynced, then moved onto the output in one
``os.replace`` (through :mod:`journal.fs`); on any failure or cancel the temp file is removed and
the output is untouched. It is never written inside the input, and an existing output is replaced
only when asked (``force``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from inspector.core.bundle.chat import chat_db_bytes
from inspector.core.bundle.checkdoc import check_documents, make_scrub
from inspector.core.bundle.facts import bundle_facts, character_facts, zip_level_findings
from inspector.core.bundle.journal import redact_journal
from inspector.core.bundle.manifest import Manifest, MemberRecord, input_base_name, input_name
from inspector.core.bundle.members import FolderPlan, Omitted, Planned, plan_folder, safe_file_name, safe_folder_name
from inspector.core.bundle.redact import BundleRedactor, dumps_json
from inspector.core.redaction import Redactor, damaged_token
from journal import fs
from journal.diagnosis import DiagnosisInputError, diagnose_path
from journal.events import JOURNAL_NAME
from journal.inputs import resolve

#: Read in pieces of this size when a file is copied as it is (the journal with ``redact=False``).
_PIECE = 4 << 20

#: The PNG of a character's screenshot, inside its folder (a file the diagnosis ignores).
SCREENSHOT_NAME = "screenshot.png"


class BundleError(Exception):
    """The bundle was not written (the message says why, in one line)."""


class BundleRefusedError(BundleError):
    """The output is refused: it exists (without ``force``), lies inside the input, or its folder
    does not exist."""


class BundleCancelledError(BundleError):
    """``cancelled()`` said stop; nothing was written."""


@dataclass(frozen=True, slots=True)
class BundleResult:
    """A bundle written.

    Attributes:
        path: the zip.
        manifest: the manifest as written.
        size: the zip's size in bytes.
    """

    path: Path
    manifest: dict[str, object]
    size: int


def check_output(path: str | os.PathLike[str], out: str | os.PathLike[str], *, force: bool = False) -> Path:
    """The output path, absolute, or why it is refused (the rules of :func:`write_bundle`).

    Raises:
        BundleRefusedError: see the class.
    """
    out_abs = Path(os.path.abspath(out))
    parent = out_abs.parent
    if not parent.is_dir():
        raise BundleRefusedError(f"{out}: its folder {parent} does not exist")
    if out_abs.is_dir():
        raise BundleRefusedError(f"{out}: is a folder; name the .zip to write")
    src = os.path.realpath(path)
    targets = {os.path.realpath(parent), os.path.realpath(out_abs)}
    if os.path.isdir(src) and any(fs.is_inside(t, src) for t in targets):
        raise BundleRefusedError(f"{out}: lies inside the input folder; a bundle is never written inside it")
    if src in targets:
        raise BundleRefusedError(f"{out}: is the input itself")
    if os.path.lexists(out_abs) and not force:
        raise BundleRefusedError(f"{out}: already exists; use --force to replace it")
    return out_abs


def _input_size(path: str) -> tuple[int, int]:
    """``(journal bytes, all bytes)`` of the input, for progress (links not followed)."""
    journals = total = 0
    try:
        if os.path.isdir(path):
            for dirpath, _dirs, files in os.walk(path):
                for name in files:
                    with contextlib.suppress(OSError):
                        st = os.lstat(os.path.join(dirpath, name))
                        if stat.S_ISREG(st.st_mode):
                            total += st.st_size
                            journals += st.st_size if name == JOURNAL_NAME else 0
        else:
            with fs.open_regular(path) as fh, zipfile.ZipFile(fh) as zf:
                for info in zf.infolist():
                    total += info.file_size
                    journals += info.file_size if info.filename.rsplit("/", 1)[-1] == JOURNAL_NAME else 0
    except (OSError, zipfile.BadZipFile, ValueError):
        pass
    return journals, total


class _Progress:
    """``progress(done, total)`` that never goes backwards, and the cancel check at each step."""

    def __init__(
        self, total: int, progress: Callable[[int, int], None] | None, cancelled: Callable[[], bool] | None
    ) -> None:
        self.total = total
        self.done = 0
        self._progress = progress
        self._cancelled = cancelled

    def at(self, done: int) -> None:
        if self._cancelled is not None and self._cancelled():
            raise BundleCancelledError("cancelled; nothing was written")
        self.done = max(self.done, done)
        self.total = max(self.total, self.done)
        if self._progress is not None:
            self._progress(self.done, self.total)


class _Zip:
    """The zip being written, and the record of each member for the manifest."""

    def __init__(self, fh: object, when: tuple[int, int, int, int, int, int]) -> None:
        self.zf = zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, allowZip64=True)  # type: ignore[arg-type]
        self.when = when
        self.records: list[MemberRecord] = []

    def folder(self, name: str) -> None:
        info = zipfile.ZipInfo(name.rstrip("/") + "/", self.when)
        info.external_attr = (0o40755 << 16) | 0x10
        info.create_system = 3
        self.zf.writestr(info, b"")

    def add(self, name: str, pieces: Iterable[bytes]) -> None:
        info = zipfile.ZipInfo(name, self.when)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o100644 << 16
        info.create_system = 3
        digest = hashlib.sha256()
        size = 0
        with self.zf.open(info, "w", force_zip64=True) as w:
            for piece in pieces:
                w.write(piece)
                digest.update(piece)
                size += len(piece)
        self.records.append(MemberRecord(name, size, digest.hexdigest()))


def _read(path: Path) -> bytes:
    with fs.open_regular(path) as fh:
        return fh.read()


def _pieces(path: Path) -> Iterator[bytes]:
    with fs.open_regular(path) as fh:
        while piece := fh.read(_PIECE):
            yield piece


def _member_bytes(p: Planned, redactor: BundleRedactor | None) -> bytes:
    if p.how == "chat":  # never the live file's bytes: a private copy, rebuilt (and keyed)
        return chat_db_bytes(p.source, redactor)
    data = _read(p.source)
    if redactor is None:
        return data
    if p.how == "json":
        return redactor.json_file(data, p.kind)
    if p.how == "ndjson":
        return redactor.ndjson_file(data, p.kind)
    if p.how == "timestamp":
        return redactor.timestamp_file(data)
    return damaged_token("file", len(data)).encode("utf-8") if data else b""  # "damaged": a temp file


def write_bundle(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    secret: bytes,
    character: str | None = None,
    redact: bool = True,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    screenshots: Mapping[str, bytes] | None = None,
    now: datetime | None = None,
    include_chat: bool = False,
) -> BundleResult:
    """Write the support bundle of ``path`` (a memory root, a character folder or a zip export) to
    ``out`` (a ``.zip``).

    Contents: ``manifest.json``; ``check.json`` and ``check.txt`` (the diagnosis of the original,
    paths cut to the input's base name); and per character a folder with its journal, views,
    shards, sentinel, outbox and sidecars, redacted unless ``redact`` is false (see
    :mod:`inspector.core.bundle.redact`), plus ``screenshot.png`` when ``screenshots`` has one for
    it (PNG bytes by character name, rendered by the caller with redaction on).

    Args:
        path: the input; only read.
        out: the zip to write; never inside ``path``.
        secret: the sender's redaction secret (:mod:`inspector.core.bundle.secret`); it never goes
            into the bundle (the manifest names it by ``Redactor.key_id``).
        character: only this character.
        redact: redact (the default); false copies the files as they are, and the manifest says so.
        force: replace an existing ``out``.
        progress: ``progress(done, total)`` in bytes, reading and writing together; never backwards.
        cancelled: asked at each step; true stops, removes the temp file and raises.
        screenshots: PNG bytes by character folder in the bundle, or by character name.
        now: the time recorded for the members (default: now).
        include_chat: the sender includes the chat history: each ``time_indexed.db`` goes in
            rebuilt from a private copy, every message's words keyed when redacting
            (:mod:`inspector.core.bundle.chat`); by default it is left out.

    Returns:
        What was written.

    Raises:
        BundleRefusedError: the output is refused (see :func:`check_output`).
        BundleCancelledError: ``cancelled()`` returned true.
        DiagnosisInputError: the input cannot be read (as ``check`` exits 2 for it).
        OSError: the output cannot be written (nothing is left behind).
    """
    given = os.fspath(path)
    # What PATH is, before anything walks or opens it (a FIFO's open would wait for a writer
    # forever): the resolver refuses what is neither a folder nor a zip, and an unknown character.
    resolve(given, character, extract=False).close()
    out_abs = check_output(given, out, force=force)
    journals, total = _input_size(given)
    meter = _Progress(journals + total, progress, cancelled)
    meter.at(0)
    base = Redactor(secret)
    when = (now or datetime.now()).timetuple()[:6]
    with diagnose_path(given, character=character, progress=lambda done, _t: meter.at(done)) as diag:
        plans: list[tuple[str, str, FolderPlan | None, str | None]] = []
        used: set[str] = set()
        check_redactor = BundleRedactor(base) if redact else None
        file_name = check_redactor.file_name if check_redactor is not None else str
        for i, c in enumerate(diag.characters, 1):
            folder = character_folder(c.name, i, base if redact else None)
            while folder in used:
                folder += "_"
            used.add(folder)
            if os.path.islink(c.path):
                plans.append((c.name, folder, None, "a symbolic link: not followed"))
                continue
            try:
                plans.append((c.name, folder, plan_folder(Path(c.path), file_name, include_chat=include_chat), None))
            except OSError as exc:
                plans.append((c.name, folder, None, f"cannot be listed: {exc.strerror or exc}"))
        meter.total = max(meter.total, journals + sum(p.size for _, _, p, _ in plans if p is not None))
        manifest = Manifest(input_base_name(given), redact, base.key_id if redact else None)
        fd, tmp = tempfile.mkstemp(prefix=".memory-inspector-bundle-", suffix=".tmp", dir=out_abs.parent)
        try:
            with os.fdopen(fd, "w+b") as fh:
                z = _Zip(fh, when)
                with z.zf:
                    done = journals
                    kept: dict[str, tuple[Any, FolderPlan | None, BundleRedactor | None, dict[str, str]]] = {}
                    for (name, folder, plan, why), c in zip(plans, diag.characters, strict=True):
                        manifest.characters.append({"folder": folder} if redact else {"name": name, "folder": folder})
                        z.folder(folder)
                        if plan is None:
                            manifest.omitted.append({"character": folder, "what": "(the folder)", "reason": str(why)})
                            kept[folder] = (c, None, None, {})
                            continue
                        redactor = BundleRedactor(base) if redact else None
                        done, unreadable = _add_character(z, folder, plan, redactor, meter, done)
                        kept[folder] = (c, plan, redactor, unreadable)
                        if redactor is not None and check_redactor is not None:
                            check_redactor.digests.update(redactor.digests)
                        for o in plan.omitted:
                            manifest.omitted.append({"character": folder, "what": o.what, "reason": o.reason})
                        shots = screenshots or {}
                        png = shots.get(folder, shots.get(name))
                        if png is not None:
                            z.add(f"{folder}/{SCREENSHOT_NAME}", [png])
                    # Last: the digests its messages name map through every character's texts.
                    names = {name: folder for name, folder, _p, _w in plans}
                    scrub = make_scrub(given, diag, check_redactor, names if redact else None)
                    manifest.input = input_name(given, base if redact else None, names if redact else None)
                    zip_level = zip_level_findings(diag)
                    per: dict[str, dict[str, Any]] = {}
                    for folder, (c, plan, redactor, unreadable) in kept.items():
                        prefix = f"{folder}/"
                        shas = {r.name[len(prefix) :]: r.sha256 for r in z.records if r.name.startswith(prefix)}
                        per[folder] = character_facts(
                            c, zip_level, shas, _member_name(plan, file_name), redactor, scrub, unreadable
                        )
                    manifest.facts = bundle_facts(diag, names, per, scrub, _path_name(file_name))
                    check_json, check_txt = check_documents(diag, given, check_redactor, names if redact else None)
                    z.add("check.json", [check_json])
                    z.add("check.txt", [check_txt])
                    doc = manifest.to_json()
                    doc["files"] = [{"name": r.name, "size": r.size, "sha256": r.sha256} for r in z.records]
                    z.add("manifest.json", [dumps_json(doc, indent=True) + b"\n"])
                meter.at(meter.total)
                fh.flush()
                os.fsync(fh.fileno())
            fs.replace_file(tmp, out_abs)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    with contextlib.suppress(OSError):
        fs.fsync_dir(out_abs.parent)
    return BundleResult(out_abs, doc, out_abs.stat().st_size)


def character_folder(name: str, index: int, keyed_by: Redactor | None) -> str:
    """A character's folder in the bundle: ``character-<8 hex>``, the keyed tag of its name, when
    redacted (its name is text); else its name when it is safe as one, or ``character-<index>``."""
    if keyed_by is not None:
        return f"character-{keyed_by.tag(name)}"
    return name if safe_folder_name(name) else f"character-{index}"


def _path_name(file_name: Callable[[str], str]) -> Callable[[str], str]:
    """A relative path as the bundle shows it: each part through ``file_name``."""
    return lambda rel: "/".join(file_name(part) for part in rel.split("/"))


def _member_name(plan: FolderPlan | None, file_name: Callable[[str], str]) -> Callable[[str], str | None]:
    """A file's name inside its character folder in the bundle: its member's, or for a file left
    out its name as the bundle shows names, when that is safe (``None``: not shown)."""
    members = {}
    for p in [] if plan is None else plan.files:
        rel = f"{p.source.parent.name}/{p.source.name}" if "/" in p.member else p.source.name
        members[rel] = p.member

    def name(rel: str) -> str | None:
        if rel in members:
            return members[rel]
        parts = [file_name(p) for p in rel.split("/")]
        return "/".join(parts) if all(safe_file_name(p) for p in parts) else None

    return name


def _add_character(
    z: _Zip, folder: str, plan: FolderPlan, redactor: BundleRedactor | None, meter: _Progress, done: int
) -> tuple[int, dict[str, str]]:
    """Add a character's members; returns the bytes done and, by member name inside the folder,
    why a file could not be read (it is left out)."""
    unreadable: dict[str, str] = {}
    for sub in plan.folders:
        z.folder(f"{folder}/{sub}")
    # The journal last: its text digests map through the entry texts the views and shards hold.
    for p in sorted(plan.files, key=lambda p: p.how == "journal"):
        member = f"{folder}/{p.member}"
        try:
            if p.how == "journal":
                with fs.open_regular(p.source):  # before its member is begun: a zip member cannot be taken back
                    pass
                start = done
                if redactor is None:
                    z.add(member, _pieces(p.source))
                else:
                    z.add(member, redact_journal(p.source, redactor, lambda n, s=start: meter.at(s + n)))
            else:
                z.add(member, [_member_bytes(p, redactor)])
        except OSError as exc:
            plan.omitted.append(Omitted(p.member, f"cannot be read: {exc.strerror or exc}"))
            z.records = [r for r in z.records if r.name != member]
            unreadable[p.member] = exc.strerror or str(exc)
        done += p.size
        meter.at(done)
    return done, unreadable


__all__ = [
    "BundleCancelledError",
    "BundleError",
    "BundleRefusedError",
    "BundleResult",
    "DiagnosisInputError",
    "check_output",
    "write_bundle",
]
