"""Shared pieces of the support-bundle tests: the inputs, the verdict of a diagnosis, and the
strings a bundle must not hold."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from inspector.core.bundle import rules as R
from inspector.core.bundle.redact import BundleRedactor
from inspector.core.redaction import Redactor
from journal import fixtures, layout
from journal.codec import loads_exact
from journal.diagnosis import diagnose_path
from journal.fixtures import FIXTURE_NOW
from journal.inputs import is_character_folder
from journal.runtime import LauncherLock
from tests.inspector.replay_cases import FOLDER_CASES, build_case

SECRET = b"test secret, 32 bytes long......"
SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample"
FREE = LauncherLock("free", "/nonexistent/launcher.lock", "no server", "missing")

#: Every input the bundle is tested on: (id, builder(tmp) -> PATH).
INPUTS: list[tuple[str, Any]] = [
    *[(f"fixture-{name}", lambda tmp, n=name: fixtures.CASES[n](tmp / "root").path) for name in fixtures.CASES],
    *[(f"replay-{case}", lambda tmp, c=case: build_case(tmp / "root", c)) for case in FOLDER_CASES],
    ("sample", lambda tmp: shutil.copytree(SAMPLE, tmp / "sample")),
]


@pytest.fixture
def secret() -> bytes:
    return SECRET


def diagnose(path: Path) -> Any:
    return diagnose_path(path, server=FREE, now=FIXTURE_NOW)


class AsBundled:
    """How a bundle under ``secret`` shows the original's names, files and ids (the identity when
    ``secret`` is ``None``): what the verdict of the original is mapped through."""

    def __init__(self, secret: bytes | None = None) -> None:
        self.r = None if secret is None else BundleRedactor(Redactor(secret))

    def entry(self, s: Any) -> Any:
        return s if self.r is None or not isinstance(s, str) else self.r.base.keyed_ids(s)

    def event(self, s: Any) -> Any:
        return s if self.r is None or not isinstance(s, str) or not s else self.r.string(s, R.ID)

    def file(self, s: str) -> str:
        if self.r is None:
            return s
        return self.r.base.keyed_ids("/".join(self.r.file_name(p) for p in s.split("/")))


def verdict(diag: Any, as_bundled: AsBundled | None = None) -> list[dict[str, Any]]:
    """What must be equal between an input and its bundle: codes, severities, event states and
    reasons, counts, line numbers, event ids and the server's start (``as_bundled``: how the
    bundle shows the original's ids and file names)."""
    m = as_bundled if as_bundled is not None else AsBundled()
    out = []
    for c in diag.characters:
        server = c.server_start
        out.append(
            {
                "name": c.name,
                "counts": c.counts(),
                "lines": c.journal.lines,
                "events_n": c.journal.events,
                "sentinel": (c.sentinel.state, m.event(c.sentinel.event_id), c.sentinel.index),
                "blocked": None
                if c.blocked is None
                else (m.event(c.blocked.event_id), c.blocked.index, c.blocked.reason),
                "events": [
                    (e["index"], e["line"], m.event(e["event_id"]), e["state"], e["reason"])
                    for e in c.listed_json(True)
                ],
                "defects": [(d.line, d.kind, m.event(d.recovered_event_id)) for d in c.defects],
                "findings": sorted(
                    (f.code, f.severity, m.event(f.event_id), m.file(f.file or ""), f.line or 0) for f in c.findings
                ),
                "server": None
                if server is None
                else (
                    server.reconciled,
                    server.sentinel.state,
                    server.persona[0],
                    server.replays,
                    server.applied,
                    None if server.stop is None else (server.stop.index, server.stop.line, server.stop.reason),
                    tuple(server.passed),
                    server.unapplied,
                    server.outbox,
                    server.changes_total,
                    sorted((m.entry(ch.entry), ch.removed, ch.added) for ch in server.changes),
                    tuple(place for _path, place in server.stray),
                ),
            }
        )
    return out


