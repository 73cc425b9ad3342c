"""Loading and saving the JSON views (``reflections.json``, ``persona.json``, ...) and the sentinel."""

from __future__ import annotations

import copy
import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from journal import fs
from journal.codec import dumps_view, loads_exact
from journal.errors import ViewCorruptError
from journal.events import SENTINEL_NAME, Clock, is_unicode, now_iso

REFLECTIONS = "reflections.json"
PERSONA = "persona.json"
FACTS = "facts.json"

#: The top-level type each known view must have.
VIEW_TYPES: dict[str, type] = {REFLECTIONS: list, PERSONA: dict, FACTS: list}


def load_view(path: str | os.PathLike[str], expected: type, *, missing: Any = None) -> Any:
    """Load a view file that must have top-level type ``expected``.

    A missing file gives ``missing`` (default: an empty ``expected()``). Only a regular file is
    read (links followed): anything else raises at once, never blocks (:func:`journal.fs.open_regular`).

    Raises:
        ViewCorruptError: the file is not JSON or its top level has the wrong type.
        OSError: the file exists but cannot be read, or is not a regular file (a folder:
            ``IsADirectoryError``; a FIFO, socket or device: the message says which).
    """
    p = Path(path)
    try:
        with fs.open_regular(p) as fh:
            data = fh.read()
    except FileNotFoundError:
        return expected() if missing is None else missing
    try:
        obj = loads_exact(data)
    except ValueError as exc:
        raise ViewCorruptError(f"{p.name} is not valid JSON: {exc}") from exc
    return check_view_type(p.name, obj, expected)


def check_view_type(name: str, obj: Any, expected: type) -> Any:
    """Return ``obj`` if its top level is an ``expected``.

    Raises:
        ViewCorruptError: it is not (the message names the view ``name`` and both types).
    """
    if not isinstance(obj, expected):
        raise ViewCorruptError(f"{name} has a top-level {type(obj).__name__}, expected a {expected.__name__}")
    return obj


def save_view(path: str | os.PathLike[str], obj: Any, *, durable: bool = True) -> None:
    """Save a view atomically, formatted as the memory server writes it (:func:`journal.codec.dumps_view`).

    ``durable=False`` skips the fsyncs (scratch copies only).
    """
    fs.atomic_write_json(path, obj, durable=durable)


# -- sentinel -------------------------------------------------------------------------------


def undecodable_at(data: bytes) -> int | None:
    """The offset of the first byte of ``data`` that strict UTF-8 decoding rejects (a torn
    multi-byte character, another encoding, an encoded lone surrogate), or ``None``."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return None


@dataclass(frozen=True, slots=True)
class SentinelRead:
    """The sentinel file as read, before it is resolved against a journal.

    Attributes:
        state: ``ok`` (a string id), ``missing``, ``malformed``, ``null`` or ``refused`` (not a
            regular file: never read). Resolving against the journal may turn ``ok`` into
            ``unknown_id``.
        event_id: the id when ``state == "ok"``, else ``None``.
        ts: the sentinel's ``ts`` when it is a string.
        message: what was wrong, for ``malformed``.
        undecodable: the offset of the file's first byte that is not UTF-8, if any (then it is
            ``malformed`` to us; the memory server's read raises, memory-format §3.2, §9.8.2).
    """

    state: str
    event_id: str | None = None
    ts: str | None = None
    message: str | None = None
    undecodable: int | None = None

    @property
    def replay_from_start(self) -> bool:
        """Whether replay must start at the journal's first event (anything but a string id)."""
        return self.event_id is None


