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
one, so the newest payload for each entry still wins. :class:`Rerun` is the one home of that rule
(the reconciler and the diagnosis both ask it).

The sentinel only ever names an event the memory server's reader can see (memory-format §9.3):
an event our reader recovers from a glued line is invisible to the server, and a sentinel naming
it would make the server's next start replay the whole journal, rolling evidence back.
:class:`SentinelRun` is the one home of where the sentinel goes over a run of settled events:
never onto such an event; the invisible applied events after the last visible one are recorded
here instead (the server skips them anyway, since it cannot see them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from journal import fs
from journal.codec import dumps_view, loads_exact
from journal.errors import ViewCorruptError
from journal.events import Clock, is_unicode, now_iso
from journal.stores import Confinement
from journal.views import SentinelRead, read_sentinel

if TYPE_CHECKING:
    from journal.holds import Entry

APPLIED_SET_NAME = "events_applied_set.json"

#: A larger file is not read (``refused``): a set of 1.5 million ids is about this size, and
#: replay shrinks the set whenever the sentinel moves.
APPLIED_SET_MAX_BYTES = 64 << 20

#: The states :func:`read_applied_set` gives.
APPLIED_SET_STATES = ("missing", "ok", "malformed", "refused")


@dataclass(frozen=True, slots=True)
class AppliedSet:
    """``events_applied_set.json`` as read, with the sentinel read beside it.

    Attributes:
        state: ``missing``; ``ok``; ``malformed`` (not JSON, or a field of the wrong type:
            ignored, as if missing); ``refused`` (a link leading out of the character folder,
            not a regular file, unreadable, or larger than :data:`APPLIED_SET_MAX_BYTES`: never
            read).
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
    limit = APPLIED_SET_MAX_BYTES
    try:
        with fs.open_regular(path) as fh:
            data = fh.read(limit + 1)
    except FileNotFoundError:
        return AppliedSet("missing", sentinel=sentinel)
    except OSError as exc:
        return AppliedSet(
            "refused", message=f"{APPLIED_SET_NAME} cannot be read: {exc.strerror or exc}", sentinel=sentinel
        )
    if len(data) > limit:
        return AppliedSet(
            "refused", message=f"{APPLIED_SET_NAME} is larger than {limit:,} bytes; not read", sentinel=sentinel
        )
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


def record_step(current: AppliedSet, sentinel: SentinelRead, applied: list[str]) -> str:
    """What the end of a round does to the record, the sentinel being ``sentinel`` and ``applied``
    the ids to keep past it: ``write`` it, ``remove`` it (nothing is left past the sentinel, and a
    file is there), or ``keep`` it as it is (it already says exactly this, or there is none to
    remove). The one home of that step, for the reconciler and the prediction of a run."""
    if not applied:
        return "remove" if current.state in ("ok", "malformed") else "keep"
    return "keep" if same_record(current, sentinel, applied) else "write"


def write_applied_set(
    char_dir: str | os.PathLike[str],
    sentinel: SentinelRead,
    applied: Iterable[str],
    *,
    durable: bool = True,
    clock: Clock | None = None,
) -> None:
    """Write the record atomically (as the sentinel is written), bound to ``sentinel``; ``clock``
    gives its ``ts`` (default: :func:`journal.events.now_iso`).

    Raises:
        ViewCorruptError: the file is a link leading out of the character folder; nothing written.
        OSError: the write failed (the old file is kept whole).
    """
    path = Confinement(char_dir).view_path(APPLIED_SET_NAME)
    ts = None if clock is None else clock()
    fs.atomic_write_bytes(path, applied_set_bytes(sentinel, applied, ts), durable=durable)


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


class Rerun:
    """Which events of the valid applied set run again in one pass over the journal, in file
    order: the one home of "an applied-set event runs again when an earlier event sharing one of
    its entries is applied in this round".

    The rule, for an event of the applied set (entries from :func:`journal.holds.event_entries`):

    * It is **skipped** (already applied; limit (a): a later start never applies again an event it
      already applied), unless an event earlier in this pass that shares one of its entries ran
      (its handler returned): that one put an older payload over the entry, so this one **runs
      again** after it and the newest payload for each entry still wins.
    * A re-run counts as a run: its payload is older than later applied-set events of its
      entries, so they run again too.
    * Entries unknown (``None``) on either side re-run nothing. An event whose payload names no
      entry is nobody's newest payload, and it cannot have overwritten an entry: each of the five
      handlers returns before it loads a view when the payload names no entry (and a type outside
      them has no handler, so it never runs). So an applied-set event of unknown entries is always
      skipped, never re-run, and holds nothing (it is applied; only an event that is run can be
      held), and a run event of unknown entries makes nothing run again. Re-running on "anything
      earlier ran" instead would apply an already-applied snapshot again for nothing (limit (a)).

    Args:
        applied: the ids the valid applied set names (:func:`applied_beyond`).

    Attributes:
        applied: those ids (the reconciler adds the ones a live write records during the pass).
    """

    __slots__ = ("_ran", "applied")

    def __init__(self, applied: Iterable[str] = ()) -> None:
        self.applied: set[str] = set(applied)
        self._ran: set[Entry] = set()

    def __contains__(self, event_id: object) -> bool:
        return event_id in self.applied

    def add(self, event_ids: Iterable[str]) -> None:
        """More ids applied past the sentinel (a live write recorded itself during the pass)."""
        self.applied.update(event_ids)

    def admit_applied(self, event_id: str, entries: frozenset[Entry] | None) -> bool:
        """Whether event ``event_id``, touching ``entries``, is skipped as already applied.

        ``True``: it is in the applied set and nothing of its entries ran earlier in this pass:
        skip it (it counts as applied). ``False``: it is not in the applied set (hold or run it as
        any other event), or it must run again.
        """
        if event_id not in self.applied:
            return False
        return entries is None or self._ran.isdisjoint(entries)

    def note_applied(self, event_id: str, entries: frozenset[Entry] | None) -> None:
        """Event ``event_id``'s handler ran in this pass (first run or re-run); ``entries`` are
        the entries it touches (``None``: unknown, which re-runs nothing)."""
        del event_id  # the rule is per entry; the id is taken for symmetry with admit_applied
        if entries is not None:
            self._ran.update(entries)


class SentinelRun:
    """Where the sentinel goes over a run of settled events (applied, already applied, parked)
    from it: the one home of "the sentinel only ever names an event the memory server's reader
    can see" (memory-format §9.3; what it cannot see: :func:`journal.serverrules.server_reader`).

    Over a visible settled event the sentinel advances as before. An invisible one (recovered
    from a glued line) is never named: the sentinel stays at the last visible settled event, and
    the invisible applied ones after it are recorded in the applied set, so our library never
    applies them again; the server skips them anyway, since it cannot see them.

    Start one with :func:`sentinel_run`.

    Attributes:
        at: where the sentinel goes: the last visible settled event (or where the run started).
        invisible: applied events after ``at`` the server cannot see, in order: they go into the
            applied set bound to the sentinel at ``at``.
    """

    __slots__ = ("at", "invisible")

    def __init__(self, at: str | None, invisible: Iterable[str] = ()) -> None:
        self.at = at
        self.invisible: list[str] = list(invisible)

    def settle(self, event_id: str, *, applied: bool, visible: bool) -> bool:
        """The next event of the run is settled (``applied``: applied or already applied; else
        parked). Returns whether the sentinel may now name it."""
        if visible:
            self.at = event_id
            self.invisible.clear()
            return True
        if applied:
            self.invisible.append(event_id)
        return False


def sentinel_run(sentinel_event_id: str | None, behind: Iterable[tuple[str, bool]]) -> SentinelRun:
    """The run that starts at the sentinel.

    When the sentinel names an event the server cannot see (the memory server's own live write of
    an event it glued onto a torn fragment), the run starts at the last event before it that the
    server can see (``None``: there is none, and the sentinel goes to null, which the server reads
    the same way as an id it cannot see: from the first record, all of them invisible up to there),
    and the invisible events from there up to the sentinel's, applied by the sentinel's claim,
    are recorded in the applied set.

    Args:
        behind: the journal's events up to and including the sentinel's, newest first, each as
            ``(event_id, visible)``; empty when the sentinel names no event of the journal. Read
            lazily: only as far back as the last visible event.
    """
    invisible: list[str] = []
    for event_id, visible in behind:
        if visible:
            return SentinelRun(event_id, reversed(invisible))
        invisible.append(event_id)
    return SentinelRun(None, reversed(invisible)) if invisible else SentinelRun(sentinel_event_id)
