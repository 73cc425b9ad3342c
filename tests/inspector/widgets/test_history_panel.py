"""The history panel (issue 18 item 3): the chart's points are the history's, a click on a marker
activates its event, the sentinel is a line, unknown values are gaps, text is redacted, colours
follow the palette, and 100,000 points draw as a few items."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPalette

from inspector.models.colors import accent_color
from inspector.widgets.history_panel import (
    CAPTION,
    MARKER_STATES,
    SERIES,
    HistoryChart,
    HistoryPanel,
    chart_arrays,
    marker_indices,
)
from journal import EventLog
from journal import fixtures as folders
from journal.diagnosis import diagnose_character
from journal.history import UNKNOWN, EntryHistory, EntryKey, EntryState, JournalHistory, Point
from tests.inspector.widgets.folders_for_gui import SECRET, two_characters

PERSONA = EntryKey(folders.PERSONA_ENTRY[1], folders.PERSONA_ENTRY[0])
ALICE_REF = EntryKey("ref_0000000000000001")


@pytest.fixture(autouse=True)
def _no_real_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))


def _history(char_dir: Path, key: EntryKey) -> EntryHistory:
    return JournalHistory(diagnose_character(char_dir, now=folders.FIXTURE_NOW)).entry(key)


@pytest.fixture
def pending_history(tmp_path: Path) -> EntryHistory:
    """A persona entry: three applied events, the sentinel, then a pending one."""
    built = folders.pending_tail(tmp_path / "memory")
    return _history(built.path, PERSONA)


@pytest.fixture
def gappy_history(tmp_path: Path) -> EntryHistory:
    """alice's ``ref_…01``: evidence events that set ``reinforcement`` only (``disputation`` is
    unknown), then a pending one that stores ``reinforcement: null`` and ``disputation: 0.5``."""
    root = tmp_path / "memory"
    two_characters(root)
    EventLog(root).append(
        "alice",
        "reflection.evidence_updated",
        {"reflection_id": ALICE_REF.id, "reinforcement": None, "disputation": 0.5},
    )
    return _history(root / "alice", ALICE_REF)


@pytest.fixture
def chart(qtbot) -> HistoryChart:
    widget = HistoryChart()
    widget.resize(900, 500)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _expected(history: EntryHistory, name: str) -> list[tuple[int, float, str]]:
    out = []
    for p in history.points:
        v = p.entry.get(name)
        if v is not UNKNOWN and v is not None:
            out.append((p.index, float(v), p.shown_state))
    return out


def _marker_scene_pos(chart: HistoryChart, name: str, position: int) -> QPointF:
    """Where the marker of the history's point ``position`` is, in view (widget) pixels."""
    a = chart.arrays
    box = chart.getPlotItem().vb if dict((s[0], s[1]) for s in SERIES)[name] == "left" else chart.right
    scene = box.mapViewToScene(QPointF(float(a.x[position]), float(a.values[name][position])))
    return chart.mapFromScene(scene)


# -- the plotted points ------------------------------------------------------------------------------


def test_the_plotted_points_are_the_histories_points(chart, pending_history):
    chart.set_history(pending_history)
    assert len(pending_history.points) == 4  # the fixture's persona entry, to keep the test honest
    for name, *_ in SERIES:
        expected = _expected(pending_history, name)
        assert chart.plotted(name) == expected
        # ... and the markers the scene draws are those points, in their state's colour.
        shown = chart.shown_markers(name)
        x, y = chart.markers[name].getData()
        assert list(zip(x.tolist(), y.tolist(), strict=True)) == [(e[0], e[1]) for e in expected]
        brushes = [s.brush().color().name() for s in chart.markers[name].points()]
        assert brushes == [accent_color(chart.palette(), pending_history.points[k].state).name() for k in shown]
    assert [s for _, _, s in chart.plotted("reinforcement")] == ["applied", "applied", "applied", "pending"]
    assert chart.plotted("reinforcement")[-1][1] == 3.1  # the pending event's stored value


def test_the_x_axis_is_the_event_index_and_ts_is_only_in_the_hover_label(chart, pending_history):
    chart.set_history(pending_history)
    assert chart.getPlotItem().getAxis("bottom").labelText == "event index (journal order)"
    point = pending_history.points[1]
    chart.hover(1)
    text = chart.label.textItem.toPlainText()
    assert f"#{point.index} {point.type}" in text and point.ts in text and "applied" in text


