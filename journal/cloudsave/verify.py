"""Verify a unit: recompute its fingerprint, hold its files against the manifest, compare its two
layouts, and say what lies beside it (cloudsave-format §1.4, §2, §5). Read-only.

The db rule (§2.2-2.3): the raw SHA-256 of the unit's own ``time_indexed.db`` first (it is itself
the uploader's shadow copy); only if that does not give the recorded fingerprint, the hash of a
shadow copy made here without writing to the file (:func:`journal.cloudsave.dbhash.shadow_sha256`).
When only the db's hash can explain a mismatch, the SQLite version of the copy may explain it: that
alone never calls the unit tampered.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal.cloudsave.anchor import Surroundings, download_backups, read_root_state, tombstoned_names
from journal.cloudsave.canonical import manifest_fingerprint, payload_fingerprint
from journal.cloudsave.dbhash import file_sha256, is_shadowed, shadow_sha256
from journal.cloudsave.layout import CloudInput, CloudUnit, managed_files
from journal.cloudsave.meta import META_FIELDS, UnitFiles, read_json, read_unit_files
from journal.finding import Finding
from journal.fs import is_leftover_temp
from journal.layout import CHAT_DB

SQLITE_NOTE = (
    "only time_indexed.db's hash can explain it: the server hashes a shadow copy of the db, whose bytes depend on "
    "the SQLite version that made it, so the SQLite version may explain it (not a sign of tampering on its own)"
)


@dataclass(slots=True)
class FileHash:
    """One managed file of the unit's memory folder: its size and raw SHA-256 (``shadow``: the
    hash of a shadow copy, when one was made)."""

    name: str
    size: int | None = None
    sha256: str | None = None
    shadow: str | None = None
    regular: bool = True
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "size": self.size,
            "sha256": self.sha256,
            "shadow_sha256": self.shadow,
            "regular": self.regular,
            "problem": self.problem,
        }


def hash_memory(folder: Path | None) -> dict[str, FileHash]:
    """Every managed name of ``folder`` with its size and raw hash (a non-regular one unhashed)."""
    out: dict[str, FileHash] = {}
    for name, mf in managed_files(folder).items():
        h = FileHash(name, regular=mf.regular)
        if mf.regular:
            try:
                h.size = os.stat(mf.path).st_size
                h.sha256 = file_sha256(mf.path)
            except OSError as exc:
                h.problem = f"cannot be read: {exc.strerror or exc}"
        out[name] = h
    return out


def fingerprint_hashes(hashes: dict[str, FileHash], *, shadow: bool = False) -> dict[str, str]:
    """``{name: hex}`` as the fingerprint takes it: regular files only; the db by its shadow hash
    when ``shadow`` and one was made."""
    out = {}
    for name, h in hashes.items():
        value = h.shadow if shadow and h.shadow is not None else h.sha256
        if h.regular and value is not None:
            out[name] = value
    return out


@dataclass(slots=True)
class Fingerprint:
    """``payload_fingerprint`` recorded in ``meta.json`` and recomputed here.

    Attributes:
        state: ``matches``, ``differs`` or ``not recorded`` (no ``meta.json``: a legacy-only unit,
            whose meta the server makes up).
        db_hash: how the db was hashed for the match: ``raw``, ``shadow`` or ``None`` (no db).
        note: why it may differ without tampering (the SQLite version), or that files cannot be named.
    """

    recorded: str | None
    computed: str
    state: str
    db_hash: str | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "recorded": self.recorded,
            "computed": self.computed,
            "state": self.state,
            "db_hash": self.db_hash,
            "note": self.note,
        }


@dataclass(slots=True)
class ManifestCheck:
    """The unit's files held against the cloud-save root's ``manifest.json`` (§1.2)."""

    present: bool
    checked: int = 0
    differs: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    fingerprint: str | None = None
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "present": self.present,
            "checked": self.checked,
            "differs": self.differs,
            "missing": self.missing,
            "extra": self.extra,
            "fingerprint": self.fingerprint,
            "problem": self.problem,
        }


@dataclass(slots=True)
class UnitCheck:
    """Everything verified about one unit."""

    unit: CloudUnit
    files: UnitFiles
    hashes: dict[str, FileHash]
    fingerprint: Fingerprint
    manifest: ManifestCheck
    layouts_same: bool | None = None
    layouts_differing: list[str] = field(default_factory=list)
    surroundings: Surroundings = field(default_factory=Surroundings)
    findings: list[Finding] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The unit's character (:attr:`CloudUnit.name`)."""
        return self.unit.name

    def summary_json(self) -> dict[str, Any]:
        """What ``check --json`` says of a unit (``memory-inspector cloud --json`` says more)."""
        u = self.unit
        meta = self.files.meta.value
        return {
            "layout": u.layout,
            "server_reads": None if u.memory_dir is None else str(u.memory_dir),
            "layouts_same": self.layouts_same,
            "meta": {k: meta[k] for k in META_FIELDS if k in meta} if isinstance(meta, dict) else None,
            "fingerprint": self.fingerprint.to_json(),
            "manifest": self.manifest.to_json(),
            "download_backups": [b.to_json() for b in self.surroundings.backups],
        }


