"""An independent oracle of the memory server's next start, written plainly from the format notes.

It never calls the server model (:mod:`journal.diagnosis.server`, ``journal.server*``) nor our
reader or handlers: it reads the folder's bytes itself and runs the start as
``shared/spec/memory-format.md`` §3.2, §3.5, §4.1, §4.5 and §9 (with §9.8 and §9.9) describe it,
in the order of §4.2 and §9.1 — characters.json, persona ensure, reconcile (the server's reader,
sentinel lookup, handlers with ``!=``), then the one-shot migrations and the temp-file sweep of
every atomic write. Where the notes leave a detail open, the server's own code (rev ``685f1382``)
decided it, cited at the line. It knows only the inputs the property test generates (cards of
plain keys, settings of plain sections), and says so where it stops knowing
(:attr:`Expected.exact`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOURNAL = "events.ndjson"
SENTINEL = "events_applied.json"
PERSONA = "persona.json"
REFLECTIONS = "reflections.json"
REFLECTION_ARCHIVE = "reflection_archive"
PERSONA_ARCHIVE = "persona_archive"
FLAT_ARCHIVE = "reflections_archive.json"
MIGRATED = ".migrated_from_flat"
MARKER_SECTION, MARKER_ENTRY = "__meta__", "__evidence_migration_v1__"

#: §4.5 correction: the sweep's pattern and age.
SWEPT = re.compile(r"\.nkatmp[^.]+\.tmp")
DAY = 86_400

#: §3.5 (a)/(b) and the server's handler key lists (``memory/evidence_handlers.py:48-68``).
EVIDENCE_KEYS = (
    "reinforcement", "disputation", "rein_last_signal_at", "disp_last_signal_at", "sub_zero_days",
    "sub_zero_last_increment_date", "user_fact_reinforce_count",
)  # fmt: skip
REFLECTION_KEYS = (*EVIDENCE_KEYS, "last_promote_attempt_at", "promote_attempt_count")
PERSONA_ENTRY_KEYS = (*EVIDENCE_KEYS, "merged_from_ids", "event_when_raw", "event_start_at", "event_end_at")
HANDLED = (
    "reflection.evidence_updated", "persona.evidence_updated", "persona.entry_updated",
    "reflection.state_changed", "persona.fact_added",
)  # fmt: skip

#: §9.9 fact 5: card keys never synced (the ones the generator can produce are enough here).
RESERVED = frozenset({"_reserved", "name", "description", "tags", "描述", "标签", "关键词"})


class Raise(Exception):
    """A handler or a read raises: the server's replay stops at this record (§4.1 step 4). ``why``
    in our block reasons' words: ``corrupt_view`` (a view it cannot load), ``view_drift`` (the text
    hash check of §3.5 (c)) or ``handler_error`` (anything else)."""

    def __init__(self, message: str, why: str = "handler_error") -> None:
        super().__init__(message)
        self.why = why


class ShardCorrupt(Exception):
    """``ShardCorruptError``: the archive handler reports no change and the sentinel moves on (§9.7)."""


@dataclass
class Expected:
    """What the server's next start does, as the oracle works it out."""

    reconciled: bool | None
    persona_action: str = "skip"
    may_rewrite: bool = False
    exact: bool = True  # the persona ensure result is known in full (no localized default decides it)
    persona_after: Any = None
    persona_bytes: bytes | None = None
    missing: list[str] = field(default_factory=list)
    raises: tuple[str, int, int | None] | None = None
    sentinel_found: bool | None = None  # its sentinel names a record it reads (None: not read)
    records: list[tuple[int, Any]] = field(default_factory=list)  # (line, event_id) after its sentinel
    read_lines: set[int] = field(default_factory=set)  # the line of every record its reader takes
    persona_events: int = 0  # persona.* records its replay runs, up to where it stops
    applied: int = 0
    stop: tuple[int, Any, str] | None = None  # (line, event_id, a block reason: Raise.why or "no_handler")
    passed: list[int] = field(default_factory=list)  # lines of archive events passed (corrupt shard)
    sentinel_after: tuple[str, Any] = ("none", None)  # untouched; ("replay", id); ("live_write", None): a new id
    writes: set[str] = field(default_factory=set)
    deletes: set[str] = field(default_factory=set)
    changes: dict[tuple[str, str], tuple[bool, bool, tuple[tuple[str, Any, Any], ...]]] = field(default_factory=dict)
    unapplied: int = 0
    evidence_seeds: int | None = None
    migration_orphans: int = 0
    migration_glues: bool = False
    archive_migration: bool = False


