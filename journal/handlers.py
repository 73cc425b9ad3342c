"""The five idempotent replay handlers, their registry, and the stores they read and write.

A handler is ``fn(store, payload) -> bool`` (whether something changed). It loads its view from
the store, applies the payload, and saves only if something changed, before it returns
(memory-format §3.5). Handlers reach files only through a :class:`Store`, so the same code runs
against the real folder (:class:`FolderStore`), a scratch copy (``FolderStore(durable=False)``) or
an in-memory overlay that never writes to disk (:class:`MemoryStore`).

Two deliberate differences from the memory server:

* a corrupt target shard makes an archive handler **raise** (replay pauses at the event) instead
  of returning "no change" and letting the sentinel move past the only recovery copy;
* a shard basename that does not match ``YYYY-MM-DD_<8 hex>.json`` raises before anything is
  written.

A store never reads or writes a view, archive folder or shard that resolves outside the character
folder it was given (a symbolic link pointing elsewhere is refused like a corrupt file).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, Protocol

import orjson

from journal import fs
from journal.errors import (
    BadShardNameError,
    PayloadError,
    ShardCorruptError,
    UnknownEventTypeError,
    ViewCorruptError,
    ViewDriftError,
)
from journal.events import ALL_EVENT_TYPES, SENTINEL_NAME, now_iso
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, load_shard, shard_path, validate_shard_name
from journal.views import PERSONA, REFLECTIONS, SentinelRead, parse_json_bytes, read_sentinel, write_sentinel

#: Keys ``reflection.evidence_updated`` copies (memory-format §3.5 (a)).
REFLECTION_EVIDENCE_KEYS = (
    "reinforcement",
    "disputation",
    "rein_last_signal_at",
    "disp_last_signal_at",
    "sub_zero_days",
    "sub_zero_last_increment_date",
    "user_fact_reinforce_count",
    "last_promote_attempt_at",
    "promote_attempt_count",
)
#: Keys ``persona.evidence_updated`` copies (§3.5 (b)): the evidence set without the throttle.
PERSONA_EVIDENCE_KEYS = REFLECTION_EVIDENCE_KEYS[:7]
EVENT_TIME_KEYS = ("event_when_raw", "event_start_at", "event_end_at")
#: Keys ``persona.entry_updated`` copies besides speaker provenance (§3.5 (c)).
PERSONA_ENTRY_KEYS = (*PERSONA_EVIDENCE_KEYS, "merged_from_ids", *EVENT_TIME_KEYS)
SPEAKER_KEYS = ("speaker_id", "speaker_trust", "speaker_label", "speaker_provenance_mixed")


# -- stores ------------------------------------------------------------------------------------


class Store(Protocol):
    """Where handlers and the reconciler read and write one character folder's files.

    Contract for implementations: ``load_view`` of a missing file gives an empty ``expected()``;
    a file that is not JSON or has the wrong top-level type raises ``ViewCorruptError``.
    ``load_shard`` gives ``None`` for a missing shard and raises ``BadShardNameError`` /
    ``ShardCorruptError``. Nothing outside ``char_dir`` is ever read or written.
    """

    char_dir: Path

    def view_exists(self, name: str) -> bool: ...

    def load_view(self, name: str, expected: type) -> Any: ...

    def save_view(self, name: str, obj: Any) -> None: ...

    def load_shard(self, archive: str, basename: str) -> list[Any] | None: ...

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None: ...

    def read_sentinel(self) -> SentinelRead: ...

    def write_sentinel(self, event_id: str | None) -> None: ...


def _inside(root: str, path: Path) -> bool:
    resolved = os.path.realpath(path)
    return resolved == root or resolved.startswith(root + os.sep)


def _plain(path: Path) -> bool:
    """Whether ``path`` is missing or not a link, so it stays where its parent is (POSIX only:
    Windows junctions are not reported as links, so there every path is resolved)."""
    if os.name == "nt":
        return False
    try:
        return not stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


class _Confined:
    """Path checks shared by the stores: nothing may resolve outside the character folder.

    The character folder itself is trusted (it may be a link: it is the folder given). A file or
    archive folder inside it that is not a link stays inside; a link is resolved and must land
    inside the folder too.
    """

    char_dir: Path
    _root: str

    def _confine(self, char_dir: str | os.PathLike[str]) -> None:
        self.char_dir = Path(char_dir)
        self._root = os.path.realpath(self.char_dir)

    def _view_path(self, name: str) -> Path:
        path = self.char_dir / name
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise ViewCorruptError(f"{name!r} is not a file name inside the character folder")
        if not _plain(path) and not _inside(self._root, path):
            raise ViewCorruptError(
                f"{name} resolves outside the character folder ({os.path.realpath(path)}); refusing to use it"
            )
        return path

    def _shard_path(self, archive: str, basename: str) -> Path:
        path = shard_path(self.char_dir / archive, basename)  # validates the basename first
        if os.path.basename(archive) != archive or archive in ("", ".", ".."):
            raise ShardCorruptError(f"{archive!r} is not a folder name inside the character folder")
        for p in (path.parent, path):
            if not _plain(p) and not _inside(self._root, p):
                raise ShardCorruptError(
                    f"{archive}/{basename} resolves outside the character folder ({os.path.realpath(p)}); "
                    "refusing to read or write through it"
                )
        return path


class _ListCache:
    """The encoded elements of one list of entries (dicts), as this store last wrote them.

    Valid while the list object is not changed in place: the production handlers never do that
    (they build a new list to remove entries) and report every entry they change.
    """

    __slots__ = ("level", "parts", "pos", "ref")

    def __init__(self, ref: Any, level: int, parts: list[bytes]) -> None:
        self.ref = ref  # keeps the list and its entries alive, so their ids cannot be reused
        self.level = level
        self.parts = parts
        self.pos = {id(item): i for i, item in enumerate(ref)}


class _CachedView:
    """A view as this store last read or wrote it.

    ``obj`` serialises to ``data`` except for the entries whose ids are in ``dirty`` (reported by
    the handlers through :func:`_note_changed`); ``lists`` holds the encoded entries of each list of
    entries written last time.
    """

    __slots__ = ("data", "dirty", "lists", "obj")

    def __init__(self, data: bytes, obj: Any, lists: dict[int, _ListCache] | None = None) -> None:
        self.data = data
        self.obj = obj
        self.lists: dict[int, _ListCache] = lists if lists is not None else {}
        self.dirty: set[int] = set()


class _Fallback(Exception):
    """The incremental encoder met something only ``json.dumps`` renders exactly."""


_IND = b"  "


_INT64_MIN, _UINT64_END = -(2**63), 2**64


def _orjson_exact(value: Any) -> bool:
    """Whether orjson renders ``value`` byte-for-byte as ``json.dumps(ensure_ascii=False)`` does.

    True for plain JSON values whose floats print without an exponent in Python (0, or
    1e-4 <= |x| < 1e16: there both give the shortest round-trip digits), whose ints fit orjson's
    64-bit range, and whose dict keys are strings. Strings escape identically for every code point.
    NaN/Infinity (orjson writes ``null``), exponent floats and anything else are not.
    """
    t = type(value)
    if t is str or t is bool or value is None:
        return True
    if t is int:
        return bool(_INT64_MIN <= value < _UINT64_END)
    if t is float:
        return bool(value == 0.0 or 1e-4 <= abs(value) < 1e16)
    if t is dict:
        return all(type(k) is str and _orjson_exact(v) for k, v in value.items())
    if t is list or t is tuple:
        return all(_orjson_exact(v) for v in value)
    return False


def _encode_entry(item: Any, level: int) -> bytes:
    """An entry nested at ``level``, as ``json.dumps(indent=2, ensure_ascii=False)`` renders it.

    orjson when it renders the entry exactly (see :func:`_orjson_exact`; ~20x faster), else the
    stdlib. Raw newlines in the output are all structural (strings escape theirs), so indenting the
    entry's own rendering by ``level`` gives its rendering inside the whole view.
    """
    if _orjson_exact(item):
        try:
            data = orjson.dumps(item, option=orjson.OPT_INDENT_2)
        except (TypeError, orjson.JSONEncodeError):  # e.g. lone surrogates, nesting orjson refuses
            pass
        else:
            return data.replace(b"\n", b"\n" + _IND * level) if level else data
    text = json.dumps(item, indent=2, ensure_ascii=False)
    if level:
        text = text.replace("\n", "\n" + "  " * level)
    return text.encode("utf-8")


class _Encoder:
    """``json.dumps(obj, indent=2, ensure_ascii=False)`` as bytes, reusing the entries of a cache.

    Lists and dicts are laid out exactly as the stdlib encoder lays them out. A list whose
    elements are all dicts is a list of *entries*: each entry is rendered by ``json.dumps`` itself
    and reused from the cache when it is the same object and was not reported changed; when the
    list itself is the same object, only its changed entries are visited at all.
    """

    def __init__(self, cache: _CachedView | None) -> None:
        self.old = cache.lists if cache is not None else {}
        self.dirty = cache.dirty if cache is not None else set()
        self.lists: dict[int, _ListCache] = {}
        self._by_entry: dict[int, tuple[_ListCache, int]] | None = None

    def _old_entry(self, item: Any, level: int) -> bytes | None:
        if self._by_entry is None:
            self._by_entry = {eid: (lc, i) for lc in self.old.values() for eid, i in lc.pos.items()}
        hit = self._by_entry.get(id(item))
        if hit is None or id(item) in self.dirty:
            return None
        lc, i = hit
        if lc.level != level or i >= len(lc.ref) or lc.ref[i] is not item:
            return None
        return lc.parts[i]

    def value(self, obj: Any, level: int) -> bytes:
        if isinstance(obj, str):
            return json.dumps(obj, ensure_ascii=False).encode("utf-8")
        if isinstance(obj, (list, tuple)):
            return self._list(obj, level)
        if isinstance(obj, dict):
            if not obj:
                return b"{}"
            inner = b"\n" + _IND * (level + 1)
            parts = []
            for k, v in obj.items():
                if not isinstance(k, str):
                    raise _Fallback  # json converts int/float/bool/None keys; let it do so
                parts.append(encode_basestring(k).encode("utf-8") + b": " + self.value(v, level + 1))
            return b"{" + inner + (b"," + inner).join(parts) + b"\n" + _IND * level + b"}"
        return json.dumps(obj, ensure_ascii=False).encode("utf-8")

    def _list(self, obj: Any, level: int) -> bytes:
        if not obj:
            return b"[]"
        inner = b"\n" + _IND * (level + 1)
        lc = self.old.get(id(obj))
        if lc is not None and lc.ref is obj and lc.level == level and len(lc.parts) == len(obj):
            parts = lc.parts
            for eid in self.dirty:
                i = lc.pos.get(eid)
                if i is not None and id(obj[i]) == eid:
                    parts[i] = _encode_entry(obj[i], level + 1)
            self.lists[id(obj)] = lc
        elif all(isinstance(item, dict) for item in obj):
            parts = [self._old_entry(item, level) or _encode_entry(item, level + 1) for item in obj]
            self.lists[id(obj)] = _ListCache(obj, level, parts)
        else:
            parts = [self.value(item, level + 1) for item in obj]
        return b"[" + inner + (b"," + inner).join(parts) + b"\n" + _IND * level + b"]"


def dumps_view_incremental(obj: Any, cache: _CachedView | None = None) -> tuple[bytes, dict[int, _ListCache]]:
    """Byte-for-byte :func:`journal.fs.dumps_view`, reusing the unchanged entries of ``cache``.

    ``cache`` is consumed (its lists are updated in place). Returns the bytes and the list caches
    to keep for the next call.
    """
    encoder = _Encoder(cache)
    try:
        data = encoder.value(obj, 0)
    except _Fallback:
        return fs.dumps_view(obj), {}
    return data, encoder.lists


#: Tests set this to check every incremental serialisation against :func:`journal.fs.dumps_view`.
VERIFY_INCREMENTAL_SAVES = False


class FolderStore(_Confined):
    """The real files of one character folder; every write goes through :mod:`journal.fs`.

    Within one store, a view that this store itself last wrote and that is unchanged on disk (its
    bytes are compared on every load) is not parsed again, and only the entries a handler reported
    as changed are serialised again; the bytes written are always exactly
    :func:`journal.fs.dumps_view` of the view.

    Args:
        char_dir: the character folder.
        durable: ``False`` skips fsync (scratch copies only).
    """

    def __init__(self, char_dir: str | os.PathLike[str], *, durable: bool = True) -> None:
        self._confine(char_dir)
        self.durable = durable
        self._cache: dict[str, _CachedView] = {}

    def discard_cache(self) -> None:
        """Forget every cached view (after a handler this store cannot vouch for, or a failure)."""
        self._cache.clear()

    def note_changed(self, name: str, entry: Any) -> None:
        """A handler changed ``entry`` (a dict inside view ``name``) in place."""
        cached = self._cache.get(name)
        if cached is not None:
            cached.dirty.add(id(entry))

    def view_exists(self, name: str) -> bool:
        return self._view_path(name).exists()

    def load_view(self, name: str, expected: type) -> Any:
        path = self._view_path(name)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self._cache.pop(name, None)
            return expected()
        cached = self._cache.get(name)
        if cached is not None and not cached.dirty and cached.data == data and isinstance(cached.obj, expected):
            return cached.obj
        self._cache.pop(name, None)
        try:
            obj = parse_json_bytes(data)
        except ValueError as exc:
            raise ViewCorruptError(f"{name} is not valid JSON: {exc}") from exc
        if not isinstance(obj, expected):
            raise ViewCorruptError(f"{name} has a top-level {type(obj).__name__}, expected a {expected.__name__}")
        self._cache[name] = _CachedView(data, obj)
        return obj

    def save_view(self, name: str, obj: Any) -> None:
        path = self._view_path(name)
        data, lists = dumps_view_incremental(obj, self._cache.pop(name, None))
        if VERIFY_INCREMENTAL_SAVES and data != fs.dumps_view(obj):
            raise AssertionError(f"incremental serialisation of {name} differs from dumps_view")
        fs.atomic_write_bytes(path, data, durable=self.durable)
        self._cache[name] = _CachedView(data, obj, lists)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        return load_shard(self._shard_path(archive, basename))

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        path = self._shard_path(archive, basename)
        if self.durable:
            fs.ensure_dir(path.parent)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        fs.atomic_write_json(path, entries, durable=self.durable)

    def read_sentinel(self) -> SentinelRead:
        return read_sentinel(self.char_dir)

    def write_sentinel(self, event_id: str | None) -> None:
        if self.durable:
            write_sentinel(self.char_dir, event_id)
        else:
            fs.atomic_write_json(
                self.char_dir / SENTINEL_NAME, {"last_applied_event_id": event_id, "ts": now_iso()}, durable=False
            )


_MISSING = object()


class MemoryStore(_Confined):
    """An overlay over a character folder that reads lazily and keeps every write in memory.

    It never writes to disk, so it is safe on any folder (exports, read-only media). Used for
    diagnosis checks ("would this handler change anything?") and fast dry runs. It refuses the
    same out-of-folder paths as :class:`FolderStore`, so both stop at the same events.

    Attributes:
        written: names of views / ``archive/basename`` shards / ``events_applied.json`` written.
    """

    def __init__(self, char_dir: str | os.PathLike[str]) -> None:
        self._confine(char_dir)
        self._views: dict[str, Any] = {}
        self._shards: dict[tuple[str, str], Any] = {}
        self._sentinel: SentinelRead | None = None
        self.written: set[str] = set()

    def view_exists(self, name: str) -> bool:
        if name in self._views:
            return self._views[name] is not _MISSING
        return self._view_path(name).exists()

    def load_view(self, name: str, expected: type) -> Any:
        if name not in self._views:
            path = self._view_path(name)
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                self._views[name] = _MISSING
            else:
                # A corrupt view raises on every call, as on disk; nothing is cached.
                try:
                    self._views[name] = parse_json_bytes(data)
                except ValueError as exc:
                    raise ViewCorruptError(f"{name} is not valid JSON: {exc}") from exc
        obj = self._views[name]
        if obj is _MISSING:
            return expected()
        if not isinstance(obj, expected):
            raise ViewCorruptError(f"{name} has a top-level {type(obj).__name__}, expected a {expected.__name__}")
        return obj

    def save_view(self, name: str, obj: Any) -> None:
        self._view_path(name)
        self._views[name] = obj
        self.written.add(name)

    def load_shard(self, archive: str, basename: str) -> list[Any] | None:
        key = (archive, basename)
        if key not in self._shards:
            self._shards[key] = load_shard(self._shard_path(archive, basename))
        value: list[Any] | None = self._shards[key]
        return value

    def save_shard(self, archive: str, basename: str, entries: list[Any]) -> None:
        self._shard_path(archive, basename)
        self._shards[(archive, basename)] = entries
        self.written.add(f"{archive}/{basename}")

    def read_sentinel(self) -> SentinelRead:
        if self._sentinel is None:
            self._sentinel = read_sentinel(self.char_dir)
        return self._sentinel

    def write_sentinel(self, event_id: str | None) -> None:
        self._sentinel = SentinelRead("ok", event_id) if event_id is not None else SentinelRead("null")
        self.written.add(SENTINEL_NAME)

    def view(self, name: str) -> Any:
        """The in-memory value of a view (after writes), or ``None`` if never loaded."""
        value = self._views.get(name)
        return None if value is _MISSING else value

    def shard(self, archive: str, basename: str) -> Any:
        return self._shards.get((archive, basename))

    def discard(self) -> None:
        """Forget every load and write; the next read comes from disk again."""
        self._views.clear()
        self._shards.clear()
        self._sentinel = None
        self.written.clear()


# -- helpers -----------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """JSON identity: equal values of the same JSON type (``1`` ≠ ``1.0`` ≠ ``True``; NaN = NaN)."""
    if a is b:
        return True
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is float:
        return bool(a == b or (math.isnan(a) and math.isnan(b)))
    if ta is list or ta is tuple:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if ta is dict:
        return list(a) == list(b) and all(_same(v, b[k]) for k, v in a.items())
    return bool(a == b)


def _note_changed(store: Store, name: str, entry: Any) -> None:
    note = getattr(store, "note_changed", None)
    if note is not None:
        note(name, entry)


def _assign(entry: dict[str, Any], key: str, value: Any) -> bool:
    """Set ``entry[key] = value`` (a private copy) unless it already holds that JSON value."""
    if key in entry and _same(entry[key], value):
        return False
    entry[key] = copy.deepcopy(value)
    return True


def _copy_keys(entry: dict[str, Any], source: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """Copy the keys of ``keys`` that are present in ``source``; an absent key never clears one."""
    changed = False
    for key in keys:
        if key in source and _assign(entry, key, source[key]):
            changed = True
    return changed


def _find(items: Any, entry_id: Any) -> dict[str, Any] | None:
    """The first dict of ``items`` whose ``id`` equals ``entry_id``."""
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, dict) and item.get("id") == entry_id:
            return item
    return None


def _persona_entry(persona: dict[str, Any], entity_key: Any, entry_id: Any) -> dict[str, Any] | None:
    section = persona.get(entity_key) if isinstance(entity_key, str) else None
    if not isinstance(section, dict):
        return None
    return _find(section.get("facts"), entry_id)


def _checked_basename(payload: dict[str, Any]) -> str | None:
    """The payload's shard basename, validated; ``None`` when absent or empty.

    Raises:
        BadShardNameError: present but not a valid basename (before anything is written).
    """
    basename = payload.get("archive_shard_path")
    if not basename:
        return None
    return validate_shard_name(basename)


def _heal_shard(store: Store, archive: str, basename: str | None, snapshot: Any) -> bool:
    """Make sure ``snapshot`` is in shard ``basename`` (archive recovery). Returns whether it wrote.

    Raises:
        ShardCorruptError: the shard exists but is not a JSON list (the deliberate fix: replay
            pauses, the view keeps the entry).
        PayloadError: the snapshot has no id, so it cannot be found again idempotently.
    """
    if basename is None or not isinstance(snapshot, dict):
        return False
    sid = snapshot.get("id")
    if not isinstance(sid, str) or not sid:
        raise PayloadError(f"entry_snapshot for shard {basename} has no id; it cannot be archived idempotently")
    current = store.load_shard(archive, basename)
    if current is None:
        store.save_shard(archive, basename, [copy.deepcopy(snapshot)])
        return True
    if any(isinstance(e, dict) and e.get("id") == sid for e in current):
        return False
    store.save_shard(archive, basename, [*current, copy.deepcopy(snapshot)])
    return True


def _text_sha256(text: Any) -> str:
    if text is None:
        text = ""
    return hashlib.sha256(str(text).encode("utf-8")).hexdigest()


# -- the five handlers ---------------------------------------------------------------------------


def reflection_evidence_updated(store: Store, payload: dict[str, Any]) -> bool:
    """``reflection.evidence_updated``: copy the evidence keys present in the payload onto the
    reflection in ``reflections.json`` (memory-format §3.5 (a)); ``source`` is ignored.

    Raises:
        ViewCorruptError: ``reflections.json`` is not JSON or not a list.
    """
    rid = payload.get("reflection_id")
    if not rid:
        return False
    reflections = store.load_view(REFLECTIONS, list)
    entry = _find(reflections, rid)
    if entry is None or not _copy_keys(entry, payload, REFLECTION_EVIDENCE_KEYS):
        return False
    _note_changed(store, REFLECTIONS, entry)
    store.save_view(REFLECTIONS, reflections)
    return True


def persona_evidence_updated(store: Store, payload: dict[str, Any]) -> bool:
    """``persona.evidence_updated``: copy the evidence keys present in the payload onto
    ``persona[entity_key].facts[id == entry_id]`` (§3.5 (b)).

    Raises:
        ViewCorruptError: ``persona.json`` is not JSON or not a dict.
    """
    entity_key, entry_id = payload.get("entity_key"), payload.get("entry_id")
    if not entity_key or not entry_id:
        return False
    persona = store.load_view(PERSONA, dict)
    entry = _persona_entry(persona, entity_key, entry_id)
    if entry is None or not _copy_keys(entry, payload, PERSONA_EVIDENCE_KEYS):
        return False
    _note_changed(store, PERSONA, entry)
    store.save_view(PERSONA, persona)
    return True


def persona_entry_updated(store: Store, payload: dict[str, Any]) -> bool:
    """``persona.entry_updated`` (merge on promote, §3.5 (c)): check the text hash, then copy the
    evidence keys, ``merged_from_ids``, the event-time keys, and replace speaker provenance.

    A missing ``persona.json`` means no change.

    Raises:
        ViewDriftError: the entry's current text does not hash to ``rewrite_text_sha256`` (the
            message names the entry and both hashes; the payload cannot restore the text).
        ViewCorruptError: ``persona.json`` is not JSON or not a dict.
    """
    entity_key, entry_id = payload.get("entity_key"), payload.get("entry_id")
    if not entity_key or not entry_id:
        return False
    if not store.view_exists(PERSONA):
        return False
    persona = store.load_view(PERSONA, dict)
    entry = _persona_entry(persona, entity_key, entry_id)
    if entry is None:
        return False
    expected = payload.get("rewrite_text_sha256")
    if expected:
        actual = _text_sha256(entry.get("text"))
        if actual != expected:
            raise ViewDriftError(
                f"persona entry {entity_key}/{entry_id}: its text hashes to sha256 {actual}, but the event "
                f"expects {expected}; the view drifted from the journal and the payload cannot restore the text"
            )
    changed = _copy_keys(entry, payload, PERSONA_ENTRY_KEYS)
    if "speaker_provenance" in payload:
        provenance = payload["speaker_provenance"]
        if not isinstance(provenance, dict):
            provenance = {}  # a non-dict provenance counts as {}: it clears the four keys
        before = {k: entry[k] for k in SPEAKER_KEYS if k in entry}
        after = {k: provenance[k] for k in SPEAKER_KEYS if k in provenance}
        changed |= not _same(before, after)
        if changed:
            # Remove and re-add, as the memory server does on every save: the keys end up last.
            for key in SPEAKER_KEYS:
                entry.pop(key, None)
            entry.update(copy.deepcopy(after))
    if not changed:
        return False
    _note_changed(store, PERSONA, entry)
    store.save_view(PERSONA, persona)
    return True


def reflection_state_changed(store: Store, payload: dict[str, Any]) -> bool:
    """``reflection.state_changed`` (§3.5 (d)), dispatched on ``to``.

    ``to == "archived"``: put ``entry_snapshot`` into shard ``archive_shard_path`` (when both are
    present), then remove every reflection with ``reflection_id`` from ``reflections.json``. Any
    other ``to``: set ``status``, ``<to>_at`` (when ``ts`` is set), ``absorbed_into`` (when
    present), ``promote_blocked_reason`` / ``denied_reason`` from ``reason`` (only for those
    targets) and ``reject_reason`` from ``reject_explanation``. ``from`` is never checked.

    Raises:
        BadShardNameError: invalid ``archive_shard_path``; nothing is written.
        ShardCorruptError: the named shard is corrupt; nothing is written, the view keeps the entry.
        PayloadError: ``to`` is not a string, or the snapshot has no id.
        ViewCorruptError: ``reflections.json`` is not JSON or not a list.
    """
    rid = payload.get("reflection_id")
    to = payload.get("to")
    if not rid or not to:
        return False
    if not isinstance(to, str):
        raise PayloadError(f"reflection.state_changed: 'to' is a {type(to).__name__}, not a status string")
    if to == "archived":
        basename = _checked_basename(payload)
        changed = _heal_shard(store, REFLECTION_ARCHIVE, basename, payload.get("entry_snapshot"))
        if not store.view_exists(REFLECTIONS):
            return changed
        reflections = store.load_view(REFLECTIONS, list)
        kept = [e for e in reflections if not (isinstance(e, dict) and e.get("id") == rid)]
        if len(kept) != len(reflections):
            store.save_view(REFLECTIONS, kept)
            changed = True
        return changed
    reflections = store.load_view(REFLECTIONS, list)
    entry = _find(reflections, rid)
    if entry is None:
        return False
    changed = _assign(entry, "status", to)
    if payload.get("ts"):
        changed |= _assign(entry, f"{to}_at", payload["ts"])
    if "absorbed_into" in payload:
        changed |= _assign(entry, "absorbed_into", payload["absorbed_into"])
    if "reason" in payload and to == "promote_blocked":
        changed |= _assign(entry, "promote_blocked_reason", payload["reason"])
    if "reason" in payload and to == "denied":
        changed |= _assign(entry, "denied_reason", payload["reason"])
    if "reject_explanation" in payload:
        changed |= _assign(entry, "reject_reason", payload["reject_explanation"])
    if not changed:
        return False
    _note_changed(store, REFLECTIONS, entry)
    store.save_view(REFLECTIONS, reflections)
    return True


def persona_fact_added(store: Store, payload: dict[str, Any]) -> bool:
    """``persona.fact_added`` (§3.5 (e)): persona archive recovery.

    Without ``archive_shard_path`` it does nothing and still counts as handled. Otherwise: put
    ``entry_snapshot`` into ``persona_archive/<basename>`` (when it is a dict), then remove the
    entry from ``persona[entity_key].facts``. A missing ``persona.json`` or section returns the
    result of the shard step.

    Raises:
        BadShardNameError: invalid ``archive_shard_path``; nothing is written.
        ShardCorruptError: the named shard is corrupt; nothing is written, the view keeps the entry.
        PayloadError: the snapshot has no id.
        ViewCorruptError: ``persona.json`` is not JSON or not a dict.
    """
    basename = _checked_basename(payload)
    if basename is None:
        return False
    entity_key, entry_id = payload.get("entity_key"), payload.get("entry_id")
    if not entity_key or not entry_id:
        return False
    changed = _heal_shard(store, PERSONA_ARCHIVE, basename, payload.get("entry_snapshot"))
    if not store.view_exists(PERSONA):
        return changed
    persona = store.load_view(PERSONA, dict)
    section = persona.get(entity_key) if isinstance(entity_key, str) else None
    if not isinstance(section, dict) or not isinstance(section.get("facts"), list):
        return changed
    facts = section["facts"]
    kept = [e for e in facts if not (isinstance(e, dict) and e.get("id") == entry_id)]
    if len(kept) != len(facts):
        section["facts"] = kept
        store.save_view(PERSONA, persona)
        changed = True
    return changed


# -- registry ------------------------------------------------------------------------------------

Handler = Callable[[Store, dict[str, Any]], bool]

#: The production handlers. They report every entry they change in place to the store, which is
#: what lets :class:`FolderStore` serialise only those entries again.
_BUILTIN: dict[str, Handler] = {
    "reflection.evidence_updated": reflection_evidence_updated,
    "persona.evidence_updated": persona_evidence_updated,
    "persona.entry_updated": persona_entry_updated,
    "reflection.state_changed": reflection_state_changed,
    "persona.fact_added": persona_fact_added,
}
_BUILTIN_FUNCS = frozenset(_BUILTIN.values())


class HandlerRegistry:
    """Event type → handler. Registering a name outside the vocabulary is an error.

    A type without a registered handler stops replay (the reconciler's ``no_handler``).
    Registering a second handler for a name replaces the first.
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def register(self, event_type: str, handler: Handler) -> None:
        """Register ``handler`` for ``event_type``.

        Raises:
            UnknownEventTypeError: ``event_type`` is not one of the 15 declared names.
        """
        if not isinstance(event_type, str) or event_type not in ALL_EVENT_TYPES:
            raise UnknownEventTypeError(f"cannot register a handler for undeclared event type {event_type!r}")
        self._handlers[event_type] = handler

    def get(self, event_type: object) -> Handler | None:
        return self._handlers.get(event_type) if isinstance(event_type, str) else None

    def __contains__(self, event_type: object) -> bool:
        return self.get(event_type) is not None

    def names(self) -> frozenset[str]:
        return frozenset(self._handlers)


def default_registry() -> HandlerRegistry:
    """A registry with the five production handlers."""
    registry = HandlerRegistry()
    for name, handler in _BUILTIN.items():
        registry.register(name, handler)
    return registry


def run_handler(handler: Handler, store: Store, payload: Any) -> bool:
    """Run ``handler`` with ``payload or {}`` (memory-format §4.1).

    A store's cached views are dropped around handlers other than the five production ones (they
    may change entries without reporting it) and after any failure, so a cache never outlives the
    state it describes.

    Raises:
        PayloadError: the payload is not empty and not an object.
        Whatever the handler raises.
    """
    if not payload:
        payload = {}
    if not isinstance(payload, dict):
        raise PayloadError(f"payload is a {type(payload).__name__}, not an object")
    discard = getattr(store, "discard_cache", None)
    trusted = handler in _BUILTIN_FUNCS
    if not trusted and discard is not None:
        discard()
    try:
        changed = bool(handler(store, payload))
    except BaseException:
        if discard is not None:
            discard()
        raise
    if not trusted and discard is not None:
        discard()
    return changed


def block_reason(exc: BaseException) -> tuple[str, str]:
    """Map a handler's exception to ``(reason, message)``; reason ∈ the diagnosis BLOCK_REASONS."""
    if isinstance(exc, ViewDriftError):
        return "view_drift", str(exc)
    if isinstance(exc, ViewCorruptError):
        return "corrupt_view", str(exc)
    if isinstance(exc, ShardCorruptError):
        return "corrupt_shard", str(exc)
    if isinstance(exc, BadShardNameError):
        return "bad_shard_name", str(exc)
    return "handler_error", f"{type(exc).__name__}: {exc}"


# -- what an event touches -------------------------------------------------------------------------


def entry_ref(event_type: object, payload: Any) -> str | None:
    """The entry an event touches: ``reflection_id``, or ``"<entity_key>/<entry_id>"``."""
    if not isinstance(payload, dict) or not isinstance(event_type, str):
        return None
    if event_type.startswith("reflection."):
        rid = payload.get("reflection_id")
        return rid if isinstance(rid, str) and rid else None
    if event_type.startswith("persona."):
        ek, eid = payload.get("entity_key"), payload.get("entry_id")
        if isinstance(ek, str) and isinstance(eid, str) and ek and eid:
            return f"{ek}/{eid}"
    return None


@dataclass(frozen=True, slots=True)
class ArchiveTarget:
    """Where an archive event's entry must end up.

    Attributes:
        archive: ``reflection_archive`` or ``persona_archive``.
        shard: the basename from the payload (not yet validated).
        entry_id: the archived entry's id.
        view: the view the entry leaves (``reflections.json`` / ``persona.json``).
        entity_key: for persona entries, the section key.
    """

    archive: str
    shard: Any
    entry_id: str
    view: str
    entity_key: str | None = None


def archive_target(event_type: object, payload: Any) -> ArchiveTarget | None:
    """The archive destination of an archive event (with a snapshot), else ``None``."""
    if not isinstance(payload, dict) or not payload.get("archive_shard_path"):
        return None
    snapshot = payload.get("entry_snapshot")
    if not isinstance(snapshot, dict):
        return None
    if event_type == "reflection.state_changed" and payload.get("to") == "archived":
        eid = snapshot.get("id") or payload.get("reflection_id")
        if not isinstance(eid, str) or not eid:
            return None
        return ArchiveTarget(REFLECTION_ARCHIVE, payload["archive_shard_path"], eid, REFLECTIONS)
    if event_type == "persona.fact_added":
        eid = snapshot.get("id") or payload.get("entry_id")
        if not isinstance(eid, str) or not eid:
            return None
        ek = payload.get("entity_key")
        return ArchiveTarget(
            PERSONA_ARCHIVE, payload["archive_shard_path"], eid, PERSONA, ek if isinstance(ek, str) else None
        )
    return None
