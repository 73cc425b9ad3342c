"""Redaction: text and chat content become keyed labels; structure, ids and numbers stay."""

from __future__ import annotations

import hashlib
import re

from inspector.core.redaction import Redactor, damaged_token, length_class, redact_text, redact_tree

TOKEN = re.compile(r"‹(\w+) · (\d+) chars · ([0-9a-f]{8})›")


def test_label_names_kind_length_and_a_keyed_tag_not_a_plain_hash():
    text = "Master likes green tea"
    label = redact_text(text)
    m = TOKEN.fullmatch(label)
    assert m is not None and m.group(1) == "text" and m.group(2) == "22"
    # The tag is an HMAC under a secret: a dictionary of plain SHA-256 prefixes cannot find it.
    assert m.group(3) not in hashlib.sha256(text.encode()).hexdigest()


def test_tree_hides_text_and_chat_but_keeps_ids_numbers_and_shape():
    value = {
        "id": "ref_1",
        "text": "secret",
        "reinforcement": 2.5,
        "entry_snapshot": {"id": "ref_1", "text": "secret too"},
        "messages": [{"role": "user", "content": "hello"}],
        "version_history": [{"text": "old", "replaced_at": "2026-01-01T00:00:00"}],
    }
    out = redact_tree(value)
    assert out["id"] == "ref_1"
    assert out["reinforcement"] == 2.5
    assert out["text"].startswith("‹text · 6 chars")
    assert out["entry_snapshot"]["id"] == "ref_1"
    assert out["entry_snapshot"]["text"].startswith("‹text · 10 chars")
    assert out["messages"][0]["content"].startswith("‹chat · 5 chars")
    assert out["messages"][0]["role"].startswith("‹chat")
    assert out["version_history"][0]["text"].startswith("‹text · 3 chars")
    assert out["version_history"][0]["replaced_at"] == "2026-01-01T00:00:00"
    assert "secret" not in repr(out) and "hello" not in repr(out)
    assert value["text"] == "secret"  # the input is not modified


def test_equal_texts_get_equal_labels():
    assert redact_text("same") == redact_text("same") != redact_text("other")


def test_two_secrets_give_different_tags_one_secret_the_same():
    a, b = Redactor(b"a" * 32), Redactor(b"b" * 32)
    assert a.token("tea") == Redactor(b"a" * 32).token("tea") != b.token("tea")
    assert a.key_id != b.key_id and len(a.key_id) == 16


def test_keyed_hex_keeps_length_and_block_prefixes():
    r = Redactor(b"k" * 32)
    full = r.keyed_hex("1a2b3c4d5e6f7081")
    assert len(full) == 16 and full != "1a2b3c4d5e6f7081"
    assert r.keyed_hex("1a2b3c4d") == full[:8]  # an id's hash8 stays the prefix of the fact's hash


def test_ids_built_from_a_text_hash_are_keyed_everywhere_the_same():
    r = Redactor(b"k" * 32)
    fact = r.keyed_ids("fact_20260423120000_1a2b3c4d")
    assert fact.startswith("fact_20260423120000_") and not fact.endswith("1a2b3c4d")
    ref = r.keyed_ids("ref_1a2b3c4d5e6f7081")
    assert r.keyed_ids("prom_ref_1a2b3c4d5e6f7081") == "prom_" + ref
    assert r.keyed_ids("in a message: legacy_5e6f7a8b.") == f"in a message: {r.keyed_ids('legacy_5e6f7a8b')}."
    for untouched in ("9b2f3c4d-1a2b-4c3d-8e9f-0a1b2c3d4e5f", "2026-05-01_0a1b2c3d.json", "prom_ref_77"):
        assert r.keyed_ids(untouched) == untouched


def test_damaged_token_says_only_a_length_class():
    assert damaged_token("line", 100) == "‹damaged line · up to 128 bytes›"
    assert length_class(1) == "up to 64 bytes" and length_class(5000) == "up to 8 KiB"
    assert length_class(3 << 20) == "up to 4 MiB"


def test_text_digests_are_keyed_in_the_window_too():
    """A plain SHA-256 of a short text can be guessed from a dictionary: with redaction on, the
    window shows a keyed value for ``rewrite_text_sha256`` and a fact ``hash`` (issue 17)."""
    import hashlib

    from inspector.core.redaction import redact_tree
    from inspector.core.timeline import summarize

    digest = hashlib.sha256(b"Master likes green tea").hexdigest()
    payload = {"entity_key": "master", "entry_id": "e1", "rewrite_text_sha256": digest, "hash": digest[:16]}
    shown = redact_tree(payload)
    assert shown["rewrite_text_sha256"] != digest and len(shown["rewrite_text_sha256"]) == 64
    assert shown["hash"] != digest[:16] and shown["entry_id"] == "e1"
    assert redact_tree(payload) == shown  # the same value keys the same way within a session
    assert digest[:8] in summarize("persona.entry_updated", payload)
    assert digest[:8] not in summarize("persona.entry_updated", payload, redact=True)


def test_diagnosis_messages_lose_quoted_lines_and_text_digests():
    """A view drift names text digests; a malformed line's message quotes it: with redaction on
    the window (detail, findings, the server's panel) shows neither (issue 17)."""
    import hashlib

    from inspector.core.redaction import redact_message

    digest = hashlib.sha256(b"Master likes green tea").hexdigest()
    drift = f"persona.json entry e1 has text sha256 {digest}, the event expects another; ref_1a2b3c4d5e6f7081 stays"
    shown = redact_message(drift)
    assert digest not in shown and "ref_1a2b3c4d5e6f7081" in shown and len(shown) == len(drift)
    line = """not valid JSON: '{"event_id": "x", "payload": {"text": "Master likes green tea"'"""
    assert "green tea" not in redact_message(line) and "damaged preview" in redact_message(line)
    assert redact_message("nothing to hide") == "nothing to hide"


def test_a_document_s_field_changes_are_redacted_as_the_field_they_name():
    from inspector.core.redaction import redact_document

    doc = {
        "changes": [
            {"name": "text", "before": "old words", "after": "new words"},
            {"name": "reinforcement", "after": 2},
        ],
        "fields": {"text": "words", "status": "confirmed"},
        "message": "events.ndjson line 3: not valid JSON: '{\"text\": \"words'",
    }
    out = redact_document(doc)
    assert "words" not in repr(out)
    assert out["changes"][0]["before"].startswith("‹text · 9 chars · ") and out["changes"][1]["after"] == 2
    assert out["fields"]["status"] == "confirmed"  # what the window shows with its redaction on
    assert out["message"].startswith("events.ndjson line 3: not valid JSON: '‹damaged preview")
    assert doc["fields"]["text"] == "words"  # a copy
