"""The concurrency soak's reader process: ``python -m tests.faults._inspector_poller CHAR_DIR OUT``.

It polls a character folder the way the inspector's live view does, as fast as it can, until a
line arrives on stdin: ``JournalTail`` for new journal bytes (a reset means the journal was
replaced, i.e. compacted), ``read_sentinel`` for the processing cursor, the two views, and every
shard; now and then a full ``read_journal`` as a reload does. It never writes. At the end it
writes a JSON summary to OUT:

* ``exceptions``: anything any of those calls raised (the reader must never raise);
* ``backwards``: the sentinel's event moved to an earlier journal position with no compaction in
  between; ``unresolved``: the sentinel named an event the journal does not hold even after
  catching up, with no compaction in between;
* ``duplicates`` / ``defects``: what the tail reported (a healthy live journal has neither);
* ``event_ids``: the events of the current journal as the tail saw them (compared with the file).
"""

from __future__ import annotations

import json
import select
import sys
import traceback
from pathlib import Path
from typing import Any

from journal import JournalTail, load_view, read_journal, read_sentinel
from journal.events import JOURNAL_NAME
from journal.shards import PERSONA_ARCHIVE, REFLECTION_ARCHIVE, list_shards, load_shard
from journal.views import PERSONA, REFLECTIONS


class Poller:
    def __init__(self, char_dir: Path) -> None:
        self.char_dir = char_dir
        self.tail = JournalTail(char_dir / JOURNAL_NAME)
        self.ids: list[str] = []
        self.index: dict[str, int] = {}
        self.last = -1
        self.fresh = False
        self.stats: dict[str, Any] = {
            "polls": 0,
            "events": 0,
            "resets": 0,
            "sentinel_moves": 0,
            "backwards": 0,
            "unresolved": 0,
            "duplicates": 0,
            "defects": 0,
            "exceptions": 0,
            "full_reads": 0,
            "view_loads": 0,
            "shard_loads": 0,
        }
        self.problems: list[str] = []

    def _problem(self, kind: str, message: str) -> None:
        self.stats[kind] += 1
        if len(self.problems) < 20:
            self.problems.append(f"{kind}: {message}")

    def catch_up(self) -> bool:
        """Read what the tail has; return whether the journal was replaced since the last call."""
        reset = False
        while True:
            update = self.tail.poll()
            if update.reset:
                reset = True
                self.stats["resets"] += 1
                self.ids.clear()
                self.index.clear()
                self.last = -1
            for ev in update.events:
                if ev.event_id in self.index:
                    self._problem("duplicates", ev.event_id)
                    continue
                self.index[ev.event_id] = len(self.ids)
                self.ids.append(ev.event_id)
                self.stats["events"] += 1
            for d in update.defects:
                self._problem("defects", f"{d.kind} at line {d.line}: {d.message}")
            if not update.events and not update.defects and not update.reset:
                return reset

    def poll_once(self) -> None:
        self.stats["polls"] += 1
        replaced = self.catch_up()
        sentinel = read_sentinel(self.char_dir)
        if sentinel.event_id is not None and sentinel.event_id not in self.index:
            # Appended after our read (the sentinel is written after the append): catch up once.
            replaced |= self.catch_up()
        if replaced:
            self.fresh = True  # a compaction: until the sentinel is reset, it names an old event
        if sentinel.event_id is None:
            position = -1
        elif sentinel.event_id in self.index:
            position = self.index[sentinel.event_id]
        elif self.fresh:
            position = -1
        else:
            self._problem("unresolved", f"sentinel {sentinel.state}:{sentinel.event_id} not in the journal")
            position = self.last
        if position < self.last and not replaced:
            if sentinel.event_id is None and self.catch_up():
                position = -1  # compaction replaced the journal and reset the sentinel between our reads
            else:
                self._problem("backwards", f"sentinel moved from #{self.last} to #{position} ({sentinel.state})")
        if sentinel.event_id is None or sentinel.event_id in self.index:
            self.fresh = False
        if position != self.last:
            self.stats["sentinel_moves"] += 1
        self.last = position
        load_view(self.char_dir / REFLECTIONS, list)
        load_view(self.char_dir / PERSONA, dict)
        self.stats["view_loads"] += 2
        for archive in (REFLECTION_ARCHIVE, PERSONA_ARCHIVE):
            for name in list_shards(self.char_dir / archive):
                load_shard(self.char_dir / archive / name)
                self.stats["shard_loads"] += 1
        if self.stats["polls"] % 50 == 0:
            read = read_journal(self.char_dir / JOURNAL_NAME)
            self.stats["full_reads"] += 1
            if read.error is not None:
                self._problem("exceptions", read.error)


def main() -> None:
    char_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    poller = Poller(char_dir)
    while not select.select([sys.stdin], [], [], 0)[0]:
        try:
            poller.poll_once()
        except Exception:
            poller._problem("exceptions", traceback.format_exc(limit=4))
    try:
        poller.catch_up()
    except Exception:
        poller._problem("exceptions", traceback.format_exc(limit=4))
    out.write_text(json.dumps({"stats": poller.stats, "problems": poller.problems, "event_ids": poller.ids}))


if __name__ == "__main__":
    main()
