"""Suite 2: injected I/O errors and short writes, in-process through the fault hook.

For every filesystem call of every scenario: ``EIO``, ``ENOSPC`` and ``EACCES`` injected once
(before the call, or after it: the effect happened but the call reports failure) and persistently
(that call and every later one fails, cleanup included, like a disk that stays full). Plus short
writes: one short write that the caller must continue, a short write whose continuation fails, and
every write cut to one byte.

Each case checks: the API raises (a replay round reports a stop, which the scenario turns into an
exception), it never reports a success it did not make durable, nothing durable is lost, the
folder is safe before any recovery, and once the fault clears one reconciliation converges with
every invariant of :mod:`tests.faults.harness`.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from journal import JournalError, fs
from tests.faults import crashkit
from tests.faults.harness import (
    Baseline,
    check_crashed,
    check_recovered,
    dry_pass,
    reconcile,
    scratch_dir,
)
from tests.faults.scenarios import SCENARIOS
from tests.faults.tally import count, violation

ERRNOS = (errno.EIO, errno.ENOSPC, errno.EACCES)
MODES = ("once-before", "once-after", "persistent")


class Inject:
    """Fails the ``index``-th call (or, persistently, it and every later one) with ``err``; or
    shortens writes. Records the trace and the durable appends as it goes.

    Args:
        index: the call, 0-based.
        err: errno to raise (``None``: no error).
        mode: one of :data:`MODES`.
        short: for ``write`` calls from ``index`` on: ``"once"`` (one short write of half),
            ``"then-fail"`` (a short write, then the continuation fails), ``"all"`` (every write
            of the whole run one byte at a time).
    """

    def __init__(self, index: int, err: int | None, mode: str, side: crashkit.SideChannel, short: str | None = None):
        self.index = index
        self.err = err
        self.mode = mode
        self.side = side
        self.short = short
        self.recorder = crashkit.Recorder()
        self.fired = 0
        self._n = -1
        self._shortened = False

    def __call__(self, call: fs.FsCall) -> int | None:
        if call.phase == "before":
            self._n += 1
        self.recorder(call)
        self.side.observe(call)
        if self.short is not None:
            return self._short(call)
        if self.mode == "persistent":
            hit = call.phase == "before" and self._n >= self.index
        else:
            hit = self._n == self.index and call.phase == self.mode.removeprefix("once-")
        if hit:
            self.fired += 1
            assert self.err is not None
            raise OSError(self.err, f"{os.strerror(self.err)} (injected at #{self._n} {call.op})", call.path)
        return None

    def _short(self, call: fs.FsCall) -> int | None:
        if call.op != "write" or call.phase != "before":
            return None
        if self.short == "all":
            self.fired += 1
            return 1
        if self._n == self.index and not self._shortened:
            self._shortened = True
            self.fired += 1
            return max(1, len(call.data) // 2)
        if self.short == "then-fail" and self._shortened:
            self._shortened = False  # only the continuation of the shortened write fails
            raise OSError(errno.EIO, "continuation of a short write failed (injected)", call.path)
        return None


def _cases(trace: list[crashkit.TraceCall]) -> list[tuple[int, int | None, str, str | None]]:
    """(index, errno, mode, short) for every case of one scenario."""
    calls = sorted({t.index for t in trace})
    has_after = {t.index for t in trace if t.phase == "after"}
    writes = sorted({t.index for t in trace if t.op == "write"})
    cases: list[tuple[int, int | None, str, str | None]] = []
    for i in calls:
        for err in ERRNOS:
            for mode in MODES:
                if mode == "once-after" and i not in has_after:
                    continue  # the call itself failed in the dry pass (mkdir of an existing folder)
                cases.append((i, err, mode, None))
    for i in writes:
        cases.append((i, None, "short", "once"))
        cases.append((i, None, "short", "then-fail"))
    cases.append((0, None, "short", "all"))
    return cases


def _run_case(
    name: str, template: Path, base: Baseline, work: Path, case: tuple[int, int | None, str, str | None]
) -> list[str]:
    index, err, mode, short = case
    root = work / "root"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(template, root)
    side_path = work / "side.txt"
    side_path.unlink(missing_ok=True)
    side = crashkit.SideChannel(str(side_path))
    hook = Inject(index, err, mode, side, short)
    notes: list[str] = []
    raised: BaseException | None = None
    previous = fs.set_fault_hook(hook)
    try:
        SCENARIOS[name].run(root, notes.append)
    except (OSError, JournalError) as exc:
        raised = exc
    finally:
        fs.set_fault_hook(previous)
        os.close(side.fd)
    problems: list[str] = []
    if not hook.fired:
        problems.append("the fault was never injected (the calls diverged from the dry pass)")
    expect_success = short in ("once", "all")
    if raised is None and not expect_success:
        count("silent successes")
        problems.append(f"silent success: the API returned normally ({notes}) although a call failed")
    if raised is not None and expect_success:
        problems.append(f"a short write that was continued made the API fail: {raised!r}")
    if raised is None:
        # A success must be durable: nothing volatile left when the last call returned.
        problems += [
            f"success not durable: {p}" for p in crashkit.durability_violations(hook.recorder.trace, returned=True)
        ]
    durable, _ = crashkit.read_side(side_path)
    problems += check_crashed(root, base, durable)
    report = reconcile(root)  # the fault has cleared
    problems += check_recovered(root, base, durable, report)
    return problems


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_injected_errors_raise_lose_nothing_and_recovery_converges(name):
    scenario = SCENARIOS[name]
    found: list[str] = []
    with scratch_dir() as work:
        template = work / "template"
        scenario.prepare(template)
        base = Baseline.of(template, compaction=scenario.compaction)
        dry = work / "dry"
        shutil.copytree(template, dry)
        trace, _, error = dry_pass(name, dry)
        assert error is None
        cases = _cases(trace)
        for case in cases:
            problems = _run_case(name, template, base, work, case)
            count("fault cases")
            index, err, mode, short = case
            what = f"{errno.errorcode[err]} {mode}" if err is not None else f"short write ({short})"
            op = next(t for t in trace if t.index == index)
            for p in problems:
                message = f"{name} #{index} {op.op} {crashkit.normalize(op.path, dry)} {what}: {p}"
                violation(message)
                found.append(message)
    assert not found, "\n".join(found[:30])
