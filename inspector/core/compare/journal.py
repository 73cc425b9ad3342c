"""The journal part of a comparison: common prefix, divergence, events only on one side, damage and
the sentinel of each side. Both journals are read by the one reader (:mod:`journal.reader`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from inspector.core.compare.value import DamageRef, EventRef, JournalDiff, JournalSide
from journal.events import JOURNAL_NAME
from journal.reader import iter_journal
from journal.sentinel import locate_sentinel
from journal.views import read_sentinel

_ID, _TYPE, _LINE = attrgetter("event_id"), attrgetter("type"), attrgetter("line")


@dataclass(slots=True)
class _Read:
    side: JournalSide
    ids: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


def _read(char_dir: Path) -> _Read:
    side = JournalSide()
    out = _Read(side)
    path = char_dir / JOURNAL_NAME
    try:
        for events, defects in iter_journal(path, summaries=True):
            # map over attribute getters runs in C: a million events cost little here
            out.ids.extend(map(_ID, events))
            out.types.extend(map(_TYPE, events))
            out.lines.extend(map(_LINE, events))
            side.damage += [DamageRef(d.line, d.kind, d.recovered_event_id) for d in defects]
        side.present = True
    except FileNotFoundError:
        pass
    except OSError as exc:
        side.present = True
        side.error = f"cannot read {JOURNAL_NAME}: {exc.strerror or exc}"
    side.events = len(out.ids)
    side.lines = max([*out.lines[-1:], *(d.line for d in side.damage[-1:])], default=0)
    ids = out.ids

    def first_index(event_id: str) -> int | None:
        """The first event with that id, as the sentinel rule reads it (a search in C)."""
        try:
            return ids.index(event_id)
        except ValueError:
            return None

    info = locate_sentinel(read_sentinel(char_dir), first_index)
    side.sentinel_state, side.sentinel_event_id, side.sentinel_index = info.state, info.event_id, info.index
    return out


def _only(side: _Read, start: int, other: set[str]) -> list[EventRef]:
    """The events of ``side`` from ``start`` on whose id ``other`` does not hold, in order."""
    rows = zip(range(start, len(side.ids)), side.ids[start:], side.types[start:], side.lines[start:], strict=True)
    return [EventRef._make(r) for r in rows if r[1] not in other]


def compare_journals(a_dir: str | os.PathLike[str], b_dir: str | os.PathLike[str]) -> JournalDiff:
    """Compare the journals of two character folders (only read)."""
    a, b = _read(Path(a_dir)), _read(Path(b_dir))
    diff = JournalDiff(a.side, b.side)
    n = min(len(a.ids), len(b.ids))
    prefix = 0
    # Compare in slices: list equality runs in C, so a million equal ids cost little.
    step = 4096
    while prefix < n:
        end = min(n, prefix + step)
        if a.ids[prefix:end] == b.ids[prefix:end]:
            prefix = end
            continue
        while a.ids[prefix] == b.ids[prefix]:
            prefix += 1
        break
    diff.common_prefix = prefix
    # Where they part: the first index one side holds and the other does not hold the same.
    diff.diverges_at = prefix if prefix < max(len(a.ids), len(b.ids)) else None
    # Past the common prefix only: an id of one side's rest cannot be in the other's prefix, which
    # is this side's own prefix (the reader keeps the first of a repeated id).
    rest_a, rest_b = set(a.ids[prefix:]), set(b.ids[prefix:])
    diff.only_a = _only(a, prefix, rest_b)
    diff.only_b = _only(b, prefix, rest_a)
    return diff
