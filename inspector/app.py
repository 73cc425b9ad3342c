"""The composition root: builds the application, the session and the window, in one place."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QMessageLogContext, QSettings, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QApplication

import resources
from inspector.controllers.appearance import Appearance, theme_palette
from inspector.controllers.appearance import dark_palette as dark_palette  # re-exported: its old home
from inspector.controllers.bookmarks import BookmarkController
from inspector.controllers.chat import ChatController
from inspector.controllers.context import AppContext, replay_target
from inspector.controllers.detail_source import DetailSource
from inspector.controllers.dispatch import GuiDispatcher
from inspector.controllers.export import ExportController
from inspector.controllers.find import FindController
from inspector.controllers.history import HistoryController
from inspector.controllers.replay import ReplayController
from inspector.controllers.session import SessionController
from inspector.controllers.support import SupportController
from inspector.core import dirs
from inspector.core.appearance import THEME_ENV, effective_theme
from inspector.core.bookmarks import BookmarkStore
from inspector.core.live import ObserverFactory
from inspector.core.loader import Diagnose
from inspector.core.prompter import HeadlessPrompter, Prompter
from inspector.core.recent import RecentLocations
from inspector.platform_check import warn_missing_xcb_libraries
from inspector.widgets import refcount_guard
from inspector.widgets.dialogs import DialogPrompter
from inspector.widgets.history_panel import chart_arrays
from inspector.widgets.main_window import MainWindow
from journal.diagnosis import CharacterDiagnosis

#: How long ``--screenshot`` waits for the folder to load (seconds).
SCREENSHOT_TIMEOUT = 300


def make_application() -> QApplication:
    """The QApplication (created once), with Fusion style, ``$MEMORY_INSPECTOR_THEME`` and the stylesheet."""
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv else "memory-inspector"])
    assert isinstance(app, QApplication)
    app.setApplicationName("Memory Inspector")
    app.setOrganizationName("memory-inspector")
    app.setStyle("Fusion")
    env_theme = os.environ.get(THEME_ENV)
    if env_theme:  # the override; the window's own choice is applied with its settings (build_window)
        app.setPalette(theme_palette(effective_theme(None, env_theme)))
    try:
        app.setStyleSheet(resources.path("style.qss").read_text(encoding="utf-8"))
    except OSError:
        pass
    return app


def build_context(
    *,
    prompter: Prompter | None = None,
    config_dir: str | os.PathLike[str] | None = None,
    observer_factory: ObserverFactory = None,
    watch: bool = True,
    diagnose: Diagnose | None = None,
    diagnose_character: Callable[[str], CharacterDiagnosis] | None = None,
    replay: bool = True,
) -> AppContext:
    """Build every long-lived non-widget object once, wired together (the application must exist).

    Args:
        prompter: questions to the user (default: real dialogs).
        config_dir: where recent locations and the window's layout are kept (default: the user's
            config folder).
        observer_factory: builds the watchdog observer (default: watchdog's own).
        watch: watch opened folders for live changes.
        diagnose, diagnose_character: replace the diagnosis (tests).
        replay: offer guarded replay and restore (Tools menu).
    """
    refcount_guard.install()  # the one call: every window is built through here
    config = Path(config_dir) if config_dir is not None else dirs.config_dir()
    dispatcher = GuiDispatcher()
    session = SessionController(
        dispatcher,
        diagnose=diagnose,
        diagnose_character=diagnose_character,
        observer_factory=observer_factory,
        watch=watch,
    )
    the_prompter: Prompter = prompter if prompter is not None else DialogPrompter()
    controller: ReplayController | None = None
    if replay:
        controller = ReplayController(
            session, lambda: replay_target(session), prompter=the_prompter, dispatcher=dispatcher
        )
        controller.folder_changed.connect(lambda _path: session.reload("The folder was replayed: reloaded."))
        controller.open_requested.connect(session.open_path)
    settings = QSettings(str(config / dirs.LAYOUT_NAME), QSettings.Format.IniFormat)
    return AppContext(
        dispatcher=dispatcher,
        session=session,
        detail_source=DetailSource(session, session),
        replay=controller,
        prompter=the_prompter,
        recent=RecentLocations(config),
        settings=settings,
        bookmarks=BookmarkController(session, BookmarkStore(config)),
        appearance=Appearance(settings, os.environ.get(THEME_ENV)),
        exporter=ExportController(session, dispatcher),
        history=HistoryController(session, prepare=chart_arrays),
        chat=ChatController(session),
        find=FindController(session),
        support=SupportController(session, dispatcher),
    )


def build_window(**kwargs: Any) -> MainWindow:
    """The window around a fresh :func:`build_context` (same arguments)."""
    context = build_context(**kwargs)
    context.appearance.apply_theme()  # the kept theme (or the environment's override)
    window = MainWindow(context)
    context.session.timeline_model.set_palette(window.palette())
    return window


def wait_loaded(window: MainWindow, timeout: float) -> str | None:
    """Run the event loop until the open finishes; returns an error message, or ``None`` on success."""
    result: dict[str, str | None] = {}
    loop = QEventLoop()

    def ok(_folder: Any) -> None:
        result["error"] = None
        loop.quit()

    def failed(title: str, message: str) -> None:
        result["error"] = f"{title}: {message}"
        loop.quit()

    window.session.loaded.connect(ok)
    window.session.load_failed.connect(failed)
    QTimer.singleShot(int(timeout * 1000), loop.quit)
    if window.session.location is not None and "error" not in result:
        loop.exec()
    return result.get("error", f"loading did not finish within {timeout:.0f} s")


def show_most_interesting(window: MainWindow) -> None:
    """For a screenshot: the character with the most to see, and its most telling row selected."""
    session = window.session
    folder = session.folder
    if folder is None or not folder.timelines:
        return

    def weight(name: str) -> tuple[int, int]:
        badge = folder.timelines[name].badge()
        kinds = sum(1 for v in badge.values() if v)
        return (kinds, sum(badge.values()))

    show_telling_row(window, max(folder.timelines, key=weight))


def show_telling_row(window: MainWindow, name: str) -> None:
    """Show character ``name`` with its most telling row selected: where replay is blocked, else
    its first problem."""
    window.session.show_character(name)
    window.characters.select_name(name)
    timeline = window.session.timeline(name)
    blocked = timeline.diagnosis.blocked if timeline is not None else None
    if blocked is None:
        window.navigation.goto_problem(1)
    else:
        window.select_ref(blocked.index)


def render(window: MainWindow) -> QPixmap:
    """The window as it looks now, after the pending paints (for ``--screenshot`` and bundles)."""
    window.show()
    QApplication.processEvents()
    window.timeline.viewport().update()
    QApplication.processEvents()
    return window.grab()


def take_screenshot(window: MainWindow, out: str) -> int:
    """Render the window to ``out`` (PNG); returns the exit status."""
    pixmap = render(window)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    if not pixmap.save(out, "PNG"):
        print(f"memory-inspector: cannot write {out}", file=sys.stderr)
        return 2
    platform = QApplication.platformName()
    print(f"screenshot written to {out} ({pixmap.width()}x{pixmap.height()}, platform {platform})")
    return 0


#: Qt platform messages that say nothing to a user (the xcb and offscreen plugins print this one
#: for every window they show).
PLATFORM_NOISE = ("This plugin does not support propagateSizeHints()",)


def without_platform_noise(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Qt's messages on stderr, as Qt prints them, except :data:`PLATFORM_NOISE`."""
    if message in PLATFORM_NOISE:
        return
    print(message, file=sys.stderr)


def run_gui(path: str | None, *, redact: bool, screenshot: str | None, size: tuple[int, int] | None = None) -> int:
    """Open the window on ``path`` (the bundled sample when ``None``); ``screenshot`` renders and exits."""
    qInstallMessageHandler(without_platform_noise)
    warn_missing_xcb_libraries()  # Qt's own abort would not say which package is missing
    app = make_application()
    prompter: Prompter | None = None
    if screenshot:
        prompter = HeadlessPrompter()
    window = build_window(prompter=prompter)
    window.keeps_size = not screenshot  # a screenshot's size is not the user's
    if size is not None:
        window.resize(*size)
    if redact:
        window.set_redact(True)
    opened = window.session.open_path(path) if path else window.session.open_sample()
    if screenshot:
        error = wait_loaded(window, SCREENSHOT_TIMEOUT) if opened else _first_error(prompter)
        if error is not None:
            window.close()
            print(f"memory-inspector: {error}", file=sys.stderr)
            return 2
        show_most_interesting(window)
        status = take_screenshot(window, screenshot)
        window.close()
        return status
    window.show()
    window.raise_()
    # Ctrl+C in the terminal closes the window (stopping the watcher and jobs) instead of being
    # ignored: Python handles signals only when it runs, so a timer wakes it now and then.
    signal.signal(signal.SIGINT, lambda *_: window.close())
    wake = QTimer(window)
    wake.timeout.connect(lambda: None)
    wake.start(250)
    return app.exec()


def _first_error(prompter: Prompter | None) -> str:
    if isinstance(prompter, HeadlessPrompter) and prompter.errors:
        title, message = prompter.errors[0]
        return f"{title}: {message}"
    return "cannot open"
