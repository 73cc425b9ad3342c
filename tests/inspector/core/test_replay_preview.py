"""The detail pane's replay preview: what replaying up to one event does, per-entry holds included."""

from __future__ import annotations

from pathlib import Path

from inspector.core.replay_preview import preview_replay
from journal import fixtures as folders
from journal.diagnosis import diagnose_path
from journal.fixtures import PERSONA_ENTRY, Deterministic, Writer, reflection_evidence_payload


def _events(root: Path):
    [c] = diagnose_path(root).characters
    return c


def test_a_blocked_event_cannot_apply_and_holds_its_entry(tmp_path: Path) -> None:
    folders.persona_drift(tmp_path)
    c = _events(tmp_path)
    assert c.blocked is not None
    p = preview_replay(c.path, c.blocked)
    assert not p.reached
    assert p.summary.startswith("Replay cannot apply this event:") and "holds the entries it touches" in p.summary


def test_an_event_of_the_held_entry_waits_and_one_of_another_entry_applies(tmp_path: Path) -> None:
    b = folders.persona_drift(tmp_path)
    w = Writer(tmp_path, b.name, Deterministic("preview"))
    key, pid = PERSONA_ENTRY
    same = w.append_only("persona.evidence_updated", folders.persona_evidence_payload(key, pid, 3.0, at=w.now()))
    other = w.append_only(
        "reflection.evidence_updated", reflection_evidence_payload(folders.REFLECTION_IDS[0], 3.3, at=w.now())
    )
    c = _events(tmp_path)
    by_id = {e.event_id: e for e in c.events}
    held = preview_replay(c.path, by_id[same.event_id])
    assert not held.reached
    assert held.summary.startswith("Replay holds this event: an earlier event of the same entry cannot be applied")
    applies = preview_replay(c.path, by_id[other.event_id])
    assert applies.reached and "changes what is listed below" in applies.summary
    assert [e.entry for e in applies.diff.entries] == [folders.REFLECTION_IDS[0]]
