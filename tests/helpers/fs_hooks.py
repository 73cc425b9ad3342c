"""The fault hook of :mod:`journal.fs` for tests: install one, record the calls, fail the Nth."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Iterator

from journal import fs


@contextlib.contextmanager
def fault_hook(hook: Callable[[fs.FsCall], int | None]) -> Iterator[None]:
    """Install ``hook`` for the block; the previous hook comes back afterwards."""
    previous = fs.set_fault_hook(hook)
    try:
        yield
    finally:
        fs.set_fault_hook(previous)


@contextlib.contextmanager
def recorded() -> Iterator[list[fs.FsCall]]:
    """Every filesystem call made in the block (both phases), in order."""
    calls: list[fs.FsCall] = []

    def hook(call: fs.FsCall) -> None:
        calls.append(call)

    with fault_hook(hook):
        yield calls


def ops(calls: list[fs.FsCall]) -> list[str]:
    """The effects in order (one entry per call, taken from the ``before`` phase)."""
    return [c.op for c in calls if c.phase == "before"]


def fail_at(index: int, phase: str = "before", error: int = errno.EIO) -> Callable[[fs.FsCall], None]:
    """A hook raising ``OSError`` at the ``index``-th call (0-based, counting ``before`` phases)."""
    seen = [-1]

    def hook(call: fs.FsCall) -> None:
        if call.phase == "before":
            seen[0] += 1
        if seen[0] == index and call.phase == phase:
            raise OSError(error, f"injected failure at {call.op}", call.path)

    return hook
