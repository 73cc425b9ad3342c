"""The journal repair as a fault-regime scenario (issue 24): a folder whose journal the memory server
cannot read, and the repair that moves its bytes that are not UTF-8 into ``events.ndjson.damaged``.

Kept apart from :data:`tests.faults.scenarios.SCENARIOS`, whose recovery invariants are the
reconciler's: the repair's own invariants are in :mod:`tests.faults.test_repair_faults`, and its
crash children come from ``tests.faults._repair_zygote``, which adds these scenarios to the fork
server's table in its own process only.
"""

from __future__ import annotations

from pathlib import Path

from journal.repair import repair_journal
from tests.faults.scenarios import CHAR, Note, Scenario, _noop, applied_history
from tests.journal import _repair_kit as kit


def prepare_undecodable(root: Path) -> None:
    """Four applied events, then (as crashes and the memory server leave them) a whole line that is
    not UTF-8, an ASCII damaged line, a record glued onto a torn UTF-8 fragment, one more record and
    a torn UTF-8 last line."""
    applied_history(root)
    kit.several(root / CHAR)


def run_repair(root: Path, note: Note = _noop) -> None:
    repair_journal(root / CHAR)
    note("repair")


REPAIR_SCENARIOS: dict[str, Scenario] = {
    s.name: s for s in (Scenario("journal_repair", prepare_undecodable, run_repair),)
}
