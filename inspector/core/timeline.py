"""The timeline of one character: its events and damaged lines in file order, with their states.

A million-event journal is shown without a million row objects: the diagnosis keeps its events
column by column (:class:`journal.diagnosis.EventList`), and a timeline row is just an integer
*ref*: ``i >= 0`` is event ``i``, ``~k`` (negative) is damaged line ``defects[k]``. A table, a
filter or a selection is an array of refs in file order. :meth:`CharacterTimeline.row` builds the
value of one row (:class:`~journal.diagnosis.EventInfo` or :class:`~journal.reader.Defect`) when a
cell is painted. :class:`CharacterTimeline` keeps everything current while the folder is watched:
appended rows, a moved sentinel, a fresh diagnosis merged in place.

The window computes no verdict (README, "the window shows the diagnosis"): every state and count
it shows is the last diagnosis's. What changed since (rows appended by a live writer, rows after a
moved sentinel) reads :data:`UNCHECKED` until the re-diagnosis that follows every change is merged.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.check_report import count_items
from inspector.core.reasons import REASONS
from inspector.core.rediagnose import DiagnosisDelta
from journal.diagnosis import EVENT_STATES, CharacterDiagnosis, EventInfo, EventList, Finding, SentinelInfo
from journal.diagnosis.eventlist import find_events
from journal.diagnosis.values import ServerStart, is_server_start_finding
from journal.reader import Defect, is_damaged_line
from journal.views import SentinelRead

Row = EventInfo | Defect
Refs = Sequence[int]

#: Pseudo-state of a damaged line (a row of its own, not an event).
DAMAGED = "damaged"

#: Pseudo-state of every event while the timeline is only a preview (the diagnosis is running).
LOADING = "loading"

#: Display state of a row the last diagnosis did not see as it is now: appended since, or after a
#: sentinel that moved since. A state of the window, not of the diagnosis: it is counted nowhere,
#: and it gives way to the row's state once the re-diagnosis is merged.
UNCHECKED = "not yet checked"

#: Every state a row can show, in legend order.
ROW_STATES: tuple[str, ...] = (*EVENT_STATES, DAMAGED)

#: States the next/previous-problem keys stop at (pending is the normal backlog, not a problem).
PROBLEM_STATES = frozenset({"blocked", "orphaned", "suspect", DAMAGED})

#: The reasons in words, for the window's detail pane and tooltips (worded for the window).
#: Reason code → what it means and what a person can do, in one paragraph (from the shared table
#: :data:`inspector.core.reasons.REASONS`, which the guarded replay's explanations use too).
REASON_TEXT = {code: text.paragraph("window") for code, text in REASONS.items()}

DEFECT_TEXT = {
    "malformed": "malformed line",
    "torn_tail": "torn last line",
    "glued": "glued line (torn fragment)",
    "not_object": "not an object",
    "missing_event_id": "no event_id",
    "duplicate_event_id": "duplicate event id",
    "unknown_type": "undeclared type",
    "invalid_utf8": "invalid UTF-8",
}


# -- payload summaries -------------------------------------------------------------------------


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _clip(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_EVIDENCE_LABELS = (
    ("reinforcement", "rein"),
    ("disputation", "disp"),
    ("sub_zero_days", "sub-zero days"),
    ("user_fact_reinforce_count", "user facts"),
    ("promote_attempt_count", "promote attempts"),
)


def summarize(event_type: str, payload: Any, *, redact: bool = False) -> str:
    """One line saying what an event does, for the timeline's summary column."""
    from inspector.core.redaction import redact_derived, redact_text

    if not isinstance(payload, dict):
        return f"payload is a {type(payload).__name__}, not an object" if payload else "(empty payload)"

    def text(value: Any, kind: str = "text") -> str:
        if not isinstance(value, str):
            return ""
        return redact_text(value, kind) if redact else f"“{_clip(value)}”"

    if event_type.endswith("evidence_updated"):
        parts = [f"{label} {_num(payload[key])}" for key, label in _EVIDENCE_LABELS if key in payload]
        if payload.get("source"):
            parts.append(f"({payload['source']})")
        return " · ".join(parts) or "evidence update"
    if event_type == "persona.entry_updated":
        parts = ["merge on promote"]
        merged = payload.get("merged_from_ids")
        if isinstance(merged, list):
            parts.append(f"{len(merged)} merged id{'s' if len(merged) != 1 else ''}")
        sha = payload.get("rewrite_text_sha256")
        if isinstance(sha, str) and sha:
            shown = (redact_derived("rewrite_text_sha256", sha) or "") if redact else sha
            parts.append(f"new text sha256 {shown[:8]}…")
        if "reinforcement" in payload:
            parts.append(f"rein {_num(payload['reinforcement'])}")
        return " · ".join(parts)
    if event_type == "reflection.state_changed":
        move = f"{payload.get('from') or '?'} → {payload.get('to') or '?'}"
        if payload.get("to") == "archived" and payload.get("archive_shard_path") is not None:
            snap = payload.get("entry_snapshot")
            body = text(snap.get("text")) if isinstance(snap, dict) else ""
            return " ".join(p for p in (move, body, f"→ shard {payload['archive_shard_path']}") if p)
        extra = []
        if payload.get("absorbed_into"):
            extra.append(f"into {payload['absorbed_into']}")
        if payload.get("reason"):
            extra.append(f"reason: {_clip(str(payload['reason']), 40)}")
        return " · ".join([move, *extra])
    if event_type == "persona.fact_added":
        if payload.get("archive_shard_path") is None:
            return " ".join(p for p in ("added", text(payload.get("text"))) if p)
        shard = f"→ shard {payload['archive_shard_path']}"
        return " ".join(p for p in ("archived", text(payload.get("text")), shard) if p)
    shown = []
    for k in [k for k in payload if k != "entry_snapshot"][:4]:
        v = payload[k]
        if isinstance(v, str):
            shown.append(f"{k}={text(v, k) if k in ('text', 'content') else _clip(v, 24)}")
        elif isinstance(v, (int, float, bool)) or v is None:
            shown.append(f"{k}={_num(v)}")
        else:
            shown.append(f"{k}=…")
    return ", ".join(shown) or "(empty payload)"


