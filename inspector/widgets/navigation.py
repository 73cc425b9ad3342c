"""Navigation in the timeline: the sentinel (Ctrl+J), the next and previous problem (F8), an event
by id (Ctrl+G), and what a finding is about. Built by the window; its actions call these. It is given
the timeline's selection, the detail tabs and the status line, not the window."""

from __future__ import annotations

from inspector.controllers.context import AppContext
from inspector.controllers.finding_target import finding_target
from inspector.core.check_report import severity_totals
from inspector.core.text import count
from inspector.core.timeline import UNCHECKED, CharacterTimeline
from inspector.core.vocabulary import Finding
from inspector.models.characters_model import HEALTHY
from inspector.widgets.detail import DetailTabs
from inspector.widgets.status_line import StatusLine
from inspector.widgets.timeline_selection import TimelineSelection


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
    """Moves the timeline's selection to what the person asked for.

    Args:
        context: the session, the prompter (an event id, errors) and the detail source (a view file).
        selection: the timeline's selection.
        detail: the detail tabs (a finding's tab is brought to the front).
        status: where "no problem rows" and "wrapped around" are said.
    """

    def __init__(
        self, context: AppContext, selection: TimelineSelection, detail: DetailTabs, status: StatusLine
    ) -> None:
        self.session = context.session
        self.prompter = context.prompter
        self.source = context.detail_source
        self.selection = selection
        self.detail = detail
        self.status = status

    def jump_to_sentinel(self) -> None:
        model = self.session.timeline_model
        ref = model.sentinel_ref()
        if ref is None or model.rowCount() == 0:
            self.status.show("The sentinel does not point at an event.", 5000)
            return
        pos = model.position_of(ref)
        # Filtered out: land on the nearest row shown, where the marker is drawn.
        self.selection.select_position(pos if pos is not None else max(0, model.nearest_position(ref)))

    def goto_problem(self, step: int) -> None:
        model = self.session.timeline_model
        tl = model.timeline
        if tl is None:
            return
        current = self.selection.position()
        start = current if current is not None else (-1 if step > 0 else model.rowCount())
        pos = tl.next_problem(model.refs(), start, step)
        if pos is None:
            self.status.show_row_message(no_problem_row_text(tl))
            return
        self.status.clear_row_message()  # a problem was found: an earlier "no problems" is no longer true
        if (step > 0 and pos <= start) or (step < 0 and pos >= start):
            which = "first" if step > 0 else "last"
            self.status.show_row_message(f"Wrapped around to the {which} problem.")
        self.selection.select_position(pos)

    def ask_goto_event(self) -> None:
        tl = self.session.timeline()
        if tl is None:
            return
        text = self.prompter.ask_event_id()
        if not text:
            return
        found = tl.find_events(text)
        if not found:
            self.prompter.show_error("Go to event", f"No event of {tl.name} matches {text!r}.")
            return
        if len(found) > 1:
            self.status.show_row_message(f"{len(found)} events match {text!r}; showing the first.")
        self.selection.select_ref(found[0])

    def activate_finding(self, finding: Finding) -> None:
        """Select what a finding is about: its event, its damaged line, or its file."""
        tl = self.session.timeline()
        target = finding_target(tl, finding, self.session.timeline_model.rowCount()) if tl is not None else None
        if target is None:
            return
        detail = self.detail
        tabs = {"event": detail.event_detail, "outbox": detail.outbox, "views": detail.views}
        detail.setCurrentWidget(tabs[target.tab])
        if target.ref is not None:
            self.selection.select_ref(target.ref)
        elif target.position is not None:
            self.selection.select_position(target.position)
        elif target.view_file is not None:
            detail.views.show_file(self.source.load_view_file(target.view_file))
