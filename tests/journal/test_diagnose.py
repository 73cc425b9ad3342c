"""Diagnosis of memory folders: the exact JSON of every fixture case, the read-only guarantee, and
hostile input (links, unreadable and special files, huge lines, garbage, deep nesting, zips).

Every diagnosis here goes through :func:`diagnose`, which snapshots the whole tree (every file's
SHA-256, every folder and link) before and after and fails if anything inside PATH changed.
"""

from __future__ import annotations

import json
import os
import random
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest

from journal import fixtures as folders
from journal import fs
from journal.diagnosis import (
    FINDING_CODES,
    Diagnosis,
    EventInfo,
    EventList,
    UnknownCharacterError,
    UnreadableInputError,
    ZipLimits,
    diagnose_character,
    diagnose_path,
    server_status,
)
from journal.dryrun import dry_run
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.fixtures import FIXTURE_NOW, PERSONA_ENTRY, REFLECTION_IDS, Built
from journal.views import load_view, save_view, write_sentinel


@pytest.fixture(autouse=True)
def _no_server(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runtime folder of our own: the machine's real launcher lock never leaks into results."""
    runtime = tmp_path_factory.mktemp("runtime")
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(runtime))
    return runtime


def diagnose(path: Path, **kwargs: Any) -> Diagnosis:
    """``diagnose_path``, asserting that nothing inside ``path`` was created, changed or deleted."""
    before = folders.tree_snapshot(path)
    result = diagnose_path(path, now=kwargs.pop("now", FIXTURE_NOW), **kwargs)
    assert folders.tree_snapshot(path) == before
    return result


# -- building the expected JSON ----------------------------------------------------------------------


def journal_of(b: Built) -> dict[str, Any]:
    """The journal stats, computed from the file independently of the reader."""
    p = b.path / JOURNAL_NAME
    if not p.exists():
        return {"present": False, "lines": 0, "events": 0, "bytes": 0}
    data = p.read_bytes()
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return {"present": True, "lines": lines, "events": len(b.events), "bytes": len(data)}


def line_offset(b: Built, line: int) -> int:
    data = (b.path / JOURNAL_NAME).read_bytes()
    return sum(len(x) + 1 for x in data.split(b"\n")[: line - 1])


def counts(**kw: int) -> dict[str, int]:
    out = dict.fromkeys(("applied", "pending", "blocked", "orphaned", "suspect", "defects"), 0)
    out.update(kw)
    return out


def ok(b: Built, index: int) -> dict[str, Any]:
    return {"state": "ok", "event_id": b.events[index], "index": index}


def ev(b: Built, index: int, etype: str, state: str, reason: str | None = None) -> dict[str, Any]:
    return {
        "index": index,
        "line": index + 1,
        "event_id": b.events[index],
        "type": etype,
        "state": state,
        "reason": reason,
    }


def finding(
    code: str,
    severity: str,
    message: str,
    event_id: str | None = None,
    file: str | None = None,
    advice: dict[str, Any] | None = None,
) -> dict:
    return {
        "code": code,
        "severity": severity,
        "message": message,
        "event_id": event_id,
        "file": file,
        "advice": advice,
    }


def char(
    b: Built,
    *,
    sentinel: dict[str, Any],
    counts: dict[str, int],
    blocked: dict[str, Any] | None = None,
    events: list[dict[str, Any]] | None = None,
    defects: list[dict[str, Any]] | None = None,
    findings: list[dict[str, Any]] | None = None,
    server_start: Any = None,
) -> dict[str, Any]:
    return {
        "name": b.name,
        "journal": journal_of(b),
        "sentinel": sentinel,
        "counts": counts,
        "blocked": blocked,
        "events": events or [],
        "defects": defects or [],
        "findings": findings or [],
        "server_start": server_start if server_start is not None else ServerStartShape(),
        "server_start_not_applicable": None,  # a memory folder: the server's start applies
        "cloud_unit": None,  # and no cloud-save unit
    }


class ServerStartShape:
    """Equal to any ``server_start`` object with exactly the documented keys (its values are
    asserted exactly by tests/journal/test_server_model.py)."""

    KEYS: ClassVar[set[str]] = {
        "reconciled", "characters_file", "sentinel", "persona_ensure", "replay", "changes", "changes_total",
        "writes", "left_unapplied", "outbox_pending", "notes", "advice", "summary", "reconcile_raises", "deletes",
        "sentinel_after", "after_reconcile",
    }  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, dict) and set(other) == self.KEYS and isinstance(other["summary"], str)

    def __repr__(self) -> str:
        return "<server_start object>"


def held_blocked(b: Built, index: int, etype: str, reason: str, message: str, entries: str) -> dict[str, Any]:
    """``replay.blocked`` for an event our replay holds per entry (it goes on with other entries)."""
    return finding(
        "replay.blocked",
        "error",
        f"replay cannot apply event #{index} ({etype}): {reason}: {message}; it holds {entries} and goes on "
        "with other entries",
        b.events[index],
    )