def defect_summary(defect: Defect, *, redact: bool = False) -> str:
    """One line for a damaged line's row. With ``redact``, nothing of the line is quoted (its
    message quotes the start of a malformed line): what is wrong and a redaction label instead."""
    if redact:
        from inspector.core.redaction import damaged_token

        text = f"{DEFECT_TEXT.get(defect.kind, defect.kind)} {damaged_token('line', defect.length)}"
    else:
        text = defect.message
    if defect.recovered_event_id:
        text += f" (event {defect.recovered_event_id} recovered from it)"
    return text


# -- the sentinel ------------------------------------------------------------------------------


#: The counts the guarded-replay bar and the sentinel's tag always show (the others when not zero).
ALWAYS_COUNTED = ("applied", "pending")


@dataclass(frozen=True, slots=True)
class SentinelState:
    """The sentinel as the timeline draws it, with the diagnosis's counts.

    Attributes:
        state: ``ok`` / ``missing`` / ``malformed`` / ``null`` / ``unknown_id``.
        event_id: the id it names, if any.
        index: the event index it points at (``ok`` only).
        counts: the diagnosis's counts (:meth:`CharacterDiagnosis.counts`, ``check``'s).
        total: events in the journal.
        unchecked: some rows changed since that diagnosis (they read :data:`UNCHECKED`).
    """

    state: str
    event_id: str | None
    index: int | None
    counts: dict[str, int]
    total: int = 0
    unchecked: bool = False

    @property
    def on_timeline(self) -> bool:
        """Whether the marker is drawn at an event (else a banner explains the state)."""
        return self.state == "ok" and self.index is not None

    def counts_text(self) -> str:
        """``10 applied · 1 pending · 1 blocked``: ``check``'s counts in its words (applied and
        pending always, the others when not zero), and whether rows wait for the next check."""
        text = " · ".join(count_items(self.counts, always=ALWAYS_COUNTED))
        return f"{text} · changed since: {UNCHECKED}" if self.unchecked else text

    def banner_text(self) -> str | None:
        """The warning shown above the timeline when the marker cannot be drawn at an event."""
        if self.on_timeline:
            return None
        what = {
            "missing": "The sentinel file (events_applied.json) is missing",
            "malformed": "The sentinel file (events_applied.json) is malformed",
            "null": "The sentinel is null",
            "unknown_id": f"The sentinel names an event that is not in the journal ({self.event_id})",
        }.get(self.state, f"The sentinel is {self.state}")
        return f"{what}: our guarded replay would start from the first event. {self.counts_text()}"


