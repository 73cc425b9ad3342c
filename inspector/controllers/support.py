"""Support cases in the window (issue 17): File ▸ Export support bundle and File ▸ Compare with,
each a background job with progress and cancel.

:class:`SupportController` runs one job at a time. The bundle is written by
:func:`inspector.core.bundle.write_bundle` (atomic, never inside the input, redacted unless asked
not to); the comparison is :mod:`inspector.core.compare`'s value, plus the events the panel lists
at the positions where the two journals part (:class:`CompareResult`). Both inputs are only read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.controllers.background import SingleJobController
from inspector.controllers.dispatch import GuiDispatcher
from inspector.controllers.session import SessionController
from inspector.core.bundle import (
    BundleCancelledError,
    BundleRefusedError,
    BundleResult,
    check_output,
    load_or_create_secret,
)
from inspector.core.bundle import write_bundle as write_bundle_file
from inspector.core.cloud_report import CloudPreview, preview_lines_for
from inspector.core.compare import Comparison, compare_sides, open_side
from inspector.core.jobs import Cancelled, CancelToken
from inspector.core.location import Location
from journal.events import JOURNAL_NAME
from journal.reader import events_at, iter_journal

#: Events of the common prefix listed before the divergence (the earlier ones are one summary row).
CONTEXT_ROWS = 20

#: At most this many positions are listed from the first one shown (``--json`` of ``diff`` has
#: every event only on one side; the panel is for looking).
LISTED_ROWS = 2000

#: An event's place in the aligned timelines (:attr:`AlignedEvent.mark`).
COMMON = "common"  # before the divergence: the same id at the same position on both sides
ONLY = "only"  # the other side holds no event with this id
ELSEWHERE = "elsewhere"  # the other side holds this id, at another position


@dataclass(frozen=True, slots=True)
class AlignedEvent:
    """One side's event at a position of the two timelines aligned at their common prefix.

    Attributes:
        index: its 0-based position among that journal's events (the window's timeline ref).
        event_id: its id.
        type: its type.
        line: its line in the journal.
        mark: :data:`COMMON`, :data:`ONLY` or :data:`ELSEWHERE`.
        payload: its payload (side B only, for the panel's detail; ``None`` otherwise).
    """

    index: int
    event_id: str
    type: str
    line: int
    mark: str
    payload: Any = None


@dataclass(frozen=True, slots=True)
class CompareResult:
    """What File ▸ Compare with shows.

    Attributes:
        comparison: the comparison (the value ``memory-inspector diff`` prints).
        first: the first position listed; every position before it is common to both sides.
        a, b: each side's events from ``first`` on, in order (at most :data:`LISTED_ROWS`).
        location: what was open as A (the window selects A's events only while it is still open).
    """

    comparison: Comparison
    first: int
    a: tuple[AlignedEvent, ...]
    b: tuple[AlignedEvent, ...]
    location: Location | None = None


def aligned_events(
    char_dir: str | os.PathLike[str], first: int, prefix: int, only: Iterable[int], *, payloads: bool = False
) -> tuple[AlignedEvent, ...]:
    """The events of ``char_dir``'s journal at positions ``first`` … ``first + LISTED_ROWS - 1``,
    marked against the other side (``prefix``: the common prefix; ``only``: the indices of this
    side's events the other does not hold). Only read. A journal that is missing or cannot be read
    gives none (the comparison's side says why).
    """
    path = Path(char_dir) / JOURNAL_NAME
    alone = set(only)
    end = first + LISTED_ROWS
    found: list[Any] = []
    position = 0
    try:
        with contextlib.closing(iter_journal(path, summaries=True)) as batches:
            for events, _defects in batches:
                for e in events:
                    if first <= position < end:
                        found.append(e)
                    position += 1
                if position >= end:
                    break
        records = events_at(path, [e.offset for e in found]) if payloads else {}
    except OSError:
        return ()
    out = []
    for i, e in enumerate(found, first):
        mark = COMMON if i < prefix else ONLY if i in alone else ELSEWHERE
        record = records.get(e.offset)
        out.append(AlignedEvent(i, e.event_id, e.type, e.line, mark, record.payload if record is not None else None))
    return tuple(out)


#: The steps of a comparison, as its progress counts them.
COMPARE_STEPS = ("reading A", "reading B", "comparing", "listing A's events", "listing B's events")


def compare_with_rows(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    character: str | None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> CompareResult:
    """:func:`inspector.core.compare.compare_paths`, and the events the panel lists, from one
    extraction of each input (a zip is extracted once, to a private temp folder, and removed).

    ``progress(done, total)`` is called before each of :data:`COMPARE_STEPS` and at the end; it
    may raise to stop (the window's Cancel: the temp folders are removed all the same)."""
    total = len(COMPARE_STEPS)

    def step(done: int) -> None:
        if progress is not None:
            progress(done, total)

    step(0)
    with open_side(a, character) as side_a:
        step(1)
        with open_side(b, character) as side_b:
            step(2)
            comparison = compare_sides(side_a, side_b)
            j = comparison.journal
            first = max(0, j.common_prefix - CONTEXT_ROWS)
            step(3)
            rows_a = aligned_events(side_a.dir, first, j.common_prefix, (e.index for e in j.only_a))
            step(4)
            rows_b = aligned_events(side_b.dir, first, j.common_prefix, (e.index for e in j.only_b), payloads=True)
    step(total)
    return CompareResult(comparison, first, rows_a, rows_b)


class SupportController(SingleJobController):
    """Writes support bundles of what is open and compares it with another export, one job at a time.

    Args:
        session: what is open (A of a comparison; the input of a bundle).
        dispatcher: delivers the worker's progress and result on the GUI thread.
        secret: reads (or makes) the sender's redaction secret; called in the worker.

    Signals:
        started(str): a job began; what it does, in words.
        progress(int, int): done so far, and in all: bytes of a bundle, steps of a comparison.
        bundle_written(object): the :class:`~inspector.core.bundle.BundleResult`.
        compared(object): the :class:`CompareResult`.
        download_previewed(object): the :class:`~inspector.core.cloud_report.CloudPreview` of
            File ▸ Compare with ▸ Cloud save….
        failed(str): the job failed; why (a bundle: nothing was written).
        cancelled(): the job was cancelled (nothing was written).
    """

    bundle_written = Signal(object)
    compared = Signal(object)
    download_previewed = Signal(object)

    def __init__(
        self,
        session: SessionController,
        dispatcher: GuiDispatcher,
        *,
        secret: Callable[[], bytes] = load_or_create_secret,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(
            dispatcher, "A support bundle or a comparison is still running: wait for it, or cancel it.", parent
        )
        self.session = session
        self._secret = secret

    def opened_path(self) -> Path | None:
        """The PATH the session opened (a zip export: the zip itself), or ``None``."""
        folder = self.session.folder
        return folder.location.path if folder is not None else None

    # -- the bundle ------------------------------------------------------------------------------------

    def bundle_refusal(self, target: str | os.PathLike[str]) -> str | None:
        """Why no bundle may be written at ``target`` (``None``: it may), by the bundle's own rule
        (:func:`~inspector.core.bundle.check_output`) against what is open and, for a zip, its
        extracted copy. An existing file is no refusal: the save dialog asked before replacing it."""
        folder = self.session.folder
        if folder is None:
            return "Nothing is open."
        for opened in dict.fromkeys((os.fspath(folder.location.path), folder.diagnosis.root)):
            try:
                check_output(opened, target, force=True)
            except BundleRefusedError as exc:
                return str(exc).replace("the input folder", "the opened folder")
        return None

    def write_bundle(self, target: str | os.PathLike[str], *, redact: bool = True, include_chat: bool = False) -> bool:
        """Write the support bundle of what is open to ``target`` in the background (redacted
        unless ``redact`` is false; the chat history only with ``include_chat``); ``False`` when
        refused (:attr:`failed` says why)."""
        source = self.opened_path()
        why = self.bundle_refusal(target)
        if source is None or why is not None:
            self.failed.emit(why or "Nothing is open.")
            return False
        out = os.fspath(target)

        def work(token: CancelToken, progress: Callable[[int, int], None]) -> BundleResult:
            secret = self._secret()
            try:
                return write_bundle_file(
                    source,
                    out,
                    secret=secret,
                    redact=redact,
                    include_chat=include_chat,
                    force=True,
                    progress=progress,
                    cancelled=lambda: token.cancelled,
                )
            except BundleCancelledError:
                raise Cancelled from None

        what = "redacted" if redact else "NOT redacted"
        return self.run_job("support", f"Writing the support bundle ({what})…", work, self.bundle_written.emit)

    # -- the comparison --------------------------------------------------------------------------------

    def compare_with(self, other: str | os.PathLike[str]) -> bool:
        """Compare the character shown (A: what is open) with ``other`` (B: a folder or a zip) in
        the background; ``False`` when nothing is open."""
        folder = self.session.folder
        if folder is None:
            self.failed.emit("Nothing is open.")
            return False
        a, character, location = folder.location.path, self.session.current, folder.location
        b = os.fspath(other)

        def work(token: CancelToken, progress: Callable[[int, int], None]) -> CompareResult:
            def report(done: int, total: int) -> None:
                token.check()  # Cancel stops the comparison between its steps
                progress(done, total)

            result = compare_with_rows(a, b, character, progress=report)
            token.check()  # cancelled meanwhile: nothing is shown
            return replace(result, location=location)

        return self.run_job("support", f"Comparing with {Path(b).name}…", work, self.compared.emit)

    # -- a cloud save's download ----------------------------------------------------------------------

    def preview_download(self, unit: str | os.PathLike[str]) -> bool:
        """Say in the background what downloading the cloud-save ``unit`` into the character shown
        would do (:func:`~inspector.core.cloud_report.preview_lines_for`: both only read);
        ``False`` when no character is shown."""
        folder, name = self.session.folder, self.session.current
        shown = [c for c in folder.diagnosis.characters if c.name == name] if folder is not None else []
        if folder is None or not shown:
            self.failed.emit("No character is shown.")
            return False
        local, listed, u = shown[0].path, folder.diagnosis.characters_file, os.fspath(unit)

        def work(token: CancelToken, _progress: Callable[[int, int], None]) -> CloudPreview:
            result = preview_lines_for(u, local, shown[0].name, listed)
            token.check()
            return result

        return self.run_job("support", f"Reading the cloud save {Path(u).name}…", work, self.download_previewed.emit)
