"""Property (issue 25, done-when): for random pairs of folders from ``journal.fixtures`` with random
edits on either side (payload fields, record times, views, shards, archives, the outbox, park
records, the sentinel, unknown files, damage, and edits that change no value), ``diff`` reports
identical exactly when no file differs by the rule of item 2, and names each changed file and each
event whose record changed.

The oracle below is independent of the code under test and plain: each file is read with
``json.loads`` (JSON files and line files) or as bytes, and two values are equal when they have the
same JSON types and values, key order aside.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.compare import compare_paths
from journal import fixtures

# -- the oracle: what differs, by the rule of item 2, written plainly --------------------------------

#: The JSON files the format notes list (memory-format §1.2), the sentinel and the applied set.
ORACLE_JSON = {
    "facts.json",
    "facts_archive.json",
    "reflections.json",
    "reflections_archive.json",
    "surfaced.json",
    "synth_backoff.json",
    "persona.json",
    "persona_corrections.json",
    "cursors.json",
    "recent.json",
    "recent_meta.json",
    "settings.json",
    "subject_forget_tombstones.json",
    "external_import_state.json",
    "prompt_locale.json",
    "scoped_prompt_locales.json",
    "theater_runs.json",
    "idempotency_keys.json",
    "scoped_tombstones.json",
    "events_applied.json",
    "events_applied_set.json",
}
ORACLE_LINES = {"events.ndjson", "outbox.ndjson", "events_parked.ndjson"}
ORACLE_SHARD = re.compile(
    r"(reflection_archive|persona_archive)/(\d{4}-\d{2}-\d{2}_[0-9a-f]{8}\.json|\.migrated_from_flat)"
)


class NotJson:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotJson) and other.data == self.data


def oracle_parse(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:
        return NotJson(data)


def oracle_value(rel: str, data: bytes) -> Any:
    if rel in ORACLE_JSON or ORACLE_SHARD.fullmatch(rel):
        return oracle_parse(data)
    if rel in ORACLE_LINES:
        *lines, tail = data.split(b"\n")
        values = [oracle_parse(line) for line in lines if line.strip()]
        return values + ([NotJson(tail)] if tail.strip() else [])
    return NotJson(data)


def same(x: Any, y: Any) -> bool:
    """Same JSON type and value; object keys in any order."""
    if type(x) is not type(y):
        return False
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
    return x == y


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def oracle_files(a: Path, b: Path) -> set[str]:
    """Every file that differs between the two folders."""
    fa, fb = files_of(a), files_of(b)
    return {
        rel
        for rel in fa.keys() | fb.keys()
        if rel not in fa or rel not in fb or not same(oracle_value(rel, fa[rel]), oracle_value(rel, fb[rel]))
    }


def oracle_records(folder: Path) -> dict[str, Any]:
    """Each event id's first record (type, ts, payload), from the journal's lines that are JSON."""
    out: dict[str, Any] = {}
    path = folder / "events.ndjson"
    for line in path.read_bytes().split(b"\n") if path.is_file() else []:
        obj = oracle_parse(line)
        if isinstance(obj, dict) and isinstance(obj.get("event_id"), str) and obj["event_id"]:
            out.setdefault(obj["event_id"], [obj.get("type"), obj.get("ts"), obj.get("payload")])
    return out


def oracle_changed_events(a: Path, b: Path) -> set[str]:
    ra, rb = oracle_records(a), oracle_records(b)
    return {eid for eid in ra.keys() & rb.keys() if not same(ra[eid], rb[eid])}


# -- random edits --------------------------------------------------------------------------------------


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path


def _mutate_leaf(value: Any, rng: random.Random) -> Any:
    """``value`` with one random leaf changed (a number moved or turned float, a text extended, a
    boolean flipped, a null made 0)."""
    leaves = list(_leaves(value))
    if not leaves or leaves == [()]:
        return [value, 1]
    path = rng.choice(leaves)
    holder = value
    for k in path[:-1]:
        holder = holder[k]
    old = holder[path[-1]]
    if isinstance(old, bool):
        new: Any = not old
    elif isinstance(old, int):
        new = float(old) if rng.random() < 0.5 else old + rng.randint(1, 9)
    elif isinstance(old, float):
        new = old + rng.choice((0.5, 97.0))
    elif isinstance(old, str):
        new = old + "x"
    else:
        new = 0
    holder[path[-1]] = new
    return value


def _json_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if p.is_file())


def _rewrite_json(path: Path, value: Any, rng: random.Random) -> None:
    indent = rng.choice((None, 1, 2))
    path.write_text(json.dumps(value, indent=indent, ensure_ascii=rng.random() < 0.5), encoding="utf-8")


def edit_a_json_file(folder: Path, rng: random.Random) -> None:
    files = [p for p in _json_files(folder) if _parses(p)]
    if files:
        path = rng.choice(files)
        _rewrite_json(path, _mutate_leaf(json.loads(path.read_bytes()), rng), rng)


def reformat_a_json_file(folder: Path, rng: random.Random) -> None:
    """Key order and spacing only: no difference."""
    files = [p for p in _json_files(folder) if _parses(p)]
    if files:
        path = rng.choice(files)
        _rewrite_json(path, _reorder(json.loads(path.read_bytes())), rng)


def _reorder(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reorder(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reorder(v) for v in value]
    return value


def _parses(path: Path) -> bool:
    try:
        json.loads(path.read_bytes())
    except ValueError:
        return False
    return True


def _journal_lines(folder: Path) -> tuple[list[bytes], bytes] | None:
    path = folder / "events.ndjson"
    if not path.is_file():
        return None
    *lines, tail = path.read_bytes().split(b"\n")
    return lines, tail


def _write_journal(folder: Path, lines: list[bytes], tail: bytes) -> None:
    (folder / "events.ndjson").write_bytes(b"\n".join([*lines, tail]))


def _record_lines(lines: list[bytes]) -> list[int]:
    out = []
    for i, line in enumerate(lines):
        obj = oracle_parse(line)
        if isinstance(obj, dict) and isinstance(obj.get("payload"), dict) and obj["payload"]:
            out.append(i)
    return out


def edit_a_payload_field(folder: Path, rng: random.Random) -> None:
    got = _journal_lines(folder)
    if got is None or not _record_lines(got[0]):
        return
    lines, tail = got
    i = rng.choice(_record_lines(lines))
    obj = json.loads(lines[i])
    obj["payload"] = _mutate_leaf(obj["payload"], rng)
    lines[i] = json.dumps(obj, ensure_ascii=False).encode()
    _write_journal(folder, lines, tail)


def edit_a_record_ts_or_id(folder: Path, rng: random.Random) -> None:
    got = _journal_lines(folder)
    if got is None or not _record_lines(got[0]):
        return
    lines, tail = got
    i = rng.choice(_record_lines(lines))
    obj = json.loads(lines[i])
    key = rng.choice(("ts", "event_id"))
    obj[key] = f"{obj.get(key)}-{rng.randint(0, 99)}"
    lines[i] = json.dumps(obj).encode()
    _write_journal(folder, lines, tail)


def reformat_a_record(folder: Path, rng: random.Random) -> None:
    """Key order and spacing of one record only: no difference."""
    got = _journal_lines(folder)
    if got is None or not _record_lines(got[0]):
        return
    lines, tail = got
    i = rng.choice(_record_lines(lines))
    obj = _reorder(json.loads(lines[i]))
    lines[i] = json.dumps(obj, separators=(",", ":")).encode()
    _write_journal(folder, lines, tail)


def damage_the_journal(folder: Path, rng: random.Random) -> None:
    """A torn last line, a line that is not JSON, or a second copy of a line."""
    got = _journal_lines(folder)
    if got is None:
        return
    lines, tail = got
    kind = rng.choice(("torn", "garbage", "copy"))
    if kind == "torn" or not lines:
        tail += b'{"event_id": "' + str(rng.randint(0, 9)).encode()
    elif kind == "garbage":
        lines.insert(rng.randint(0, len(lines)), b"{not json " + str(rng.randint(0, 9)).encode())
    else:
        lines.insert(rng.randint(0, len(lines)), rng.choice(lines))
    _write_journal(folder, lines, tail)


def add_a_shard_or_archive(folder: Path, rng: random.Random) -> None:
    name = rng.choice(
        (
            "reflection_archive/2026-06-01_0badcafe.json",
            "persona_archive/2026-06-01_0badcafe.json",
            "facts_archive.json",
            "reflections_archive.json",
            "events_applied_set.json",
        )
    )
    path = folder / name
    path.parent.mkdir(exist_ok=True)
    _rewrite_json(path, [{"id": f"x{rng.randint(0, 3)}", "n": rng.choice((0, 0.0, 1))}], rng)


def edit_the_outbox(folder: Path, rng: random.Random) -> None:
    path = folder / "outbox.ndjson"
    op = f"00000000-0000-4000-8000-{rng.randint(0, 3):012d}"
    line = {"op_id": op, "status": rng.choice(("pending", "done", "attempt")), "ts": "2026-05-02T00:00:00"}
    with open(path, "ab") as fh:
        fh.write(json.dumps(line).encode() + b"\n")


def park_an_event(folder: Path, rng: random.Random) -> None:
    records = list(oracle_records(folder))
    eid = rng.choice(records) if records else "none"
    line = {"event_id": eid, "type": "t", "index": None, "line": None, "event_ts": "", "parked_at": "p",
            "by": "alice", "host": "h", "reason": "r"}  # fmt: skip
    with open(folder / "events_parked.ndjson", "ab") as fh:
        fh.write(json.dumps(line).encode() + b"\n")


def edit_an_unknown_file(folder: Path, rng: random.Random) -> None:
    name = rng.choice(("time_indexed.db", "notes.json", "sub/extra.bin", "facts_archive.json.last_attempt"))
    path = folder / name
    path.parent.mkdir(exist_ok=True)
    data = rng.choice((b'{"a": 1}', b'{"a":1}', b"SQLite format 3\x00", b"2026-05-01T00:00:00"))
    path.write_bytes(data)


def remove_a_file(folder: Path, rng: random.Random) -> None:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if files:
        rng.choice(files).unlink()


EDITS: dict[str, Callable[[Path, random.Random], None]] = {
    f.__name__: f
    for f in (
        edit_a_json_file,
        reformat_a_json_file,
        edit_a_payload_field,
        edit_a_record_ts_or_id,
        reformat_a_record,
        damage_the_journal,
        add_a_shard_or_archive,
        edit_the_outbox,
        park_an_event,
        edit_an_unknown_file,
        remove_a_file,
    )
}


# -- the property ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built_cases() -> Iterator[dict[str, Path]]:
    """Every fixture case, built once; each example works on copies."""
    base = Path(tempfile.mkdtemp(prefix="compare-property-"))
    try:
        yield {name: build(base, name).path for name, build in fixtures.CASES.items()}
    finally:
        shutil.rmtree(base)


EDIT = st.tuples(st.sampled_from(sorted(EDITS)), st.sampled_from(("a", "b")), st.integers(0, 2**32))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(sorted(fixtures.CASES)), edits=st.lists(EDIT, max_size=4))
def test_diff_is_identical_exactly_when_no_file_differs(built_cases, case, edits):
    with tempfile.TemporaryDirectory(prefix="compare-pair-") as tmp:
        a, b = Path(tmp) / "a" / case, Path(tmp) / "b" / case
        shutil.copytree(built_cases[case], a, symlinks=True)
        shutil.copytree(built_cases[case], b, symlinks=True)
        for name, side, seed in edits:
            EDITS[name](a if side == "a" else b, random.Random(seed))
        expected_files = oracle_files(a, b)
        expected_events = oracle_changed_events(a, b)
        snap_a, snap_b = fixtures.tree_snapshot(a), fixtures.tree_snapshot(b)
        result = compare_paths(a, b)
        assert fixtures.tree_snapshot(a) == snap_a and fixtures.tree_snapshot(b) == snap_b  # only read

    assert result.problems == []
    assert result.identical == (not expected_files), (expected_files, result.files, result.journal)
    assert {f.file for f in result.files} == expected_files - {"events.ndjson"}
    assert (not result.journal.identical) == ("events.ndjson" in expected_files)
    assert {e.event_id for e in result.journal.changed} == expected_events
