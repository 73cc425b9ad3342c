"""``memory-inspector check``: exit codes, the ``--json`` document, and the output for people."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import journal.compaction
import journal.diagnosis
from inspector.cli import main
from inspector.core import check_report, output
from journal import fixtures as folders
from journal import fs
from journal.diagnosis import diagnose_path
from journal.events import JOURNAL_NAME
from journal.fixtures import FIXTURE_NOW

#: The diagnosis clock before the autouse fixture pins it (a child process reads the real clock).
_REAL_NOW = journal.compaction._now

#: The exit code ``check`` must give for each fixture case.
EXIT_CODES = {
    "healthy": 0,
    "pending-tail": 1,
    "blocked-legacy-type": 1,
    "orphaned-by-live-write": 1,
    "glued-torn-line": 1,
    "torn-tail": 1,
    "archive-entry-lost": 1,
    "persona-drift": 1,
    "wedged-merge": 1,
    "corrupt-shard": 1,
    "hostile-shard-basename": 1,
    "views-only": 0,
    "outbox-backlog": 1,
}


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path_factory.mktemp("runtime")))
    monkeypatch.setattr(journal.compaction, "_now", lambda: FIXTURE_NOW)


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["check", *argv])
    except SystemExit as exc:  # argparse errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_case_case_is_covered() -> None:
    assert set(EXIT_CODES) == set(folders.CASES)


@pytest.mark.parametrize("case", sorted(folders.CASES))
def test_json_is_the_diagnosis_and_the_exit_code_follows_severity(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str
) -> None:
    folders.CASES[case](tmp_path)
    before = folders.tree_snapshot(tmp_path)
    code, out, err = check(capsys, str(tmp_path), "--json")
    assert folders.tree_snapshot(tmp_path) == before
    assert (code, err) == (EXIT_CODES[case], "")
    assert json.loads(out) == diagnose_path(tmp_path, now=FIXTURE_NOW).to_json()


def test_json_document_exactly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    size = (b.path / JOURNAL_NAME).stat().st_size
    code, out, _ = check(capsys, str(tmp_path), "--json")
    assert code == 1
    assert json.loads(out) == {
        "schema": 1,
        "path": str(tmp_path),
        "characters": [
            {
                "name": "pending-tail",
                "journal": {"present": True, "lines": 11, "events": 11, "bytes": size},
                "sentinel": {"state": "ok", "event_id": b.events[8], "index": 8},
                "counts": {"applied": 9, "pending": 2, "blocked": 0, "orphaned": 0, "suspect": 0, "defects": 0},
                "blocked": None,
                "events": [
                    {
                        "index": 9,
                        "line": 10,
                        "event_id": b.ids["tail1"],
                        "type": "reflection.evidence_updated",
                        "state": "pending",
                        "reason": None,
                    },
                    {
                        "index": 10,
                        "line": 11,
                        "event_id": b.ids["tail2"],
                        "type": "persona.evidence_updated",
                        "state": "pending",
                        "reason": None,
                    },
                ],
                "defects": [],
                "findings": [
                    {
                        "code": "tail.pending",
                        "severity": "warning",
                        "message": "2 events after the sentinel are not applied yet; our guarded replay applies them "
                        "(what the memory server's start does: server_start)",
                        "event_id": b.ids["tail1"],
                        "file": None,
                        "advice": None,
                    }
                ],
                "server_start": {
                    "reconciled": None,
                    "characters_file": None,
                    "sentinel": {"state": "ok", "event_id": b.events[8], "index": 8},
                    "persona_ensure": {
                        "action": "keep",
                        "message": "persona.json is readable and persona ensure changes nothing: nothing is "
                        "written (unless what it could not know changes it: it may rewrite)",
                        "changes": [],
                        "missing_inputs": [
                            f"the server's localized default card of {b.name!r} (no characters.json found): the "
                            "neko card sync may change neko.facts",
                            "the server's localized default master card (no characters.json found): the master "
                            "card sync may change master.facts",
                        ],
                        "may_rewrite": True,
                    },
                    "replay": {
                        "events": 2,
                        "applied": 2,
                        "stops": None,
                        "passed_corrupt_shards": [],
                        "stray_shard_writes": [],
                    },
                    "changes": [
                        {
                            "file": "reflections.json",
                            "entry": folders.REFLECTION_IDS[0],
                            "removed": False,
                            "added": False,
                            "fields": [
                                {"name": "reinforcement", "before": 1.2, "after": 1.9},
                                {"name": "rein_last_signal_at", "before": "...", "after": "..."},
                            ],
                        },
                        {
                            "file": "persona.json",
                            "entry": "/".join(folders.PERSONA_ENTRY),
                            "removed": False,
                            "added": False,
                            "fields": [
                                {"name": "reinforcement", "before": 2.5, "after": 3.1},
                                {"name": "rein_last_signal_at", "before": "...", "after": "..."},
                                {"name": "disp_last_signal_at", "before": "...", "after": None},
                            ],
                        },
                    ],
                    "changes_total": 2,
                    "writes": [
                        {"path": "events_applied.json", "outside": False},
                        {"path": "persona.json", "outside": False},
                        {"path": "reflections.json", "outside": False},
                    ],
                    "left_unapplied": 0,
                    "outbox_pending": 0,
                    "notes": [],
                    "advice": [],
                    "summary": "the memory server's next start replays 2 events, changes 2 entries",
                    "reconcile_raises": None,
                    "deletes": [],
                    "sentinel_after": {"by": "replay", "event_id": b.ids["tail2"]},
                    "after_reconcile": {"evidence_migration": None, "archive_migration": None},
                },
                "server_start_not_applicable": None,
                "cloud_unit": None,
            }
        ],
    }
    assert out.endswith("}\n")


def test_all_events_lists_applied_events_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    b = folders.pending_tail(tmp_path)
    _, out, _ = check(capsys, str(tmp_path), "--json", "--all-events")
    events = json.loads(out)["characters"][0]["events"]
    assert [e["event_id"] for e in events] == b.events
    assert [e["state"] for e in events] == ["applied"] * 9 + ["pending"] * 2


def test_character_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folders.healthy(tmp_path)
    folders.persona_drift(tmp_path)
    code, out, _ = check(capsys, str(tmp_path), "--character", "healthy", "--json")
    assert code == 0
    assert [c["name"] for c in json.loads(out)["characters"]] == ["healthy"]
    code, out, _ = check(capsys, str(tmp_path), "--character", "persona-drift", "--json")
    assert code == 1


def test_a_zip_export(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "memory"
    folders.healthy(root)
    folders.views_only_export(root)
    archive = folders.zip_export(root, tmp_path / "export.zip")
    code, out, err = check(capsys, str(archive), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {**diagnose_path(root, now=FIXTURE_NOW).to_json(), "path": str(archive)}


def test_a_hostile_zip_reports_refusals_on_stderr_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "memory"
    folders.healthy(root)
    archive = folders.zip_export(root, tmp_path / "export.zip")
    folders.add_zip_member(archive, "../../escaped.txt")
    code, out, err = check(capsys, str(archive), "--json")
    assert code == 1
    assert err == (
        "memory-inspector check: error: zip member '../../escaped.txt' refused: "
        "'..' would put it outside the extraction folder\n"
    )
    assert [f["code"] for f in json.loads(out)["characters"][0]["findings"]] == ["input.refused"]


def test_server_running_gives_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "memory"
    folders.healthy(root)
    with folders.server_lock_held(tmp_path / "runtime"):
        code, out, _ = check(capsys, str(root))
    assert code == 1
    assert "warning  server.running" in out
    assert check(capsys, str(root))[0] == 0


def test_server_findings_count_for_the_exit_code(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # <app_docs>/memory beside <app_docs>/config/characters.json (memory-format §9.1)
    root = tmp_path / "app" / "memory"
    folders.healthy(root)
    config = tmp_path / "app" / "config"
    config.mkdir(parents=True)
    listing = config / "characters.json"
    listing.write_bytes(b"{garbage")
    code, out, err = check(capsys, str(root), "--json")
    assert (code, err) == (1, "")  # the only warning is a server.* finding
    [c] = json.loads(out)["characters"]
    # §9.8 item 10: a characters.json it cannot read makes the server use its defaults (only 'test')
    server = {f["code"]: f for f in c["findings"] if f["code"].startswith("server.")}
    assert {k: f["severity"] for k, f in server.items()} == {
        "server.characters_file": "warning",
        "server.not_reconciled": "info",
    }
    assert [f["severity"] for f in c["findings"] if not f["code"].startswith("server.")] in ([], ["info"])
    assert "only 'test'" in server["server.characters_file"]["message"]
    assert "only 'test'" in server["server.not_reconciled"]["message"]
    assert c["server_start"]["characters_file"] == str(listing) and c["server_start"]["reconciled"] is False
    listing.write_text(json.dumps({"猫娘": {"someone-else": {}}}, ensure_ascii=False), encoding="utf-8")
    code, out, _ = check(capsys, str(root), "--json")
    assert code == 0  # not reconciled is info only
    [c] = json.loads(out)["characters"]
    assert [(f["code"], f["severity"]) for f in c["findings"]] == [("server.not_reconciled", "info")]
    assert c["server_start"]["reconciled"] is False
    code, out, _ = check(capsys, str(root))
    assert code == 0 and "info     server.not_reconciled" in out


# -- exit code 2 --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["{tmp}/nowhere"], "memory-inspector check: error: {tmp}/nowhere: no such file or folder\n"),
        (["{tmp}/notes.txt"], "memory-inspector check: error: {tmp}/notes.txt: neither a folder nor a .zip export\n"),
        (
            ["{tmp}/root", "--character", "nobody"],
            "memory-inspector check: error: {tmp}/root: no character named 'nobody'\n",
        ),
    ],
)
def test_unreadable_path_or_wrong_character_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], reason: str
) -> None:
    (tmp_path / "notes.txt").write_text("not memory")
    folders.healthy(tmp_path / "root")
    code, out, err = check(capsys, *(a.format(tmp=tmp_path) for a in argv))
    assert (code, out, err) == (2, "", reason.format(tmp=tmp_path))


def test_a_corrupt_zip_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "export.zip"
    bad.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    code, out, err = check(capsys, str(bad))
    assert (code, out) == (2, "")
    assert err.startswith("memory-inspector check: error: ") and err.count("\n") == 1


@pytest.mark.parametrize("argv", [[], ["--json"], ["a", "b"], ["{tmp}", "--no-such-option"]])
def test_wrong_arguments_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]) -> None:
    code, out, err = check(capsys, *(a.format(tmp=tmp_path) for a in argv))
    assert code == 2 and out == ""
    assert err.splitlines()[-1].startswith("memory-inspector check: error: ")


# -- for people ---------------------------------------------------------------------------------


def test_human_output_has_one_block_per_character_and_one_line_per_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    b = folders.legacy_type_blocked(tmp_path)
    folders.healthy(tmp_path)
    code, out, err = check(capsys, str(tmp_path))
    assert (code, err) == (1, "")
    blocks = out.split("\n\n")
    assert blocks[0].splitlines() == [
        f"memory-inspector check: {tmp_path} (memory root, 2 characters)",
        "server: free: no launcher.lock: the app is not running",
    ]
    legacy = b.ids["legacy"]
    ts = json.loads((b.path / JOURNAL_NAME).read_text(encoding="utf-8").splitlines()[9])["ts"]
    assert blocks[1].splitlines() == [
        "blocked-legacy-type",
        f"  journal   11 lines, 11 events, {(b.path / JOURNAL_NAME).stat().st_size / 1024:,.1f} KiB",
        "  Memory server's next start — what happens to this folder unless someone acts (predicted; nothing is "
        "written)",
        "    error    The memory server's next start replays 2 events, stops at #9 (no_handler) after applying 0.",
        "    info     Persona ensure: keep: persona.json is readable and persona ensure changes nothing: nothing is "
        "written (unless what it could not know changes it: it may rewrite)",
        "    info     Persona ensure: not known here: the server's localized default card of 'blocked-legacy-type' "
        "(no characters.json found): the neko card sync may change neko.facts; the server's localized default "
        "master card (no characters.json found): the master card sync may change master.facts",
        "    info     Replay: 2 events from event #9; it applies 0",
        "    error    Stops at: event #9 (line 10) reflection.surfaced: no_handler: no replay handler is registered "
        "for 'reflection.surfaced'; it leaves 2 events unapplied",
        "    info     Note: its next live write moves the sentinel to the journal end: the 2 records its start "
        "leaves unapplied are orphaned",
        "    info     Reconciled: not known (no characters.json found beside the memory root)",
        "  guarded replay (memory-inspector, stricter than the server)",
        f"  sentinel  ok at event #8 {b.events[8]}",
        # our own live write after the pause was recorded in the applied set: applied, never run again
        "  events    10 applied · 0 pending · 1 blocked · 0 orphaned · 0 suspect · 0 defects",
        "  blocked   event #9 reflection.surfaced: no_handler: "
        "no replay handler is registered for 'reflection.surfaced'",
        "  findings (4)",
        # errors first, the server's next start's first among them; then warnings
        "    error    server.replay_stops       the memory server's next start stops at event #9 "
        "(reflection.surfaced: no_handler) after applying 0; the 1 after it stay unapplied by it (1 of them our "
        "guarded replay already applied, so their effect is in the views), and its next live write moves the "
        f"sentinel past them for good (memory-format §9.6)  [event {legacy}]",
        "    error    replay.blocked            replay cannot apply event #9 (reflection.surfaced): no_handler: no "
        "replay handler is registered for 'reflection.surfaced'; it holds reflection "
        f"{folders.REFLECTION_IDS[0]} and goes on with other entries  [event {legacy}]",
        "    error    replay.held               guarded replay holds reflection "
        f"{folders.REFLECTION_IDS[0]} at event #9 (reflection.surfaced, ts {ts}) since it cannot apply it "
        "(no_handler); 0 later events of that entry wait behind it, and events of other entries still replay. "
        "The sentinel stays before it until it applies or a person parks it (what to do: memory-inspector replay PATH "
        f"--character blocked-legacy-type --park {legacy})  [event {legacy}]",
        "    warning  tail.pending              1 event after the sentinel is not applied yet; replay holds 1 of "
        f"them, from event #9 (no_handler)  [event {legacy}]",
    ]
    assert blocks[2].splitlines()[-1] == "  findings  none: healthy"
    assert blocks[3] == "result: PROBLEMS FOUND (3 errors, 1 warning, 0 info)\n"


def test_human_output_with_all_events_shows_the_timeline(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    b = folders.legacy_type_orphaned(tmp_path)
    _, out, _ = check(capsys, str(b.path), "--all-events")
    timeline = [line for line in out.splitlines() if line.startswith("    #")]
    assert len(timeline) == 11
    assert timeline[9].split() == [
        "#9",
        "line",
        "10",
        "orphaned",
        "reflection.surfaced",
        "(no_handler)",
        b.ids["legacy"],
    ]


def test_control_characters_from_a_hostile_journal_never_reach_the_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    b = folders.healthy(tmp_path)
    fs.durable_append(
        b.path / JOURNAL_NAME,
        b'{"event_id": "\\u001b]0;owned\\u0007", "type": "\\u001b[31mred", "ts": "", "payload": {}}\n',
    )
    code, out, _ = check(capsys, str(tmp_path))
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[31mred" in out


def test_json_stays_valid_with_strings_that_are_not_unicode(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    # An event id that is not valid Unicode is a defect, never an event (journal.reader); a type is kept.
    fs.durable_append(b.path / JOURNAL_NAME, b'{"event_id": "lone", "type": "lone-\\ud800", "ts": "", "payload": {}}\n')
    code, out, _ = check(capsys, str(tmp_path), "--json", "--all-events")
    assert code == 1
    types = [e["type"] for e in json.loads(out)["characters"][0]["events"]]
    assert types[-1] == "lone-\ud800"


def test_end_to_end_in_a_child_process(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    folders.healthy(root)
    folders.archive_entry_lost(root)
    env = {**os.environ, "NEKO_RUNTIME_STATE_DIR": str(tmp_path / "runtime")}
    proc = subprocess.run(
        [sys.executable, "-m", "inspector", "check", str(root), "--json"],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["schema"] == 1 and [c["name"] for c in doc["characters"]] == ["archive-entry-lost", "healthy"]
    assert doc["characters"][0]["counts"]["orphaned"] == 1


@pytest.mark.parametrize("fmt", [["--json", "--all-events"], ["--all-events"]])
def test_the_program_ends_itself_only_after_all_its_output_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: list[str]
) -> None:
    # As a program, check ends the process itself once its output is flushed (it does not free
    # the diagnosis). Output going to a file (fully buffered) must still arrive whole, with the
    # same exit code, as the in-process command gives it (on the same, real, clock).
    root = tmp_path / "memory"
    folders.healthy(root)
    folders.archive_entry_lost(root)
    folders.pending_tail(root)
    monkeypatch.setattr(journal.compaction, "_now", _REAL_NOW)
    code, out, err = check(capsys, str(root), *fmt)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # block-buffered stdout
    env["NEKO_RUNTIME_STATE_DIR"] = str(tmp_path / "runtime")
    with open(tmp_path / "out", "wb") as stdout, open(tmp_path / "err", "wb") as stderr:
        proc = subprocess.run(
            [sys.executable, "-m", "inspector", "check", str(root), *fmt],
            stdout=stdout,
            stderr=stderr,
            env=env,
            timeout=120,
            check=False,
        )
    assert code == 1 and proc.returncode == code
    assert len(out) > 1000 and (tmp_path / "out").read_text(encoding="utf-8") == out
    assert (tmp_path / "err").read_text(encoding="utf-8") == err


# -- the streaming writers -----------------------------------------------------------------------


def _streaming_root(tmp_path: Path) -> Path:
    """Several characters: some list no event by default, some a few, one has findings only."""
    root = tmp_path / "memory"
    folders.healthy(root)
    folders.pending_tail(root)
    folders.legacy_type_orphaned(root)
    folders.torn_tail(root)
    folders.views_only_export(root)
    return root


@pytest.mark.parametrize("all_events", [False, True])
@pytest.mark.parametrize("per_piece", [1, 2, 3, 10_000])
def test_the_streamed_json_is_byte_for_byte_the_whole_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, all_events: bool, per_piece: int
) -> None:
    monkeypatch.setattr(check_report, "EVENTS_PER_PIECE", per_piece)
    with diagnose_path(_streaming_root(tmp_path), now=FIXTURE_NOW) as d:
        pieces = list(check_report.iter_json(d, all_events=all_events))
        whole = check_report.dumps_json(d, all_events=all_events)
        listed = sum(len(list(c.listed_events(all_events))) for c in d.characters)
    assert b"".join(pieces) == whole
    for c in d.characters:  # the columns' fast path gives what each event says of itself
        assert list(c.listed_json(all_events)) == [e.to_json() for e in c.listed_events(all_events)]
    assert any(e["reason"] for c in d.characters for e in c.listed_json(all_events))
    assert listed >= 3 and len(pieces) >= len(d.characters) + (listed + per_piece - 1) // per_piece


@pytest.mark.parametrize("all_events", [False, True])
def test_streamed_json_with_strings_that_are_not_unicode_is_the_same_escaped_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, all_events: bool
) -> None:
    # dumps_json escapes the whole document when any string is not valid Unicode (non-ASCII text
    # elsewhere included); the stream must give the same bytes, whether the odd string is in a
    # listed event or in a finding's message.
    monkeypatch.setattr(check_report, "EVENTS_PER_PIECE", 2)
    b = folders.healthy(tmp_path, name="Zoë")
    for event_id, event_type in ((b"plain-pending", b"persona.fact_added"), (b"lone", b"lone-\\ud800")):
        line = b'{"event_id": "' + event_id + b'", "type": "' + event_type + b'", "ts": "", "payload": {}}\n'
        fs.durable_append(b.path / JOURNAL_NAME, line)
    with diagnose_path(tmp_path, now=FIXTURE_NOW) as d:
        whole = check_report.dumps_json(d, all_events=all_events)
        assert b"".join(check_report.iter_json(d, all_events=all_events)) == whole
        assert b'"Zo\\u00eb"' in whole
        assert json.loads(whole)["characters"][0]["events"][-1]["type"] == "lone-\ud800"
        first = d.characters[0].findings[0]
        d.characters[0].findings[0] = dataclasses.replace(first, message=first.message + "\udc80")
        whole = check_report.dumps_json(d, all_events=all_events)
        assert b"".join(check_report.iter_json(d, all_events=all_events)) == whole


def _human(d: Any, all_events: bool, encoding: str = "utf-8") -> str:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding=encoding, newline="\n")
    check_report.write_human(d, out, all_events=all_events)
    out.flush()
    return raw.getvalue().decode(encoding)


@pytest.mark.parametrize("all_events", [False, True])
def test_the_human_output_does_not_depend_on_how_it_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, all_events: bool
) -> None:
    with diagnose_path(_streaming_root(tmp_path), now=FIXTURE_NOW) as d:
        whole = _human(d, all_events)
        monkeypatch.setattr(check_report, "EVENTS_PER_PIECE", 1)
        assert _human(d, all_events) == whole
    blocks = whole.split("\n\n")
    assert len(blocks) == 1 + 5 + 1 and whole.endswith(" info)\n") and "\n\n\n" not in whole
    assert all_events == ("  timeline" in whole)


def test_a_terminal_that_cannot_encode_some_text_gets_it_escaped(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path, name="Ünïcode-кот")
    with diagnose_path(b.path, now=FIXTURE_NOW) as d:
        text = _human(d, all_events=True, encoding="ascii")
    assert "\\xdcn\\xefcode-\\u043a\\u043e\\u0442" in text and text.endswith(" info)\n")


def test_the_timeline_escapes_hostile_event_ids_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    fs.durable_append(
        b.path / JOURNAL_NAME,
        b'{"event_id": "\\u001b]0;owned\\u0007", "type": "persona.fact_added", "ts": "", "payload": {}}\n',
    )
    _, out, _ = check(capsys, str(tmp_path), "--all-events")
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;owned\\x07" in out


# -- on a terminal: the meter, and Ctrl+C ----------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_check_shows_the_meter_on_stderr_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    b = folders.healthy(tmp_path)
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(output, "METER_AFTER", 0.0)
    code = main(["check", str(b.path), "--json"])
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out)["characters"][0]["name"] == "healthy"
    shown = err.getvalue()
    assert shown.startswith("\rmemory-inspector check: reading journals ") and "100% ·" in shown
    assert shown.endswith(" \r") and shown.rstrip(" \r").count("\r") >= 1


def test_ctrl_c_stops_check_with_130_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.inspector.replay_cases import hash_tree

    b = folders.healthy(tmp_path)
    before = hash_tree(tmp_path)

    def interrupt(self: Any, done: int, total: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sys, "stderr", _Terminal())
    monkeypatch.setattr(output.Meter, "__call__", interrupt)
    assert main(["check", str(b.path)]) == 130
    assert sys.stderr.getvalue().endswith("memory-inspector check: interrupted\n")  # type: ignore[attr-defined]
    assert capsys.readouterr().out == ""
    assert hash_tree(tmp_path) == before


def test_ctrl_c_anywhere_else_ends_the_program_with_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import inspector.cli

    def interrupted(*_args: Any, **_kwargs: Any) -> int:
        raise KeyboardInterrupt  # while importing or parsing, before check's own handling

    monkeypatch.setattr(inspector.cli, "main", interrupted)
    with pytest.raises(SystemExit) as stop:
        inspector.cli.run()
    assert stop.value.code == 130
    assert capsys.readouterr().err == "\nmemory-inspector: interrupted\n"


def test_a_reader_that_stops_early_ends_check_quietly(tmp_path):
    import subprocess
    import sys

    from journal.fixtures import build_sample

    build_sample(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "check", str(tmp_path), "--all-events"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) in (0, 1, 141)  # it may have finished before the pipe closed
    assert "Traceback" not in err


# -- a folder that holds no character -----------------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True])
def test_a_folder_without_any_character_is_exit_2_with_one_line_and_nothing_on_stdout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, as_json: bool
) -> None:
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "readme.txt").write_text("not memory", encoding="utf-8")
    before = folders.tree_snapshot(docs)
    code, out, err = check(capsys, str(docs), *(["--json"] if as_json else []))
    assert (code, out) == (2, "")
    [line] = err.splitlines()
    assert line.startswith(f"memory-inspector check: error: {docs}: no character folder found here")
    assert "events.ndjson" in line and "one folder per character" in line
    assert folders.tree_snapshot(docs) == before


def test_an_empty_folder_beside_a_character_stays_a_character(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folders.healthy(tmp_path)
    (tmp_path / "new-character").mkdir()  # the server creates character folders lazily
    code, out, _ = check(capsys, str(tmp_path), "--json")
    names = {c["name"]: c for c in json.loads(out)["characters"]}
    assert code == 0 and set(names) == {"healthy", "new-character"}
    assert [f["code"] for f in names["new-character"]["findings"]] == ["journal.absent"]
