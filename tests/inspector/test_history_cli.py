"""``memory-inspector history``: exact JSON on fixtures, the text for people, exit codes, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from journal import fixtures as folders
from journal.events import JOURNAL_NAME, encode_event, make_event
from journal.views import PERSONA

pytestmark = pytest.mark.usefixtures("replay_env")

R1, R2, R3, _ = folders.REFLECTION_IDS
PKEY, PID = folders.PERSONA_ENTRY


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["history", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = _run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.fixture
def healthy(root: Path) -> folders.Built:
    return folders.healthy(root)


def _entry(rid: str, entity: str | None = None) -> dict[str, Any]:
    return {"id": rid, "entity": entity, "ref": rid if entity is None else f"{entity}/{rid}"}


EVIDENCE_R1 = {
    "reinforcement": 1.2,
    "disputation": 0.0,
    "rein_last_signal_at": "2026-05-01T09:00:00",
    "disp_last_signal_at": None,
    "sub_zero_days": 0,
    "user_fact_reinforce_count": 1,
}


def test_entry_json(capsys: pytest.CaptureFixture[str], healthy: folders.Built) -> None:
    ev = healthy.events
    assert _json(capsys, str(healthy.root), "--character", "healthy", "--entry", R1) == {
        "schema": 1,
        "character": "healthy",
        "entry": _entry(R1),
        "sentinel_index": 8,
        "last_applied": 3,
        "view": {"index": 3, "agrees": True, "differences": [], "message": None},
        "points": [
            {
                "index": 0,
                "event_id": ev[0],
                "type": "reflection.evidence_updated",
                "ts": "2026-05-01T09:00:01.250000",
                "state": "applied",
                "reason": None,
                "shown_state": "applied",
                "effect": "changed",
                "noop": False,
                "changed": [
                    "disp_last_signal_at",
                    "disputation",
                    "placement",
                    "rein_last_signal_at",
                    "reinforcement",
                    "sub_zero_days",
                    "user_fact_reinforce_count",
                ],
                "fields": {**EVIDENCE_R1, "placement": "view"},
                "view_agrees": None,
            },
            {
                "index": 3,
                "event_id": ev[3],
                "type": "reflection.state_changed",
                "ts": "2026-05-01T09:00:12.500000",
                "state": "applied",
                "reason": None,
                "shown_state": "applied",
                "effect": "changed",
                "noop": False,
                "changed": ["confirmed_at", "status"],
                "fields": {
                    **EVIDENCE_R1,
                    "status": "confirmed",
                    "confirmed_at": "2026-05-01T09:00:11.250000",
                    "placement": "view",
                },
                "view_agrees": True,
            },
        ],
    }


def test_entry_at_json(capsys: pytest.CaptureFixture[str], healthy: folders.Built) -> None:
    ev = healthy.events
    path = str(healthy.path)  # a character folder: no --character needed
    assert _json(capsys, path, "--entry", R1, "--at", ev[5]) == {
        "schema": 1,
        "character": "healthy",
        "at": {"index": 5, "event_id": ev[5]},
        "entry": _entry(R1),
        "point": 3,
        "fields": {
            **EVIDENCE_R1,
            "status": "confirmed",
            "confirmed_at": "2026-05-01T09:00:11.250000",
            "placement": "view",
        },
    }
    assert _json(capsys, path, "--entry", R3, "--at", ev[3])["fields"] is None  # not touched yet
    archived = _json(capsys, path, "--entry", R3, "--at", ev[8])
    assert archived["point"] == 7
    assert archived["fields"]["placement"] == "archive"
    assert archived["fields"]["shard"] == archived["fields"]["archive_shard_path"]


def test_state_at_json(capsys: pytest.CaptureFixture[str], healthy: folders.Built) -> None:
    ev = healthy.events
    doc = _json(capsys, str(healthy.path), "--at", ev[3])
    assert doc["at"] == {"index": 3, "event_id": ev[3]}
    assert [(e["entry"]["ref"], e["point"]) for e in doc["entries"]] == [(R1, 3), (R2, 1), (f"{PKEY}/{PID}", 2)]
    assert doc["entries"][1]["fields"] == {
        "reinforcement": 2.1,
        "disputation": 0.0,
        "rein_last_signal_at": "2026-05-01T09:00:03.750000",
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": 1,
        "placement": "view",
    }


def test_between_json(capsys: pytest.CaptureFixture[str], healthy: folders.Built) -> None:
    ev = healthy.events
    assert _json(capsys, str(healthy.path), "--between", ev[3], ev[6]) == {
        "schema": 1,
        "character": "healthy",
        "from": {"index": 3, "event_id": ev[3]},
        "to": {"index": 6, "event_id": ev[6]},
        "changes": [
            {
                "entry": _entry(R2),
                "fields": [
                    {"name": "absorbed_into", "after": PID},
                    {"name": "merged_at", "after": "2026-05-01T09:00:22.500000"},
                    {"name": "status", "after": "merged"},
                ],
            },
            {
                "entry": _entry(PID, PKEY),
                "fields": [
                    {"name": "disp_last_signal_at", "before": None, "after": "2026-05-01T09:00:18.750000"},
                    {"name": "merged_from_ids", "after": [R2]},
                    {
                        "name": "rein_last_signal_at",
                        "before": "2026-05-01T09:00:07.500000",
                        "after": "2026-05-01T09:00:18.750000",
                    },
                    {"name": "reinforcement", "before": 1.5, "after": 2.5},
                    {
                        "name": "text_sha256",
                        "after": "77fb0c14739d5035c4ed3e0df1d1602b312c165d6fa8f68058e4925b15715c2c",
                    },
                ],
            },
        ],
    }


def _correct_text(char_dir: Path) -> None:
    p = char_dir / PERSONA
    data = json.loads(p.read_text("utf-8"))
    data[PKEY]["facts"][1]["text"] = "Corrected"
    p.write_text(json.dumps(data, indent=2, ensure_ascii=False), "utf-8")


def test_moved_json(capsys: pytest.CaptureFixture[str], healthy: folders.Built) -> None:
    assert _json(capsys, str(healthy.path)) == {"schema": 1, "character": "healthy", "moved": []}
    _correct_text(healthy.path)
    doc = _json(capsys, str(healthy.path))
    [moved] = doc["moved"]
    message = moved.pop("message")
    assert moved == {
        "entry": _entry(PID, PKEY),
        "code": "view.moved_on",
        "severity": "info",
        "index": 5,
        "event_id": healthy.ids["merge"],
        "state": "applied",
        "differences": [
            {
                "name": "text_sha256",
                "point": "77fb0c14739d5035c4ed3e0df1d1602b312c165d6fa8f68058e4925b15715c2c",
                "view": hashlib.sha256(b"Corrected").hexdigest(),
            }
        ],
        "finding": "view.moved_on",
    }
    # The same words as check's finding: one fact, one code.
    assert main(["check", str(healthy.path), "--json"]) == 0
    check = json.loads(capsys.readouterr().out)
    [finding] = [f for f in check["characters"][0]["findings"] if f["code"] == "view.moved_on"]
    assert finding["message"] == message and finding["event_id"] == healthy.ids["merge"]


def test_text_for_people(capsys: pytest.CaptureFixture[str], healthy: folders.Built) -> None:
    code, out, err = _run(capsys, str(healthy.path), "--entry", PID, "--entity", PKEY)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"healthy: persona entry {PKEY}/{PID}: 3 events"
    assert "the current view agrees with #5, the last applied event" in lines[2]
    assert lines[-1].split()[:4] == ["#5", "applied", "changed", "persona.entry_updated"]
    assert lines[-1].endswith("← last applied")
    _correct_text(healthy.path)
    code, out, _ = _run(capsys, str(healthy.path))
    assert code == 0 and out.splitlines()[0] == "healthy: 1 view moved without an event"
    assert out.splitlines()[1].startswith("  info: view.moved_on: event #5 (persona.entry_updated")


def test_zip_export(capsys: pytest.CaptureFixture[str], healthy: folders.Built, tmp_path: Path) -> None:
    z = folders.zip_export(healthy.path, tmp_path / "export.zip")
    assert [p["index"] for p in _json(capsys, str(z), "--entry", R1)["points"]] == [0, 3]


def test_bad_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], healthy: folders.Built, root: Path
) -> None:
    folders.pending_tail(root)  # now the root holds two characters
    cases = [
        ([str(root / "missing")], "no such file or folder"),
        ([str(root), "--entry", R1], "holds 2 characters ('healthy', 'pending-tail'): name one with --character"),
        ([str(root), "--character", "nobody", "--entry", R1], "no character named 'nobody'"),
        ([str(healthy.path), "--entry", "ref_none"], "touches entry 'ref_none'"),
        ([str(healthy.path), "--at", "no-such-event"], "no event 'no-such-event'"),
        ([str(healthy.path), "--entity", "master"], "--entity needs --entry"),
        ([str(healthy.path), "--between", healthy.events[0], healthy.events[1], "--entry", R1], "--between"),
    ]
    for argv, words in cases:
        for extra in ([], ["--json"]):
            code, out, err = _run(capsys, *argv, *extra)
            assert code == 2 and out == "", argv
            assert err.count("\n") == 1 and words in err, (argv, err)
            assert err.startswith("memory-inspector history: error: ")


def test_hostile_ids_are_escaped(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    char_dir = root / "c"
    char_dir.mkdir()
    rid = "ref_\x1b[31mred\nline"
    payload = {"reflection_id": rid, "reinforcement": 1.0}
    (char_dir / JOURNAL_NAME).write_bytes(
        encode_event(make_event("e-1", "reflection.evidence_updated", "2026\x07", payload)) + b"garbage\n\xff\n"
    )
    code, out, _ = _run(capsys, str(char_dir), "--entry", rid)
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\\x1b[31mred\\nline" in out
    assert _json(capsys, str(char_dir), "--entry", rid)["entry"]["id"] == rid
    code, out, err = _run(capsys, str(char_dir), "--entry", "x\x1b")
    assert code == 2 and "\x1b" not in err


def test_never_writes_inside_the_folder(capsys: pytest.CaptureFixture[str], healthy: folders.Built) -> None:
    _correct_text(healthy.path)
    before = folders.tree_snapshot(healthy.root)
    ev = healthy.events
    for argv in (["--entry", R1], ["--at", ev[4]], ["--between", ev[0], ev[8]], []):
        assert _run(capsys, str(healthy.path), *argv)[0] == 0
    assert folders.tree_snapshot(healthy.root) == before


# -- one privacy rule, --redact, one entry syntax and one event syntax (issue 25) ------------------


def _private_entry(root: Path) -> Path:
    """A folder whose persona entry master/prom_ref_1 carries user text outside ``text`` (its
    ``event_when_raw``), a reflection with the same id, and neko's entry with it too."""
    char_dir = root / "c"
    char_dir.mkdir()
    events = [
        ("e-1", "persona.entry_updated", {"entity_key": "master", "entry_id": "prom_ref_1",
                                          "event_when_raw": "at SECRET's birthday", "reinforcement": 1.0}),
        ("e-2", "reflection.evidence_updated", {"reflection_id": "prom_ref_1", "reinforcement": 2.0}),
        ("e-3", "persona.evidence_updated", {"entity_key": "neko", "entry_id": "prom_ref_2", "reinforcement": 3.0}),
        ("f-4", "persona.evidence_updated", {"entity_key": "neko", "entry_id": "prom_ref_1", "reinforcement": 4.0}),
    ]
    data = b"".join(
        encode_event(make_event(eid, etype, f"2026-01-01T00:00:0{i}", payload))
        for i, (eid, etype, payload) in enumerate(events)
    )
    (char_dir / JOURNAL_NAME).write_bytes(data)
    return char_dir