def held(b: Built, index: int, etype: str, reason: str, entries: str, behind: int = 0) -> dict[str, Any]:
    """``replay.held``: the wedge, with which entry, since which event (index, ts) and how many behind."""
    ts = json.loads((b.path / "events.ndjson").read_text(encoding="utf-8").splitlines()[index])["ts"]
    return finding(
        "replay.held",
        "error",
        f"guarded replay holds {entries} at event #{index} ({etype}, ts {ts}) since it cannot apply it ({reason}); "
        f"{behind} later event{'s' if behind != 1 else ''} of that entry wait behind it, and events of other "
        "entries still replay. The sentinel stays before it until it applies or a person parks it",
        b.events[index],
        advice={"action": "park", "character": b.name, "event_id": b.events[index]},
    )


def doc(path: Path, *characters: dict[str, Any]) -> dict[str, Any]:
    return {"schema": 1, "path": str(path), "characters": list(characters)}


def reference_stop(b: Built) -> tuple[int, str, str]:
    """Where the journal's own reconciler stops on a scratch copy: (index, reason, message)."""
    report = dry_run(b.path).report
    assert report.stopped is not None
    return report.stopped.index, report.stopped.reason, report.stopped.message


def pending_finding(b: Built, n: int, first: int, stop: str = "") -> dict[str, Any]:
    tail = stop or "; our guarded replay applies them (what the memory server's start does: server_start)"
    return finding(
        "tail.pending",
        "warning",
        f"{n} event{'s' if n != 1 else ''} after the sentinel {'are' if n != 1 else 'is'} not applied yet{tail}",
        b.events[first],
    )


# -- one test per fixture case, exact JSON ------------------------------------------------------------------