def test_the_chart_says_the_values_are_the_stored_ones(qtbot, pending_history):
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.set_history(pending_history)
    panel.show()
    qtbot.waitExposed(panel)
    assert CAPTION in panel.caption.text() and "decay not applied" in CAPTION and panel.caption.isVisible()


def test_the_sentinel_is_a_vertical_line_at_its_index(chart, pending_history):
    chart.set_history(pending_history)
    assert pending_history.sentinel_index == 8
    assert chart.sentinel.isVisible() and chart.sentinel.angle == 90
    assert chart.sentinel.value() == pending_history.sentinel_index
    chart.set_history(None)
    assert not chart.sentinel.isVisible()


def test_unknown_and_null_values_are_gaps_not_zeros(chart, gappy_history):
    points = gappy_history.points
    assert points[0].entry.get("disputation") is UNKNOWN and points[-1].entry.get("reinforcement") is None
    chart.set_history(gappy_history)
    a = chart.arrays
    assert np.isnan(a.values["disputation"][:-1]).all() and a.values["disputation"][-1] == 0.5
    assert math.isnan(a.values["reinforcement"][-1])
    assert [x for x, _, _ in chart.plotted("disputation")] == [points[-1].index]
    assert points[-1].index not in [x for x, _, _ in chart.plotted("reinforcement")]
    # The curve breaks there (connect="finite"), it is not drawn down to zero.
    _x, y = chart.curves["reinforcement"].getData()
    assert math.isnan(y[-1]) and 0.0 not in y.tolist()
    chart.grab()
    assert len(chart.markers["disputation"].getData()[0]) == 1


def test_only_stored_numbers_are_numbers(chart):
    state = EntryState({"reinforcement": True, "disputation": "2.0", "sub_zero_days": 3})
    point = Point(0, "e0", "reflection.evidence_updated", "t", "applied", None, "changed", state)
    a = chart_arrays(EntryHistory(EntryKey("r"), (point,), None))
    assert math.isnan(a.values["reinforcement"][0]) and math.isnan(a.values["disputation"][0])
    assert a.values["sub_zero_days"][0] == 3.0


# -- gestures -------------------------------------------------------------------------------------------


def test_activating_a_point_emits_its_event_index(qtbot, chart, pending_history):
    chart.set_history(pending_history)
    with qtbot.waitSignal(chart.event_activated, timeout=2000) as blocker:
        chart.activate(2)
    assert blocker.args == [pending_history.points[2].index]


