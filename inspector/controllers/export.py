"""Copies to the clipboard and exports to files, in the background with progress and cancel.

:class:`ExportController` runs one job at a time: the texts are made by :mod:`inspector.core.export`
in a worker (a million rows read their summaries or records back from the journal), and an export
is written atomically where the person chose (:func:`journal.fs.atomic_write_bytes`: a temp file
in that folder, then a replace), never inside the opened folder. A cancelled or failed export
writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication

from inspector.controllers.background import SingleJobController
from inspector.controllers.dispatch import GuiDispatcher
from inspector.controllers.session import SessionController
from inspector.core import export
from inspector.core.export import RowSet
from inspector.core.jobs import CancelToken
from inspector.core.text import count
from inspector.core.timeline import UNCHECKED, CharacterTimeline
from journal import fs
from journal.diagnosis import Diagnosis

#: Copies of up to this many rows are made at once on the GUI thread (they take milliseconds).
INLINE_COPY_ROWS = 1000

#: A copy holds at most this many rows: the clipboard is no place for a million (export them).
COPY_LIMIT = 100_000

#: What the clipboard gets, per copy format.
COPY_FORMATS = {"tsv": export.tsv_text, "json": export.json_text}


class ExportController(SingleJobController):
    """Copies rows and exports rows or findings, one job at a time.

    Args:
        session: what is open (an export inside it is refused).
        dispatcher: delivers the worker's progress and result on the GUI thread.

    Signals:
        started(str): a job began; what it does, in words.
        progress(int, int): rows done so far, and in all.
        finished(str): the job is done; what was done, in words.
        failed(str): the job failed; why (nothing was written).
        cancelled(): the job was cancelled (nothing was written, nothing copied).
    """

    finished = Signal(str)

    def __init__(self, session: SessionController, dispatcher: GuiDispatcher, parent: QObject | None = None) -> None:
        super().__init__(dispatcher, "Another copy or export is still running: wait for it, or cancel it.", parent)
        self.session = session

    # -- copies ----------------------------------------------------------------------------------------

    def copy_rows(self, rows: RowSet, fmt: str = "tsv") -> None:
        """Put ``rows`` on the clipboard as TSV (``tsv``) or their records as JSON (``json``); at
        most :data:`COPY_LIMIT` rows, and the message says when some were left out."""
        make = COPY_FORMATS[fmt]
        total = len(rows.refs)
        if total > COPY_LIMIT:
            rows = replace(rows, refs=rows.refs[:COPY_LIMIT])
        what = "as TSV" if fmt == "tsv" else "as JSON"
        if total > COPY_LIMIT:
            done = (
                f"Copied the first {COPY_LIMIT:,} of {total:,} rows {what} (a copy holds at most {COPY_LIMIT:,}; "
                "File ▸ Export rows writes them all)."
            )
        else:
            done = f"Copied {count(total, 'row')} {what}."
        if total <= INLINE_COPY_ROWS:
            self._copied(make(rows), done)
            return
        self.run_job("export", f"Copying {min(total, COPY_LIMIT):,} rows…", lambda token, p: make(rows, token, p),
                  lambda text: self._copied(text, done))

    def _copied(self, text: str, message: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.finished.emit(message)

    # -- exports ---------------------------------------------------------------------------------------

    def refusal(self, target: str | os.PathLike[str]) -> str | None:
        """Why nothing may be written at ``target`` (``None``: it may): it is inside what is open
        (the folder, the zip, or the zip's extracted copy)."""
        opened: list[str] = []
        if self.session.location is not None:
            opened.append(os.fspath(self.session.location.path))
        if self.session.folder is not None:
            opened.append(self.session.folder.diagnosis.root)
        return next((why for why in (export.refused_target(target, o) for o in opened) if why), None)

    def findings_refusal(self, tl: CharacterTimeline) -> str | None:
        """Why the findings of ``tl`` may not be exported now (``None``: they may). They are
        check's: once rows changed since its last run, they would pass for its verdict."""
        if not tl.unchecked:
            return None
        return (
            f"Rows changed since the last diagnosis (they read \u201c{UNCHECKED}\u201d). Export the findings "
            "once the re-diagnosis has been merged, so they are what check says.\n\nNothing was written."
        )

    def _refused(self, target: str | os.PathLike[str]) -> bool:
        why = self.refusal(target)
        if why is not None:
            self.failed.emit(why)
        return why is not None

    def export_rows(self, rows: RowSet, fmt: str, target: str | os.PathLike[str]) -> None:
        """Write ``rows`` to ``target`` as ``csv`` or ``ndjson`` (:data:`export.ROW_FORMATS`)."""
        if self._refused(target):
            return
        path = os.fspath(target)
        n = len(rows.refs)

        def work(token: CancelToken, progress: Callable[[int, int], None]) -> str:
            data = export.row_bytes(fmt, rows, token, progress)
            token.check()  # cancelled while the last chunk was made: write nothing
            fs.atomic_write_bytes(path, data)
            return path

        self.run_job("export", f"Exporting {count(n, 'row')}…", work,
                  lambda p: self.finished.emit(f"Exported {count(n, 'row')} as {fmt.upper()} to {p}."))

    def export_findings(self, report: Diagnosis, fmt: str, target: str | os.PathLike[str]) -> None:
        """Write the findings of ``report`` to ``target`` as ``json`` (``check --json``) or ``text``
        (what ``check`` prints)."""
        if self._refused(target):
            return
        path = os.fspath(target)

        def work(token: CancelToken, progress: Callable[[int, int], None]) -> str:
            data = export.findings_bytes(fmt, report)
            token.check()
            fs.atomic_write_bytes(path, data)
            return path

        n = sum(len(c.findings) for c in report.characters)
        self.run_job("export", "Exporting the findings…", work,
                  lambda p: self.finished.emit(f"Exported {count(n, 'finding')} as {fmt} to {p}."))
