"""Find (issue 27 item 15): the rows shown whose payload matches the find text, worked out without
filtering anything. The filter box filters; Find marks. Its payload search is the filter's own
(:func:`inspector.core.filtering.apply_filter` with only the text), run on the rows the timeline
shows, in a worker when there are many of them."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.controllers.session import SessionController
from inspector.core.filtering import FEW_ROWS, FilterError, TimelineFilter, apply_filter


class FindController(QObject):
    """What Ctrl+F finds among the rows shown.

    Attributes:
        text, regex: the find text and whether it is a regular expression.
        refs: the matching rows' refs, in file order (a subset of the rows shown).
        error: why nothing is found (an invalid regular expression), or ``""``.
        busy: a search is running.

    Signals:
        matches_changed: :attr:`refs`, :attr:`error` or :attr:`busy` changed.
    """

    matches_changed = Signal()

    def __init__(self, session: SessionController) -> None:
        super().__init__(session)
        self.session = session
        self.text = ""
        self.regex = False
        self.refs: list[int] = []
        self.error = ""
        self.busy = False
        self._gen = 0
        self._job: Any = None
        model = session.timeline_model
        model.modelReset.connect(self.refresh)  # another character, a filter, a reload
        model.rowsInserted.connect(self.refresh)  # live appends

    def pattern(self) -> re.Pattern[str] | None:
        """The compiled find text (``None``: no text, or an invalid regular expression)."""
        try:
            return TimelineFilter(text=self.text, regex=self.regex).pattern()
        except FilterError:
            return None

    def set_query(self, text: str, regex: bool) -> None:
        """Find ``text`` (a regular expression when ``regex``) in the rows shown."""
        if (text, regex) != (self.text, self.regex):
            self.text, self.regex = text, regex
            self.refresh()

    def positions(self) -> list[int]:
        """The matching rows' positions in the timeline as shown, in order."""
        tl, shown = self.session.timeline(), self.session.timeline_model.refs()
        if tl is None:
            return []
        found = (tl.position(shown, ref) for ref in self.refs)
        return sorted(p for p in found if p is not None)

    def refresh(self, *_args: Any) -> None:
        """Search again (the rows shown or the text changed); the latest search wins."""
        self._gen += 1
        gen = self._gen
        if self._job is not None:
            self._job.cancel()
            self._job = None
        tl = self.session.timeline()
        flt = TimelineFilter(text=self.text, regex=self.regex)
        self.error = ""
        if tl is None or not self.text:
            self._found(gen, [])
            return
        try:
            flt.validate()
        except FilterError as exc:
            self.error = str(exc)
            self._found(gen, [])
            return
        shown = self.session.timeline_model.refs()[:]
        if len(shown) <= FEW_ROWS:
            self._found(gen, apply_filter(tl, shown, flt))
            return
        self.busy = True
        self.matches_changed.emit()
        post = self.session.dispatcher.post

        def done(refs: list[int]) -> None:
            post(lambda: self._found(gen, refs))

        def failed(message: str) -> None:
            post(lambda: self._failed(gen, message))

        self._job = self.session.start_job(
            "find", lambda token: apply_filter(tl, shown, flt, token), on_done=done, on_error=failed
        )

    def _found(self, gen: int, refs: list[int]) -> None:
        if gen != self._gen:
            return
        self._job = None
        self.busy = False
        self.refs = list(refs)
        self.matches_changed.emit()

    def _failed(self, gen: int, message: str) -> None:
        if gen == self._gen:
            self.error = f"find failed: {message}"
            self._found(gen, [])