def test_text_outside_the_text_key_stays_out_of_the_terminal(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    char_dir = _private_entry(root)
    for argv in (["--entry", "master/prom_ref_1"], ["--at", "#0"], ["--at", "e-1", "--entry", "master/prom_ref_1"]):
        code, out, err = _run(capsys, str(char_dir), *argv)
        assert (code, err) == (0, ""), argv
        assert "SECRET" not in out and "event_when_raw" in out, argv
        assert "‹text, 20 chars›" in out, argv  # what it is and its size, never its words
        assert "reinforcement" in out and "1.0" in out  # numbers are shown
    # --json is the data; with --redact, the window's redaction
    doc = _json(capsys, str(char_dir), "--entry", "master/prom_ref_1")
    assert doc["points"][0]["fields"]["event_when_raw"] == "at SECRET's birthday"
    code, out, _ = _run(capsys, str(char_dir), "--entry", "master/prom_ref_1", "--json", "--redact")
    assert code == 0 and "SECRET" not in out
    redacted = json.loads(out)["points"][0]["fields"]
    assert redacted["event_when_raw"].startswith("‹event_when_raw · 20 chars · ") and redacted["reinforcement"] == 1.0
    code, out, _ = _run(capsys, str(char_dir), "--at", "#0", "--json", "--redact")
    assert code == 0 and "SECRET" not in out and "‹event_when_raw · 20 chars · " in out


def test_an_entry_is_named_as_check_names_it_or_by_a_unique_id(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    char_dir = _private_entry(root)
    by_ref = _json(capsys, str(char_dir), "--entry", "master/prom_ref_1")
    assert by_ref["entry"] == _entry("prom_ref_1", "master") and [p["index"] for p in by_ref["points"]] == [0]
    assert _json(capsys, str(char_dir), "--entry", "prom_ref_1", "--entity", "master") == by_ref
    alone = _json(capsys, str(char_dir), "--entry", "prom_ref_2")  # one entity has it: no --entity needed
    assert alone["entry"] == _entry("prom_ref_2", "neko")
    code, out, err = _run(capsys, str(char_dir), "--entry", "prom_ref_1")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "ambiguous" in err and "master/prom_ref_1, neko/prom_ref_1, prom_ref_1" in err


def test_events_are_named_as_ctrl_g_takes_them(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    char_dir = _private_entry(root)
    assert _json(capsys, str(char_dir), "--at", "#1")["at"] == {"index": 1, "event_id": "e-2"}
    assert _json(capsys, str(char_dir), "--at", "f")["at"] == {"index": 3, "event_id": "f-4"}  # a unique prefix
    assert _json(capsys, str(char_dir), "--at", "e-3")["at"] == {"index": 2, "event_id": "e-3"}
    between = _json(capsys, str(char_dir), "--between", "#0", "f-")
    assert (between["from"]["index"], between["to"]["index"]) == (0, 3)
    code, out, err = _run(capsys, str(char_dir), "--at", "e-")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "several events" in err and "#0 e-1, #1 e-2, #2 e-3" in err
    for missing in ("#4", "x"):
        code, out, err = _run(capsys, str(char_dir), "--at", missing)
        assert code == 2 and f"no event {missing!r}" in err
