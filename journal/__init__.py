"""Crash-safe journal for per-character memory folders (Qt-free; depends only on orjson).

Public API: everything in ``__all__``. See the README for an example.
"""

from journal.appliedset import APPLIED_SET_NAME, AppliedSet, applied_beyond, read_applied_set
from journal.codec import dumps_view, loads_exact
from journal.compaction import COMPACT_DAYS_THRESHOLD, COMPACT_LINES_THRESHOLD
from journal.dryrun import DryRun, FolderDiff, dry_run
from journal.errors import (
    BadShardNameError,
    InvalidCharacterError,
    JournalError,
    PayloadError,
    SentinelConflictError,
    ShardCorruptError,
    UnappliedTailError,
    UnknownEventTypeError,
    ViewCorruptError,
    ViewDriftError,
)
from journal.events import (
    ALL_EVENT_TYPES,
    JOURNAL_NAME,
    REPLAYABLE_EVENT_TYPES,
    SENTINEL_NAME,
    EntryKeys,
    Event,
    EventSummary,
    encode_event,
    entry_ref,
    make_event,
    new_event,
)
from journal.handlers import HandlerRegistry, block_reason, default_registry
from journal.holds import Holds, event_entries, stops_everything
from journal.lastevent import LastEventCache, last_event_id
from journal.log import (
    CompactionStatus,
    EventLog,
    check_character_name,
    compaction_status,
)
from journal.outbox import OutboxOp, OutboxRead, parse_outbox, read_outbox
from journal.park import PARKED_NAME, ParkedRead, ParkRecord, is_parked, read_parked, record_park
from journal.reader import (
    DEFECT_KINDS,
    Defect,
    JournalRead,
    JournalScanner,
    iter_journal,
    read_journal,
)
from journal.reconcile import (
    ReconcileHooks,
    Reconciler,
    startup_sequence,
)
from journal.replayreport import ReplayReport, ReplayStop
from journal.shards import (
    ARCHIVE_FILE_MAX_ENTRIES,
    PERSONA_ARCHIVE,
    REFLECTION_ARCHIVE,
    append_entries,
    choose_shard,
    is_shard_name,
    validate_shard_name,
)
from journal.stores import FolderStore, MemoryStore, Store
from journal.tail import JournalTail, TailUpdate
from journal.views import FACTS, PERSONA, REFLECTIONS, SentinelRead, load_view, read_sentinel, write_sentinel

__version__ = "0.1.0"

__all__ = [
    "ALL_EVENT_TYPES",
    "APPLIED_SET_NAME",
    "ARCHIVE_FILE_MAX_ENTRIES",
    "COMPACT_DAYS_THRESHOLD",
    "COMPACT_LINES_THRESHOLD",
    "DEFECT_KINDS",
    "FACTS",
    "JOURNAL_NAME",
    "PARKED_NAME",
    "PERSONA",
    "PERSONA_ARCHIVE",
    "REFLECTIONS",
    "REFLECTION_ARCHIVE",
    "REPLAYABLE_EVENT_TYPES",
    "SENTINEL_NAME",
    "AppliedSet",
    "BadShardNameError",
    "CompactionStatus",
    "Defect",
    "DryRun",
    "EntryKeys",
    "Event",
    "EventLog",
    "EventSummary",
    "FolderDiff",
    "FolderStore",
    "HandlerRegistry",
    "Holds",
    "InvalidCharacterError",
    "JournalError",
    "JournalRead",
    "JournalScanner",
    "JournalTail",
    "LastEventCache",
    "MemoryStore",
    "OutboxOp",
    "OutboxRead",
    "ParkRecord",
    "ParkedRead",
    "PayloadError",
    "ReconcileHooks",
    "Reconciler",
    "ReplayReport",
    "ReplayStop",
    "SentinelConflictError",
    "SentinelRead",
    "ShardCorruptError",
    "Store",
    "TailUpdate",
    "UnappliedTailError",
    "UnknownEventTypeError",
    "ViewCorruptError",
    "ViewDriftError",
    "__version__",
    "append_entries",
    "applied_beyond",
    "block_reason",
    "check_character_name",
    "choose_shard",
    "compaction_status",
    "default_registry",
    "dry_run",
    "dumps_view",
    "encode_event",
    "entry_ref",
    "event_entries",
    "is_parked",
    "is_shard_name",
    "iter_journal",
    "last_event_id",
    "load_view",
    "loads_exact",
    "make_event",
    "new_event",
    "parse_outbox",
    "read_applied_set",
    "read_journal",
    "read_outbox",
    "read_parked",
    "read_sentinel",
    "record_park",
    "startup_sequence",
    "stops_everything",
    "validate_shard_name",
    "write_sentinel",
]
