"""Per-entry holds: which later events an event that cannot be applied keeps back (the one home of
that rule; design record, guarantee 3, read per entry).

The design record says replay "stops at the first event it cannot apply", because later transitions
may depend on the failed one. Later transitions of *other* entries do not: an evidence update of
reflection ``ref_b`` does not depend on a torn merge of persona entry ``prom_a``. So replay stops
per entry. An event's *entries* are the view entries it touches (:func:`event_entries`); an event
that cannot be applied holds its entries, and every later event that touches a held entry is held
too, with all of its entries (holding is transitive). An event whose entries cannot be known, and
a failure that concerns a whole view (:func:`stops_everything`), hold everything after them, which
is the old global stop.

Persona entries are matched by their bare id, without the section key: ``absorbed_into`` (the
persona entry a reflection was merged into) carries no section. Two entries of different sections
with one id then hold each other, which only holds more than needed, and holding is always safe.
"""

from __future__ import annotations

from typing import Any

from journal.events import ALL_EVENT_TYPES, EntryKeys
from journal.serverrules import server_outcome

#: ``("reflection", id)`` or ``("persona", id)``.
Entry = tuple[str, str]

#: Block reasons that concern more than the event's own entries: a view that cannot be read holds
#: every entry in it (and a sentinel that cannot be written holds the round).
_GLOBAL_REASONS = frozenset({"corrupt_view", "sentinel_write"})


def _ids(*values: Any) -> list[str]:
    return [v for v in values if isinstance(v, str) and v]


def event_entries(event_type: object, payload: Any) -> frozenset[Entry] | None:
    """The view entries an event touches; ``None`` when they cannot be known.

    * ``reflection.*``: the reflection ``reflection_id``; for ``reflection.state_changed`` also the
      persona entry ``absorbed_into`` names, and for an archive event the id of its
      ``entry_snapshot`` (the entry the shard receives).
    * ``persona.*``: the persona entry ``entry_id`` (matched by its bare id), and for
      ``persona.fact_added`` the id of its ``entry_snapshot`` (the entry the shard receives;
      :func:`journal.handlers.archive_target` takes it first).
    * An undeclared type, a declared type outside those two families (``fact.*``,
      ``correction.*``), a payload that is not an object, or one that names no entry: ``None``.

    Args:
        event_type: the record's type.
        payload: the parsed payload, or its :class:`~journal.events.EntryKeys`.
    """
    if not isinstance(event_type, str) or event_type not in ALL_EVENT_TYPES:
        return None
    if not isinstance(payload, (dict, EntryKeys)):
        return None
    snapshot = payload.get("entry_snapshot")
    snapshot_id = snapshot.get("id") if isinstance(snapshot, dict) else None
    found: list[Entry] = []
    if event_type.startswith("reflection."):
        found += [("reflection", r) for r in _ids(payload.get("reflection_id"))]
        if event_type == "reflection.state_changed":
            found += [("persona", p) for p in _ids(payload.get("absorbed_into"))]
            if payload.get("to") == "archived":
                found += [("reflection", r) for r in _ids(snapshot_id)]
    elif event_type.startswith("persona."):
        found += [("persona", p) for p in _ids(payload.get("entry_id"))]
        if event_type == "persona.fact_added":
            found += [("persona", p) for p in _ids(snapshot_id)]
    return frozenset(found) if found else None


def stops_everything(reason: str) -> bool:
    """Whether an event blocked for ``reason`` holds everything after it, whatever it touches:
    ``corrupt_view`` (the view holds every entry), ``sentinel_write`` (the round stops), and every
    reason where the memory server does not stop (:func:`journal.serverrules.server_outcome`:
    ``corrupt_shard``, ``bad_shard_name``).

    The last: a per-entry hold is safe only where the server stops too. The sentinel stays before
    the held event; a server that moves past it would then apply again every event our replay
    applied past it (it never reads the applied set), old snapshots over newer views, and end up
    worse off than with its own rule. Holding everything applies nothing past it, as before."""
    return reason in _GLOBAL_REASONS or server_outcome(reason) != "stop"


class Holds:
    """What is held so far in one pass over the journal, in file order.

    Call :meth:`admit` for each event before applying it, and :meth:`hold` when it could not be
    applied.

    Args:
        entries: entries already held (a live writer continuing a recorded pass).
        everything: everything is already held.
    """

    __slots__ = ("_entries", "_everything")

    def __init__(self, entries: frozenset[Entry] | set[Entry] = frozenset(), everything: bool = False) -> None:
        self._entries: set[Entry] = set(entries)
        self._everything = everything

    def admit(self, entries: frozenset[Entry] | None) -> bool:
        """Whether an event touching ``entries`` may be applied now.

        ``False``: it is held, and its entries are held from now on. An event whose entries are
        unknown (``None``) is admitted only while nothing is held; otherwise it holds everything.
        """
        if self._everything:
            return False
        if entries is None:
            if self._entries:
                self._everything = True
                return False
            return True
        if self._entries.isdisjoint(entries):
            return True
        self._entries.update(entries)
        return False

    def hold(self, entries: frozenset[Entry] | None, reason: str) -> None:
        """An admitted event could not be applied, for ``reason``: hold its entries, or everything
        when its entries are unknown or the reason :func:`stops_everything`."""
        if entries is not None:
            self._entries.update(entries)
        if entries is None or stops_everything(reason):
            self._everything = True

    @property
    def everything(self) -> bool:
        """Everything after this point is held."""
        return self._everything

    @property
    def entries(self) -> frozenset[Entry]:
        """The entries held so far (with :attr:`everything`, the known ones among them)."""
        return frozenset(self._entries)

    @property
    def any(self) -> bool:
        """Whether anything is held."""
        return self._everything or bool(self._entries)
