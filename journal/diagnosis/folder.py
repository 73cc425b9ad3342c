"""The views and shards of one character folder, read once and never written, and the in-memory
store the diagnosis runs replay handlers against.

Views, archive folders and shards are reached by replay's own rule
(:class:`~journal.stores.Confinement`): a link leading out of the character folder is not
followed, and the handlers meet the error replay's store raises for it. A view or shard that
cannot be read (a folder, no permission) gives the handlers the ``OSError`` replay meets.

Handlers are never given the real folder: they run against :class:`ProjectionStore`, a
:class:`~journal.stores.Store` that serves, for the event being run, only the view entries that
event can touch (every handler selects its target by id), and keeps every write in memory. That
gives the same answers as :class:`~journal.stores.MemoryStore` without rescanning whole views
for each of thousands of checks.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journal.codec import dumps_view, same_json
from journal.diagnosis.findings import Findings
from journal.errors import ShardCorruptError, ViewCorruptError
from journal.events import SENTINEL_NAME
from journal.fs import is_inside, is_leftover_temp
from journal.layout import MIGRATION_MARKER
from journal.shards import (
    PERSONA_ARCHIVE,
    REFLECTION_ARCHIVE,
    is_shard_name,
    load_shard,
    shard_entry_ids,
    validate_shard_name,
)
from journal.stores import Confinement
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
        if not is_inside(target, root_real):
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


#: What a refused link is, in a finding.
_LEAVES = "a symbolic link leading out of the character folder; not followed (replay refuses it too)"


@dataclass(slots=True)
class _View:
    """One view as read. ``error``: the finding's words; ``failure``: what replay's store raises
    when a handler loads it; ``refused``: a link leading out of the folder (every access raises)."""

    name: str
    expected: type
    exists: bool = False
    value: Any = None
    error: str | None = None
    failure: Exception | None = None
    refused: bool = False


def fresh(exc: Exception) -> Exception:
    """A new exception equal to ``exc``, to raise again (raising one object twice chains tracebacks)."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return OSError(exc.errno, exc.strerror, exc.filename)  # the same OSError subclass
    return type(exc)(*exc.args)


def _hashable(value: object) -> bool:
    return isinstance(value, Hashable) and not isinstance(value, (list, dict))


