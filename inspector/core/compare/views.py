"""The view part of a comparison: entries added, removed, changed (field by field) and moved into
archive shards, per entry id. Reflections and persona entries are compared by the dry run's
:func:`journal.dryrun.diff_files` (the one per-entry diff); facts, which no replay touches, the
same way here."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from inspector.core.compare.value import EntryDiff, ViewProblem
from journal import fs
from journal.codec import loads_exact
from journal.dryrun import changed_fields, diff_files, replay_files
from journal.events import SENTINEL_NAME
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.views import FACTS, PERSONA, REFLECTIONS

#: Each view: its file, the top-level type it must have, and its name in the comparison.
_VIEWS = ((REFLECTIONS, list, "reflections"), (PERSONA, dict, "persona"), (FACTS, list, "facts"))


def _problem(char_dir: Path, name: str, top: type) -> str | None:
    """Why a view cannot be compared (unreadable, not JSON, wrong top level), or ``None``."""
    try:
        with fs.open_regular(char_dir / name) as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    try:
        obj = loads_exact(data)
    except ValueError as exc:
        return f"not valid JSON: {exc}"
    if not isinstance(obj, top):
        return f"the top level is a {type(obj).__name__}, not a {top.__name__}"
    return None


def _facts(char_dir: Path) -> dict[str, Any]:
    try:
        with fs.open_regular(char_dir / FACTS) as fh:
            obj = loads_exact(fh.read())
    except (OSError, ValueError):
        return {}
    out: dict[str, Any] = {}
    for e in obj if isinstance(obj, list) else []:
        if isinstance(e, dict) and isinstance(e.get("id"), str):
            out.setdefault(e["id"], e)
    return out


def compare_views(
    a_dir: str | os.PathLike[str], b_dir: str | os.PathLike[str]
) -> tuple[list[EntryDiff], list[ViewProblem]]:
    """Entries that differ between two character folders' views (only read), and the views that
    cannot be compared."""
    a, b = Path(a_dir), Path(b_dir)
    problems: list[ViewProblem] = []
    skip: set[str] = set()
    for name, top, label in _VIEWS:
        for side, folder in (("a", a), ("b", b)):
            why = _problem(folder, name, top)
            if why is not None:
                problems.append(ViewProblem(side, name, why))
                skip.add(label)
    before = {k: v for k, v in replay_files(a).items() if k != SENTINEL_NAME}
    after = {k: v for k, v in replay_files(b).items() if k != SENTINEL_NAME}
    folder_diff = diff_files(before, after)
    # Where an entry went: the shard of B that gained it (and of A, for one that came back).
    gained_b = {(s.file.split("/")[0], s.entry_id): s.file for s in folder_diff.shard_entries_added}
    gained_a = {(s.file.split("/")[0], s.entry_id): s.file for s in diff_files(after, before).shard_entries_added}
    out: list[EntryDiff] = []
    for ch in folder_diff.entries:
        label = "reflections" if ch.file == REFLECTIONS else "persona"
        if label in skip:
            continue
        archive = REFLECTION_ARCHIVE if label == "reflections" else PERSONA_ARCHIVE
        bare = ch.entry.split("/", 1)[-1] if label == "persona" else ch.entry
        if ch.kind == "removed" and (archive, bare) in gained_b:
            out.append(EntryDiff(label, ch.entry, "archived", shard=gained_b[(archive, bare)]))
        elif ch.kind == "added" and (archive, bare) in gained_a:
            out.append(EntryDiff(label, ch.entry, "unarchived", shard=gained_a[(archive, bare)]))
        else:
            out.append(EntryDiff(label, ch.entry, ch.kind, ch.fields))
    if "facts" not in skip:
        old, new = _facts(a), _facts(b)
        for key in sorted(set(old) | set(new)):
            if key not in new:
                out.append(EntryDiff("facts", key, "removed"))
            elif key not in old:
                out.append(EntryDiff("facts", key, "added"))
            elif old[key] != new[key]:
                out.append(EntryDiff("facts", key, "changed", changed_fields(old[key], new[key])))
    return out, problems
