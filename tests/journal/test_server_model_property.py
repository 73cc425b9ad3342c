"""The server model against an independent oracle, on fixture folders damaged at random (issue 24).

Each case copies a folder built by :mod:`journal.fixtures` into ``<app>/memory/<name>`` and
combines, from one seed, several damages at once: the server's ``characters.json`` (missing,
listing the character with cards in sync or not, not listing it, unreadable), a settings file,
``persona.json`` (invalid JSON, not UTF-8, a BOM, empty, missing, a section that is not an
object, no evidence-migration marker), pending tails (handled events, unknown types, an archive
into a missing, corrupt or undecodable shard, ``0`` in a view against ``0.0`` in an event), a
BOM, undecodable bytes inside the journal, a glued append, a torn last line (cut inside a
multi-byte character or not), a sentinel naming an unknown, the first or the last event (or
null, missing, invalid, undecodable), a flat ``reflections_archive.json`` and temp files old and
young. The model's prediction (``CharacterDiagnosis.server_start`` through :func:`diagnose_path`)
is then compared field by field with :mod:`tests.journal._server_oracle`, which reads the bytes
itself and runs the start as the format notes describe it. A failure names the seed and the
damages, so a case can be rebuilt alone (``SEED=<n>``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from journal.diagnosis import diagnose_path
from journal.fixtures import CASES, PERSONA_ENTRY, REFLECTION_IDS
from tests.journal import _server_oracle as oracle

#: The builders whose folders the damages start from (every case with a journal).
BASES = (
    "healthy",
    "pending-tail",
    "blocked-legacy-type",
    "orphaned-by-live-write",
    "glued-torn-line",
    "torn-tail",
    "archive-entry-lost",
    "persona-drift",
    "wedged-merge",
    "corrupt-shard",
    "outbox-backlog",
    "hostile-shard-basename",
    "views-only",
)

CASES_RUN = int(os.environ.get("SERVER_PROPERTY_CASES", "300"))
ONE_SEED = os.environ.get("SEED")

BOM = b"\xef\xbb\xbf"
CAT = "猫".encode()
PENDING_SHARD = "2026-05-03_0a1b2c3d.json"

#: The records a pending tail is made of.
PENDING_KINDS = (
    "reflection", "persona", "state", "unknown", "archive", "int vs float", "bad payload", "null id", "copy",
    "persona archive", "drifted merge", "null type", "blank lines",
)  # fmt: skip


# -- the damages --------------------------------------------------------------------------------------


class Case:
    """One generated folder and the damages it got, in words."""

    def __init__(self, seed: int, app: Path, name: str) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.app = app
        self.name = name
        self.char = app / "memory" / name
        self.done: list[str] = []

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def note(self, what: str) -> None:
        self.done.append(what)


def _record(c: Case, etype: str | None, payload: Any) -> bytes:
    rec = {"event_id": c.uid(), "type": etype, "ts": "2026-05-02T10:00:00", "payload": payload}
    return (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")


def _characters(c: Case) -> None:
    kind = c.rng.choice(["missing"] * 2 + ["quiet"] * 3 + ["sync"] * 3 + ["unlisted", "invalid", "undecodable"])
    c.note(f"characters.json {kind}")
    if kind == "missing":
        return
    docs: dict[str, Any] = {
        "quiet": {"主人": {}, "猫娘": {c.name: {"name": c.name}}},
        "sync": {"主人": {"档案名": "哥哥", "爱好": ["茶", "琴"]}, "猫娘": {c.name: {"昵称": "小天", "年龄": 3}}},
        "unlisted": {"主人": {}, "猫娘": {"somebody-else": {}}},
    }
    data = {"invalid": b'{"\xe7\x8c\xab\xe5\xa8\x98": ', "undecodable": b'{"\xff": 1}'}.get(kind)
    config = c.app / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "characters.json").write_bytes(
        data if data is not None else json.dumps(docs[kind], ensure_ascii=False).encode()
    )


def _settings(c: Case) -> None:
    if c.rng.random() < 0.4:
        c.note("settings.json")
        doc = {"哥哥": {"爱好": "茶", "空": ""}, c.name: {"性格": "温柔", "年龄": 3}, "朋友": {"list": ["a", 1]}}
        (c.char / "settings.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def _persona(c: Case) -> None:
    path = c.char / oracle.PERSONA
    kind = c.rng.choice(
        ["as is"] * 6
        + ["invalid JSON", "undecodable", "BOM", "empty", "marker only", "missing", "section a list", "v1 keys"]
    )
    data = path.read_bytes()
    persona = json.loads(data)
    if kind not in ("missing", "undecodable", "invalid JSON", "BOM") and c.rng.random() < 0.4:
        c.note("persona without the evidence-migration marker")
        persona.pop(oracle.MARKER_SECTION, None)
        data = json.dumps(persona, ensure_ascii=False, indent=2).encode()
    c.note(f"persona.json {kind}")
    if kind == "invalid JSON":
        data = b'{"master": {"facts": ['
    elif kind == "undecodable":
        data = data.replace(b'"text": "', b'"text": "\xe7\x8c', 1)
    elif kind == "BOM":
        data = BOM + data
    elif kind == "empty":
        data = b"{}"
    elif kind == "marker only":
        data = json.dumps({oracle.MARKER_SECTION: persona.get(oracle.MARKER_SECTION, {"facts": []})}).encode()
    elif kind == "section a list":
        persona["neko"] = []
        data = json.dumps(persona, ensure_ascii=False, indent=2).encode()
    elif kind == "v1 keys":  # §9.9 fact 2: user, ai and dynamics, as a first-generation file has them
        v1 = {"user" if k == "master" else "ai" if k == "neko" else k: v for k, v in persona.items()}
        v1["ai"] = {"dynamics": v1.get("ai", {}).get("facts", [])}
        data = json.dumps(v1, ensure_ascii=False, indent=2).encode()
    if kind == "missing":
        path.unlink()
    else:
        path.write_bytes(data)


def _pending_records(c: Case) -> bytes:
    """1-3 records durable in the journal whose effect no view holds (the crash window)."""
    out = b""
    r = c.rng.choice(REFLECTION_IDS)
    for _ in range(c.rng.randint(1, 3)):
        kind = c.rng.choice(PENDING_KINDS)
        c.note(f"pending {kind}")
        if kind == "reflection":
            out += _record(
                c,
                "reflection.evidence_updated",
                {"reflection_id": r, "reinforcement": round(c.rng.uniform(0, 4), 1), "source": "user_fact"},
            )
        elif kind == "persona":
            key, eid = c.rng.choice([PERSONA_ENTRY, ("neko", "legacy_5e6f7a8b"), ("master", "card_1a2b3c4d")])
            payload = {"entity_key": key, "entry_id": eid, "disputation": round(c.rng.uniform(0, 2), 1)}
            out += _record(c, "persona.evidence_updated", payload)
        elif kind == "state":
            to = c.rng.choice(["confirmed", "promoted", "denied"])
            out += _record(
                c, "reflection.state_changed", {"reflection_id": r, "from": "pending", "to": to, "ts": "2026-05-02"}
            )
        elif kind == "unknown":
            out += _record(c, c.rng.choice(["reflection.surfaced", "custom.mystery"]), {"reflection_id": r})
        elif kind == "bad payload":
            out += _record(c, "reflection.evidence_updated", [r])
        elif kind == "null id":  # the server's reader takes it (it checks only that the key is there)
            rec = json.loads(_record(c, "reflection.evidence_updated", {"reflection_id": r, "disputation": 1.0}))
            out += (json.dumps({**rec, "event_id": None}) + "\n").encode()
        elif kind == "copy":  # a record appended twice: the server replays the later copy again
            rec = _record(c, "reflection.evidence_updated", {"reflection_id": r, "reinforcement": 0.3})
            out += rec + rec
        elif kind == "archive":
            out += _archive_record(c)
        elif kind == "persona archive":
            out += _persona_archive_record(c)
        elif kind == "drifted merge":  # its rewrite_text_sha256 is not the entry's text's: the handler raises
            key, eid = PERSONA_ENTRY
            payload = {"entity_key": key, "entry_id": eid, "rewrite_text_sha256": "0" * 64, "reinforcement": 4.0}
            out += _record(c, "persona.entry_updated", payload)
        elif kind == "null type":
            out += _record(c, None, {"reflection_id": r})
        elif kind == "blank lines":
            out += b"\n   \n\t\n"
        else:
            out += _int_vs_float(c)
    return out


def _archive_record(c: Case) -> bytes:
    """An archive of the last reflection into a shard that is missing, corrupt, undecodable or holds it."""
    rid = REFLECTION_IDS[3]
    view = json.loads((c.char / oracle.REFLECTIONS).read_bytes())
    entry = next((e for e in view if e.get("id") == rid), {"id": rid, "text": "gone"})
    snapshot = {**entry, "status": "archived", "archived_at": "2026-05-03T09:00:00"}
    snapshot["archive_shard_path"] = PENDING_SHARD
    shard = c.char / oracle.REFLECTION_ARCHIVE / PENDING_SHARD
    state = c.rng.choice(["missing", "corrupt", "undecodable", "holds"])
    c.note(f"archive shard {state}")
    if state != "missing":
        shard.parent.mkdir(exist_ok=True)
        shard.write_bytes(
            {"corrupt": b"[{", "undecodable": b'[{"id": "x", "text": "\xe7\x8c"}]'}.get(state)
            or json.dumps([snapshot], ensure_ascii=False).encode()
        )
    payload = {
        "reflection_id": rid,
        "from": entry.get("status", "pending"),
        "to": "archived",
        "archive_shard_path": PENDING_SHARD,
        "archived_at": snapshot["archived_at"],
        "entry_snapshot": snapshot,
    }
    return _record(c, "reflection.state_changed", payload)


def _persona_archive_record(c: Case) -> bytes:
    """An archive of the neko entry into a persona shard that is missing, corrupt, undecodable or
    holds it (its ``persona.fact_added``, memory-format §3.5 (e))."""
    key, eid = "neko", "legacy_5e6f7a8b"
    persona = _json_or(c.char / oracle.PERSONA, {})
    facts = persona.get(key, {}).get("facts", []) if isinstance(persona.get(key), dict) else []
    entry = next((e for e in facts if isinstance(e, dict) and e.get("id") == eid), {"id": eid, "text": "gone"})
    snapshot = {**entry, "archived_at": "2026-05-03T09:00:00", "archive_shard_path": PENDING_SHARD}
    shard = c.char / oracle.PERSONA_ARCHIVE / PENDING_SHARD
    state = c.rng.choice(["missing", "corrupt", "undecodable", "holds"])
    c.note(f"persona archive shard {state}")
    if state != "missing":
        shard.parent.mkdir(exist_ok=True)
        shard.write_bytes(
            {"corrupt": b"{}", "undecodable": b'[{"id": "\xe7\x8c"}]'}.get(state)
            or json.dumps([snapshot], ensure_ascii=False).encode()
        )
    payload = {
        "entity_key": key,
        "entry_id": eid,
        "archive_shard_path": PENDING_SHARD,
        "archived_at": snapshot["archived_at"],
        "text": entry.get("text"),
        "source": entry.get("source"),
        "entry_snapshot": snapshot,
    }
    return _record(c, "persona.fact_added", payload)


def _json_or(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return default


def _int_vs_float(c: Case) -> bytes:
    """A view saved with integral ints where the pending event carries the same values as floats."""
    path = c.char / oracle.REFLECTIONS
    view = json.loads(path.read_bytes())
    entry = view[1]  # every base case keeps its second reflection
    entry["reinforcement"], entry["disputation"] = 3, 0
    path.write_text(json.dumps(view, ensure_ascii=False, indent=2), encoding="utf-8")
    keys = ("rein_last_signal_at", "disp_last_signal_at", "sub_zero_days", "user_fact_reinforce_count")
    payload = {"reflection_id": entry["id"], "reinforcement": 3.0, "disputation": 0.0, **{k: entry[k] for k in keys}}
    return _record(c, "reflection.evidence_updated", payload)


def _reflections(c: Case) -> None:
    """A reflection with a status but no signal yet, as a view older than the evidence fields has it:
    the evidence migration seeds it (memory-format §9.8.7)."""
    if c.rng.random() >= 0.25:
        return
    path = c.char / oracle.REFLECTIONS
    view = json.loads(path.read_bytes())
    entry = c.rng.choice(view)
    entry.update(status=c.rng.choice(["promoted", "confirmed", "denied", "pending"]))
    entry.update(rein_last_signal_at=None, disp_last_signal_at=None)
    c.note(f"reflection {entry['id']} {entry['status']} without a signal")
    path.write_text(json.dumps(view, ensure_ascii=False, indent=2), encoding="utf-8")


def _journal(c: Case) -> None:
    path = c.char / oracle.JOURNAL
    if not path.exists() and c.rng.random() < 0.5:
        c.note("no journal")
        return
    data = path.read_bytes() if path.exists() else b""
    if c.rng.random() < 0.12:
        c.note("undecodable bytes inside a line")
        lines = data.split(b"\n")
        k = c.rng.randrange(max(1, len(lines) - 1))
        lines[k] = lines[k][:20] + b"\xff" + lines[k][20:]
        data = b"\n".join(lines)
    # A file holding a BOM and nothing else is not made: our reader finds no torn line in it, while
    # the server's first append after it is a line its reader skips (not modelled).
    if data and c.rng.random() < 0.15:
        c.note("BOM before the first record")
        data = BOM + data
    if c.rng.random() < 0.5:
        data += _pending_records(c)
    glued = None
    if c.rng.random() < 0.15:
        c.note("append glued onto a torn fragment")
        whole = _record(c, "reflection.evidence_updated", {"reflection_id": REFLECTION_IDS[0], "reinforcement": 0.5})
        glued = json.loads(whole)["event_id"]
        data += _record(c, "reflection.evidence_updated", {"reflection_id": REFLECTION_IDS[1]})[:50] + whole
    if c.rng.random() < 0.25:
        utf8 = c.rng.random() < 0.5
        c.note("torn last line" + (" inside a multi-byte character" if utf8 else ""))
        rec = _record(c, "reflection.evidence_updated", {"reflection_id": REFLECTION_IDS[2], "note": "猫猫猫"})
        data += rec[: rec.index(CAT) + 1] if utf8 else rec[:60]
    if c.rng.random() < 0.05:
        c.note("CRLF line ends")
        data = data.replace(b"\n", b"\r\n")
    path.write_bytes(data)
    _sentinel(c, data, glued)


def _sentinel(c: Case, journal: bytes, glued: str | None) -> None:
    if c.rng.random() < 0.5:
        return
    ids = []
    for line in journal.split(b"\n"):
        try:
            ids.append(json.loads(line.removeprefix(BOM))["event_id"])
        except (ValueError, KeyError, TypeError):
            continue
    kind = c.rng.choice(
        ["unknown id", "first event", "last event", "null", "missing", "invalid", "undecodable", "a number", "a list"]
    )
    if glued is not None and c.rng.random() < 0.5:
        kind = "the glued event"
    c.note(f"sentinel {kind}")
    path = c.char / oracle.SENTINEL
    target = {"unknown id": c.uid(), "first event": ids[0] if ids else None, "last event": ids[-1] if ids else None}
    target["the glued event"] = glued
    if kind == "missing":
        path.unlink(missing_ok=True)
    elif kind == "invalid":
        path.write_bytes(b'{"last_applied_event_id": ')
    elif kind == "undecodable":
        path.write_bytes(b'{"last_applied_event_id": "\xff", "ts": "x"}')
    elif kind == "a number":
        path.write_bytes(b'{"last_applied_event_id": 7, "ts": "x"}')
    elif kind == "a list":
        path.write_bytes(json.dumps([ids[-1] if ids else None]).encode())
    else:
        doc = {"last_applied_event_id": target.get(kind), "ts": "2026-05-02T10:00:00"}
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def _flat_archive(c: Case) -> None:
    if c.rng.random() >= 0.2:
        return
    valid = c.rng.random() < 0.8
    c.note("flat reflections_archive.json" + ("" if valid else " (not JSON)"))
    entries = [{"id": "ref_old1", "text": "old", "archived_at": "2026-03-01T10:00:00"}, {"id": "ref_old2"}]
    (c.char / oracle.FLAT_ARCHIVE).write_text(json.dumps(entries) if valid else "[", encoding="utf-8")
    if c.rng.random() < 0.25:
        c.note("archive migration marker present")
        (c.char / oracle.REFLECTION_ARCHIVE).mkdir(exist_ok=True)
        (c.char / oracle.REFLECTION_ARCHIVE / oracle.MIGRATED).write_text("{}", encoding="utf-8")


def _temp_files(c: Case) -> None:
    if c.rng.random() >= 0.4:
        return
    now = time.time()
    for _ in range(c.rng.randint(1, 3)):
        folder = c.char / c.rng.choice(["", "", oracle.REFLECTION_ARCHIVE, oracle.PERSONA_ARCHIVE])
        if not folder.is_dir():
            continue
        name = c.rng.choice([f".nkatmp{c.rng.getrandbits(32):08x}.tmp", ".nkatmpab_12c3d.tmp", ".persona.json.x1.tmp"])
        old = c.rng.random() < 0.6
        c.note(f"{'stale' if old else 'young'} temp file {folder.name}/{name}")
        path = folder / name
        path.write_bytes(b"{}")
        at = now - (3 * oracle.DAY if old else 60)
        os.utime(path, (at, at))


class Templates:
    """The fixture folders, built once each (by base case and character name) and copied per case."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.built: dict[tuple[str, str], Path] = {}

    def get(self, base: str, name: str) -> Path:
        if (base, name) not in self.built:
            memory = self.root / f"{base}-{name}" / "memory"
            CASES[base](memory, name)
            self.built[(base, name)] = memory / name
        return self.built[(base, name)]


