"""Names, keys and file names are text too (issue 25, bundle item 4), and redaction never changes
a verdict (item 5): character folders become ``character-<8 hex>``, file names and dict keys the
format notes do not define are keyed, ids with whitespace are tokenized in check.json/check.txt as
in the journal, and a shard basename keeps where the server's write of it lands."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.core.bundle import rules as R
from inspector.core.bundle import write_bundle
from inspector.core.bundle.redact import BundleRedactor
from inspector.core.redaction import Redactor
from journal import fixtures
from journal.events import SENTINEL_NAME
from journal.fixtures.cases.archive import HOSTILE_BASENAME
from tests.inspector.bundle.conftest import diagnose, forms, manifest_of, members, same_verdicts, secrets_of

NAME = "Jane Doe's diary"
#: The memory root's own folder name: a name a person gave, so text too.
ROOT_NAME = "Janes memories"
HIDDEN = [NAME, "LettersToJane", "Jane's drink", "Jane's notes key", "Jane's payload key", "evt with spaces",
          "participant:jane"]  # fmt: skip


def _bundle(path: Path, tmp_path: Path, secret: bytes, **kw) -> Path:
    out = tmp_path / "out" / "case.zip"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_bundle(path, out, secret=secret, **kw)
    return out


def _named_root(tmp_path: Path) -> Path:
    root = tmp_path / ROOT_NAME
    path = fixtures.pending_tail(root, NAME).path
    (path / "persona_archive").mkdir(exist_ok=True)
    (path / "persona_archive" / "LettersToJane.json").write_text('[{"id": "x", "text": "Dear Jane"}]')
    (path / "settings.json").write_text(json.dumps({"Jane's drink": {"favourite": "tea"}}))
    (path / "notes.json").write_text(json.dumps({"Jane's notes key": 1}))
    persona = json.loads((path / "persona.json").read_text(encoding="utf-8"))
    persona["@subject/participant:jane"] = {"facts": [], "subject_kind": "participant", "subject_id": "jane"}
    (path / "persona.json").write_text(json.dumps(persona, ensure_ascii=False), encoding="utf-8")
    lines = [
        {
            "event_id": "evt with spaces",
            "type": "persona.fact_added",
            "ts": "2026-05-03T00:00:00",
            "payload": {"entity_key": "@subject/participant:jane", "entry_id": "manual_20260503000000_0a1b2c3d",
                        "text": "Jane likes tea", "source": "manual"},
        },
        {"event_id": "e-odd", "type": "custom.note", "ts": "2026-05-03T00:00:01", "payload": {"Jane's payload key": 1}},
    ]  # fmt: skip
    with open(path / "events.ndjson", "ab") as fh:
        for line in lines:
            fh.write(json.dumps(line).encode() + b"\n")
    return root


def test_names_keys_file_names_and_ids_never_reach_the_bundle(tmp_path, secret):
    root = _named_root(tmp_path)
    hidden = secrets_of(root)
    assert set(HIDDEN) <= {h for s in hidden for h in HIDDEN if h in s}  # the proof looks for each of them
    out = _bundle(root, tmp_path, secret)
    got = members(out)
    leaks = [
        (name, h)
        for name, data in got.items()
        for h in [*HIDDEN, ROOT_NAME]
        if h in name or any(f in data for f in forms(h))
    ]
    assert leaks == []
    assert manifest_of(out)["input"] == f"input-{Redactor(secret).tag(ROOT_NAME)}"
    folder = f"character-{Redactor(secret).tag(NAME)}"
    assert manifest_of(out)["characters"] == [{"folder": folder}]
    r = BundleRedactor(Redactor(secret))
    assert f"{folder}/persona_archive/{r.file_name('LettersToJane.json')}" in got
    assert f"{folder}/{r.file_name('notes.json')}" in got
    # a keyed persona section key is the keyed entity_key of its event
    section = r.key("@subject/participant:jane")
    assert section != "@subject/participant:jane"
    assert section in json.loads(got[f"{folder}/persona.json"])
    assert json.dumps(section, ensure_ascii=False).encode() in got[f"{folder}/events.ndjson"]
    # the id with spaces is the journal's token in check.json too (the leak check above: nowhere raw)
    token = r.string("evt with spaces", R.ID)
    assert any(f in got[f"{folder}/events.ndjson"] for f in forms(token))
    assert any(f in got["check.json"] for f in forms(token))
    with diagnose(root) as original, diagnose(out) as bundled:
        same_verdicts(original, bundled, out, secret)


def test_the_names_show_when_nothing_is_redacted(tmp_path, secret):
    """The proof above is not vacuous."""
    root = _named_root(tmp_path)
    got = members(_bundle(root, tmp_path, secret, redact=False))
    assert all(any(h in name or h.encode() in data for name, data in got.items()) for h in [*HIDDEN, ROOT_NAME])


def test_a_shard_basename_with_spaces_leads_where_it_led(tmp_path, secret):
    path = fixtures.hostile_shard_basename(tmp_path / "root").path
    journal = path / "events.ndjson"
    spaced = "../../../escaped with spaces.json"
    journal.write_bytes(journal.read_bytes().replace(HOSTILE_BASENAME.encode(), spaced.encode()))
    out = _bundle(path.parent, tmp_path, secret)
    with diagnose(path.parent) as original, diagnose(out) as bundled:
        [s] = [c.server_start for c in original.characters]
        assert [place for _p, place in s.stray] == ["outside"]
        [b] = [c.server_start for c in bundled.characters]
        assert [place for _p, place in b.stray] == ["outside"]
        same_verdicts(original, bundled, out, secret)


def test_a_sentinel_id_with_spaces_is_the_journal_token_everywhere(tmp_path, secret):
    path = fixtures.healthy(tmp_path / "root").path
    sentinel = json.loads((path / SENTINEL_NAME).read_text(encoding="utf-8"))
    old, new = sentinel["last_applied_event_id"], "the last event, with spaces"
    for name in ("events.ndjson", SENTINEL_NAME):
        (path / name).write_bytes((path / name).read_bytes().replace(old.encode(), new.encode()))
    out = _bundle(path.parent, tmp_path, secret)
    got = members(out)
    assert [n for n, data in got.items() if any(f in data for f in forms(new))] == []
    token = BundleRedactor(Redactor(secret)).string(new, R.ID)
    folder = manifest_of(out)["characters"][0]["folder"]
    for member in (f"{folder}/events.ndjson", f"{folder}/{SENTINEL_NAME}", "check.json"):
        assert any(f in got[member] for f in forms(token)), member
    with diagnose(path.parent) as original, diagnose(out) as bundled:
        assert original.characters[0].sentinel.state == "ok"
        same_verdicts(original, bundled, out, secret)
