"""The journal part of a comparison, record by record (issue 25 items 1 and 3): the common prefix
by id, the divergence, the events only on one side, the events both hold whose type, ts or payload
differs (at field paths, by :func:`~inspector.core.compare.tree.value_changes`), and the damage,
which is content: a damaged line is equal to one of the other side of the same kind and content
after as many events.

Each side's events, damage and sentinel are its diagnosis's (:mod:`journal.diagnosis`), read once.
The records themselves are read again only from the first byte where the two files differ: every
line before it is the same bytes on both sides, hence the same records at the same positions.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from inspector.core.compare.files import parse
from inspector.core.compare.tree import Raw, ValueChange, value_changes
from inspector.core.compare.value import DamageRef, EventChange, EventRef, JournalDiff, JournalSide
from journal import fs
from journal.diagnosis import CharacterDiagnosis
from journal.events import JOURNAL_NAME, Event
from journal.reader import Defect, is_damaged_line, iter_journal_from

_CHUNK = 1 << 20


def _side(diag: CharacterDiagnosis) -> JournalSide:
    s = diag.sentinel
    return JournalSide(
        present=diag.journal.present,
        events=len(diag.events),
        lines=diag.journal.lines,
        damage=[DamageRef(d.line, d.kind, d.recovered_event_id) for d in _damage(diag)],
        sentinel_state=s.state,
        sentinel_event_id=s.event_id,
        sentinel_index=s.index,
        error=diag.journal.unreadable,
    )


def _damage(diag: CharacterDiagnosis) -> list[Defect]:
    return [d for d in diag.defects if is_damaged_line(d)]


def first_difference(a: Path, b: Path) -> int:
    """The offset of the start of the line holding the first byte where two journals differ (the
    end of the shorter when one is a prefix of the other; 0 when either cannot be read)."""
    try:
        with fs.open_regular(a) as fa, fs.open_regular(b) as fb:
            at = 0
            while True:
                x, y = fa.read(_CHUNK), fb.read(_CHUNK)
                if x != y:
                    at += _common_length(x, y)
                    break
                if not x:
                    return at
                at += len(x)
            return _line_start(fa, at)
    except OSError:
        return 0


def _common_length(x: bytes, y: bytes) -> int:
    """How many bytes two strings share from the first (a binary search of slice compares)."""
    lo, hi = 0, min(len(x), len(y))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if x[lo:mid] == y[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _line_start(fh: Any, at: int) -> int:
    """The offset of the start of the line holding byte ``at`` of the open file ``fh``."""
    size = 4096
    while True:
        begin = max(0, at - size)
        fh.seek(begin)
        found = fh.read(at - begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        if begin == 0:
            return 0
        size *= 4


def _records(path: Path, start: int, offsets: dict[int, int]) -> Iterator[tuple[int, Event]]:
    """``(index, record)`` of the diagnosis's events from byte ``start`` on, matched by offset (a
    copy of an id the whole read took as a duplicate is left out)."""
    for events, _defects in iter_journal_from(path, start, 0):
        for ev in events:
            index = offsets.get(ev.offset)
            if index is not None:
                yield index, ev


def _record_value(ev: Event) -> dict[str, Any]:
    return {"type": ev.type, "ts": ev.ts, "payload": ev.payload}


def _changed(a: Event, b: Event) -> tuple[tuple[ValueChange, ...], int]:
    """How two records of one id differ (``((), 0)``: they do not, key order aside)."""
    if a.type == b.type and a.ts == b.ts and bytes(a.body) == bytes(b.body):
        return (), 0
    try:
        found = value_changes(_record_value(a), _record_value(b))
    except ValueError:
        return (ValueChange("payload", "changed", None, None),), 1
    return tuple(found.items), found.total


def _content_changes(
    a_path: Path,
    b_path: Path,
    start: int,
    a_diag: CharacterDiagnosis,
    b_diag: CharacterDiagnosis,
    ids: tuple[list[str], list[str]],
) -> list[EventChange]:
    """The events both journals hold past ``start`` whose records differ, in A's order (``ids``:
    each side's event ids, in order)."""
    a_off, b_off = a_diag.events.offsets(), b_diag.events.offsets()
    ra, rb = bisect_left(a_off, start), bisect_left(b_off, start)
    a_ids, b_ids = ids
    both = set(a_ids[ra:]) & set(b_ids[rb:])
    if not both:
        return []
    kept: dict[str, tuple[int, Event]] = {}
    for index, ev in _records(a_path, start, {a_off[i]: i for i in range(ra, len(a_off))}):
        if ev.event_id in both:
            kept[ev.event_id] = (index, ev)
    out: list[EventChange] = []
    for index_b, ev in _records(b_path, start, {b_off[i]: i for i in range(rb, len(b_off))}):
        found = kept.get(ev.event_id)
        if found is None:
            continue
        index_a, ev_a = found
        changes, total = _changed(ev_a, ev)
        if total:
            out.append(EventChange(ev.event_id, index_a, index_b, ev_a.type, changes, total))
    out.sort(key=lambda e: e.index_a)
    return out


