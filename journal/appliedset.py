"""The applied set, ``events_applied_set.json``: the events our library applied past the sentinel
(the one home of that file and of when it counts).

When an event cannot be applied, replay holds its entries (:mod:`journal.holds`) and goes on with
the others. The sentinel stays just before the first held event, so the memory server, which
reads the same folder and knows nothing of this file, stops there and applies nothing after it,
exactly as before. The events this library applied after that point are recorded here, so that
no later start of ours applies them again (an old snapshot applied again would roll back what
changed since without an event: startup migrations, correction merges).

The file is bound to the sentinel it was written beside::

    {
      "after": "<the sentinel's event id, or null>",
      "after_ts": "<the ts of that sentinel file, or null>",
      "applied": ["<event id>", ...],
      "ts": "<when it was written>"
    }

It counts (:func:`applied_set_valid`) only while ``events_applied.json`` still names ``after``
with the same ``ts``: any other writer of the sentinel (the server's live write, a server start
that replayed, a compaction, a restore of another sentinel) makes it stale, and a stale file is
ignored: the sentinel is the authority, and replay from it is what the server does too.

An id in ``applied`` is not run again, unless an earlier event sharing one of its entries is
applied in the same round (a held event that became applicable): then it runs again after that
one, so the newest payload for each entry still wins (:meth:`journal.Reconciler.reconcile`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from journal import fs
from journal.codec import dumps_view, loads_exact
from journal.errors import ViewCorruptError
from journal.events import is_unicode, now_iso
from journal.stores import Confinement
from journal.views import SentinelRead, read_sentinel

APPLIED_SET_NAME = "events_applied_set.json"

#: The states :func:`read_applied_set` gives.
APPLIED_SET_STATES = ("missing", "ok", "malformed", "refused")


@dataclass(frozen=True, slots=True)
class AppliedSet:
    """``events_applied_set.json`` as read, with the sentinel read beside it.

    Attributes:
        state: ``missing``; ``ok``; ``malformed`` (not JSON, or a field of the wrong type:
            ignored, as if missing); ``refused`` (a link leading out of the character folder,
            not a regular file, or unreadable: never read).
        after, after_ts: the sentinel id and ``ts`` the record is bound to.
        applied: ids applied past the sentinel, in journal order.
        ts: when the record was written.
        message: what was wrong, for ``malformed`` / ``refused``.
        sentinel: the sentinel as read with the record (the other half of the binding).
    """

    state: str = "missing"
    after: str | None = None
    after_ts: str | None = None
    applied: tuple[str, ...] = ()
    ts: str | None = None
    message: str | None = None
    sentinel: SentinelRead = field(default_factory=lambda: SentinelRead("missing"))


def _opt_str(obj: dict[str, object], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not is_unicode(value):
        raise ValueError(f"{key} is a {type(value).__name__}, not a string or null")
    return value


def _parse(data: bytes, sentinel: SentinelRead) -> AppliedSet:
    try:
        obj = loads_exact(data)
    except ValueError as exc:
        return AppliedSet("malformed", message=f"not valid JSON: {exc}", sentinel=sentinel)
    if not isinstance(obj, dict):
        return AppliedSet("malformed", message=f"top level is a {type(obj).__name__}", sentinel=sentinel)
    try:
        applied = obj.get("applied", [])
        if not isinstance(applied, list) or not all(isinstance(a, str) and a and is_unicode(a) for a in applied):
            raise ValueError("applied is not a list of event ids")
        ts = obj.get("ts")
        return AppliedSet(
            "ok",
            _opt_str(obj, "after"),
            _opt_str(obj, "after_ts"),
            tuple(applied),
            ts if isinstance(ts, str) else None,
            sentinel=sentinel,
        )
    except ValueError as exc:
        return AppliedSet("malformed", message=str(exc), sentinel=sentinel)


def read_applied_set(char_dir: str | os.PathLike[str], sentinel: SentinelRead | None = None) -> AppliedSet:
    """Read ``events_applied_set.json`` of a character folder; never raises.

    Args:
        sentinel: the sentinel read at the same moment (read here when not given).
    """
    cd = Path(char_dir)
    if sentinel is None:
        sentinel = read_sentinel(cd)
    try:
        path = Confinement(cd).view_path(APPLIED_SET_NAME)
    except ViewCorruptError as exc:
        return AppliedSet("refused", message=str(exc), sentinel=sentinel)
    try:
        with fs.open_regular(path) as fh:
            data = fh.read()
    except FileNotFoundError:
        return AppliedSet("missing", sentinel=sentinel)
    except OSError as exc:
        return AppliedSet("refused", message=f"cannot read: {exc.strerror or exc}", sentinel=sentinel)
    return _parse(data, sentinel)


def applied_set_valid(aset: AppliedSet, sentinel_event_id: str | None) -> bool:
    """Whether the record counts: it was read whole, and the sentinel (whose id is
    ``sentinel_event_id``) is still the one it was written beside: same id, same ``ts``."""
    return (
        aset.state == "ok"
        and aset.after == sentinel_event_id
        and aset.sentinel.event_id == sentinel_event_id
        and aset.after_ts == aset.sentinel.ts
    )


def applied_beyond(aset: AppliedSet, sentinel_event_id: str | None) -> frozenset[str]:
    """The ids applied past the sentinel that replay must never run again: ``aset.applied`` when
    the record is valid for this sentinel (:func:`applied_set_valid`), else nothing."""
    return frozenset(aset.applied) if applied_set_valid(aset, sentinel_event_id) else frozenset()


def applied_set_bytes(sentinel: SentinelRead, applied: Iterable[str], ts: str | None = None) -> bytes:
    """The file's bytes for a record bound to ``sentinel`` (``ts``: now when not given)."""
    obj = {"after": sentinel.event_id, "after_ts": sentinel.ts, "applied": list(applied), "ts": ts or now_iso()}
    return dumps_view(obj)


def same_record(aset: AppliedSet, sentinel: SentinelRead, applied: Iterable[str]) -> bool:
    """Whether ``aset`` already says exactly this, its ``ts`` aside (then nothing is written)."""
    return (
        aset.state == "ok"
        and aset.after == sentinel.event_id
        and aset.after_ts == sentinel.ts
        and list(aset.applied) == list(applied)
    )


def write_applied_set(
    char_dir: str | os.PathLike[str], sentinel: SentinelRead, applied: Iterable[str], *, durable: bool = True
) -> None:
    """Write the record atomically (as the sentinel is written), bound to ``sentinel``.

    Raises:
        ViewCorruptError: the file is a link leading out of the character folder; nothing written.
        OSError: the write failed (the old file is kept whole).
    """
    path = Confinement(char_dir).view_path(APPLIED_SET_NAME)
    fs.atomic_write_bytes(path, applied_set_bytes(sentinel, applied), durable=durable)


def remove_applied_set(char_dir: str | os.PathLike[str]) -> bool:
    """Remove the record, if there is one (nothing is applied past the sentinel any more).

    Returns:
        Whether a file was removed.

    Raises:
        ViewCorruptError: the name is a link leading out of the character folder (left alone).
        OSError: the removal failed.
    """
    path = Confinement(char_dir).view_path(APPLIED_SET_NAME)
    if not os.path.lexists(path):
        return False
    fs.remove_file(path)
    return True
