"""Guarded replay and restore: the one action of the inspector that writes into a memory folder.

Qt-free. The order of the steps lives in one place, :mod:`.flow` (generators that yield
questions and work); the command line (:mod:`inspector.replay_cmd`) and the window
(:mod:`inspector.controllers.replay`) only drive it, and import from it, never from the steps.

The guards, in order (issue 6), one module per step:

1. :func:`preflight` (:mod:`.preflight`) — refuse while the memory server runs (the launcher lock
   of memory-format §6.2; an override exists for the command line only and is recorded), warn when
   the journal, the sentinel or a view changed in the last 10 seconds, refuse a folder that is not
   writable or a zip export (offering :func:`extract_export`, :mod:`.target`).
2. :func:`make_plan` (:mod:`.plan`) — one diagnosis of the folder, whose pass of the
   tail-decision engine on an in-memory overlay predicts the run (:func:`journal.dryrun.predict_run`;
   the same reconciler on a scratch copy where that cannot be exact, and for orphan repair): which
   events would apply, which would stay held and why (:func:`explain_block`), a per-file diff with
   the bytes a run writes, and the fingerprints of every file the plan depends on. Nothing in the
   real folder changes. A ``park`` scope (``Scope("park", park=EVENT_ID)``) plans going past a held
   event: it must be held now, and the plan is the replay with it parked. A ``repair_journal`` scope
   (``Scope("repair_journal")``) plans the journal repair of :mod:`journal.repair` instead: which
   fragments that are not UTF-8 move into ``events.ndjson.damaged``, and what is kept.
3. :func:`create_backup` (:mod:`.backup`) — the character folder is copied to a timestamped,
   private (0700) folder *outside* it, with a SHA-256 manifest, and recorded in the index of
   backups in the app's own data folder (:func:`default_index_path`): the folder it came from and
   the SHA-256 of its manifest.
4. :func:`fingerprint_folder` (:mod:`.fingerprints`) — checked against the plan (and against the
   backup's manifest) right before applying; any difference stops the run so that it can be
   re-planned. The journal is fingerprinted by identity, size, time and the hash of its end, not
   hashed whole again.
5. :func:`execute` (:mod:`.execute`) — the reconciler on the real folder, with progress and cancel
   between events (or the journal repair, for ``repair_journal``), then a fresh look at the
   folder (:func:`folder_state`, plus the diagnosis when available).
6. A JSON report beside the backup (plan, outcome, ids applied, what stayed held, fingerprints,
   who and when, override flags, and a park decision, which is also appended to
   ``events_parked.ndjson`` in the character folder before replay goes past the event).
7. :func:`plan_restore` / :func:`execute_restore` (:mod:`.restore`) — put a backup back, verified
   against its manifest, one atomic replace per file through :mod:`journal.fs`, into a folder that
   comes from outside the backup (:func:`restore_target`: the person's ``--to``, or the index entry
   whose manifest hash still matches) and is still a character folder.

Questions go through the one :class:`inspector.core.prompter.Prompter` (its
:class:`~inspector.core.prompter.HeadlessPrompter` for tests and scripts);
:func:`run_guarded_replay` and :func:`run_guarded_restore` are :mod:`.flow`'s synchronous drivers,
and the window's controller drives the same generators off the GUI thread. Every text shown to
people comes from :mod:`.describe`.

This package re-exports the public names of its modules. Each name is defined in exactly one module
and looked up there by the others, so a test that replaces a name must patch the module that looks
it up, not this package. Note that ``preflight`` and ``execute`` here are the functions, which hide
the submodules of the same name: reach those through ``sys.modules`` or ``importlib``.
"""

from __future__ import annotations

