"""The diagnosis's fast entry path agrees with the exact one, record for record.

A check reads summaries: each record of a declared type is decoded into its type's own summary,
whose decoder checks the fields that name the entry (:data:`journal.events.SUMMARY_TYPES`, built
from :data:`journal.events.ENTRY_FIELDS`), so the entry is read off the record; anything that
summary refuses takes the reader's exact path. The exact entry is :func:`journal.events.entry_ref`
on the payload as Python's ``json`` parses it (``read_journal``'s events). Both must give the same
events, entries, kept keys, lines, offsets and defects: on every fixture case, and on random
journals with unknown types, missing fields, fields of the wrong JSON type, null ids, repeated
keys, lines longer than a batch and invalid UTF-8.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import fixtures as folders
from journal import reader
from journal.diagnosis.scan import scan_journal
from journal.events import ALL_EVENT_TYPES, KEYED_TYPES, EntryKeys, entry_ref
from journal.reader import read_journal
from tests.journal.test_reader_properties import STRICT_DAMAGE


def _exact_kept(payload: Any) -> bool:
    return isinstance(payload, dict) and (
        payload.get("archive_shard_path") is not None or payload.get("absorbed_into") is not None
    )


def assert_agree(path: Path) -> int:
    """The summaries' scan and the whole read of ``path`` say the same; the number of events."""
    scan = scan_journal(path)
    full = read_journal(path)
    ev = scan.events
    assert scan.defects == full.defects
    assert (scan.lines, scan.size) == (full.lines, full.size)
    assert ev.event_ids() == [e.event_id for e in full.events]
    assert ev.types() == [e.type for e in full.events]
    assert [ev.ts(i) for i in range(len(ev))] == [e.ts for e in full.events]
    assert (ev.lines(), ev.offsets()) == ([e.line for e in full.events], [e.offset for e in full.events])
    assert ev.entries == [entry_ref(e.type, e.payload) for e in full.events]
    assert ev.kept_keys() == [
        (i, EntryKeys.of(e.payload))
        for i, e in enumerate(full.events)
        if e.type in KEYED_TYPES and _exact_kept(e.payload)
    ]
    return len(ev)


def test_every_fixture_case_reads_alike_on_both_entry_paths(tmp_path: Path) -> None:
    journals = 0
    for name, build in folders.CASES.items():
        build(tmp_path, name)
    for path in sorted(tmp_path.rglob("events.ndjson")):
        if path.is_file():
            assert_agree(path)
            journals += 1
    assert journals >= len(folders.CASES) // 2  # the cases hold journals: the test read them


# -- random journals, written as raw JSON text (repeated keys and lone surrogates included) ----------

_NAMES = ["reflection_id", "entity_key", "entry_id", "to", "absorbed_into", "archive_shard_path", "entry_snapshot"]
_scalar = st.one_of(
    st.none(),
    st.just(""),
    st.sampled_from(["ref_a", "ref_b", "master", "neko", "prom_1", "archived", "2026-01-01_0000abcd.json", "主人"]),
    st.text(max_size=5),
    st.just("\ud800"),  # valid JSON (escaped), not valid Unicode
    st.integers(-3, 3),
    st.just(2**70),
    st.booleans(),
    st.just(1.5),
)
_value = st.one_of(
    _scalar,
    st.lists(_scalar, max_size=2),
    st.dictionaries(st.sampled_from(["id", "x"]), _scalar, max_size=2),
)
_pairs = st.lists(st.tuples(st.sampled_from([*_NAMES, "other", "text"]), _value), max_size=6)


def _obj(pairs: list[tuple[str, Any]], ascii_only: bool) -> str:
    """A JSON object of ``pairs`` in order, repeated keys kept (Python's ``json`` takes the last)."""
    return "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=ascii_only)}" for k, v in pairs) + "}"


@st.composite
def _line(draw: st.DrawFn, eid: str) -> bytes:
    ascii_only = draw(st.booleans())
    head: list[tuple[str, Any]] = []
    id_kind = draw(st.sampled_from(["ok"] * 8 + ["null", "missing", "empty", "int"]))
    if id_kind != "missing":
        head.append(("event_id", {"ok": eid, "null": None, "empty": "", "int": 7}[id_kind]))
    etype = draw(
        st.one_of(
            st.sampled_from(sorted(ALL_EVENT_TYPES)),
            st.sampled_from(["reflection.bogus", "persona.", "fact", "", None, 3, "missing"]),
        )
    )
    if etype != "missing":
        head.append(("type", etype))
    if draw(st.integers(0, 9)) == 0:  # a second type key: Python's json takes the last one
        head.append(("type", draw(st.sampled_from(sorted(ALL_EVENT_TYPES)))))
    if draw(st.booleans()):
        head.append(("ts", draw(st.sampled_from(["2026-01-01T10:00:00.5", "", 5]))))
    body = _obj(head, ascii_only)
    kind = draw(st.sampled_from(["object"] * 6 + ["none", "null", "list", "text"]))
    if kind != "none":
        payload = {
            "object": _obj(draw(_pairs), ascii_only),
            "null": "null",
            "list": "[1, 2]",
            "text": '"x"',
        }[kind]
        body = body[:-1] + (", " if head else "") + f'"payload": {payload}' + "}"
    return body.encode("utf-8", "surrogatepass")


@st.composite
def _journals(draw: st.DrawFn) -> bytes:
    ids = draw(st.lists(st.sampled_from([f"id-{i}" for i in range(12)]), min_size=1, max_size=10))  # repeats
    data = b"".join(draw(_line(eid)) + b"\n" for eid in ids)
    for mutate in draw(st.lists(st.sampled_from(STRICT_DAMAGE), max_size=2)):
        data = mutate(draw, data)
    return data


@pytest.fixture(scope="module")
def journal_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("entries") / "events.ndjson"


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(data=_journals(), batch=st.sampled_from([1, 40, 200, reader._BATCH]))
def test_random_damaged_journals_read_alike_on_both_entry_paths(journal_file: Path, data: bytes, batch: int) -> None:
    """A small batch makes most lines longer than a batch (each then a batch of its own), and puts
    refused records and clean ones in the same batch."""
    journal_file.write_bytes(data)
    with mock.patch.object(reader, "_BATCH", batch):
        assert_agree(journal_file)


def test_a_record_the_fast_summary_refuses_still_names_its_entry(tmp_path: Path) -> None:
    """Each line is refused by its type's summary (a naming field of another JSON type, an empty
    one, a lone surrogate, a payload that is not an object), so it takes the exact path: the same
    entries come out as from the whole read, and none is lost or invented."""
    path = tmp_path / "events.ndjson"
    lines = [
        '{"event_id": "a", "type": "reflection.evidence_updated", "payload": {"reflection_id": 5}}',
        '{"event_id": "b", "type": "persona.entry_updated", "payload": {"entity_key": "m", "entry_id": ""}}',
        '{"event_id": "c", "type": "reflection.surfaced", "payload": {"reflection_id": "\\ud800"}}',
        '{"event_id": "d", "type": "persona.suppressed", "payload": [1]}',
        '{"event_id": "e", "type": "persona.fact_mentioned", "payload": {"entity_key": "m", "entry_id": "p"}}',
        '{"event_id": "f", "type": "reflection.rebutted", "payload": {"reflection_id": "r", "reflection_id": 1}}',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert assert_agree(path) == 6
    assert scan_journal(path).events.entries == [None, None, "\ud800", None, "m/p", None]
