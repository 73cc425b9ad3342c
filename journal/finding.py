"""A finding: one located statement about an input, the value every reader of a memory folder
reports with (the diagnosis, the input resolver's refusals, a cloud-save unit's checks, a support
bundle's recorded facts), and the advice a finding can carry.

It sits below :mod:`journal.inputs` and the :mod:`journal.diagnosis` package, which both make
findings: the diagnosis reads its input through the resolver, so the value they share cannot live
inside the diagnosis package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SEVERITIES = ("info", "warning", "error")

#: The closed set of finding codes (documented in the README). The last one, ``input.refused``,
#: is the issue's "refused with a finding" for unsafe input: zip members that would land outside
#: the extraction folder or are links, symbolic links pointing outside the memory root, files that
#: are not regular files. None of the other codes describes those.
FINDING_CODES = (
    "journal.absent",
    "sentinel.missing",
    "sentinel.malformed",
    "sentinel.unknown_id",
    "tail.pending",
    "replay.blocked",
    "event.orphaned",
    "event.suspect",
    "line.malformed",
    "line.torn_tail",
    "line.glued",
    "line.invalid_utf8",
    "event.duplicate_id",
    "event.unknown_type",
    "view.corrupt",
    "view.drift",
    "shard.corrupt",
    "shard.bad_name",
    "shard.missing_entry",
    "outbox.pending",
    "outbox.dead_letter",
    "tempfile.leftover",
    "compaction.due",
    "server.running",
    "input.refused",
    # issue 13: what the memory server's next start does (journal.diagnosis.server), and the wedge
    "server.persona_replaced",
    "server.sentinel_unseen",
    "server.full_replay",
    "server.replay_stops",
    "server.shard_passed",
    "server.writes_outside",
    "server.duplicate_replayed",
    "server.next_append_glued",
    "server.not_reconciled",
    "server.characters_file",
    "server.journal_undecodable",
    "server.sentinel_undecodable",
    "server.reader_differs",
    "server.migration_orphans",
    "replay.held",
    "view.moved_on",
    # issue 26: cloud-save units (journal.cloudsave), a download's effect, and views a download replaced
    "view.replaced",
    "cloud.unreadable",
    "cloud.not_regular",
    "cloud.fingerprint_differs",
    "cloud.manifest_differs",
    "cloud.manifest_missing",
    "cloud.manifest_extra",
    "cloud.layouts_differ",
    "cloud.tombstoned",
    "cloud.write_fenced",
    "download.deletes",
    "download.deletes_chat",
)


#: What a finding or a prediction can advise a person to do, by name. Each surface words it (the
#: command line's flags, the window's actions and their shortcuts): the diagnosis only names it.
ADVICE_ACTIONS = ("park", "repair_journal", "repair_orphans")


@dataclass(frozen=True, slots=True)
class Advice:
    """Something a person can do about a finding: a guarded replay of one scope.

    Attributes:
        action: one of :data:`ADVICE_ACTIONS`.
        character: the character folder's name (the command line's ``--character``).
        event_id: the event it is about (``park``: the held event).
    """

    action: str
    character: str
    event_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "character": self.character, "event_id": self.event_id}


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnosis finding.

    Attributes:
        code: one of :data:`FINDING_CODES`.
        severity: ``info`` | ``warning`` | ``error``.
        message: one line, for people (what to do is :attr:`advice`, worded by each surface).
        event_id: the event it is about, if any.
        file: the file it is about, relative to the character folder (or the input root), if any.
        line: 1-based journal line, for line defects.
        advice: what a person can do about it, if there is one thing to do.
    """

    code: str
    severity: str
    message: str
    event_id: str | None = None
    file: str | None = None
    line: int | None = None
    advice: Advice | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "event_id": self.event_id,
            "file": self.file,
            "advice": None if self.advice is None else self.advice.to_json(),
        }
