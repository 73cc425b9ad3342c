"""What a support bundle keeps, per file kind: the one home of the keep-lists the README documents.

Everything not known to be structure is redacted. A key listed here keeps its value only when the
value has the shape its rule expects (an id has no whitespace, a timestamp looks like ISO-8601, an
enum value is a short word); any other value is redacted as text. Numbers, booleans and null are
kept under every key; an unknown key's strings are always redacted.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from journal.appliedset import APPLIED_SET_NAME
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.outbox import OUTBOX_NAME
from journal.park import PARKED_NAME
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE

# -- value rules ---------------------------------------------------------------------------------

#: Kept as it is when it has no whitespace (hash parts of ids built from a text hash are keyed).
ID: Final = "id"
#: Kept when it looks like an ISO-8601 date or timestamp.
TIME: Final = "time"
#: Kept when it is a short word (``[A-Za-z0-9_.:@/+-]``, at most 64 characters).
ENUM: Final = "enum"
#: An event type: kept when it is one of the 15 declared names.
TYPE: Final = "type"
#: A hex value derived from text (a fact ``hash``): keyed.
HEX: Final = "hex"
#: A SHA-256 of a text (``rewrite_text_sha256``, ``*_text_sha256``): the digest of the text's token.
DIGEST: Final = "digest"
#: Dropped (set to null): embeddings.
DROP: Final = "drop"

Rules = MappingProxyType  # key -> rule, read-only

# -- keep-lists, by file kind ---------------------------------------------------------------------

#: View entries (reflections, persona entries, facts), as in views, shards, flat archives and the
#: journal's ``entry_snapshot`` (memory-format §2).
_ENTRY = {
    **dict.fromkeys(
        (
            "id",
            "source_id",
            "absorbed_into",
            "source_fact_ids",
            "merged_from_ids",
            "archive_shard_path",
            "subject_id",
            "speaker_id",
            "source_fact_id",
            "reflection_id",
            "entry_id",
            "entity_key",
        ),
        ID,
    ),
    **dict.fromkeys(("sub_zero_last_increment_date", "recent_mentions"), TIME),
    **dict.fromkeys(
        (
            "entity",
            "status",
            "source",
            "subject_kind",
            "scope",
            "relation_type",
            "temporal_scope",
            "embedding_model_id",
            "token_count_tokenizer",
        ),
        ENUM,
    ),
    "hash": HEX,
    "last_refine_cluster_hash": HEX,
    "rewrite_text_sha256": DIGEST,
    "embedding": DROP,
}

#: Journal records and their payloads (memory-format §3): the entry keys plus the record's own.
_JOURNAL = {**_ENTRY, "event_id": ID, "fact_id": ID, "type": TYPE, "ts": TIME, "from": ENUM, "to": ENUM}

KINDS: Final[dict[str, Rules[str, str]]] = {
    "view": Rules(_ENTRY),
    "journal": Rules(_JOURNAL),
    "sentinel": Rules({"last_applied_event_id": ID, "ts": TIME}),
    "applied_set": Rules({"after": ID, "applied": ID, "after_ts": TIME, "ts": TIME}),
    "parked": Rules({"event_id": ID, "type": TYPE, "event_ts": TIME}),
    "outbox": Rules({"op_id": ID, "type": ENUM, "status": ENUM, "ts": TIME, "render_language": ENUM}),
    "surfaced": Rules({"reflection_id": ID, "id": ID, "entity": ENUM, "status": ENUM}),
    "recent": Rules({"role": ENUM, "type": ENUM}),
    "persona_corrections": Rules(
        {
            **dict.fromkeys(("id", "entity_key", "entry_id", "reflection_id", "fact_id", "source_id"), ID),
            **dict.fromkeys(("entity", "action", "status", "source", "kind"), ENUM),
        }
    ),
    "cursors": Rules({"rebuttal_checked_until": TIME, "extracted_until": TIME}),
    "synth_backoff": Rules({"at": TIME}),
    "tombstones": Rules({"subject_kind": ENUM, "scope": ENUM, "subject_id": ID, "forgotten_at": TIME}),
    "migration_marker": Rules({"source": ID, "migrated_at": TIME}),
    "generic": Rules({}),
}

#: Key suffixes every kind knows: ``*_at`` is a timestamp, ``*_text_sha256`` a text digest.
SUFFIX_RULES: Final = (("_at", TIME), ("_text_sha256", DIGEST))


def rule_for(rules: Rules[str, str], key: str) -> str | None:
    """The rule of ``key`` in a kind's keep-list, or ``None`` (its strings are redacted)."""
    rule = rules.get(key)
    if rule is None:
        for suffix, by_suffix in SUFFIX_RULES:
            if key.endswith(suffix):
                return by_suffix
    return rule


def derived_from_text(key: str) -> str | None:
    """:data:`HEX` or :data:`DIGEST` when a keep-list treats ``key``'s value as derived from a
    text (the window keys these too when it redacts), else ``None``."""
    for rules in KINDS.values():
        rule = rule_for(rules, key)
        if rule in (HEX, DIGEST):
            return rule
    return None


# -- which file is which kind ---------------------------------------------------------------------

#: JSON files of a character folder, by name → kind (memory-format §1.2).
JSON_FILES: Final = {
    "facts.json": "view",
    "facts_archive.json": "view",
    "reflections.json": "view",
    "reflections_archive.json": "view",
    "persona.json": "view",
    "surfaced.json": "surfaced",
    "persona_corrections.json": "persona_corrections",
    "recent.json": "recent",
    "recent_meta.json": "generic",
    "settings.json": "generic",
    "cursors.json": "cursors",
    "synth_backoff.json": "synth_backoff",
    "subject_forget_tombstones.json": "tombstones",
    "external_import_state.json": "generic",
    "prompt_locale.json": "generic",
    "scoped_prompt_locales.json": "generic",
    "theater_runs.json": "generic",
    "idempotency_keys.json": "generic",
    "scoped_tombstones.json": "generic",
    SENTINEL_NAME: "sentinel",
    APPLIED_SET_NAME: "applied_set",
}

#: Line-per-record files → the kind of each line (the journal has its own pass).
NDJSON_FILES: Final = {JOURNAL_NAME: "journal", OUTBOX_NAME: "outbox", PARKED_NAME: "parked"}

#: Plain-text sidecars holding one timestamp (not JSON, memory-format §1.2).
TIMESTAMP_FILES: Final = frozenset({"facts_archive.json.last_attempt"})

ARCHIVE_FOLDERS: Final = (REFLECTION_ARCHIVE, PERSONA_ARCHIVE)
MIGRATION_MARKER: Final = ".migrated_from_flat"

#: Left out of every bundle, with the reason recorded in the manifest.
OMITTED_PREFIXES: Final = (("time_indexed", "raw chat history (SQLite): it cannot be redacted key by key"),)