class Folder:
    """The views and shards of one character folder, read once, never written."""

    def __init__(
        self, char_dir: Path, root_real: str, findings: Findings, unreadable: Mapping[str, str] | None = None
    ) -> None:
        self.dir = char_dir
        self.root_real = root_real
        self.findings = findings
        #: view or shard (``<archive>/<name>``) → why the original could not read it (a support
        #: bundle's, which holds no such file)
        self.unreadable: Mapping[str, str] = unreadable or {}
        self.confined = Confinement(char_dir)
        self.views: dict[str, _View] = {}
        self.reflection_ids: dict[Hashable, list[dict[str, Any]]] = {}
        self.persona_ids: dict[tuple[str, Hashable], list[dict[str, Any]]] = {}
        self._shards: dict[tuple[str, str], list[Any] | ShardCorruptError | None] = {}
        self._shard_failures: dict[tuple[str, str], Exception] = {}
        self._refused_shards: set[tuple[str, str]] = set()
        self._shard_ids: dict[tuple[str, str], frozenset[Hashable]] = {}
        self.archive_dirs: dict[str, bool] = {}

    # views

    def load_views(self) -> None:
        for name, expected in ((REFLECTIONS, list), (PERSONA, dict), (FACTS, list)):
            self.views[name] = self._read_view(name, expected, report=True)
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

    def _read_view(self, name: str, expected: type, *, report: bool) -> _View:
        """Read one view as replay's store would; ``report``: add its findings."""
        view = _View(name, expected)
        try:
            path = self.confined.view_path(name)
        except ViewCorruptError as exc:
            view.exists = view.refused = True
            view.error, view.failure = str(exc), exc
            if report:
                self.findings.add("input.refused", "warning", f"{name} is {_LEAVES}", file=name)
            return view
        probe = probe_path(path, self.root_real)
        why = self.unreadable.get(name)
        if probe.kind == "missing" and why is None:
            return view
        if probe.kind == "refused":
            if report:
                self.findings.add("input.refused", "warning", f"{name} is {probe.reason}", file=name)
            return view
        view.exists = True
        try:
            if why is not None:  # as the original's read failed (recorded by the bundle, which holds no view)
                raise PermissionError(errno.EACCES, f"{why} (in the original, as the bundle's manifest records)")
            view.value = load_view(path, expected)  # a folder or an unreadable file: replay's OSError
        except OSError as exc:
            view.error, view.failure = f"{name} cannot be read: {exc.strerror or exc}", exc
        except ViewCorruptError as exc:
            view.error, view.failure = str(exc), exc  # the reconciler's own words
        if report and view.error is not None:
            self.findings.add("view.corrupt", "error", view.error, file=name)
        return view

    def view(self, name: str, expected: type) -> _View:
        view = self.views.get(name)
        if view is None:  # a view the diagnosis does not preload: read it now
            view = self.views[name] = self._read_view(name, expected, report=False)
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
            try:
                folder = self.confined.archive_path(archive)
            except ShardCorruptError:
                self.archive_dirs[archive] = False
                self.findings.add("input.refused", "warning", f"{archive}/ is {_LEAVES}", file=archive)
                continue
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
                # with the shards a bundle records as unreadable (it holds none of them)
                names = sorted({*os.listdir(folder), *self._unreadable_in(archive)})
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
                elif name == MIGRATION_MARKER:
                    continue
                elif is_shard_name(name):
                    result = self.shard(archive, name)
                    if isinstance(result, ShardCorruptError) and (archive, name) not in self._refused_shards:
                        self.findings.add("shard.corrupt", "error", str(result), file=rel)
                else:
                    self.findings.add(
                        "shard.bad_name",
                        "warning",
                        f"{rel} does not match YYYY-MM-DD_<8 hex>.json: every shard reader ignores it",
                        file=rel,
                    )

    def shard(self, archive: str, name: str) -> list[Any] | ShardCorruptError | None:
        """A valid shard's entries, ``None`` when absent, or why it cannot be used (not raised):
        corrupt, unreadable, or refused (a link leading out of the character folder: its
        contents are unknown)."""
        key = (archive, name)
        if key in self._shards:
            return self._shards[key]
        result: list[Any] | ShardCorruptError | None = None
        try:
            path = self.confined.shard_path(archive, name)
        except ShardCorruptError as exc:
            result = exc
            self._shard_failures[key] = exc
            self._refused_shards.add(key)
            try:
                self.confined.archive_path(archive)
            except ShardCorruptError:
                pass  # the folder is refused: its own finding says so
            else:
                rel = f"{archive}/{name}"
                self.findings.add("input.refused", "warning", f"{rel} is {_LEAVES}", file=rel)
        else:
            probe = probe_path(path, self.root_real)
            why = self.unreadable.get(f"{archive}/{name}")
            if probe.kind == "refused":
                if probe_path(path.parent, self.root_real).kind == "dir":
                    self.findings.add(
                        "input.refused", "warning", f"{archive}/{name} is {probe.reason}", file=f"{archive}/{name}"
                    )
            elif probe.kind != "missing" or why is not None:
                try:
                    if why is not None:  # as the original's read failed (a bundle holds no such shard)
                        raise PermissionError(errno.EACCES, f"{why} (in the original, as the bundle records)")
                    result = load_shard(path)  # the reconciler's own reader and words
                except OSError as exc:  # a folder, no permission: replay's handler meets the OSError
                    result = ShardCorruptError(f"shard {archive}/{name} cannot be read: {exc.strerror or exc}")
                    self._shard_failures[key] = exc
                except ShardCorruptError as exc:
                    result = exc
        self._shards[key] = result
        return result

    def _unreadable_in(self, archive: str) -> list[str]:
        """The shard names of ``archive`` recorded as unreadable (:attr:`unreadable`)."""
        prefix = f"{archive}/"
        return [n[len(prefix) :] for n in self.unreadable if n.startswith(prefix) and "/" not in n[len(prefix) :]]

    def shard_failure(self, archive: str, name: str) -> Exception | None:
        """What replay's store raises when a handler loads shard ``name`` (``None``: it loads)."""
        result = self.shard(archive, name)
        if not isinstance(result, ShardCorruptError):
            return None
        return self._shard_failures.get((archive, name), result)

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


