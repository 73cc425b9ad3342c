"""The views and shards of one character folder, read once and never written, and the in-memory
store the diagnosis runs replay handlers against.

Handlers are never given the real folder: they run against :class:`ProjectionStore`, a
:class:`~journal.stores.Store` that serves, for the event being run, only the view entries that
event can touch (every handler selects its target by id), and keeps every write in memory. That
gives the same answers as :class:`~journal.stores.MemoryStore` without rescanning whole views
for each of thousands of checks.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journal.codec import loads_exact
from journal.diagnosis.findings import Findings
from journal.errors import ShardCorruptError, ViewCorruptError
from journal.events import SENTINEL_NAME
from journal.fs import is_leftover_temp
from journal.inputs import within
from journal.shards import (
    PERSONA_ARCHIVE,
    REFLECTION_ARCHIVE,
    is_shard_name,
    load_shard,
    shard_entry_ids,
    validate_shard_name,
)
from journal.views import FACTS, PERSONA, REFLECTIONS, SentinelRead, copy_json, load_view, read_sentinel


@dataclass(frozen=True, slots=True)
class Probe:
    """``kind``: ``missing`` | ``file`` | ``dir`` | ``refused`` (not read, for safety) | ``error``."""

    kind: str
    reason: str = ""


def probe_path(path: Path, root_real: str) -> Probe:
    """What ``path`` is, without following a link that leaves the memory root or opening a FIFO."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Probe("missing")
    except OSError as exc:
        return Probe("error", exc.strerror or str(exc))
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        if not within(target, root_real):
            return Probe("refused", "a symbolic link pointing outside the memory root; not followed")
        try:
            st = os.stat(path)
        except OSError:
            return Probe("refused", "a dangling symbolic link; not followed")
    if stat.S_ISREG(st.st_mode):
        return Probe("file")
    if stat.S_ISDIR(st.st_mode):
        return Probe("dir")
    return Probe("refused", "not a regular file (a FIFO, socket or device); not read")


@dataclass(slots=True)
class _View:
    name: str
    expected: type
    exists: bool = False
    value: Any = None
    error: str | None = None


def _hashable(value: object) -> bool:
    return isinstance(value, Hashable) and not isinstance(value, (list, dict))