def _unit_paths(unit: CloudUnit) -> list[tuple[str, Path]]:
    """The files of ``unit`` under its cloud-save root, as manifest keys (``/``-separated)."""
    root = unit.cloud_root
    out: list[tuple[str, Path]] = []
    if root is None:
        return out
    for base in (unit.unit_dir, unit.legacy_dir):
        if base is None:
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for f in sorted(filenames):
                p = Path(dirpath) / f
                out.append((p.relative_to(root).as_posix(), p))
    binding = root / "bindings" / f"{unit.name}.json"
    if os.path.lexists(binding):
        out.append((binding.relative_to(root).as_posix(), binding))
    return out


def _unit_prefixes(unit: CloudUnit) -> tuple[str, ...]:
    return (f"characters/{unit.name}/", f"memory/{unit.name}/")


def check_manifest(unit: CloudUnit) -> ManifestCheck:
    """Each file of ``unit`` whose sha256 or size differs from its manifest entry, entries whose
    file is missing, and files the manifest does not list."""
    root = unit.cloud_root
    got = read_json(None if root is None else root / "manifest.json")
    if not got.exists:
        return ManifestCheck(False)
    doc = got.value
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict):
        return ManifestCheck(True, problem=got.problem or "its files are not an object")
    out = ManifestCheck(True)
    fp = doc.get("fingerprint")
    if isinstance(fp, str):
        computed = manifest_fingerprint(doc.get("client_id"), doc.get("sequence_number"), files)
        out.fingerprint = "matches" if computed == fp else "differs"
    on_disk = dict(_unit_paths(unit))
    mine = {k for k in files if k.startswith(_unit_prefixes(unit)) or k == f"bindings/{unit.name}.json"}
    for key in sorted(mine):
        entry = files[key]
        path = on_disk.get(key)
        if path is None:
            out.missing.append(key)
            continue
        out.checked += 1
        try:
            size, digest = os.stat(path).st_size, file_sha256(path)
        except OSError:
            out.differs.append(key)
            continue
        if not isinstance(entry, dict) or entry.get("size") != size or entry.get("sha256") != digest:
            out.differs.append(key)
    out.extra = sorted(k for k in on_disk if k not in files)
    return out


def _fingerprint(
    unit: CloudUnit, files: UnitFiles, hashes: dict[str, FileHash], manifest: ManifestCheck
) -> Fingerprint:
    meta = files.meta.value
    recorded = meta.get("payload_fingerprint") if isinstance(meta, dict) else None
    recorded = recorded if isinstance(recorded, str) else None
    db = hashes.get(CHAT_DB)
    mem = unit.memory_dir
    has_db = db is not None and db.regular and mem is not None and is_shadowed(CHAT_DB, mem / CHAT_DB)
    computed = payload_fingerprint(unit.name, files.profile.value, files.binding.value, fingerprint_hashes(hashes))
    raw_or_none = "raw" if has_db else None
    if recorded is None:
        return Fingerprint(
            None,
            computed,
            "not recorded",
            raw_or_none,
            "no meta.json (a legacy-only unit): the server makes its meta up, so nothing to compare",
        )
    if computed == recorded:
        return Fingerprint(recorded, computed, "matches", raw_or_none)
    if has_db and db is not None and mem is not None:
        db.shadow = shadow_sha256(mem / CHAT_DB)
        if db.shadow is not None and db.shadow != db.sha256:
            shadowed = payload_fingerprint(
                unit.name, files.profile.value, files.binding.value, fingerprint_hashes(hashes, shadow=True)
            )
            if shadowed == recorded:
                return Fingerprint(recorded, shadowed, "matches", "shadow")
    note = None
    if not manifest.present:
        note = "without a manifest.json the files that differ cannot be named"
        if has_db:
            note += "; the unit holds time_indexed.db, whose shadow-copy hash depends on the SQLite version"
    elif has_db and not manifest.differs and not manifest.missing and not manifest.extra:
        note = SQLITE_NOTE
    return Fingerprint(recorded, computed, "differs", "raw" if has_db else None, note)


def _layouts(unit: CloudUnit) -> tuple[bool | None, list[str]]:
    """Whether both layouts hold the same managed files, byte for byte (``None``: one layout)."""
    if unit.sharded_memory is None or unit.legacy_dir is None:
        return None, []
    a, b = hash_memory(unit.sharded_memory), hash_memory(unit.legacy_dir)
    differing = sorted(n for n in set(a) | set(b) if n not in a or n not in b or a[n].sha256 != b[n].sha256)
    return not differing, differing


