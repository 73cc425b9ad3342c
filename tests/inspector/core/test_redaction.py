"""Redaction: text and chat content become labels; structure, ids and numbers stay."""

from __future__ import annotations

import hashlib

from inspector.core.redaction import redact_text, redact_tree


def test_label_names_kind_length_and_hash_prefix():
    text = "Master likes green tea"
    digest = hashlib.sha256(text.encode()).hexdigest()[:4]
    assert redact_text(text) == f"‹text · 22 chars · sha256 {digest}…›"


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
