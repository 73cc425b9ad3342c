"""The detail tabs beside the timeline: Event, Views (with provenance and replay preview),
Findings, Outbox. Each panel renders what it is given and turns clicks into signals."""

from __future__ import annotations

import json
import re
from typing import Any

from PySide6.QtCore import QItemSelection, QModelIndex, QObject, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSplitter,
    QStyle,
    QStyleOptionViewItem,
    QTableView,
    QTabWidget,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from inspector.core.redaction import redact_message, redact_tree
from inspector.core.timeline import DAMAGED, DEFECT_TEXT, LOADING, REASON_TEXT, UNCHECKED, Row
from inspector.core.views import LoadedFile, TreePath, entry_at, search_tree
from inspector.core.vocabulary import EventInfo, Finding
from inspector.models.colors import STATE_LABELS
from inspector.models.json_tree_model import PATH_ROLE, JsonTreeModel
from inspector.models.tables import ROW_ROLE, FindingTableModel, OutboxTableModel
from inspector.models.timeline_model import (
    COL_ENTRY,
    COL_INDEX,
    COL_TIME,
    REF_ROLE,
    UNCHECKED_TIP,
    EventTableModel,
)
from inspector.widgets import icons
from inspector.widgets.find import MatchDelegate, MatchHighlighter
from inspector.widgets.pane_columns import CELL_MARGINS, ElidingDelegate, PaneColumn, PaneColumns


def _mono() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def _tree(model: Any) -> QTreeView:
    view = QTreeView()
    view.setModel(model)
    view.setUniformRowHeights(True)
    view.setAlternatingRowColors(True)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
    view.header().resizeSection(0, 220)
    view.header().setStretchLastSection(True)
    return view


def _copy_button(text: str, tip: str) -> QToolButton:
    """A compact copy button (a tool button has no minimum width, so a narrow pane keeps it whole)."""
    b = QToolButton()
    b.setText(text)
    b.setToolTip(tip)
    return b


def _wrapping(label: QLabel) -> QLabel:
    """A label whose text wraps to the pane instead of widening it: its minimum width is not its
    longest word's (a 64-digit hash pushed the splitter once), and long words break anyway.

    Its text is always HTML (made with :func:`_esc`): Qt's automatic detection took an escaped
    message without a tag for plain text and showed its entities (``&#x27;``, issue 27 item 6)."""
    label.setWordWrap(True)
    label.setMinimumWidth(1)
    label.setTextFormat(Qt.TextFormat.RichText)
    return label


