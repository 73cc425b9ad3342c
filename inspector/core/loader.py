"""Loading a location in a worker: a quick preview of the first rows, then the full diagnosis.

The first screenful comes from the first megabyte of the first character's journal, so rows
appear at once even for a journal of a million events; the full analysis (the same
:func:`journal.diagnosis.diagnose_path` that ``memory-inspector check`` runs) follows and replaces
the preview.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from inspector.core.jobs import CancelToken
from inspector.core.location import Location
from inspector.core.timeline import CharacterTimeline, provisional_timeline
from journal.diagnosis import Diagnosis, DiagnosisInputError, EventInfo, UnreadableInputError
from journal.events import JOURNAL_NAME, Event
from journal.handlers import entry_ref
from journal.inputs import NoCharacterError, resolve
from journal.reader import Defect, JournalScanner

#: How much of the journal the preview reads.
PREVIEW_BYTES = 1 << 20

class Diagnose(Protocol):
    """``PATH -> Diagnosis``, reporting ``progress(bytes_read, total_bytes)`` (which may raise to
    cancel), as :func:`journal.diagnosis.diagnose_path` does."""

    def __call__(self, path: str, *, progress: Callable[[int, int], None] | None = None) -> Diagnosis: ...


#: The progress bar of the analysis counts in these steps (bytes would overflow a Qt int).
PROGRESS_STEPS = 1000

#: Seconds between two progress updates of the analysis.
PROGRESS_INTERVAL = 0.2


@dataclass(slots=True)
class Preview:
    """The first rows of the first character, before the diagnosis is done.

    Its summaries are read on demand like the full timeline's (a row's record read back by its
    offset): the few dozen rows on screen, not the thousands the first megabyte holds.

    Attributes:
        timeline: a provisional timeline (states shown as loading).
    """

    timeline: CharacterTimeline

    @property
    def char_dir(self) -> Path:
        return Path(self.timeline.path)


@dataclass(slots=True)
class LoadedFolder:
    """A location with its diagnosis, ready for the window.

    Attributes:
        location: what was opened.
        diagnosis: the diagnosis (``diagnosis.root`` is where the files are read from).
        timelines: one per character, in the diagnosis's order.
        seconds: how long the load took.
        empty_reason: why there are no timelines, when the folder holds no character folder: the
            diagnosis's words (``""`` otherwise).
    """

    location: Location
    diagnosis: Diagnosis
    timelines: dict[str, CharacterTimeline]
    seconds: float = 0.0
    empty_reason: str = ""

    @property
    def root(self) -> Path:
        return Path(self.diagnosis.root)

    def close(self) -> None:
        """Remove what this load owns on disk: a zip's extracted copy, the sample's scratch copy."""
        close = getattr(self.diagnosis, "close", None)
        if close is not None:
            close()
        self.location.discard()


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """A step of a load, for the progress bar (``total == 0``: no measure, show a busy bar)."""

    message: str
    done: int = 0
    total: int = 0
    #: what the bar itself shows beside the percentage, e.g. "136 of 387 MiB"
    detail: str = ""


def first_character_dir(folder: Path) -> Path | None:
    """The character folder a preview shows, as :func:`journal.inputs.resolve` reads ``folder``:
    the folder itself, or its first character folder (one with a journal first); ``None`` when it
    holds none, cannot be read, or is a zip (it must be extracted first)."""
    try:
        with resolve(folder, extract=False) as found:
            entries = [e.path for e in found.characters if e.refusal is None]
    except DiagnosisInputError:
        return None
    with_journal = [p for p in entries if (p / JOURNAL_NAME).is_file()]
    chosen = with_journal or entries
    return chosen[0] if chosen else None


def holds_no_character(folder: Path) -> bool:
    """Whether ``folder`` is not a character folder and holds none (a folder that cannot be listed
    is not known to hold none): :func:`journal.inputs.resolve` says so."""
    try:
        resolve(folder, extract=False).close()
    except NoCharacterError:
        return True
    except DiagnosisInputError:
        return False
    return False


def read_preview(char_dir: Path, max_bytes: int = PREVIEW_BYTES) -> Preview:
    """Classify the first ``max_bytes`` of a character's journal (complete lines only)."""
    events_read: list[Event] = []
    defects: list[Defect] = []
    scanner = JournalScanner()
    try:
        with open(char_dir / JOURNAL_NAME, "rb") as fh:
            scanner.feed(fh.read(max_bytes), events_read, defects)
    except OSError:
        pass
    infos = [
        EventInfo(i, ev.line, ev.offset, ev.event_id, ev.type, ev.ts, entry_ref(ev.type, ev.payload))
        for i, ev in enumerate(events_read)
    ]
    timeline = provisional_timeline(char_dir.name, str(char_dir), infos, defects)
    return Preview(timeline)


def load_location(
    location: Location,
    token: CancelToken,
    diagnose: Diagnose,
    *,
    on_preview: Callable[[Preview], None] | None = None,
    on_progress: Callable[[LoadProgress], None] | None = None,
) -> LoadedFolder:
    """Preview, diagnose and build the timelines of ``location`` (run it in a worker).

    A folder that holds no character folder is loaded without timelines, with the diagnosis's
    words as :attr:`LoadedFolder.empty_reason`.

    Raises:
        Cancelled: the token was cancelled.
        Exception: whatever the diagnosis raised for unreadable input.
    """
    started = time.perf_counter()
    if on_preview is not None and location.kind != "zip":
        # A zip must be extracted (by the diagnosis) before anything can be read from it.
        char_dir = first_character_dir(location.path)
        if char_dir is not None:
            if on_progress:
                on_progress(LoadProgress(f"Reading the first rows of {char_dir.name}…"))
            on_preview(read_preview(char_dir))
    token.check()
    if on_progress:
        on_progress(LoadProgress(f"Analysing {location.label}…"))

    last_shown = -PROGRESS_INTERVAL

    def analysed(done: int, total: int) -> None:
        nonlocal last_shown
        token.check()  # a cancel stops the scan here, within a few MiB
        now = time.perf_counter()
        # A few updates a second: each one is work for the GUI thread while the scan runs.
        if on_progress and total and (now - last_shown >= PROGRESS_INTERVAL or done >= total):
            last_shown = now
            on_progress(
                LoadProgress(
                    f"Analysing {location.label}…",
                    done * PROGRESS_STEPS // total,
                    PROGRESS_STEPS,
                    f"{done / 2**20:,.0f} of {total / 2**20:,.0f} MiB",
                )
            )

    try:
        diagnosis = diagnose(str(location.path), progress=analysed)
    except UnreadableInputError as exc:
        if location.kind == "zip" or not holds_no_character(location.path):
            raise
        # Not a failure: the folder was read and holds no character. It is shown as such, in the
        # diagnosis's own words (the line `check` prints), instead of what was shown before.
        empty = Diagnosis(str(location.path), str(location.path.absolute()))
        return LoadedFolder(location, empty, {}, time.perf_counter() - started, empty_reason=str(exc))
    token.check()
    timelines: dict[str, CharacterTimeline] = {}
    total = len(diagnosis.characters)
    for i, character in enumerate(diagnosis.characters):
        token.check()
        if on_progress:
            on_progress(LoadProgress(f"Building the timeline of {character.name}", i, total))
        timelines[character.name] = CharacterTimeline(character)
    return LoadedFolder(location, diagnosis, timelines, time.perf_counter() - started)
