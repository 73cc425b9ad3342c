"""One full guarded replay (plan, backup, apply, verify) of a folder with a pending tail reads the
journal at most twice and hashes it whole at most twice (issue 28).

The reads are counted where every reader of the journal classifies its bytes
(:class:`journal.reader.JournalScanner`): a *full parse* is a scanner that starts at the first byte
and goes through the whole file; reads from an offset (the pending tail, again with its payloads)
are counted in bytes. The hashes are counted at SHA-256 itself: a *whole hash* is a digest equal to
the SHA-256 of the whole journal, whoever computed it (the backup's manifest and its check of the
copy are two); every byte hashed is counted too.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from inspector.core import replay as gr
from inspector.core.prompter import HeadlessPrompter
from inspector.core.replay import ReplayRequest
from inspector.core.replay import fingerprints as replay_fingerprints
from journal import fs
from journal import reader as reader_module
from journal.events import JOURNAL_NAME, encode_event, new_event
from journal.log import EventLog
from journal.reconcile import Reconciler
from journal.views import write_sentinel
from tests.inspector.replay_cases import CHARACTER, _append_pending_tail, build_case

pytestmark = pytest.mark.usefixtures("replay_env")

#: Events behind the sentinel, so that the journal is much larger than its pending tail.
APPLIED = 400


def _folder(root: Path) -> tuple[Path, int]:
    """A healthy folder with ``APPLIED`` more events behind the sentinel, then a pending tail;
    returns the folder and the byte offset where the tail starts."""
    cd = build_case(root, "healthy")
    last = None
    for i in range(APPLIED):
        # Applied by the sentinel's claim; none names an entry of the views, so none is suspect.
        last = new_event("reflection.evidence_updated", {"reflection_id": f"ref_gone_{i:012d}", "reinforcement": 1.0})
        fs.durable_append(cd / JOURNAL_NAME, encode_event(last))
    assert last is not None
    write_sentinel(cd, last.event_id)
    tail_at = (cd / JOURNAL_NAME).stat().st_size
    _append_pending_tail(EventLog(root))
    return cd, tail_at


class _Counts:
    """Scanners of the journal (where each started, how many bytes it classified) and SHA-256s."""

    def __init__(self) -> None:
        self.scanners: list[list[int]] = []  # [start offset, bytes scanned]
        self.digests: list[str] = []
        self.hashed = 0

    def full_parses(self, size: int) -> int:
        return sum(1 for start, n in self.scanners if start == 0 and n >= size)

    def bytes_parsed(self) -> int:
        return sum(n for _start, n in self.scanners)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> _Counts:
    c = _Counts()
    scanner = reader_module.JournalScanner
    real_init, real_scan, real_finish = scanner.__init__, scanner._scan, scanner.finish
    own: dict[int, list[int]] = {}

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        own[id(self)] = entry = [self.offset, 0]
        c.scanners.append(entry)

    def scan(self: Any, data: bytes, end: int, events: list[Any], defects: list[Any]) -> None:
        own[id(self)][1] += end + 1
        real_scan(self, data, end, events, defects)

    def finish(self: Any, events: list[Any], defects: list[Any]) -> None:
        own[id(self)][1] += self.pending_bytes
        real_finish(self, events, defects)

    monkeypatch.setattr(scanner, "__init__", init)
    monkeypatch.setattr(scanner, "_scan", scan)
    monkeypatch.setattr(scanner, "finish", finish)

    real_sha256 = hashlib.sha256

    class Counting:
        def __init__(self, data: bytes = b"", **kwargs: Any) -> None:
            self._h = real_sha256(data, **kwargs)
            c.hashed += len(data)

        def update(self, data: bytes) -> None:
            self._h.update(data)
            c.hashed += len(data)

        def hexdigest(self) -> str:
            out = self._h.hexdigest()
            c.digests.append(out)
            return out

        def digest(self) -> bytes:
            out = self._h.digest()
            c.digests.append(out.hex())
            return out

    monkeypatch.setattr(hashlib, "sha256", Counting)
    return c


def test_one_guarded_replay_parses_the_journal_twice_and_hashes_it_whole_twice(root, backups, counts, monkeypatch):
    # The fingerprints hash the journal's last 4 MiB, all of a small journal: scaled down here, so
    # that this journal is to its hashed end what a journal of a million events is to 4 MiB.
    monkeypatch.setattr(replay_fingerprints, "JOURNAL_TAIL_BYTES", 1024)
    cd, tail_at = _folder(root)
    journal = cd / JOURNAL_NAME
    size = journal.stat().st_size
    whole = hashlib.sha256(journal.read_bytes()).hexdigest()  # (counted: taken off below)
    counts.digests.clear()
    counts.hashed = 0
    tail = size - tail_at
    assert tail * 20 < size

    run = gr.run_guarded_replay(ReplayRequest(root, CHARACTER, backup_root=backups), HeadlessPrompter(True))

    assert run.status == "applied" and run.outcome is not None and run.outcome.mismatches == []
    assert run.plan is not None and run.plan.predicted_by == "engine"  # no scratch copy was made
    assert len(run.outcome.applied) == 4 and run.outcome.after is not None and run.outcome.after.pending == 0
    # The plan's diagnosis and the real reconciler read the journal; the verify does not again.
    assert counts.full_parses(size) == 2
    assert counts.bytes_parsed() <= 2 * size + 4 * tail
    # The backup hashes it whole (its manifest, then its check of the copy); the fingerprints do not.
    assert counts.digests.count(whole) == 2
    assert counts.hashed <= 2 * size + 8 * tail + 64 * 1024  # + the ends, the views, the manifest


def test_the_verify_reads_the_journal_again_when_it_changed_during_the_apply(root, backups, counts, monkeypatch):
    cd, _tail_at = _folder(root)
    real = Reconciler.reconcile

    def reconcile_then_append(self: Reconciler, character: str, **kwargs: Any) -> Any:
        report = real(self, character, **kwargs)
        EventLog(root).append(CHARACTER, "reflection.evidence_updated", {"reflection_id": "ref_00000000000000a1"})
        return report

    monkeypatch.setattr(Reconciler, "reconcile", reconcile_then_append)
    plan = gr.make_plan(gr.target_of(root, CHARACTER))
    outcome = gr.execute(plan, backup_root=backups)
    size = (cd / JOURNAL_NAME).stat().st_size
    assert outcome.after is not None and outcome.after.events == plan.total_events + 1  # read afresh
    assert outcome.after.pending == 1
    assert counts.full_parses(size) == 1  # the verify's (the plan and the reconciler read it shorter)
