"""The timeline of one character: its events and damaged lines in file order, with their states.

A million-event journal is shown without a million row objects: the diagnosis keeps its events
column by column (:class:`journal.diagnosis.EventList`), and a timeline row is just an integer
*ref*: ``i >= 0`` is event ``i``, ``~k`` (negative) is damaged line ``defects[k]``. A table, a
filter or a selection is an array of refs in file order. :meth:`CharacterTimeline.row` builds the
value of one row (:class:`~journal.diagnosis.EventInfo` or :class:`~journal.reader.Defect`) when a
cell is painted. :class:`CharacterTimeline` keeps everything current while the folder is watched:
appended rows, a moved sentinel, a fresh diagnosis merged in place.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.reasons import REASONS
from inspector.core.rediagnose import DiagnosisDelta
from journal.diagnosis import EVENT_STATES, CharacterDiagnosis, EventInfo, EventList, Finding
from journal.diagnosis.values import ServerStart, is_server_start_finding
from journal.reader import Defect
from journal.sentinel import locate_sentinel
from journal.views import SentinelRead

Row = EventInfo | Defect
Refs = Sequence[int]

#: Pseudo-state of a damaged line (a row of its own, not an event).
DAMAGED = "damaged"

#: Pseudo-state of every event while the timeline is only a preview (the diagnosis is running).
LOADING = "loading"

#: Every state a row can show, in legend order.
ROW_STATES: tuple[str, ...] = (*EVENT_STATES, DAMAGED)

#: States the next/previous-problem keys stop at (pending is the normal backlog, not a problem).
PROBLEM_STATES = frozenset({"blocked", "orphaned", "suspect", DAMAGED})

#: Defect kinds whose line yields an event: that event's row carries the problem, so the defect
#: does not get a row of its own.
DEFECTS_CARRIED_BY_EVENT = frozenset({"unknown_type"})

#: The reasons in words, for the detail pane and tooltips.
#: Reason code → what it means and what a person can do, in one paragraph (from the shared table
#: :data:`inspector.core.reasons.REASONS`, which the guarded replay's explanations use too).
REASON_TEXT = {code: text.paragraph() for code, text in REASONS.items()}

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


@dataclass(frozen=True, slots=True)
class SentinelState:
    """The sentinel as the timeline draws it.

    Attributes:
        state: ``ok`` / ``missing`` / ``malformed`` / ``null`` / ``unknown_id``.
        event_id: the id it names, if any.
        index: the event index it points at (``ok`` only).
        applied: events whose state is applied.
        pending: events still to replay (pending or blocked).
        total: events in the journal.
    """

    state: str
    event_id: str | None
    index: int | None
    applied: int
    pending: int
    total: int = 0

    @property
    def on_timeline(self) -> bool:
        """Whether the marker is drawn at an event (else a banner explains the state)."""
        return self.state == "ok" and self.index is not None

    def counts_text(self) -> str:
        return f"{self.applied:,} applied · {self.pending:,} pending"

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
        diagnosis: the latest diagnosis (findings, outbox, blocked event, journal stats).
        events: the events, column by column.
        defects: every located defect (``unknown_type`` ones included, which have no row).
        refs: every row's ref, in file order.
        sentinel: the sentinel as last read.
        counts: rows per state (:data:`ROW_STATES`).
        live_size: journal bytes consumed so far (diagnosis plus live appends).
        provisional: a preview: states are not known yet.
    """

    def __init__(self, diagnosis: CharacterDiagnosis, *, provisional: bool = False) -> None:
        self.diagnosis = diagnosis
        self.events: EventList = _as_event_list(diagnosis.events)
        diagnosis.events = self.events
        self.defects: list[Defect] = list(diagnosis.defects)
        self.provisional = provisional
        self.sentinel = diagnosis.sentinel
        self.live_size = diagnosis.journal.bytes
        self.refs: array[int] = array("q", range(len(self.events)))
        shown = [k for k, d in enumerate(self.defects) if d.kind not in DEFECTS_CARRIED_BY_EVENT]
        if shown:
            merged = list(self.refs) + [~k for k in shown]
            merged.sort(key=self.key)
            self.refs = array("q", merged)
        self.counts: dict[str, int] = dict.fromkeys(ROW_STATES, 0)
        self.counts.update(self.events.state_counts())
        self.counts[DAMAGED] = len(shown)
        #: The server's start was predicted for an older state of the folder (a live re-diagnosis
        #: did not send a new prediction): the window says so.

    @property
    def name(self) -> str:
        return self.diagnosis.name

    @property
    def path(self) -> str:
        return self.diagnosis.path

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
        if ref < 0:
            return DAMAGED
        return LOADING if self.provisional else self.events.state(ref)

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
        c = self.counts
        return SentinelState(
            self.sentinel.state,
            self.sentinel.event_id,
            self.sentinel.index,
            c.get("applied", 0),
            c.get("pending", 0) + c.get("blocked", 0),
            len(self.events),
        )

    def sentinel_ref(self) -> int | None:
        s = self.sentinel
        if s.state == "ok" and s.index is not None and 0 <= s.index < len(self.events):
            return s.index
        return None

    def badge(self) -> dict[str, int]:
        """What the characters list shows: problem counts. ``pending`` … ``defects`` are our
        guarded replay's view of the folder; ``server_errors`` and ``server_warnings`` count the
        findings about the memory server's next start (:func:`is_server_start_finding`)."""
        c = self.counts
        server = self.server_findings()
        return {
            "pending": c.get("pending", 0),
            "blocked": c.get("blocked", 0),
            "orphaned": c.get("orphaned", 0),
            "suspect": c.get("suspect", 0),
            "defects": c.get(DAMAGED, 0),
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

    def server_severity(self) -> str | None:
        """The worst severity of :meth:`server_findings` (``None``: there are none)."""
        order = ("info", "warning", "error")
        found = [order.index(f.severity) for f in self.server_findings() if f.severity in order]
        return order[max(found)] if found else None

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
        if s is None or self.provisional or ref < 0 or ref >= len(self.events):
            return False
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
        """Events whose id equals or starts with ``text``, or ``#N`` for index N."""
        text = text.strip()
        if not text:
            return []
        if text.startswith("#") and text[1:].isdigit():
            i = int(text[1:])
            return [i] if 0 <= i < len(self.events) else []
        exact = self.find_event(text)
        if exact is not None:
            return [exact]
        return [i for i, eid in enumerate(self.events.event_ids()) if eid.startswith(text)][:limit]

    def refs_at_line(self, line: int) -> list[int]:
        """Rows of one journal line (a glued line has its fragment and its recovered event)."""
        lines = self.events.lines()
        out = [~k for k, d in enumerate(self.defects) if d.line == line and d.kind not in DEFECTS_CARRIED_BY_EVENT]
        i = bisect.bisect_left(lines, line)
        while i < len(lines) and lines[i] == line:
            out.append(i)
            i += 1
        return sorted(out, key=self.key)

    # -- live changes -----------------------------------------------------------------------

    def _set_state(self, i: int, state: str, reason: str | None = None, message: str | None = None) -> None:
        old = self.events.state(i)
        self.counts[old] -= 1
        self.events.set_state(i, state, reason, message)
        self.counts[state] = self.counts.get(state, 0) + 1

    def append(
        self, rows: Sequence[Row], size: int, *, reread_from: int | None = None
    ) -> tuple[int | None, list[int]]:
        """Add rows read from the journal's new bytes (events start ``pending``).

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
                self.counts[DAMAGED] -= 1
                if ~removed == len(self.defects) - 1:
                    self.defects.pop()  # superseded: a writer trickling a line must not pile them up
        added: list[int] = []
        for row in rows:
            if isinstance(row, EventInfo):
                ref = len(self.events)
                row.index = ref
                self.events.append(row)
                self.counts[row.state] = self.counts.get(row.state, 0) + 1
            else:
                self.defects.append(row)
                if row.kind in DEFECTS_CARRIED_BY_EVENT:
                    continue
                ref = ~(len(self.defects) - 1)
                self.counts[DAMAGED] += 1
            added.append(ref)
        added.sort(key=self.key)
        self.refs.extend(added)
        return removed, added

    def update_sentinel(self, read: SentinelRead) -> list[int]:
        """Resolve a re-read sentinel and move the applied/pending boundary to it.

        Only the boundary moves here: events now at or before the sentinel that were pending
        become applied, and applied events now after it become pending. Blocked, orphaned and
        suspect states wait for the next diagnosis.

        Returns:
            The refs (event indices) whose state changed.
        """
        old = self.sentinel.index if self.sentinel.state == "ok" else None
        self.sentinel = locate_sentinel(read, self.find_event)
        index = self.sentinel.index
        cut = -1 if index is None else index
        if old is None or index is None:
            lo, hi = 0, len(self.events) - 1
        else:
            lo, hi = min(cut, old) + 1, max(cut, old)
        changed: list[int] = []
        states = self.events
        for i in range(max(0, lo), min(hi, len(self.events) - 1) + 1):
            s = states.state(i)
            if i <= cut and s == "pending":
                self._set_state(i, "applied")
                changed.append(i)
            elif i > cut and s == "applied":
                self._set_state(i, "pending")
                changed.append(i)
        return changed

    def merge_diagnosis(self, fresh: CharacterDiagnosis | DiagnosisDelta) -> list[int]:
        """Take states, findings and the sentinel from a fresh diagnosis of the same journal.

        Events the fresh diagnosis did not reach yet (appended after it read) keep their live
        state. States change in place, so the table keeps its selection and scroll position.

        Args:
            fresh: a diagnosis, or the compact :class:`DiagnosisDelta` a child process sends.

        Returns:
            The event indices whose state, reason or message changed.

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
        changed: list[int] = []
        for i in sorted(candidates):
            a = mine[i]
            b = theirs.get(i)
            new = (b.state, b.reason, b.message) if b is not None else ("applied", None, None)
            if (a.state, a.reason, a.message) != new:
                self._set_state(i, *new)
                changed.append(i)
        if delta.events >= len(mine):
            self.sentinel = delta.sentinel
        blocked = delta.blocked_index
        self.diagnosis = CharacterDiagnosis(
            self.name,
            self.path,
            journal=delta.journal,
            sentinel=self.sentinel,
            events=mine,
            defects=self.defects,
            findings=delta.findings,
            blocked=mine[blocked] if blocked is not None and 0 <= blocked < len(mine) else None,
            blocked_message=delta.blocked_message,
            outbox=delta.outbox,
            views_only=delta.views_only,
            server_start=delta.server_start,  # predicted again by the fresh diagnosis
            blocked_holds=delta.blocked_holds,
        )
        return changed

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
