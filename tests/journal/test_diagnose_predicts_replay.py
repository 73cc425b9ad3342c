"""The diagnosis predicts what the journal package itself does.

- The diagnosis's scan (the reader in its summaries mode, whose decoder checks other fields than
  the whole-event mode's) finds exactly the events and defects that ``read_journal`` finds, on
  arbitrary damaged journals.
- The pending-tail dry run through ``ProjectionStore`` stops where the reconciler's own dry run
  stops, for the same reason, with the same message; and the suspect check agrees with
  ``MemoryStore``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import fixtures as folders
from journal import fs
from journal.diagnosis import diagnose_character
from journal.diagnosis.scan import scan_journal
from journal.dryrun import dry_run
from journal.errors import ViewDriftError
from journal.events import JOURNAL_NAME, SENTINEL_NAME, encode_event, entry_ref, make_event
from journal.handlers import PERSONA_EVIDENCE_KEYS, archive_target, default_registry, run_handler
from journal.reader import read_journal
from journal.stores import MemoryStore
from journal.views import write_sentinel

TYPES = [
    "reflection.evidence_updated",
    "persona.evidence_updated",
    "persona.entry_updated",
    "reflection.state_changed",
    "persona.fact_added",
    "reflection.surfaced",
    "fact.added",
]


def _record(i: int, etype: str, payload: Any) -> bytes:
    return encode_event(
        make_event(f"id-{i % 7 if i % 11 == 0 else i}", etype, f"2026-05-01T09:00:{i % 60:02d}", payload)
    )


payloads = st.one_of(
    st.fixed_dictionaries({"reflection_id": st.sampled_from(["ref_a", "ref_b", "", 7])}),
    st.fixed_dictionaries(
        {"entity_key": st.sampled_from(["master", "neko"]), "entry_id": st.sampled_from(["e1", "e2"])}
    ),
    st.fixed_dictionaries({"archive_shard_path": st.just("2026-05-01_0a1b2c3d.json"), "entry_snapshot": st.just({})}),
    st.just(None),
    st.just([1, 2]),
    st.just({}),
)

pieces = st.one_of(
    st.tuples(st.just("record"), st.sampled_from(TYPES), payloads),
    st.tuples(
        st.just("raw"), st.sampled_from([b"", b"   ", b"[1, 2]", b'{"no_id": 1}', b"\xff\xfe garbage", b"{bad json"])
    ),
    st.tuples(st.just("torn"), st.integers(1, 60)),
    st.tuples(st.just("bom"), st.sampled_from(TYPES)),
    st.tuples(st.just("crlf"), st.sampled_from(TYPES)),
)


def _journal(items: list[tuple[Any, ...]], terminated: bool) -> bytes:
    out = bytearray()
    for i, item in enumerate(items):
        kind = item[0]
        if kind == "record":
            out += _record(i, item[1], item[2])
        elif kind == "raw":
            out += item[1] + b"\n"
        elif kind == "torn":  # a fragment glued onto the next record (no newline)
            out += _record(i, "reflection.evidence_updated", {"reflection_id": "ref_a"})[: item[1]]
        elif kind == "bom":
            out += b"\xef\xbb\xbf" + _record(i, item[1], {})
        else:
            out += _record(i, item[1], {}).replace(b"\n", b"\r\n")
    if not terminated and out.endswith(b"\n"):
        out = out[:-1]
    return bytes(out)


def _reference(path: Path) -> tuple[Any, ...]:
    read = read_journal(path)
    events = [(e.event_id, e.type, e.ts, e.line, e.offset, entry_ref(e.type, e.payload)) for e in read.events]
    archives = [
        (i, target) for i, e in enumerate(read.events) if (target := archive_target(e.type, e.payload)) is not None
    ]
    return events, read.defects, read.lines, read.size, archives


def _scanned(path: Path) -> tuple[Any, ...]:
    scan = scan_journal(path)
    ev = scan.events
    records = [ev.record(i) for i in range(len(ev))]
    events = [(r.event_id, r.type, r.ts, r.line, r.offset, ev.entries[i]) for i, r in enumerate(records)]
    archives = [(i, target) for i, r in enumerate(records) if (target := archive_target(r.type, r.keys)) is not None]
    return events, scan.defects, scan.lines, scan.size, archives


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(pieces, max_size=25), terminated=st.booleans())
def test_scan_journal_equals_read_journal(
    tmp_path_factory: Any, items: list[tuple[Any, ...]], terminated: bool
) -> None:
    path = tmp_path_factory.mktemp("scan") / JOURNAL_NAME
    path.write_bytes(_journal(items, terminated))
    assert _scanned(path) == _reference(path)


def test_scan_journal_equals_read_journal_on_every_fixture(tmp_path: Path) -> None:
    for build in folders.CASES.values():
        b = build(tmp_path)
        path = b.path / JOURNAL_NAME
        if path.exists():
            assert _scanned(path) == _reference(path), b.name


# -- the dry run of the tail, against the reconciler's own ----------------------------------------------

ENTRIES = [("r", "ref_1a2b3c4d5e6f7081"), ("r", "ref_2b3c4d5e6f708192"), ("p", "master/prom_ref_77aa88bb99cc00dd")]

actions = st.one_of(
    st.tuples(st.just("evidence"), st.sampled_from(range(len(ENTRIES))), st.floats(0, 5, allow_nan=False)),
    st.tuples(
        st.just("state"), st.sampled_from(["ref_1a2b3c4d5e6f7081", "ref_9"]), st.sampled_from(["confirmed", "denied"])
    ),
    st.tuples(st.just("merge"), st.booleans()),
    st.tuples(st.just("archive"), st.sampled_from(["2026-05-03_00aa11bb.json", "bad/../name.json"]), st.booleans()),
    st.tuples(
        st.just("legacy"),
    ),
    st.tuples(
        st.just("bad_payload"),
    ),
)


def _payload(action: tuple[Any, ...]) -> tuple[str, Any]:
    kind = action[0]
    if kind == "evidence":
        which, value = ENTRIES[action[1]], action[2]
        if which[0] == "r":
            return "reflection.evidence_updated", folders.reflection_evidence_payload(which[1], value, at="t")
        key, eid = which[1].split("/")
        return "persona.evidence_updated", folders.persona_evidence_payload(key, eid, value, at="t")
    if kind == "state":
        return "reflection.state_changed", {"reflection_id": action[1], "from": "pending", "to": action[2], "ts": "t2"}
    if kind == "merge":
        text = "Master drinks green tea" if action[1] else "some other text"
        key, eid = folders.PERSONA_ENTRY
        return "persona.entry_updated", {
            "entity_key": key,
            "entry_id": eid,
            "rewrite_text_sha256": folders._sha(text),
            "merged_from_ids": ["ref_x"],
        }
    if kind == "archive":
        rid = "ref_2b3c4d5e6f708192"
        snapshot = {"id": rid, "text": "x", "status": "archived", "archive_shard_path": action[1]}
        if action[2]:
            return "persona.fact_added", {
                "entity_key": "neko",
                "entry_id": "legacy_5e6f7a8b",
                "archive_shard_path": action[1],
                "entry_snapshot": {**snapshot, "id": "legacy_5e6f7a8b"},
            }
        return "reflection.state_changed", {
            "reflection_id": rid,
            "from": "pending",
            "to": "archived",
            "archive_shard_path": action[1],
            "entry_snapshot": snapshot,
        }
    if kind == "legacy":
        return "reflection.surfaced", {"reflection_id": "ref_1a2b3c4d5e6f7081"}
    return "reflection.evidence_updated", ["not", "a", "dict"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tail=st.lists(actions, min_size=1, max_size=12),
    corrupt=st.sampled_from([None, "reflections.json", "persona.json", "shard"]),
)
def test_tail_dry_run_stops_where_the_reconciler_stops(
    tmp_path_factory: Any, tail: list[tuple[Any, ...]], corrupt: str | None
) -> None:
    root = tmp_path_factory.mktemp("dry")
    b = folders.healthy(root)
    for i, action in enumerate(tail):
        etype, payload = _payload(action)
        fs.durable_append(b.path / JOURNAL_NAME, encode_event(make_event(f"tail-{i}", etype, "t", payload)))
    if corrupt == "shard":
        (b.path / "reflection_archive").mkdir(exist_ok=True)
        fs.atomic_write_bytes(b.path / "reflection_archive" / "2026-05-03_00aa11bb.json", b'{"not": "a list"}')
    elif corrupt:
        fs.atomic_write_bytes(b.path / corrupt, b"[{")
    reference = dry_run(b.path).report
    c = diagnose_character(b.path, now=folders.FIXTURE_NOW)
    if reference.stopped is None:
        assert c.blocked is None
    else:
        assert c.blocked is not None
        got = (c.blocked.index, c.blocked.event_id, c.blocked.reason, c.blocked_message)
        ref = reference.stopped
        assert got == (ref.index, ref.event_id, ref.reason, ref.message)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(
            st.sampled_from(
                ["refl_status", "refl_evidence", "refl_type", "persona_text", "persona_evidence", "drop_shard"]
            ),
            st.integers(0, 3),
        ),
        max_size=4,
    )
)
def test_suspect_check_agrees_with_memory_store(tmp_path_factory: Any, edits: list[tuple[str, int]]) -> None:
    root = tmp_path_factory.mktemp("suspect")
    b = folders.legacy_type_orphaned(root)  # its last event for ref_4 is an evidence update
    reflections = json.loads((b.path / "reflections.json").read_text(encoding="utf-8"))
    persona = json.loads((b.path / "persona.json").read_text(encoding="utf-8"))
    for what, n in edits:
        if what == "refl_status" and n < len(reflections):
            reflections[n]["status"] = "denied"
        elif what == "refl_evidence" and n < len(reflections):
            reflections[n]["reinforcement"] = 7.5
        elif what == "refl_type" and n < len(reflections):
            reflections[n]["disputation"] = 0  # the payload says 0.0: equal in Python, not in JSON
        elif what == "persona_text":
            persona["master"]["facts"][1]["text"] = f"edited {n}"
        elif what == "persona_evidence":
            persona["master"]["facts"][1]["disputation"] = float(n)
        elif what == "drop_shard":
            for shard in (b.path / "reflection_archive").iterdir():
                fs.atomic_write_json(shard, [])
    fs.atomic_write_json(b.path / "reflections.json", reflections)
    fs.atomic_write_json(b.path / "persona.json", persona)
    write_sentinel(b.path, b.events[-1])
    c = diagnose_character(b.path, now=folders.FIXTURE_NOW)

    # Reference: the last event of each entry, run alone on a fresh MemoryStore of the folder.
    events = read_journal(b.path / JOURNAL_NAME).events
    last = {entry_ref(e.type, e.payload): i for i, e in enumerate(events)}
    last.pop(None, None)
    registry = default_registry()
    expected = set()
    for i in last.values():
        ev = events[i]
        try:
            changed = run_handler(registry.get(ev.type), MemoryStore(b.path), ev.payload)  # type: ignore[arg-type]
        except ViewDriftError:
            # An applied merge whose text moved on is a correction merge (memory-format §9.5), which
            # is normal, when the merge's evidence is on the entry (a correction changes the text
            # only); when it is not, the merge may never have landed: suspect.
            entry = next(e for e in persona[ev.payload["entity_key"]]["facts"] if e["id"] == ev.payload["entry_id"])
            keys = (*PERSONA_EVIDENCE_KEYS, "merged_from_ids")
            changed = any(k in ev.payload and json.dumps(entry.get(k)) != json.dumps(ev.payload[k]) for k in keys)
        except Exception:
            changed = False  # a corrupt file has its own finding
        if changed:
            expected.add(i)
    orphaned = {e.index for e in c.events if e.state == "orphaned"}
    assert {e.index for e in c.events if e.state == "suspect"} == expected - orphaned
    assert (b.path / SENTINEL_NAME).exists()


# -- progress ---------------------------------------------------------------------------------------


def test_progress_is_reported_and_raising_abandons_the_scan(tmp_path: Path, monkeypatch: Any) -> None:
    from journal.diagnosis import scan as scan_module

    items: list[tuple[Any, ...]] = [
        ("record", TYPES[i % len(TYPES)], {"reflection_id": f"ref_{i % 13}"}) for i in range(400)
    ]
    path = tmp_path / JOURNAL_NAME
    path.write_bytes(_journal(items, terminated=True))
    size = path.stat().st_size
    monkeypatch.setattr(scan_module, "REPORT_EVERY", 2048)
    seen: list[int] = []
    scan = scan_journal(path, seen.append)
    assert scan.size == size and len(scan.events) == len(read_journal(path).events)
    assert len(seen) > 3 and seen == sorted(seen) and seen[0] > 0 and seen[-1] < size

    class Stop(Exception):
        pass

    def stop(done: int) -> None:
        raise Stop

    try:
        scan_journal(path, stop)
    except Stop:
        pass
    else:
        raise AssertionError("the scan went on")