def _damage_key(d: Defect, events_before: int, fh: Any) -> tuple[int, str, str]:
    """What a damaged line is, as content: after how many events, its kind, and its value (parsed
    when it is JSON, else its bytes)."""
    fh.seek(d.offset)
    value = parse(fh.read(d.length))
    if isinstance(value, Raw):
        text = "raw:" + value.data.hex()
    else:
        try:
            text = "json:" + json.dumps(value, sort_keys=True, ensure_ascii=True)
        except (RecursionError, ValueError):
            fh.seek(d.offset)
            text = "raw:" + fh.read(d.length).hex()
    return events_before, d.kind, text


def _damage_only(
    a_path: Path, b_path: Path, start: int, a_diag: CharacterDiagnosis, b_diag: CharacterDiagnosis
) -> tuple[list[DamageRef], list[DamageRef]]:
    """The damaged lines past ``start`` of each side that the other side lacks, by content."""

    def keyed(path: Path, diag: CharacterDiagnosis) -> list[tuple[tuple[int, str, str], Defect]]:
        rest = [d for d in _damage(diag) if d.offset >= start]
        if not rest:
            return []
        offsets = diag.events.offsets()
        try:
            with fs.open_regular(path) as fh:
                return [(_damage_key(d, bisect_left(offsets, d.offset), fh), d) for d in rest]
        except OSError:
            return []

    a, b = keyed(a_path, a_diag), keyed(b_path, b_diag)
    ca, cb = Counter(k for k, _ in a), Counter(k for k, _ in b)

    def only(side: list[tuple[tuple[int, str, str], Defect]], other: Counter[tuple[int, str, str]]) -> list[DamageRef]:
        left = Counter(other)
        out = []
        for k, d in side:
            if left[k] > 0:
                left[k] -= 1
            else:
                out.append(DamageRef(d.line, d.kind, d.recovered_event_id))
        return out

    return only(a, cb), only(b, ca)


def _only(ids: list[str], types: list[str], lines: list[int], start: int, other: set[str]) -> list[EventRef]:
    """The events from ``start`` on whose id ``other`` does not hold, in order."""
    rows = zip(range(start, len(ids)), ids[start:], types[start:], lines[start:], strict=True)
    return [EventRef._make(r) for r in rows if r[1] not in other]


def _prefix(a: list[str], b: list[str]) -> int:
    """How many ids, from the first, the two lists share in order (compared in slices: list
    equality runs in C, so a million equal ids cost little)."""
    n = min(len(a), len(b))
    prefix = 0
    step = 4096
    while prefix < n:
        end = min(n, prefix + step)
        if a[prefix:end] == b[prefix:end]:
            prefix = end
            continue
        while a[prefix] == b[prefix]:
            prefix += 1
        break
    return prefix


def compare_journals(
    a_dir: str | os.PathLike[str],
    b_dir: str | os.PathLike[str],
    a_diag: CharacterDiagnosis,
    b_diag: CharacterDiagnosis,
    ids: tuple[list[str], list[str]] | None = None,
) -> JournalDiff:
    """Compare the journals of two character folders (only read), given their diagnoses (and each
    side's event ids in order, when the caller has them already)."""
    diff = JournalDiff(_side(a_diag), _side(b_diag))
    a_ids, b_ids = ids if ids is not None else (a_diag.events.event_ids(), b_diag.events.event_ids())
    prefix = _prefix(a_ids, b_ids)
    diff.common_prefix = prefix
    # Where they part: the first index one side holds and the other does not hold the same.
    diff.diverges_at = prefix if prefix < max(len(a_ids), len(b_ids)) else None
    # Past the common prefix only: an id of one side's rest cannot be in the other's prefix, which
    # is this side's own prefix (the reader keeps the first of a repeated id).
    rest_a, rest_b = set(a_ids[prefix:]), set(b_ids[prefix:])
    diff.only_a = _only(a_ids, a_diag.events.types(), a_diag.events.lines(), prefix, rest_b)
    diff.only_b = _only(b_ids, b_diag.events.types(), b_diag.events.lines(), prefix, rest_a)
    if diff.a.error is None and diff.b.error is None and diff.a.present and diff.b.present:
        a_path, b_path = Path(a_dir) / JOURNAL_NAME, Path(b_dir) / JOURNAL_NAME
        start = first_difference(a_path, b_path)
        diff.changed = _content_changes(a_path, b_path, start, a_diag, b_diag, (a_ids, b_ids))
        diff.damage_only_a, diff.damage_only_b = _damage_only(a_path, b_path, start, a_diag, b_diag)
    else:
        # One side has no journal (or it is unreadable: the comparison's problems say so): all its
        # damage is its own.
        diff.damage_only_a, diff.damage_only_b = list(diff.a.damage), list(diff.b.damage)
    return diff
