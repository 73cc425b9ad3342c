"""Fault hooks shared by the tests and the forked children of ``_zygote``.

* :class:`Recorder` counts and records every filesystem call of a run (the dry pass);
* :class:`CrashHook` kills the process with ``os._exit`` immediately before or after the Nth call,
  optionally after tearing that call's write itself;
* :func:`durability_violations` checks a recorded trace for ALICE-style ordering mistakes that a
  process crash cannot show (data renamed before it was fsynced, a commit point reached while an
  earlier effect is not yet durable, success reported with something still volatile);
* :func:`writer_main` is the kill soak's writer.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from journal import fs
from journal.events import JOURNAL_NAME, SENTINEL_NAME

#: Exit codes of a crash child.
EXIT_FINISHED = 0  # the scenario returned before the chosen call was reached
EXIT_CRASHED = 77  # died at the chosen call, as planned
EXIT_DIVERGED = 78  # the chosen call was not the one the dry pass saw there
EXIT_ERROR = 3  # the scenario raised

#: Torn-write variants: how much of the write lands before the crash.
TORN_VARIANTS = ("zero", "one", "half", "all_but_one", "nul", "half_nul")

_TEMP_RE = re.compile(re.escape(fs.TEMP_PREFIX) + r"[0-9a-f]{8}" + re.escape(fs.TEMP_SUFFIX))
_SHARD_RE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})_[0-9a-f]{8}\.json")


def torn_bytes(data: bytes, variant: str) -> bytes:
    """The bytes of ``data`` that reach the file when the write is torn as ``variant``.

    ``nul``: the file grows by the full length but the content is zeros (size metadata reached the
    disk, the data blocks did not); ``half_nul``: half the data, then zeros up to the full length.
    """
    n = len(data)
    if variant == "zero":
        return b""
    if variant == "one":
        return data[:1]
    if variant == "half":
        return data[: n // 2]
    if variant == "all_but_one":
        return data[: max(0, n - 1)]
    if variant == "nul":
        return b"\0" * n
    if variant == "half_nul":
        return data[: n // 2] + b"\0" * (n - n // 2)
    raise ValueError(variant)


def normalize(path: str, root: str | os.PathLike[str]) -> str:
    """A call's path relative to the memory root, with random temp and shard names masked."""
    rel = os.path.relpath(path, os.fspath(root))
    rel = _TEMP_RE.sub(fs.TEMP_PREFIX + "*" + fs.TEMP_SUFFIX, rel)
    return _SHARD_RE.sub(r"\1_*.json", rel)


def is_temp(path: str) -> bool:
    return _TEMP_RE.fullmatch(os.path.basename(path)) is not None


@dataclass(frozen=True)
class TraceCall:
    """One offered phase of a filesystem call, as recorded in-process.

    Attributes:
        index: 0-based number of the call (its ``before`` and ``after`` share it).
        op, phase, path, fd: as :class:`journal.fs.FsCall`.
        size: for ``write`` before: the length of the data.
        existed: for ``open`` before: whether the path existed (a create makes its folder dirty).
    """

    index: int
    op: str
    phase: str
    path: str
    fd: int
    size: int = 0
    existed: bool = True


class Recorder:
    """A fault hook that records every call and injects nothing (the dry pass)."""

    def __init__(self) -> None:
        self.trace: list[TraceCall] = []
        self._n = -1

    def __call__(self, call: fs.FsCall) -> int | None:
        if call.phase == "before":
            self._n += 1
        existed = os.path.lexists(call.path) if (call.op == "open" and call.phase == "before") else True
        self.trace.append(TraceCall(self._n, call.op, call.phase, call.path, call.fd, len(call.data), existed))
        return None

    @property
    def calls(self) -> int:
        return self._n + 1


@dataclass(frozen=True)
class CrashPoint:
    """Where a child dies.

    Attributes:
        index: the call, 0-based.
        phase: ``before`` or ``after``.
        op: the call's op in the dry pass (checked by the child).
        where: the call's normalized path in the dry pass (checked by the child).
        torn: for a ``write`` ``before``: how much of it lands first (:data:`TORN_VARIANTS`).
    """

    index: int
    phase: str
    op: str
    where: str
    torn: str | None = None

    @property
    def label(self) -> str:
        torn = f" torn={self.torn}" if self.torn else ""
        return f"#{self.index} {self.phase} {self.op} {self.where}{torn}"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "phase": self.phase, "op": self.op, "where": self.where, "torn": self.torn}


