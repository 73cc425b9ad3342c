"""The server model: what the memory server's next start does to a folder (memory-format §9).

One fixture per case, built in the on-disk format the server writes (one compact
``json.dumps(..., ensure_ascii=False)`` line per event, views with ``indent=2``), through
:class:`journal.fixtures.Writer` and :func:`journal.events.encode_event`. Each test asserts the
whole ``server_start`` object and the ``server.*`` findings (code, severity, the key words of the
message). Expected values come from §9 of the format notes, not from the model's output: where
they differ, the test says which section it checks.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from journal import fixtures as folders
from journal import fs
from journal.diagnosis import Diagnosis, UnreadableInputError, diagnose_path
from journal.diagnosis.values import CharacterDiagnosis
from journal.events import JOURNAL_NAME, SENTINEL_NAME, encode_event
from journal.finding import Finding
from journal.fixtures import FIXTURE_NOW, PERSONA_ENTRY, REFLECTION_IDS, Deterministic, Writer
from journal.fs import is_leftover_temp, is_temp_name
from journal.serverrules import read_characters
from journal.views import PERSONA, REFLECTIONS, load_view, save_view


@pytest.fixture(autouse=True)
def _no_server(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runtime folder of our own: the machine's real launcher lock never leaks into results."""
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path_factory.mktemp("runtime")))


def diagnose(path: Path, **kwargs: Any) -> Diagnosis:
    """``diagnose_path``, asserting that nothing inside ``path`` was created, changed or deleted."""
    before = folders.tree_snapshot(path)
    result = diagnose_path(path, now=kwargs.pop("now", FIXTURE_NOW), **kwargs)
    assert folders.tree_snapshot(path) == before
    return result


def only(path: Path, **kwargs: Any) -> CharacterDiagnosis:
    [c] = diagnose(path, **kwargs).characters
    return c


def server_start(c: CharacterDiagnosis) -> dict[str, Any]:
    return c.to_json()["server_start"]


def server_findings(c: CharacterDiagnosis) -> list[Finding]:
    return [f for f in c.findings if f.code.startswith("server.")]


def codes(c: CharacterDiagnosis) -> list[tuple[str, str]]:
    return [(f.code, f.severity) for f in server_findings(c)]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def assert_server_format(journal: Path) -> None:
    """Every complete line is what the server's ``json.dumps(record, ensure_ascii=False)`` writes."""
    for line in journal.read_bytes().split(b"\n")[:-1]:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn or glued line, made on purpose
        assert line.decode("utf-8") == json.dumps(record, ensure_ascii=False)
        assert list(record) == ["event_id", "type", "ts", "payload"]


# -- the expected object --------------------------------------------------------------------------------

class KeepWithUnknownCards:
    """Persona ensure's prediction for a readable persona when no ``characters.json`` was found:
    nothing it can know changes the file, and the card sync rests on the server's localized
    default cards, which are not known here, so it "may rewrite" (memory-format §9.9 facts 5, 7;
    the exact predictions are in tests/journal/test_server_persona.py)."""

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, dict)
            and other.get("action") == "keep"
            and other.get("changes") == []
            and other.get("may_rewrite") is True
            and "may rewrite" in other.get("message", "")
            and bool(other.get("missing_inputs"))
            and all("no characters.json found" in m for m in other["missing_inputs"])
        )

    def __repr__(self) -> str:
        return "<keep, may rewrite: no characters.json found>"


KEEP = KeepWithUnknownCards()


