"""Crash-safe journal for per-character memory folders (Qt-free; depends only on orjson).

Public API: everything in ``__all__``. See the README for an example.
"""

from journal.errors import (
    BadShardNameError,
    InvalidCharacterError,
    JournalError,
    PayloadError,
    SentinelConflictError,
    ShardCorruptError,
    UnknownEventTypeError,
    ViewCorruptError,
    ViewDriftError,
)
from journal.events import (
    ALL_EVENT_TYPES,
    JOURNAL_NAME,
    REPLAYABLE_EVENT_TYPES,
    SENTINEL_NAME,
    Event,
    encode_event,
    new_event,
)
from journal.log import (
    COMPACT_DAYS_THRESHOLD,
    COMPACT_LINES_THRESHOLD,
    CompactionStatus,
    EventLog,
    check_character_name,
    compaction_status,
)
from journal.reader import (
    DEFECT_KINDS,
    Defect,
    JournalRead,
    JournalScanner,
    JournalTail,
    TailUpdate,
    iter_journal,
    last_event_id,
    read_journal,
)
from journal.shards import (
    ARCHIVE_FILE_MAX_ENTRIES,
    PERSONA_ARCHIVE,
    REFLECTION_ARCHIVE,
    append_entries,
    choose_shard,
    is_shard_name,
    validate_shard_name,
)
from journal.views import FACTS, PERSONA, REFLECTIONS, SentinelRead, load_view, read_sentinel, write_sentinel

__version__ = "0.1.0"

__all__ = [
    "ALL_EVENT_TYPES",
    "ARCHIVE_FILE_MAX_ENTRIES",
    "COMPACT_DAYS_THRESHOLD",
    "COMPACT_LINES_THRESHOLD",
    "DEFECT_KINDS",
    "FACTS",
    "JOURNAL_NAME",
    "PERSONA",
    "PERSONA_ARCHIVE",
    "REFLECTIONS",
    "REFLECTION_ARCHIVE",
    "REPLAYABLE_EVENT_TYPES",
    "SENTINEL_NAME",
    "BadShardNameError",
    "CompactionStatus",
    "Defect",
    "Event",
    "EventLog",
    "InvalidCharacterError",
    "JournalError",
    "JournalRead",
    "JournalScanner",
    "JournalTail",
    "PayloadError",
    "SentinelConflictError",
    "SentinelRead",
    "ShardCorruptError",
    "TailUpdate",
    "UnknownEventTypeError",
    "ViewCorruptError",
    "ViewDriftError",
    "__version__",
    "append_entries",
    "check_character_name",
    "choose_shard",
    "compaction_status",
    "encode_event",
    "is_shard_name",
    "iter_journal",
    "last_event_id",
    "load_view",
    "new_event",
    "read_journal",
    "read_sentinel",
    "validate_shard_name",
    "write_sentinel",
]
