"""A cloud save and a download preview in words and as JSON: the one renderer ``memory-inspector
cloud`` prints and the window's Compare with ▸ Cloud save… shows (Qt-free).

What the text for people shows of a value is the CLI's one privacy rule
(:func:`inspector.core.output.value_text`): a profile's text only as its kind and size. JSON has
the values; under redaction the profile's text is hidden as every text is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.output import value_text
from inspector.core.redaction import hide_strings
from inspector.core.server_start_text import for_character
from inspector.core.text import count, one_line
from journal.cloudsave import DownloadPreview, OpenedCloud, UnitCheck, open_cloud, preview_download, verify_input
from journal.cloudsave.meta import meta_summary
from journal.diagnosis.path import NOT_A_MEMORY_FOLDER
from journal.diagnosis.values import health_of
from journal.errors import DiagnosisInputError
from journal.finding import Finding
from journal.layout import CHAT_DB

SCHEMA = 1
KINDS = {
    "cloudsave": "cloud-save root",
    "unit": "cloud-save unit",
    "legacy": "legacy cloud-save folder",
    "backup": "download backup",
}


def download_findings(preview: DownloadPreview) -> list[Finding]:
    """The download's own findings: each deletion (``time_indexed.db``'s an error, with its rows)."""
    out = []
    plan = preview.plan
    for name in plan.of("delete"):
        if name == CHAT_DB:
            rows = (
                f"{plan.chat_rows_lost:,} chat rows"
                if plan.chat_rows_lost is not None
                else f"its chat rows (not counted: {plan.chat_problem})"
            )
            out.append(
                Finding(
                    "download.deletes_chat",
                    "error",
                    f"the download deletes time_indexed.db: {rows} are lost (the unit holds no db)",
                    file=name,
                )
            )
        else:
            out.append(
                Finding(
                    "download.deletes", "warning", f"the download deletes {name}: the unit does not hold it", file=name
                )
            )
    return out


def unit_json(check: UnitCheck, *, redact: bool = False) -> dict[str, Any]:
    u, files = check.unit, check.files
    profile = files.profile.value
    s = check.surroundings
    return {
        "name": u.name,
        "layout": u.layout,
        "unit": None if u.unit_dir is None else str(u.unit_dir),
        "legacy": None if u.legacy_dir is None else str(u.legacy_dir),
        "server_reads": None if u.memory_dir is None else str(u.memory_dir),
        "layouts_same": check.layouts_same,
        "layouts_differing": check.layouts_differing,
        "meta": meta_summary(files.meta.value) if files.meta.exists else None,
        "profile": hide_strings(profile, "text") if redact else profile,
        "profile_source": files.profile_source or None,
        "binding": files.binding.value,
        "fingerprint": check.fingerprint.to_json(),
        "manifest": check.manifest.to_json(),
        "files": [h.to_json() for h in check.hashes.values()],
        "root_state": None
        if s.root_state is None
        else {
            "path": str(s.root_state.path),
            "mode": s.root_state.mode,
            "last_migration_result": s.root_state.last_migration_result,
            "blocks_writes": s.root_state.blocks_writes,
            "problem": s.root_state.problem,
        },
        "tombstoned": s.tombstone is not None,
        "download_backups": [b.to_json() for b in s.backups],
        "server_start": NOT_A_MEMORY_FOLDER,
        "findings": [f.to_json() for f in check.findings],
    }


def preview_json(preview: DownloadPreview, local: str) -> dict[str, Any]:
    plan, after = preview.plan, preview.after
    return {
        "local": local,
        "changes": plan.changes_something,
        "files": [f.to_json() for f in plan.files],
        "replaces": plan.of("replace"),
        "creates": plan.of("create"),
        "deletes": plan.of("delete"),
        "unchanged": plan.of("same"),
        "stays": plan.stays,
        "chat_rows_lost": plan.chat_rows_lost,
        "profile": plan.profile,
        "characters_file": plan.characters_file,
        "binding": "not compared",
        "server_start_after": None if after.server_start is None else after.server_start.to_json(),
        "view_replaced": [f.to_json() for f in preview.replaced],
        "findings": [f.to_json() for f in download_findings(preview)],
        "notes": preview.notes,
    }


def document(
    opened: OpenedCloud,
    checks: list[UnitCheck],
    preview: DownloadPreview | None = None,
    local: str | None = None,
    *,
    redact: bool = False,
) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "path": opened.path,
        "kind": opened.found.kind,
        "anchor": None if opened.found.anchor is None else str(opened.found.anchor),
        "refused": [f.to_json() for f in opened.refused],
        "units": [unit_json(c, redact=redact) for c in checks],
        "download": None if preview is None else preview_json(preview, local or ""),
    }


def _finding_line(f: Finding) -> str:
    return f"    {f.severity:<7}  {f.code:<26} {one_line(f.message)}"


def unit_lines(check: UnitCheck) -> list[str]:
    """One unit, for people."""
    u, files, fp = check.unit, check.files, check.fingerprint
    lines = [f"  character {one_line(u.name)}  ({u.layout})"]
    if u.memory_dir is not None:
        lines.append(f"    server reads: {u.memory_dir}")
    if check.layouts_same is not None:
        same = "the same bytes" if check.layouts_same else "different bytes: " + ", ".join(check.layouts_differing)
        lines.append(f"    both layouts hold {same}")
    meta = meta_summary(files.meta.value)
    if meta:
        shown = ("updated_at_utc", "sequence_number", "source_client_id", "asset_state")
        lines.append("    meta.json: " + ", ".join(f"{k} {one_line(str(meta.get(k)))}" for k in shown if k in meta))
    elif not files.meta.exists:
        lines.append("    meta.json: none (legacy-only unit)")
    prof = files.profile.value
    if isinstance(prof, dict):
        keys = ", ".join(f"{one_line(k)} {value_text(v)}" for k, v in list(prof.items())[:6])
        more = f", … {count(len(prof) - 6, 'more key')}" if len(prof) > 6 else ""
        lines.append(f"    profile ({files.profile_source}): {keys}{more}")
    bind = files.binding.value
    if isinstance(bind, dict):
        keys = ("model_type", "asset_source", "asset_state")
        lines.append("    binding: " + ", ".join(f"{k} {one_line(str(bind.get(k, '')))}" for k in keys))
    lines.append(
        f"    fingerprint: {fp.state}"
        + (f" ({fp.db_hash} db hash)" if fp.db_hash else "")
        + (f": {fp.note}" if fp.note else "")
    )
    m = check.manifest
    if not m.present:
        lines.append("    manifest.json: none: the files that differ cannot be named")
    else:
        bad = len(m.differs) + len(m.missing) + len(m.extra)
        lines.append(
            f"    manifest.json: {count(m.checked, 'file')} checked, "
            + ("all as listed" if not bad else f"{bad} not as listed")
        )
    for h in check.hashes.values():
        digest = (h.sha256 or "")[:16]
        lines.append(f"      {h.name:<32} {'' if h.size is None else f'{h.size:>10,}'}  {digest}")
    s = check.surroundings
    if s.root_state is not None:
        lines.append(
            f"    root_state.json: mode {s.root_state.mode}"
            + (
                f", last_migration_result {s.root_state.last_migration_result}"
                if s.root_state.last_migration_result
                else ""
            )
        )
    for b in s.backups:
        lines.append(f"    download backup {b.stamp}: {b.path}")
    lines.append(f"    memory server's next start: {NOT_A_MEMORY_FOLDER}")
    if check.findings:
        lines.append("    findings:")
        lines.extend(_finding_line(f) for f in check.findings)
    return lines


def preview_lines(preview: DownloadPreview, local: str) -> list[str]:
    """What a download does to ``local``, for people."""
    plan = preview.plan
    lines = [f"  a download into {local}:"]
    for action, label in (
        ("replace", "replaces"),
        ("create", "creates"),
        ("delete", "deletes"),
        ("same", "leaves unchanged"),
    ):
        names = plan.of(action)
        if names:
            lines.append(f"    {label}: {', '.join(names)}")
    if not plan.changes_something:
        lines.append("    changes nothing: every memory file is the same on both sides")
    lines.append(f"    stays: {', '.join(plan.stays) or 'nothing else'} (a download never touches them)")
    where = f" ({plan.characters_file})" if plan.characters_file else " (no characters.json found or given)"
    lines.append(f"    profile: {plan.profile}{where}; binding: not compared (a memory folder does not hold it)")
    lines.append("    memory file hashes (local → cloud):")
    for f in plan.files:
        lines.append(
            f"      {f.name:<32} {(f.local_sha256 or '-')[:16]:<16} → {(f.cloud_sha256 or '-')[:16]:<16} {f.action}"
        )
    found = download_findings(preview)
    if found:
        lines.append("    findings:")
        lines.extend(_finding_line(f) for f in found)
    lines.append("  after the download:")
    lines.extend("    " + ln for ln in for_character(preview.after, "cli").plain())
    for f in preview.replaced:
        lines.append(_finding_line(f))
    for note in preview.notes:
        lines.append(f"    note: {note}")
    return lines


def worst(checks: list[UnitCheck]) -> str:
    return health_of(f.severity for c in checks for f in c.findings)


@dataclass(frozen=True, slots=True)
class CloudPreview:
    """What the window's Compare with ▸ Cloud save… shows: the unit and the download's lines."""

    unit: str
    local: str
    character: str
    changes: bool
    lines: tuple[str, ...]


def preview_lines_for(
    unit_path: str, local_dir: str, character: str, characters_file: str | None = None
) -> CloudPreview:
    """Open ``unit_path`` (any cloud-save layout), pick the unit named ``character`` (or its only
    one), and say what downloading it into ``local_dir`` does, in :func:`unit_lines` and
    :func:`preview_lines`' words. Both are only read.

    Raises:
        DiagnosisInputError: the unit cannot be opened, or holds no such character.
    """
    with open_cloud(unit_path) as opened:
        checks = verify_input(opened.found)
        picked = [c for c in checks if c.unit.name == character] or (checks if len(checks) == 1 else [])
        if not picked:
            names = ", ".join(repr(c.unit.name) for c in checks[:5]) or "none"
            raise DiagnosisInputError(f"{unit_path}: no unit named {character!r} (units: {names})")
        [check] = picked
        preview = preview_download(check, Path(local_dir), name=character, characters_file=characters_file)
        lines = [f"{KINDS.get(opened.found.kind, opened.found.kind)}: {unit_path}", *unit_lines(check)]
        lines.extend(preview_lines(preview, local_dir))
    return CloudPreview(unit_path, local_dir, character, preview.plan.changes_something, tuple(lines))
