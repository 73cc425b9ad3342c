"""The journal part of a comparison: common prefix, divergence, events only on one side, damage and
the sentinel of each side. Both journals are read by the one reader (:mod:`journal.reader`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.compare.value import DamageRef, EventRef, JournalDiff, JournalSide
from journal.events import JOURNAL_NAME
from journal.reader import iter_journal
from journal.sentinel import locate_sentinel
from journal.views import read_sentinel


@dataclass(slots=True)
class _Read:
    side: JournalSide
    ids: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)


def _read(char_dir: Path) -> _Read:
    side = JournalSide()
    out = _Read(side)
    path = char_dir / JOURNAL_NAME
    try:
        for events, defects in iter_journal(path, summaries=True):
            for e in events:
                out.ids.append(e.event_id)
                out.types.append(e.type)
                out.lines.append(e.line)
            side.damage += [DamageRef(d.line, d.kind, d.recovered_event_id) for d in defects]
        side.present = True
    except FileNotFoundError:
        pass
    except OSError as exc:
        side.present = True
        side.error = f"cannot read {JOURNAL_NAME}: {exc.strerror or exc}"
    side.events = len(out.ids)
    side.lines = max([*out.lines[-1:], *(d.line for d in side.damage[-1:])], default=0)
    index = out.index
    for i, eid in enumerate(out.ids):
        index.setdefault(eid, i)  # the first event with an id, as the sentinel rule reads it
    info = locate_sentinel(read_sentinel(char_dir), index.get)
    side.sentinel_state, side.sentinel_event_id, side.sentinel_index = info.state, info.event_id, info.index
    return out


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
    diff.only_a = [
        EventRef(i, a.ids[i], a.types[i], a.lines[i]) for i in range(prefix, len(a.ids)) if a.ids[i] not in b.index
    ]
    diff.only_b = [
        EventRef(i, b.ids[i], b.types[i], b.lines[i]) for i in range(prefix, len(b.ids)) if b.ids[i] not in a.index
    ]
    return diff
