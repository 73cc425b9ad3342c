"""Layout that never hides data: the sentinel and server tags in strips of their own, columns that
fit or elide with the full text on hover, the column menu and the layouts kept between runs, a
detail pane that never pushes the splitter, and a window usable at 900×600 (issue 16 items 1, 4,
6 and 7)."""

from __future__ import annotations

import html
from itertools import pairwise

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QToolButton

from inspector.models.timeline_model import COL_ENTRY, COL_INDEX, COL_STATE, COL_TIME, COL_TYPE
from inspector.widgets.header_layouts import HeaderLayouts, column_menu
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui

#: The columns a 900 px wide window shows without scrolling sideways.
KEY_COLUMNS = (COL_INDEX, COL_TYPE, COL_ENTRY, COL_STATE)


def _shown(qtbot, window, width=1440, height=880):
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    return window


def _open_sample(qtbot, window):
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()


def _visible_cells(view):
    model = view.model()
    first = max(0, view.rowAt(0))
    last = view.rowAt(view.viewport().height() - 1)
    last = model.rowCount() - 1 if last < 0 else last
    return [model.index(r, c) for r in range(first, last + 1) for c in range(model.columnCount())]


def _assert_tags_cover_no_cell(view):
    tags = view.tag_rects()
    assert tags, "expected a tag on screen"
    for tag, strip in tags:
        box = view.tag_box(tag.label, strip)
        assert strip.contains(box)
        for index in _visible_cells(view):
            assert not strip.intersects(view.cell_rect(index)), (tag, index.row(), index.column())
    return tags


# -- item 1: the sentinel tag ------------------------------------------------------------------------


def test_the_sentinel_tag_covers_no_cell(qtbot, inspector_window, tmp_path):  # noqa: F811
    window = _shown(qtbot, inspector_window)
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    view = window.timeline
    model = window.session.timeline_model
    window.window_actions.jump_action.trigger()
    view.clearSelection()
    [(tag, strip)] = [(t, s) for t, s in _assert_tags_cover_no_cell(view) if t.kind == "sentinel"]
    assert "30 applied · 1 pending · 1 blocked" in tag.label  # check's counts, each state apart
    # painted where it says: its colour is in the strip, and in no cell of the rows around it
    marker = view.palette().color(QPalette.ColorRole.Highlight).name()
    image = view.viewport().grab().toImage()
    ratio = view.viewport().devicePixelRatio()
    assert image.pixelColor(int(5 * ratio), int(strip.center().y() * ratio)).name() == marker
    for row in (tag.pos, tag.pos + 1):
        for col in range(model.columnCount()):
            cell = view.cell_rect(model.index(row, col))
            for y in range(cell.top(), cell.bottom() + 1):
                for x in range(cell.left(), cell.right() + 1, 3):
                    assert image.pixelColor(int(x * ratio), int(y * ratio)).name() != marker, (row, col, x, y)


def test_with_applied_filtered_out_the_blocked_rows_state_stays_readable(qtbot, inspector_window, tmp_path):  # noqa: F811
    window = _shown(qtbot, inspector_window)
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    window.filter_bar.states.set_selected({"pending", "blocked"})
    model = window.session.timeline_model
    assert model.rowCount() == 2 and model.marker_position() == -1  # every shown event is after it
    view = window.timeline
    [tag] = [t for t, _s in _assert_tags_cover_no_cell(view) if t.kind == "sentinel"]
    assert tag.pos == 0 and tag.top
    state = view.cell_rect(model.index(1, COL_STATE))
    assert model.index(1, COL_STATE).data() == "blocked · no_handler"
    assert state.height() == view.verticalHeader().defaultSectionSize()
    window.filter_bar.states.set_selected(None)
    assert model.rowCount() == 32
    # the strip went with the filter: row 0 is a plain row again, row 29 carries it
    assert view.rowHeight(0) == view.verticalHeader().defaultSectionSize()
    assert view.row_insets(29) == (0, view.strip_height())