class Folder:
    """The views and shards of one character folder, read once, never written."""

    def __init__(self, char_dir: Path, root_real: str, findings: Findings) -> None:
        self.dir = char_dir
        self.root_real = root_real
        self.findings = findings
        self.views: dict[str, _View] = {}
        self.reflection_ids: dict[Hashable, list[dict[str, Any]]] = {}
        self.persona_ids: dict[tuple[str, Hashable], list[dict[str, Any]]] = {}
        self._shards: dict[tuple[str, str], list[Any] | ShardCorruptError | None] = {}
        self._shard_ids: dict[tuple[str, str], frozenset[Hashable]] = {}
        self.archive_dirs: dict[str, bool] = {}

    # views

    def load_views(self) -> None:
        for name, expected in ((REFLECTIONS, list), (PERSONA, dict), (FACTS, list)):
            view = self.views[name] = _View(name, expected)
            probe = probe_path(self.dir / name, self.root_real)
            if probe.kind == "missing":
                continue
            if probe.kind == "refused":
                self.findings.add("input.refused", "warning", f"{name} is {probe.reason}", file=name)
                continue
            view.exists = True
            try:
                if probe.kind != "file":
                    raise IsADirectoryError(21, "Is a directory")
                view.value = load_view(self.dir / name, expected)
            except OSError as exc:
                view.error = f"{name} cannot be read: {exc.strerror or exc}"
            except ViewCorruptError as exc:
                view.error = str(exc)  # the reconciler's own words
            if view.error is not None:
                self.findings.add("view.corrupt", "error", view.error, file=name)
        refl = self.views[REFLECTIONS].value
        for e in refl if isinstance(refl, list) else []:
            if isinstance(e, dict) and _hashable(e.get("id")):
                self.reflection_ids.setdefault(e.get("id"), []).append(e)
        persona = self.views[PERSONA].value
        for key, section in persona.items() if isinstance(persona, dict) else ():
            facts = section.get("facts") if isinstance(section, dict) else None
            for e in facts if isinstance(facts, list) else []:
                if isinstance(e, dict) and _hashable(e.get("id")):
                    self.persona_ids.setdefault((key, e.get("id")), []).append(e)

    def view(self, name: str, expected: type) -> _View:
        view = self.views.get(name)
        if view is None:  # a view the diagnosis does not preload: read it now
            view = _View(name, expected)
            probe = probe_path(self.dir / name, self.root_real)
            if probe.kind in ("file", "dir", "error"):
                view.exists = True
                try:
                    view.value = loads_exact((self.dir / name).read_bytes())
                except (OSError, ValueError) as exc:
                    view.error = f"{name} cannot be read: {exc}"
            self.views[name] = view
        return view

    def has_entry(self, view_name: str, entity_key: str | None, entry_id: Hashable) -> bool | None:
        """Whether the view holds the entry (``None``: the view is unreadable, so unknown)."""
        view = self.views.get(view_name)
        if view is None or view.error is not None:
            return None
        if view_name == REFLECTIONS:
            return entry_id in self.reflection_ids
        return entity_key is not None and (entity_key, entry_id) in self.persona_ids

    # shards

    def scan_archives(self) -> None:
        """Look at every file of both shard folders: corrupt shards, bad names, temp litter."""
        for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
            folder = self.dir / archive
            probe = probe_path(folder, self.root_real)
            self.archive_dirs[archive] = probe.kind == "dir"
            if probe.kind == "refused":
                self.findings.add("input.refused", "warning", f"{archive}/ is {probe.reason}", file=archive)
                continue
            if probe.kind == "error" or probe.kind == "file":
                self.findings.add("shard.corrupt", "error", f"{archive} is not a readable folder", file=archive)
                continue
            if probe.kind != "dir":
                continue
            try:
                names = sorted(os.listdir(folder))
            except OSError as exc:
                self.findings.add(
                    "shard.corrupt", "error", f"{archive}/ cannot be listed: {exc.strerror or exc}", file=archive
                )
                continue
            for name in names:
                rel = f"{archive}/{name}"
                if is_leftover_temp(name):
                    self.findings.add(
                        "tempfile.leftover", "info", f"{rel} is left over from a crashed atomic write", file=rel
                    )
                elif name == ".migrated_from_flat":
                    continue
                elif is_shard_name(name):
                    result = self.shard(archive, name)
                    if isinstance(result, ShardCorruptError):
                        self.findings.add("shard.corrupt", "error", str(result), file=rel)
                else:
                    self.findings.add(
                        "shard.bad_name",
                        "warning",
                        f"{rel} does not match YYYY-MM-DD_<8 hex>.json: every shard reader ignores it",
                        file=rel,
                    )

    def shard(self, archive: str, name: str) -> list[Any] | ShardCorruptError | None:
        """A valid shard's entries, ``None`` when absent, or the corruption (not raised)."""
        key = (archive, name)
        if key in self._shards:
            return self._shards[key]
        result: list[Any] | ShardCorruptError | None
        path = self.dir / archive / name
        probe = probe_path(path, self.root_real)
        folder = probe_path(self.dir / archive, self.root_real)
        if folder.kind == "refused" or probe.kind in ("missing", "refused"):
            result = None
            if probe.kind == "refused" and folder.kind == "dir":
                self.findings.add(
                    "input.refused", "warning", f"{archive}/{name} is {probe.reason}", file=f"{archive}/{name}"
                )
        else:
            try:
                if probe.kind != "file":
                    raise IsADirectoryError(21, "Is a directory")
                result = load_shard(path)  # the reconciler's own reader and words
            except OSError as exc:
                result = ShardCorruptError(f"shard {archive}/{name} cannot be read: {exc.strerror or exc}")
            except ShardCorruptError as exc:
                result = exc
        self._shards[key] = result
        return result

    def shard_holds(self, archive: str, name: object, entry_id: Hashable) -> bool | None:
        """Whether shard ``name`` holds ``entry_id``: False when it is absent or the name is
        invalid (nothing can be there), ``None`` when it is corrupt (unknown)."""
        if not isinstance(name, str) or not is_shard_name(name):
            return False
        result = self.shard(archive, name)
        if isinstance(result, ShardCorruptError):
            return None
        if result is None:
            return False
        key = (archive, name)
        ids = self._shard_ids.get(key)
        if ids is None:
            ids = self._shard_ids[key] = frozenset(shard_entry_ids(result))
        return entry_id in ids


