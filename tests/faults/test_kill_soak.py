"""Suite 4: random SIGKILL soak of a writer that acknowledges only after ``record_and_save`` returned.

A forked writer (see :func:`tests.faults.crashkit.writer_main`) first recovers like a restarting
server, then writes until it is killed, sending each event id on a pipe once the call that made it
durable returned. The parent kills it with SIGKILL at a random moment (seeded; the delays are
random on purpose), restarts it, and after every kill checks that every acknowledged event is in
the journal. At the end one recovery must leave the folder satisfying every invariant of
:mod:`tests.faults.harness`, with the acknowledged events as the durable set.

The journal lives on the real disk (``tmp_path``), so the writer spends its time in real fsyncs.
``MI_SOAK_KILLS`` (default 200) sets the number of kills; ``MI_SOAK_SEED`` the seed.
"""

from __future__ import annotations

import os
import random
import select
import signal
import time
from collections.abc import Callable

import pytest

from journal import read_journal
from journal.events import JOURNAL_NAME
from tests.faults.harness import Baseline, check_recovered, reconcile, zygote
from tests.faults.scenarios import CHAR, prepare_soak
from tests.faults.tally import count, violation

KILLS = int(os.environ.get("MI_SOAK_KILLS", "200"))
SEED = int(os.environ.get("MI_SOAK_SEED", "7"))
#: A safety bound only: the default run takes well under a minute (8 s on an idle machine), but
#: beside the suite's other workers on a loaded machine (load 8) fsyncs are slow and the loop runs
#: on until enough writes were acknowledged; the cap leaves it the time to get there.
TIME_CAP = max(300.0, KILLS * 1.5)


class Acks:
    """Reads ``<event_id>`` / ``up <pid>`` lines from the non-blocking ack pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.ids: list[str] = []
        self.starts = 0
        self.up: set[int] = set()
        self._buf = b""

    def drain(self, timeout: float = 0.0, until: Callable[[], bool] | None = None) -> None:
        """Read acks for ``timeout`` seconds, or until ``until()`` holds."""
        deadline = time.monotonic() + timeout
        while until is None or not until():
            remaining = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                return
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                return
            self._buf += chunk
            *lines, self._buf = self._buf.split(b"\n")
            for line in lines:
                text = line.decode()
                if text.startswith("up "):
                    self.starts += 1
                    self.up.add(int(text[3:]))
                else:
                    self.ids.append(text)


@pytest.mark.slow
@pytest.mark.timeout(TIME_CAP + 300)  # a long MI_SOAK_KILLS run outlasts the suite's 600 s default
def test_sigkill_soak_loses_no_acknowledged_event(tmp_path):
    root = tmp_path / "root"
    prepare_soak(root)
    base = Baseline.of(root)
    rng = random.Random(SEED)
    r, w = os.pipe()
    os.set_blocking(r, False)
    acks = Acks(r)
    found: list[str] = []
    kills = 0
    started = time.monotonic()
    try:
        with zygote(pass_fds=(w,)) as z:
            ack_fd = w  # pass_fds keeps descriptor numbers: the zygote's children write here
            os.close(w)
            w = -1
            # At least KILLS kills, and on, up to the time cap, until enough writes were acknowledged
            # for the soak to mean something: a loaded machine's fsyncs are slow, so fewer writes
            # land inside each random delay.
            while (kills < KILLS or len(acks.ids) < KILLS // 2) and time.monotonic() - started < TIME_CAP:
                pid = z.request({"op": "writer", "root": str(root), "ack_fd": ack_fd, "seed": kills + 1})["pid"]
                # Kill early (during its startup recovery), or at a random moment of its write loop:
                # then the delay counts from its "up" line, so a loaded machine still gets kills
                # inside writes (waiting for the line is a bounded poll).
                if rng.random() < 0.3:
                    acks.drain(rng.uniform(0, 0.012))
                else:
                    acks.drain(10, until=lambda pid=pid: pid in acks.up)
                    acks.drain(rng.uniform(0, 0.06))
                os.kill(pid, signal.SIGKILL)
                code = z.request({"op": "reap", "pid": pid})["code"]
                acks.up.discard(pid)  # a later writer may get the same pid
                kills += 1
                count("kills")
                if code != -signal.SIGKILL:
                    found.append(f"writer {kills} did not die by SIGKILL (exit {code}): {z.stderr()}")
                    break
                acks.drain()
                ids = {e.event_id for e in read_journal(root / CHAR / JOURNAL_NAME).events}
                lost = [a for a in acks.ids if a not in ids]
                if lost:
                    found.append(f"after kill {kills} (seed {SEED}): acknowledged events lost: {lost}")
                    break
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    count("kill soak seconds", time.monotonic() - started)
    count("acknowledged events", len(acks.ids))
    report = reconcile(root)
    found += [f"final recovery (seed {SEED}): {p}" for p in check_recovered(root, base, acks.ids, report)]
    for message in found:
        violation(message)
    assert not found, "\n".join(found[:20])
    assert kills >= KILLS, f"only {kills} kills in {TIME_CAP:.0f} s"
    assert acks.starts >= KILLS // 2, "most writers were killed before they even started writing"
    assert len(acks.ids) >= KILLS // 2, "too few acknowledged events for the soak to mean anything"