def test_every_tag_of_the_sample_covers_no_cell(qtbot, inspector_window):  # noqa: F811
    window = _shown(qtbot, inspector_window)
    _open_sample(qtbot, window)
    kinds = set()
    for name in sorted(window.session.folder.timelines):
        window.session.show_character(name)
        view = window.timeline
        for tag in view.tags():
            view.scrollTo(view.model().index(tag.pos, 0))
            QApplication.processEvents()
            _assert_tags_cover_no_cell(view)
            kinds.add(tag.kind)
    assert kinds == {"sentinel", "server"}


# -- item 4: columns ------------------------------------------------------------------------------------


def test_columns_show_their_content_or_elide_with_the_full_text_on_hover(qtbot, inspector_window):  # noqa: F811
    window = _shown(qtbot, inspector_window)
    _open_sample(qtbot, window)
    view = window.timeline
    for name in window.session.folder.timelines:
        window.session.show_character(name)
        model = view.model()
        for row in range(model.rowCount()):
            for col in (COL_INDEX, COL_STATE, COL_TIME):
                assert not view.is_elided(model.index(row, col)), (name, row, model.index(row, col).data())
    # a narrow window elides Type in the middle; the tooltip starts with the full text
    window.resize(900, 600)
    qtbot.waitUntil(lambda: window.width() == 900)
    window.session.show_character("persona-drift")
    model = view.model()
    elided = [model.index(r, COL_TYPE) for r in range(model.rowCount()) if view.is_elided(model.index(r, COL_TYPE))]
    assert elided
    index = elided[0]
    assert view.textElideMode().name == "ElideMiddle"
    tip = view.tooltip_at(view.cell_rect(index).center())
    assert tip.startswith(f"{index.data()}\n\n")
    width = view.fontMetrics().horizontalAdvance(index.data())
    assert width > view.columnWidth(COL_TYPE)  # it is elided, not cut at the end: the delegate elides in the middle
    # a cell that fits says only what it said before
    plain = model.index(index.row(), COL_INDEX)
    assert not view.tooltip_at(view.cell_rect(plain).center()).startswith(f"{plain.data()}\n")


def test_the_index_column_grows_for_long_journals(qtbot, inspector_window, tmp_path):  # noqa: F811
    window = _shown(qtbot, inspector_window)
    view = window.timeline
    narrow = view.columnWidth(COL_INDEX)
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory", applied=1_000))
    model = view.model()
    last = model.index(model.rowCount() - 1, COL_INDEX)
    assert len(last.data()) >= 4
    assert view.columnWidth(COL_INDEX) > narrow
    assert not view.is_elided(last)


def test_the_header_menu_hides_and_shows_columns(qtbot, inspector_window, tmp_path):  # noqa: F811
    window = _shown(qtbot, inspector_window)
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    header = window.timeline.horizontalHeader()
    menu = column_menu(window.timeline, window.timeline.reset_columns)
    by_title = {a.text(): a for a in menu.actions() if a.isCheckable()}
    assert list(by_title) == ["#", "Type", "Entry", "State", "Summary", "Time"]  # the visual order
    by_title["Time"].trigger()
    assert header.isSectionHidden(COL_TIME)
    for title in ("#", "Type", "Entry", "State"):
        by_title[title].trigger()
    menu = column_menu(window.timeline)
    last = {a.text(): a for a in menu.actions() if a.isCheckable()}
    assert [t for t, a in last.items() if a.isChecked()] == ["Summary"]
    assert not last["Summary"].isEnabled()  # the last column shown cannot go
    last["Time"].trigger()
    assert not header.isSectionHidden(COL_TIME) and header.sectionSize(COL_TIME) > 20
    window.timeline.reset_columns()
    assert not any(header.isSectionHidden(c) for c in range(header.count()))
    findings = column_menu(window.detail.findings.table)
    assert [a.text() for a in findings.actions() if a.isCheckable()] == ["Severity", "Code", "Message", "Event / file"]