def test_a_click_on_a_marker_in_the_scene_activates_its_event(qtbot, chart, pending_history):
    chart.set_history(pending_history)
    chart.grab()  # lay the scene out and place the markers
    calls = []
    original = chart.activate
    chart.activate = lambda position: (calls.append(position), original(position))  # type: ignore[method-assign]
    pos = _marker_scene_pos(chart, "reinforcement", 3)
    with qtbot.waitSignal(chart.event_activated, timeout=2000) as blocker:
        qtbot.mouseClick(chart.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert calls == [3]
    assert blocker.args == [pending_history.points[3].index]


def test_a_click_on_a_right_axis_marker_reaches_it_too(qtbot, chart, pending_history):
    chart.set_history(pending_history)
    chart.grab()
    # sub_zero_days markers sit on the second axis, in the box under the main one.
    pos = _marker_scene_pos(chart, "sub_zero_days", 0)
    with qtbot.waitSignal(chart.event_activated, timeout=2000) as blocker:
        qtbot.mouseClick(chart.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [pending_history.points[0].index]


def test_moving_the_pointer_over_an_event_shows_it(qtbot, chart, pending_history):
    chart.set_history(pending_history)
    chart.grab()
    pos = _marker_scene_pos(chart, "reinforcement", 1)
    qtbot.mouseMove(chart.viewport(), pos)
    qtbot.waitUntil(lambda: chart.hovered == 1, timeout=2000)
    assert chart.label.isVisible()
    assert chart.point_near(chart.mapToScene(pos.x(), 5)) in (1, None)  # x decides; y only must be inside


def test_the_panel_passes_activation_on_from_the_chart_and_the_table(qtbot, pending_history):
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.set_history(pending_history)
    with qtbot.waitSignal(panel.event_activated, timeout=2000) as blocker:
        panel.chart.activate(1)
    assert blocker.args == [pending_history.points[1].index]
    with qtbot.waitSignal(panel.event_activated, timeout=2000) as blocker:
        panel.table.activated.emit(panel.model.index(3, 0))
    assert blocker.args == [pending_history.points[3].index]
    panel.show_event(pending_history.points[2].index)
    assert panel.table.selectionModel().selectedRows()[0].row() == 2
    assert panel.chart.selected.isVisible() and panel.chart.selected.value() == pending_history.points[2].index


# -- the table and redaction ----------------------------------------------------------------------------


def _table(panel: HistoryPanel) -> list[list[str]]:
    m = panel.model
    return [[m.data(m.index(r, c)) for c in range(m.columnCount())] for r in range(m.rowCount())]


def test_the_table_has_a_row_per_point_with_its_changes(qtbot, pending_history):
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.set_history(pending_history)
    rows = _table(panel)
    assert [r[:4] for r in rows] == [[str(p.index), p.shown_state, p.effect, p.type] for p in pending_history.points]
    assert [r[4] for r in rows] == [p.ts for p in pending_history.points]
    assert "reinforcement: 2.5 → 3.1" in rows[3][5]
    assert "disputation: unknown → 0.0" in rows[0][5]


def test_redaction_hides_text_in_the_table(qtbot, tmp_path):
    root = tmp_path / "memory"
    two_characters(root)
    history = _history(root / "bob", EntryKey("prom_ref_7", "master"))
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.set_history(history)
    assert SECRET in _table(panel)[0][5]
    panel.set_redact(True)
    shown = " ".join(" ".join(r) for r in _table(panel)) + panel.title.text()
    assert SECRET not in shown and "‹text ·" in shown
    assert SECRET not in (panel.model.data(panel.model.index(0, 5), Qt.ItemDataRole.ToolTipRole) or "")
    panel.set_redact(False)
    assert SECRET in _table(panel)[0][5]


# -- palette -------------------------------------------------------------------------------------------


def _dark() -> QPalette:
    palette = QPalette()
    for role, color in (
        (QPalette.ColorRole.Base, "#1e1e1e"),
        (QPalette.ColorRole.Window, "#2b2b2b"),
        (QPalette.ColorRole.Text, "#e6e6e6"),
        (QPalette.ColorRole.WindowText, "#e6e6e6"),
    ):
        palette.setColor(role, QColor(color))
    return palette


def test_the_chart_follows_the_palette(chart, pending_history):
    chart.set_history(pending_history)
    chart.grab()
    light_marker = chart.markers["reinforcement"].points()[0].brush().color().name()
    dark = _dark()
    chart.setPalette(dark)  # a PaletteChange event: the chart re-reads its colours
    assert chart.backgroundBrush().color().name() == "#1e1e1e"
    assert chart.getPlotItem().getAxis("left").textPen().color().name() == "#e6e6e6"
    chart.grab()
    dark_marker = chart.markers["reinforcement"].points()[0].brush().color().name()
    assert dark_marker == accent_color(dark, "applied").name() != light_marker


# -- many points -----------------------------------------------------------------------------------------


def test_markers_are_thinned_per_pixel_column_keeping_each_states_extremes():
    n = 100_000
    rng = np.random.default_rng(7)
    x = np.arange(n, dtype=np.float64)
    y = rng.random(n)
    states = np.zeros(n, dtype=np.int16)
    states[-10:] = MARKER_STATES.index("pending")
    y[500], y[501] = 5.0, -5.0
    kept = marker_indices(x, y, states, 0.0, n - 1.0, 400)
    assert len(kept) <= 2 * 400 * 2 and {500, 501} <= set(kept.tolist())
    assert set(range(n - 10, n)) & set(kept.tolist())  # the rare state is never thinned away
    few = marker_indices(x, y, states, 1000.0, 1000.0 + 2 * 400 - 1, 400)
    assert few.tolist() == list(range(1000, 1000 + 2 * 400))  # zoomed in: every marker


def test_a_hundred_thousand_points_are_a_few_items(chart):
    n = 100_000
    state = EntryState({"reinforcement": 1.0, "disputation": 0.0, "sub_zero_days": 0})
    points = tuple(
        Point(i, f"e{i}", "reflection.evidence_updated", "t", "applied", None, "changed", state) for i in range(n)
    )
    history = EntryHistory(EntryKey("r"), points, n - 1)
    chart.set_history(history)
    chart.grab()
    items = chart.getPlotItem().vb.addedItems + chart.right.addedItems
    assert len(items) <= 3 * 2 + 4  # a curve and a marker item per series, and the lines and labels
    assert all(len(chart.shown_markers(name)) <= 2 * chart.width() for name, *_ in SERIES)
    assert len(chart.plotted("reinforcement")) == n


# -- what can be read (issue 27 item 8) -------------------------------------------------------------------


def _many(n: int, step: int = 1) -> EntryHistory:
    state = EntryState({"reinforcement": 1.0, "disputation": 0.0, "sub_zero_days": 0})
    points = tuple(
        Point(i * step, f"e{i}", "reflection.evidence_updated", "t", "applied", None, "changed", state)
        for i in range(n)
    )
    return EntryHistory(EntryKey("r"), points, (n - 1) * step)


def test_the_legend_and_the_caption_are_outside_the_plot(qtbot, pending_history):
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.resize(380, 600)
    panel.set_history(pending_history)
    panel.show()
    qtbot.waitExposed(panel)
    chart = panel.chart
    assert chart.getPlotItem().legend is None  # no legend item drawn over the points
    # no free text over the points (the sentinel line keeps its own label, the hover label is hidden)
    assert not [i for i in chart.getPlotItem().vb.allChildren() if type(i) is pg.TextItem and i.isVisible()]
    chart_box = chart.geometry()
    for label in (panel.legend, panel.caption):
        assert label.isVisible() and label.geometry().top() >= chart_box.bottom()
    for name, *_ in SERIES:
        assert name in panel.legend.text()


def test_the_x_axis_reads_plain_event_numbers_at_a_million(qtbot, chart):
    chart.set_history(_many(446, step=2245))  # 446 points up to event #999,025
    chart.getPlotItem().vb.setXRange(0, 1_000_000, padding=0)
    chart.grab()
    axis = chart.getPlotItem().getAxis("bottom")
    labels = [s for _spacing, ticks in axis.tickValues(0, 1_000_000, 400) for s in axis.tickStrings(ticks, 1, 1)]
    assert "1000000" in labels and all("e" not in s and "." not in s for s in labels)
    assert axis.tickStrings([2.5], 1, 0.5) == [""]  # no tick between two events


def test_crowded_markers_are_thinned_yet_every_event_is_reached_by_hover_and_click(qtbot, chart):
    history = _many(446, step=2245)
    chart.resize(380, 300)
    chart.set_history(history)
    chart.grab()
    shown = chart.shown_markers("reinforcement")
    assert 0 < len(shown) < len(history.points)  # 446 points in 380 px: thinned
    vb = chart.getPlotItem().vb
    unmarked = next(k for k in range(len(history.points)) if k not in set(shown.tolist()))
    vb.setXRange(history.points[unmarked].index - 5000, history.points[unmarked].index + 5000, padding=0)
    chart.grab()
    pos = chart.mapFromScene(vb.mapViewToScene(QPointF(float(history.points[unmarked].index), 1.0)))
    qtbot.mouseMove(chart.viewport(), pos)
    qtbot.waitUntil(lambda: chart.hovered == unmarked, timeout=2000)
    with qtbot.waitSignal(chart.event_activated, timeout=2000) as blocker:
        qtbot.mouseClick(chart.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [history.points[unmarked].index]
    vb.setXRange(0, 1_000_000, padding=0)
    chart.grab()
    # at full width no marker was drawn for it, yet the pointer over its x finds it
    thin = set(chart.shown_markers("reinforcement").tolist())
    hidden = next(k for k in range(len(history.points)) if k not in thin)
    found = chart.point_near(vb.mapViewToScene(QPointF(float(history.points[hidden].index), 1.0)))
    assert found is not None and abs(history.points[found].index - history.points[hidden].index) <= 2245


def test_the_changed_fields_column_is_in_view_in_a_narrow_pane(qtbot, pending_history):
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.resize(380, 600)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_history(pending_history)
    table = panel.table
    last = table.model().columnCount() - 1
    x = table.columnViewportPosition(last)
    assert 0 <= x < table.viewport().width() - 40  # the changed fields start well inside the pane
    assert table.columnWidth(last) >= 40
