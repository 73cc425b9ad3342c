"""The view and shard files of a character, as the Views tab shows them, and where an entry sits.

Entry keys are the diagnosis's: ``ref_…`` for a reflection, ``<entity_key>/<entry_id>`` for a
persona entry. A *tree path* is the list of keys and list indices from a file's top level down to
a value, so a widget can select it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journal.codec import loads_exact
from journal.diagnosis import EventInfo
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE
from journal.views import FACTS, PERSONA, REFLECTIONS

TreePath = tuple[Any, ...]

#: Files larger than this are not parsed for the tree (they would freeze the window).
MAX_TREE_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """One JSON file as read for display.

    Attributes:
        rel: path relative to the character folder.
        value: the parsed JSON (``None`` when missing or unreadable).
        error: why it could not be shown, if so.
        missing: the file does not exist.
    """

    rel: str
    value: Any
    error: str | None = None
    missing: bool = False


def list_view_files(char_dir: str | os.PathLike[str]) -> list[str]:
    """The files the Views tab offers: the three views (even when missing), then every shard."""
    folder = Path(char_dir)
    files = [REFLECTIONS, PERSONA, FACTS]
    for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
        try:
            names = sorted(n for n in os.listdir(folder / archive) if n.endswith(".json"))
        except OSError:
            continue
        files.extend(f"{archive}/{n}" for n in names)
    return files


def load_file(char_dir: str | os.PathLike[str], rel: str) -> LoadedFile:
    """Read one file for display; never raises."""
    p = Path(char_dir) / rel
    try:
        if p.is_symlink():
            return LoadedFile(rel, None, "a symbolic link (not followed)")
        size = p.stat().st_size
        if size > MAX_TREE_BYTES:
            return LoadedFile(rel, None, f"{size / (1 << 20):.0f} MiB: too large to show as a tree")
        data = p.read_bytes()
    except FileNotFoundError:
        return LoadedFile(rel, None, "the file does not exist", missing=True)
    except OSError as exc:
        return LoadedFile(rel, None, f"cannot be read: {exc.strerror or exc}")
    try:
        return LoadedFile(rel, loads_exact(data))
    except ValueError as exc:
        return LoadedFile(rel, None, f"not valid JSON: {exc}")


def _index_of_id(items: Any, entry_id: str) -> int | None:
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict) and item.get("id") == entry_id:
                return i
    return None


def split_entry(entry: str) -> tuple[str | None, str]:
    """``(entity_key, entry_id)`` of an entry key (``None`` entity for reflections)."""
    if "/" in entry:
        entity, _, entry_id = entry.partition("/")
        return entity, entry_id
    return None, entry


def locate_entry(rel: str, value: Any, entry: str) -> TreePath | None:
    """The tree path of ``entry`` inside file ``rel`` holding ``value``, if it is there."""
    entity, entry_id = split_entry(entry)
    if rel == PERSONA:
        if entity is None or not isinstance(value, dict):
            return None
        section = value.get(entity)
        i = _index_of_id(section.get("facts") if isinstance(section, dict) else None, entry_id)
        return None if i is None else (entity, "facts", i)
    if rel in (REFLECTIONS, FACTS):
        if entity is not None and rel == REFLECTIONS:
            return None
        i = _index_of_id(value, entry_id)
        return None if i is None else (i,)
    archive = rel.partition("/")[0]
    if (archive == REFLECTION_ARCHIVE and entity is None) or (archive == PERSONA_ARCHIVE and entity is not None):
        i = _index_of_id(value, entry_id)
        return None if i is None else (i,)
    return None


def entry_at(rel: str, value: Any, path: TreePath) -> str | None:
    """The entry key of the entry that contains tree path ``path`` in file ``rel`` (provenance)."""
    try:
        if rel == PERSONA and len(path) >= 3 and path[1] == "facts":
            item = value[path[0]]["facts"][path[2]]
            return f"{path[0]}/{item['id']}" if isinstance(item, dict) and isinstance(item.get("id"), str) else None
        if rel == PERSONA or not path:
            return None
        item = value[path[0]]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        return None
    if rel.startswith(PERSONA_ARCHIVE + "/"):
        return "*/" + item["id"]  # a persona shard entry does not record its section
    return item["id"]


def files_for_event(event: EventInfo, payload: Any) -> list[str]:
    """Where to look for the entry an event touches, best first: its view, then its shard."""
    files: list[str] = []
    if event.entry is None:
        return files
    shard = payload.get("archive_shard_path") if isinstance(payload, dict) else None
    if event.type.startswith("reflection."):
        files.append(REFLECTIONS)
        if isinstance(shard, str) and "/" not in shard:
            files.append(f"{REFLECTION_ARCHIVE}/{shard}")
    elif event.type.startswith("persona."):
        files.append(PERSONA)
        if isinstance(shard, str) and "/" not in shard:
            files.append(f"{PERSONA_ARCHIVE}/{shard}")
    return files


def build_provenance(entries: Iterable[str | None]) -> dict[str, list[int]]:
    """Entry key → indices of the events that touch it, in journal order (``entries``: the entry
    column of the events, one item per event)."""
    index: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        if entry is not None:
            lst = index.get(entry)
            if lst is None:
                index[entry] = [i]
            else:
                lst.append(i)
    return index


def provenance_of(index: dict[str, list[int]], entry: str) -> list[int]:
    """Events touching ``entry``; ``*/id`` (a persona shard entry) matches any section."""
    if entry.startswith("*/"):
        suffix = entry[1:]
        out: list[int] = []
        for key, found in index.items():
            if key.endswith(suffix) and "/" in key:
                out.extend(found)
        return sorted(out)
    return list(index.get(entry, ()))


def search_tree(value: Any, needle: str, limit: int = 10_000) -> list[TreePath]:
    """Tree paths whose key or scalar value contains ``needle`` (case-insensitive), in tree order."""
    needle = needle.lower()
    hits: list[TreePath] = []

    def walk(node: Any, path: TreePath) -> None:
        if len(hits) >= limit:
            return
        items: Sequence[tuple[Any, Any]]
        if isinstance(node, dict):
            items = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            return
        for key, child in items:
            sub = (*path, key)
            key_hit = isinstance(key, str) and needle in key.lower()
            if key_hit or (not isinstance(child, (dict, list)) and needle in str(child).lower()):
                hits.append(sub)
            walk(child, sub)

    walk(value, ())
    return hits
