"""The outbox part of a comparison: operations added and finished, by op id (:mod:`journal.outbox`
reads both sides)."""

from __future__ import annotations

import os

from inspector.core.compare.value import OutboxDiff
from journal.outbox import read_outbox


def compare_outboxes(a_dir: str | os.PathLike[str], b_dir: str | os.PathLike[str]) -> OutboxDiff:
    """Pending ops only B has (added), ops pending in A that B no longer has pending (finished),
    and dead letters only B has."""
    a, b = read_outbox(a_dir), read_outbox(b_dir)
    a_pending = [op.op_id for op in a.pending]
    b_pending = [op.op_id for op in b.pending]
    a_dead = {op.op_id for op in a.dead_letters}
    in_a, in_b = set(a_pending), set(b_pending)
    return OutboxDiff(
        added=tuple(o for o in b_pending if o not in in_a),
        finished=tuple(o for o in a_pending if o not in in_b),
        dead_lettered=tuple(op.op_id for op in b.dead_letters if op.op_id not in a_dead),
    )
