"""Navigation in the timeline: the sentinel (Ctrl+J), the next and previous problem (F8), an event
by id (Ctrl+G), and what a finding is about. Built by the window; its actions call these."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from inspector.core.check_report import severity_totals
from inspector.core.text import count
from inspector.core.timeline import UNCHECKED, CharacterTimeline
from inspector.core.vocabulary import JOURNAL_NAME, OUTBOX_NAME, Finding
from inspector.models.characters_model import HEALTHY

if TYPE_CHECKING:
    from inspector.widgets.main_window import MainWindow


def no_problem_row_text(tl: CharacterTimeline) -> str:
    """What the status bar says when no row shown is a problem: in the diagnosis's words (a folder
    whose trouble is not a row, a corrupt view, is not called problem-free)."""
    if tl.provisional:
        return "No states yet: the folder is still being read."
    later = f" Some rows are {UNCHECKED}." if tl.unchecked else ""
    if tl.health in HEALTHY:
        return f"No problems in the rows shown.{later}"
    total = severity_totals(tl.diagnosis.findings)
    return (
        f"No problem rows in the rows shown, but the diagnosis has {count(total['error'], 'error')} and "
        f"{count(total['warning'], 'warning')}: see the Findings tab.{later}"
    )


class Navigation:
    """Moves the window's timeline selection to what the person asked for.

    Args:
        window: the main window (its timeline, session, detail tabs, prompter and status bar).
    """

    def __init__(self, window: MainWindow) -> None:
        self.w = window

    def jump_to_sentinel(self) -> None:
        model = self.w.session.timeline_model
        ref = model.sentinel_ref()
        if ref is None or model.rowCount() == 0:
            self.w.statusBar().showMessage("The sentinel does not point at an event.", 5000)
            return
        pos = model.position_of(ref)
        # Filtered out: land on the nearest row shown, where the marker is drawn.
        self.w.select_position(pos if pos is not None else max(0, model.nearest_position(ref)))

    def goto_problem(self, step: int) -> None:
        model = self.w.session.timeline_model
        tl = model.timeline
        if tl is None:
            return
        index = self.w.timeline.currentIndex()
        start = index.row() if index.isValid() else (-1 if step > 0 else model.rowCount())
        pos = tl.next_problem(model.refs(), start, step)
        if pos is None:
            self.w.show_row_message(no_problem_row_text(tl))
            return
        self.w.clear_row_message()  # a problem was found: an earlier "no problems" is no longer true
        if (step > 0 and pos <= start) or (step < 0 and pos >= start):
            which = "first" if step > 0 else "last"
            self.w.show_row_message(f"Wrapped around to the {which} problem.")
        self.w.select_position(pos)

    def ask_goto_event(self) -> None:
        tl = self.w.session.timeline()
        if tl is None:
            return
        text = self.w.prompter.ask_event_id()
        if not text:
            return
        found = tl.find_events(text)
        if not found:
            self.w.prompter.show_error("Go to event", f"No event of {tl.name} matches {text!r}.")
            return
        if len(found) > 1:
            self.w.show_row_message(f"{len(found)} events match {text!r}; showing the first.")
        self.w.select_ref(found[0])

    def activate_finding(self, finding: Finding) -> None:
        """Select what a finding is about: its event, its damaged line, or its file."""
        tl = self.w.session.timeline()
        if tl is None:
            return
        if finding.event_id:
            index = tl.find_event(finding.event_id)
            if index is not None:
                self.w.detail.setCurrentWidget(self.w.detail.event_detail)
                self.w.select_ref(index)
                return
        if finding.line:
            refs = tl.refs_at_line(finding.line)
            if refs:
                self.w.detail.setCurrentWidget(self.w.detail.event_detail)
                self.w.select_ref(refs[0])
                return
        if finding.file:
            rel = finding.file.replace(os.sep, "/")
            if rel == JOURNAL_NAME:
                # A journal-level finding: NDJSON is never parsed as one document. The age of a
                # journal is its first line's; anything else about it (a torn end) is at its end.
                position = 0 if finding.code == "compaction.due" else self.w.session.timeline_model.rowCount() - 1
                if position >= 0:
                    self.w.detail.setCurrentWidget(self.w.detail.event_detail)
                    self.w.select_position(position)
                return
            if rel == OUTBOX_NAME:
                self.w.detail.setCurrentWidget(self.w.detail.outbox)
                return
            self.w.detail.setCurrentWidget(self.w.detail.views)
            self.w.detail.views.show_file(self.w.source.load_view_file(rel))