def read_sentinel(char_dir: str | os.PathLike[str]) -> SentinelRead:
    """Read ``events_applied.json`` with the design record's fallbacks; never raises.

    Missing: ``missing``. Not a regular file (a FIFO, socket, device or folder; never read, so a
    FIFO cannot block): ``refused``, with what it is: where the sentinel stands is unknown, and
    neither actor's replay is guessed at. Unreadable, not JSON, not an object, or a
    ``last_applied_event_id`` that is neither null nor a string of valid Unicode (no event can
    have such an id): ``malformed``, with the reason.
    """
    p = Path(char_dir) / SENTINEL_NAME
    try:
        with fs.open_regular(p) as fh:
            data = fh.read()
    except FileNotFoundError:
        return SentinelRead("missing")
    except IsADirectoryError:
        return SentinelRead("refused", message="is a folder, not a regular file; not read")
    except OSError as exc:
        if isinstance(exc, fs.NotRegularFileError):
            return SentinelRead("refused", message=f"is {exc.strerror}")
        return SentinelRead("malformed", message=f"cannot read: {exc.strerror or exc}")
    return parse_sentinel(data)


def parse_sentinel(data: bytes) -> SentinelRead:
    """The sentinel as :func:`read_sentinel` reads a file holding ``data`` (never ``missing`` or
    ``refused``: those are about the file, not its bytes)."""
    bad = undecodable_at(data)
    if bad is not None:
        return SentinelRead("malformed", message=f"not UTF-8 at byte {bad}", undecodable=bad)
    try:
        obj = loads_exact(data)
    except ValueError as exc:
        return SentinelRead("malformed", message=f"not valid JSON: {exc}")
    if not isinstance(obj, dict):
        return SentinelRead("malformed", message=f"top level is a {type(obj).__name__}, not an object")
    ts = obj.get("ts") if isinstance(obj.get("ts"), str) else None
    value = obj.get("last_applied_event_id")
    if value is None:
        return SentinelRead("null", ts=ts)
    if not isinstance(value, str):
        return SentinelRead(
            "malformed", ts=ts, message=f"last_applied_event_id is a {type(value).__name__}, not a string"
        )
    if not is_unicode(value):
        return SentinelRead("malformed", ts=ts, message="last_applied_event_id is not valid Unicode (a lone surrogate)")
    return SentinelRead("ok", event_id=value, ts=ts)


def write_sentinel(
    char_dir: str | os.PathLike[str], event_id: str | None, *, durable: bool = True, clock: Clock | None = None
) -> None:
    """Write the sentinel atomically (``indent=2``), as the memory server does.

    ``durable=False`` skips the fsyncs (scratch copies only). ``clock`` gives its ``ts``
    (default: :func:`journal.events.now_iso`); it is not asked when nothing is written.

    Raises:
        OSError: the write failed (the old sentinel is kept whole), or ``event_id`` cannot be
            written (``errno.EINVAL``: not a string of valid Unicode, such as one holding a lone
            surrogate); then nothing is written. Nothing else: every caller treats a failed
            sentinel write as an ``OSError``.
    """
    path = Path(char_dir) / SENTINEL_NAME
    if event_id is not None and not (isinstance(event_id, str) and is_unicode(event_id)):
        what = "not valid Unicode (a lone surrogate)" if isinstance(event_id, str) else "not a string"
        raise OSError(errno.EINVAL, f"cannot write the sentinel: event id {event_id!r} is {what}", str(path))
    fs.atomic_write_bytes(path, sentinel_bytes(event_id, (clock or now_iso)()), durable=durable)


def sentinel_bytes(event_id: str | None, ts: str) -> bytes:
    """The bytes :func:`write_sentinel` writes for ``event_id`` at time ``ts`` (the one encoding of
    the sentinel, which a prediction of a run's files takes too)."""
    return dumps_view({"last_applied_event_id": event_id, "ts": ts})


_IMMUTABLE_LEAVES = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any) -> Any:
    """``copy.deepcopy`` for JSON values, a few times faster: dicts and lists are rebuilt, str,
    numbers, booleans and ``None`` shared (as deepcopy shares them); anything else is deep-copied."""
    t = type(value)
    if t is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if t is list:
        return [copy_json(v) for v in value]
    if t in _IMMUTABLE_LEAVES:
        return value
    return copy.deepcopy(value)