class ReplacedWithFresh:
    """Persona ensure's prediction for an unreadable ``persona.json`` with no ``settings.json``
    and no ``characters.json`` found (memory-format §9.9 fact 1: a fresh persona from ``{}``;
    fact 4: the settings fill creates ``neko``, ``master`` and ``relationship`` in that order;
    fact 5/7: the card sync rests on the localized default cards, not known here)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, dict):
            return False
        created = [
            "neko section created (at the end)",
            "neko.facts created",
            "master section created (at the end)",
            "master.facts created",
            "relationship section created (at the end)",
            "relationship.facts created",
        ]
        return (
            other.get("action") == "replace"
            and other.get("message", "").startswith("persona.json is unusable (")
            and "silently replaces it with a fresh persona" in other["message"]
            and "its previous content is lost" in other["message"]
            and other.get("changes") == created
            and other.get("missing_inputs")
            == [
                "no settings.json (neither memory/<name>/settings.json nor memory/settings_<name>.json)",
                f"the server's localized default card of {self.name!r} (no characters.json found): the neko card "
                "sync may change neko.facts",
                "the server's localized default master card (no characters.json found): the master card sync may "
                "change master.facts",
            ]
            and other.get("may_rewrite") is False
        )

    def __repr__(self) -> str:
        return f"<replace with a fresh persona for {self.name!r}>"
NOTHING = "the memory server's next start replays nothing"


def ok(event_id: str, index: int) -> dict[str, Any]:
    return {"state": "ok", "event_id": event_id, "index": index}


def replay(
    events: int = 0,
    applied: int = 0,
    stops: Any = None,
    passed: list[int] | None = None,
    stray: tuple[tuple[str, str], ...] = (),
) -> dict[str, Any]:
    return {
        "events": events,
        "applied": applied,
        "stops": stops,
        "passed_corrupt_shards": passed or [],
        "stray_shard_writes": [{"path": p, "place": w} for p, w in stray],
    }


def writes(*paths: str, outside: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [{"path": p, "outside": False} for p in paths] + [{"path": p, "outside": True} for p in outside]


def start(sentinel: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """The whole ``server_start`` object: a folder the server reconciles (no ``characters.json``
    found), persona kept, nothing replayed, unless ``kw`` says otherwise."""
    doc: dict[str, Any] = {
        "reconciled": None,
        "characters_file": None,
        "sentinel": sentinel,
        "persona_ensure": KEEP,
        "replay": replay(),
        "changes": [],
        "changes_total": 0,
        "writes": [],
        "left_unapplied": 0,
        "outbox_pending": 0,
        "notes": [],
        "advice": [],
        "summary": NOTHING,
        "reconcile_raises": None,
        "deletes": [],
        "sentinel_after": {"by": "none", "event_id": None},
        "after_reconcile": {"evidence_migration": None, "archive_migration": None},
    }
    unknown = set(kw) - set(doc)
    assert not unknown, unknown
    doc.update(kw)
    return doc


def change(file: str, entry: str, *fields: tuple[str, Any, Any], removed: bool = False) -> dict[str, Any]:
    return {
        "file": file,
        "entry": entry,
        "removed": removed,
        "added": False,
        "fields": [{"name": n, "before": b, "after": a} for n, b, a in fields],
    }


def drift_message(entry: str, current_text: str, expected_text: str) -> str:
    return (
        f"persona entry {entry}: its text hashes to sha256 {sha(current_text)}, but the event expects "
        f"{sha(expected_text)}; the view drifted from the journal and the payload cannot restore the text"
    )


PID = "/".join(PERSONA_ENTRY)


# -- builders -----------------------------------------------------------------------------------------


def correction_merge(char_dir: Path, text: str) -> None:
    """The server's correction flow, action ``merge`` (memory-format §9.5): the entry's text is
    rewritten and persona.json saved directly, with no event."""
    persona = load_view(char_dir / PERSONA, dict)
    key, pid = PERSONA_ENTRY
    entry = next(e for e in persona[key]["facts"] if e["id"] == pid)
    entry["text"] = text
    save_view(char_dir / PERSONA, persona)


FIRST_MERGE = "Master drinks green tea every evening"
SECOND_MERGE = "Master drinks green tea or matcha every evening"


def _merge(w: Writer, text: str, reinforcement: float, merged_from: list[str]) -> str:
    """Merge on promote as the server does it: the evidence event first (view untouched), then
    ``persona.entry_updated`` with the new text's hash, saving the rewritten entry."""
    key, pid = PERSONA_ENTRY
    w.persona_evidence(key, pid, reinforcement, change_view=False)
    payload = {**w.merge_payload(key, pid, text, merged_from), "reinforcement": reinforcement}
    mutate = folders._apply_persona_evidence(payload, text)
    return w._record("persona.entry_updated", payload, mutate, PERSONA).event_id


def twice_merged(root: Path, name: str = "twice-merged", *, glued: bool) -> dict[str, Any]:
    """memory-format §9.4: an entry merged twice (the second merge's text is the current text),
    with evidence before and after; ``reinforcement`` is 3.5 at the end.

    ``glued``: then a crash tore an append, and the server's next append (which never checks for
    a trailing newline) was glued onto the fragment and set the sentinel to the glued event."""
    w = Writer(root, name, Deterministic(name))
    key, pid = PERSONA_ENTRY
    ids: dict[str, Any] = {}
    folders.seed_views(w.path)
    w.persona_evidence(key, pid, 1.0)
    ids["merge1"] = _merge(w, FIRST_MERGE, 2.0, [REFLECTION_IDS[1]])
    ids["merge2"] = _merge(w, SECOND_MERGE, 3.0, [REFLECTION_IDS[1], REFLECTION_IDS[2]])
    ids["last"] = w.persona_evidence(key, pid, 3.5).event_id
    if glued:
        r4 = REFLECTION_IDS[3]
        lost = w.new_event("reflection.evidence_updated", folders.reflection_evidence_payload(r4, 0.4, at=w.now()))
        fs.durable_append(w.path / JOURNAL_NAME, encode_event(lost)[:70], keep_lines_apart=False)
        payload = folders.reflection_evidence_payload(r4, 0.9, at=w.now())
        glue = w.new_event("reflection.evidence_updated", payload)
        fs.durable_append(w.path / JOURNAL_NAME, encode_event(glue), keep_lines_apart=False)
        view = load_view(w.path / REFLECTIONS, list)
        folders._apply_reflection_evidence(payload)(view)
        save_view(w.path / REFLECTIONS, view)
        w.write_sentinel(glue.event_id)
        w.events.append(glue.event_id)
        ids["glued"] = glue.event_id
    ids["events"] = list(w.events)
    ids["path"] = w.path
    assert_server_format(w.path / JOURNAL_NAME)
    assert load_view(w.path / PERSONA, dict)[key]["facts"][1]["reinforcement"] == 3.5
    return ids


