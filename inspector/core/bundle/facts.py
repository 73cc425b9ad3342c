"""The manifest's ``facts``: what the original's diagnosis used that the bundle cannot hold (the
server's ``characters.json``, refused and unreadable input, persona ensure's decision), in the
format :mod:`journal.recorded` defines and the bundle's own diagnosis reads back, so
that its verdicts are the original's."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from inspector.core.bundle import rules as R
from inspector.core.bundle.members import inner_links
from inspector.core.bundle.redact import BundleRedactor
from journal.diagnosis import CharacterDiagnosis, Diagnosis
from journal.events import JOURNAL_NAME
from journal.recorded import (
    FACTS_SCHEMA,
    characters_json,
    ensure_json,
    refusal_kind,
)
from journal.serverpersona import SETTINGS_NAME
from journal.serverrules import CharacterList, read_characters
from journal.views import PERSONA


def characters_read(diag: Diagnosis) -> CharacterList:
    """``characters.json`` as the diagnosis of ``diag`` read it (:attr:`Diagnosis.characters_file`:
    ``--characters``, or the one :func:`journal.inputs.resolve` found beside the memory root)."""
    return CharacterList() if diag.characters_file is None else read_characters(diag.characters_file)


def _jsonable(obj: Any) -> Any:
    """A JSON value: what is not one (a value persona ensure cannot know) becomes ``None``."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_jsonable(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return None


def character_facts(
    c: CharacterDiagnosis,
    zip_level: set[tuple[str, str]],
    member_sha: Mapping[str, str],
    member_name: Callable[[str], str | None],
    redactor: BundleRedactor | None,
    scrub: Callable[[str], str],
    unreadable: Mapping[str, str],
) -> dict[str, Any]:
    """The facts of one character (see :mod:`journal.recorded`).

    Args:
        c: its diagnosis.
        zip_level: ``(code, message)`` of the input's own findings (refused zip members), which
            every character carries: recorded once, not here.
        member_sha: SHA-256 by member name inside its folder, of what was written.
        member_name: a file's name inside the folder in the bundle (``None``: it has none).
        redactor: the character's redactor (``None``: not redacted).
        scrub: applied to every message recorded.
        unreadable: by member name, why a file could not be read, which the bundle leaves out for
            that: recorded where the diagnosis found it unreadable too (the journal, a view, a shard).
    """
    out: dict[str, Any] = {}
    refused = []
    for f in c.findings:
        if f.code != "input.refused" or f.file is None or (f.code, f.message) in zip_level:
            continue
        kind = refusal_kind(Path(c.path) / f.file)
        name = member_name(f.file)
        if kind is None or name is None:
            continue
        finding = {"code": f.code, "severity": f.severity}
        refused.append({"what": name, "kind": kind, "reason": scrub(f.message), "finding": finding})
    for link, target in inner_links(Path(c.path)):  # followed by the diagnosis, not held as links
        name, to = member_name(link), member_name(target)
        if name is not None and to is not None and to in member_sha:
            refused.append({"what": name, "kind": "link_to", "target": to, "reason": "a link to a file of the folder"})
    if os.path.islink(c.path):  # the folder itself: refused as a link (its bundle folder is empty)
        f = next((f for f in c.findings if f.code == "input.refused" and f.file is None), None)
        if f is not None:
            kind = "link_inside" if f.severity == "info" else "link"
            finding = {"code": f.code, "severity": f.severity}
            refused.append({"what": ".", "kind": kind, "reason": scrub(f.message), "finding": finding})
    if refused:
        out["refused"] = refused
    gone = []
    for what, why in sorted(unreadable.items()):
        code = "journal.absent" if what == JOURNAL_NAME else "shard.corrupt" if "/" in what else "view.corrupt"
        if what == JOURNAL_NAME and not (c.journal.present and c.journal.unreadable is not None):
            continue
        found = next((f for f in c.findings if f.code == code and f.file == what), None)
        if found is None:  # the diagnosis read it: it is not recorded as unreadable
            continue
        gone.append({"what": what, "reason": why, "finding": {"code": found.code, "severity": found.severity}})
    if gone:
        out["unreadable"] = gone
    s = c.server_start
    ensure = None if s is None else s.persona_ensure
    if ensure is not None:
        after: Any = _jsonable(ensure.persona_after)
        if redactor is not None and after is not None:
            after = redactor.value(after, R.KINDS["view"])
        inputs = {name: member_sha.get(name) for name in (PERSONA, SETTINGS_NAME)}
        rec = ensure_json(ensure, after, inputs)
        rec["message"] = scrub(rec["message"])
        rec["changes"] = [scrub(x) for x in rec["changes"]]
        rec["missing_inputs"] = [scrub(x) for x in rec["missing_inputs"]]
        rec["error"] = None if rec["error"] is None else scrub(rec["error"])
        out["persona_ensure"] = rec
    return out


def bundle_facts(
    diag: Diagnosis,
    folder_of: Mapping[str, str],
    per_character: Mapping[str, dict[str, Any]],
    scrub: Callable[[str], str],
    file_name: Callable[[str], str],
) -> dict[str, Any]:
    """The manifest's ``facts``: ``folder_of`` maps each character's name to its folder in the
    bundle, ``per_character`` holds :func:`character_facts` by folder, ``file_name`` gives a zip
    member's name as the bundle may show it."""
    listed = characters_read(diag)
    cj = characters_json(listed, folder_of)
    if cj is not None and cj["error"] is not None:
        cj["error"] = scrub(cj["error"])
    return {
        "schema": FACTS_SCHEMA,
        "characters_json": cj,
        "input_findings": [
            {
                "code": f.code,
                "severity": f.severity,
                "message": scrub(f.message),
                "file": None if f.file is None else file_name(f.file),
            }
            for f in diag.findings
        ],
        "characters": dict(per_character),
    }


def zip_level_findings(diag: Diagnosis) -> set[tuple[str, str]]:
    return {(f.code, f.message) for f in diag.findings}


__all__ = ["bundle_facts", "character_facts", "characters_read", "zip_level_findings"]