def generate(seed: int, app: Path, templates: Templates) -> Case:
    rng = random.Random(seed)
    base = rng.choice(BASES)
    name = "test" if rng.random() < 0.25 else base
    c = Case(seed, app, name)
    c.note(f"from {base} as {name!r}")
    shutil.copytree(templates.get(base, name), c.char, symlinks=True)
    _characters(c)
    _settings(c)
    _persona(c)
    _reflections(c)
    _journal(c)
    _flat_archive(c)
    _temp_files(c)
    return c


# -- the comparison -------------------------------------------------------------------------------


def compare(c: Case) -> list[str]:
    """Every field where the model's prediction differs from the oracle's, in words."""
    exp = oracle.server_start(c.char, c.name)
    cd = diagnose_path(c.app / "memory", character=c.name).characters[0]
    s = cd.server_start
    assert s is not None
    bad: list[str] = []

    def check(field: str, got: Any, want: Any) -> None:
        if not oracle.same(got, want) if isinstance(want, (dict, list)) else got != want:
            bad.append(f"{field}: model {_short(got)}, oracle {_short(want)}")

    check("reconciled", s.reconciled, exp.reconciled)
    if exp.reconciled is False:
        check("persona", s.persona[0], "skip")
        check("writes", s.writes, [])
        return bad
    e = s.persona_ensure
    assert e is not None
    check("persona ensure", s.persona[0], exp.persona_action)
    check("may rewrite", e.may_rewrite, exp.may_rewrite)
    # Where a localized default of the server decides part of it (not exact), both take it to change
    # nothing (a default card) or to route a settings section as if it were not the master's; the
    # bytes are then not known.
    if e.writes and exp.persona_after is not None:
        check("persona after ensure", e.persona_after, exp.persona_after)
        check("persona bytes", e.bytes_after, exp.persona_bytes)
    for missing in exp.missing:
        if not any(missing in m for m in e.missing_inputs):
            bad.append(f"missing inputs: {e.missing_inputs!r} do not name {missing}")
    check("reconcile raises", None if s.raises is None else (s.raises.file, s.raises.offset, s.raises.line), exp.raises)
    if exp.raises is None:
        check("sentinel found", s.sentinel.state == "ok", exp.sentinel_found)
        check("records read", s.replays, len(exp.records))
        unseen = {ev.line for ev in cd.events} - exp.read_lines
        check("lines its reader cannot see", sorted(s.hidden_lines), sorted(unseen))
        check("persona events", s.persona_events, exp.persona_events)
        applied_lines = {line for line, _ in exp.records[: exp.applied]}
        got_lines = {ev.line for i, ev in enumerate(cd.events) if s.applies(i, ev.line)}
        check("our events it applies", sorted(got_lines), sorted(applied_lines & {ev.line for ev in cd.events}))
        check("applied", s.applied, exp.applied)
        stop = None if s.stop is None else (s.stop.line, s.stop.event_id, s.stop.reason)
        check("stop", stop, exp.stop)
        check("passed", [cd.events[i].line for i in s.passed], exp.passed)
    check("left unapplied", s.unapplied, exp.unapplied)
    check("sentinel after", (s.sentinel_after.by, s.sentinel_after.event_id), exp.sentinel_after)
    check("writes", sorted(p for p, _ in s.writes), sorted(exp.writes))
    check("deletes", sorted(s.deletes), sorted(exp.deletes))
    if s.changes_total <= len(s.changes):
        got = {(ch.file, ch.entry): (ch.removed, ch.added, ch.fields) for ch in s.changes}
        check("changes", sorted(got), sorted(exp.changes))
        for key in set(got) & set(exp.changes):
            (removed, added, fields), want = got[key], exp.changes[key]
            check(f"change {key}", [removed, added, list(fields)], [want[0], want[1], list(want[2])])
    check("evidence seeds", s.evidence_seeds, exp.evidence_seeds)
    check("migration orphans", s.migration_orphans, exp.migration_orphans)
    check("migration glues", s.migration_glues, exp.migration_glues)
    check("archive migration", s.archive is not None, exp.archive_migration)
    return bad


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 400 else text[:400] + " …"