#: What the server's full replay of a twice-merged folder does (memory-format §9.4): #0 and #1 roll
#: the evidence back to 2.0, and the first merge (#2) fails its text hash.
ROLLBACK = [
    change(PERSONA, PID, ("reinforcement", 3.5, 2.0), ("rein_last_signal_at", "...", "...")),
]


def twice_merged_stop(ids: dict[str, Any]) -> dict[str, Any]:
    return {
        "index": 2,
        "line": 3,
        "event_id": ids["merge1"],
        "type": "persona.entry_updated",
        "reason": "view_drift",
        "message": drift_message(PID, SECOND_MERGE, FIRST_MERGE),
    }


# -- (1) a correction merge -------------------------------------------------------------------------------


def test_a_correction_merge_is_normal_and_the_server_start_replays_nothing(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    correction_merge(b.path, "Master drinks green tea every evening, and matcha on Sundays")
    d = diagnose(tmp_path)
    [c] = d.characters
    codes_found = {f.code for f in c.findings}
    assert not codes_found & {"view.drift", "event.suspect"}
    assert [(f.code, f.severity) for f in c.findings] == [("view.moved_on", "info")]  # one fact, one info code
    assert d.worst_severity() == "info"  # check exits 0
    assert server_start(c) == start(ok(b.events[8], 8))


def test_after_a_correction_merge_only_a_replay_of_the_merge_event_stops(tmp_path: Path) -> None:
    # §9.5: "it matters only if that merge event is replayed again": a lost sentinel replays it.
    b = folders.healthy(tmp_path)
    text = "Master drinks green tea every evening, and matcha on Sundays"
    correction_merge(b.path, text)
    (b.path / SENTINEL_NAME).unlink()
    c = only(tmp_path)
    s = server_start(c)
    assert s["sentinel"] == {"state": "missing", "event_id": None, "index": None}
    assert s["replay"] == replay(
        9,
        5,
        {
            "index": 5,
            "line": 6,
            "event_id": b.ids["merge"],
            "type": "persona.entry_updated",
            "reason": "view_drift",
            "message": drift_message(PID, text, "Master drinks green tea every evening"),
        },
    )
    assert s["left_unapplied"] == 4
    assert ("server.replay_stops", "error") in codes(c)


# -- (2) and (3): a full replay of a twice-merged entry -------------------------------------------------------


def full_replay_of_twice_merged(ids: dict[str, Any], sentinel: dict[str, Any]) -> dict[str, Any]:
    """§9.4: the server's full replay of the twice-merged entry, whatever made it full."""
    return start(
        sentinel,
        replay=replay(6, 2, twice_merged_stop(ids)),
        sentinel_after={"by": "replay", "event_id": ids["events"][1]},  # the last record it applied
        changes=ROLLBACK,
        changes_total=1,
        writes=writes(SENTINEL_NAME, PERSONA),
        left_unapplied=4,
        notes=[
            "its next live write moves the sentinel to the journal end: the 4 records its start leaves "
            "unapplied are orphaned"
        ],
        summary="the memory server's next start replays 6 events from the start of the journal, stops at #2 "
        "(view_drift) after applying 2, changes 1 entry",
    )


def test_a_sentinel_naming_a_glued_event_makes_the_server_replay_everything_and_roll_back(tmp_path: Path) -> None:
    ids = twice_merged(tmp_path, glued=True)
    events, glued = ids["events"], ids["glued"]
    c = only(tmp_path)
    # Our reader recovers the glued event: our sentinel is fine and nothing is pending.
    assert c.to_json()["sentinel"] == ok(glued, 6)
    assert c.counts()["pending"] == 0 and c.blocked is None
    assert server_start(c) == full_replay_of_twice_merged(
        ids, {"state": "unknown_id", "event_id": glued, "index": None}
    )
    unseen, full, stops = server_findings(c)
    assert (unseen.code, unseen.severity, unseen.event_id, unseen.file) == (
        "server.sentinel_unseen",
        "error",
        glued,
        SENTINEL_NAME,
    )
    assert glued in unseen.message and "glued" in unseen.message and "whole journal (6 events)" in unseen.message
    assert (full.code, full.severity) == ("server.full_replay", "error")
    assert f"{PID} reinforcement 3.5 → 2.0" in full.message
    assert "stops at event #2 (view_drift)" in full.message and "not harmless" in full.message
    assert (stops.code, stops.severity, stops.event_id) == ("server.replay_stops", "error", ids["merge1"])
    assert "event #2 (persona.entry_updated: view_drift) after applying 2" in stops.message
    assert "the 3 after it stay unapplied" in stops.message
    assert events.index(glued) == 6


def test_a_missing_sentinel_on_a_twice_merged_folder_lists_the_rollback_and_the_stop(tmp_path: Path) -> None:
    ids = twice_merged(tmp_path, glued=False)
    (ids["path"] / SENTINEL_NAME).unlink()
    c = only(tmp_path)
    assert server_start(c) == full_replay_of_twice_merged(ids, {"state": "missing", "event_id": None, "index": None})
    # Our own replay is a full replay too (sentinel.missing), so the full replay is a warning here.
    assert codes(c) == [("server.full_replay", "warning"), ("server.replay_stops", "error")]
    full = server_findings(c)[0]
    assert f"{PID} reinforcement 3.5 → 2.0" in full.message and "stops at event #2 (view_drift)" in full.message


# -- (4) persona ensure replaces a corrupt persona.json -------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b'{\n  "master": {\n    "facts": [\n      {\n        "id": "card_1a', b"[]"],
    ids=["torn", "a list"],
)
def test_a_corrupt_persona_is_replaced_before_replay_and_its_pending_event_is_a_no_op(
    tmp_path: Path, content: bytes
) -> None:
    b = folders.healthy(tmp_path)
    w = Writer(tmp_path, b.name, Deterministic("corrupt-persona"))
    pending = w.append_only(
        "persona.evidence_updated", folders.persona_evidence_payload(*PERSONA_ENTRY, 3.1, at=w.now())
    ).event_id
    fs.atomic_write_bytes(b.path / PERSONA, content)
    c = only(tmp_path)
    assert [f.file for f in c.findings if f.code == "view.corrupt"] == [PERSONA]
    assert c.blocked is not None and c.blocked.reason == "corrupt_view"  # ours pauses; the server does not
    assert server_start(c) == start(
        ok(b.events[8], 8),
        persona_ensure=ReplacedWithFresh(b.name),
        replay=replay(1, 1),  # §9.2: the pending event finds no entry in the fresh persona: a no-op
        sentinel_after={"by": "replay", "event_id": pending},  # and the sentinel moves past it
        # §9.8.7: a fresh persona has no evidence-migration marker, so the migration runs after
        # reconcile; it finds nothing to seed (each fixture reflection has a signal timestamp or a
        # status that seeds nothing, and the fresh persona has no entry).
        after_reconcile={"evidence_migration": {"seeds": 0, "orphans": 0, "glues": False}, "archive_migration": None},
        notes=["after reconcile, its one-shot evidence migration runs (persona.json lacks its marker): it finds "
               "nothing to seed and saves the marker"],
        writes=writes(SENTINEL_NAME, PERSONA),
        summary="the memory server's next start replaces persona.json with a fresh persona, replays 1 event",
    )
    [replaced] = server_findings(c)
    assert (replaced.code, replaced.severity, replaced.file) == ("server.persona_replaced", "error", PERSONA)
    assert "restore persona.json from a backup or the cloud save" in replaced.message
    assert "do not start the server" in replaced.message
    assert "the persona event it replays then finds no entry, and the sentinel moves past it" in replaced.message
    assert pending == c.events[9].event_id