from inspector.core.dirs import INDEX_NAME, PRIVATE_DIR_MODE, default_backup_root, default_index_path
from inspector.core.replay.backup import (
    BACKUP_FILES,
    FOLDER_REFUSALS,
    MANIFEST_NAME,
    REPORT_NAME,
    TRUST_REFUSALS,
    Backup,
    BackupFile,
    BackupIndex,
    BackupSummary,
    IndexEntry,
    RestoreTarget,
    check_backup_root,
    create_backup,
    list_backups,
    load_backup,
    read_index,
    record_in_index,
    restore_target,
    verify_backup,
)
from inspector.core.replay.describe import (
    describe_diff,
    describe_journal_repair,
    describe_outcome,
    describe_plan,
    describe_preflight,
    describe_restore_outcome,
    describe_restore_plan,
)
from inspector.core.replay.errors import BackupError, BadInputError, FolderBusyError, GuardedReplayError
from inspector.core.replay.execute import (
    OUTCOME_STATUSES,
    FolderState,
    ReplayOutcome,
    compare_with_prediction,
    execute,
    folder_state,
)
from inspector.core.replay.fingerprints import WATCHED_FILES, fingerprint_changes, fingerprint_folder
from inspector.core.replay.flow import (
    MAX_REPLANS,
    Ask,
    ChooseBackup,
    Control,
    ReplayRequest,
    ReplayRun,
    RestoreRequest,
    RestoreRun,
    Review,
    Tell,
    Work,
    confirm_question,
    drive,
    replay_flow,
    restore_flow,
    run_guarded_replay,
    run_guarded_restore,
)
from inspector.core.replay.plan import (
    SCOPE_KINDS,
    BlockExplanation,
    Orphan,
    ParkChoice,
    Plan,
    PlannedEvent,
    Scope,
    diff_to_json,
    explain_block,
    find_orphaned_archive_events,
    leftover_temp_files,
    make_plan,
)
from inspector.core.replay.preflight import (
    RECENT_WRITE_SECONDS,
    Preflight,
    PreflightWarning,
    Refusal,
    check_launcher_lock,
    folder_writable,
    preflight,
    recent_changes,
)
from inspector.core.replay.restore import (
    RestoreOutcome,
    RestorePlan,
    execute_restore,
    plan_restore,
    restore_question,
)
from inspector.core.replay.target import (
    EXTRACT_MAX_BYTES,
    EXTRACT_MAX_MEMBERS,
    ReplayTarget,
    extract_export,
    suggest_extract_dir,
    target_of,
)
from journal.runtime import runtime_state_dir as runtime_state_dir

__all__ = [
    "BACKUP_FILES",
    "EXTRACT_MAX_BYTES",
    "EXTRACT_MAX_MEMBERS",
    "FOLDER_REFUSALS",
    "INDEX_NAME",
    "MANIFEST_NAME",
    "MAX_REPLANS",
    "OUTCOME_STATUSES",
    "PRIVATE_DIR_MODE",
    "RECENT_WRITE_SECONDS",
    "REPORT_NAME",
    "SCOPE_KINDS",
    "TRUST_REFUSALS",
    "WATCHED_FILES",
    "Ask",
    "Backup",
    "BackupError",
    "BackupFile",
    "BackupIndex",
    "BackupSummary",
    "BadInputError",
    "BlockExplanation",
    "ChooseBackup",
    "Control",
    "FolderBusyError",
    "FolderState",
    "GuardedReplayError",
    "IndexEntry",
    "Orphan",
    "ParkChoice",
    "Plan",
    "PlannedEvent",
    "Preflight",
    "PreflightWarning",
    "Refusal",
    "ReplayOutcome",
    "ReplayRequest",
    "ReplayRun",
    "ReplayTarget",
    "RestoreOutcome",
    "RestorePlan",
    "RestoreRequest",
    "RestoreRun",
    "RestoreTarget",
    "Review",
    "Scope",
    "Tell",
    "Work",
    "check_backup_root",
    "check_launcher_lock",
    "compare_with_prediction",
    "confirm_question",
    "create_backup",
    "default_backup_root",
    "default_index_path",
    "describe_diff",
    "describe_journal_repair",
    "describe_outcome",
    "describe_plan",
    "describe_preflight",
    "describe_restore_outcome",
    "describe_restore_plan",
    "diff_to_json",
    "drive",
    "execute",
    "execute_restore",
    "explain_block",
    "extract_export",
    "find_orphaned_archive_events",
    "fingerprint_changes",
    "fingerprint_folder",
    "folder_state",
    "folder_writable",
    "leftover_temp_files",
    "list_backups",
    "load_backup",
    "make_plan",
    "plan_restore",
    "preflight",
    "read_index",
    "recent_changes",
    "record_in_index",
    "replay_flow",
    "restore_flow",
    "restore_question",
    "restore_target",
    "run_guarded_replay",
    "run_guarded_restore",
    "runtime_state_dir",
    "suggest_extract_dir",
    "target_of",
    "verify_backup",
]
