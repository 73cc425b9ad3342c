"""Memory folders for the window's tests, written through ``journal``'s own writers."""

from __future__ import annotations

import json
from pathlib import Path

from journal import EventLog
from journal.views import PERSONA
from tests.inspector.gui_fixtures import write_character

SECRET = "Master drinks oolong at dawn"


def two_characters(root: Path, *, applied: int = 30) -> Path:
    """``alice``: ``applied`` evidence events, then a pending one and an unregistered legacy type
    (replay is blocked there). ``bob``: a few events and a persona entry archived with its text."""
    write_character(root, "alice", applied=applied)
    log = EventLog(root)
    log.append("alice", "reflection.evidence_updated", {"reflection_id": "ref_0000000000000001", "reinforcement": 9.5})
    log.append("alice", "fact.added", {"id": "fact_1"})
    bob = write_character(root, "bob", applied=3)
    persona = json.loads((bob / PERSONA).read_text())
    persona["master"]["facts"].append({"id": "prom_ref_7", "text": SECRET, "source": "reflection"})
    (bob / PERSONA).write_text(json.dumps(persona, indent=2))
    log.archive_persona_entry("bob", "master", "prom_ref_7")
    return root
