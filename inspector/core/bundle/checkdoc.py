"""``check.json`` and ``check.txt`` of a support bundle: the diagnosis of the original folder.

Both are what ``check`` prints (schema 1, and the human report), with every path cut to the
input's base name (a path can hold a user name), and, when the bundle is redacted, the same
redaction as the members: damaged-line previews replaced, undeclared event types and ids built from
a text hash keyed exactly as in the bundle's journal, so the two can be read side by side.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from inspector.core import output
from inspector.core.bundle import rules as R
from inspector.core.bundle.manifest import input_name
from inspector.core.bundle.redact import BundleRedactor, not_id_shaped

# The one home of check's human report (a command module, but Qt-free and IO-free here).
from inspector.core.check_report import write_human
from inspector.core.redaction import DIGEST_IN_TEXT, PREVIEW_IN_TEXT, damaged_token
from journal import layout
from journal.diagnosis import Diagnosis
from journal.events import ALL_EVENT_TYPES


def _prefixes(path: str, diag: Diagnosis) -> list[tuple[str, str]]:
    """``(prefix, replacement)`` pairs, longest first: the input's parent folder (so the input
    shows as its base name), a zip's private copy, and the home folder."""
    out: dict[str, str] = {}
    for p in (os.path.abspath(path), os.path.realpath(path)):
        parent = os.path.dirname(p.rstrip(os.sep)) or os.sep
        out[parent.rstrip(os.sep) + os.sep] = ""
    if diag.is_zip:
        for p in (diag.root, os.path.realpath(diag.root)):
            out[p.rstrip(os.sep) + os.sep] = os.path.basename(path.rstrip(os.sep)) + "!/"
            out[p.rstrip(os.sep)] = os.path.basename(path.rstrip(os.sep)) + "!"
    home = os.path.expanduser("~")
    if home not in ("", os.sep, "~"):
        out[home.rstrip(os.sep)] = "~"
    return sorted(out.items(), key=lambda kv: -len(kv[0]))


def _names(
    diag: Diagnosis, redactor: BundleRedactor, folders: Mapping[str, str]
) -> tuple[re.Pattern[str], dict[str, str]] | None:
    """One pattern of every name the bundle keys that the documents may quote: character names
    (→ their folders), file names the format notes do not define, and ids a bundle tokenizes (with
    whitespace): longest first, each bounded by what cannot be part of a name."""
    table: dict[str, str] = {n: f for n, f in folders.items() if n != f}
    for c in diag.characters:
        for rel in _listing(c.path):
            for part in rel.split("/"):
                keyed = redactor.file_name(part)
                if keyed != part:
                    table[part] = keyed
        listed = getattr(c.events, "event_ids", None)
        ids = listed() if callable(listed) else [e.event_id for e in c.events]
        more = [e for e in (c.sentinel.event_id, *(d.recovered_event_id for d in c.defects)) if isinstance(e, str)]
        for eid in not_id_shaped([*ids, *more]):  # only these are tokenized (R.ID)
            got = redactor.string(eid, R.ID)
            if got != eid:
                table[eid] = got
    if not table:
        return None
    alternatives = "|".join(re.escape(n) for n in sorted(table, key=len, reverse=True))
    return re.compile(rf"(?<![\w.\-])(?:{alternatives})(?![\w\-])"), table


def _listing(folder: str) -> list[str]:
    """Names in a character folder and its shard folders (links not followed; nothing opened)."""
    out: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for e in entries:
        out.append(e.name)
        if e.name in layout.ARCHIVE_FOLDERS and e.is_dir(follow_symlinks=False):
            try:
                out += [f"{e.name}/{x.name}" for x in os.scandir(e.path)]
            except OSError:
                pass
    return out


def make_scrub(
    path: str, diag: Diagnosis, redactor: BundleRedactor | None, folders: Mapping[str, str] | None = None
) -> Callable[[str], str]:
    """The function applied to every string of the two documents (see the module docstring);
    ``folders``: each character's folder in the bundle by its name (a redacted bundle's)."""
    prefixes = _prefixes(path, diag)
    odd_types: list[str] = []
    found = None if redactor is None else _names(diag, redactor, folders or {})
    names, table = (None, {}) if found is None else found
    if redactor is not None:
        seen: set[str] = set()
        for c in diag.characters:
            types = getattr(c.events, "types", None)
            for t in types() if callable(types) else (e.type for e in c.events):
                if t not in ALL_EVENT_TYPES and t not in seen:
                    seen.add(t)
                    odd_types.append(t)
        odd_types.sort(key=len, reverse=True)

    def scrub(text: str) -> str:
        for prefix, repl in prefixes:
            if prefix in text:
                text = text.replace(prefix, repl)
        if redactor is None:
            return text
        if "not valid JSON: " in text or "unterminated last line: " in text:
            text = PREVIEW_IN_TEXT.sub(lambda m: f"{m.group(1)}: '{damaged_token('preview', len(m.group(2)))}'", text)
        for t in odd_types:
            if t and (t == text or (len(t) >= 4 and t in text)):
                text = text.replace(t, redactor.string(t, "type"))
        if len(text) >= 64:
            text = DIGEST_IN_TEXT.sub(lambda m: redactor.string(m.group(0), "digest"), text)
        if names is not None:
            text = names.sub(lambda m: table[m.group(0)], text)
        return redactor.base.keyed_ids(text)

    return scrub


def _walk(obj: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(obj, str):
        return scrub(obj)
    if isinstance(obj, dict):
        return {k: _walk(v, scrub) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_walk(v, scrub) for v in obj]
    return obj


def check_documents(
    diag: Diagnosis, path: str, redactor: BundleRedactor | None, folders: Mapping[str, str] | None = None
) -> tuple[bytes, bytes]:
    """``(check.json, check.txt)`` of the diagnosis of the original ``path``.

    ``redactor`` should know the entry texts of every character (its ``digests``): the digests the
    messages name are then those the bundle's own diagnosis names.

    ``diag.path`` is set to what the bundle calls its input (:func:`manifest.input_name`).
    """
    diag.path = input_name(path, None if redactor is None else redactor.base, folders)
    scrub = make_scrub(path, diag, redactor, folders)
    doc = _walk(diag.to_json(), scrub)
    json_bytes = output.dumps(doc)  # check's own JSON contract
    out = io.StringIO()
    write_human(diag, out)
    text = "\n".join(scrub(line) for line in out.getvalue().split("\n"))
    return json_bytes, text.encode("utf-8", "backslashreplace")


__all__ = ["check_documents", "make_scrub"]