# -- §9.1, §9.8.10: characters.json ---------------------------------------------------------------


def characters(memory_root: Path) -> tuple[set[str] | None, Any]:
    """The names its start ensures and reconciles, and the parsed file (``None``: not usable)."""
    path = memory_root.parent / "config" / "characters.json"
    if not path.exists():
        return None, None
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {"test"}, None  # its defaults list only "test"
    if not isinstance(doc, dict):
        return {"test"}, None
    section = doc.get("猫娘")
    return (set(section) if isinstance(section, dict) else set()), doc


# -- §9.9: persona ensure ---------------------------------------------------------------------------


def new_entry(eid: str, text: str, source: str, protected: bool) -> dict[str, Any]:
    """Fact 6, the 25 keys in the notes' order."""
    return {
        "id": eid, "text": text, "source": source, "source_id": None, "recent_mentions": [], "suppress": False,
        "suppressed_at": None, "protected": protected, "reinforcement": 0.0, "disputation": 0.0,
        "rein_last_signal_at": None, "disp_last_signal_at": None, "sub_zero_days": 0,
        "sub_zero_last_increment_date": None, "user_fact_reinforce_count": 0, "merged_from_ids": [],
        "token_count": None, "token_count_text_sha256": None, "token_count_tokenizer": None, "version_history": [],
        "embedding": None, "embedding_text_sha256": None, "embedding_model_id": None,
        "last_refine_cluster_hash": None, "last_refine_at": None,
    }  # fmt: skip


def _filled(v: Any) -> bool:
    return not (v is None or (isinstance(v, str) and not v.strip()) or (isinstance(v, (list, dict)) and not v))