class EventDetail(QWidget):
    """The selected row: identity, the reason in words, the payload as a tree and as raw JSON.

    Signals:
        copied(str): text was put on the clipboard (for the status bar).
    """

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.redact = False
        self._row: Row | None = None
        self._state: str | None = None
        self._server = ""
        self._record: Any = None
        self._raw = b""
        self.header = _wrapping(QLabel("Select an event in the timeline."))
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        #: What the memory server's next start does with this row (first: it happens unless someone acts).
        self.server_note = _wrapping(QLabel())
        self.server_note.setObjectName("ServerNoteBox")
        self.server_note.setFrameShape(QFrame.Shape.StyledPanel)
        self.server_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.server_note.hide()
        #: Why our guarded replay stops here or flags the row.
        self.reason = _wrapping(QLabel())
        self.reason.setObjectName("ReasonBox")
        self.reason.setFrameShape(QFrame.Shape.StyledPanel)
        self.reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reason.hide()
        self.tree_model = JsonTreeModel(self)
        self.tree = _tree(self.tree_model)
        self.raw = QPlainTextEdit()
        self.raw.setReadOnly(True)
        self.raw.setFont(_mono())
        self.raw.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.copy_payload = _copy_button("Payload", "Copy the payload (as shown)")
        self.copy_record = _copy_button("Record", "Copy the whole record (as shown)")
        self.copy_id = _copy_button("Event id", "Copy the event id")
        self.copy_payload.clicked.connect(self._copy_payload)
        self.copy_record.clicked.connect(self._copy_record)
        self.copy_id.clicked.connect(self._copy_id)
        buttons = QHBoxLayout()
        copy_icon = QLabel()
        icons.set_icon(copy_icon, icons.COPY, size=16)
        buttons.addWidget(copy_icon)
        buttons.addWidget(QLabel("Copy:"))
        for b in (self.copy_payload, self.copy_record, self.copy_id):
            buttons.addWidget(b)
        buttons.addStretch(1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.raw)
        split.setSizes([300, 160])
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(self.server_note)
        layout.addWidget(self.reason)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        self._set_buttons(False)
        # The find's matches (issue 16 item 15), in the payload as a tree and as raw JSON.
        self.tree_matches = MatchDelegate(self.tree)
        self.tree.setItemDelegate(self.tree_matches)
        self.raw_matches = MatchHighlighter(self.raw.document(), self.raw.palette())

    def restyle(self) -> None:
        """After a theme switch: the find highlight in the raw JSON (issue 27 item 9)."""
        self.raw_matches.set_palette(QPalette())

    def set_highlight(self, pattern: re.Pattern[str] | None) -> None:
        """Highlight ``pattern``'s matches in the payload views (``None``: none)."""
        self.tree_matches.pattern = pattern
        self.tree.viewport().update()
        self.raw_matches.set_pattern(pattern)

    def _set_buttons(self, on: bool) -> None:
        for b in (self.copy_payload, self.copy_record, self.copy_id):
            b.setEnabled(on)

    def clear(self) -> None:
        self._row, self._record, self._raw = None, None, b""
        self._server = ""
        self.header.setText("Select an event in the timeline.")
        self.server_note.hide()
        self.reason.hide()
        self.tree_model.set_value(None)
        self.raw.setPlainText("")
        self._set_buttons(False)

    def set_redact(self, redact: bool) -> None:
        self.redact = redact
        self.tree_model.set_redact(redact)
        if self._row is not None:
            self.show_row(self._row, self._record, self._raw, self._state, server=self._server)

    def _message(self, text: str) -> str:
        """A diagnosis message, redacted when redaction is on (quoted lines, text digests)."""
        return redact_message(text) if self.redact else text

    def show_row(self, row: Row, record: Any, raw: bytes, state: str | None = None, *, server: str = "") -> None:
        """Show one row; ``record`` is the parsed line (``None`` for a damaged line); ``state`` overrides
        the row's own (``loading`` while only a preview is shown); ``server`` says what the memory
        server's next start does with it (``""``: nothing to say)."""
        self._row, self._record, self._raw = row, record, raw
        self._state = state
        self._server = server
        if server and state not in (LOADING, UNCHECKED):
            self.server_note.setText(f"<b>Memory server's next start:</b> {_esc_wrapping(self._message(server))}")
            self.server_note.show()
        else:
            self.server_note.hide()
        if state is None:
            state = row.state if isinstance(row, EventInfo) else DAMAGED
        if isinstance(row, EventInfo):
            self.header.setText(
                f"<b>#{row.index}</b> &nbsp; <b>{_esc(row.type or '(no type)')}</b> &nbsp; "
                f"<span>{_esc(STATE_LABELS.get(state, state))}</span><br>"
                f"<small>{_esc(row.event_id)} · {_esc(row.ts)} · line {row.line}, byte {row.offset}"
                f"{' · entry ' + _esc(row.entry) if row.entry else ''}</small>"
            )
            if state == UNCHECKED:
                self.reason.setText(f"<b>{UNCHECKED.capitalize()}:</b> {_esc(UNCHECKED_TIP)}")
                self.reason.show()
            elif state != LOADING and (row.reason or (row.message and state != "applied")):
                words = REASON_TEXT.get(row.reason or "", "")
                extra = f"<br><small>{_esc_wrapping(self._message(row.message))}</small>" if row.message else ""
                self.reason.setText(
                    f"<b>Why {STATE_LABELS.get(state, state)}</b> (our guarded replay, memory-inspector)<b>:</b> "
                    f"{_esc(words)}{extra}"
                )
                self.reason.show()
            else:
                self.reason.hide()
            payload = record.get("payload") if isinstance(record, dict) else None
            self.tree_model.set_redact(self.redact)
            self.tree_model.set_value(payload if payload is not None else {})
            self.tree.expandToDepth(0)
            shown = self.tree_model.shown_value()
            record_shown = {**record, "payload": shown} if isinstance(record, dict) else None
            self.raw.setPlainText(
                json.dumps(record_shown, ensure_ascii=False, indent=2) if record_shown is not None else ""
            )
            self._set_buttons(True)
        else:
            kind = DEFECT_TEXT.get(row.kind, row.kind)
            recovered = (
                f"<br>Event {_esc(row.recovered_event_id)} was recovered from it." if row.recovered_event_id else ""
            )
            unchecked = f" &nbsp; <span>{UNCHECKED}</span>" if state == UNCHECKED else ""
            self.header.setText(
                f"<b>Damaged line</b> ({_esc(kind)}){unchecked} &nbsp; <small>line {row.line}, byte {row.offset}, "
                f"{row.length} bytes</small>"
            )
            self.reason.setText(f"{_esc_wrapping(self._message(row.message))}{recovered}")
            self.reason.show()
            self.tree_model.set_value(None)
            text = raw.decode("utf-8", "replace")
            self.raw.setPlainText("(hidden: redaction is on)" if self.redact else text[:200_000])
            self._set_buttons(False)
            self.copy_record.setEnabled(not self.redact)

    def _clip(self, text: str, what: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(what)

    def _copy_payload(self) -> None:
        self._clip(json.dumps(self.tree_model.shown_value(), ensure_ascii=False, indent=2), "payload")

    def _copy_record(self) -> None:
        self._clip(self.raw.toPlainText(), "record")

    def _copy_id(self) -> None:
        if isinstance(self._row, EventInfo):
            self._clip(self._row.event_id, "event id")


def _esc(text: str | None) -> str:
    from html import escape

    return escape(text or "")


def _esc_wrapping(text: str | None) -> str:
    """An explanation as HTML, with a break opportunity (a zero-width space) every
    :data:`_BREAK_EVERY` characters of a very long word (a hash, a path), so that it wraps too."""
    words = (
        w if len(w) <= _BREAK_EVERY else _ZWSP.join(w[i : i + _BREAK_EVERY] for i in range(0, len(w), _BREAK_EVERY))
        for w in (text or "").split(" ")
    )
    return _esc(" ".join(words))


_BREAK_EVERY = 24
_ZWSP = "\u200b"


class ViewsPanel(QWidget):
    """The views and shard files as searchable JSON trees, the provenance of the selected entry,
    and the dry-run preview of replaying a pending or blocked event.

    Signals:
        file_requested(str): the user picked a file (relative path) to show.
        entry_selected(str): the user selected an entry (its key), for provenance.
        provenance_activated(object): an event row in the provenance list was activated.
    """

    file_requested = Signal(str)
    entry_selected = Signal(str)
    provenance_activated = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.redact = False
        self._loaded: LoadedFile | None = None
        self._hits: list[TreePath] = []
        self._hit = -1
        self.files = QComboBox()
        self.files.setMinimumContentsLength(12)
        self.files.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.files.currentTextChanged.connect(self._on_file_chosen)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find key or value…")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.find_next)
        self.search.textChanged.connect(self._on_search_changed)
        self.find_prev_button = QToolButton()
        self.find_prev_button.setText("▲")
        self.find_prev_button.clicked.connect(self.find_previous)
        self.find_next_button = QToolButton()
        self.find_next_button.setText("▼")
        self.find_next_button.clicked.connect(self.find_next)
        self.hits_label = QLabel()
        top = QHBoxLayout()
        top.addWidget(self.files, 2)
        top.addWidget(self.search, 2)
        top.addWidget(self.find_prev_button)
        top.addWidget(self.find_next_button)
        top.addWidget(self.hits_label)
        self.error = QLabel()
        self.error.setObjectName("ViewError")
        self.error.setTextFormat(Qt.TextFormat.PlainText)  # a file's own words: shown as text
        self.error.setWordWrap(True)
        self.error.hide()
        self.tree_model = JsonTreeModel(self)
        self.tree = _tree(self.tree_model)
        self.tree.selectionModel().selectionChanged.connect(self._on_tree_selection)

        self.provenance_title = QLabel("Select an entry to see the events that touch it.")
        self.provenance_title.setWordWrap(True)
        self.provenance_model = EventTableModel(self)
        self.provenance = QTableView()
        self.provenance.setModel(self.provenance_model)
        self.provenance.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.provenance.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.provenance.verticalHeader().setVisible(False)
        self.provenance.setShowGrid(False)
        for col in (COL_TIME, COL_ENTRY):
            self.provenance.setColumnHidden(col, True)
        self.provenance.horizontalHeader().setStretchLastSection(True)
        self.provenance.horizontalHeader().resizeSection(COL_INDEX, 60)
        self.provenance.activated.connect(self._on_provenance_activated)
        self.provenance.doubleClicked.connect(self._on_provenance_activated)

        self.preview_title = QLabel()
        self.preview_title.setWordWrap(True)
        self.preview_model = JsonTreeModel(self)
        self.preview = _tree(self.preview_model)

        prov_box = QWidget()
        prov_layout = QVBoxLayout(prov_box)
        prov_layout.setContentsMargins(0, 0, 0, 0)
        prov_layout.addWidget(self.provenance_title)
        prov_layout.addWidget(self.provenance)
        preview_box = QWidget()
        preview_layout = QVBoxLayout(preview_box)
        preview_layout.setContentsMargins(0, 0, 0, 0)
        preview_layout.addWidget(self.preview_title)
        preview_layout.addWidget(self.preview)
        self.preview_box = preview_box

        tree_box = QWidget()
        tree_layout = QVBoxLayout(tree_box)
        tree_layout.setContentsMargins(0, 0, 0, 0)
        tree_layout.addLayout(top)
        tree_layout.addWidget(self.error)
        tree_layout.addWidget(self.tree, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(tree_box)
        split.addWidget(prov_box)
        split.addWidget(preview_box)
        split.setSizes([420, 160, 160])
        layout = QVBoxLayout(self)
        layout.addWidget(split)
        self.set_preview(None, "")

    # -- files ---------------------------------------------------------------------------------------

    def set_files(self, files: list[str]) -> None:
        current = self.files.currentText()
        self.files.blockSignals(True)
        self.files.clear()
        self.files.addItems(files)
        if current in files:
            self.files.setCurrentText(current)
        self.files.blockSignals(False)

    def current_file(self) -> str:
        return self.files.currentText()

    def _on_file_chosen(self, rel: str) -> None:
        if rel:
            self.file_requested.emit(rel)

    def show_file(self, loaded: LoadedFile, select: TreePath | None = None) -> None:
        """Show a loaded file; select and scroll to ``select`` when given.

        Without ``select``, the selection stays only when this is the file shown, read again (a
        live change). Otherwise no entry of it is meant (the entry an event touches is lost from
        it; the caller says why), and an unrelated entry must not stay highlighted.
        """
        shown = self._loaded
        reread = shown is not None and shown is not loaded and shown.rel == loaded.rel
        self._loaded = loaded
        if self.files.currentText() != loaded.rel:
            self.files.blockSignals(True)
            if self.files.findText(loaded.rel) < 0:
                self.files.addItem(loaded.rel)
            self.files.setCurrentText(loaded.rel)
            self.files.blockSignals(False)
        if loaded.error:
            self.error.setText(f"{loaded.rel}: {loaded.error}")
            self.error.show()
        else:
            self.error.hide()
        expanded_path = self.selected_path() if select is None and reread else None
        self.tree_model.set_redact(self.redact)
        self.tree_model.set_value(loaded.value)
        self._hits, self._hit = [], -1
        if self.search.text():
            self._on_search_changed(self.search.text())
        if select is not None:
            self.select_path(select)
        elif expanded_path:
            self.select_path(expanded_path)

    def select_path(self, path: TreePath) -> bool:
        index = self.tree_model.index_for_path(path)
        if not index.isValid():
            return False
        parent = index.parent()
        while parent.isValid():
            self.tree.expand(parent)
            parent = parent.parent()
        self.tree.expand(index)
        self.tree.setCurrentIndex(index)
        self.tree.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def selected_path(self) -> TreePath | None:
        index = self.tree.currentIndex()
        return self.tree_model.data(index, PATH_ROLE) if index.isValid() else None

    def set_redact(self, redact: bool) -> None:
        self.redact = redact
        path = self.selected_path()
        self.tree_model.set_redact(redact)
        self.preview_model.set_redact(redact)
        if path:
            self.select_path(path)

    # -- search ------------------------------------------------------------------------------------------

    def _on_search_changed(self, text: str) -> None:
        value = self.tree_model.value()
        if not text or value is None:
            self._hits, self._hit = [], -1
            self.hits_label.setText("")
            return
        # Search what is shown: with redaction on, hidden text must not be findable.
        shown = redact_tree(value) if self.redact else value
        self._hits = search_tree(shown, text)
        self._hit = -1
        self.hits_label.setText(f"{len(self._hits)} match{'es' if len(self._hits) != 1 else ''}")

    def find_next(self) -> None:
        self._step(1)

    def find_previous(self) -> None:
        self._step(-1)

    def _step(self, step: int) -> None:
        if not self._hits:
            self._on_search_changed(self.search.text())
        if not self._hits:
            return
        self._hit = (self._hit + step) % len(self._hits)
        self.select_path(self._hits[self._hit])
        self.hits_label.setText(f"{self._hit + 1} of {len(self._hits)}")

    def restyle(self) -> None:
        """After a theme switch: the provenance rows' state colours (issue 27 item 9)."""
        self.provenance_model.set_palette(QPalette())

    # -- provenance ------------------------------------------------------------------------------------------

    def _on_tree_selection(self, _sel: QItemSelection, _desel: QItemSelection) -> None:
        if self._loaded is None or self._loaded.value is None:
            return
        path = self.selected_path()
        if path is None:
            return
        entry = entry_at(self._loaded.rel, self._loaded.value, path)
        if entry is not None:
            self.entry_selected.emit(entry)

    def set_provenance(
        self, entry: str | None, timeline: Any = None, refs: list[int] | None = None, summaries: Any = None
    ) -> None:
        """List the events touching ``entry`` (refs into ``timeline``); ``None`` clears the list."""
        rows = refs or []
        if entry is None:
            self.provenance_title.setText("Select an entry to see the events that touch it.")
        else:
            shown = entry.replace("*/", "")
            n = len(rows)
            self.provenance_title.setText(
                f"<b>Provenance</b> of <code>{_esc(shown)}</code>: {n} event{'s' if n != 1 else ''} "
                "touch it (activate one to select it in the timeline)"
            )
        self.provenance_model.set_rows(timeline if entry is not None else None, rows, summaries)

    def _on_provenance_activated(self, index: QModelIndex) -> None:
        ref = self.provenance_model.data(index, REF_ROLE)
        if ref is not None:
            self.provenance_activated.emit(ref)

    # -- replay preview --------------------------------------------------------------------------------------

    def set_preview(self, diff: Any, text: str) -> None:
        """The dry-run outcome for the selected event (``diff`` as a JSON-like value), or nothing."""
        self.preview_title.setText(f"<b>Replay preview</b> (dry run on a scratch copy): {_esc(text)}" if text else "")
        self.preview_model.set_value(diff)
        self.preview.expandToDepth(1)
        self.preview_box.setVisible(bool(text))


COL_SEVERITY, COL_CODE, COL_MESSAGE, COL_WHERE = range(4)
MESSAGE_FLOOR_CHARS = 12

#: How the Findings columns share a narrow pane, most important first: the code whole, the
#: severity's icon, the start of the message (about 40 characters), then the severity's word and
#: the event or file; the message takes the rest (:class:`~inspector.widgets.pane_columns.PaneColumns`).
FINDING_COLUMNS = (
    PaneColumn(COL_CODE),
    PaneColumn(COL_MESSAGE, cap_chars=40),
    PaneColumn(COL_SEVERITY, floor_px=16 + CELL_MARGINS),
    PaneColumn(COL_WHERE, floor_chars=4),
)

_SEVERITY_ICONS = {
    "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
    "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
    "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
}


class SeverityDelegate(ElidingDelegate):
    """The Findings table's cells: the severity with its icon, the icon alone when the column is
    too narrow for its word (the word stays the cell's text: on hover, for accessibility, in a
    copy); the message elided at its end, the event or file in the middle."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__({COL_MESSAGE: Qt.TextElideMode.ElideRight, COL_WHERE: Qt.TextElideMode.ElideMiddle}, parent)

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        """Override: the severity's icon, and its word only when it fits whole."""
        super().initStyleOption(option, index)
        if index.column() != COL_SEVERITY:
            return
        pixmap = _SEVERITY_ICONS.get(str(index.data()))
        if pixmap is None:
            return
        widget = option.widget
        style = widget.style() if widget is not None else QApplication.style()
        option.icon = style.standardIcon(pixmap, None, widget)
        option.features |= QStyleOptionViewItem.ViewItemFeature.HasDecoration
        option.decorationSize = QSize(16, 16)
        # The view measures a cell with an empty rect (its natural width: icon and word).
        room = option.rect.width()
        if room and room < 16 + option.fontMetrics.horizontalAdvance(option.text) + CELL_MARGINS:
            option.text = ""


class FindingsPanel(QWidget):
    """The diagnosis findings of the shown character.

    Signals:
        finding_activated(object): a :class:`journal.diagnosis.Finding` was activated.
    """

    finding_activated = Signal(object)

    def __init__(self, model: FindingTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.table = QTableView()
        self.table.setModel(model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a code squeezed keeps both ends
        # The message elides at its end (its start is what reads), the event id or file in the
        # middle; the whole of both is on hover and in the box below.
        self.table.setItemDelegate(SeverityDelegate(self.table))
        self.columns = PaneColumns(self.table, FINDING_COLUMNS, COL_MESSAGE, self._message_floor())
        self.reset_columns()
        self.table.activated.connect(self._on_activated)
        self.table.doubleClicked.connect(self._on_activated)
        #: The selected finding whole, wrapped and selectable (issue 27 item 5: the table cuts it).
        self.full = QPlainTextEdit()
        self.full.setObjectName("FindingText")
        self.full.setReadOnly(True)
        self.full.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.full.setPlaceholderText("Select a finding to read it whole.")
        self.full.setMaximumHeight(self.full.fontMetrics().lineSpacing() * 7 + 12)
        self.copy_button = _copy_button("Copy", "Copy the selected finding (as shown)")
        icons.set_icon(self.copy_button, icons.COPY, self.palette())
        self.copy_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.copy_button.clicked.connect(self.copy_selected)
        self.table.selectionModel().currentRowChanged.connect(self._show_current)
        model.modelReset.connect(self._show_current)
        model.dataChanged.connect(self._show_current)  # redaction on or off
        hint = QLabel(
            "Errors first, then warnings, then info, as check lists them. Findings whose code starts with "
            "server. are about the memory server's next start; the others are about the folder and our guarded "
            "replay. Activate a finding (double-click or Enter) to select its event or file."
        )
        hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        box = QHBoxLayout()
        box.addWidget(self.full, 1)
        box.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(box)
        layout.addWidget(hint)
        self._show_current()

    def selected(self) -> Finding | None:
        """The finding of the table's current row, if any."""
        index = self.table.currentIndex()
        row = self.model.data(index, ROW_ROLE) if index.isValid() else None
        return row if isinstance(row, Finding) else None

    def _show_current(self, *_args: Any) -> None:
        finding = self.selected()
        self.full.setPlainText(self.model.full_text(finding) if finding is not None else "")
        self.copy_button.setEnabled(finding is not None)

    def copy_selected(self) -> None:
        """Put the selected finding, whole, on the clipboard."""
        if self.selected() is not None:
            QGuiApplication.clipboard().setText(self.full.toPlainText())

    def reset_columns(self) -> None:
        """The default layout: every column in view, fitted to the pane (:data:`FINDING_COLUMNS`),
        the message taking the room the others leave; fitted again as the pane changes, until the
        user lays the columns out."""
        self.columns.reset()

    def _message_floor(self) -> int:
        """The message's least width: about a dozen characters (80 px at the usual font)."""
        return max(80, self.table.fontMetrics().averageCharWidth() * MESSAGE_FLOOR_CHARS)

    def _on_activated(self, index: QModelIndex) -> None:
        finding = self.model.data(index, ROW_ROLE)
        if finding is not None:
            self.finding_activated.emit(finding)


class OutboxPanel(QWidget):
    """Pending and dead-letter outbox operations of the shown character."""

    def __init__(self, model: OutboxTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.table = QTableView()
        self.table.setModel(model)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Short columns as wide as their content; the operation id takes the room left, elided in
        # the middle with the whole id on hover. The table scrolls sideways only when the short
        # columns alone do not fit (issue 16 item 22: no stray scrollbar for a fixed-width id).
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.empty = QLabel("No pending outbox operations.")
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(self.empty)
        model.modelReset.connect(self._update_empty)
        self._update_empty()

    def _update_empty(self) -> None:
        self.empty.setVisible(self.model.rowCount() == 0)


class DetailTabs(QTabWidget):
    """The right-hand tabs."""

    def __init__(self, findings: FindingTableModel, outbox: OutboxTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Compact tabs, so that all five titles fit the pane of a 900 px window (issue 16 item 7).
        self.tabBar().setStyleSheet("QTabBar::tab { padding: 4px 5px; }")
        self.event_detail = EventDetail()
        self.views = ViewsPanel()
        self.findings = FindingsPanel(findings)
        self.outbox = OutboxPanel(outbox)
        self.addTab(self.event_detail, "Event")
        self.addTab(self.views, "Views")
        self.addTab(self.findings, "Findings")
        self.addTab(self.outbox, "Outbox")

    def set_counts(self, findings: int, outbox: int) -> None:
        self.setTabText(2, f"Findings ({findings})" if findings else "Findings")
        self.setTabText(3, f"Outbox ({outbox})" if outbox else "Outbox")
