"""The names in a character folder (memory-format §1.2): which file holds one JSON value and which
one record per line, the shard folders and their marker, the chat history, what marks a folder as a
character folder, and what a cloud-save export copies.

The one home of these tables: the input resolver (:mod:`journal.inputs`), the diagnosis, ``diff``
(:mod:`inspector.core.compare.files`) and the support bundle read them here. A file's own name stays
with the module that reads the file (:data:`journal.events.JOURNAL_NAME`,
:data:`journal.outbox.OUTBOX_NAME`, …); the tables name it through that constant.
"""

from __future__ import annotations

from typing import Final

from journal.appliedset import APPLIED_SET_NAME
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.fs import is_leftover_temp
from journal.outbox import OUTBOX_NAME
from journal.park import PARKED_NAME
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, is_shard_name
from journal.views import FACTS, PERSONA, REFLECTIONS

#: The chat history, a SQLite database beside the journal (cloudsave-format §6.1).
CHAT_DB: Final = "time_indexed.db"

#: The shard folders of the archives (memory-format §2.4).
ARCHIVE_FOLDERS: Final = (REFLECTION_ARCHIVE, PERSONA_ARCHIVE)

#: The archive migration's done-marker in the reflection shard folder (``memory/archive_shards.py:69``).
MIGRATION_MARKER: Final = ".migrated_from_flat"

#: The JSON files of a character folder, by name, and what each holds: ``view`` (entries of
#: memory-format §2), a sidecar's own kind, or ``generic`` (JSON whose fields the format notes do
#: not list). The support bundle keeps a keep-list per kind (``inspector.core.bundle.rules.KINDS``).
JSON_FILES: Final = {
    FACTS: "view",
    "facts_archive.json": "view",
    REFLECTIONS: "view",
    "reflections_archive.json": "view",
    PERSONA: "view",
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

#: The files of one record per line, by name, and the kind of each line.
NDJSON_FILES: Final = {JOURNAL_NAME: "journal", OUTBOX_NAME: "outbox", PARKED_NAME: "parked"}

#: Plain-text sidecars holding one timestamp (not JSON, memory-format §1.2).
TIMESTAMP_FILES: Final = frozenset({"facts_archive.json.last_attempt"})

#: Files and folders whose presence makes a folder a character folder (memory-format §1.2).
CHARACTER_MARKERS: Final = frozenset(
    {
        FACTS,
        "facts_archive.json",
        REFLECTIONS,
        REFLECTION_ARCHIVE,
        "reflections_archive.json",
        "surfaced.json",
        "synth_backoff.json",
        PERSONA,
        PERSONA_ARCHIVE,
        "persona_corrections.json",
        JOURNAL_NAME,
        SENTINEL_NAME,
        OUTBOX_NAME,
        "cursors.json",
        "recent.json",
        "recent_meta.json",
        "settings.json",
        CHAT_DB,
        "subject_forget_tombstones.json",
    }
)

#: The files a cloud-save export copies (memory-format §6.1, newest list).
MANAGED_MEMORY_FILENAMES: Final = frozenset(
    {
        "recent.json",
        "theater_runs.json",
        "settings.json",
        FACTS,
        "facts_archive.json",
        "subject_forget_tombstones.json",
        "external_import_state.json",
        "prompt_locale.json",
        "scoped_prompt_locales.json",
        PERSONA,
        "persona_corrections.json",
        REFLECTIONS,
        "reflections_archive.json",
        "surfaced.json",
        CHAT_DB,
    }
)


def is_format_file_name(name: str) -> bool:
    """Whether a file or folder name inside a character folder is one the format notes define (a
    memory file, a shard folder, a shard basename, the migration marker, a writer's temp file, or
    ``.``/``..``); any other is a name someone chose (a support bundle keys it)."""
    return (
        name in ("", ".", "..", MIGRATION_MARKER, *ARCHIVE_FOLDERS)
        or name in JSON_FILES
        or name in NDJSON_FILES
        or name in TIMESTAMP_FILES
        or is_shard_name(name)
        or is_leftover_temp(name)
    )
