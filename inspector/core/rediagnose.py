"""Re-diagnosing a watched character in a child process, and the compact result it sends back.

While a folder is watched, every change is followed by a fresh diagnosis. On a journal of a
million events that is seconds of pure-Python work; in a thread of the window's process it would
hold the GIL and delay the live rows it exists to serve. So it runs in a child process on the
other core, and sends back only what the timeline does not already have: the events that are not
applied (with their reasons), the sentinel, findings, defects and outbox. Everything else about an
event (id, type, time, entry, position) the window read itself.

Run as ``python -m inspector.core.rediagnose CHAR_DIR ROOT NAME CHECK_INDEX [CHARACTERS_FILE]``; it
writes one pickled :class:`DiagnosisDelta` to stdout. The child is told the character folder and
the server's ``characters.json`` the window's diagnosis read
(:attr:`~journal.diagnosis.Diagnosis.characters_file`, as :func:`journal.inputs.resolve` found it
or ``--characters`` named it): it never looks for either again.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from inspector.core.jobs import CancelToken
from journal.diagnosis import CharacterDiagnosis, EventInfo, EventList, Finding, JournalStats, SentinelInfo
from journal.diagnosis.values import ServerStart


@dataclass(slots=True)
class DiagnosisDelta:
    """What a fresh diagnosis says that a live timeline may not know yet.

    Attributes:
        name, path: the character and its folder.
        journal, sentinel: as in :class:`CharacterDiagnosis`.
        events: how many events the diagnosis read.
        first_id: the id of its first event (``None`` without events).
        check_index, check_id: the id it read at ``check_index`` (the last event the window had
            when it asked), to prove both describe the same journal.
        not_applied: every event whose state is not ``applied``, with its reason and message.
        defects, findings, outbox, blocked_index, blocked_message, views_only, server_start,
            blocked_holds, not_applicable, cloud_unit: as in the diagnosis.
        counts: the diagnosis's :meth:`~journal.diagnosis.CharacterDiagnosis.counts`, as ``check``
            reports them (the window shows these, never a count of its own).
    """

    name: str
    path: str
    journal: JournalStats
    sentinel: SentinelInfo
    events: int
    first_id: str | None
    check_index: int
    check_id: str | None
    not_applied: list[EventInfo] = field(default_factory=list)
    defects: list[Any] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    outbox: list[Any] = field(default_factory=list)
    blocked_index: int | None = None
    blocked_message: str | None = None
    views_only: bool = False
    server_start: ServerStart | None = None
    blocked_holds: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    not_applicable: str | None = None
    cloud_unit: Any = None

    @classmethod
    def of(cls, diagnosis: CharacterDiagnosis, check_index: int) -> DiagnosisDelta:
        events = diagnosis.events if isinstance(diagnosis.events, EventList) else EventList(diagnosis.events)
        n = len(events)
        return cls(
            diagnosis.name,
            diagnosis.path,
            diagnosis.journal,
            diagnosis.sentinel,
            n,
            events.event_id(0) if n else None,
            check_index,
            events.event_id(check_index) if 0 <= check_index < n else None,
            list(events.not_applied()),
            list(diagnosis.defects),
            list(diagnosis.findings),
            list(diagnosis.outbox),
            diagnosis.blocked.index if diagnosis.blocked is not None else None,
            diagnosis.blocked_message,
            bool(getattr(diagnosis, "views_only", False)),
            diagnosis.server_start,
            diagnosis.blocked_holds,
            diagnosis.counts(),
            diagnosis.not_applicable,
            diagnosis.cloud_unit,
        )


def delta_of_folder(
    char_dir: str, root: str | None, name: str | None, check_index: int, characters_file: str | None = None
) -> DiagnosisDelta:
    """Diagnose ``char_dir`` here and compact the result, with the server's ``characters.json``
    the first diagnosis read (``None``: it read none, so this one reads none either)."""
    from journal.diagnosis import diagnose_character
    from journal.serverrules import CharacterList, read_characters

    listed = CharacterList() if characters_file is None else read_characters(characters_file)
    return DiagnosisDelta.of(diagnose_character(char_dir, root=root, name=name, characters=listed), check_index)


def diagnose_in_child(
    char_dir: str,
    root: str | None,
    name: str | None,
    check_index: int,
    token: CancelToken | None = None,
    *,
    characters_file: str | None = None,
) -> DiagnosisDelta:
    """Run :func:`delta_of_folder` in a child process (killed if ``token`` is cancelled).

    Raises:
        Cancelled: the token was cancelled.
        RuntimeError: the child failed.
    """
    cmd = [sys.executable, "-m", "inspector.core.rediagnose", char_dir, root or "", name or "", str(check_index)]
    if characters_file is not None:
        cmd.append(characters_file)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    while True:
        try:
            out, err = proc.communicate(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            if token is not None and token.cancelled:
                proc.kill()
                proc.communicate()
                token.check()
    if proc.returncode != 0:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise RuntimeError(f"the re-diagnosis failed: {last[0]}")
    delta = pickle.loads(out)
    assert isinstance(delta, DiagnosisDelta)
    return delta


def main(argv: list[str]) -> int:
    char_dir, root, name, check_index, *listing = argv
    delta = delta_of_folder(char_dir, root or None, name or None, int(check_index), listing[0] if listing else None)
    sys.stdout.buffer.write(pickle.dumps(delta, protocol=pickle.HIGHEST_PROTOCOL))
    return 0


if __name__ == "__main__":
    # Pickle the class under its importable name, not ``__main__``.
    from inspector.core import rediagnose

    sys.exit(rediagnose.main(sys.argv[1:]))
