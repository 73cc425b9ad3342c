"""The history of one entry (issue 18 item 3): a chart of its evidence over the journal, and a table.

The chart draws ``reinforcement`` and ``disputation`` (left axis) and ``sub_zero_days`` (right
axis) against the event index, journal order (``ts`` is metadata and is not monotonic: it is shown
on hover only). Each event is a marker coloured by its state (the timeline's colours,
:mod:`inspector.models.colors`), the sentinel a vertical line. The values are the stored ones, as
the events carry them: the chart says so, and a field no event has set yet is a gap, never a zero.

An entry may be touched by 100,000 events: the arrays are built once with numpy
(:func:`chart_arrays`), each series is one curve (pyqtgraph's own peak downsampling and clipping to
the view) and one :class:`pyqtgraph.ScatterPlotItem` per series (per-point brushes). When more
points are in view than markers can be told apart (one per :data:`MARKER_SIZE` pixels), the
markers are thinned per column of that width and state to the lowest and highest point
(:func:`marker_indices`), the way the curve is downsampled; zooming in shows every marker. Hover
and click find the event nearest the pointer, whether its marker is drawn or not.

The legend and the caption are below the plot, never over its points (issue 27 item 8); the x
axis reads plain event numbers (:class:`EventAxis`: no ``1e+06``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from operator import attrgetter
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QAbstractItemView, QLabel, QSplitter, QTableView, QVBoxLayout, QWidget

from inspector.core.vocabulary import UNKNOWN, EntryHistory, Point
from inspector.models.colors import STATE_HUES, accent_color
from inspector.models.history_model import (
    COL_CHANGED,
    COL_EFFECT,
    COL_INDEX,
    COL_STATE,
    COL_TS,
    COL_TYPE,
    HistoryTableModel,
    shown_value,
)
from inspector.widgets.header_layouts import install_column_menu
from inspector.widgets.pane_columns import ElidingDelegate, PaneColumn, PaneColumns

#: The series the chart draws: field, axis (``left`` / ``right``), marker symbol, and the palette
#: role of its line. Lines are solid: a dashed path of thousands of points is many times slower
#: to stroke, and the markers' symbols tell the series apart.
SERIES: tuple[tuple[str, str, str, QPalette.ColorRole], ...] = (
    ("reinforcement", "left", "o", QPalette.ColorRole.Text),
    ("disputation", "left", "s", QPalette.ColorRole.Link),
    ("sub_zero_days", "right", "t", QPalette.ColorRole.LinkVisited),
)

#: Marker states, in legend order: the event states, then issue 9's kinds of them (drawn hollow,
#: in the colour of the state they are a kind of).
MARKER_STATES: tuple[str, ...] = (*STATE_HUES, "held", "parked")
_KIND_OF = {"held": "pending", "parked": "applied"}

CAPTION = "stored values, as the events carry them; decay not applied"

#: How the table's columns share a narrow pane, most important first: the event's number and
#: state whole, its effect (a short word), the start of what it changed, then its type and ts
#: (elided); the changed fields take the rest (:class:`~inspector.widgets.pane_columns.PaneColumns`).
HISTORY_COLUMNS = (
    PaneColumn(COL_INDEX),
    PaneColumn(COL_STATE),
    PaneColumn(COL_EFFECT, floor_chars=4),
    PaneColumn(COL_CHANGED, cap_chars=30),
    PaneColumn(COL_TYPE, floor_chars=4),
    PaneColumn(COL_TS, floor_chars=4),
)
#: The changed fields' least width (pixels).
CHANGED_FLOOR = 80

MARKER_SIZE = 7
#: How near (pixels) the pointer must be to an event for the chart to show it.
HOVER_PX = 8


# -- the arrays (plain numpy; no Qt) ------------------------------------------------------------------


@dataclass(frozen=True)
class ChartArrays:
    """One entry's history as arrays, one element per point, built once.

    Attributes:
        x: the event indices (ascending: journal order).
        values: field → float values, ``nan`` where the field is unknown or not a number (a gap).
        states: index into :data:`MARKER_STATES` of each point's shown state.
    """

    x: np.ndarray
    values: dict[str, np.ndarray]
    states: np.ndarray


def _numbers(values: list[Any]) -> np.ndarray:
    """``values`` as floats; only stored numbers are drawn: unknown, null, text and booleans
    are gaps (``nan``), never zeros."""
    if set(map(type, values)) <= {float, int}:  # the usual case, converted in one call
        return np.array(values, dtype=np.float64)
    numbers = (float(v) if type(v) is float or type(v) is int else math.nan for v in values)
    return np.fromiter(numbers, dtype=np.float64, count=len(values))


def chart_arrays(history: EntryHistory) -> ChartArrays:
    """The chart's arrays of ``history``: a few C-speed passes over its points, the rest in numpy.

    Pure and Qt-free, so the window's controller can build them in its worker beside the history.
    """
    points = history.points
    n = len(points)
    x = np.fromiter(map(attrgetter("index"), points), dtype=np.float64, count=n)
    # The series are the entry's own fields (no pseudo-field): a field not in ``fields`` is unknown.
    fields = list(map(attrgetter("entry.fields"), points))
    values = {name: _numbers([f.get(name, UNKNOWN) for f in fields]) for name, *_ in SERIES}
    code = {s: i for i, s in enumerate(MARKER_STATES)}
    shown = map(attrgetter("shown_state"), points)
    states = np.fromiter((code.get(s, 0) for s in shown), dtype=np.int16, count=n)
    return ChartArrays(x, values, states)


def marker_indices(x: np.ndarray, y: np.ndarray, states: np.ndarray, x0: float, x1: float, columns: int) -> np.ndarray:
    """The points whose markers are drawn for the view ``[x0, x1]`` over ``columns`` pixel columns.

    Every finite point in view when there are at most two per column (as many as the columns can
    tell apart); else, for each column and state, its lowest and highest point (what the
    peak-downsampled curve reaches there). Vectorised: no per-point Python.
    """
    lo, hi = np.searchsorted(x, x0, side="left"), np.searchsorted(x, x1, side="right")
    idx = np.arange(lo, hi)
    idx = idx[np.isfinite(y[idx])]
    if len(idx) <= 2 * columns or x1 <= x0:
        return idx
    col = ((x[idx] - x0) * (columns / (x1 - x0))).astype(np.int64)
    codes = states[idx]
    keep = []
    for state in np.unique(codes):
        mine = codes == state
        sel, c = idx[mine], col[mine]
        starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])  # x ascends: a column is a run
        lengths = np.diff(np.r_[starts, len(sel)])
        ys = y[sel]
        for reduce in (np.minimum, np.maximum):
            best = np.repeat(reduce.reduceat(ys, starts), lengths)
            hits = np.flatnonzero(ys == best)
            keep.append(sel[hits[np.searchsorted(hits, starts)]])  # the first extreme of each run
    return np.unique(np.concatenate(keep))


# -- text ----------------------------------------------------------------------------------------------


def point_text(point: Point, redact: bool) -> str:
    """What hovering an event shows: which event, when, its state and effect, the series' values."""
    state = point.shown_state + (f" ({point.reason})" if point.reason and point.reason != point.shown_state else "")
    values = " · ".join(f"{name} {shown_value(name, point.entry.get(name), redact)}" for name, *_ in SERIES)
    return f"#{point.index} {point.type}\nts {point.ts} · {state} · {point.effect}\n{values}"


