"""Run as ``python -m tests.inspector.widgets.theme_grabs MODE FOLDER OUT`` (issue 27 item 9): build
the window as the application does, open FOLDER, select its blocked row with a find pattern shown,
and save a grab of every visible pane to OUT/<pane>.png, and of every widget the style sheet
selects by name to OUT/named-<name>.png.

MODE ``start``: the dark theme is the kept choice when the window starts. MODE ``switch``: the
window starts in the light theme and is switched to dark through View ▸ Theme ▸ Dark. The test
compares the two processes' grabs pixel by pixel (style-sheet colours are not in the palette)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.pop("MEMORY_INSPECTOR_THEME", None)


def panes(window) -> dict[str, object]:
    """The window's panes, by name (their grabs are compared)."""
    from PySide6.QtWidgets import QToolBar

    toolbar = window.findChild(QToolBar, "MainToolbar")
    return {
        "toolbar": toolbar,
        "menubar": window.menuBar(),
        "characters": window.characters,
        "server_panel": window.server_panel,
        "sentinel_bar": window.sentinel_bar,
        "filter_bar": window.filter_bar,
        "find_bar": window.finder.bar,
        "timeline": window.timeline,
        "legend": window.legend,
        "views_tab": window.detail.views,  # first: the one shown when the grabs begin
        "event_tab": window.detail.event_detail,
        "findings_tab": window.detail.findings,
    }


def sheet_names() -> set[str]:
    """Every object name the application's style sheet selects (``#Name``)."""
    import re

    import resources

    sheet = re.sub(r"/\*.*?\*/", "", resources.path("style.qss").read_text(encoding="utf-8"), flags=re.S)
    selectors = re.findall(r"([^{}]*)\{", sheet)
    return {name for selector in selectors for name in re.findall(r"#([A-Za-z][\w-]*)", selector)}


def sheet_named(window) -> list[object]:
    """The window's widgets the style sheet selects by name: a rule for a name set after the sheet
    first saw the widget applied only after a repolish (the toolbar's, at a start; issue 27)."""
    from PySide6.QtWidgets import QWidget

    names = sheet_names()
    return [w for w in window.findChildren(QWidget) if w.objectName() in names]


def settle(app, done, timeout_ms: int = 30_000) -> None:
    """Run the event loop until ``done()`` (background jobs post their results as events)."""
    from PySide6.QtCore import QDeadlineTimer, QEventLoop, QTimer

    beat = QTimer()
    beat.start(20)  # wakes the loop to look again
    deadline = QDeadlineTimer(timeout_ms)
    while not done():
        if deadline.hasExpired():
            raise SystemExit("the window did not settle")
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    beat.stop()


def icons_faded_in(window) -> bool:
    """Whether the line edits' clear buttons are done fading in or out (Qt animates them)."""
    from PySide6.QtWidgets import QToolButton

    buttons = (b for b in window.findChildren(QToolButton) if b.metaObject().className() == "QLineEditIconButton")
    return all(b.property("opacity") in (0.0, 1.0) for b in buttons)


def main(mode: str, folder: str, out: str) -> int:
    from PySide6.QtCore import QSettings

    from inspector.app import build_window, make_application, wait_loaded
    from inspector.controllers.appearance import THEME_KEY
    from inspector.core import dirs
    from inspector.core.prompter import HeadlessPrompter

    config = Path(out) / "config"
    config.mkdir(parents=True, exist_ok=True)
    settings = QSettings(str(config / dirs.LAYOUT_NAME), QSettings.Format.IniFormat)
    settings.setValue(THEME_KEY, "dark" if mode == "start" else "light")
    settings.sync()
    app = make_application()
    window = build_window(prompter=HeadlessPrompter(), config_dir=config, watch=False)
    window.resize(1440, 900)
    window.show()
    window.session.open_path(folder)
    error = wait_loaded(window, 60)
    if error:
        print(error, file=sys.stderr)
        return 2
    if mode == "switch":
        window.settings_actions.theme_actions["dark"].trigger()
    previews: list[object] = []
    window.source.preview_ready.connect(lambda *args: previews.append(args))
    window.filter_bar.text.setText("reflection")  # the filter bar with a filter in force
    window.filter_bar.emit_filter()
    settle(app, lambda: window.session.filter.text == "reflection" and not window.session.busy)
    window.finder.focus_search()  # the find bar, its list, and its matches highlighted
    window.finder.bar.text.setText("reflection_id")
    window.timeline.setFocus()  # no caret blinking in a grab
    settle(app, lambda: not window.finder.controller.busy and bool(window.finder.controller.refs))
    tl = window.session.timeline()
    blocked = tl.diagnosis.blocked if tl is not None else None
    window.detail.setCurrentWidget(window.detail.views)  # the replay preview runs only while it is shown
    if blocked is not None:
        window.select_ref(blocked.index)
        settle(app, lambda: bool(previews) and not window.session.busy)  # its replay preview
    window.detail.findings.table.selectRow(0)
    settle(app, lambda: icons_faded_in(window))
    for name, widget in panes(window).items():
        if widget is None:
            continue
        shown = widget.isVisible()
        if name.endswith("_tab"):  # each tab in turn
            window.detail.setCurrentWidget(widget)
            app.processEvents()
            shown = True
        if shown:
            widget.grab().save(str(Path(out) / f"{name}.png"))
    # The views tab on a file it cannot read (the test makes facts.json malformed): its error shows.
    views = window.detail.views
    window.detail.setCurrentWidget(views)
    views.files.setCurrentIndex(views.files.findText("facts.json"))
    settle(app, lambda: views.error.isVisible())
    for tab in range(window.detail.count()):  # each tab in turn: a hidden tab's widgets are not shown
        window.detail.setCurrentIndex(tab)
        app.processEvents()
        for widget in sheet_named(window):
            saved = Path(out) / f"named-{widget.objectName()}.png"
            if widget.isVisible() and not saved.exists():
                widget.grab().save(str(saved))
    window.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    code = main(*sys.argv[1:4])
    sys.stdout.flush()
    os._exit(code)  # no teardown of threads the test does not look at