def _sha8(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


class _Unknown(Exception):
    """A localized default of the server decides this: not known."""


def _settings_fill(persona: dict[str, Any], name: str, human: Any, settings: Any, out: Expected) -> None:
    """Fact 4: the three sections, then the settings file's sections routed and appended. When the
    master's name comes from the server's localized defaults (``human`` ``None``), a section with
    values might go to ``master``: the result is then not exact, and it is routed as if it does not."""
    for key in ("neko", "master", "relationship"):
        persona.setdefault(key, {}).setdefault("facts", [])
    if not isinstance(settings, dict):
        return
    for section_key, values in settings.items():
        if not isinstance(values, dict):
            continue
        if human is None and any(_filled(v) for v in values.values()):
            out.exact = False
        target = persona["master" if section_key == human else "neko" if section_key == name else "relationship"]
        facts = target["facts"]
        seen = {e.get("text", "") for e in facts if isinstance(e, dict)}
        for k, v in values.items():
            if not _filled(v):
                continue
            text = f"{k}: {v}"
            if text in seen:
                continue
            facts.append(new_entry(f"legacy_{_sha8(text)}", text, "settings", False))
            seen.add(text)


def _sync(persona: dict[str, Any], entity: str, card: dict[str, Any]) -> bool:
    """Fact 5 for one section; raises ``AttributeError`` where the server's does."""
    section = persona.setdefault(entity, {})
    facts = section.setdefault("facts", [])  # AttributeError on a section that is not a dict
    expected = []
    for key, value in card.items():
        if key in RESERVED or not _filled(value) or isinstance(value, dict):
            continue
        if isinstance(value, list):
            value = "、".join(str(x) for x in value)
        expected.append((f"card_{_sha8(f'{entity}:{key}')}", f"{key}: {value}"))
    indexed: dict[Any, dict[str, Any]] = {}
    others = []
    for e in facts:
        if isinstance(e, dict) and e.get("source") == "character_card":
            indexed[e.get("id", "")] = e
        else:
            others.append(e)
    changed = False
    cards = []
    for eid, text in expected:
        e = indexed.get(eid)
        if e is None:
            e = new_entry(eid, text, "character_card", True)
            changed = True
        elif e.get("text") != text:
            e["text"] = text
            for k in ("token_count", "token_count_text_sha256", "token_count_tokenizer"):
                e[k] = None
            for k in ("embedding", "embedding_text_sha256", "embedding_model_id"):
                e[k] = None
            changed = True
        cards.append(e)
    if any(rid not in {eid for eid, _ in expected} for rid in indexed):
        changed = True
    if changed:
        section["facts"] = cards + others
    return changed


def persona_ensure(char: Path, name: str, doc: Any, out: Expected) -> Any:
    """§9.9: the action, and the persona the handlers then read (``None``: their read raises)."""
    path = char / PERSONA
    settings_path = char / "settings.json"
    settings = None
    if settings_path.exists():
        try:
            settings = json.loads(settings_path.read_bytes().decode("utf-8"))
        except ValueError:
            settings = None
    cards_known = isinstance(doc, dict)
    master = doc.get("主人") if cards_known else None
    neko = doc.get("猫娘", {}).get(name) if cards_known else None
    human = master.get("档案名") if isinstance(master, dict) else None
    file_dict: Any = None
    fresh = not path.exists()
    if not fresh:
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            out.persona_action = "raises"  # fact 1: not caught; the file is kept
            return None
        try:
            file_dict = json.loads(text)  # a BOM is a JSONDecodeError here
        except json.JSONDecodeError:
            fresh = True
        if not isinstance(file_dict, dict):
            fresh = True
    persona: dict[str, Any] = {} if fresh else copy.deepcopy(file_dict)
    changed = fresh
    for old, new in (("user", "master"), ("ai", "neko")):  # fact 2: v1 keys, popped and re-inserted
        if old in persona and new not in persona:
            persona[new] = persona.pop(old)
            changed = True
    for section in persona.values():
        if isinstance(section, dict) and "dynamics" in section:
            section["facts"] = section.pop("dynamics")
            changed = True
    try:
        if not fresh and not any(
            isinstance(s, dict) and any(isinstance(v, list) and v for v in s.values()) for s in persona.values()
        ):
            changed = True  # fact 3: empty, the fill always saves
            _settings_fill(persona, name, human, settings, out)
            if not settings_path.exists():
                out.missing.append("settings.json")
        elif fresh:
            _settings_fill(persona, name, human, settings, out)
            if not settings_path.exists():
                out.missing.append("settings.json")
        if not cards_known:
            out.exact = False
            # A character it ensures is a key of its catgirl map, so the neko sync runs whatever
            # the default card holds, and the master's (taken as a non-empty default) too: their
            # setdefault on a section that is not an object raises; what they add is not known.
            for entity in ("neko", "master"):
                persona.setdefault(entity, {}).setdefault("facts", [])
            out.missing.append("characters.json")
            raise _Unknown("the default cards: taken to change nothing")
        else:
            if isinstance(neko, dict):
                changed |= _sync(persona, "neko", neko)
            if isinstance(master, dict) and master:
                changed |= _sync(persona, "master", master)
    except AttributeError:
        out.persona_action = "raises"
        return None if fresh else file_dict
    except _Unknown:
        out.exact = False
    if fresh:
        out.persona_action = "create" if not path.exists() else "replace"
    else:
        out.persona_action = "rewrite" if changed else "keep"
        if not changed and not out.exact:
            out.may_rewrite = True
    if out.persona_action == "keep":
        return file_dict
    out.persona_after = persona
    out.persona_bytes = json.dumps(persona, ensure_ascii=False, indent=2).encode("utf-8") if out.exact else None
    return persona


# -- §3.2, §4.1, §9.3, §9.8.1-5: the server's reader and sentinel -----------------------------------


def read_sentinel(char: Path) -> tuple[Any, int | None]:
    """The id its read finds, or ``(None, offset)`` when the bytes are not UTF-8 (its reconcile raises)."""
    path = char / SENTINEL
    if not path.exists():
        return None, None
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, exc.start
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return None, None
    if not isinstance(doc, dict):
        return None, None
    value = doc.get("last_applied_event_id")
    return (value if isinstance(value, str) else None), None


def read_records(data: bytes, *, skip_undecodable: bool) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` for every line its reader takes: stripped, JSON, an object with an
    ``event_id`` key. ``skip_undecodable``: leave out the lines that are not UTF-8 (to count what
    stays unapplied behind a journal it cannot read)."""
    out = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            if skip_undecodable:
                continue
            raise
        if not line:
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and "event_id" in rec:
            out.append((lineno, rec))
    return out


Records = list[tuple[int, dict[str, Any]]]


def after_sentinel(records: Records, sid: Any) -> tuple[Records, bool]:
    """§3.2: the records after the first one with the sentinel's id; all of them if none has it."""
    if sid is not None:
        for i, (_, rec) in enumerate(records):
            if rec.get("event_id") == sid:
                return records[i + 1 :], True
    return records, False


# -- §3.5 with the server's != (§9.8.9): its handlers on an in-memory copy of the folder ------------


class Files:
    """The folder's files as the start leaves them, in memory: reads hit the disk until written."""

    def __init__(self, char: Path, persona: Any, persona_written: bool) -> None:
        self.char = char
        self.mem: dict[str, Any] = {}
        self.written: set[str] = set()
        if persona_written:
            self.mem[PERSONA] = persona

    def exists(self, rel: str) -> bool:
        return rel in self.mem or (self.char / rel).is_file()

    def load(self, rel: str) -> Any:
        if rel in self.mem:
            return copy.deepcopy(self.mem[rel])
        data = (self.char / rel).read_bytes()
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise Raise(f"{rel}: {exc}", "corrupt_view") from exc

    def save(self, rel: str, value: Any) -> None:
        self.mem[rel] = value
        self.written.add(rel)


def _view(files: Files, rel: str, kind: type) -> Any:
    value = files.load(rel) if files.exists(rel) else kind()
    if not isinstance(value, kind):
        raise Raise(f"{rel} is not a {kind.__name__}", "corrupt_view")
    return value


def _copy(entry: dict[str, Any], payload: dict[str, Any], keys: tuple[str, ...]) -> bool:
    changed = False
    for k in keys:
        if k in payload and entry.get(k) != payload[k]:
            entry[k] = payload[k]
            changed = True
    return changed


def _heal(files: Files, archive: str, basename: str, snapshot: dict[str, Any]) -> bool:
    """``ensure_entry_in_named_shard_sync`` (``memory/archive_shards.py:410-437``)."""
    eid = snapshot.get("id")
    if not eid:
        return False
    rel = shard_path(files.char, archive, basename)
    existing: list[Any] = []
    if files.exists(rel):
        if rel in files.mem:
            data = copy.deepcopy(files.mem[rel])
        else:
            raw = (files.char / rel).read_bytes()
            try:
                text = raw.decode("utf-8")  # not UTF-8: raises past ShardCorruptError (§9.8.4)
            except UnicodeDecodeError as exc:
                raise Raise(f"{rel}: {exc}") from exc
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ShardCorrupt(rel) from exc
        if not isinstance(data, list):
            raise ShardCorrupt(rel)
        existing = [x for x in data if isinstance(x, dict)]
        if any(e.get("id") == eid for e in existing):
            return False
    files.save(rel, [*existing, dict(snapshot)])
    return True


def shard_path(char: Path, archive: str, basename: str) -> str:
    """Where ``os.path.join(archive_dir, basename)`` leads (the basename unvalidated, §9.7): relative
    to the character folder inside it, absolute outside it."""
    path = os.path.normpath(os.path.join(char, archive, basename))
    inside = os.path.commonpath([str(char), path]) == str(char)
    return Path(os.path.relpath(path, char)).as_posix() if inside else path


def apply(files: Files, etype: Any, payload: Any) -> bool:
    """The server's handler for ``etype`` on ``payload`` (§3.5); raises :class:`Raise` or :class:`ShardCorrupt`."""
    if not isinstance(payload, dict):
        raise Raise("payload is not a dict")  # payload.get raises
    p = payload
    if etype == "reflection.evidence_updated" or (etype == "reflection.state_changed" and p.get("to") != "archived"):
        rid = p.get("reflection_id")
        if not rid or (etype == "reflection.state_changed" and not p.get("to")):
            return False
        data = _view(files, REFLECTIONS, list)
        changed = False
        for r in data:
            if not isinstance(r, dict) or r.get("id") != rid:
                continue
            if etype == "reflection.evidence_updated":
                changed = _copy(r, p, REFLECTION_KEYS)
            else:
                to = p["to"]
                changed = _copy(r, {"status": to}, ("status",))
                if p.get("ts"):
                    changed |= _copy(r, {f"{to}_at": p["ts"]}, (f"{to}_at",))
                changed |= _copy(r, p, ("absorbed_into",))
                if "reason" in p and to in ("promote_blocked", "denied"):
                    changed |= _copy(r, {f"{to}_reason": p["reason"]}, (f"{to}_reason",))
                if "reject_explanation" in p:
                    changed |= _copy(r, {"reject_reason": p["reject_explanation"]}, ("reject_reason",))
            break
        if changed:
            files.save(REFLECTIONS, data)
        return changed
    if etype == "reflection.state_changed":  # to == "archived"
        rid = p.get("reflection_id")
        if not rid:
            return False
        shard = False
        if p.get("archive_shard_path") and isinstance(p.get("entry_snapshot"), dict):
            shard = _heal(files, REFLECTION_ARCHIVE, p["archive_shard_path"], p["entry_snapshot"])
        data = _view(files, REFLECTIONS, list)
        kept = [r for r in data if not (isinstance(r, dict) and r.get("id") == rid)]
        if len(kept) != len(data):
            files.save(REFLECTIONS, kept)
            return True
        return shard
    key, eid = p.get("entity_key"), p.get("entry_id")
    if etype == "persona.fact_added":
        if not p.get("archive_shard_path") or not key or not eid:
            return False
        shard = False
        if isinstance(p.get("entry_snapshot"), dict):
            shard = _heal(files, PERSONA_ARCHIVE, p["archive_shard_path"], p["entry_snapshot"])
        if not files.exists(PERSONA):
            return shard
        persona = _view(files, PERSONA, dict)
        section = persona.get(key)
        if not isinstance(section, dict):
            return shard
        facts = section.get("facts", [])
        section["facts"] = [e for e in facts if not (isinstance(e, dict) and e.get("id") == eid)]
        if len(section["facts"]) != len(facts):
            files.save(PERSONA, persona)
            return True
        return shard
    if not key or not eid:
        return False
    if etype == "persona.entry_updated" and not files.exists(PERSONA):
        return False
    persona = _view(files, PERSONA, dict)
    section = persona.get(key)
    if not isinstance(section, dict):
        return False
    for e in section.get("facts", []):
        if not isinstance(e, dict) or e.get("id") != eid:
            continue
        if etype == "persona.entry_updated":
            sha = p.get("rewrite_text_sha256")
            if sha and hashlib.sha256((e.get("text") or "").encode("utf-8")).hexdigest() != sha:
                raise Raise("text sha256 mismatch", "view_drift")
            changed = _copy(e, p, PERSONA_ENTRY_KEYS)
        else:
            changed = _copy(e, p, EVIDENCE_KEYS)
        if changed:
            files.save(PERSONA, persona)
        return changed
    return False


# -- the start, in order --------------------------------------------------------------------------


def _entries(name: str, value: Any) -> dict[str, dict[str, Any]]:
    """The entries of a view by the model's reference (``<id>`` / ``<section>/<id>``), first wins."""
    out: dict[str, dict[str, Any]] = {}
    if name == REFLECTIONS and isinstance(value, list):
        for r in value:
            if isinstance(r, dict) and isinstance(r.get("id"), str):
                out.setdefault(r["id"], r)
    if name == PERSONA and isinstance(value, dict):
        for key, section in value.items():
            facts = section.get("facts") if isinstance(section, dict) else None
            for e in facts if isinstance(facts, list) else []:
                if isinstance(e, dict) and isinstance(e.get("id"), str):
                    out.setdefault(f"{key}/{e['id']}", e)
    return out


def same(a: Any, b: Any) -> bool:
    """JSON equality with types (``0`` is not ``0.0``, ``1`` not ``true``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _changes(before: dict[str, Any], after: dict[str, Any], out: Expected) -> None:
    for name in (REFLECTIONS, PERSONA):
        old, new = _entries(name, before.get(name)), _entries(name, after.get(name))
        for ref in [*old, *(r for r in new if r not in old)]:
            b, a = old.get(ref), new.get(ref)
            if a is None:
                out.changes[(name, ref)] = (True, False, ())
                continue
            if b is not None and same(b, a):
                continue
            o = b or {}
            fields = tuple(
                (k, o.get(k), a.get(k))
                for k in [*o, *(k for k in a if k not in o)]
                if k not in o or k not in a or not same(o[k], a[k])
            )
            out.changes[(name, ref)] = (False, b is None, fields)


def _loads(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return None


def server_start(char: Path, name: str, now: float | None = None) -> Expected:
    """The oracle: what the server's next start does to ``char`` (a folder under a memory root)."""
    now = time.time() if now is None else now
    listed, doc = characters(char.parent)
    out = Expected(None if listed is None else name in listed)
    if out.reconciled is False:
        return out  # §9.1: neither ensured nor reconciled
    persona = persona_ensure(char, name, doc, out)
    ensure_writes = out.persona_action in ("rewrite", "create", "replace")
    if ensure_writes:
        out.writes.add(PERSONA)
    files = Files(char, persona, ensure_writes)
    journal = (char / JOURNAL).read_bytes() if (char / JOURNAL).is_file() else b""
    sid, sentinel_bad = read_sentinel(char)
    raised: tuple[str, int, int | None] | None = None
    if sentinel_bad is not None:
        raised = (SENTINEL, sentinel_bad, None)
    else:
        try:
            journal.decode("utf-8")
        except UnicodeDecodeError as exc:
            raised = (JOURNAL, exc.start, journal.count(b"\n", 0, exc.start) + 1)
    before = {REFLECTIONS: _loads(char / REFLECTIONS), PERSONA: persona if ensure_writes else _loads(char / PERSONA)}
    if raised is not None:
        out.raises = raised
        tail, _ = after_sentinel(read_records(journal, skip_undecodable=True), sid)
        out.unapplied = len(tail)
    else:
        records = read_records(journal, skip_undecodable=False)
        out.read_lines = {line for line, _ in records}
        tail, found = after_sentinel(records, sid)
        out.sentinel_found = found
        out.records = [(line, rec.get("event_id")) for line, rec in tail]
        for line, rec in tail:
            etype = rec.get("type")
            out.persona_events += isinstance(etype, str) and etype.startswith("persona.")
            if etype not in HANDLED:
                out.stop = (line, rec.get("event_id"), "no_handler")
                break
            try:
                apply(files, etype, rec.get("payload") or {})
            except ShardCorrupt:
                out.passed.append(line)
            except Raise as exc:
                out.stop = (line, rec.get("event_id"), exc.why)
                break
            out.applied += 1
            out.sentinel_after = ("replay", rec.get("event_id"))
        out.unapplied = len(tail) - out.applied
        if out.applied:
            files.written.add(SENTINEL)
        _changes(before, {REFLECTIONS: _view_or(files, REFLECTIONS), PERSONA: _view_or(files, PERSONA)}, out)
    out.writes |= files.written
    _migrations(char, out, files, journal, persona)
    # Appends are not atomic writes; a folder outside the character's is not looked at, for safety.
    for folder in {os.path.dirname(w) for w in out.writes if w != JOURNAL and not os.path.isabs(w)}:
        d = char / folder
        for entry in sorted(d.iterdir()) if d.is_dir() else []:
            if SWEPT.fullmatch(entry.name) and entry.is_file() and now - entry.stat().st_mtime > DAY:
                out.deletes.add(f"{folder}/{entry.name}" if folder else entry.name)
    return out


def _view_or(files: Files, rel: str) -> Any:
    try:
        return files.load(rel) if files.exists(rel) else None
    except Raise:
        return None


def _migrations(char: Path, out: Expected, files: Files, journal: bytes, persona: Any) -> None:
    """§9.8.7: the evidence migration (when persona ensure succeeded and the cached persona, as the
    persona handlers left it, lacks the marker), then the archive migration."""
    if out.persona_action != "raises" and persona is not None:
        cached = _view_or(files, PERSONA) if files.exists(PERSONA) else persona
        meta = cached.get(MARKER_SECTION) if isinstance(cached, dict) else None
        marked = isinstance(meta, dict) and any(
            isinstance(e, dict) and e.get("id") == MARKER_ENTRY for e in meta.get("facts", [])
        )
        if isinstance(cached, dict) and not marked:
            reflections = _view_or(files, REFLECTIONS)
            seeds = 0
            for r in reflections if isinstance(reflections, list) else []:
                if not isinstance(r, dict) or not r.get("id"):
                    continue
                if r.get("rein_last_signal_at") or r.get("disp_last_signal_at"):
                    continue
                if r.get("status", "pending") in ("promoted", "confirmed", "denied"):
                    seeds += 1
                    out.writes.add(REFLECTIONS)
            for key, section in cached.items():
                if key == MARKER_SECTION or not isinstance(section, dict):
                    continue
                for e in section.get("facts", []):
                    if not isinstance(e, dict) or e.get("protected"):
                        continue
                    if e.get("rein_last_signal_at") or e.get("disp_last_signal_at"):
                        continue
                    if e.get("reinforcement") or e.get("disputation") or not e.get("id"):
                        continue
                    seeds += 1
            out.evidence_seeds = seeds
            out.writes.add(PERSONA)  # the marker
            if seeds:
                out.writes |= {JOURNAL, SENTINEL}
                out.sentinel_after = ("live_write", None)
                out.migration_orphans = out.unapplied
                out.migration_glues = bool(journal) and not journal.endswith(b"\n")
    if (char / REFLECTION_ARCHIVE / MIGRATED).exists() or not (char / FLAT_ARCHIVE).is_file():
        return
    try:
        flat = json.loads((char / FLAT_ARCHIVE).read_bytes().decode("utf-8"))
    except ValueError:
        return
    if isinstance(flat, list):
        out.archive_migration = True
        out.writes.add(f"{REFLECTION_ARCHIVE}/{MIGRATED}")
        out.deletes.add(FLAT_ARCHIVE)
