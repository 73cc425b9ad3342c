"""Facts a support bundle's manifest records about its original, and how the diagnosis of the
bundle reads them back (issue 25, the bundle section).

A bundle leaves out what it cannot ship (the server's ``characters.json``, which holds card text)
or cannot hold (a FIFO, a link leading out of the folder, a file its sender could not read). What
the original's diagnosis used from those is written under the manifest's ``facts`` key, and the
diagnosis of the bundle (a zip whose top holds that manifest) reads it back:

- ``characters_json``: which characters it lists (by their folders in the bundle), whether the
  server falls back to its defaults, and why: the bundle's :class:`CharacterList`;
- ``input_findings``: the original's refused zip members, as its findings;
- per character folder, ``refused``: inputs the original refused (a FIFO, a link leading out),
  re-made in the bundle's private copy as what they were (a FIFO, a link leading out of it), so
  that the one diagnosis refuses them again with the same consequences; and links the bundle
  does not hold as links although the original followed them (one to a file of the same folder,
  ``link_to``), re-made to that file's member;
- ``unreadable``: inputs the original could not read (the journal, a view), read again as
  unreadable;
- ``persona_ensure``: the original's persona-ensure decision (the cards it rests on are not in the
  bundle), with the SHA-256 of the bundle's ``persona.json`` and ``settings.json`` it holds for:
  taken only while the bundle's files are those.

This module is the one home of that format: the bundle writer builds it with :func:`facts_json`
pieces and the diagnosis reads it with :func:`read_recorded`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal import fs
from journal.codec import loads_exact
from journal.finding import Finding
from journal.serverpersona import SETTINGS_NAME, PersonaEnsurePrediction
from journal.serverrules import CharacterList
from journal.views import PERSONA

#: The bundle's manifest, at its top, and the key of the facts in it.
MANIFEST_NAME = "manifest.json"
FACTS_KEY = "facts"
FACTS_SCHEMA = 1

#: Where a re-made link leading out of the bundle's copy points (never followed: it is refused).
_OUTSIDE = "memory-inspector-bundle-refused-link"

#: The kinds of refused input re-made: a link leading out, a FIFO (or other special file), and a
#: character folder that is a link to another folder of the memory root.
_KINDS = ("link", "special", "link_inside", "link_to")

#: What the bundle's ``characters_file`` is called, where the original named its path.
RECORDED_CHARACTERS = "characters.json (as the bundle's manifest records it)"


@dataclass(slots=True)
class RecordedCharacter:
    """What the diagnosis of one character folder of a bundle takes from the manifest.

    Attributes:
        unreadable: relative name → why the original's diagnosis could not read it.
        ensure: the recorded persona-ensure decision (its JSON), or ``None``.
    """

    unreadable: dict[str, str] = field(default_factory=dict)
    ensure: dict[str, Any] | None = None


@dataclass(slots=True)
class Recorded:
    """The facts of one bundle's manifest (see the module docstring).

    Attributes:
        characters: the bundle's ``characters.json`` as its original's diagnosis read it
            (``None``: none was found).
        findings: the original's refused zip members.
        refused: per character folder, ``(relative name, kind, target)`` with kind ``link``,
            ``special``, ``link_inside`` (``.``: the folder itself) or ``link_to`` (``target``: the
            file of the folder it leads to, relative to the folder; else empty).
        folders: per character folder, what its diagnosis takes (:class:`RecordedCharacter`).
    """

    characters: CharacterList | None = None
    findings: list[Finding] = field(default_factory=list)
    refused: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    folders: dict[str, RecordedCharacter] = field(default_factory=dict)


# -- writing (the bundle writer) ---------------------------------------------------------------------


def characters_json(listed: CharacterList, folder_of: Mapping[str, str]) -> dict[str, Any] | None:
    """The ``characters_json`` fact: ``folder_of`` maps each character's name to its folder in the
    bundle; names the file lists that are not in the bundle are not recorded (they hold text, and
    only the bundle's characters are diagnosed)."""
    if listed.path is None:
        return None
    names = None if listed.names is None else sorted(folder_of[n] for n in listed.names if n in folder_of)
    return {"names": names, "defaults": listed.defaults, "error": listed.error}


def ensure_json(
    ensure: PersonaEnsurePrediction, persona_after: Any, inputs: Mapping[str, str | None]
) -> dict[str, Any]:
    """The ``persona_ensure`` fact of one character: ``persona_after`` as the bundle redacts it,
    ``inputs`` the SHA-256 of the bundle's ``persona.json`` and ``settings.json`` (``None``: not in
    it)."""
    return {
        "inputs": dict(inputs),
        "action": ensure.action,
        "message": ensure.message,
        "persona_after": persona_after,
        "handlers_raise": ensure.handlers_raise,
        "changes": list(ensure.changes),
        "missing_inputs": list(ensure.missing_inputs),
        "may_rewrite": ensure.may_rewrite,
        "error": ensure.error,
    }


def refusal_kind(path: str | os.PathLike[str]) -> str | None:
    """``link`` or ``special`` for an input the diagnosis refuses, as it is on disk (``None``: it is
    neither, or gone)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return "link"
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return "special"
    return None


def finding_json(f: Finding) -> dict[str, Any]:
    return {"code": f.code, "severity": f.severity, "message": f.message, "file": f.file}


# -- reading (the diagnosis of a bundle) -------------------------------------------------------------


def read_recorded(root: str | os.PathLike[str]) -> Recorded | None:
    """The facts of the bundle extracted at ``root`` (``None``: not a bundle, or one without facts).
    Never raises on content: facts that do not have their shape are not taken."""
    try:
        with fs.open_regular(Path(root) / MANIFEST_NAME) as fh:
            doc = loads_exact(fh.read(64 << 20))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("tool") != "memory-inspector":
        return None
    facts = doc.get(FACTS_KEY)
    if not isinstance(facts, dict) or facts.get("schema") != FACTS_SCHEMA:
        return None
    rec = Recorded()
    cj = facts.get("characters_json")
    if isinstance(cj, dict):
        names = cj.get("names")
        rec.characters = CharacterList(
            RECORDED_CHARACTERS,
            None if not isinstance(names, list) else frozenset(n for n in names if isinstance(n, str)),
            cj.get("error") if isinstance(cj.get("error"), str) else None,
            defaults=cj.get("defaults") is True,
        )
    for f in _list(facts.get("input_findings")):
        if isinstance(f, dict) and all(isinstance(f.get(k), str) for k in ("code", "severity", "message")):
            file = f.get("file") if isinstance(f.get("file"), str) else None
            rec.findings.append(Finding(f["code"], f["severity"], f["message"], file=file))
    per = facts.get("characters")
    for folder, got in (per.items() if isinstance(per, dict) else ()):
        if not isinstance(got, dict) or not _plain_name(folder):
            continue
        for r in _list(got.get("refused")):
            if isinstance(r, dict) and isinstance(r.get("what"), str) and r.get("kind") in _KINDS:
                to = r.get("target")
                rec.refused.setdefault(folder, []).append((r["what"], r["kind"], to if isinstance(to, str) else ""))
        one = rec.folders[folder] = RecordedCharacter()
        for u in _list(got.get("unreadable")):
            if isinstance(u, dict) and isinstance(u.get("what"), str) and isinstance(u.get("reason"), str):
                one.unreadable[u["what"]] = u["reason"]
        ensure = got.get("persona_ensure")
        if isinstance(ensure, dict) and isinstance(ensure.get("action"), str):
            one.ensure = ensure
    return rec


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\x00" not in name


def remake_refused(rec: Recorded, base: Path) -> None:
    """Re-make each refused input in the bundle's private copy at ``base`` (a memory root): a FIFO
    as a FIFO, a link as a link leading out of the copy. Only where nothing is (a member of that
    name wins), and only inside ``base``; where the system cannot make one, nothing is made."""
    base_real = os.path.realpath(base)
    outside = os.path.join(os.path.dirname(base_real), _OUTSIDE)
    for folder, items in rec.refused.items():
        for what, kind, to in items:
            if what == ".":  # the character folder itself, a link: its bundle folder is empty
                _remake_folder_link(base / folder, kind, os.path.dirname(base_real))
                continue
            parts = [p for p in what.split("/") if p]
            if not parts or any(p in (".", "..") for p in parts):
                continue
            target = base.joinpath(folder, *parts)
            if not fs.is_inside(target.parent, base_real):
                continue
            with contextlib.suppress(OSError, AttributeError, NotImplementedError):
                target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                if kind == "special":
                    os.mkfifo(target, 0o600)
                elif kind == "link_to":
                    dest = base.joinpath(folder, *[p for p in to.split("/") if p])
                    if ".." not in to.split("/") and fs.is_inside(dest, base / folder) and dest.is_file():
                        os.symlink(os.path.relpath(dest, target.parent), target)
                else:
                    os.symlink(outside, target)


def _remake_folder_link(target: Path, kind: str, outside: str) -> None:
    """A character folder that was a link, re-made in place of its empty bundle folder: one to a
    folder outside the copy (``link``; an existing folder, as a link to a folder is listed), or to
    the copy's memory root itself (``link_inside``: another folder of the memory root)."""
    with contextlib.suppress(OSError, NotImplementedError):
        if not target.is_dir() or target.is_symlink() or any(target.iterdir()):
            return
        target.rmdir()
        os.symlink(outside if kind == "link" else ".", target, target_is_directory=True)


def recorded_ensure(char_dir: Path, recorded: RecordedCharacter | None) -> PersonaEnsurePrediction | None:
    """The recorded persona-ensure decision, when the folder's ``persona.json`` and
    ``settings.json`` are still the files it holds for (``None``: none, or they differ)."""
    record = None if recorded is None else recorded.ensure
    if record is None:
        return None
    inputs = record.get("inputs")
    if not isinstance(inputs, dict):
        return None
    for name in (PERSONA, SETTINGS_NAME):
        if inputs.get(name) != file_sha256(char_dir / name):
            return None
    after = record.get("persona_after")
    return PersonaEnsurePrediction(
        str(record["action"]),
        str(record.get("message") or ""),
        persona_after=after if isinstance(after, dict) else None,
        handlers_raise=record.get("handlers_raise") is True,
        changes=tuple(str(x) for x in _list(record.get("changes"))),
        missing_inputs=tuple(str(x) for x in _list(record.get("missing_inputs"))),
        may_rewrite=record.get("may_rewrite") is True,
        error=record.get("error") if isinstance(record.get("error"), str) else None,
    )


def file_sha256(path: Path) -> str | None:
    """The SHA-256 of a regular file's bytes (``None``: not one, or not readable)."""
    try:
        with fs.open_regular(path) as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


__all__ = [
    "FACTS_KEY",
    "FACTS_SCHEMA",
    "MANIFEST_NAME",
    "RECORDED_CHARACTERS",
    "Recorded",
    "RecordedCharacter",
    "characters_json",
    "ensure_json",
    "file_sha256",
    "finding_json",
    "read_recorded",
    "recorded_ensure",
    "refusal_kind",
    "remake_refused",
]
