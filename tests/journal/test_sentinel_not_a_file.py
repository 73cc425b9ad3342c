"""A sentinel that is not a regular file (issue 23 item 4): said what it is, never guessed at.

A FIFO where ``events_applied.json`` should be is not "missing": our reader refuses it (opening it
would block), our replay refuses to run (it would replace the FIFO and replay everything on a
guess), and what the memory server's start does is not predicted (its plain ``open()`` blocks on
a FIFO): its sentinel is ``unknown``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from journal.diagnosis import diagnose_character
from journal.events import SENTINEL_NAME
from journal.fixtures import healthy, pending_tail
from journal.log import EventLog
from journal.reconcile import Reconciler
from journal.views import read_sentinel

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def _fifo_sentinel(root: Path, build=pending_tail) -> Path:
    cd = build(root).path
    (cd / SENTINEL_NAME).unlink()
    os.mkfifo(cd / SENTINEL_NAME)
    return cd


def _hashes(cd: Path) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for p in sorted(cd.rglob("*")):
        mode = p.lstat().st_mode
        out[str(p.relative_to(cd))] = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(mode) else oct(mode)
    return out


def test_the_reader_refuses_a_fifo_sentinel_and_says_what_it_is(tmp_path: Path) -> None:
    cd = _fifo_sentinel(tmp_path)
    read = read_sentinel(cd)
    assert read.state == "refused" and read.message is not None and "FIFO" in read.message


def test_a_folder_where_the_sentinel_should_be_is_refused_too(tmp_path: Path) -> None:
    cd = healthy(tmp_path).path
    (cd / SENTINEL_NAME).unlink()
    (cd / SENTINEL_NAME).mkdir()
    assert read_sentinel(cd).state == "refused"
    assert diagnose_character(cd).sentinel.state == "refused"


def test_check_says_refused_for_ours_and_unknown_for_the_server(tmp_path: Path) -> None:
    cd = _fifo_sentinel(tmp_path)
    d = diagnose_character(cd)
    assert d.sentinel.state == "refused"
    codes = {(f.code, f.severity) for f in d.findings}
    assert ("input.refused", "warning") in codes
    assert not {c for c, _ in codes} & {"sentinel.missing", "server.full_replay"}
    pending = next(f for f in d.findings if f.code == "tail.pending")
    assert "refuses to run" in pending.message and "FIFO" in pending.message
    s = d.server_start
    assert s is not None and s.sentinel.state == "unknown" and s.replays == 0 and not s.changes
    assert "cannot be predicted" in s.summary()
    assert d.tail is None  # the engine is not run on a guess
    assert d.counts()["pending"] == len(d.events)


def test_the_reconciler_refuses_and_writes_nothing(tmp_path: Path) -> None:
    cd = _fifo_sentinel(tmp_path)
    before = _hashes(cd)
    with pytest.raises(OSError, match="where the sentinel stands is unknown"):
        Reconciler(EventLog(tmp_path)).reconcile(cd.name)
    assert _hashes(cd) == before
    assert stat.S_ISFIFO((cd / SENTINEL_NAME).lstat().st_mode)
