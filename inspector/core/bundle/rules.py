"""What a support bundle keeps, per file kind: the one home of the keep-lists the README documents.

Everything not known to be structure is redacted. A key listed here keeps its value only when the
value has the shape its rule expects (an id has no whitespace, a timestamp looks like ISO-8601, an
enum value is a short word); any other value is redacted as text. Numbers, booleans and null are
kept under every key; an unknown key's strings are always redacted.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

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
#: A shard path a payload names (``archive_shard_path``): each part a file name
#: (:meth:`BundleRedactor.file_name`), so the server's write lands where it did.
PATH: Final = "path"
#: A name that is also a dict key (a persona section's ``entity_key``): kept when the format notes
#: define it (``master``), else keyed exactly as such a key is (:func:`is_structure_key`).
NAME: Final = "name"

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
            "subject_id",
            "speaker_id",
            "source_fact_id",
            "reflection_id",
            "entry_id",
        ),
        ID,
    ),
    "entity_key": NAME,
    "archive_shard_path": PATH,
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
            **dict.fromkeys(("id", "entry_id", "reflection_id", "fact_id", "source_id"), ID),
            "entity_key": NAME,
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


#: The dict keys and names the format notes define (memory-format.md: entry, record, payload,
#: outbox and sidecar fields, persona section keys): kept. Every other key is a name a person or
#: another program chose (a setting's name, a scoped section's subject, an unknown payload's
#: field) and is keyed like a text (:meth:`BundleRedactor.key`).
FORMAT_KEYS: Final = frozenset(
    {
    "absorbed", "absorbed_into", "ai", "ai_disclosure", "arbitration_archived_at", "archive_shard_path",
    "archive_sweep", "archived", "archived_at", "auto_confirmed", "bootstrap_importing", "bootstrap_readonly",
    "character_card", "check_feedback", "confirmed", "confirmed_at", "created_at", "deferred_init", "denied",
    "denied_at", "denied_reason", "disp_last_signal_at", "display_name", "disputation", "dynamics", "embedding",
    "embedding_model_id", "embedding_text_sha256", "entity", "entity_key", "entries", "entry_id", "entry_snapshot",
    "event_end_at", "event_id", "event_start_at", "event_when_raw", "external_import", "extract_facts",
    "extracted_until", "facts", "facts_archive", "feedback", "forgotten_at", "from", "group_chat",
    "group_participant", "hash", "id", "importance", "instance_id", "internal_ports", "last_applied_event_id",
    "last_promote_attempt_at", "last_refine_at", "last_refine_cluster_hash", "launch_id", "maintenance_readonly",
    "manual", "master", "memory_dir", "merge", "merged", "merged_at", "merged_from_ids", "migrated_at",
    "migration_seed", "mode", "name_mapping", "neko", "next_eligible_at", "op_id", "owner_pid", "parent_pid",
    "participant", "payload", "payload_fingerprint", "pending", "persona", "persona_corrections", "pid", "ports",
    "profile", "promote_attempt", "promote_attempt_count", "promote_blocked", "promote_blocked_at",
    "promote_blocked_reason", "promote_merge", "promoted", "promoted_at", "protected", "ready", "reason",
    "rebuttal_checked_until", "recent", "recent_mentions", "recheck_attempts", "reflection", "reflection_id",
    "reflections", "reflections_archive", "rein_last_signal_at", "reinforcement", "reject_explanation",
    "reject_reason", "relation_type", "relationship", "render_language", "rewrite_text_sha256", "schema",
    "schema_version", "scope", "semantic_memory_legacy", "sequence_number", "settings", "shards",
    "signal_processed", "source", "source_client_id", "source_device_id", "source_fact_ids", "source_id",
    "speaker_id", "speaker_label", "speaker_provenance", "speaker_provenance_mixed", "speaker_trust",
    "start_token", "started_at", "starting", "state", "state_changed", "status", "sub_zero_days",
    "sub_zero_last_increment_date", "subject", "subject_archived_at", "subject_id", "subject_kind", "suppress",
    "suppressed_at", "surfaced", "synth_reflection", "tags", "temporal_scope", "test", "text",
    "time_indexed_compressed", "time_indexed_original", "to", "token_count", "token_count_text_sha256",
    "token_count_tokenizer", "ts", "type", "unknown", "updated_at", "updated_at_utc", "user", "user_confirm",
    "user_fact", "user_fact_reinforce_count", "user_ignore", "user_keyword_rebut", "user_observation",
    "user_rebut", "version_history",
        # outbox conversation (§5.1), recent.json (§1.2), version_history entries (§2), and the
        # persona's evidence-migration marker (§9.8.7)
        "content", "messages", "role", "replaced_at", "__meta__",
    }
)  # fmt: skip


def is_structure_key(key: str) -> bool:
    """Whether a dict key is structure the format notes define (kept in a bundle): one of
    :data:`FORMAT_KEYS`, a key a keep-list names, or one with a suffix every kind knows."""
    if key in FORMAT_KEYS or any(key in rules for rules in KINDS.values()):
        return True
    return any(key.endswith(suffix) for suffix, _rule in SUFFIX_RULES)


def derived_from_text(key: str) -> str | None:
    """:data:`HEX` or :data:`DIGEST` when a keep-list treats ``key``'s value as derived from a
    text (the window keys these too when it redacts), else ``None``."""
    for rules in KINDS.values():
        rule = rule_for(rules, key)
        if rule in (HEX, DIGEST):
            return rule
    return None


# -- left out (which file of a folder is which kind: journal.layout) ------------------------------

#: Left out of every bundle, with the reason recorded in the manifest (``time_indexed.db`` itself
#: goes in, rebuilt with its messages keyed, only when the sender includes the chat history).
OMITTED_PREFIXES: Final = (
    ("time_indexed", "the chat history (SQLite): left out unless the sender includes it (--include-chat)"),
)
