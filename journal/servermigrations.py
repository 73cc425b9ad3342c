"""The memory server's one-shot migrations after reconcile, as rules (memory-format §9.8 item 7).

After every listed character is reconciled, the server's start runs, per character
(``app/memory_server/runtime.py:756-768``), the evidence migration and then the archive migration.
Each rule here is one named function citing the server line that decides it; the server model
(:mod:`journal.diagnosis.server_after`) composes them. Nothing here writes anything.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from journal import fs
from journal.codec import loads_exact
from journal.layout import MIGRATION_MARKER
from journal.shards import REFLECTION_ARCHIVE
from journal.views import undecodable_at

#: Where the evidence migration's marker lives in ``persona.json`` (``evidence_loops.py:609-610``).
MARKER_SECTION = "__meta__"
MARKER_ENTRY = "__evidence_migration_v1__"

#: The flat archive the archive migration converts (its done-marker in the shard folder is
#: :data:`journal.layout.MIGRATION_MARKER`).
FLAT_ARCHIVE = "reflections_archive.json"

#: A flat archive larger than this is not read here (it is converted all the same; only the dates
#: of its shards are then not known).
_FLAT_READ_MAX = 64 << 20


def has_evidence_marker(persona: Any) -> bool:
    """Whether ``persona.json`` (as persona ensure leaves it) carries the evidence migration's
    marker, so the migration returns at once (``evidence_loops.py:641-645``)."""
    section = persona.get(MARKER_SECTION) if isinstance(persona, dict) else None
    facts = section.get("facts", []) if isinstance(section, dict) else []
    return any(isinstance(e, dict) and e.get("id") == MARKER_ENTRY for e in facts if isinstance(facts, list))


def reflection_needs_seed(reflection: Any) -> bool:
    """Whether the migration seeds a reflection with a live evidence write (``evidence_loops.py:656-668``,
    ``:612-619``): a dict with an id, no signal timestamp yet, and a status that seeds a non-zero
    value (``promoted`` 2.0, ``confirmed`` 1.0 reinforcement; ``denied`` 2.0 disputation)."""
    if not isinstance(reflection, dict) or not reflection.get("id"):
        return False
    if reflection.get("rein_last_signal_at") or reflection.get("disp_last_signal_at"):
        return False
    return reflection.get("status", "pending") in ("promoted", "confirmed", "denied")


def persona_entry_needs_seed(section_key: str, entry: Any) -> bool:
    """Whether the migration seeds a persona entry with a zero-delta live write
    (``evidence_loops.py:683-700``): not the marker's section, a dict with an id, not protected, no
    signal timestamp and no evidence yet."""
    if section_key == MARKER_SECTION or not isinstance(entry, dict) or not entry.get("id"):
        return False
    if entry.get("protected"):
        return False
    if entry.get("rein_last_signal_at") or entry.get("disp_last_signal_at"):
        return False
    return not (entry.get("reinforcement") or entry.get("disputation"))


def evidence_seeds(reflections: Iterable[Any], persona: Any) -> int:
    """How many live writes (``aapply_signal``, i.e. ``record_and_save``: one appended event and
    one unconditional sentinel write each, ``memory/event_log.py:672``) the migration makes."""
    n = sum(1 for r in reflections if reflection_needs_seed(r))
    if isinstance(persona, dict):
        for key, section in persona.items():
            facts = section.get("facts", []) if isinstance(section, dict) else []
            n += sum(1 for e in facts if isinstance(facts, list) and persona_entry_needs_seed(key, e))
    return n


@dataclass(frozen=True, slots=True)
class ArchiveMigration:
    """What the archive migration does (``memory/archive_shards.py:529-569``).

    Attributes:
        dates: the archive dates it writes shards for (``None``: not known, the file was not
            read here); entries without a usable ``archived_at`` go under the day it runs.
        undated: how many entries go under the day it runs.
    """

    dates: tuple[str, ...] | None
    undated: int = 0


def archive_migration(char_dir: str | os.PathLike[str]) -> ArchiveMigration | None:
    """Whether the archive migration converts a flat ``reflections_archive.json`` into shards at
    this start, and for which dates (§9.8.7, ``memory/archive_shards.py:529-569``); ``None`` when
    it does nothing: its marker is in the shard folder, there is no flat file, or the file is not
    UTF-8 or not a JSON list (it is then kept as it is)."""
    cd = os.fspath(char_dir)
    if os.path.lexists(os.path.join(cd, REFLECTION_ARCHIVE, MIGRATION_MARKER)):
        return None
    try:
        with fs.open_regular(os.path.join(cd, FLAT_ARCHIVE)) as fh:
            data = fh.read(_FLAT_READ_MAX + 1)
    except FileNotFoundError:
        return None
    except OSError:
        return None  # its own read fails too: it logs and keeps the file
    if len(data) > _FLAT_READ_MAX:
        return ArchiveMigration(None)
    if undecodable_at(data) is not None:
        return None  # not valid UTF-8: its read raises, the migration is skipped (non-fatal)
    try:
        value = loads_exact(data)
    except ValueError:
        return None
    if not isinstance(value, list):
        return None
    dates: set[str] = set()
    undated = 0
    for entry in value:
        if not isinstance(entry, dict):
            continue
        day = _archive_day(entry.get("archived_at"))
        if day is None:
            undated += 1
        else:
            dates.add(day)
    return ArchiveMigration(tuple(sorted(dates)), undated)


def _archive_day(archived_at: Any) -> str | None:
    """The shard date of an entry (``memory/archive_shards.py:457-480``), ``None``: the day it runs."""
    if not isinstance(archived_at, str) or not archived_at:
        return None
    try:
        return datetime.fromisoformat(archived_at).date().isoformat()
    except ValueError:
        return None