def verify_unit(unit: CloudUnit, anchor: Path | None) -> UnitCheck:
    """Verify ``unit``; ``anchor``: where its ``state/`` and ``cloudsave_backups/`` may be read."""
    files = read_unit_files(unit)
    hashes = hash_memory(unit.memory_dir)
    manifest = check_manifest(unit)
    check = UnitCheck(unit, files, hashes, _fingerprint(unit, files, hashes, manifest), manifest)
    check.layouts_same, check.layouts_differing = _layouts(unit)
    s = check.surroundings
    s.root_state = read_root_state(anchor)
    s.tombstone = tombstoned_names(unit.cloud_root).get(unit.name)
    s.backups = download_backups(anchor, unit.name)
    check.findings = unit_findings(check)
    return check


def _rel(unit: CloudUnit, path: Path | None) -> str | None:
    if path is None:
        return None
    base = unit.cloud_root or unit.unit_dir or unit.legacy_dir
    try:
        return path.relative_to(base).as_posix() if base is not None else str(path)
    except ValueError:
        return str(path)


def unit_findings(check: UnitCheck) -> list[Finding]:
    """The findings of a verified unit, in a stable order."""
    u, out = check.unit, []
    name = u.name
    for label, read in (
        ("meta.json", check.files.meta),
        ("profile", check.files.profile),
        ("binding", check.files.binding),
    ):
        if read.problem is not None:
            out.append(Finding("cloud.unreadable", "error", f"{name}: {label} {read.problem}", file=_rel(u, read.path)))
    mem = u.memory_dir
    for h in check.hashes.values():
        if not h.regular:
            out.append(
                Finding(
                    "cloud.not_regular",
                    "error",
                    f"{name}: {h.name} is on the allow-list but not a regular file: the server does not "
                    "export it, and a download leaves it out",
                    file=_rel(u, None if mem is None else mem / h.name),
                )
            )
        elif h.problem is not None:
            out.append(
                Finding(
                    "cloud.unreadable",
                    "error",
                    f"{name}: {h.name} {h.problem}",
                    file=_rel(u, None if mem is None else mem / h.name),
                )
            )
    fp = check.fingerprint
    if fp.state == "differs":
        sqlite_only = fp.note == SQLITE_NOTE
        out.append(
            Finding(
                "cloud.fingerprint_differs",
                "info" if sqlite_only else "warning",
                f"{name}: meta.json's payload_fingerprint {fp.recorded} differs from the one recomputed from the "
                f"unit's "
                f"files ({fp.computed})" + (f": {fp.note}" if fp.note else ""),
                file=_rel(u, None if u.unit_dir is None else u.unit_dir / "meta.json"),
            )
        )
    m = check.manifest
    for key in m.differs:
        out.append(
            Finding(
                "cloud.manifest_differs",
                "warning",
                f"{name}: {key}'s sha256 or size differs from its manifest.json entry",
                file=key,
            )
        )
    for key in m.missing:
        out.append(
            Finding(
                "cloud.manifest_missing",
                "warning",
                f"{name}: manifest.json lists {key}, which is not there (a half-written or edited upload)",
                file=key,
            )
        )
    for key in m.extra:
        level = "info" if is_leftover_temp(key.rpartition("/")[2]) else "warning"
        out.append(
            Finding(
                "cloud.manifest_extra",
                level,
                f"{name}: {key} is not listed in manifest.json"
                + (" (a temp file left by an interrupted copy)" if level == "info" else ""),
                file=key,
            )
        )
    if m.fingerprint == "differs":
        out.append(
            Finding(
                "cloud.manifest_differs",
                "warning",
                "manifest.json's fingerprint differs from the one recomputed from its files",
                file="manifest.json",
            )
        )
    if check.layouts_same is False:
        out.append(
            Finding(
                "cloud.layouts_differ",
                "warning",
                f"{name}: characters/{name}/memory/ and memory/{name}/ differ in "
                f"{', '.join(check.layouts_differing)}; the server reads "
                f"{'the sharded unit' if u.memory_dir == u.sharded_memory else 'the legacy folder'}",
                file=f"characters/{name}/memory",
            )
        )
    if check.surroundings.tombstone is not None:
        out.append(
            Finding(
                "cloud.tombstoned",
                "warning",
                f"{name} is tombstoned in catalog/character_tombstones.json: the server hides it and "
                "refuses to download it",
                file="catalog/character_tombstones.json",
            )
        )
    rs = check.surroundings.root_state
    if rs is not None and rs.blocks_writes:
        last = f" (last_migration_result: {rs.last_migration_result})" if rs.last_migration_result else ""
        out.append(
            Finding(
                "cloud.write_fenced",
                "warning",
                f"state/root_state.json's mode is {rs.mode}{last}: cloud-save and view writes are fenced; "
                "an operation is in progress, or one was interrupted (the next start resets a stale mode "
                "to normal, except deferred_init)",
                file="state/root_state.json",
            )
        )
    return out


def verify_input(found: CloudInput) -> list[UnitCheck]:
    """Verify every unit of a cloud-save input."""
    return [verify_unit(u, found.anchor) for u in found.units]