# -- the memory server's next start --------------------------------------------------------------


# -- one character's timeline --------------------------------------------------------------------


class JournalReplaced(Exception):
    """A fresh diagnosis does not describe the same journal prefix: reload everything."""


def _as_event_list(events: Sequence[EventInfo]) -> EventList:
    return events if isinstance(events, EventList) else EventList(events)


class CharacterTimeline:
    """The rows of one character and the bookkeeping that keeps them current while watching.

    Attributes:
        diagnosis: the latest diagnosis (findings, outbox, blocked event, journal stats). Its
            ``events`` are :attr:`events`, live rows included: the counts it made are
            :attr:`counts`, not a fresh ``diagnosis.counts()``.
        events: the events, column by column.
        defects: every located defect (``unknown_type`` ones included, which have no row).
        refs: every row's ref, in file order.
        counts: the latest diagnosis's counts (``check``'s), as it made them; live rows change
            nothing here.
        checked_events: events ``0 .. checked_events - 1`` show the latest diagnosis's states;
            the others read :data:`UNCHECKED`.
        live_size: journal bytes consumed so far (diagnosis plus live appends).
        provisional: a preview: states are not known yet.
    """

    def __init__(self, diagnosis: CharacterDiagnosis, *, provisional: bool = False) -> None:
        self.diagnosis = diagnosis
        self.events: EventList = _as_event_list(diagnosis.events)
        diagnosis.events = self.events
        self.defects: list[Defect] = list(diagnosis.defects)
        self.provisional = provisional
        self.live_size = diagnosis.journal.bytes
        self.refs: array[int] = array("q", range(len(self.events)))
        shown = [k for k, d in enumerate(self.defects) if is_damaged_line(d)]
        if shown:
            merged = list(self.refs) + [~k for k in shown]
            merged.sort(key=self.key)
            self.refs = array("q", merged)
        self.counts: dict[str, int] = diagnosis.counts()
        self.checked_events = len(self.events)
        #: Damaged lines read since the latest diagnosis (indices into :attr:`defects`).
        self._unchecked_defects: set[int] = set()
        #: Live changes seen (:meth:`changed`), and how many of them the latest diagnosis saw.
        self.changes = 0
        self.checked_changes = 0
        #: ``(change, first event)`` of each sentinel move not seen by a merged diagnosis yet.
        self._moves: list[tuple[int, int]] = []

    @property
    def name(self) -> str:
        return self.diagnosis.name

    @property
    def path(self) -> str:
        return self.diagnosis.path

    @property
    def sentinel(self) -> SentinelInfo:
        """The sentinel as the latest diagnosis found it (a live re-read only marks rows unchecked)."""
        return self.diagnosis.sentinel

    @property
    def health(self) -> str:
        """The latest diagnosis's :attr:`~CharacterDiagnosis.health` (``check``'s)."""
        return self.diagnosis.health

    @property
    def unchecked(self) -> bool:
        """Whether anything changed since the latest diagnosis: rows that read :data:`UNCHECKED`,
        or a live change (a replaced view) whose re-diagnosis has not been merged yet."""
        return (
            self.checked_events < len(self.events)
            or bool(self._unchecked_defects)
            or self.checked_changes != self.changes
        )

    def is_checked(self, ref: int) -> bool:
        """Whether row ``ref`` shows the latest diagnosis's state (else it reads :data:`UNCHECKED`)."""
        if ref < 0:
            return ~ref not in self._unchecked_defects
        return ref < self.checked_events

    # -- rows ---------------------------------------------------------------------------------------

    def row(self, ref: int) -> Row:
        """The value of one row (built on demand; a snapshot)."""
        return self.events[ref] if ref >= 0 else self.defects[~ref]

    def key(self, ref: int) -> tuple[int, int]:
        """File-order sort key: a glued line's fragment comes before the event recovered from it."""
        if ref >= 0:
            return (self.events.offset(ref), 1)
        return (self.defects[~ref].offset, 0)

    def state(self, ref: int) -> str:
        """The row's state as the latest diagnosis says it (:data:`DAMAGED` for a damaged line),
        :data:`LOADING` in a preview, :data:`UNCHECKED` for a row changed since."""
        if ref < 0:
            return UNCHECKED if ~ref in self._unchecked_defects else DAMAGED
        if self.provisional:
            return LOADING
        return self.events.state(ref) if ref < self.checked_events else UNCHECKED

    def line(self, ref: int) -> int:
        return self.events.line(ref) if ref >= 0 else self.defects[~ref].line

    def offset(self, ref: int) -> int:
        return self.events.offset(ref) if ref >= 0 else self.defects[~ref].offset

    def position(self, refs: Refs, ref: int) -> int | None:
        """Position of ``ref`` in ``refs`` (file-ordered), by binary search; ``None`` if absent."""
        if ref < 0 and ~ref >= len(self.defects):
            return None  # a provisional row that left (see :meth:`append`)
        pos = bisect.bisect_left(refs, self.key(ref), key=self.key)
        if pos < len(refs) and refs[pos] == ref:
            return pos
        return None

    def nearest(self, refs: Refs, ref: int) -> int:
        """Position of ``ref`` in ``refs`` or, when it is not there, of the first row after it."""
        if ref < 0 and ~ref >= len(self.defects):
            return len(refs) - 1  # a provisional row that left: it was the last line
        return min(len(refs) - 1, bisect.bisect_left(refs, self.key(ref), key=self.key))

    def marker_position(self, refs: Refs) -> int | None:
        """Where the sentinel marker goes in ``refs`` (possibly filtered): the position of the last
        row at or before the sentinel event (-1: above the first row); ``None``: no marker."""
        ref = self.sentinel_ref()
        if ref is None or self.provisional:
            return None
        return bisect.bisect_right(refs, self.key(ref), key=self.key) - 1

    # -- the sentinel -------------------------------------------------------------------------------

    def sentinel_state(self) -> SentinelState:
        s = self.sentinel
        return SentinelState(s.state, s.event_id, s.index, dict(self.counts), len(self.events), self.unchecked)

    def sentinel_ref(self) -> int | None:
        s = self.sentinel
        if s.state == "ok" and s.index is not None and 0 <= s.index < len(self.events):
            return s.index
        return None

    def badge(self) -> dict[str, int]:
        """The problem counts of the latest diagnosis (``pending`` … ``defects``, ``check``'s), and
        how many findings about the memory server's next start are errors and warnings
        (``server_errors``, ``server_warnings``; :func:`is_server_start_finding`)."""
        c = self.counts
        server = self.server_findings()
        return {
            **{k: c.get(k, 0) for k in ("pending", "blocked", "orphaned", "suspect", "defects")},
            "server_errors": sum(1 for f in server if f.severity == "error"),
            "server_warnings": sum(1 for f in server if f.severity == "warning"),
        }

    # -- the memory server's next start -------------------------------------------------------------

    @property
    def server_start(self) -> ServerStart | None:
        """What the memory server's next start does to the folder (``None``: not predicted)."""
        return getattr(self.diagnosis, "server_start", None)

    def server_findings(self) -> list[Finding]:
        """The findings about the memory server's next start, in the diagnosis's order."""
        return [f for f in self.diagnosis.findings if is_server_start_finding(f)]

    def server_stop_ref(self) -> int | None:
        """The row where the memory server's next start stops (``None``: it does not stop)."""
        s = self.server_start
        if s is None or s.stop is None or self.provisional:
            return None
        stop = s.stop
        if stop.index is not None and 0 <= stop.index < len(self.events):
            return stop.index
        refs = self.refs_at_line(stop.line)
        return refs[-1] if refs else None

    def server_applies(self, ref: int) -> bool:
        """Whether the memory server's next start applies event ``ref`` (:meth:`ServerStart.applies`)."""
        s = self.server_start
        if s is None or self.provisional or ref < 0 or not self.is_checked(ref):
            return False  # a row changed since: the prediction did not see it
        return s.applies(ref, self.events.line(ref))

    def server_only(self, ref: int) -> bool:
        """Whether the memory server's next start applies event ``ref`` and our guarded replay
        would not: it is behind our sentinel (a full replay applies it again), held, or where our
        replay stops (the server moves past a corrupt shard, writes a refused one)."""
        if not self.server_applies(ref):
            return False
        ours = self.events.state(ref) == "pending" and self.events[ref].reason != "held"
        return not ours

    def server_note(self, ref: int) -> str:
        """What the memory server's next start does with row ``ref``, in words (``""``: nothing special)."""
        s = self.server_start
        if s is None:
            return ""
        if ref == self.server_stop_ref() and s.stop is not None:
            left = s.unapplied - 1
            after = ""
            if left > 0:
                after = (
                    "; the event after it stays unapplied" if left == 1 else f"; the {left:,} after it stay unapplied"
                )
            blocked = self.diagnosis.blocked
            same = blocked is not None and blocked.index == ref and blocked.reason == s.stop.reason
            why = "" if same else f" {s.stop.message}"
            return (
                f"The memory server's next start stops here{' too' if same else ''} "
                f"({s.stop.type or '(no type)'}: {s.stop.reason}) after applying {s.applied}{after}.{why}"
            ).strip()
        if not self.server_only(ref):
            return ""
        if self.events.state(ref) in ("applied", "orphaned", "suspect"):
            why = (
                "it replays the whole journal (it cannot see the sentinel's event)"
                if s.sentinel.state != "ok"
                else "its sentinel is before this event"
            )
            return (
                f"The memory server's next start applies this event again: {why}. Our guarded replay would "
                "not: the event is behind our sentinel."
            )
        if ref in s.passed:
            return (
                "The memory server's next start moves past this event although its shard is corrupt (the entry "
                "stays in the view and the sentinel moves on); our guarded replay stops here."
            )
        return "The memory server's next start applies this event; our guarded replay stops before it."

    def event_types(self) -> set[str]:
        return set(self.events.types())

    # -- finding rows -------------------------------------------------------------------------------

    def find_event(self, event_id: str) -> int | None:
        """The index of the event with ``event_id``."""
        return self.events.index_of(event_id)

    def find_events(self, text: str, limit: int = 20) -> list[int]:
        """The events ``text`` names (Ctrl+G): ``#N``, an id, or an id prefix, in the one event
        syntax of every command (:func:`journal.diagnosis.eventlist.find_events`)."""
        return find_events(self.events, text, limit)

    def refs_at_line(self, line: int) -> list[int]:
        """Rows of one journal line (a glued line has its fragment and its recovered event)."""
        lines = self.events.lines()
        out = [~k for k, d in enumerate(self.defects) if d.line == line and is_damaged_line(d)]
        i = bisect.bisect_left(lines, line)
        while i < len(lines) and lines[i] == line:
            out.append(i)
            i += 1
        return sorted(out, key=self.key)

    # -- live changes -----------------------------------------------------------------------

    def changed(self) -> None:
        """Something the diagnosis depends on changed (rows, the sentinel, a view): the character
        is :attr:`unchecked` until a diagnosis started after this is merged."""
        self.changes += 1

    def append(
        self, rows: Sequence[Row], size: int, *, reread_from: int | None = None
    ) -> tuple[int | None, list[int]]:
        """Add rows read from the journal's new bytes; they read :data:`UNCHECKED` until the
        next diagnosis is merged (their own state, ``pending`` as read, is not shown).

        The live tail re-reads an unterminated last line until its newline arrives, so the
        damaged row shown for it (a torn tail, as the reader classified it then) is provisional:
        when the journal is read again from its line, it leaves, and ``rows`` say what the line is
        now (completed, glued onto, isolated by a writer's ``"\\n"``, or still torn). An event is
        never provisional (:class:`~inspector.core.live.LiveUpdate` holds such a line back).

        Args:
            rows: the rows, in file order.
            size: journal bytes read so far.
            reread_from: the first line the new bytes were read from (default: the first row's).

        Returns:
            ``(removed_ref, added_refs)``: the provisional row that left, if any (its ref may be
            reused by the first added damaged row), and the new rows in file order.
        """
        self.live_size = size
        if reread_from is None and rows:
            reread_from = rows[0].line
        removed: int | None = None
        if reread_from is not None and len(self.refs):
            last = self.refs[-1]
            if last < 0 and self.defects[~last].line >= reread_from:
                removed = self.refs.pop()
                self._unchecked_defects.discard(~removed)
                if ~removed == len(self.defects) - 1:
                    self.defects.pop()  # superseded: a writer trickling a line must not pile them up
        added: list[int] = []
        for row in rows:
            if isinstance(row, EventInfo):
                ref = len(self.events)
                row.index = ref
                self.events.append(row)
            else:
                self.defects.append(row)
                if not is_damaged_line(row):
                    continue
                ref = ~(len(self.defects) - 1)
                self._unchecked_defects.add(~ref)
            added.append(ref)
        added.sort(key=self.key)
        self.refs.extend(added)
        return removed, added

    def sentinel_moved(self, read: SentinelRead) -> int | None:
        """The sentinel file changed: every event the move can change reads :data:`UNCHECKED`
        until the re-diagnosis says what it is (no state is worked out here).

        The events after the earlier of the two sentinels can change state (the applied/pending
        boundary, and with it which pending event is blocked and what it holds); all of them
        when either sentinel names no event of the journal.

        Returns:
            The first event that now reads :data:`UNCHECKED` (``None``: none changed).
        """
        old = self.sentinel.index if self.sentinel.state == "ok" else None
        new = self.find_event(read.event_id) if read.state == "ok" and read.event_id is not None else None
        first = 0 if old is None or new is None else min(old, new) + 1
        self.changed()
        self._moves.append((self.changes, first))  # a diagnosis that started before it did not see it
        if first >= self.checked_events:
            return None
        self.checked_events = first
        return first

    def merge_diagnosis(self, fresh: CharacterDiagnosis | DiagnosisDelta, changes: int | None = None) -> list[int]:
        """Take states, findings and the sentinel from a fresh diagnosis of the same journal.

        Events the fresh diagnosis did not reach yet (appended after it read) still read
        :data:`UNCHECKED`. States change in place, so the table keeps its selection and scroll
        position. :attr:`counts` become the fresh diagnosis's.

        Args:
            fresh: a diagnosis, or the compact :class:`DiagnosisDelta` a child process sends.
            changes: :attr:`changes` when that diagnosis started (default: now): a live change
                after it keeps the character :attr:`unchecked`.

        Returns:
            The refs whose shown state, reason or message changed (rows that read
            :data:`UNCHECKED` before included): events in index order, then damaged lines.

        Raises:
            JournalReplaced: the fresh diagnosis describes a different journal, or damaged lines
                changed inside the part both read: the caller reloads everything.
        """
        delta = fresh if isinstance(fresh, DiagnosisDelta) else DiagnosisDelta.of(fresh, len(self.events) - 1)
        mine = self.events
        n = min(delta.events, len(mine))
        if n and mine.event_id(0) != delta.first_id:
            raise JournalReplaced
        check = delta.check_index
        if 0 <= check < n and mine.event_id(check) != delta.check_id:
            raise JournalReplaced
        limit = mine.line(n - 1) if n else 0
        known = {(d.line, d.kind) for d in self.defects}
        for d in delta.defects:
            if d.line <= limit and (d.line, d.kind) not in known:
                raise JournalReplaced
        # Events applied in both diagnoses are unchanged: only the others need comparing.
        theirs = {e.index: e for e in delta.not_applied if e.index < n}
        candidates = {e.index for e in mine.not_applied() if e.index < n} | set(theirs)
        seen_changes = self.changes if changes is None else changes
        self._moves = [(c, first) for c, first in self._moves if c > seen_changes]
        # Rows a sentinel move marked after that diagnosis started stay unchecked: it did not see it.
        checked_events = min([n, *(first for _, first in self._moves)])
        changed: set[int] = set(range(self.checked_events, checked_events))  # they read "not yet checked"
        for i in sorted(candidates):
            a = mine[i]
            b = theirs.get(i)
            new = (b.state, b.reason, b.message) if b is not None else ("applied", None, None)
            if (a.state, a.reason, a.message) != new:
                mine.set_state(i, *new)
                changed.add(i)
        seen = {(d.line, d.kind) for d in delta.defects}
        checked = {k for k in self._unchecked_defects if (self.defects[k].line, self.defects[k].kind) in seen}
        self._unchecked_defects -= checked
        changed.update(~k for k in checked)
        self.checked_events = checked_events
        self.checked_changes = seen_changes
        self.counts = dict(delta.counts)
        # Not past the rows the window has: the sentinel it read may name one the window lacks yet.
        sentinel = delta.sentinel if delta.events >= len(mine) else self.sentinel
        blocked = delta.blocked_index
        self.diagnosis = CharacterDiagnosis(
            self.name,
            self.path,
            journal=delta.journal,
            sentinel=sentinel,
            events=mine,
            defects=self.defects,
            findings=delta.findings,
            blocked=mine[blocked] if blocked is not None and 0 <= blocked < len(mine) else None,
            blocked_message=delta.blocked_message,
            outbox=delta.outbox,
            views_only=delta.views_only,
            server_start=delta.server_start,  # predicted again by the fresh diagnosis
            blocked_holds=delta.blocked_holds,
            not_applicable=delta.not_applicable,  # a cloud-save unit stays one
            cloud_unit=delta.cloud_unit,
        )
        # Events in index order, then damaged lines: a plain sort (a sentinel that named no event
        # leaves every row to change, a million on a big journal).
        return sorted(r for r in changed if r >= 0) + sorted((r for r in changed if r < 0), reverse=True)

    # -- navigation ---------------------------------------------------------------------------------

    def next_problem(self, refs: Refs, start: int, step: int) -> int | None:
        """Position in ``refs`` of the next (``step`` = 1) or previous (-1) row after ``start`` whose
        state is a problem (blocked, orphaned, suspect, damaged); wraps around once."""
        n = len(refs)
        if n == 0:
            return None
        pos = start
        for _ in range(n):
            pos = (pos + step) % n
            if self.state(refs[pos]) in PROBLEM_STATES:
                return pos
        return None


def provisional_timeline(
    name: str, path: str, events: Iterable[EventInfo], defects: Iterable[Defect]
) -> CharacterTimeline:
    """A timeline of rows read before the diagnosis is done (states shown as :data:`LOADING`)."""
    diagnosis = CharacterDiagnosis(name, path)
    diagnosis.events = EventList(events)
    diagnosis.defects = list(defects)
    return CharacterTimeline(diagnosis, provisional=True)
