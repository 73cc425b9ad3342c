"""The memory server's next start, per character: what happens to the folder unless someone acts.

The window says two things, each with its actor (README: "What the memory server's next start does"): first
this panel, *the memory server's next start* (``CharacterDiagnosis.server_start`` and the
``server.*`` findings, memory-format §9), then the sentinel bar, *our guarded replay*. Neither may
pass for the other, so every line here names the server, and the panel's title says so.

:mod:`inspector.core.server_start_text` turns the prediction into lines (the one renderer, which
``check`` prints too, told it is the window's); :class:`ServerStartPanel` shows them: selectable,
copyable, focusable with Tab.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette, QResizeEvent, QTextOption
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QSizePolicy, QTextBrowser, QVBoxLayout, QWidget

from inspector.core.redaction import redact_message
from inspector.core.server_start_text import SUBTITLE, TITLE, ServerStartText, for_character
from inspector.core.timeline import CharacterTimeline
from inspector.models.colors import accent_color, blend, state_color
from inspector.widgets import icons
from inspector.widgets.screen_fit import ElidingLabel

#: Severity → the state colour it borrows (as the Findings table colours its Severity cells).
SEVERITY_STATE = {"error": "blocked", "warning": "suspect", "info": None}


def timeline_text(timeline: CharacterTimeline | None) -> ServerStartText | None:
    """What the memory server's next start does, for the window (``None``: nothing shown): the
    one renderer ``check`` prints too (:mod:`inspector.core.server_start_text`)."""
    if timeline is None or timeline.provisional:
        return None
    return for_character(timeline.diagnosis, "window")


# -- the widget ---------------------------------------------------------------------------------------

#: What the key to the server's marks means (its tooltip).
MARKS_TIP = (
    "The memory server's marks on the timeline, in their own colour: a dashed outline and a tag on the "
    "event where its next start stops; a stripe at the left of each event it applies that our guarded "
    "replay would not (a full replay behind our sentinel, or an event past the one where ours stops)."
)


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

    #: The share of its column's height the panel takes at most, its verdict whole at least: the
    #: timeline under it keeps the rest (at 810×540 the panel took 230 px and left two rows, issue 27).
    COLUMN_SHARE = 0.2

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ServerStartPanel")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.content: ServerStartText | None = None
        self._column: QWidget | None = None
        self.redact = False
        self.severity = "info"
        # One line, cut at its end and whole on hover: wrapped, it took four lines of a narrow column.
        self.title = ElidingLabel(f"{TITLE} — {SUBTITLE}")
        self.title.setObjectName("ServerStartTitle")
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.title.min_chars = len(TITLE)
        self.copy_button = QPushButton("Copy")
        icons.set_icon(self.copy_button, icons.COPY, self.palette())
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
        top.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.body)
        self._watch_column()
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
        text = "\n".join(self.content.plain())
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
        return "".join(rows) + self._marks_html()

    # -- look -------------------------------------------------------------------------------------------

    def _marks_html(self) -> str:
        """The key to the server's marks on the timeline, in their colour, after what the panel says
        (a line beside the title took three lines of a narrow column)."""
        color = server_color(self.palette()).name()
        return (
            f'<p style="margin-top: 3px; margin-bottom: 0;" title="{escape(MARKS_TIP)}"><small>Timeline: '
            f'<span style="color: {color};">■</span> server stops · '
            f'<span style="color: {color};">▌</span> server replays, ours would not</small></p>'
        )

    def _set_severity(self, severity: str) -> None:
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
        body = QPalette(palette)
        body.setColor(QPalette.ColorRole.Base, palette.color(QPalette.ColorRole.Window))
        self.body.setPalette(body)
        # The style sheet gave the viewport a palette of its own: it follows its parent's no more.
        self.body.viewport().setPalette(body)

    def body_height(self) -> int:
        """The body's height: its text's, up to :attr:`MAX_LINES` lines and the panel's share of its
        column (:attr:`COLUMN_SHARE`), then it scrolls; never less than its first paragraph, the
        verdict, so that it stays whole and first."""
        doc = self.body.document()
        doc.setTextWidth(max(200, self.body.viewport().width()))
        line = self.body.fontMetrics().lineSpacing()
        extra = 2 * self.body.frameWidth() + 2
        text = int(doc.size().height()) + extra
        verdict = int(doc.documentLayout().blockBoundingRect(doc.firstBlock()).bottom()) + extra
        most = line * self.MAX_LINES + 8
        column = self.parentWidget()
        if column is not None and column.height() > 0:
            m = self.layout().contentsMargins()
            top = max(self.title.sizeHint().height(), self.copy_button.sizeHint().height())
            chrome = m.top() + m.bottom() + self.layout().spacing() + top + 2 * self.frameWidth()
            most = min(most, int(column.height() * self.COLUMN_SHARE) - chrome)
        if text <= most:
            return max(line + 8, verdict, text)
        # It scrolls: whole paragraphs only, so that no line shows cut in half at the bottom.
        shown, block = verdict, doc.firstBlock().next()
        while block.isValid():
            bottom = int(doc.documentLayout().blockBoundingRect(block).bottom()) + extra
            if bottom > most:
                break
            shown, block = bottom, block.next()
        return max(line + 8, shown)

    def _fit(self) -> None:
        self.body.setFixedHeight(self.body_height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Override: refit the body when its column's height changes (the window was resized)."""
        if watched is self.parentWidget() and event.type() == QEvent.Type.Resize:
            self._fit()
        return False

    def changeEvent(self, event: QEvent) -> None:
        """Override: follow the column the panel is put in."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ParentChange:
            self._watch_column()

    def _watch_column(self) -> None:
        column = self.parentWidget()
        if column is not None and column is not self._column:
            if self._column is not None:
                self._column.removeEventFilter(self)
            column.installEventFilter(self)
            self._column = column

    def restyle(self) -> None:
        """After a theme switch: its tint, the body's and the severity chips (issue 27 item 9)."""
        if self.content is not None:
            self.set_text(self.content)
        else:
            self._set_severity(self.severity)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Override: refit the body to the new width."""
        super().resizeEvent(event)
        self._fit()