def test_healthy_folder_has_no_findings(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    d = diagnose(tmp_path)
    assert d.to_json() == doc(tmp_path, char(b, sentinel=ok(b, 8), counts=counts(applied=9)))
    assert d.worst_severity() == "info"


def test_healthy_folder_with_all_events_lists_every_event_as_applied(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    types = [
        "reflection.evidence_updated",
        "reflection.evidence_updated",
        "persona.evidence_updated",
        "reflection.state_changed",
        "persona.evidence_updated",
        "persona.entry_updated",
        "reflection.state_changed",
        "reflection.state_changed",
        "persona.fact_added",
    ]
    expected = char(
        b, sentinel=ok(b, 8), counts=counts(applied=9), events=[ev(b, i, t, "applied") for i, t in enumerate(types)]
    )
    assert diagnose(tmp_path).to_json(all_events=True) == doc(tmp_path, expected)


def test_pending_tail(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    expected = char(
        b,
        sentinel=ok(b, 8),
        counts=counts(applied=9, pending=2),
        events=[ev(b, 9, "reflection.evidence_updated", "pending"), ev(b, 10, "persona.evidence_updated", "pending")],
        findings=[pending_finding(b, 2, 9)],
    )
    assert diagnose(tmp_path).to_json() == doc(tmp_path, expected)


def test_paused_on_an_unregistered_legacy_type(tmp_path: Path) -> None:
    # Our live write after the pause applied its own event and recorded it in the applied set
    # (the sentinel stays before the held event): it is applied, and never run again.
    b = folders.legacy_type_blocked(tmp_path)
    message = "no replay handler is registered for 'reflection.surfaced'"
    assert reference_stop(b) == (9, "no_handler", message)
    entries = f"reflection {REFLECTION_IDS[0]}"
    expected = char(
        b,
        sentinel=ok(b, 8),
        counts=counts(applied=10, blocked=1),
        blocked={
            "event_id": b.ids["legacy"],
            "index": 9,
            "type": "reflection.surfaced",
            "reason": "no_handler",
            "message": message,
        },
        events=[ev(b, 9, "reflection.surfaced", "blocked", "no_handler")],
        findings=[
            pending_finding(b, 1, 9, "; replay holds 1 of them, from event #9 (no_handler)"),
            held_blocked(b, 9, "reflection.surfaced", "no_handler", message, entries),
            finding(
                "server.replay_stops",
                "error",
                "the memory server's next start stops at event #9 (reflection.surfaced: no_handler) after applying "
                "0; the 1 after it stay unapplied by it (1 of them our guarded replay already applied, so their effect "
                "is in the views), and its next live write moves the sentinel past them for good (memory-format §9.6)",
                b.ids["legacy"],
            ),
            held(b, 9, "reflection.surfaced", "no_handler", entries),
        ],
    )
    assert diagnose(tmp_path).to_json() == doc(tmp_path, expected)


def test_legacy_event_orphaned_by_a_live_write(tmp_path: Path) -> None:
    b = folders.legacy_type_orphaned(tmp_path)
    expected = char(
        b,
        sentinel=ok(b, 10),
        counts=counts(applied=10, orphaned=1),
        events=[ev(b, 9, "reflection.surfaced", "orphaned", "no_handler")],
        findings=[
            finding(
                "event.orphaned",
                "error",
                "event #9 ('reflection.surfaced'): type 'reflection.surfaced' has no replay handler, yet the "
                "sentinel is past it: a live write moved the sentinel over an unapplied tail (the design record's "
                "known limitation); it was never applied",
                b.ids["legacy"],
            )
        ],
    )
    assert diagnose(tmp_path).to_json() == doc(tmp_path, expected)


def test_glued_torn_line_recovers_the_glued_event(tmp_path: Path) -> None:
    b = folders.glued_torn_line(tmp_path)
    glued = b.ids["glued"]
    expected = char(
        b,
        sentinel=ok(b, 9),
        counts=counts(applied=10, defects=1),
        defects=[{"line": 10, "offset": line_offset(b, 10), "kind": "glued", "recovered_event_id": glued}],
        findings=[
            finding(
                "line.glued",
                "warning",
                "line 10: torn fragment of 70 bytes glued to an intact record (a crash tore an append and the next "
                f"one was glued on); event {glued} was recovered, but the memory server's replay skips the whole line",
                glued,
                JOURNAL_NAME,
            ),
            # memory-format §9.3: the server's reader cannot see the glued event the sentinel names
            finding(
                "server.sentinel_unseen",
                "error",
                f"the sentinel names event {glued}, which the memory server's reader cannot see (it is glued onto a "
                "torn fragment): its next start replays the whole journal (9 events)",
                glued,
                SENTINEL_NAME,
            ),
            finding(
                "server.full_replay",
                "warning",
                "the memory server's next start replays the whole journal from the first event; a full replay "
                "applies old snapshots again, so it is not harmless",
                None,
                SENTINEL_NAME,
            ),
        ],
    )
    d = diagnose(tmp_path)
    assert d.to_json() == doc(tmp_path, expected)
    assert b.notes["lost_event"] not in d.characters[0].events.event_ids()  # type: ignore[attr-defined]


def test_torn_tail(tmp_path: Path) -> None:
    b = folders.torn_tail(tmp_path)
    expected = char(
        b,
        sentinel=ok(b, 8),
        counts=counts(applied=9, defects=1),
        defects=[{"line": 10, "offset": line_offset(b, 10), "kind": "torn_tail", "recovered_event_id": None}],
        findings=[
            finding(
                "line.torn_tail",
                "warning",
                "line 10 is an unterminated last line (90 bytes), torn by a crash during an append; the memory "
                "server glues its next event onto it and loses both",
                None,
                JOURNAL_NAME,
            ),
            finding(
                "server.next_append_glued",
                "warning",
                "the journal ends in a torn line: the memory server's next journal write is glued onto it, and both "
                "are lost as one bad line; our library writes a newline first",
                None,
                JOURNAL_NAME,
            ),
        ],
    )
    assert diagnose(tmp_path).to_json() == doc(tmp_path, expected)


def test_archive_crash_window_orphans_the_entry(tmp_path: Path) -> None:
    b = folders.archive_entry_lost(tmp_path)
    shard = f"reflection_archive/{b.notes['shard']}"
    lost = b.ids["lost"]
    expected = char(
        b,
        sentinel=ok(b, 9),
        counts=counts(applied=9, orphaned=1),
        events=[ev(b, 9, "reflection.state_changed", "orphaned", "archive_entry_lost")],
        findings=[
            finding(
                "event.orphaned",
                "error",
                f"event #9: ref_4d5e6f708192a3b4 is in neither reflections.json nor {shard}: the archive stopped "
                "between the journal event and the shard append; only this event's payload still holds the entry",
                lost,
                shard,
            ),
            finding(
                "shard.missing_entry",
                "error",
                f"event #9 archived ref_4d5e6f708192a3b4 into {shard}, which does not hold it",
                lost,
                shard,
            ),
        ],
    )
    assert diagnose(tmp_path).to_json() == doc(tmp_path, expected)


def test_persona_drift_blocks_replay(tmp_path: Path) -> None:
    b = folders.persona_drift(tmp_path)
    index, reason, message = reference_stop(b)
    assert (index, reason) == (9, "view_drift")
    drift = b.ids["drift"]
    expected = char(
        b,
        sentinel=ok(b, 8),
        counts=counts(applied=9, blocked=1),
        blocked={
            "event_id": drift,
            "index": 9,
            "type": "persona.entry_updated",
            "reason": "view_drift",
            "message": message,
        },
        events=[ev(b, 9, "persona.entry_updated", "blocked", "view_drift")],
        findings=[
            pending_finding(b, 1, 9, "; replay holds 1 of them, from event #9 (view_drift)"),
            held_blocked(b, 9, "persona.entry_updated", "view_drift", message, f"persona {PERSONA_ENTRY[1]}"),
            finding("view.drift", "error", message, drift, "persona.json"),
            finding(
                "server.replay_stops",
                "error",
                "the memory server's next start stops at event #9 (persona.entry_updated: view_drift) after applying "
                "0, and its next live write moves the sentinel past it for good (memory-format §9.6)",
                drift,
            ),
            held(b, 9, "persona.entry_updated", "view_drift", f"persona {PERSONA_ENTRY[1]}"),
        ],
    )
    assert diagnose(tmp_path).to_json() == doc(tmp_path, expected)


def test_corrupt_shard_blocks_replay(tmp_path: Path) -> None:
    b = folders.corrupt_shard(tmp_path)
    index, reason, message = reference_stop(b)
    assert (index, reason) == (9, "corrupt_shard")
    event = b.ids["pending_archive"]
    expected = char(
        b,
        sentinel=ok(b, 8),
        counts=counts(applied=9, blocked=1),
        blocked={
            "event_id": event,
            "index": 9,
            "type": "reflection.state_changed",
            "reason": "corrupt_shard",
            "message": message,
        },
        events=[ev(b, 9, "reflection.state_changed", "blocked", "corrupt_shard")],
        findings=[
            pending_finding(b, 1, 9, "; replay stops at event #9 (corrupt_shard)"),
            finding(
                "replay.blocked",
                "error",
                f"replay stops at event #9 (reflection.state_changed): corrupt_shard: {message}",
                event,
            ),
            finding("shard.corrupt", "error", message, None, f"reflection_archive/{b.notes['shard']}"),
            # memory-format §3.5 (d), §9.7: the server treats the corrupt shard as full and moves on
            finding(
                "server.shard_passed",
                "error",
                "event #9 archives into a corrupt shard: the memory server keeps the entry in the view and moves the "
                "sentinel past the event, so no later start retries it; our guarded replay pauses there instead",
                event,
            ),
        ],
    )
    assert diagnose(tmp_path).to_json() == doc(tmp_path, expected)


def test_hostile_shard_basename_blocks_replay_and_writes_nothing_anywhere(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    b = folders.hostile_shard_basename(root)
    index, reason, message = reference_stop(b)
    assert (index, reason) == (9, "bad_shard_name")
    event = b.ids["hostile"]
    escaped = str(tmp_path / "escaped.json")  # <char>/reflection_archive/../../../escaped.json
    expected = char(
        b,
        sentinel=ok(b, 8),
        counts=counts(applied=9, blocked=1),
        blocked={
            "event_id": event,
            "index": 9,
            "type": "reflection.state_changed",
            "reason": "bad_shard_name",
            "message": message,
        },
        events=[ev(b, 9, "reflection.state_changed", "blocked", "bad_shard_name")],
        findings=[
            pending_finding(b, 1, 9, "; replay stops at event #9 (bad_shard_name)"),
            finding(
                "replay.blocked",
                "error",
                f"replay stops at event #9 (reflection.state_changed): bad_shard_name: {message}",
                event,
            ),
            finding(
                "shard.bad_name",
                "error",
                "event #9 names the shard '../../../escaped.json', which is not a shard basename "
                "(YYYY-MM-DD_<8 hex>.json): nothing may be written there",
                event,
            ),
            # memory-format §9.7: the server does not validate the basename and writes where it leads
            finding(
                "server.writes_outside",
                "error",
                f"the memory server's next start writes {escaped!r}, outside the character folder: an archive event "
                "names a shard basename that leads out of it; the server does not check the name: do not start the "
                "server on this folder",
                None,
                None,
            ),
        ],
    )
    outside = folders.tree_snapshot(tmp_path)
    assert diagnose(root).to_json() == doc(root, expected)
    assert folders.tree_snapshot(tmp_path) == outside
    assert not list(tmp_path.rglob("escaped.json"))


VIEWS_ONLY = finding(
    "journal.absent",
    "info",
    "views only: no journal, sentinel or shard archives, as in a cloud-save export (memory-format §6.1); "
    "there is nothing to replay",
    None,
    JOURNAL_NAME,
)


def test_views_only_cloud_save_export_is_info(tmp_path: Path) -> None:
    b = folders.views_only_export(tmp_path)
    expected = char(
        b, sentinel={"state": "missing", "event_id": None, "index": None}, counts=counts(), findings=[VIEWS_ONLY]
    )
    d = diagnose(tmp_path)
    assert d.to_json() == doc(tmp_path, expected)
    assert d.characters[0].views_only
    assert d.worst_severity() == "info"


def test_outbox_pending_and_dead_letter_and_temp_leftovers(tmp_path: Path) -> None:
    b = folders.outbox_backlog(tmp_path)
    expected = char(
        b,
        sentinel=ok(b, 8),
        counts=counts(applied=9),
        findings=[
            finding(
                "outbox.pending",
                "info",
                "1 outbox operation pending (synth_reflection ×1): the memory server's next start runs them, "
                "in the background",
                None,
                "outbox.ndjson",
            ),
            finding(
                "outbox.dead_letter",
                "warning",
                "1 outbox operation abandoned after 5 failed attempts (check_feedback ×1): their work was never done",
                None,
                "outbox.ndjson",
            ),
            finding(
                "tempfile.leftover",
                "info",
                ".nkatmp0a1b2c3d.tmp is left over from a crashed atomic write",
                None,
                ".nkatmp0a1b2c3d.tmp",
            ),
            finding(
                "tempfile.leftover",
                "info",
                ".persona.json.k3x9_q2z.tmp is left over from a crashed atomic write",
                None,
                ".persona.json.k3x9_q2z.tmp",
            ),
        ],
    )
    d = diagnose(tmp_path)
    assert d.to_json() == doc(tmp_path, expected)
    ops = {(op.op_id, op.status, op.attempts) for op in d.characters[0].outbox}
    assert ops == {(b.notes["pending_op"], "pending", 2), (b.notes["dead_op"], "dead_letter", 5)}


def test_server_lock_held_is_a_warning_on_every_character(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    a = folders.healthy(root)
    b = folders.views_only_export(root)
    with folders.server_lock_held(tmp_path / "runtime") as lock:
        d = diagnose(root)
        assert server_status().state == "running"
    message = f"launcher.lock is held by pid {os.getpid()}: the memory server is running; replay must not run now"
    running = finding("server.running", "warning", message, None, str(lock))
    views = char(
        b,
        sentinel={"state": "missing", "event_id": None, "index": None},
        counts=counts(),
        findings=[VIEWS_ONLY, running],
    )
    assert d.to_json() == doc(root, char(a, sentinel=ok(a, 8), counts=counts(applied=9), findings=[running]), views)
    assert d.worst_severity() == "warning"
    assert server_status().state == "free"  # released: the probe itself never keeps it


def test_zip_export_of_a_memory_root_reads_like_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    a = folders.healthy(root)
    b = folders.pending_tail(root)
    v = folders.views_only_export(root)
    archive = folders.zip_export(root, tmp_path / "export.zip")
    expected = doc(
        archive,
        char(a, sentinel=ok(a, 8), counts=counts(applied=9)),
        char(
            b,
            sentinel=ok(b, 8),
            counts=counts(applied=9, pending=2),
            events=[
                ev(b, 9, "reflection.evidence_updated", "pending"),
                ev(b, 10, "persona.evidence_updated", "pending"),
            ],
            findings=[pending_finding(b, 2, 9)],
        ),
        char(v, sentinel={"state": "missing", "event_id": None, "index": None}, counts=counts(), findings=[VIEWS_ONLY]),
    )
    with diagnose(archive) as d:
        assert d.is_zip
        extracted = Path(d.root)
        assert extracted.is_dir() and not str(extracted).startswith(str(tmp_path))
        assert d.to_json() == expected
        assert d.to_json()["characters"] == diagnose(root).to_json()["characters"]
    assert not extracted.exists()  # close() removed the private copy


def test_zip_export_of_one_character_folder(tmp_path: Path) -> None:
    b = folders.persona_drift(tmp_path / "memory")
    archive = folders.zip_export(b.path, tmp_path / "drift.zip")
    expected = diagnose(b.path).to_json()
    d = diagnose(archive)
    try:
        assert [c.name for c in d.characters] == ["persona-drift"]
        assert d.to_json() == {**expected, "path": str(archive)}
    finally:
        d.close()


def test_a_character_folder_as_path(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    d = diagnose(b.path)
    assert d.kind == "character"
    assert d.to_json()["characters"] == diagnose(tmp_path).to_json()["characters"]


# -- sentinel states -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "state", "code"),
    [
        (None, "missing", "sentinel.missing"),
        (b"{not json", "malformed", "sentinel.malformed"),
        (b'["a list"]', "malformed", "sentinel.malformed"),
        (b'{"last_applied_event_id": 42, "ts": "x"}', "malformed", "sentinel.malformed"),
        (b'{"last_applied_event_id": null, "ts": "2026-05-01T09:00:00"}', "null", None),
        (
            b'{"last_applied_event_id": "0b7c1a7e-0000-4000-8000-000000000000", "ts": "x"}',
            "unknown_id",
            "sentinel.unknown_id",
        ),
    ],
)
def test_sentinel_states_make_every_event_pending(
    tmp_path: Path, content: bytes | None, state: str, code: str | None
) -> None:
    b = folders.healthy(tmp_path)
    sentinel = b.path / SENTINEL_NAME
    if content is None:
        sentinel.unlink()
    else:
        fs.atomic_write_bytes(sentinel, content)
    c = diagnose(tmp_path).characters[0]
    assert c.sentinel.state == state and c.sentinel.index is None
    assert c.counts() == counts(pending=9)  # a full replay of an applied journal changes nothing: nothing blocks
    codes = [f.code for f in c.findings]
    # The server replays the whole journal too (memory-format §3.2); an applied journal rolls nothing
    # back, so it is a warning, not an error.
    assert codes == ([code] if code else []) + ["tail.pending", "server.full_replay"]
    assert all(f.severity == "warning" for f in c.findings)
    start = c.server_start
    assert start is not None and start.sentinel.state == state
    assert (start.replays, start.applied, start.stop, start.changes_total) == (9, 9, None, 0)


def test_unknown_sentinel_of_a_restored_folder_replays_into_a_blocked_legacy_event(tmp_path: Path) -> None:
    b = folders.legacy_type_orphaned(tmp_path)
    write_sentinel(b.path, "not-in-this-journal")
    c = diagnose(tmp_path).characters[0]
    assert c.sentinel.state == "unknown_id"
    assert c.blocked is not None and (c.blocked.index, c.blocked.reason) == (9, "no_handler")
    assert c.counts() == counts(pending=10, blocked=1)


# -- suspect: the heuristic ---------------------------------------------------------------------------


def test_an_entry_changed_outside_the_journal_is_one_view_replaced_finding(tmp_path: Path) -> None:
    # Issue 26 item 4: a view whose values differ from its last applied event's, with no pending
    # event to explain it, is one view.replaced finding per character naming both values (the
    # event keeps its suspect state); without evidence of a download it says views were edited.
    b = folders.healthy(tmp_path)
    reflections = json.loads((b.path / "reflections.json").read_text(encoding="utf-8"))
    reflections[0]["status"] = "pending"  # its last event set "confirmed"
    fs.atomic_write_json(b.path / "reflections.json", reflections)
    c = diagnose(tmp_path).characters[0]
    assert [(e.index, e.state, e.reason) for e in c.events if e.state != "applied"] == [(3, "suspect", "view_differs")]
    [f] = c.findings
    assert (f.code, f.severity, f.file) == ("view.replaced", "warning", "reflections.json")
    named = f'reflections.json {folders.REFLECTION_IDS[0]}: status "pending" in the view, "confirmed" by the journal'
    assert named in f.message
    assert "views replaced or edited outside the journal" in f.message
    assert "cloud download" not in f.message


def test_a_correction_merge_after_an_applied_merge_is_neither_suspect_nor_drift(tmp_path: Path) -> None:
    # memory-format §9.5: the correction flow (action ``merge``) rewrites the entry's text and saves
    # persona.json directly, with no event. The last persona.entry_updated of that entry then no
    # longer hashes to the text: normal, and the server's start does nothing about it.
    b = folders.healthy(tmp_path)
    persona = load_view(b.path / "persona.json", dict)
    persona["master"]["facts"][1]["text"] = "Master drinks green tea every evening, and matcha on Sundays"
    save_view(b.path / "persona.json", persona)
    d = diagnose(tmp_path)
    c = d.characters[0]
    assert c.counts() == counts(applied=9)
    merge = 5  # the applied persona.entry_updated of that entry
    assert [f.to_json() for f in c.findings] == [
        finding(
            "view.moved_on",
            "info",
            f"event #{merge} (persona.entry_updated, master/{PERSONA_ENTRY[1]}): the entry's text changed after "
            "this applied merge, without an event (a correction merge, or a hand edit); normal: nothing replays it "
            "unless the merge event is replayed again",
            b.events[merge],
            "persona.json",
        )
    ]
    assert d.worst_severity() == "info"  # check exits 0
    assert c.server_start is not None and c.server_start.replays == 0


def test_only_the_last_event_of_an_entry_is_checked(tmp_path: Path) -> None:
    # ref_1's evidence event (#0) is superseded by the confirmation (#3): changing the evidence
    # field by hand is invisible to the heuristic; it says so by design.
    b = folders.healthy(tmp_path)
    reflections = json.loads((b.path / "reflections.json").read_text(encoding="utf-8"))
    reflections[0]["reinforcement"] = 9.0
    fs.atomic_write_json(b.path / "reflections.json", reflections)
    assert diagnose(tmp_path).characters[0].counts() == counts(applied=9)


# -- views, shards, compaction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("reflections.json", b'{"a": 1}', "reflections.json has a top-level dict, expected a list"),
        ("persona.json", b"[]", "persona.json has a top-level list, expected a dict"),
        ("facts.json", b"[{", None),
    ],
)
def test_corrupt_or_wrong_type_view(tmp_path: Path, name: str, content: bytes, message: str | None) -> None:
    folders.healthy(tmp_path)
    fs.atomic_write_bytes(tmp_path / "healthy" / name, content)
    c = diagnose(tmp_path).characters[0]
    corrupt = [f for f in c.findings if f.code == "view.corrupt"]
    assert [(f.severity, f.file) for f in corrupt] == [("error", name)]
    if message:
        assert corrupt[0].message == message


def test_corrupt_view_blocks_the_first_pending_event_that_needs_it(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    fs.atomic_write_bytes(b.path / "reflections.json", b"{broken")
    c = diagnose(tmp_path).characters[0]
    assert c.blocked is not None and (c.blocked.index, c.blocked.reason) == (9, "corrupt_view")
    assert reference_stop(b)[:2] == (9, "corrupt_view")


def test_misnamed_files_in_a_shard_folder(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    archive = b.path / "reflection_archive"
    (archive / "notes.json").write_text("[]")
    (archive / ".nkatmp00ff00ff.tmp").write_bytes(b"")
    (archive / ".migrated_from_flat").write_text("{}")
    c = diagnose(tmp_path).characters[0]
    assert [(f.code, f.severity, f.file) for f in c.findings] == [
        ("shard.bad_name", "warning", "reflection_archive/notes.json"),
        ("tempfile.leftover", "info", "reflection_archive/.nkatmp00ff00ff.tmp"),
    ]


def test_applied_archive_whose_shard_lost_the_entry_but_view_kept_it(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    shard = next((b.path / "reflection_archive").iterdir())
    fs.atomic_write_json(shard, [])
    reflections = json.loads((b.path / "reflections.json").read_text(encoding="utf-8"))
    reflections.append({"id": folders.REFLECTION_IDS[2], "text": "back", "status": "pending"})
    fs.atomic_write_json(b.path / "reflections.json", reflections)
    c = diagnose(tmp_path).characters[0]
    rel = f"reflection_archive/{shard.name}"
    assert [(f.code, f.severity, f.file) for f in c.findings] == [
        ("event.suspect", "warning", f"reflection_archive/{shard.name}, reflections.json"),
        ("shard.missing_entry", "warning", rel),
    ]
    assert c.events[7].state == "suspect"


def test_compaction_due_by_age_and_by_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = folders.healthy(tmp_path)
    old = diagnose(tmp_path, now=folders.BASE_TIME + timedelta(days=100)).characters[0]
    assert [(f.code, f.severity, f.message) for f in old.findings] == [
        (
            "compaction.due",
            "info",
            "the journal is due for compaction: the oldest event is 100 days old (threshold 90) "
            "(nothing compacts it automatically)",
        )
    ]
    assert old.compaction_due
    with open(b.path / JOURNAL_NAME, "ab") as fh:  # blank lines count, as upstream counts them
        fh.write(b"\n" * 10_000)
    many = diagnose(tmp_path).characters[0]
    assert [f.message for f in many.findings if f.code == "compaction.due"] == [
        "the journal is due for compaction: 10,009 lines (threshold 10,000) (nothing compacts it automatically)"
    ]


# -- input: roots, folders, names -------------------------------------------------------------------


def test_files_and_dot_folders_of_a_root_are_not_characters(tmp_path: Path) -> None:
    folders.healthy(tmp_path)
    (tmp_path / "speaker_trust.json").write_text("{}")
    (tmp_path / ".cache").mkdir()
    (tmp_path / "小天.v2").mkdir()
    (tmp_path / "小天.v2" / "unknown.bin").write_bytes(b"\x00\x01")
    d = diagnose(tmp_path)
    assert [c.name for c in d.characters] == ["healthy", "小天.v2"]
    assert [f.code for f in d.characters[1].findings] == ["journal.absent"]


def test_character_filter(tmp_path: Path) -> None:
    folders.healthy(tmp_path)
    folders.pending_tail(tmp_path)
    assert [c.name for c in diagnose(tmp_path, character="pending-tail").characters] == ["pending-tail"]
    with pytest.raises(UnknownCharacterError, match="no character named 'nobody'"):
        diagnose_path(tmp_path, character="nobody")


@pytest.mark.parametrize("make", ["missing", "plain file", "not a zip"])
def test_unreadable_path_raises(tmp_path: Path, make: str) -> None:
    path = tmp_path / "input.zip"
    if make == "plain file":
        path = tmp_path / "notes.txt"
        path.write_text("hello")
    elif make == "not a zip":
        path.write_bytes(b"PK\x03\x04 but not really a zip")
    with pytest.raises(UnreadableInputError):
        diagnose_path(path)


# -- hostile input: a finding, never a crash -----------------------------------------------------------------


def test_symlinks_pointing_outside_the_root_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret_persona = outside / "persona.json"
    secret_persona.write_text('{"master": {"facts": [{"id": "secret", "text": "SECRET"}]}}')
    (outside / "events.ndjson").write_bytes(
        b'{"event_id": "x", "type": "persona.fact_added", "ts": "", "payload": {}}\n'
    )
    root = tmp_path / "memory"
    b = folders.views_only_export(root)
    (b.path / "persona.json").unlink()
    os.symlink(secret_persona, b.path / "persona.json")
    os.symlink(outside / "events.ndjson", b.path / "events.ndjson")
    os.symlink(outside, root / "linked-character")
    d = diagnose(root)
    linked, views = d.characters
    assert linked.name == "linked-character"
    assert [(f.code, f.severity) for f in linked.findings] == [("input.refused", "warning")]
    assert "outside the memory root" in linked.findings[0].message
    refused = [(f.code, f.file) for f in views.findings if f.code == "input.refused"]
    assert refused == [("input.refused", "events.ndjson"), ("input.refused", "persona.json")]
    assert views.journal.present is False and views.journal.events == 0
    assert "SECRET" not in json.dumps(d.to_json(all_events=True))


def test_unreadable_files_are_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = folders.pending_tail(tmp_path)
    persona = b.path / "persona.json"
    persona.unlink()
    persona.mkdir()  # a folder where a view should be
    os.mkfifo(b.path / "outbox.ndjson")  # reading a FIFO would hang: it must not be opened
    real_open = fs.open_regular

    def deny_journal(path: Any) -> Any:
        if str(path).endswith(JOURNAL_NAME):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path)

    monkeypatch.setattr(fs, "open_regular", deny_journal)
    c = diagnose(tmp_path).characters[0]
    got = [(f.code, f.severity, f.message) for f in c.findings]
    assert ("journal.absent", "error", "events.ndjson exists but cannot be read: Permission denied") in got
    assert ("view.corrupt", "error", "persona.json cannot be read: Is a directory") in got
    assert (
        "input.refused",
        "warning",
        "outbox.ndjson is not a regular file (a FIFO, socket or device); not read",
    ) in got
    assert c.journal.present and c.journal.events == 0


def test_journal_that_is_a_folder(tmp_path: Path) -> None:
    b = folders.views_only_export(tmp_path)
    (b.path / JOURNAL_NAME).mkdir()
    c = diagnose(tmp_path).characters[0]
    assert [(f.code, f.severity) for f in c.findings] == [("journal.absent", "error")]


def test_a_20_mib_single_line(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    with open(b.path / JOURNAL_NAME, "ab") as fh:
        fh.write(b'{"event_id": "' + b"7" * (20 << 20) + b"\n")
    c = diagnose(tmp_path).characters[0]
    assert c.counts() == counts(applied=9, defects=1)
    assert [(d.kind, d.line, d.length) for d in c.defects] == [("malformed", 10, (20 << 20) + 14)]
    assert [f.code for f in c.findings] == ["line.malformed"]
    assert "7777" not in c.findings[0].message  # content is never quoted


def test_binary_garbage_everywhere(tmp_path: Path) -> None:
    rng = random.Random(4)
    b = folders.healthy(tmp_path)
    fs.atomic_write_bytes(b.path / JOURNAL_NAME, rng.randbytes(1 << 20))
    fs.atomic_write_bytes(b.path / SENTINEL_NAME, rng.randbytes(300))
    fs.atomic_write_bytes(b.path / "persona.json", rng.randbytes(5000))
    fs.atomic_write_bytes(b.path / "outbox.ndjson", rng.randbytes(5000))
    shard = next((b.path / "reflection_archive").iterdir())
    fs.atomic_write_bytes(shard, rng.randbytes(3000))
    c = diagnose(tmp_path).characters[0]
    codes = {f.code for f in c.findings}
    assert {"sentinel.malformed", "view.corrupt", "shard.corrupt"} <= codes
    assert codes & {"line.malformed", "line.invalid_utf8", "line.torn_tail"}
    assert codes <= set(FINDING_CODES)


def test_deeply_nested_json(tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    fs.atomic_write_bytes(b.path / "facts.json", b"[" * 200_000 + b"]" * 200_000)
    deep_value = "[" * 1000 + "]" * 1000  # orjson parses it; copying it recurses past Python's limit
    record = (
        '{"event_id": "deep-1", "type": "reflection.evidence_updated", "ts": "2026-05-01T10:00:00", '
        f'"payload": {{"reflection_id": "{folders.REFLECTION_IDS[1]}", "reinforcement": {deep_value}}}}}\n'
    )
    with open(b.path / JOURNAL_NAME, "ab") as fh:
        fh.write(("[" * 100_000 + "]" * 100_000 + "\n").encode())  # too deep for any parser: a bad line
        fh.write(record.encode())
    c = diagnose(tmp_path).characters[0]
    assert [(f.code, f.file) for f in c.findings if f.code == "view.corrupt"] == [("view.corrupt", "facts.json")]
    assert [d.kind for d in c.defects] == ["malformed"]
    assert c.counts()["pending"] + c.counts()["blocked"] == 3
    assert c.blocked is not None and c.blocked.event_id == "deep-1" and c.blocked.reason == "handler_error"


# -- zips: traversal, links, bombs -------------------------------------------------------------------------


def test_zip_members_outside_the_folder_and_links_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    folders.healthy(root)
    archive = folders.zip_export(root, tmp_path / "hostile.zip")
    for name in ("../escaped.txt", "/etc/escaped.txt", "healthy/../../escaped.txt", "C:\\escaped.txt"):
        folders.add_zip_member(archive, name, b"pwned")
    folders.add_zip_member(archive, "memory/healthy/persona_link.json", b"/etc/passwd", symlink=True)
    d = diagnose(archive)
    try:
        refused = [f.file for f in d.findings]
        assert refused == [
            "../escaped.txt",
            "/etc/escaped.txt",
            "healthy/../../escaped.txt",
            "C:\\escaped.txt",
            "memory/healthy/persona_link.json",
        ]
        assert all(f.code == "input.refused" and f.severity == "error" for f in d.findings)
        [c] = d.characters
        assert c.findings[-5:] == d.findings  # copied into the character: the JSON shape has no other place
        assert not (Path(d.root) / "memory" / "healthy" / "persona_link.json").exists()
        assert d.worst_severity() == "error"
    finally:
        d.close()
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not list(Path(d.root).parent.glob("escaped.txt"))


def test_zip_bomb_is_stopped_by_the_size_limit(tmp_path: Path) -> None:
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("memory/a/events.ndjson", b"\n" * (8 << 20))
    assert archive.stat().st_size < 100_000
    with pytest.raises(UnreadableInputError, match="zip bomb"):
        diagnose_path(archive, zip_limits=ZipLimits(max_total_bytes=4 << 20))
    with pytest.raises(UnreadableInputError, match="zip bomb"):
        diagnose_path(archive, zip_limits=ZipLimits(max_members=0))


def test_zip_member_whose_size_header_lies_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "liar.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("memory/a/events.ndjson", b"\n" * 4096)
    data = bytearray(archive.read_bytes())
    # Shrink the declared uncompressed size in the central directory: a bomb that lies.
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    with diagnose_path(archive, zip_limits=ZipLimits(max_total_bytes=100)) as d:
        # zipfile reads at most the declared size and then fails the CRC: the member is refused
        assert [f.code for f in d.findings] == ["input.refused"]


# -- the value types -------------------------------------------------------------------------------------


def test_event_list_behaves_like_a_list_of_event_infos() -> None:
    items = [EventInfo(i, i + 1, 10 * i, f"e{i}", "persona.fact_added", "", None, "applied") for i in range(4)]
    items[2] = EventInfo(2, 3, 20, "e2", "reflection.surfaced", "ts", "r", "orphaned", "no_handler", "why")
    events = EventList(items)
    assert len(events) == 4 and events == items and list(events) == items
    assert events[-1] == items[3] and events[1:3] == items[1:3]
    assert events.indices("orphaned") == [2] and events.index_of("e3") == 3
    assert [e.index for e in events.not_applied()] == [2]
    events.set_state(0, "pending")
    assert events[0].state == "pending" and events.state_counts()["pending"] == 1
    events.append(EventInfo(4, 5, 40, "e4", "persona.fact_added", "", None, "pending"))
    assert len(events) == 5 and events.index_of("e4") == 4
    with pytest.raises(TypeError):
        del events[0]


def test_diagnose_character_directly(tmp_path: Path) -> None:
    b = folders.persona_drift(tmp_path)
    c = diagnose_character(b.path, now=FIXTURE_NOW)
    assert c.name == "persona-drift" and c.blocked is not None and c.blocked.reason == "view_drift"
    assert isinstance(c.events, EventList) and len(c.events) == 10