def secrets_of(path: Path) -> set[str]:
    """Every string of 4+ characters under a key that is not on the kept list, from views, shards,
    sidecars and journal payloads (outbox and park records included); and every name of 4+
    characters that is text: dict keys the format notes do not define, file and folder names they
    do not define (character folders included), and ids with whitespace.

    A string that is also part of a value kept as structure in the same folder (the text
    ``legacy`` of a fixture whose fact id is ``fact_legacy``) is left out: it is in the bundle as
    that structure, not as text."""
    found: set[str] = set()
    kept: set[str] = set()

    def walk(obj: Any, rules: Any, rule: str | None) -> None:
        if isinstance(obj, str):
            text = rule is None or (rule == R.ID and any(c.isspace() for c in obj))
            name = rule == R.NAME and not R.is_structure_key(obj)
            if (text or name) and len(obj) >= 4:
                found.add(obj)
            elif rule is not None:
                kept.add(obj)
        elif isinstance(obj, dict):
            for k, v in obj.items():
                if not R.is_structure_key(k) and len(k) >= 4:
                    found.add(k)
                walk(v, rules, R.rule_for(rules, k))
        elif isinstance(obj, list):
            for v in obj:
                walk(v, rules, rule)

    def load(data: bytes) -> Any:
        try:
            return loads_exact(data)
        except ValueError:
            return None

    one = is_character_folder(path)
    if one and not layout.is_format_file_name(path.name) and len(path.name) >= 4:
        found.add(path.name)  # the character's name
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path).parts
        for part in (*(() if one else rel[:1]), p.name):  # a root's character folders, each file's name
            if not layout.is_format_file_name(part) and len(part) >= 4 and part not in ("screenshot.png",):
                found.add(part)
        if not p.is_file() or p.is_symlink():
            continue
        name = p.name
        if name in layout.NDJSON_FILES:
            kind = R.KINDS[layout.NDJSON_FILES[name]]
            for line in p.read_bytes().split(b"\n"):
                walk(load(line), kind, None)
        elif p.suffix == ".json" or name == layout.MIGRATION_MARKER:
            in_shards = p.parent.name in layout.ARCHIVE_FOLDERS
            kind = R.KINDS[layout.JSON_FILES.get(name, "view" if in_shards else "generic")]
            walk(load(p.read_bytes()), kind, None)
    structure = "\x00".join(kept)
    return {s for s in found if s not in structure}


def forms(s: str) -> list[bytes]:
    """The ways a string can be written in a member: UTF-8, JSON-escaped, UTF-16."""
    out = [s.encode("utf-8", "surrogatepass"), json.dumps(s)[1:-1].encode("ascii")]
    for enc in ("utf-16-le", "utf-16-be"):
        out.append(s.encode(enc, "surrogatepass"))
    return out


def members(zip_path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(zip_path) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}



def manifest_of(zip_path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(zip_path) as zf:
        return json.loads(zf.read("manifest.json"))


def bundled_folder(name: str, folders: list[str], secret: bytes) -> str:
    """The folder the manifest lists for the original's character ``name``: its name itself (not
    redacted), or ``character-<8 hex>`` keyed by the secret."""
    keyed_name = f"character-{Redactor(secret).tag(name)}"
    got = [f for f in folders if f in (name, keyed_name)]
    assert len(got) == 1, (name, folders)
    return got[0]


def same_verdicts(original: Any, bundled: Any, out: Path, secret: bytes) -> None:
    """The verdict of the original equals the bundle's, the names mapped through the manifest."""
    folders = [c["folder"] for c in manifest_of(out)["characters"]]
    names = {c.name: bundled_folder(c.name, folders, secret) for c in original.characters}
    a = sorted(
        ({**v, "name": names[v["name"]]} for v in verdict(original, AsBundled(secret))), key=lambda v: v["name"]
    )
    b = sorted(verdict(bundled), key=lambda v: v["name"])
    assert b == a