class ProjectionStore:
    """A :class:`~journal.handlers.Store` over a folder's views that shows each event only the
    entries it can touch, and keeps every write in memory (it never writes to disk).

    Every replay handler selects its target by id: the reflection with ``reflection_id``, or
    the persona entry ``entity_key``/``entry_id`` (memory-format §3.5). Before running a handler,
    :meth:`focus` is given the payload; :meth:`load_view` then returns a view holding only the
    matching entries (shallow copies), which costs O(1) instead of a scan of the whole view.
    What the handler writes is kept per target, so a sequence of events sees the effect of the
    ones before it, exactly as on disk. Corrupt views and shards raise as the files would.

    Attributes:
        written: names of the views / ``archive/basename`` shards written since :meth:`focus`.
    """

    def __init__(self, folder: Folder) -> None:
        self.char_dir = folder.dir
        self._folder = folder
        self._overlay: dict[tuple[Any, ...], Any] = {}
        self._shards: dict[tuple[str, str], list[Any]] = {}
        self._saved: set[str] = set()
        self._target: dict[str, tuple[Any, ...]] = {}
        self.written: set[str] = set()

    def focus(self, payload: Any) -> None:
        """Aim at the entries an event with ``payload`` can touch."""
        p = payload if isinstance(payload, dict) else {}
        rid = p.get("reflection_id")
        key, eid = p.get("entity_key"), p.get("entry_id")
        self._target = {
            REFLECTIONS: (REFLECTIONS, rid) if _hashable(rid) else (REFLECTIONS, object()),
            PERSONA: (PERSONA, key, eid) if _hashable(key) and _hashable(eid) else (PERSONA, object()),
        }
        self.written = set()

    def view_exists(self, name: str) -> bool:
        return name in self._saved or self._folder.view(name, object).exists

    def load_view(self, name: str, expected: type) -> Any:
        view = self._folder.view(name, expected)
        if view.error is not None:
            raise ViewCorruptError(view.error)
        if view.exists and not isinstance(view.value, expected):
            raise ViewCorruptError(
                f"{name} has a top-level {type(view.value).__name__}, expected a {expected.__name__}"
            )
        target = self._target.get(name, (name,))
        if target in self._overlay:
            return self._overlay[target]
        mini = self._project(name, expected, view.value if view.exists else expected(), target)
        self._overlay[target] = mini
        return mini

    def _project(self, name: str, expected: type, value: Any, target: tuple[Any, ...]) -> Any:
        if name == REFLECTIONS and len(target) == 2:
            matches = self._folder.reflection_ids.get(target[1], []) if _hashable(target[1]) else []
            return [dict(e) for e in matches]
        if name == PERSONA and len(target) == 3:
            key, eid = target[1], target[2]
            if not isinstance(key, str) or key not in value:
                return {}
            section = value[key]
            if not isinstance(section, dict):
                return {key: section}
            if not isinstance(section.get("facts"), list):
                return {key: dict(section)}
            matches = self._folder.persona_ids.get((key, eid), [])
            return {key: {**section, "facts": [dict(e) for e in matches]}}
        if name == PERSONA:
            return {}
        if name == REFLECTIONS:
            return []
        return copy_json(value)

    def save_view(self, name: str, obj: Any) -> None:
        self._overlay[self._target.get(name, (name,))] = obj
        self._saved.add(name)
        self.written.add(name)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        validate_shard_name(basename)
        key = (archive, basename)
        if key in self._shards:
            return self._shards[key]
        result = self._folder.shard(archive, basename)
        if isinstance(result, ShardCorruptError):
            raise ShardCorruptError(str(result))
        return None if result is None else list(result)

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        validate_shard_name(basename)
        self._shards[(archive, basename)] = entries
        self.written.add(f"{archive}/{basename}")

    def read_sentinel(self) -> SentinelRead:
        return read_sentinel(self.char_dir)

    def write_sentinel(self, event_id: str | None) -> None:
        self.written.add(SENTINEL_NAME)