def test_the_server_model_agrees_with_the_oracle_on_random_damaged_folders(tmp_path: Path) -> None:
    seeds = [int(ONE_SEED)] if ONE_SEED else range(CASES_RUN)
    templates = Templates(tmp_path / "templates")
    failures = []
    for seed in seeds:
        c = generate(seed, tmp_path / f"case{seed}" / "app", templates)
        bad = compare(c)
        if bad:
            failures.append(f"seed {seed} ({'; '.join(c.done)}):\n    " + "\n    ".join(bad))
    assert not failures, f"{len(failures)} of {len(seeds)} cases differ:\n" + "\n".join(failures[:15])


@pytest.mark.parametrize("seed", [0])
def test_the_generator_is_deterministic(tmp_path: Path, seed: int) -> None:
    a = generate(seed, tmp_path / "a" / "app", Templates(tmp_path / "ta"))
    b = generate(seed, tmp_path / "b" / "app", Templates(tmp_path / "tb"))
    assert a.done == b.done
    files = sorted(p.relative_to(a.char) for p in a.char.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b.char) for p in b.char.rglob("*") if p.is_file())
    assert all((a.char / f).read_bytes() == (b.char / f).read_bytes() for f in files)


# -- each rule in one named function of the model ---------------------------------------------------

#: The rules the property test checks, each with its one home in the model and what its docstring
#: cites (a section of the format notes, or the server's line where the notes name it).
RULES = (
    ("which characters it ensures and reconciles (§9.1, §9.8.10)", "journal.serverrules", "read_characters", "§9.1"),
    ("a character it lists is reconciled (§4.2 step 5)", "journal.serverrules", "reconciles", "§9.1"),
    ("a missing journal is no records (§4.1 step 2)", "journal.serverrules", "server_reads_journal", "§4.1"),
    ("its reader's records (§4.1 step 2, §9.3, §9.8.5)", "journal.serverrules", "server_reader", "§9.8.5"),
    ("records only its reader takes (§4.1 step 2)", "journal.serverrules", "server_records_at", "§4.1"),
    ("its sentinel lookup (§3.2)", "journal.serverrules", "server_sentinel", "§3.2"),
    ("a sentinel it cannot decode (§3.2, §9.8.2)", "journal.serverrules", "sentinel_undecodable", "§9.8.2"),
    ("a journal it cannot decode (§9.8.1)", "journal.diagnosis.server", "_journal_undecodable", "§9.8.1"),
    ("its replay stops everything at the first failure (§4.1 step 4)", "journal.engine", "TailPass.for_server", "§4.1"),
    ("what it does where our archive handlers stop (§3.5 (d), §9.7)", "journal.serverrules", "server_outcome", "§9.7"),
    ("what its archive step finds in a shard (§9.8.4)", "journal.serverrules", "server_shard_state", "§9.8.4"),
    ("its handlers' != (§9.8.9)", "journal.serverrules", "server_assigns", "§9.8.9"),
    ("a sentinel it cannot write (§4.1 step 5)", "journal.serverrules", "server_sentinel_writable", "§4.1"),
    ("who writes the sentinel (§3.2)", "journal.serverrules", "sentinel_after", "§3.2"),
    ("the sweep of its atomic writes (§4.5)", "journal.serverrules", "swept_temp_files", "§4.5"),
    ("an append after a torn line glues (§3.1, §9.7)", "journal.serverrules", "append_glues", "§3.1"),
    ("persona ensure's read (§9.9 fact 1)", "journal.serverpersona", "read_persona", "Fact 1"),
    ("v1 keys (§9.9 fact 2)", "journal.serverpersona", "migrate_v1_keys", "Fact 2"),
    ("an empty persona (§9.9 fact 3)", "journal.serverpersona", "is_empty", "Fact 3"),
    ("the settings fill (§9.9 fact 4)", "journal.serverpersona", "settings_fill", "Fact 4"),
    ("the card sync (§9.9 fact 5)", "journal.serverpersona", "card_sync", "Fact 5"),
    ("a new entry (§9.9 fact 6)", "journal.serverpersona", "new_entry", "Fact 6"),
    ("the cards (§9.9 fact 7)", "journal.servercards", "cards_from", "Fact 7"),
    ("what ensure saves (§9.9 fact 8)", "journal.serverpersona", "saved_bytes", "Fact 8"),
    ("what its migration's ensure gets", "journal.serverpersona", "PersonaEnsurePrediction.returned", "§9.8.7"),
    ("the migration's marker (§9.8.7)", "journal.servermigrations", "has_evidence_marker", "evidence_loops.py:641"),
    ("which reflections it seeds (§9.8.7)", "journal.servermigrations", "reflection_needs_seed", "evidence_loops.py"),
    ("which persona entries it seeds", "journal.servermigrations", "persona_entry_needs_seed", "evidence_loops.py"),
    ("the archive migration (§9.8.7)", "journal.servermigrations", "archive_migration", "archive_shards.py"),
)  # fmt: skip

#: The modules of the server model.
MODEL = (
    "journal.serverrules", "journal.serverpersona", "journal.servercards", "journal.servermigrations",
    "journal.diagnosis.server", "journal.diagnosis.server_after",
)  # fmt: skip


def test_each_rule_it_checks_has_one_named_function_in_the_model() -> None:
    import ast
    import importlib
    import inspect

    defined: dict[str, list[str]] = {}
    for module in MODEL:
        tree = ast.parse(inspect.getsource(importlib.import_module(module)))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined.setdefault(node.name, []).append(module)
    for rule, module, name, cites in RULES:
        obj: Any = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
        doc = inspect.getdoc(obj.fget if isinstance(obj, property) else obj) or ""
        assert cites in doc, f"{module}.{name} ({rule}) does not cite {cites}"
        # one home: no other function of the model has its name
        assert len(defined.get(name.rsplit(".", 1)[-1], [module])) == 1, (rule, defined.get(name))
