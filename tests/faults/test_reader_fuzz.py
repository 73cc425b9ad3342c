"""Suite 5: reader fuzzing on twenty hand-made seed journals.

Where ``tests/journal/test_reader_properties.py`` damages random event lists, this suite starts
from journals shaped like the damaged folders support sees: a memory server's glued line, torn
tails (cut anywhere, or complete but unterminated), an isolated fragment before our separator,
unknown and unhandled types, CRLF, a BOM, duplicates, NUL runs from a crash, archive events with
full snapshots whose text contains braces and record-like strings. Then:

* every truncation offset of every seed: ``read_journal`` never raises, lines before the cut read
  exactly as in the whole file, the cut line yields nothing the whole file does not, every line is
  located, and ``last_event_id`` (the O(1) backwards read behind the no-orphaning rule) agrees
  with the full read whenever it claims to know;
* hypothesis over byte replacements, NUL runs, inserted garbage (JSON punctuation included),
  duplicated lines, CRLF, BOMs at any line start, truncation, and lines over 1 MiB, with taint
  tracking: an event that is not byte-for-byte one that was written must come from a damaged
  line, an undamaged record line is never lost, every defect is classified and located;
* ``JournalTail`` reading a file that grows in random pieces, polled with random ``max_bytes``,
  yields exactly the events and defects of one ``read_journal`` of its terminated lines, and a
  replacement (compaction) is reported as a reset followed by the new file's content.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import (
    DEFECT_KINDS,
    Defect,
    Event,
    JournalRead,
    JournalScanner,
    JournalTail,
    encode_event,
    last_event_id,
    make_event,
    read_journal,
)
from tests.faults.tally import count

BOM = b"\xef\xbb\xbf"
_rng = random.Random(20260501)


def _id() -> str:
    return str(uuid.UUID(int=_rng.getrandbits(128), version=4))


def rec(event_type: str, payload: Any, ts: str = "2026-04-23T12:00:00.123456", event_id: str | None = None) -> bytes:
    return encode_event(make_event(event_id or _id(), event_type, ts, payload))


def evid(i: int) -> bytes:
    return rec(
        "reflection.evidence_updated",
        {"reflection_id": f"ref_{i:016x}", "reinforcement": i / 10, "source": "user_fact"},
    )


def pevid(i: int) -> bytes:
    return rec(
        "persona.evidence_updated",
        {
            "entity_key": "master",
            "entry_id": f"prom_ref_{i}",
            "reinforcement": 1.5,
            "disputation": 0.25,
            "sub_zero_days": i,
        },
    )


def archive(i: int, text: str) -> bytes:
    snap = {
        "id": f"ref_{i:016x}",
        "text": text,
        "status": "archived",
        "archived_at": "2026-05-01T03:00:00.4",
        "archive_shard_path": "2026-05-01_0a1b2c3d.json",
        "source_fact_ids": ["fact_a", "fact_b"],
        "recent_mentions": [{"at": "2026-04-30T10:00:00", "ctx": "{}"}],
    }
    return rec(
        "reflection.state_changed",
        {
            "reflection_id": snap["id"],
            "from": "confirmed",
            "to": "archived",
            "archive_shard_path": snap["archive_shard_path"],
            "archived_at": snap["archived_at"],
            "entry_snapshot": snap,
        },
    )


def persona_archive(i: int, text: str) -> bytes:
    snap = {
        "id": f"prom_ref_{i}",
        "text": text,
        "archived_at": "2026-05-01T03:00:01",
        "archive_shard_path": "2026-05-01_1b2c3d4e.json",
    }
    return rec(
        "persona.fact_added",
        {
            "entity_key": "master",
            "entry_id": snap["id"],
            "archive_shard_path": snap["archive_shard_path"],
            "archived_at": snap["archived_at"],
            "text": text,
            "source": "reflection",
            "entry_snapshot": snap,
        },
    )


def _seeds() -> dict[str, bytes]:
    a, b, c = evid(1), pevid(2), archive(3, 'Master likes {braces} and "quotes"')
    dup = evid(7)
    dup_obj = json.loads(dup)
    same_id_other_payload = rec(
        dup_obj["type"], {"reflection_id": "ref_x", "reinforcement": 9.0}, event_id=dup_obj["event_id"]
    )
    seeds = {
        "clean": b"".join(
            [
                a,
                b,
                c,
                evid(4),
                pevid(5),
                rec(
                    "reflection.state_changed",
                    {"reflection_id": "ref_1", "from": "pending", "to": "confirmed", "ts": "2026-04-24T00:00:00"},
                ),
            ]
        ),
        "unicode": b"".join(
            [
                rec(
                    "reflection.evidence_updated",
                    {"reflection_id": "ref_猫", "text": "主人喜欢绿茶 🍵 — ñ a\u0301 \u202eRTL"},
                ),
                rec(
                    "persona.entry_updated",
                    {
                        "entity_key": "master",
                        "entry_id": "e",
                        "merged_from_ids": ["ref_é"],
                        "rewrite_text_sha256": "0" * 64,
                    },
                ),
                rec("fact.added", {"t": "line\nbreak\ttab \\ backslash \u0000 nul"}),
            ]
        ),
        "glued_server": evid(10) + pevid(11)[:77] + evid(12) + evid(13),
        "glued_at_brace": evid(20) + c[: c.index(b'"entry_snapshot": {') + 19] + pevid(21) + evid(22),
        "glued_twice": evid(30)[:40] + pevid(31)[:50] + evid(32) + evid(33),
        "torn_tail": evid(40) + pevid(41) + archive(42, "torn")[:150],
        "torn_tail_complete": evid(50) + pevid(51)[:-1],
        "isolated_fragment": evid(60) + pevid(61)[:90] + b"\n" + evid(62) + persona_archive(63, "kept apart"),
        "unknown_types": b"".join(
            [
                evid(70),
                rec("fact.exploded", {"x": 1}),
                b'{"event_id": "' + _id().encode() + b'", "ts": "2026-04-23T12:00:00", "payload": {}}\n',
                b'{"event_id": "' + _id().encode() + b'", "type": null, "ts": "t", "payload": {}}\n',
                b'{"event_id": "' + _id().encode() + b'", "type": 12, "ts": "t", "payload": {}}\n',
                rec("correction.queued", {"q": 1}),
                evid(71),
            ]
        ),
        "blank_lines": b"\n" + evid(80) + b"   \n\t\n\r\n" + pevid(81) + b"\n\n",
        "crlf": b"".join(line[:-1] + b"\r\n" for line in (evid(90), pevid(91), archive(92, "crlf"))),
        "bom": BOM + evid(100) + pevid(101),
        "duplicates": evid(110) + dup + pevid(111) + dup + same_id_other_payload + evid(112),
        "non_objects": evid(120) + b'[1, 2]\n42\n"a string"\nnull\ntrue\n{}\n' + pevid(121),
        "missing_ids": b'{"type": "fact.added", "payload": {}}\n{"event_id": "", "type": "fact.added"}\n'
        b'{"event_id": 7, "type": "fact.added"}\n{"event_id": null}\n' + evid(130),
        "invalid_utf8": evid(140) + b'{"event_id": "\xff\xfe", "type": "fact.added"}\n\xc3\x28 broken\n' + pevid(141),
        "nan": rec(
            "reflection.evidence_updated",
            {"reflection_id": "ref_n", "reinforcement": float("nan"), "disputation": float("inf")},
        )
        + evid(150),
        "nul_run": evid(160) + b"\0" * 64 + b"\n" + pevid(161) + b"\0" * 40,
        "nested_record_text": archive(
            170, '{"event_id": "ffffffff-0000-4000-8000-000000000000", "type": "fact.added"}}{'
        )
        + persona_archive(171, "}\n{")
        + evid(172),
        "archive_heavy": archive(180, "x" * 700) + persona_archive(181, "y" * 500) + archive(182, "猫" * 200),
    }
    assert len(seeds) >= 20
    return seeds


SEEDS = _seeds()


@contextmanager
def journal_file() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mi-fuzz-") as tmp:
        yield Path(tmp) / "events.ndjson"


def _lines(data: bytes) -> tuple[list[bytes], list[int]]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    return lines, starts


def _canon(e: Event) -> str:
    return json.dumps([e.event_id, e.type, e.ts, e.payload], sort_keys=True)


def check_located(data: bytes, result: JournalRead) -> list[str]:
    """Every defect classified and on its line; every non-blank line yields an event or a defect."""
    problems: list[str] = []
    lines, starts = _lines(data)
    if result.lines != len(lines) or result.size != len(data):
        problems.append(f"lines/size {result.lines}/{result.size}, file has {len(lines)}/{len(data)}")
    covered: set[int] = set()
    for d in result.defects:
        if d.kind not in DEFECT_KINDS or not 1 <= d.line <= len(lines):
            problems.append(f"unclassified or misplaced defect {d}")
            continue
        if d.offset != starts[d.line - 1] or d.length != len(lines[d.line - 1]):
            problems.append(f"defect not located at its line: {d}")
        covered.add(d.line)
    for e in result.events:
        if not 1 <= e.line <= len(lines) or not starts[e.line - 1] <= e.offset < starts[e.line - 1] + max(
            1, len(lines[e.line - 1])
        ):
            problems.append(f"event not located on its line: {e.event_id} line {e.line} offset {e.offset}")
        covered.add(e.line)
    for number, line in enumerate(lines, start=1):
        body = line[3:] if line.startswith(BOM) else line
        if body.strip() and number not in covered:
            problems.append(f"line {number} is neither an event nor a defect: {line[:80]!r}")
    ids = [e.event_id for e in result.events]
    if len(ids) != len(set(ids)):
        problems.append("an event id returned twice")
    return problems


# -- every truncation offset --------------------------------------------------------------------


def _truncation_problems(name: str, data: bytes, path: Path) -> list[str]:
    path.write_bytes(data)
    full = read_journal(path)
    problems = [f"{name}: whole file: {p}" for p in check_located(data, full)]
    full_by_line: dict[int, list[Any]] = {}
    for item in [*full.events, *full.defects]:
        full_by_line.setdefault(item.line, []).append(item)
    with open(path, "r+b") as fh:
        for k in range(len(data), -1, -1):
            fh.truncate(k)
            fh.flush()
            cut = read_journal(path)
            count("fuzz examples")
            where = f"{name} cut at {k}"
            if cut.error is not None:
                problems.append(f"{where}: {cut.error}")
            prefix = data[:k]
            problems += [f"{where}: {p}" for p in check_located(prefix, cut)]
            complete = prefix.count(b"\n")
            for item in [*cut.events, *cut.defects]:
                whole = full_by_line.get(item.line, [])
                if item.line <= complete and item not in whole:
                    problems.append(f"{where}: line {item.line} reads differently from the whole file: {item}")
                if item.line > complete and isinstance(item, Event) and item not in whole:
                    problems.append(f"{where}: invented event {item.event_id} on the cut line")
            for item in [*full.events, *full.defects]:
                if item.line <= complete and item not in cut.events and item not in cut.defects:
                    problems.append(f"{where}: line {item.line} lost {item}")
            known, last = last_event_id(path)
            expected = cut.events[-1].event_id if cut.events else None
            if known and last != expected:
                problems.append(f"{where}: last_event_id says {last}, the journal's last event is {expected}")
            if len(problems) > 20:
                return problems
    return problems


def test_every_truncation_offset_of_twenty_seed_journals():
    problems: list[str] = []
    with journal_file() as path:
        for name, data in SEEDS.items():
            problems += _truncation_problems(name, data, path)
    assert not problems, "\n".join(problems[:40])


def test_the_seeds_contain_what_they_claim():
    with journal_file() as path:
        kinds: dict[str, set[str]] = {}
        for name, data in SEEDS.items():
            path.write_bytes(data)
            kinds[name] = {d.kind for d in read_journal(path).defects}
    assert "glued" in kinds["glued_server"] and "glued" in kinds["glued_at_brace"]
    assert "torn_tail" in kinds["torn_tail"] and kinds["torn_tail_complete"] == set()
    assert "unknown_type" in kinds["unknown_types"] and "duplicate_event_id" in kinds["duplicates"]
    assert {"not_object", "missing_event_id", "invalid_utf8"} <= kinds["non_objects"] | kinds["missing_ids"] | kinds[
        "invalid_utf8"
    ]
    assert kinds["clean"] == kinds["crlf"] == kinds["bom"] == kinds["archive_heavy"] == set()


# -- hypothesis: mutations with taint tracking ------------------------------------------------------

FUZZ = settings(
    max_examples=int(os.environ.get("MI_FUZZ_EXAMPLES", "400")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

GARBAGE = st.one_of(
    st.binary(min_size=1, max_size=24),
    st.sampled_from(
        [
            b"{",
            b"}",
            b"[",
            b"]",
            b'"',
            b",",
            b":",
            b"\\",
            b"\n",
            b"\r",
            b"\r\n",
            b"}{",
            b',"a":1',
            b'{"event_id": "',
            b"\n{",
            b"}\n",
            b"\xef\xbb\xbf",
            b"\xff",
        ]
    ),
)


class Damaged:
    """Bytes plus a taint mask (1 = written by a mutation, or next to a cut)."""

    def __init__(self, data: bytes) -> None:
        self.data = bytearray(data)
        self.taint = bytearray(len(data))

    def replace(self, i: int, value: int) -> None:
        if self.data:
            i %= len(self.data)
            self.data[i] = value
            self.taint[i] = 1

    def insert(self, i: int, chunk: bytes) -> None:
        i %= len(self.data) + 1
        self.data[i:i] = chunk
        self.taint[i:i] = b"\1" * len(chunk)

    def overwrite(self, i: int, chunk: bytes) -> None:
        i %= len(self.data) + 1
        end = min(len(self.data), i + len(chunk))
        self.data[i:end] = chunk[: end - i]
        self.taint[i:end] = b"\1" * (end - i)

    def line_starts(self) -> list[int]:
        return [0] + [i + 1 for i, b in enumerate(self.data) if b == 0x0A and i + 1 < len(self.data)]

    def truncate(self, k: int) -> None:
        k %= len(self.data) + 1
        del self.data[k:]
        del self.taint[k:]
        if k:
            self.taint[k - 1] = 1


@st.composite
def damaged(draw: st.DrawFn, *, huge: bool = False) -> tuple[str, bytes, Damaged]:
    name = draw(st.sampled_from(sorted(SEEDS)))
    seed = SEEDS[name]
    d = Damaged(seed)
    ops = ["replace", "nul", "garbage", "dup", "crlf", "bom", "truncate"]
    for op in draw(st.lists(st.sampled_from(ops), min_size=1, max_size=5)):
        i = draw(st.integers(0, 1 << 16))
        if op == "replace":
            d.replace(i, draw(st.integers(0, 255)))
        elif op == "nul":
            run = b"\0" * draw(st.integers(1, 80))
            (d.overwrite if draw(st.booleans()) else d.insert)(i, run)
        elif op == "garbage":
            d.insert(i, draw(GARBAGE))
        elif op == "dup":
            starts = d.line_starts()
            src = starts[i % len(starts)]
            end = d.data.find(b"\n", src)
            line = bytes(d.data[src : (end + 1 if end >= 0 else len(d.data))])
            line = line if line.endswith(b"\n") else line + b"\n"
            d.insert(starts[draw(st.integers(0, len(starts) - 1))], line)
        elif op == "crlf":
            nl = [j for j, b in enumerate(d.data) if b == 0x0A]
            if nl:
                d.insert(nl[i % len(nl)], b"\r")
        elif op == "bom":
            starts = d.line_starts()
            d.insert(starts[i % len(starts)], BOM)
        elif op == "truncate" and draw(st.integers(0, 3)) == 0:
            d.truncate(i)
    if huge:
        starts = d.line_starts()
        at = starts[draw(st.integers(0, len(starts) - 1))]
        size = draw(st.integers(1 << 20, (1 << 20) + (1 << 18)))
        kind = draw(st.sampled_from(["record", "garbage", "torn_record", "braces"]))
        if kind == "record":
            line = rec("fact.added", {"blob": "z" * size})
        elif kind == "garbage":
            line = bytes(draw(st.integers(32, 126)) for _ in range(8)) * (size // 8) + b"\n"
        elif kind == "torn_record":
            line = rec("fact.added", {"blob": "q" * size})[: size // 2] + b"\n"
        else:
            line = b'{"a": ' * 64 + b"{" * (size // 2) + b"\n"
        d.insert(at, line)
    return name, seed, d


def _mutation_problems(name: str, seed: bytes, d: Damaged, path: Path) -> list[str]:
    data = bytes(d.data)
    path.write_bytes(seed)
    original = read_journal(path)
    # Every record the seed holds, duplicates included: damage to an earlier copy makes a later
    # one the first occurrence, which the reader then rightly returns.
    written = {_canon(e) for e in original.events}
    for line in _lines(seed)[0]:
        alone: list[Event] = []
        JournalScanner().feed(line + b"\n", alone, [])
        written.update(_canon(e) for e in alone)
    seed_lines, _ = _lines(seed)
    line_to_id = {seed_lines[e.line - 1]: e.event_id for e in original.events}
    path.write_bytes(data)
    result = read_journal(path)
    problems = [] if result.error is None else [result.error]
    problems += check_located(data, result)
    lines, starts = _lines(data)

    def tainted(number: int) -> bool:
        lo = max(0, starts[number - 1] - 1)
        hi = min(len(data), starts[number - 1] + len(lines[number - 1]) + 1)
        return any(d.taint[lo:hi]) or (hi == len(data) and not data.endswith(b"\n"))

    ids = {e.event_id for e in result.events}
    for e in result.events:
        if _canon(e) not in written and not tainted(e.line):
            problems.append(f"invented event {e.event_id} on undamaged line {e.line}")
    for number, line in enumerate(lines, start=1):
        if not tainted(number) and line in line_to_id and line_to_id[line] not in ids:
            problems.append(f"undamaged record line {number} lost (event {line_to_id[line]})")
    return [f"{name}: {p}" for p in problems]


@FUZZ
@given(case=damaged())
def test_damaged_seeds_never_raise_invent_or_lose_an_undamaged_event(case):
    name, seed, d = case
    count("fuzz examples")
    with journal_file() as path:
        problems = _mutation_problems(name, seed, d, path)
    assert not problems, "\n".join(problems[:20])


@settings(FUZZ, max_examples=max(5, FUZZ.max_examples // 20))
@given(case=damaged(huge=True))
def test_lines_over_one_mebibyte_are_classified_without_exceptions(case):
    name, seed, d = case
    count("fuzz examples")
    with journal_file() as path:
        problems = _mutation_problems(name, seed, d, path)
    assert not problems, "\n".join(problems[:20])


# -- JournalTail in random pieces ------------------------------------------------------------------------


def _tail_read(
    tail: JournalTail, rng: random.Random, events: list[Event], defects: list[Defect], *, drain: bool
) -> bool:
    """Poll once with a random limit (or until nothing new, when ``drain``); return whether a reset
    was reported."""
    reset = False
    while True:
        limit = None if rng.random() < 0.3 else rng.randint(1, 4096)
        update = tail.poll(max_bytes=limit)
        if update.reset:
            reset = True
            events.clear()
            defects.clear()
        events.extend(update.events)
        defects.extend(update.defects)
        if not drain or (not update.events and not update.defects and limit is None):
            return reset


def _terminated_read(path: Path, data: bytes) -> JournalRead:
    path.write_bytes(data[: data.rfind(b"\n") + 1])
    return read_journal(path)


@FUZZ
@given(case=damaged(), pieces=st.integers(1, 40), seed=st.integers(0, 1 << 30))
def test_tail_reading_in_random_pieces_equals_one_read_journal(case, pieces, seed):
    name, _, d = case
    data = bytes(d.data)
    count("fuzz examples")
    rng = random.Random(seed)
    cuts = [*sorted(rng.sample(range(len(data) + 1), min(pieces, len(data) + 1))), len(data)]
    with journal_file() as path:
        path.write_bytes(b"")
        tail = JournalTail(path)
        events: list[Event] = []
        defects: list[Defect] = []
        prev = 0
        with open(path, "ab") as fh:
            for cut in cuts:
                fh.write(data[prev:cut])
                fh.flush()
                prev = cut
                assert not _tail_read(tail, rng, events, defects, drain=rng.random() < 0.5), "reset on a growing file"
        assert not _tail_read(tail, rng, events, defects, drain=True)
        other = path.with_name("expected.ndjson")
        expected = _terminated_read(other, data)
    assert events == expected.events, name
    assert defects == expected.defects, name


@FUZZ
@given(first=st.sampled_from(sorted(SEEDS)), second=st.sampled_from(sorted(SEEDS)), seed=st.integers(0, 1 << 30))
def test_a_replaced_journal_is_reported_as_a_reset_then_read_from_its_start(first, second, seed):
    count("fuzz examples")
    rng = random.Random(seed)
    with journal_file() as path:
        path.write_bytes(SEEDS[first])
        tail = JournalTail(path)
        events: list[Event] = []
        defects: list[Defect] = []
        _tail_read(tail, rng, events, defects, drain=rng.random() < 0.5)
        replacement = path.with_name("compacted.tmp")
        replacement.write_bytes(SEEDS[second])
        os.replace(replacement, path)  # what compaction does
        assert _tail_read(tail, rng, events, defects, drain=True), "replacement not reported as a reset"
        expected = _terminated_read(path.with_name("expected.ndjson"), SEEDS[second])
    assert events == expected.events
    assert defects == expected.defects