class ProjectionError(Exception):
    """What the handlers left in a :class:`ProjectionStore` cannot be put back into the whole view
    exactly (a shape no production handler leaves): predict with a run on a copy instead."""


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

    def __init__(self, folder: Folder, *, replaced: dict[str, Any] | None = None) -> None:
        """``replaced``: views that handlers meet as these values instead of the files (the
        server model's persona ensure, :func:`journal.serverrules.ensure_persona`)."""
        self.char_dir = folder.dir
        self._folder = folder
        self._replaced = dict(replaced or {})
        self._overlay: dict[tuple[Any, ...], Any] = {}
        self._shards: dict[tuple[str, str], list[Any]] = {}
        self._saved: set[str] = set()
        self._saved_targets: dict[tuple[Any, ...], None] = {}
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
        if name in self._saved or name in self._replaced:
            return True
        view = self._folder.view(name, object)
        if view.refused and view.failure is not None:
            raise fresh(view.failure)
        return view.exists

    def load_view(self, name: str, expected: type) -> Any:
        target = self._target.get(name, (name,))
        if name in self._replaced:
            if target not in self._overlay:
                self._overlay[target] = self._project(name, expected, copy_json(self._replaced[name]), target, False)
            return self._overlay[target]
        view = self._folder.view(name, expected)
        if view.failure is not None:
            raise fresh(view.failure)
        if view.exists and not isinstance(view.value, expected):
            raise ViewCorruptError(
                f"{name} has a top-level {type(view.value).__name__}, expected a {expected.__name__}"
            )
        if target in self._overlay:
            return self._overlay[target]
        mini = self._project(name, expected, view.value if view.exists else expected(), target)
        self._overlay[target] = mini
        return mini

    def _project(self, name: str, expected: type, value: Any, target: tuple[Any, ...], indexed: bool = True) -> Any:
        """The part of ``value`` the target can touch (``indexed``: ``value`` is the file the
        folder's id indexes were built from)."""
        if name == REFLECTIONS and len(target) == 2:
            if not indexed:
                return [e for e in value if isinstance(e, dict) and e.get("id") == target[1]]
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
            if not indexed:
                facts = [e for e in section["facts"] if isinstance(e, dict) and e.get("id") == eid]
                return {key: {**section, "facts": facts}}
            matches = self._folder.persona_ids.get((key, eid), [])
            return {key: {**section, "facts": [dict(e) for e in matches]}}
        if name == PERSONA:
            return {}
        if name == REFLECTIONS:
            return []
        return copy_json(value)

    def save_view(self, name: str, obj: Any) -> None:
        view = self._folder.view(name, object)
        if view.refused and view.failure is not None:
            raise fresh(view.failure)
        dumps_view(obj)  # raises what replay's save of it would raise
        target = self._target.get(name, (name,))
        self._overlay[target] = obj
        self._saved.add(name)
        self._saved_targets[target] = None
        self.written.add(name)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        validate_shard_name(basename)
        key = (archive, basename)
        if key in self._shards:
            return self._shards[key]
        failure = self._folder.shard_failure(archive, basename)
        if failure is not None:
            raise fresh(failure)
        result = self._folder.shard(archive, basename)
        assert not isinstance(result, ShardCorruptError)
        return None if result is None else list(result)

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        validate_shard_name(basename)
        dumps_view(entries)  # raises what replay's save of it would raise
        self._shards[(archive, basename)] = entries
        self.written.add(f"{archive}/{basename}")

    def changed_entries(self) -> Iterator[tuple[str, str, dict[str, Any] | None, dict[str, Any] | None]]:
        """``(view, entry, before, after)`` for every reflection or persona entry the handlers run
        so far saved differently from the view they first met (the folder's, or the replaced
        value: :meth:`_befores`; ``after`` ``None``: removed; ``before`` ``None``: not in that
        view). ``entry`` is as :func:`journal.events.entry_ref`."""
        for target, value in self._overlay.items():
            name = target[0]
            if name not in self._saved:
                continue
            if name == REFLECTIONS and len(target) == 2 and _hashable(target[1]):
                afters = [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []
                befores = self._befores(name, target)
                ref = str(target[1])
            elif name == PERSONA and len(target) == 3 and _hashable(target[1]) and _hashable(target[2]):
                section = value.get(target[1]) if isinstance(value, dict) else None
                facts = section.get("facts") if isinstance(section, dict) else None
                afters = [e for e in facts if isinstance(e, dict)] if isinstance(facts, list) else []
                befores = self._befores(name, target)
                ref = f"{target[1]}/{target[2]}"
            else:
                continue
            before = befores[0] if befores else None
            after = afters[0] if afters else None
            if before is None and after is None:
                continue
            if before is None or after is None or not same_json(before, after):
                yield name, ref, before, after

    def _befores(self, name: str, target: tuple[Any, ...]) -> list[Any]:
        """The entries a target selects before any handler ran: in the view the handlers first
        meet, which is the replaced value for a replaced view (the persona as the server's persona
        ensure leaves it), else the folder's file."""
        if name not in self._replaced:
            if name == REFLECTIONS:
                return list(self._folder.reflection_ids.get(target[1], []))
            return list(self._folder.persona_ids.get((target[1], target[2]), []))
        part = self._project(name, list if name == REFLECTIONS else dict, self._replaced[name], target, False)
        if name == REFLECTIONS:
            return [e for e in part if isinstance(e, dict)]
        section = part.get(target[1]) if isinstance(part, dict) else None
        facts = section.get("facts") if isinstance(section, dict) else None
        return [e for e in facts if isinstance(e, dict)] if isinstance(facts, list) else []

    def read_sentinel(self) -> SentinelRead:
        return read_sentinel(self.char_dir)

    def write_sentinel(self, event_id: str | None) -> None:
        self.written.add(SENTINEL_NAME)

    # -- the whole files, as a run leaves them ---------------------------------------------------

    def views_after(self) -> dict[str, Any]:
        """Every view the handlers saved, whole, as the same handlers run on the folder itself
        leave it (each load there reads the file the previous save wrote): the folder's view with
        the entries of each target replaced by the overlay's, in place.

        The overlay of a target holds copies of every entry of the view the target selects (the
        reflections with its id; the facts with its id in its persona section), in the view's
        order, and a handler either changes the first of them or removes them all: so the
        overlay's entries go back to the positions of the view's, or, when it holds none, the
        view's are dropped. Anything else raises.

        Raises:
            ProjectionError: the overlay holds what no production handler leaves (more or fewer
                entries than the view had for a target, an entry whose id changed, a persona
                section changed beyond its facts, a view saved without an aim), or a view was
                replaced (:class:`ProjectionStore` ``replaced``).
        """
        by_view: dict[str, list[tuple[Any, ...]]] = {}
        for target in self._saved_targets:
            by_view.setdefault(target[0], []).append(target)
        out: dict[str, Any] = {}
        for name, targets in by_view.items():
            view = self._folder.views.get(name)
            if name in self._replaced or view is None or not view.exists or view.failure is not None:
                raise ProjectionError(f"{name}: saved without a readable file behind it")
            if name == REFLECTIONS and isinstance(view.value, list):
                out[name] = self._reflections_after(view.value, targets)
            elif name == PERSONA and isinstance(view.value, dict):
                out[name] = self._persona_after(view.value, targets)
            else:
                raise ProjectionError(f"{name}: not a view the handlers project")
        return out

    def shards_after(self) -> dict[tuple[str, str], list[Any]]:
        """Every shard the handlers saved, ``(archive, basename)`` → its whole entry list."""
        return dict(self._shards)

    def _reflections_after(self, full: list[Any], targets: list[tuple[Any, ...]]) -> list[Any]:
        replaced: dict[Hashable, list[Any]] = {}
        for target in targets:
            if len(target) != 2 or not _hashable(target[1]):
                raise ProjectionError(f"{REFLECTIONS}: saved without an entry to aim at")
            count = len(self._folder.reflection_ids.get(target[1], []))
            replaced[target[1]] = self._entries(self._overlay[target], target[1], count)
        return _put_back(full, replaced)

    def _persona_after(self, full: dict[str, Any], targets: list[tuple[Any, ...]]) -> dict[str, Any]:
        sections: dict[str, dict[Hashable, list[Any]]] = {}
        for target in targets:
            if len(target) != 3 or not isinstance(target[1], str) or not _hashable(target[2]):
                raise ProjectionError(f"{PERSONA}: saved without an entry to aim at")
            key, eid = target[1], target[2]
            section = full.get(key)
            value = self._overlay[target]
            mini = value.get(key) if isinstance(value, dict) and list(value) == [key] else None
            if not (isinstance(section, dict) and isinstance(mini, dict) and list(mini) == list(section)):
                raise ProjectionError(f"{PERSONA}: section {key!r} is not the one projected")
            if any(mini[k] is not v for k, v in section.items() if k != "facts"):
                raise ProjectionError(f"{PERSONA}: section {key!r} changed beyond its facts")
            count = len(self._folder.persona_ids.get((key, eid), []))
            sections.setdefault(key, {})[eid] = self._entries(mini.get("facts"), eid, count)
        out: dict[str, Any] = {}
        for key, section in full.items():
            if key in sections:
                section = {k: _put_back(v, sections[key]) if k == "facts" else v for k, v in section.items()}
            out[key] = section
        return out

    @staticmethod
    def _entries(value: Any, entry_id: Hashable, count: int) -> list[Any]:
        """The overlay's entries of one target, checked against the ``count`` the view had."""
        if not isinstance(value, list) or len(value) not in (0, count):
            raise ProjectionError(f"entry {entry_id!r}: {count} in the view, not what the overlay holds")
        for e in value:
            if not (isinstance(e, dict) and _hashable(e.get("id")) and e.get("id") == entry_id):
                raise ProjectionError(f"entry {entry_id!r}: the overlay holds another entry")
        return value


def _put_back(entries: list[Any], replaced: dict[Hashable, list[Any]]) -> list[Any]:
    """``entries`` with the k-th entry of each id in ``replaced`` replaced by the k-th of its list
    (left out when that list is empty), matched as the folder's id indexes match them."""
    out: list[Any] = []
    seen: dict[Hashable, int] = {}
    for e in entries:
        rid = e.get("id") if isinstance(e, dict) else None
        if rid is None or not _hashable(rid) or rid not in replaced:
            out.append(e)
            continue
        after = replaced[rid]
        k = seen.get(rid, 0)
        seen[rid] = k + 1
        if after:
            out.append(after[k])
    return out
