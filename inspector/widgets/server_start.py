"""The memory server's next start, per character: what happens to the folder unless someone acts.

The window says two things, each with its actor (README: "What the memory server's next start does"): first
this panel, *the memory server's next start* (``CharacterDiagnosis.server_start`` and the
``server.*`` findings, memory-format §9), then the sentinel bar, *our guarded replay*. Neither may
pass for the other, so every line here names the server, and the panel's title says so.

:func:`describe_server_start` turns the prediction into lines (Qt-free, so tests read it);
:class:`ServerStartPanel` shows them: selectable, copyable, focusable with Tab.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette, QResizeEvent, QTextOption
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QTextBrowser, QVBoxLayout, QWidget

from inspector.core.redaction import redact_message
from inspector.core.timeline import CharacterTimeline
from inspector.core.vocabulary import (
    SEVERITIES,
    EntryChange,
    Finding,
    ServerStart,
    health_of,
    is_server_start_finding,
    is_shown,
)
from inspector.models.colors import accent_color, blend, state_color
from inspector.widgets import icons

#: The panel's title: the actor, and why it comes first.
TITLE = "Memory server's next start"
SUBTITLE = "what happens to this folder unless someone acts (predicted; nothing is written)"

#: Severity → the state colour it borrows (as the Findings table colours its Severity cells).
SEVERITY_STATE = {"error": "blocked", "warning": "suspect", "info": None}

#: At most this many changed entries are listed in the panel (the rest are counted).
CHANGES_SHOWN = 20

#: Finding codes a structured line of the panel already says (their severity colours that line).
_CONSUMED = frozenset(
    {
        "server.persona_replaced",
        "server.replay_stops",
        "server.shard_passed",
        "server.writes_outside",
        "server.not_reconciled",
    }
)


@dataclass(frozen=True, slots=True)
class ServerLine:
    """One line of the panel: its severity, what it is about, and the words."""

    severity: str
    label: str
    text: str


@dataclass(slots=True)
class ServerStartText:
    """The panel's content.

    Attributes:
        summary: one sentence that names the memory server as the actor.
        severity: the worst severity of the server's findings (``info`` when there are none).
        lines: the details, in the order the server's start does them.
    """

    summary: str
    severity: str = "info"
    lines: list[ServerLine] = field(default_factory=list)

    def plain(self) -> str:
        """Everything as plain text (what Copy puts on the clipboard)."""
        out = [f"{TITLE} — {SUBTITLE}", f"  {self.severity:<7}  {self.summary}"]
        out.extend(f"  {ln.severity:<7}  {ln.label}: {ln.text}" for ln in self.lines)
        return "\n".join(out)


def _worst(severities: Iterable[str], default: str = "info") -> str:
    """The highest of ``severities`` (:func:`journal.diagnosis.values.health_of`, the one home of
    that rule), ``default`` when there is none."""
    found = health_of(s for s in severities if s in SEVERITIES)
    return default if found == "none" else found


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def _value(value: Any) -> str | None:
    """A field value the panel may show (numbers, booleans, null); ``None`` for text (private)."""
    return json.dumps(value) if is_shown(value) else None


def change_text(change: EntryChange) -> str:
    """One changed entry in words: numbers as ``before → after``, text fields as ``changed`` only."""
    head = f"{change.file} {change.entry}: "
    if change.removed:
        return head + "removed from the view"
    parts = []
    for name, before, after in change.fields:
        b, a = _value(before), _value(after)
        parts.append(f"{name} {b} → {a}" if b is not None and a is not None else f"{name} changed")
    body = ", ".join(parts) or "changed"
    return head + ("added to the view: " + body if change.added else body)


def describe_server_start(
    start: ServerStart | None,
    findings: Sequence[Finding],
    *,
    our_sentinel_index: int | None = None,
) -> ServerStartText:
    """What the memory server's next start does to one character folder, as the panel shows it.

    Args:
        start: the prediction (``None``: not predicted for this folder).
        findings: the character's findings; the ``server.*`` ones colour the lines.
        our_sentinel_index: where our reader finds the sentinel (the server's is shown when it differs).
    """
    server = [f for f in findings if is_server_start_finding(f)]
    severity = _worst(f.severity for f in server)

    def sev(code: str, default: str = "info") -> str:
        return _worst((f.severity for f in server if f.code == code), default)

    if start is None:
        text = ServerStartText("The memory server's next start was not predicted for this folder.", severity)
        text.lines.extend(ServerLine(f.severity, "Finding", f"{f.code}: {f.message}") for f in server)
        return text
    text = ServerStartText(_sentence(start.summary()) + ".", severity)
    add = text.lines.append
    if start.reconciled is False:
        where = f" {start.characters_file}" if start.characters_file else ""
        add(
            ServerLine(
                sev("server.not_reconciled"),
                "Reconciled",
                f"not reconciled (not in characters.json{': ' + where.strip() if where else ''}): the memory server "
                "never replays this character's journal",
            )
        )
        if start.outbox:
            add(ServerLine("info", "Outbox", f"it still runs {_plural(start.outbox, 'pending operation')}"))
        _findings_lines(text, server)
        return text
    action, message = start.persona
    if action != "keep":
        persona_sev = {"replace": sev("server.persona_replaced", "error"), "unknown": "warning"}.get(action, "info")
        add(ServerLine(persona_sev, "Persona ensure", f"{action}: {message}" if message else action))
    st = start.sentinel
    full = st.state != "ok"
    if full and start.replays:
        ident = f" ({st.event_id})" if st.event_id else ""
        add(
            ServerLine(
                _worst((sev("server.sentinel_unseen", ""), sev("server.full_replay", "")), "warning"),
                "Its sentinel",
                f"{st.state}{ident} as the server's reader sees it: it replays the whole journal from the first event",
            )
        )
    elif st.index is not None and st.index != our_sentinel_index:
        add(ServerLine("info", "Its sentinel", f"at event #{st.index} as the server's reader sees it"))
    if start.replays == 0:
        add(ServerLine("info", "Replay", "nothing to replay"))
    else:
        origin = "the first event" if full else (f"event #{st.index + 1}" if st.index is not None else "its sentinel")
        add(
            ServerLine(
                "info",
                "Replay",
                f"{_plural(start.replays, 'event')} from {origin}; it applies {start.applied:,}",
            )
        )
    if start.stop is not None:
        stop = start.stop
        where = f"event #{stop.index} (line {stop.line})" if stop.index is not None else f"line {stop.line}"
        left = f"; it leaves {_plural(start.unapplied, 'event')} unapplied" if start.unapplied else ""
        add(
            ServerLine(
                sev("server.replay_stops", "error"),
                "Stops at",
                f"{where} {stop.type or '(no type)'}: {stop.reason}: {stop.message}{left}",
            )
        )
    for index in start.passed:
        add(
            ServerLine(
                sev("server.shard_passed", "error"),
                "Moves past",
                f"event #{index}: its shard is corrupt; the server keeps the entry in the view and moves its "
                "sentinel on (our guarded replay pauses there)",
            )
        )
    for change in start.changes[:CHANGES_SHOWN]:
        add(ServerLine("info", "Changes", change_text(change)))
    more = start.changes_total - min(len(start.changes), CHANGES_SHOWN)
    if more > 0:
        add(ServerLine("info", "Changes", f"… and {_plural(more, 'more entry', 'more entries')}"))
    inside = [p for p, out in start.writes if not out]
    if inside:
        add(ServerLine("info", "Writes", ", ".join(inside)))
    for path, out in start.writes:
        if out:
            add(
                ServerLine(
                    sev("server.writes_outside", "error"),
                    "Writes",
                    f"{path} — OUTSIDE the character folder",
                )
            )
    if start.outbox:
        add(ServerLine("info", "Then", f"runs {_plural(start.outbox, 'pending outbox operation')} in the background"))
    for note in start.notes:
        add(ServerLine("info", "Note", note))
    _findings_lines(text, server)
    if start.reconciled is None and start.characters_file is None:
        add(
            ServerLine(
                "info",
                "Reconciled",
                "not known (no characters.json found beside the memory root)",
            )
        )
    elif start.reconciled:
        add(ServerLine("info", "Reconciled", f"yes (listed in {start.characters_file})"))
    return text


def _findings_lines(text: ServerStartText, server: Sequence[Finding]) -> None:
    for f in server:
        if f.code not in _CONSUMED:
            text.lines.append(ServerLine(f.severity, "Finding", f"{f.code}: {f.message}"))


def timeline_text(timeline: CharacterTimeline | None) -> ServerStartText | None:
    """:func:`describe_server_start` of a character's timeline (``None``: nothing shown)."""
    if timeline is None or timeline.provisional:
        return None
    s = timeline.sentinel
    return describe_server_start(
        timeline.server_start,
        timeline.diagnosis.findings,
        our_sentinel_index=s.index if s.state == "ok" else None,
    )


# -- the widget ---------------------------------------------------------------------------------------


#: The hue that marks the memory server's own verdicts on the timeline and in the legend.
SERVER_HUE = "#c2185b"


def server_color(palette: QPalette) -> Any:
    """The memory server's marker colour (lighter on dark themes), distinct from every state hue."""
    from PySide6.QtGui import QColor

    color = QColor(SERVER_HUE)
    return color.lighter(150) if palette.color(QPalette.ColorRole.Base).lightness() < 128 else color


class ServerStartPanel(QFrame):
    """What the memory server's next start does to the shown character, above the guarded replay's
    sentinel bar. The text is selectable with mouse and keyboard (Tab to it, Ctrl+A, Ctrl+C);
    **Copy** puts all of it on the clipboard.

    Signals:
        copied(str): text was put on the clipboard (for the status bar).
    """

    copied = Signal(str)

    #: The body grows up to this many lines, then scrolls.
    MAX_LINES = 9

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ServerStartPanel")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.content: ServerStartText | None = None
        self.redact = False
        self.severity = "info"
        self.title = QLabel(f"<b>{TITLE}</b> — {SUBTITLE}")
        self.title.setObjectName("ServerStartTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.marks = QLabel()
        self.marks.setObjectName("ServerStartMarks")
        self.marks.setWordWrap(True)  # a narrow window wraps it rather than widening the timeline
        self.marks.setToolTip(
            "The memory server's marks on the timeline, in their own colour: a dashed outline and a tag on the "
            "event where its next start stops; a stripe at the left of each event it applies that our guarded "
            "replay would not (a full replay behind our sentinel, or an event past the one where ours stops)."
        )
        self.copy_button = QPushButton(icons.icon(icons.COPY, self.palette()), "Copy")
        self.copy_button.setToolTip("Copy what the memory server's next start does (plain text)")
        self.copy_button.clicked.connect(self.copy)
        self.body = QTextBrowser()
        self.body.setObjectName("ServerStartBody")
        self.body.setOpenLinks(False)
        self.body.setFrameShape(QFrame.Shape.NoFrame)
        self.body.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.body.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.body.setTabChangesFocus(True)
        self.body.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.body.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.body.setAccessibleName(TITLE)
        self.body.setAccessibleDescription(SUBTITLE)
        self.setAccessibleName(TITLE)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.marks)
        top.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.body)
        self.set_text(None)

    # -- content ----------------------------------------------------------------------------------------

    def set_timeline(self, timeline: CharacterTimeline | None) -> None:
        """Show the server's start for ``timeline`` (``None`` or a preview: nothing to say yet)."""
        if timeline is not None and timeline.provisional:
            self.set_message("Loading… (the server's start is predicted once the folder is read)")
            return
        self.set_text(timeline_text(timeline))

    def set_message(self, message: str) -> None:
        """A one-line placeholder (no folder, loading)."""
        self.content = None
        self._set_severity("info")
        self.body.setHtml(f"<p>{escape(message)}</p>")
        self.copy_button.setEnabled(False)
        self._fit()

    def set_text(self, content: ServerStartText | None) -> None:
        if content is None:
            self.set_message("No character shown.")
            return
        self.content = content
        self._set_severity(content.severity)
        self.body.setHtml(self._html(content))
        self.copy_button.setEnabled(True)
        self._fit()

    def plain_text(self) -> str:
        """What the panel says, as plain text (its title included; redacted as shown)."""
        if self.content is None:
            return f"{TITLE} — {SUBTITLE}\n  {self.body.toPlainText()}"
        text = self.content.plain()
        return redact_message(text) if self.redact else text

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.plain_text())
        self.copied.emit("memory server's next start")

    def _chip(self, severity: str) -> str:
        """The severity as the Findings table shows it: the word, on the state colour it borrows."""
        state = SEVERITY_STATE.get(severity)
        color = state_color(self.palette(), state) if state else None
        bg = f"background-color: {color.name()}; " if color is not None else ""
        word = escape(severity).ljust(7).replace(" ", "&nbsp;")
        return f'<span style="{bg}font-family: monospace;">&nbsp;{word}&nbsp;</span>'

    def set_redact(self, on: bool) -> None:
        """Redact what the panel shows (quoted lines, text digests), and show it again."""
        self.redact = on
        if self.content is not None:
            self.set_text(self.content)

    def _html(self, content: ServerStartText) -> str:
        shown = redact_message if self.redact else str
        para = '<p style="margin-top: 0; margin-bottom: 1px;">'
        rows = [f"{para}{self._chip(content.severity)}&nbsp; <b>{escape(shown(content.summary))}</b></p>"]
        for ln in content.lines:
            rows.append(
                f"{para}{self._chip(ln.severity)}&nbsp; <b>{escape(ln.label)}:</b> {escape(shown(ln.text))}</p>"
            )
        return "".join(rows)

    # -- look -------------------------------------------------------------------------------------------

    def _set_marks(self) -> None:
        color = server_color(self.palette()).name()
        self.marks.setText(
            f'<small>Timeline: <span style="color: {color};">■</span> server stops · '
            f'<span style="color: {color};">▌</span> server replays, ours would not</small>'
        )

    def _set_severity(self, severity: str) -> None:
        self._set_marks()
        self.severity = severity
        self.setProperty("severity", severity)
        palette = QPalette()
        state = SEVERITY_STATE.get(severity)
        if state is not None:
            window = palette.color(QPalette.ColorRole.Window)
            amount = 0.30 if severity == "error" else 0.18
            palette.setColor(QPalette.ColorRole.Window, blend(window, accent_color(palette, state), amount))
        self.setAutoFillBackground(state is not None)
        self.setPalette(palette)
        body = self.body.palette()
        body.setColor(QPalette.ColorRole.Base, palette.color(QPalette.ColorRole.Window))
        self.body.setPalette(body)

    def _fit(self) -> None:
        """Size the body to its text, up to :attr:`MAX_LINES` lines (then it scrolls)."""
        doc = self.body.document()
        width = max(200, self.body.viewport().width())
        doc.setTextWidth(width)
        line = self.body.fontMetrics().lineSpacing()
        height = int(doc.size().height()) + 2 * self.body.frameWidth() + 2
        self.body.setFixedHeight(max(line + 8, min(height, line * self.MAX_LINES + 8)))

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Override: refit the body to the new width."""
        super().resizeEvent(event)
        self._fit()