def crash_points(trace: list[TraceCall], root: str | os.PathLike[str]) -> list[CrashPoint]:
    """Every crash point of a dry-pass trace: before and after each call (only the phases that
    happened), plus each torn variant of every write."""
    points: list[CrashPoint] = []
    for t in trace:
        where = normalize(t.path, root)
        points.append(CrashPoint(t.index, t.phase, t.op, where))
        if t.op == "write" and t.phase == "before":
            points.extend(CrashPoint(t.index, "before", t.op, where, v) for v in TORN_VARIANTS)
    return points


class SideChannel:
    """Lines a crash child leaves for its parent, written with raw ``os.write`` (they survive
    ``os._exit``): ``durable <event_id>`` once an appended event's fsync returned, and
    ``returned <what>`` once an API call returned."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._pending: list[str] = []

    def note(self, what: str) -> None:
        os.write(self.fd, f"returned {what}\n".encode())

    def observe(self, call: fs.FsCall) -> None:
        if os.path.basename(call.path) != JOURNAL_NAME:
            return
        if call.op == "write" and call.phase == "before":
            for raw in call.data.split(b"\n"):
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("event_id"), str):
                    self._pending.append(obj["event_id"])
        elif call.op == "fsync" and call.phase == "after":
            for eid in self._pending:
                os.write(self.fd, f"durable {eid}\n".encode())
            self._pending.clear()


def read_side(path: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """``(durable event ids, returned notes)`` left by a child."""
    durable: list[str] = []
    returned: list[str] = []
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return durable, returned
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        (durable if kind == "durable" else returned).append(rest)
    return durable, returned


class CrashHook:
    """Dies with ``os._exit`` at one :class:`CrashPoint` (tearing its write first, if asked)."""

    def __init__(self, point: CrashPoint, root: str, side: SideChannel | None) -> None:
        self.point = point
        self.root = root
        self.side = side
        self._n = -1

    def __call__(self, call: fs.FsCall) -> int | None:
        if call.phase == "before":
            self._n += 1
        if self._n == self.point.index and call.phase == self.point.phase:
            if call.op != self.point.op or normalize(call.path, self.root) != self.point.where:
                os._exit(EXIT_DIVERGED)
            if self.point.torn is not None:
                data = torn_bytes(call.data, self.point.torn)
                if data:
                    os.write(call.fd, data)
            os._exit(EXIT_CRASHED)
        if self.side is not None:
            self.side.observe(call)
        return None


# -- durability order (ALICE-style checks on a recorded trace) ----------------------------------------


def durability_violations(trace: list[TraceCall], *, returned: bool) -> list[str]:
    """Ordering mistakes in a trace that a process crash cannot reveal but a power loss would.

    Rules (each effect is taken at its ``after`` phase):

    * an atomic replace publishes only fsynced data (no temp file has unsynced writes at the
      ``replace``);
    * write-ahead: when a view, shard or sentinel is replaced, the journal has no unsynced append
      and its creation is durable (its folder fsynced);
    * the sentinel is the commit point: when it is replaced, every earlier effect is durable (no
      unsynced data, no folder with an unsynced create, rename, mkdir or unlink);
    * success means durable: when the call returned normally, nothing is left volatile.

    Creating and removing our own temp files are not effects that need durability.
    """
    unsynced: set[str] = set()
    dirty: dict[str, str] = {}  # folder -> what made it dirty
    journal_dirty: set[str] = set()
    creates: dict[int, bool] = {}
    out: list[str] = []
    for t in trace:
        name = os.path.basename(t.path)
        folder = os.path.dirname(t.path)
        if t.phase == "before":
            if t.op == "open":
                creates[t.index] = not t.existed
            if t.op == "replace":
                temps = sorted(os.path.basename(p) for p in unsynced if is_temp(p))
                if temps:
                    out.append(f"#{t.index} replace {name}: temp data not fsynced ({', '.join(temps)})")
                if name != JOURNAL_NAME:
                    if any(os.path.basename(p) == JOURNAL_NAME for p in unsynced):
                        out.append(f"#{t.index} replace {name} while a journal append is not fsynced")
                    if journal_dirty:
                        out.append(f"#{t.index} replace {name} while the journal's creation is not durable")
                if name == SENTINEL_NAME:
                    volatile = sorted({os.path.basename(p) for p in unsynced if not is_temp(p)})
                    if volatile or dirty:
                        out.append(
                            f"#{t.index} sentinel replaced while not durable: data {volatile}, "
                            f"folders {sorted(f'{os.path.basename(d)} ({why})' for d, why in dirty.items())}"
                        )
            continue
        # after: the effect happened
        if t.op == "open":
            if creates.get(t.index) and not is_temp(t.path):
                dirty[folder] = f"created {name}"
                if name == JOURNAL_NAME:
                    journal_dirty.add(folder)
        elif t.op in ("write", "truncate"):
            unsynced.add(t.path)
        elif t.op == "fsync":
            unsynced.discard(t.path)
        elif t.op == "replace":
            dirty[folder] = f"renamed onto {name}"
        elif t.op == "mkdir":
            dirty[os.path.dirname(t.path.rstrip("/"))] = f"mkdir {name}"
        elif t.op == "unlink":
            unsynced.discard(t.path)
            if not is_temp(t.path):
                dirty[folder] = f"unlinked {name}"
        elif t.op == "fsync_dir":
            dirty.pop(t.path, None)
            journal_dirty.discard(t.path)
    if returned:
        volatile = sorted({os.path.basename(p) for p in unsynced if not is_temp(p)})
        if volatile or dirty:
            out.append(f"returned with volatile effects: data {volatile}, folders {sorted(dirty.values())}")
    return out


# -- the kill soak's writer ------------------------------------------------------------------------------


def writer_main(root: str, ack_fd: int, seed: int, max_seconds: float = 20.0) -> None:
    """Recover like a restarting server, then write until killed, acknowledging each event.

    An ack (``<event_id>\\n`` on ``ack_fd``, one ``write`` below PIPE_BUF, so atomic) is sent only
    after the call that made the event durable returned. Mostly ``record_and_save`` of evidence
    snapshots on random entries; sometimes a bare ``append`` (a durable, not yet applied event, as a
    crashed writer leaves it), sometimes an archive of a reflection or a persona entry.
    """
    import time

    from journal import EventLog, Reconciler
    from tests.faults import scenarios as sc

    log = EventLog(root)
    Reconciler(log).reconcile(sc.CHAR)
    os.write(ack_fd, f"up {os.getpid()}\n".encode())
    rng = random.Random(seed)
    base = seed * 100_000
    deadline = time.monotonic() + max_seconds
    i = 0
    while time.monotonic() < deadline:
        i += 1
        n = base + i
        roll = rng.random()
        if roll < 0.015:
            refl = sc.load_reflection_ids(Path(root))
            if len(refl) > 12:
                ev = log.archive_reflection(sc.CHAR, rng.choice(refl), today=sc.TODAY)
                if ev is not None:
                    os.write(ack_fd, f"{ev.event_id}\n".encode())
            continue
        if roll < 0.025:
            persona = sc.load_persona_ids(Path(root), "neko")
            if len(persona) > 6:
                ev = log.archive_persona_entry(sc.CHAR, "neko", rng.choice(persona), today=sc.TODAY)
                if ev is not None:
                    os.write(ack_fd, f"{ev.event_id}\n".encode())
            continue
        if rng.random() < 0.5:
            event_type, payload = "reflection.evidence_updated", sc.refl_evidence(rng.choice(sc.SOAK_REFLECTIONS), n)
        else:
            event_type, payload = (
                "persona.evidence_updated",
                sc.persona_evidence("neko", rng.choice(sc.SOAK_PERSONA), n),
            )
        # A bare append is what a writer killed between its append and its view save leaves.
        ev = log.append(sc.CHAR, event_type, payload) if roll < 0.06 else sc.record(log, event_type, payload)
        os.write(ack_fd, f"{ev.event_id}\n".encode())
    os._exit(0)
