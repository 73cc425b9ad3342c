"""Read-only reader of ``outbox.ndjson``: pending background operations, attempts, dead letters.

The outbox (memory-format §5.1) is a second append-only log beside the event journal. The memory
server appends three kinds of line per operation (``op_id``, a uuid4):

- ``{"op_id", "type", "payload", "status": "pending", "ts"}`` when the operation is queued;
- ``{"op_id", "status": "attempt", "ts"}`` after each failed run (newest servers);
- ``{"op_id", "status": "done", "ts"}`` when it succeeded, **or** when it was abandoned.

**How a dead letter is recognised.** The done line of an abandoned operation is byte-for-byte the
same shape as a success. The runner writes it only after the attempt line that brings the op's
count of attempt lines to ``MEMORY_LIVENESS_MAX_ATTEMPTS`` (5); a success can follow at most 4
attempt lines, because the fifth failure abandons the op. So an op whose done line is preceded by
at least 5 of its attempt lines is a dead letter. An op still pending with 5 or more attempts is
reported as pending with that count (the next startup abandons it without running it).

Reading follows the server's scan exactly: unparseable lines and records without an ``op_id`` are
skipped, a later pending line for the same id replaces the earlier one, and a done line closes the
op. This module never writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal import fs
from journal.codec import loads_exact

OUTBOX_NAME = "outbox.ndjson"

#: Attempts after which the memory server abandons an operation (``config.MEMORY_LIVENESS_MAX_ATTEMPTS``).
MEMORY_LIVENESS_MAX_ATTEMPTS = 5

#: Operation types the memory server knows (wire values).
OUTBOX_OP_TYPES = frozenset(
    {"extract_facts", "persist_prompt_locale", "synth_reflection", "check_feedback", "resolve_corrections"}
)


@dataclass(slots=True)
class OutboxOp:
    """One outbox operation that is not simply finished.

    Attributes:
        op_id: the operation id.
        type: the operation type from its pending line (``None`` when it had none).
        status: ``pending`` (no done line yet) or ``dead_letter`` (abandoned after
            :data:`MEMORY_LIVENESS_MAX_ATTEMPTS` attempts).
        attempts: failed attempts recorded for it.
        ts: ``ts`` of its (last) pending line.
        line: 1-based line of its (last) pending line; for a dead letter without a pending line,
            the line of its done line.
    """

    op_id: str
    type: str | None
    status: str  # "pending" | "dead_letter"
    attempts: int
    ts: str | None
    line: int


@dataclass(slots=True)
class OutboxRead:
    """The whole outbox, read once.

    Attributes:
        present: the file exists.
        lines: physical lines, blank ones included.
        bad_lines: lines that are not JSON objects with a string ``op_id`` (skipped, as upstream).
        pending: operations with a pending line and no done line, in the order the server scans them.
        dead_letters: operations abandoned after too many attempts, in the order of their done line.
        done: operations finished normally.
        error: why the file could not be read, when it could not.
    """

    present: bool = False
    lines: int = 0
    bad_lines: int = 0
    pending: list[OutboxOp] = field(default_factory=list)
    dead_letters: list[OutboxOp] = field(default_factory=list)
    done: int = 0
    error: str | None = None


def parse_outbox(data: bytes) -> OutboxRead:
    """Classify the bytes of an outbox file (see the module docstring); never raises on content."""
    result = OutboxRead(present=True)
    pending: dict[str, OutboxOp] = {}
    attempts: dict[str, int] = {}
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    result.lines = len(lines)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            rec: Any = loads_exact(raw.strip())
        except ValueError:
            result.bad_lines += 1
            continue
        op_id = rec.get("op_id") if isinstance(rec, dict) else None
        if not isinstance(op_id, str) or not op_id:
            result.bad_lines += 1
            continue
        status = rec.get("status")
        if status == "pending":
            op_type = rec.get("type")
            ts = rec.get("ts")
            # A later pending line replaces the earlier one (keeping its place, as upstream's dict does).
            pending[op_id] = OutboxOp(
                op_id,
                op_type if isinstance(op_type, str) else None,
                "pending",
                0,
                ts if isinstance(ts, str) else None,
                number,
            )
        elif status == "attempt":
            attempts[op_id] = attempts.get(op_id, 0) + 1
        elif status == "done":
            op = pending.pop(op_id, None)
            count = attempts.get(op_id, 0)
            if count >= MEMORY_LIVENESS_MAX_ATTEMPTS:
                if op is None:
                    op = OutboxOp(op_id, None, "dead_letter", count, None, number)
                op.status = "dead_letter"
                op.attempts = count
                result.dead_letters.append(op)
            else:
                result.done += 1
    for op in pending.values():
        op.attempts = attempts.get(op.op_id, 0)
    result.pending = list(pending.values())
    return result


def read_outbox(path: str | os.PathLike[str]) -> OutboxRead:
    """Read ``outbox.ndjson`` (or the outbox of a character folder, when given a folder).

    Never raises: a missing file gives ``present=False``; an unreadable one, or one that is not a
    regular file (never read, so a FIFO cannot block: :func:`journal.fs.open_regular`), sets
    ``error``.
    """
    p = Path(path)
    if p.name != OUTBOX_NAME and p.is_dir():
        p = p / OUTBOX_NAME
    try:
        with fs.open_regular(p) as fh:
            data = fh.read()
    except FileNotFoundError:
        return OutboxRead()
    except OSError as exc:
        return OutboxRead(present=True, error=f"cannot read {p.name}: {exc.strerror or exc}")
    return parse_outbox(data)