# -- (5) temp leftovers -------------------------------------------------------------------------------


def test_temp_leftovers_in_the_folder_and_in_a_shard_folder(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    (b.path / ".nkatmpk3_9zq1x.tmp").write_bytes(b'{\n  "master": ')  # mid-2026: mkstemp's [a-z0-9_]
    (b.path / "reflection_archive" / ".nkatmp0f_a9b2c.tmp").write_bytes(b"")
    (b.path / ".nkatmp.tmp").write_bytes(b"")  # neither shape: an unknown file, tolerated
    (b.path / ".nkatmpABCDEFGH.tmp").write_bytes(b"")
    c = only(tmp_path)
    assert [(f.code, f.severity, f.file) for f in c.findings] == [
        ("tempfile.leftover", "info", ".nkatmpk3_9zq1x.tmp"),
        ("tempfile.leftover", "info", "reflection_archive/.nkatmp0f_a9b2c.tmp"),
    ]
    assert all("left over from a crashed atomic write" in f.message for f in c.findings)
    assert server_start(c) == start(
        ok(b.events[8], 8),
        notes=[(
            "every atomic write of the server deletes the temp files older than 24 h in the folder it writes "
            "into; its next start writes into none of the folders that hold them, or they are younger"
        )],
    )


#: The server's own sweeper (memory-format §1.2).
SERVER_SWEEPER = r"^\.nkatmp[^.]+\.tmp$"


@pytest.mark.parametrize(
    ("name", "temp", "leftover"),
    [
        (".nkatmpk3_9zq1x.tmp", True, True),  # mid-2026 (tempfile.mkstemp)
        (".nkatmp0a1b2c3d.tmp", True, True),  # newest (8 hex) and ours
        (".nkatmp________.tmp", True, True),
        (".nkatmp.tmp", False, False),  # no suffix: the server's sweeper does not match it either
        (".nkatmpABCDEFGH.tmp", False, False),  # mkstemp never makes upper case
        (".nkatmpk3_9zq1.tmp", False, False),  # 7 characters
        (".nkatmpk3_9zq1xy.tmp", False, False),  # 9 characters
        (".nkatmpk3.9zq1x.tmp", False, False),
        ("nkatmpk3_9zq1x.tmp", False, False),
        (".nkatmpk3_9zq1x.tmp.bak", False, False),
        (".persona.json.k3x9_q2z.tmp", False, True),  # older servers: .<target>.<random>.tmp
    ],
)
def test_temp_names(name: str, temp: bool, leftover: bool) -> None:
    assert (is_temp_name(name), is_leftover_temp(name)) == (temp, leftover)
    if temp:  # what we sweep, the server's own sweeper recognises too
        assert re.match(SERVER_SWEEPER, name)


# -- (6) characters.json ------------------------------------------------------------------------------


def app_root(tmp_path: Path) -> tuple[Path, Path]:
    """``<app_docs>/memory`` with three characters, and ``<app_docs>/config`` (memory-format §9.1)."""
    root = tmp_path / "app" / "memory"
    folders.healthy(root)
    folders.pending_tail(root)
    folders.healthy(root, "小天")
    config = tmp_path / "app" / "config"
    config.mkdir(parents=True)
    return root, config


def write_characters(path: Path, names: list[str]) -> None:
    doc = {"主人": {"档案名": "主人"}, "猫娘": {n: {"昵称": n} for n in names}, "当前猫娘": names[0]}
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")


def test_only_characters_listed_in_characters_json_are_reconciled(tmp_path: Path) -> None:
    root, config = app_root(tmp_path)
    listing = config / "characters.json"
    write_characters(listing, ["小天", "healthy", "someone-without-a-folder"])
    d = diagnose(root)
    by_name = {c.name: c for c in d.characters}
    for name in ("healthy", "小天"):
        c = by_name[name]
        s = server_start(c)
        assert (s["reconciled"], s["characters_file"]) == (True, str(listing))
        # §9.9 fact 5: the cards of this characters.json are not the fixture's, so the card sync
        # rewrites persona.json before the (empty) replay.
        assert s["persona_ensure"]["action"] == "rewrite"
        assert s["persona_ensure"]["missing_inputs"] == []  # a persona that is not empty: no settings fill
        assert s["summary"] == "the memory server's next start rewrites persona.json (persona ensure), replays nothing"
        assert server_findings(c) == []
    unlisted = by_name["pending-tail"]
    assert server_start(unlisted) == start(
        # as the file is: the server never reads it
        {"state": "ok", "event_id": unlisted.sentinel.event_id, "index": 8},
        reconciled=False,
        characters_file=str(listing),
        persona_ensure={
            "action": "skip",
            "message": "persona ensure and replay do not run for a character the server does not reconcile",
            "changes": [],
            "missing_inputs": [],
            "may_rewrite": False,
        },
        notes=["not reconciled: the character is not in characters.json"],
        summary="the memory server does not reconcile this character (not in its characters.json)",
    )
    [f] = server_findings(unlisted)
    # findings[].file is relative to the character folder: characters.json is outside it, so it is named
    # in the message (and in server_start.characters_file) only
    assert (f.code, f.severity, f.file) == ("server.not_reconciled", "info", None)
    assert str(listing) in f.message
    assert "pending-tail is not listed in" in f.message and "never reconciles it" in f.message
    # A character folder as PATH finds the same file (its parent is the memory root).
    assert server_start(only(root / "pending-tail"))["reconciled"] is False


def test_an_explicit_characters_file(tmp_path: Path) -> None:
    root, config = app_root(tmp_path)
    write_characters(config / "characters.json", ["healthy", "pending-tail", "小天"])
    elsewhere = tmp_path / "other.json"
    write_characters(elsewhere, ["pending-tail"])
    d = diagnose(root, characters_file=elsewhere)
    got = {c.name: (server_start(c)["reconciled"], server_start(c)["characters_file"]) for c in d.characters}
    assert got == {
        "healthy": (False, str(elsewhere)),
        "pending-tail": (True, str(elsewhere)),
        "小天": (False, str(elsewhere)),
    }
    with pytest.raises(UnreadableInputError, match="no such file"):
        diagnose_path(root, characters_file=tmp_path / "nowhere.json")


@pytest.mark.parametrize(
    ("content", "words", "listed"),
    [
        # the server cannot read it: it uses its default characters, which list only "test" (§9.8 item 10)
        (b"{garbage", "is not JSON", {"test"}),
        (b"[]", "is a JSON list, not an object", {"test"}),
        (None, "cannot be read", {"test"}),  # a folder where the file should be
        # a dict without a 猫娘 object: the server's start lists no character (runtime.py:705-722)
        ('{"主人": {}}'.encode(), "has no '猫娘' object", set()),
        (b'{"\xe7\x8c\xab\xe5\xa8\x98": ["a list"]}', "has no '猫娘' object", set()),
    ],
)
def test_an_unusable_characters_json_lists_what_the_server_uses_instead(
    tmp_path: Path, content: bytes | None, words: str, listed: set[str]
) -> None:
    root, config = app_root(tmp_path)
    listing = config / "characters.json"
    if content is None:
        listing.mkdir()
    else:
        listing.write_bytes(content)
    got = read_characters(listing)
    assert (got.names, got.defaults) == (frozenset(listed), bool(listed))
    assert got.error is not None and words in got.error
    for c in diagnose(root).characters:
        s = server_start(c)
        # none of the three folders is "test": the server neither ensures nor reconciles them
        assert (s["reconciled"], s["characters_file"]) == (False, str(listing))
        assert "server.not_reconciled" in [f.code for f in server_findings(c)]
    # Without any characters.json nothing is known, and nothing is said.
    (listing.rmdir() if content is None else listing.unlink())
    c = next(c for c in diagnose(root).characters if c.name == "healthy")
    assert server_start(c) == start(ok(c.events[8].event_id, 8)) and c.findings == []


# -- (7) one fixture per row of the README table "Where we deliberately differ" -------------------------------


def test_row_torn_line_the_next_server_append_is_glued(tmp_path: Path) -> None:
    b = folders.torn_tail(tmp_path)
    c = only(tmp_path)
    assert server_start(c) == start(ok(b.events[8], 8), notes=["an append after the torn last line is glued onto it"])
    [f] = server_findings(c)
    assert (f.code, f.severity, f.file) == ("server.next_append_glued", "warning", JOURNAL_NAME)
    assert "torn line" in f.message and "glued onto it" in f.message and "newline first" in f.message


def test_row_torn_line_after_our_append_nothing_is_glued(tmp_path: Path) -> None:
    b = folders.torn_tail(tmp_path)
    w = Writer(tmp_path, b.name, Deterministic("our-append"))
    ev = w.reflection_evidence(REFLECTION_IDS[3], 0.6)  # ours writes "\n" first
    c = only(tmp_path)
    assert [d.kind for d in c.defects] == ["malformed"]
    assert server_start(c) == start(ok(ev.event_id, 9))
    assert server_findings(c) == []


def test_row_a_paused_tail_is_orphaned_by_the_next_live_write(tmp_path: Path) -> None:
    b = folders.legacy_type_blocked(tmp_path)
    c = only(tmp_path)
    assert server_start(c) == start(
        ok(b.events[8], 8),
        replay=replay(
            2,
            0,
            {
                "index": 9,
                "line": 10,
                "event_id": b.ids["legacy"],
                "type": "reflection.surfaced",
                "reason": "no_handler",
                "message": "no replay handler is registered for 'reflection.surfaced'",
            },
        ),
        left_unapplied=2,
        notes=[
            "its next live write moves the sentinel to the journal end: the 2 records its start leaves "
            "unapplied are orphaned"
        ],
        summary="the memory server's next start replays 2 events, stops at #9 (no_handler) after applying 0",
    )
    [f] = server_findings(c)
    assert (f.code, f.severity, f.event_id) == ("server.replay_stops", "error", b.ids["legacy"])
    assert "the 1 after it stay unapplied" in f.message and "next live write" in f.message
    assert "§9.6" in f.message


def test_row_after_the_server_live_write_the_tail_is_already_orphaned(tmp_path: Path) -> None:
    b = folders.legacy_type_orphaned(tmp_path)
    c = only(tmp_path)
    assert server_start(c) == start(ok(b.events[10], 10))
    assert server_findings(c) == []


def test_row_folder_fsync_leaves_nothing_visible(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    c = only(tmp_path)
    assert server_start(c) == start(ok(b.events[8], 8))
    assert c.findings == []


def test_row_archive_sentinel_before_the_shard_append(tmp_path: Path) -> None:
    b = folders.archive_entry_lost(tmp_path)
    c = only(tmp_path)
    assert [e.reason for e in c.events if e.state == "orphaned"] == ["archive_entry_lost"]
    assert server_start(c) == start(
        ok(b.ids["lost"], 9),
        notes=[
            "it does not recover the 1 archived entry lost between the journal event and the shard append "
            "(our guarded replay's repair of orphaned archive events can)"
        ],
        advice=[{"action": "repair_orphans", "character": b.name, "event_id": None}],
    )
    assert server_findings(c) == []


def test_row_corrupt_shard_is_passed(tmp_path: Path) -> None:
    b = folders.corrupt_shard(tmp_path)
    c = only(tmp_path)
    assert server_start(c) == start(
        ok(b.events[8], 8),
        replay=replay(1, 1, passed=[9]),  # §3.5 (d): "no change", the view keeps the entry
        sentinel_after={"by": "replay", "event_id": b.ids["pending_archive"]},
        writes=writes(SENTINEL_NAME),
        notes=["a corrupt shard is treated as holding the entry: the view keeps it and the sentinel moves on"],
        summary="the memory server's next start replays 1 event",
    )
    [f] = server_findings(c)
    assert (f.code, f.severity, f.event_id) == ("server.shard_passed", "error", b.ids["pending_archive"])
    assert "corrupt shard" in f.message and "keeps the entry in the view" in f.message
    assert "moves the sentinel past the event" in f.message


def test_row_hostile_shard_basename_is_written_where_it_leads(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    b = folders.hostile_shard_basename(root)
    escaped = str(tmp_path / "escaped.json")  # <char>/reflection_archive/../../../escaped.json
    c = only(root)
    assert server_start(c) == start(
        ok(b.events[8], 8),
        replay=replay(1, 1, stray=((escaped, "outside"),)),
        sentinel_after={"by": "replay", "event_id": b.ids["hostile"]},
        changes=[change(REFLECTIONS, REFLECTION_IDS[3], removed=True)],
        changes_total=1,
        writes=writes(SENTINEL_NAME, REFLECTIONS, outside=(escaped,)),
        summary="the memory server's next start replays 1 event, changes 1 entry, writes outside the folder",
    )
    [f] = server_findings(c)
    assert (f.code, f.severity, f.file) == ("server.writes_outside", "error", None)  # file: inside the folder only
    assert f"writes {escaped!r}, outside the character folder" in f.message
    assert "do not start the server" in f.message
    assert not (tmp_path / "escaped.json").exists()


def _pending_archive_named(tmp_path: Path, basename: str) -> folders.Built:
    b = folders.healthy(tmp_path)
    w = Writer(tmp_path, b.name, Deterministic("named"))
    w.append_only("reflection.state_changed", folders._archive_payload(w, REFLECTION_IDS[3], basename))
    return b


def test_row_hostile_basename_onto_a_dict_file_is_a_corrupt_shard_to_the_server(tmp_path: Path) -> None:
    # memory-format §3.5 (d) step 1: what the name leads to is no list, so the server's handler
    # reports no change, keeps the view and moves on, as for a corrupt shard.
    b = _pending_archive_named(tmp_path, "../persona.json")
    c = only(tmp_path)
    s = server_start(c)
    assert s["replay"] == replay(1, 1, passed=[9])
    assert s["changes"] == [] and s["writes"] == writes(SENTINEL_NAME)
    assert "server.shard_passed" in [f.code for f in server_findings(c)]
    assert (b.path / REFLECTIONS).exists()


def test_row_hostile_basename_onto_a_view_inside_the_folder_is_reported(tmp_path: Path) -> None:
    # "../facts.json" leaves the shard folder but not the character folder: facts.json is a list,
    # so the server appends the snapshot into that view.
    _pending_archive_named(tmp_path, "../facts.json")
    c = only(tmp_path)
    s = server_start(c)
    assert s["replay"] == replay(1, 1, stray=(("facts.json", "folder"),))
    assert {"path": "facts.json", "outside": False} in s["writes"]
    [f] = [f for f in server_findings(c) if f.code == "server.writes_outside"]
    assert f.severity == "error" and f.file == "facts.json"
    assert "outside its shard folder, inside the character folder" in f.message


def test_row_compaction_the_server_does_nothing(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    c = only(tmp_path, now=folders.BASE_TIME + timedelta(days=100))
    assert [f.code for f in c.findings] == ["compaction.due"]
    assert server_start(c) == start(ok(b.events[8], 8))


DUPLICATE_NOTE = (
    "a repeated event id is replayed again; when its replay ends on a copy, the sentinel names an id whose "
    "first line comes earlier, so every later start replays from there again"
)


def _with_copy_of_line(b: folders.Built, line: int) -> str:
    """Append a byte-exact copy of journal line ``line`` (1-based); return its event id."""
    data = (b.path / JOURNAL_NAME).read_bytes().split(b"\n")[line - 1] + b"\n"
    fs.durable_append(b.path / JOURNAL_NAME, data)
    return json.loads(data)["event_id"]


def test_row_a_duplicate_after_the_sentinel_is_replayed_by_the_server(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    copied = _with_copy_of_line(b, 3)  # persona.evidence_updated 1.5, before the merge set 2.5
    c = only(tmp_path)
    assert [(d.kind, d.line) for d in c.defects] == [("duplicate_event_id", 10)]
    assert c.counts()["pending"] == 0  # our reader skips the copy
    assert server_start(c) == start(
        ok(b.events[8], 8),
        replay=replay(1, 1),  # the server replays the copy: evidence rolls back
        sentinel_after={"by": "replay", "event_id": copied},  # the copy's id, whose first line is earlier
        changes=[
            change(
                PERSONA,
                PID,
                ("reinforcement", 2.5, 1.5),
                ("rein_last_signal_at", "...", "..."),
                ("disp_last_signal_at", "...", None),
            )
        ],
        changes_total=1,
        writes=writes(SENTINEL_NAME, PERSONA),
        notes=[DUPLICATE_NOTE],
        summary="the memory server's next start replays 1 event, changes 1 entry",
    )
    [f] = server_findings(c)
    assert (f.code, f.severity, f.file) == ("server.duplicate_replayed", "warning", JOURNAL_NAME)
    assert "replays each repeated event id again (line 10)" in f.message
    assert copied == b.events[2]


def test_row_a_duplicate_before_the_sentinel_is_not_replayed(tmp_path: Path) -> None:
    b = folders.healthy(tmp_path)
    _with_copy_of_line(b, 3)
    w = Writer(tmp_path, b.name, Deterministic("after-the-copy"))
    payload = folders.reflection_evidence_payload(REFLECTION_IDS[0], 1.4, at=w.now())
    live = w.server_record(
        "reflection.evidence_updated", payload, folders._apply_reflection_evidence(payload), REFLECTIONS
    )
    c = only(tmp_path)
    assert server_start(c) == start(ok(live.event_id, 9), notes=[DUPLICATE_NOTE])
    assert codes(c) == [("server.duplicate_replayed", "warning")]


def test_row_temp_files_note(tmp_path: Path) -> None:
    b = folders.outbox_backlog(tmp_path)
    c = only(tmp_path)
    assert server_start(c) == start(
        ok(b.events[8], 8),
        outbox_pending=1,
        notes=[(
            "every atomic write of the server deletes the temp files older than 24 h in the folder it writes "
            "into; its next start writes into none of the folders that hold them, or they are younger"
        )],
        summary="the memory server's next start replays nothing, then runs 1 outbox operation",
    )
    assert server_findings(c) == []


def test_every_fixture_journal_is_in_the_server_format(tmp_path: Path) -> None:
    for build in folders.CASES.values():
        b = build(tmp_path)
        if (b.path / JOURNAL_NAME).exists():
            assert_server_format(b.path / JOURNAL_NAME)


@pytest.mark.parametrize(
    ("basename", "place"),
    [
        ("..∕..∕x.json", "shard_folder"),  # U+2215 DIVISION SLASH: one name inside the shard folder
        ("2026-05-02_١٢345678.json", "shard_folder"),  # Arabic-Indic digits: not a shard basename
        ("\u202e../x.json", "shard_folder"),  # a folder named by a right-to-left override, then ..
    ],
)
def test_row_a_non_shard_name_inside_the_shard_folder_is_called_so(tmp_path: Path, basename: str, place: str) -> None:
    _pending_archive_named(tmp_path, basename)
    c = only(tmp_path)
    s = server_start(c)
    [stray] = s["replay"]["stray_shard_writes"]
    assert stray["place"] == place
    [f] = [f for f in server_findings(c) if f.code == "server.writes_outside"]
    assert "in the shard folder, under a name that is not a shard basename" in f.message


@pytest.mark.parametrize("basename", ["n\x00.json", "x" * 5000 + ".json", ".", ".."])
def test_row_a_name_the_server_cannot_write_stops_its_replay(tmp_path: Path, basename: str) -> None:
    # A NUL byte, a name too long, the shard folder itself or the character folder: the server's
    # create fails, so its handler raises and its replay stops there (never a crash of ours).
    _pending_archive_named(tmp_path, basename)
    c = only(tmp_path)
    s = server_start(c)
    assert s["replay"]["stops"] is not None and s["replay"]["stops"]["reason"] == "handler_error"
    assert "fails" in s["replay"]["stops"]["message"]
    assert [f.code for f in server_findings(c)] == ["server.replay_stops"]


def test_row_the_wedge_the_server_stops_at_the_held_event_and_ignores_the_applied_set(tmp_path: Path) -> None:
    b = folders.wedged_merge(tmp_path)
    c = only(tmp_path)
    s = server_start(c)
    assert s["sentinel"] == ok(b.events[8], 8)  # the sentinel stays just before the held merge
    assert s["replay"]["events"] == 3 and s["replay"]["applied"] == 0
    assert (s["replay"]["stops"]["index"], s["replay"]["stops"]["reason"]) == (9, "view_drift")
    stops = next(f for f in server_findings(c) if f.code == "server.replay_stops")
    assert "1 of them our guarded replay already applied" in stops.message
    held = [f for f in c.findings if f.code == "replay.held"]
    assert [(f.severity, f.event_id) for f in held] == [("error", b.ids["wedge"])]
    assert (b.path / "events_applied_set.json").exists()  # ours only; the server never reads it


def test_row_park_after_a_park_the_server_goes_on_from_past_the_parked_event(tmp_path: Path) -> None:
    from journal.log import EventLog
    from journal.park import ParkRecord, record_park
    from journal.reconcile import Reconciler

    b = folders.wedged_merge(tmp_path)
    wedge = b.ids["wedge"]
    record_park(b.path, ParkRecord(wedge, "persona.entry_updated", 9, 10, "", "2026-05-01T10:00:00", "t", "h", "test"))
    Reconciler(EventLog(tmp_path)).reconcile(b.name)
    c = only(tmp_path)
    assert server_start(c) == start(ok(b.events[-1], len(b.events) - 1))  # nothing left for the server
    assert [f.code for f in c.findings if f.code.startswith(("replay.", "server."))] == []
    parked = next(e for e in c.events if e.event_id == wedge)
    assert (parked.state, parked.reason) == ("applied", "parked")
    assert not (b.path / "events_applied_set.json").exists()
