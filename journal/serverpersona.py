"""The memory server's persona ensure (memory-format §9.9), as pure functions: what its start writes to persona.json.

At start the server's ``aensure_persona(name)`` runs for every character it lists, before
reconcile (§9.1, §9.2). It reads ``persona.json`` (fact 1), migrates v1 keys (fact 2), fills an
empty persona from ``settings.json`` (facts 3, 4), syncs the character card (facts 5, 7) and saves
the result in its own formatting (fact 8) when anything changed. Each fact has one function here,
named for it, citing the server line the format notes cite (``persistence.py`` is
``memory/persona/persistence.py``, rev ``685f1382``). :func:`predict_persona_ensure` composes them
over inputs that were already read; :func:`persona_ensure_at` reads the inputs of one character
folder and calls it. The cards of fact 7 are :mod:`journal.servercards`. Nothing here writes anything.

The server's localized defaults (the default cards, the default master's ``档案名``, the sentence a
rename event becomes) are not in the notes and are not guessed: a value that comes from them is an
:class:`Unknown`, and a prediction that needed one says so (``missing_inputs``, ``may_rewrite``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal import fs
from journal.codec import dumps_view, loads_exact
from journal.errors import ViewCorruptError
from journal.servercards import Cards, Unknown, cards_from, json_type
from journal.serverrules import CharacterList
from journal.stores import Confinement
from journal.views import PERSONA

#: The three sections the settings fill sets by default, in this order (fact 4, ``persistence.py:349-350``).
SECTIONS = ("neko", "master", "relationship")

#: Card keys the card sync never turns into entries (fact 5, ``config/character_fields.py:21-59``).
RESERVED_FIELDS = frozenset(
    (
        "_reserved", "live2d", "voice_id", "system_prompt", "model_type", "live3d_sub_type", "vrm",
        "vrm_animation", "lighting", "vrm_rotation", "live2d_item_id", "live2d_idle_animation", "item_id",
        "idleAnimation", "idleAnimations", "mmd", "mmd_animation", "mmd_idle_animation", "mmd_idle_animations",
        "touch_set", "_field_order", "原始数据", "文件路径", "创意工坊物品ID", "description", "tags", "name", "描述",
        "标签", "关键词",
    )
)  # fmt: skip

#: The fields a changed card text sets to null (fact 5, ``memory/persona/rendering.py:291-314``).
CACHE_FIELDS = (
    "token_count", "token_count_text_sha256", "token_count_tokenizer",
    "embedding", "embedding_text_sha256", "embedding_model_id",
)  # fmt: skip

#: Card keys whose entry text is the value alone (fact 5, ``persistence.py:395-402``).
AI_CONTEXT_PREFIX = "__ai_context."

#: The settings file inside the character folder (fact 4).
SETTINGS_NAME = "settings.json"


@dataclass(frozen=True, slots=True)
class FileInput:
    """One file persona ensure reads, as found on disk.

    Attributes:
        state: ``bytes`` (read: ``data``), ``missing`` (nothing there, or a dangling link),
            ``folder`` (a directory is there), ``error`` (it is there but cannot be opened),
            ``special`` (a FIFO, socket or device: not opened; the server's plain ``open`` of a FIFO
            blocks) or ``refused`` (a link leading out of its folder: not followed).
        data: the bytes, for ``bytes``.
        detail: why, for the other states, in words.
        path: the file.
    """

    state: str
    data: bytes = b""
    detail: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class PersonaEnsurePrediction:
    """What the server's first ``aensure_persona(name)`` of a start does to ``persona.json`` (§9.9).

    Attributes:
        action: ``keep`` (a readable dict nothing changes: nothing written), ``rewrite`` (a readable
            dict facts 2, 3 or 5 changed: saved), ``create`` (no file: a fresh persona saved),
            ``replace`` (unreadable: a fresh persona saved, the old bytes lost), ``raises`` (ensure
            raises; the file is kept as it is) or ``unknown`` (an input was not read, for safety).
        message: the action in words.
        persona_after: what the persona handlers then read from ``persona.json``: the saved dict,
            or the file's own dict when nothing is saved (``{}`` when there is no file); ``None``
            when they raise on it or it is not known.
        bytes_after: exactly the bytes the server writes (fact 8); ``None`` when it writes nothing,
            or when what it writes needs an input not known here (``missing_inputs``).
        handlers_raise: the persona handlers raise on their read of ``persona.json`` after ensure
            (not valid UTF-8 or JSON, not a dict, not a file): replay stops at the first persona event.
        changes: what ensure changes, as field paths and entry ids (texts are private: ``changed``).
        missing_inputs: inputs a rule needed that were absent or are not known here, in words.
        may_rewrite: ``keep`` rests on an input not known here (the localized defaults), which may
            change the file.
        error: the exception ensure meets, for ``raises``.
    """

    action: str
    message: str
    persona_after: dict[str, Any] | None = None
    bytes_after: bytes | None = None
    handlers_raise: bool = False
    changes: tuple[str, ...] = ()
    missing_inputs: tuple[str, ...] = ()
    may_rewrite: bool = False
    error: str | None = None

    @property
    def writes(self) -> bool:
        """Whether ensure saves ``persona.json`` (even where its bytes are not known)."""
        return self.action in ("rewrite", "create", "replace")

    @property
    def returned(self) -> dict[str, Any] | None:
        """The persona a later ``aensure_persona(name)`` of the same start returns (the evidence
        migration's, §9.8.7): the one this call cached, as the persona handlers then leave it.
        ``None`` when this call raises: nothing was cached, so the later call runs the same steps
        on the same file and raises again (or when it is not known), and its caller returns at once
        (``evidence_loops.py:636-640``)."""
        return None if self.action in ("raises", "unknown") else self.persona_after


class EnsureRaises(Exception):
    """Persona ensure raises here: nothing is saved or cached (the start logs it, ``runtime.py:716``)."""


@dataclass(slots=True)
class EnsureRun:
    """What one ensure run records besides the persona it changes.

    Attributes:
        changes: what it changes, as field paths and entry ids.
        missing: inputs a rule needed that were absent or are not known here, in words.
        inexact: an :class:`Unknown` decided part of the result (the bytes are not known).
        blocked: a read the server's start blocks on (a FIFO), in words.
    """

    changes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    inexact: bool = False
    blocked: str | None = None

    def unknown(self, what: str) -> None:
        """Record that ``what`` (not known here) decides part of the result."""
        self.inexact = True
        if what not in self.missing:
            self.missing.append(what)


# -- fact 1: reading --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PersonaRead:
    """How persona ensure's read of ``persona.json`` ends (fact 1).

    Attributes:
        kind: ``dict`` (``value``), ``fresh`` (missing or unreadable: a fresh persona is built),
            ``raises`` or ``unknown``.
        value: the parsed dict, for ``dict``.
        reason: why, in words.
        handlers_raise: whether the handlers' read of the file as it is raises.
    """

    kind: str
    value: dict[str, Any] | None = None
    reason: str = ""
    handlers_raise: bool = False


def read_persona(persona: FileInput) -> PersonaRead:
    """Fact 1: strict UTF-8, no BOM stripping, ``json.load``; only ``JSONDecodeError``/``OSError``
    lead to a fresh persona (``persistence.py:199-203``, ``:214-216``; ``utils/file_utils.py:775-777``).

    A file that is not valid UTF-8 raises out of ensure (``UnicodeDecodeError`` at
    ``persistence.py:202`` is not caught at ``:215``), as does a value ``json`` cannot build (too
    deep, an integer of too many digits: ``RecursionError``/``ValueError``).
    """
    if persona.state in ("special", "refused"):
        return PersonaRead("unknown", reason=f"persona.json was not read ({persona.detail})")
    if persona.state == "missing":
        return PersonaRead("fresh", reason="missing")
    if persona.state == "folder":
        return PersonaRead("fresh", reason="a folder, which cannot be read (OSError)", handlers_raise=True)
    if persona.state == "error":
        return PersonaRead("fresh", reason=f"cannot be read ({persona.detail}: OSError)", handlers_raise=True)
    try:
        persona.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return PersonaRead("raises", reason=f"not valid UTF-8 (UnicodeDecodeError: {exc.reason})", handlers_raise=True)
    try:
        value = loads_exact(persona.data)
    except json.JSONDecodeError as exc:
        return PersonaRead("fresh", reason=f"not JSON ({exc})", handlers_raise=True)
    except ValueError as exc:  # the stdlib's RecursionError, or an integer of too many digits
        cause = exc.__cause__ or exc
        return PersonaRead(
            "raises", reason=f"json cannot build it ({type(cause).__name__}: {exc})", handlers_raise=True
        )
    if not isinstance(value, dict):
        return PersonaRead("fresh", reason=f"a JSON {json_type(value)}, not an object", handlers_raise=True)
    return PersonaRead("dict", value)


# -- fact 2: v1 keys --------------------------------------------------------------------------------


def migrate_v1_keys(persona: dict[str, Any]) -> list[str]:
    """Fact 2 (``persistence.py:226-251``): ``user`` → ``master``, then ``ai`` → ``neko``, each only
    when the new key is absent (popped and re-inserted: it moves to the end); then in every
    top-level dict value ``dynamics`` → ``facts`` (an existing ``facts`` keeps its place and loses
    its value, else ``facts`` goes to the end). Returns the changes (any rename is one)."""
    changes = []
    for old, new in (("user", "master"), ("ai", "neko")):
        if old in persona and new not in persona:
            persona[new] = persona.pop(old)
            changes.append(f"top-level {old!r} renamed {new!r} (moved to the end)")
    for key, section in persona.items():
        if isinstance(section, dict) and "dynamics" in section:
            had_facts = "facts" in section
            section["facts"] = section.pop("dynamics")
            changes.append(
                f"{key}.dynamics renamed {key}.facts"
                + (" (the old facts value is replaced)" if had_facts else " (at the end of the section)")
            )
    return changes


# -- fact 3: emptiness ------------------------------------------------------------------------------


def is_empty(persona: dict[str, Any]) -> bool:
    """Fact 3 (``persistence.py:129-136``): no top-level dict value holds a non-empty list under any
    key. A marker-only persona (the marker sits in ``__meta__``'s facts) is not empty."""
    for section in persona.values():
        if isinstance(section, dict) and any(isinstance(v, list) and v for v in section.values()):
            return False
    return True


# -- fact 6: the new entry --------------------------------------------------------------------------


def new_entry(text: str, entry_id: str, source: str, *, protected: bool = False) -> dict[str, Any]:
    """Fact 6 (``memory/persona/facts.py:85-143``): a new entry, 25 keys in this order."""
    return {
        "id": entry_id,
        "text": text,
        "source": source,
        "source_id": None,
        "recent_mentions": [],
        "suppress": False,
        "suppressed_at": None,
        "protected": protected,
        "reinforcement": 0.0,
        "disputation": 0.0,
        "rein_last_signal_at": None,
        "disp_last_signal_at": None,
        "sub_zero_days": 0,
        "sub_zero_last_increment_date": None,
        "user_fact_reinforce_count": 0,
        "merged_from_ids": [],
        "token_count": None,
        "token_count_text_sha256": None,
        "token_count_tokenizer": None,
        "version_history": [],
        "embedding": None,
        "embedding_text_sha256": None,
        "embedding_model_id": None,
        "last_refine_cluster_hash": None,
        "last_refine_at": None,
    }


def ensure_section(persona: dict[str, Any], key: str, run: EnsureRun) -> dict[str, Any]:
    """``persona.setdefault(key, {}).setdefault("facts", [])``, as the settings fill and the card
    sync both do it (facts 4, 5: ``persistence.py:349-350``, ``:408-409``): a missing section is
    added at the end, then its ``facts``; returns the section.

    Raises:
        EnsureRaises: the section is not a dict (``setdefault`` on it: ``AttributeError``).
    """
    if key not in persona:
        persona[key] = {}
        run.changes.append(f"{key} section created (at the end)")
    section = persona[key]
    if not isinstance(section, dict):
        raise EnsureRaises(f"the {key!r} section is a JSON {json_type(section)}, not an object (AttributeError)")
    if "facts" not in section:
        section["facts"] = []
        run.changes.append(f"{key}.facts created")
    return section


# -- fact 4: the settings fill ----------------------------------------------------------------------


def settings_input(char_dir: str | os.PathLike[str], name: str) -> FileInput:
    """Fact 4's source (``persistence.py:259-268``): ``memory/<name>/settings.json``, else
    ``memory/settings_<name>.json``. A link leading out of the character folder (the first) or the
    memory root (the second) is not followed."""
    char = Path(char_dir)
    try:
        first = read_input(Confinement(char).view_path(SETTINGS_NAME))
    except ViewCorruptError as exc:
        return FileInput("refused", detail=str(exc), path=str(char / SETTINGS_NAME))
    if first.state != "missing":
        return first
    root = char.absolute().parent
    old = root / f"settings_{name}.json"
    if os.path.islink(old) and not _inside(os.path.realpath(root), os.path.realpath(old)):
        return FileInput(
            "refused", detail="a symbolic link leading out of the memory root; not followed", path=str(old)
        )
    return read_input(old)


def is_settings_value(value: Any) -> bool:
    """Fact 4 (``persistence.py:274-281``): a value is skipped when null, a blank string, or an empty
    list or dict; anything else (``0``, ``False``) is filled."""
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (list, dict)):
        return len(value) > 0
    return True


def settings_text(key: str, value: Any) -> str:
    """Fact 4 (``persistence.py:300``): ``key: <Python str(value)>`` (reprs for lists and dicts,
    ``True``/``False``, numbers as Python prints them)."""
    return f"{key}: {value}"


def legacy_id(text: str) -> str:
    """Fact 4 (``persistence.py:303-304``): ``legacy_<first 8 hex of sha256(UTF-8 text)>``."""
    return f"legacy_{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def settings_fill(persona: dict[str, Any], name: str, cards: Cards, settings: FileInput, run: EnsureRun) -> None:
    """Fact 4 (``persistence.py:343-365``, ``:286-309``): ``neko``, ``master`` and ``relationship``
    set by default to ``{"facts": []}``, then each dict section of the settings file routed (the
    master key to ``master``, the character's name to ``neko``, others to ``relationship``) and its
    non-empty pairs appended as ``settings`` entries, skipping a text the target already holds.

    Raises:
        EnsureRaises: ``aget_character_data()`` raises (not guarded, ``:344-346``), or a section is
            not a dict (``setdefault`` on it: ``AttributeError``, ``:349-350``).
    """
    if cards.error is not None:
        raise EnsureRaises(f"aget_character_data() raises ({cards.error}) in the settings fill")
    for key in SECTIONS:
        ensure_section(persona, key, run)
    doc = _settings_document(settings, run)
    if doc is not None:
        _apply_settings(persona, name, cards.human, doc, run)


def _settings_document(settings: FileInput, run: EnsureRun) -> dict[str, Any] | None:
    """The settings object the fill reads, or ``None`` (it adds nothing). An unreadable file only
    logs a warning (``persistence.py:361-362``); a top level that is not a dict adds nothing."""
    if settings.state == "missing":
        run.missing.append("no settings.json (neither memory/<name>/settings.json nor memory/settings_<name>.json)")
        return None
    if settings.state == "special":
        run.blocked = f"settings file {settings.path} is {settings.detail}"
        return None
    if settings.state == "refused":
        run.unknown(f"the settings file was not read ({settings.detail}): what the fill adds is not known")
        return None
    if settings.state != "bytes":
        return None
    try:
        doc = loads_exact(settings.data)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _apply_settings(persona: dict[str, Any], name: str, human: Any, doc: dict[str, Any], run: EnsureRun) -> None:
    """The fill's loop. Its exceptions are caught with the read's (``persistence.py:355-362``): the
    fill stops there, keeping what it appended before."""
    for section_key, values in doc.items():
        if not isinstance(values, dict):
            continue
        if isinstance(human, Unknown):
            if any(is_settings_value(v) for v in values.values()):
                run.unknown(f"{human.what}: a settings section with that key goes to master")
            target_key = "neko" if section_key == name else "relationship"
        else:
            target_key = "master" if section_key == human else "neko" if section_key == name else "relationship"
        target = persona[target_key]["facts"]
        try:
            seen = {e.get("text", "") for e in _iterate(target) if isinstance(e, dict)}
        except TypeError:
            run.changes.append(f"settings fill stops at {target_key}.facts (not a list: TypeError, caught)")
            return
        for k, v in values.items():
            if not is_settings_value(v):
                continue
            text = settings_text(k, v)
            if text in seen:
                continue
            try:
                entry_id = legacy_id(text)
            except UnicodeEncodeError:
                run.changes.append("settings fill stops at a text UTF-8 cannot encode (caught)")
                return
            if not isinstance(target, list):
                run.changes.append(f"settings fill stops at {target_key}.facts (not a list: AttributeError, caught)")
                return
            target.append(new_entry(text, entry_id, "settings"))
            seen.add(text)
            run.changes.append(f"{target_key}.facts[{entry_id}] added from settings")


# -- fact 5: the card sync --------------------------------------------------------------------------


def card_entry_id(entity: str, key: str) -> str:
    """Fact 5 (``persistence.py:254-257``): ``card_<first 8 hex of sha256("<entity>:<key>")>``."""
    return f"card_{hashlib.sha256(f'{entity}:{key}'.encode()).hexdigest()[:8]}"


def expected_card_entries(card: dict[str, Any], entity: str) -> list[tuple[str, str]]:
    """Fact 5's expected list (``persistence.py:384-404``): ``(id, text)`` in card order, skipping
    reserved keys and null, blank, empty or dict values; a list is its items' ``str`` joined with
    ``、``; the text is ``key: value``, or the value alone for ``__ai_context.`` keys.

    Raises:
        UnicodeEncodeError: a key UTF-8 cannot encode (the id's hash raises).
    """
    expected = []
    for key, value in card.items():
        if key in RESERVED_FIELDS or not is_settings_value(value) or isinstance(value, dict):
            continue
        if isinstance(value, list):
            value = "、".join(str(item) for item in value)
        text = str(value) if str(key).startswith(AI_CONTEXT_PREFIX) else f"{key}: {value}"
        expected.append((card_entry_id(entity, key), text))
    return expected


def card_sync(persona: dict[str, Any], name: str, cards: Cards, run: EnsureRun) -> bool:
    """Fact 5 (``persistence.py:507-516``, ``:473-483``): ``neko`` first (the name is a key of the
    catgirl map), then ``master`` (a non-empty dict card). Returns whether it changed anything;
    when ``aget_character_data()`` raises nothing changes (``:508-513``).

    Raises:
        EnsureRaises: a synced section is not a dict, its facts cannot be iterated, or a card
            entry's id cannot be a dict key.
    """
    if cards.error is not None:
        return False
    changed = False
    if cards.neko is not None:
        changed |= sync_section(persona, "neko", cards.neko, run)
    if isinstance(cards.master, Unknown) or (isinstance(cards.master, dict) and cards.master):
        changed |= sync_section(persona, "master", cards.master, run)
    return changed


def sync_section(persona: dict[str, Any], entity: str, card: dict[str, Any] | Unknown, run: EnsureRun) -> bool:
    """Fact 5 for one section (``persistence.py:406-471``): texts that differ replaced (caches
    nulled, :data:`CACHE_FIELDS`), missing ids created (fact 6, protected), and only on a change
    ``facts`` becomes the card entries in card order followed by every other entry. A card holding
    an :class:`Unknown` is checked for what raises whatever its content, and changes nothing here.

    Raises:
        EnsureRaises: the section is not a dict (``AttributeError``), its facts cannot be iterated,
            or a card entry's id cannot be a dict key (``TypeError``).
    """
    section = ensure_section(persona, entity, run)
    unknown = card if isinstance(card, Unknown) else next((v for v in card.values() if isinstance(v, Unknown)), None)
    try:
        expected = expected_card_entries(card, entity) if not isinstance(card, Unknown) and unknown is None else []
        items = _iterate(section["facts"])
        indexed: dict[Any, dict[str, Any]] = {}
        others: list[Any] = []
        for entry in items:
            if isinstance(entry, dict) and entry.get("source") == "character_card":
                indexed[entry.get("id", "")] = entry
            else:
                others.append(entry)
    except (TypeError, UnicodeEncodeError) as exc:
        raise EnsureRaises(f"the card sync of {entity!r} raises ({type(exc).__name__}: {exc})") from exc
    if unknown is not None:
        run.unknown(f"{unknown.what}: the {entity} card sync may change {entity}.facts")
        return False
    modified = False
    cards: list[dict[str, Any]] = []
    for eid, text in expected:
        entry = indexed.get(eid)
        if entry is None:
            entry = new_entry(text, eid, "character_card", protected=True)
            modified = True
            run.changes.append(f"{entity}.facts[{eid}] card entry added")
        elif entry.get("text") != text:
            entry["text"] = text
            for key in CACHE_FIELDS:
                entry[key] = None
            modified = True
            run.changes.append(f"{entity}.facts[{eid}] text changed (token and embedding caches cleared)")
        cards.append(entry)
    wanted = {eid for eid, _ in expected}
    for rid in indexed:
        if rid not in wanted:
            modified = True
            run.changes.append(f"{entity}.facts[{_ref(rid)}] card entry removed (not on the card)")
    if not modified:
        return False
    after = [*cards, *others]
    dropped = sum(1 for e in items if isinstance(e, dict) and e.get("source") == "character_card") - len(indexed)
    if dropped:
        run.changes.append(
            f"{entity}.facts: {dropped} earlier duplicate card entr{'ies' if dropped > 1 else 'y'} dropped"
        )
    kept_before = {id(e) for e in items}
    kept_after = {id(e) for e in after}
    if [i for i in map(id, items) if i in kept_after] != [i for i in map(id, after) if i in kept_before]:
        run.changes.append(f"{entity}.facts: card entries put first, in card order")
    section["facts"] = after
    return True


def _ref(entry_id: Any) -> str:
    return entry_id if isinstance(entry_id, str) and entry_id else repr(entry_id)


# -- fact 8: saving ---------------------------------------------------------------------------------


def saved_bytes(persona: dict[str, Any]) -> bytes:
    """Fact 8 (``persistence.py:556-573``, ``utils/file_utils.py:650-724``): ``json.dumps(persona,
    ensure_ascii=False, indent=2)`` in UTF-8, no trailing newline (:func:`journal.codec.dumps_view`
    is exactly that). On POSIX: the temp file's text mode writes ``\\r\\n`` on Windows.

    Raises:
        EnsureRaises: the save fails (a text UTF-8 cannot encode, nesting too deep): the cache
            entry is dropped and ensure raises (``:571-573``); the file is kept.
    """
    try:
        return dumps_view(persona)
    except (ValueError, TypeError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
        raise EnsureRaises(f"its save fails ({type(exc).__name__}: {exc})") from exc


# -- the composition --------------------------------------------------------------------------------


def predict_persona_ensure(persona: FileInput, name: str, cards: Cards, settings: FileInput) -> PersonaEnsurePrediction:
    """What the server's first ``aensure_persona(name)`` of a start does (§9.9 facts 1-8 in order).

    Args:
        persona: ``persona.json`` as read (:func:`read_input`).
        name: the character (its folder's name).
        cards: what ``aget_character_data()`` gives (:func:`cards_from`).
        settings: the settings file the fill reads (:func:`settings_input`).
    """
    read = read_persona(persona)
    if read.kind == "unknown":
        return PersonaEnsurePrediction("unknown", f"{read.reason}: what persona ensure does is not known")
    if read.kind == "raises":
        return _raises(read.reason, None, True, EnsureRun())
    run = EnsureRun()
    try:
        if read.kind == "dict":
            assert read.value is not None
            obj = read.value
            renamed = migrate_v1_keys(obj)
            run.changes.extend(renamed)
            changed = bool(renamed)
            if is_empty(obj):
                run.changes.append("the persona is empty: settings fill (always saved)")
                settings_fill(obj, name, cards, settings, run)
                changed = True
            changed |= card_sync(obj, name, cards, run)
            action = "rewrite" if changed else "keep"
        else:
            obj = {}
            settings_fill(obj, name, cards, settings, run)
            card_sync(obj, name, cards, run)
            action = "create" if persona.state == "missing" else "replace"
        if run.blocked is not None:
            return PersonaEnsurePrediction(
                "unknown", f"persona ensure's read blocks or is not predicted: the {run.blocked}",
                missing_inputs=tuple(run.missing),
            )  # fmt: skip
        if action == "keep":
            return PersonaEnsurePrediction(
                "keep",
                "persona.json is readable and persona ensure changes nothing: nothing is written"
                + (" (unless what it could not know changes it: it may rewrite)" if run.inexact else ""),
                persona_after=_file_dict(persona),
                missing_inputs=tuple(run.missing),
                may_rewrite=run.inexact,
            )
        data = saved_bytes(obj)
        if persona.state == "folder":
            raise EnsureRaises("its save fails: os.replace onto a folder (IsADirectoryError)")
    except EnsureRaises as exc:
        return _raises(
            str(exc),
            _file_dict(persona) if read.kind == "dict" else ({} if persona.state == "missing" else None),
            read.handlers_raise,
            run,
        )
    messages = {
        "rewrite": "persona ensure rewrites persona.json before replay, in the server's formatting",
        "create": "no persona.json: persona ensure creates one (settings fill, then the character card)",
        "replace": f"persona.json is unusable ({read.reason}): persona ensure silently replaces it with a fresh "
        "persona (settings fill, then the character card) before replay; its previous content is lost",
    }
    return PersonaEnsurePrediction(
        action,
        messages[action] + (" (what it writes needs inputs not known here)" if run.inexact else ""),
        persona_after=obj,
        bytes_after=None if run.inexact else data,
        changes=tuple(run.changes),
        missing_inputs=tuple(run.missing),
    )


def _raises(reason: str, after: dict[str, Any] | None, handlers_raise: bool, run: EnsureRun) -> PersonaEnsurePrediction:
    message = f"persona ensure raises ({reason}) and leaves persona.json as it is"
    if handlers_raise:
        message += "; every persona handler raises on the same read, so replay stops at the first persona event"
    return PersonaEnsurePrediction(
        "raises",
        message,
        persona_after=None if handlers_raise else after,
        handlers_raise=handlers_raise,
        missing_inputs=tuple(run.missing),
        error=reason,
    )


def persona_ensure_at(
    char_dir: str | os.PathLike[str], name: str, characters: CharacterList, *, refused: str | None = None
) -> PersonaEnsurePrediction:
    """:func:`predict_persona_ensure` for one character folder: reads ``persona.json`` (``refused``:
    why it is not to be read, e.g. a link leading out of the folder), the settings file and the
    cards from ``characters``."""
    persona = read_input(Path(char_dir) / PERSONA, refused=refused)
    return predict_persona_ensure(persona, name, cards_from(characters, name), settings_input(char_dir, name))


# -- reading ----------------------------------------------------------------------------------------


def read_input(path: str | os.PathLike[str], *, refused: str | None = None) -> FileInput:
    """Read one input as the server's ``open`` meets it (links followed), without blocking:
    a FIFO, socket or device is ``special`` and not opened; ``refused`` is not read at all."""
    p = os.fspath(path)
    if refused is not None:
        return FileInput("refused", detail=refused, path=p)
    try:
        with fs.open_regular(p) as fh:
            data = fh.read()
    except FileNotFoundError:
        return FileInput("missing", path=p)
    except IsADirectoryError:
        return FileInput("folder", detail="a folder", path=p)
    except fs.NotRegularFileError as exc:
        return FileInput("special", detail=exc.strerror or str(exc), path=p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # os.path.exists is False for a link loop: the server creates
            return FileInput("missing", detail="a symbolic link loop", path=p)
        return FileInput("error", detail=exc.strerror or str(exc), path=p)
    return FileInput("bytes", data, path=p)


def _file_dict(persona: FileInput) -> dict[str, Any] | None:
    """What the handlers read from the file as it is: a fresh parse of its dict, ``{}`` when missing."""
    if persona.state == "missing":
        return {}
    if persona.state != "bytes":
        return None
    try:
        value = loads_exact(persona.data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _iterate(value: Any) -> list[Any]:
    """What ``for item in value`` yields for a JSON value (a string's characters, a dict's keys).

    Raises:
        TypeError: a number, boolean or null, as Python does.
    """
    if isinstance(value, (list, str, dict)):
        return list(value)
    raise TypeError(f"{type(value).__name__!r} object is not iterable")


def _inside(root_real: str, path_real: str) -> bool:
    try:
        return os.path.commonpath([root_real, path_real]) == root_real
    except ValueError:  # another drive
        return False