# -- the chart ---------------------------------------------------------------------------------------


class EventAxis(pg.AxisItem):
    """An axis of event indexes: ticks are whole event numbers as they are (``1000000``, never
    ``1e+06`` nor an SI prefix); a tick between two events is not labelled."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        """Override: plain integers."""
        return [str(int(np.rint(v))) if abs(v - np.rint(v)) < 1e-6 else "" for v in values]

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        """Override: each level's ticks never closer than one event apart."""
        return [(max(spacing, 1.0), offset) for spacing, offset in super().tickSpacing(minVal, maxVal, size)]


class HistoryChart(pg.PlotWidget):
    """The chart of one entry history (see the module docstring).

    Attributes:
        history: the history drawn (``None``: nothing).
        arrays: its arrays.
        redact: whether user text in the hover label is hidden.
        hovered: the position (in the history's points) of the event the label shows, or ``None``.

    Signals:
        event_activated(int): a point was clicked: its event index.
    """

    event_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, axisItems={"bottom": EventAxis("bottom")})
        self.history: EntryHistory | None = None
        self.arrays: ChartArrays | None = None
        self.redact = False
        self.hovered: int | None = None
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        plot.setLabel("bottom", "event index (journal order)")
        plot.setLabel("left", "reinforcement, disputation")
        plot.showAxis("right")
        plot.setLabel("right", "sub_zero_days")
        # sub_zero_days has its own scale: a second view box sharing the x axis (pyqtgraph's
        # MultiplePlotAxes recipe). It lies under the main one, so that dragging and the wheel
        # reach the main box, and clicks the main box does not take fall through to its markers.
        self.right = pg.ViewBox(enableMenu=False)
        self.right.setMouseEnabled(x=False, y=False)
        plot.scene().addItem(self.right)
        plot.getAxis("right").linkToView(self.right)
        self.right.setXLink(plot)
        self.right.setZValue(plot.vb.zValue() - 1)
        plot.vb.sigResized.connect(self._sync_right)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.markers: dict[str, pg.ScatterPlotItem] = {}
        self._shown: dict[str, np.ndarray] = {}  # series → indices of the points its markers draw
        for name, axis, symbol, _role in SERIES:
            curve = pg.PlotDataItem(connect="finite", name=name)
            curve.setDownsampling(auto=True, method="peak")
            curve.setClipToView(True)
            marker = pg.ScatterPlotItem(symbol=symbol, size=MARKER_SIZE, pxMode=True)
            box = plot.vb if axis == "left" else self.right
            box.addItem(curve)
            box.addItem(marker)
            self.curves[name], self.markers[name], self._shown[name] = curve, marker, np.arange(0)
        self.sentinel = pg.InfiniteLine(angle=90, movable=False, label="sentinel", labelOpts={"position": 0.95})
        self.sentinel.setVisible(False)
        plot.addItem(self.sentinel, ignoreBounds=True)
        self.selected = pg.InfiniteLine(angle=90, movable=False)
        self.selected.setVisible(False)
        plot.addItem(self.selected, ignoreBounds=True)
        self.label = pg.TextItem(anchor=(0, 1))
        self.label.setVisible(False)
        plot.addItem(self.label, ignoreBounds=True)
        # Markers follow the view, but a range change comes in several steps (auto-range, the
        # linked box, a resize): they are worked out once, just before the scene paints.
        self._markers_stale = False
        plot.vb.sigXRangeChanged.connect(self._markers_changed)
        plot.vb.sigResized.connect(self._markers_changed)
        self.scene().sigPrepareForPaint.connect(self._update_markers)
        self.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_scene_clicked)
        self.apply_palette()

    # -- data --------------------------------------------------------------------------------------

    def set_history(self, history: EntryHistory | None, arrays: ChartArrays | None = None) -> None:
        """Draw ``history`` (``arrays``: its :func:`chart_arrays`, when already built)."""
        self.history = history
        self.hovered = None
        self.label.setVisible(False)
        self.selected.setVisible(False)
        if history is None:
            self.arrays = None
            for name, *_ in SERIES:
                self.curves[name].setData([], [])
                self.markers[name].setData([], [])
                self._shown[name] = np.arange(0)
            self.sentinel.setVisible(False)
            return
        self.arrays = arrays if arrays is not None else chart_arrays(history)
        for name, *_ in SERIES:
            self.curves[name].setData(self.arrays.x, self.arrays.values[name])
        if history.sentinel_index is not None:
            self.sentinel.setValue(history.sentinel_index)
        self.sentinel.setVisible(history.sentinel_index is not None)
        self.getPlotItem().vb.enableAutoRange()
        self.right.enableAutoRange()
        self._markers_changed()

    def plotted(self, name: str) -> list[tuple[int, float, str]]:
        """``(x, y, shown state)`` of every point drawn for series ``name`` (gaps left out): the
        full arrays, whatever the markers show at this zoom."""
        a = self.arrays
        if a is None:
            return []
        y = a.values[name]
        return [(int(a.x[k]), float(y[k]), MARKER_STATES[a.states[k]]) for k in np.flatnonzero(np.isfinite(y))]

    def shown_markers(self, name: str) -> np.ndarray:
        """The positions (in the history's points) of the markers drawn for ``name`` at this zoom."""
        self.scene().prepareForPaint()  # what a paint does first: auto-range, then the markers
        return self._shown[name]

    def _markers_changed(self, *_args: Any) -> None:
        self._markers_stale = True
        self.update()

    def _update_markers(self) -> None:
        a = self.arrays
        if a is None or not self._markers_stale:
            return
        self._markers_stale = False
        (x0, x1), _ = self.getPlotItem().vb.viewRange()
        columns = max(1, int(self.getPlotItem().vb.width()) // MARKER_SIZE)
        for name, *_ in SERIES:
            shown = marker_indices(a.x, a.values[name], a.states, x0, x1, columns)
            self._shown[name] = shown
            codes = a.states[shown]
            self.markers[name].setData(
                x=a.x[shown], y=a.values[name][shown], brush=self._brushes[codes], pen=self._pens[codes]
            )

    # -- gestures ---------------------------------------------------------------------------------------

    def activate(self, position: int) -> None:
        """Emit :attr:`event_activated` for the history's point at ``position`` (what a click does)."""
        if self.history is not None and 0 <= position < len(self.history.points):
            self.event_activated.emit(self.history.points[position].index)

    def _on_scene_clicked(self, event: Any) -> None:
        """A click activates the event nearest the pointer (:meth:`point_near`), its marker drawn
        or thinned away."""
        if event.button() == Qt.MouseButton.LeftButton:
            found = self.point_near(event.scenePos())
            if found is not None:
                self.activate(found)

    def point_near(self, scene_pos: QPointF) -> int | None:
        """The history point whose event is nearest the pointer along x, within :data:`HOVER_PX`."""
        a = self.arrays
        vb = self.getPlotItem().vb
        if a is None or not len(a.x) or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        x = vb.mapSceneToView(scene_pos).x()
        at = int(np.clip(np.searchsorted(a.x, x), 0, len(a.x) - 1))
        best = min((k for k in (at - 1, at) if 0 <= k < len(a.x)), key=lambda k: abs(a.x[k] - x))
        px = abs(vb.mapViewToScene(QPointF(float(a.x[best]), 0.0)).x() - scene_pos.x())
        return best if px <= HOVER_PX else None

    def hover(self, position: int | None) -> None:
        """Show (or, for ``None``, hide) the label of the history's point at ``position``."""
        self.hovered = position
        if position is None or self.history is None:
            self.label.setVisible(False)
            return
        point = self.history.points[position]
        self.label.setText(point_text(point, self.redact))
        y = self.arrays.values["reinforcement"][position] if self.arrays is not None else math.nan
        (_, _), (y0, y1) = self.getPlotItem().vb.viewRange()
        self.label.setPos(point.index, y if math.isfinite(y) else (y0 + y1) / 2)
        self.label.setVisible(True)

    def _on_scene_mouse_moved(self, scene_pos: QPointF) -> None:
        found = self.point_near(scene_pos)
        if found != self.hovered:
            self.hover(found)

    def show_event(self, index: int | None) -> None:
        """Mark event ``index`` (the timeline's selection) with a vertical line; ``None`` hides it."""
        self.selected.setVisible(index is not None)
        if index is not None:
            self.selected.setValue(index)

    def set_redact(self, on: bool) -> None:
        self.redact = on
        self.hover(self.hovered)

    # -- palette ------------------------------------------------------------------------------------------

    def apply_palette(self) -> None:
        """Take every colour from the widget's palette (light or dark theme)."""
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        muted = QColor(text)
        muted.setAlphaF(0.55)
        self.setBackground(base)
        plot = self.getPlotItem()
        for side in ("left", "bottom", "right"):
            axis = plot.getAxis(side)
            axis.setPen(muted)
            axis.setTextPen(text)
            axis.enableAutoSIPrefix(False)  # the stored numbers, not rescaled ones
        for name, _axis, _symbol, role in SERIES:
            line = QColor(palette.color(role))
            line.setAlphaF(0.6)
            self.curves[name].setPen(pg.mkPen(line, width=1))
        self.label.setColor(text)
        self.label.fill = pg.mkBrush(base)
        self.label.border = pg.mkPen(muted)
        self.sentinel.setPen(pg.mkPen(accent_color(palette, "pending"), width=2, style=Qt.PenStyle.DashLine))
        self.sentinel.label.setColor(text)
        self.selected.setPen(pg.mkPen(palette.color(QPalette.ColorRole.Highlight), width=1))
        # One brush and pen per marker state, indexed by the state codes of the arrays; held and
        # parked are hollow, in the colour of the state they are kinds of.
        brushes, pens = [], []
        for state in MARKER_STATES:
            color = accent_color(palette, _KIND_OF.get(state, state))
            hollow = state in _KIND_OF
            brushes.append(pg.mkBrush(base if hollow else color))
            pens.append(pg.mkPen(color, width=2) if hollow else pg.mkPen(base, width=0.5))
        self._brushes = np.array(brushes, dtype=object)
        self._pens = np.array(pens, dtype=object)
        self._markers_changed()

    def changeEvent(self, event: QEvent) -> None:
        """Override: re-derive the colours when the palette (theme) changes."""
        super().changeEvent(event)
        # pyqtgraph's constructor changes the palette before the chart's items exist.
        # After close() pyqtgraph has let go of its plot item: nothing to colour.
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_brushes") and self.getPlotItem() is not None:
            self.apply_palette()

    def _sync_right(self) -> None:
        self.right.setGeometry(self.getPlotItem().vb.sceneBoundingRect())
        self.right.linkedViewChanged(self.getPlotItem().vb, self.right.XAxis)


# -- the panel ---------------------------------------------------------------------------------------


class HistoryPanel(QWidget):
    """The detail pane's history tab: what it shows, the chart, the legend and the table.

    Fed by the window (:meth:`set_history`, :meth:`set_message`); it asks nothing itself.

    Attributes:
        chart: the :class:`HistoryChart`.
        model: the :class:`HistoryTableModel` behind :attr:`table`.
        table: the history table.

    Signals:
        event_activated(int): a point was clicked or a row activated: its event index (the window
            selects that event in the timeline).
    """

    event_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history: EntryHistory | None = None
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.chart = HistoryChart(self)
        self.legend = QLabel()  # below the plot, never over its points
        self.legend.setWordWrap(True)
        self.caption = QLabel(f"<small>{CAPTION}</small>")
        self.caption.setWordWrap(True)  # a narrow pane wraps it rather than cutting it
        self.legend.setMinimumWidth(1)
        self.caption.setMinimumWidth(1)
        self.model = HistoryTableModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # the whole text is the tooltip
        # A type and a ts keep their ends (one entry's events share the type's prefix and the
        # date); the effect and the changed fields their start (a word, the field's name).
        left, right = Qt.TextElideMode.ElideLeft, Qt.TextElideMode.ElideRight
        modes = {COL_TYPE: left, COL_TS: left, COL_EFFECT: right, COL_CHANGED: right}
        self.table.setItemDelegate(ElidingDelegate(modes, self.table))
        self.columns = PaneColumns(self.table, HISTORY_COLUMNS, COL_CHANGED, CHANGED_FLOOR)
        self.columns.reset()
        install_column_menu(self.table, self.columns.reset)
        top = QWidget(self)
        box = QVBoxLayout(top)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.chart, 1)
        box.addWidget(self.legend)
        box.addWidget(self.caption)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(top)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(split, 1)
        self.chart.event_activated.connect(self.event_activated)
        self.table.activated.connect(self._on_table_activated)
        self.set_message("Select an event that touches a reflection or a persona entry.")

    def set_history(self, history: EntryHistory, arrays: ChartArrays | None = None) -> None:
        """Show ``history`` (``arrays``: its :func:`chart_arrays`, when built in a worker)."""
        self.history = history
        self.title.setText(self._title(history))
        self.chart.set_history(history, arrays)
        self.model.set_history(history)  # the columns fit themselves to the new rows
        self._fill_legend()

    def set_message(self, text: str) -> None:
        """Show ``text`` instead of a history (nothing selected, building, an error)."""
        self.history = None
        self.title.setText(text)
        self.chart.set_history(None)
        self.model.set_history(None)
        self.legend.setText("")

    def show_event(self, index: int | None) -> None:
        """Mark event ``index`` (the timeline's selection) on the chart and select its row."""
        self.chart.show_event(index)
        row = self.model.row_of(index) if index is not None else None
        if row is None:
            self.table.clearSelection()
        else:
            self.table.selectRow(row)
            self.table.scrollTo(self.model.index(row, 0))

    def set_redact(self, on: bool) -> None:
        """Hide (or show) user text in the table and the hover label."""
        self.model.set_redact(on)
        self.chart.set_redact(on)

    def _on_table_activated(self, index: Any) -> None:
        row = index.row()
        if self.history is not None and 0 <= row < len(self.history.points):
            self.event_activated.emit(self.history.points[row].index)

    def _title(self, history: EntryHistory) -> str:
        n = len(history.points)
        view = history.view
        if view.agrees is True:
            agrees = f"the current view agrees with its last applied point (#{view.index})"
        elif view.agrees is False:
            names = ", ".join(d.name for d in view.differences)
            agrees = f"the current view moved on without an event since #{view.index} ({names})"
        else:
            agrees = view.message or "no applied point to check the view against"
        return f"Entry {history.key.ref}: {n:,} event{'s' if n != 1 else ''}; {agrees}."

    def _fill_legend(self) -> None:
        palette = self.palette()
        a = self.chart.arrays
        present = sorted(set(np.unique(a.states).tolist())) if a is not None else []
        states = []
        for code in present:
            state = MARKER_STATES[code]
            color = accent_color(palette, _KIND_OF.get(state, state)).name()
            states.append(_legend_item(color, "○" if state in _KIND_OF else "●", state))
        series = [_legend_item(palette.color(role).name(), symbol_name(mark), name) for name, _, mark, role in SERIES]
        # The states on a line, the series on the next: a narrow pane wraps between items only.
        self.legend.setText(f"{LEGEND_GAP.join(states)}<br>{LEGEND_GAP.join(series)}")

    def changeEvent(self, event: QEvent) -> None:
        """Override: the table's state colours and the legend follow the palette (theme)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.model.set_palette(self.palette())
            if self.history is not None:
                self._fill_legend()


#: Between two items of the legend: where a narrow pane may wrap it.
LEGEND_GAP = "&nbsp; "


def _legend_item(color: str, mark: str, name: str) -> str:
    """One item of the legend, its coloured mark and its name never wrapped apart."""
    return f'<span style="color:{color}">{mark}</span>&nbsp;{escape(name)}'


def symbol_name(symbol: str) -> str:
    """The character that stands for a pyqtgraph marker symbol in the legend's text."""
    return {"o": "●", "s": "■", "t": "▼"}.get(symbol, symbol)