def test_the_findings_message_takes_the_room_the_other_columns_leave(qtbot, inspector_window):  # noqa: F811
    window = _shown(qtbot, inspector_window, 900, 600)
    _open_sample(qtbot, window)
    window.detail.setCurrentWidget(window.detail.findings)
    table = window.detail.findings.table
    qtbot.waitUntil(lambda: table.model().rowCount() > 0 and table.viewport().width() > 0)
    widths = [table.columnWidth(c) for c in range(4)]
    room = table.viewport().width()
    assert sum(widths) == room and table.horizontalScrollBar().maximum() == 0  # every column in view
    assert table.columnWidth(2) >= 80
    wider = table.columnWidth(2)
    window.resize(1200, 600)  # a wider pane: the message takes the room it gains
    qtbot.waitUntil(lambda: table.viewport().width() > room)
    assert table.columnWidth(2) > wider and sum(table.columnWidth(c) for c in range(4)) == table.viewport().width()
    finding = table.model().index(0, 2)
    tip = finding.data(3)  # its tooltip is the full message, as rich text Qt wraps (issue 27 item 5)
    assert finding.data(0) and html.unescape(tip.removeprefix("<p>").removesuffix("</p>")) == finding.data(0)


def test_header_layouts_are_kept_in_the_users_settings_between_runs(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    before = tree_hashes(root)
    first = _shown(qtbot, make_inspector_window())
    open_and_wait(qtbot, first, root)
    header = first.timeline.horizontalHeader()
    header.setSectionHidden(COL_TIME, True)
    header.resizeSection(COL_TYPE, 77)
    header.moveSection(header.visualIndex(COL_STATE), 0)
    assert not first.timeline.auto_fit  # the user's widths are not refitted
    first.detail.findings.table.horizontalHeader().resizeSection(2, 333)
    first.history_panel.table.horizontalHeader().resizeSection(5, 222)  # the History table's too
    assert not first.history_panel.columns.auto_fit
    first.close()
    assert (tmp_path / "config" / "layout.ini").is_file()  # the fixture's config folder, not the user's
    assert tree_hashes(root) == before  # nothing written inside the opened folder

    second = _shown(qtbot, make_inspector_window())
    header = second.timeline.horizontalHeader()
    assert header.isSectionHidden(COL_TIME)
    assert header.sectionSize(COL_TYPE) == 77
    assert header.logicalIndex(0) == COL_STATE
    assert second.detail.findings.table.horizontalHeader().sectionSize(2) == 333
    assert second.history_panel.table.horizontalHeader().sectionSize(5) == 222
    assert not second.timeline.auto_fit and not second.history_panel.columns.auto_fit
    open_and_wait(qtbot, second, root)  # shown, fed rows and resized, the user's widths still win
    second.detail.setCurrentWidget(second.detail.findings)
    _shown(qtbot, second, 1000, 700)
    qtbot.waitUntil(lambda: second.width() == 1000)
    assert second.detail.findings.table.horizontalHeader().sectionSize(2) == 333
    assert header.sectionSize(COL_TYPE) == 77


def test_findings_columns_the_user_never_laid_out_are_not_kept(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    """The Findings columns fit the pane they are in: a run that only looked keeps no widths for
    the next window; a run that laid them out keeps them, until Reset columns fits them again."""
    root = two_characters(tmp_path / "memory")
    first = _shown(qtbot, make_inspector_window())
    open_and_wait(qtbot, first, root)
    first.close()
    settings = QSettings(str(tmp_path / "config" / "layout.ini"), QSettings.Format.IniFormat)
    assert settings.value(HeaderLayouts.key("findings")) is None
    assert not [k for k in settings.allKeys() if "findings" in k]
    second = _shown(qtbot, make_inspector_window(), 900, 600)
    panel = second.detail.findings
    assert panel.columns.auto_fit
    panel.table.horizontalHeader().resizeSection(1, 50)  # the user narrows Code
    assert not panel.columns.auto_fit
    second.resize(1100, 600)
    qtbot.waitUntil(lambda: second.width() == 1100)
    assert panel.table.columnWidth(1) == 50  # not fitted again
    panel.reset_columns()
    assert panel.columns.auto_fit and panel.table.columnWidth(1) != 50
    assert sum(panel.table.columnWidth(c) for c in range(4)) == panel.table.viewport().width()
    second.close()


def test_a_layout_key_changes_with_either_version(monkeypatch):
    """A table's own version counts within the layout version: a later layout version 2 does not
    read what the Findings table kept at its own version 2, nor does any table read another's."""
    from inspector.widgets import header_layouts

    now = {name: HeaderLayouts.key(name) for name in ("findings", "timeline", "history")}
    assert len(set(now.values())) == 3
    monkeypatch.setattr(header_layouts, "LAYOUT_VERSION", header_layouts.LAYOUT_VERSION + 1)
    assert not {HeaderLayouts.key(name) for name in now} & set(now.values())
    monkeypatch.setitem(header_layouts.TABLE_VERSIONS, "findings", header_layouts.TABLE_VERSIONS["findings"] + 1)
    assert HeaderLayouts.key("findings") not in now.values()


def test_a_findings_layout_kept_before_they_fitted_the_pane_is_ignored(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    """Every run before version 2 kept the Findings widths it was given (Message 360 px, off to the
    right of a narrow pane), as if the user had chosen them: such a layout is not restored."""
    header = make_inspector_window().detail.findings.table.horizontalHeader()
    header.resizeSection(2, 360)
    settings = QSettings(str(tmp_path / "config" / "layout.ini"), QSettings.Format.IniFormat)
    settings.setValue("layout/v1/findings", header.saveState())
    settings.sync()
    panel = _shown(qtbot, make_inspector_window(), 900, 600).detail.findings
    assert panel.columns.auto_fit and panel.table.columnWidth(2) != 360


def test_columns_the_user_never_laid_out_fit_the_next_window_again(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    """A run that only looked (a big window, or ``--screenshot``) must not pin its fitted widths on the
    next, smaller window: State was cut at 900 px after a 1440 px run."""
    root = two_characters(tmp_path / "memory")
    big = _shown(qtbot, make_inspector_window())
    big.resize(1440, 880)
    open_and_wait(qtbot, big, root)
    assert big.timeline.auto_fit
    big.close()
    small = make_inspector_window()
    assert small.timeline.auto_fit  # nothing restored: it fits itself to this window
    settings = QSettings(str(tmp_path / "config" / "layout.ini"), QSettings.Format.IniFormat)
    assert settings.value("layout/v1/timeline") is None


def test_a_layout_from_elsewhere_is_ignored(qtbot, inspector_window, tmp_path):  # noqa: F811
    settings = QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat)
    layouts = HeaderLayouts(settings)
    header = inspector_window.timeline.horizontalHeader()
    assert not layouts.restore("timeline", header)  # nothing saved yet
    settings.setValue("layout/v1/timeline", b"not a header state")
    width = header.sectionSize(COL_TYPE)
    assert not layouts.restore("timeline", header)
    assert header.sectionSize(COL_TYPE) == width
    assert not HeaderLayouts(None).restore("timeline", header)


# -- item 6: the splitter moves only when dragged -----------------------------------------------------------


def test_a_long_explanation_wraps_and_the_splitter_stays(qtbot, inspector_window):  # noqa: F811
    window = _shown(qtbot, inspector_window)
    _open_sample(qtbot, window)
    window.session.show_character("persona-drift")
    QApplication.processEvents()
    before = window.splitter.sizes()
    tl = window.session.timeline()
    assert window.select_ref(tl.diagnosis.blocked.index)
    reason = window.detail.event_detail.reason
    qtbot.waitUntil(reason.isVisible)
    # the explanation carries a 64-digit hash that once set the pane's minimum width
    assert any(len(word) >= 64 for word in tl.row(tl.diagnosis.blocked.index).message.split())
    QApplication.processEvents()
    assert window.splitter.sizes() == before
    assert reason.width() <= window.detail.width()
    assert reason.heightForWidth(reason.width()) > reason.fontMetrics().height() * 3  # it wraps


# -- item 7: usable at 900×600 ------------------------------------------------------------------------------


def assert_usable_at_900(window):
    """The window's geometry at 900×600 (also used by the screenshot test)."""
    assert window.width() == 900 and window.height() == 600
    assert window.minimumSizeHint().width() <= 900
    view = window.timeline
    header = view.horizontalHeader()
    for col in KEY_COLUMNS:
        assert not header.isSectionHidden(col)
        right = view.columnViewportPosition(col) + view.columnWidth(col)
        assert view.columnViewportPosition(col) >= 0 and right <= view.viewport().width(), (col, right)
    assert view.horizontalScrollBar().value() == 0
    for widget in (window.characters, window.filter_bar, view, window.detail):
        assert widget.isVisible() and widget.width() > 0, widget
        assert widget.mapTo(window, widget.rect().bottomRight()).x() <= window.width()
    assert tabs_whole(window), window.detail.tabBar().width()  # every tab title shown whole
    assert window.filter_bar.text.width() >= 60 and window.filter_bar.entry.width() >= 40
    assert labels_whole(window)
    assert window.splitter.sizes()[0] >= window.characters.minimumWidth()


def labels_whole(window) -> bool:
    """Whether the labels that carry figures show whole: the row count, the sentinel bar's text,
    and the status bar's fields (none cut, none over another)."""
    count = window.filter_bar.count
    if count.geometry().right() >= window.filter_bar.width() or count.width() < count.sizeHint().width():
        return False
    label = window.sentinel_bar.label
    if label.height() < label.heightForWidth(label.width()):
        return False
    fields = [window.status_sentinel, window.status_watch, window.status_size, window.status_refresh]
    for a, b in pairwise(fields):
        if a.geometry().right() >= b.geometry().left() or a.width() < a.sizeHint().width():
            return False
    return fields[-1].width() >= fields[-1].sizeHint().width()


def tabs_whole(window) -> bool:
    """Whether every title of the detail's tabs shows whole (one with a count, "Findings (6)", is
    wider than the pane was before: the splitter gives the pane its new minimum at its next layout)."""
    tabs = window.detail.tabBar()
    return all(tabs.tabRect(i).right() <= tabs.width() for i in range(tabs.count()))


def laid_out(window) -> bool:
    """The window has been laid out again for what it shows (a real X server does it later): the
    splitter's layout too, which runs on an event posted when a tab's title changed. Asserting as
    soon as the labels fitted raced it: on a busy machine the tab bar was still the old pane's width
    (the History tab ended at 277 px in a 259 px bar)."""
    return (
        window.width() == 900 and labels_whole(window) and window.filter_bar.text.width() >= 60 and tabs_whole(window)
    )


def test_the_window_is_usable_at_900_by_600(qtbot, inspector_window):  # noqa: F811
    window = _shown(qtbot, inspector_window, 900, 600)
    _open_sample(qtbot, window)
    window.session.show_character("persona-drift")
    qtbot.waitUntil(lambda: laid_out(window))
    assert_usable_at_900(window)
    # the toolbar's actions that do not fit are behind its overflow ("»") button
    toolbar = window.findChild(type(window.addToolBar("probe")), "MainToolbar")
    extension = next(b for b in toolbar.findChildren(QToolButton) if b.objectName() == "qt_toolbar_ext_button")
    assert extension.isVisible()
    hidden = [a for a in toolbar.actions() if not a.isSeparator() and not toolbar.widgetForAction(a).isVisible()]
    assert window.window_actions.redact_action in hidden
