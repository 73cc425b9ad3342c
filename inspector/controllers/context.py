"""The one context object the composition root builds (git-cola's ApplicationContext): every
long-lived non-widget object the window uses, typed, built once and handed to the window whole."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSettings

from inspector.controllers.appearance import Appearance
from inspector.controllers.bookmarks import BookmarkController
from inspector.controllers.chat import ChatController
from inspector.controllers.detail_source import DetailSource
from inspector.controllers.dispatch import GuiDispatcher
from inspector.controllers.export import ExportController
from inspector.controllers.find import FindController
from inspector.controllers.history import HistoryController
from inspector.controllers.replay import ReplayController
from inspector.controllers.session import SessionController
from inspector.controllers.support import SupportController
from inspector.core.prompter import Prompter
from inspector.core.recent import RecentLocations


@dataclass(frozen=True, slots=True)
class AppContext:
    """What the window is built from (:func:`inspector.app.build_context` makes it).

    Attributes:
        dispatcher: delivers worker results on the GUI thread (shared by every controller).
        session: what is open, the models, the live watcher, the re-diagnosis.
        detail_source: what the detail pane shows for a row (records, views, provenance, previews).
        replay: guarded replay and restore (``None``: the window offers neither).
        prompter: every question to the person (dialogs; headless in tests and screenshots).
        recent: the recent locations.
        settings: where the window keeps its layout and preferences.
        bookmarks: the bookmarked rows of the character shown, kept per folder.
        appearance: the theme and the font zoom, kept in ``settings``.
        exporter: copies and exports of rows and findings, in the background.
        history: an entry's history for the History tab, built off the GUI thread.
        chat: the chat turns around the selected event for the Chat tab, read off the GUI thread.
        find: what Ctrl+F finds among the rows shown (the find bar and F3 step through it).
        support: support bundles and comparisons, in the background.
    """

    dispatcher: GuiDispatcher
    session: SessionController
    detail_source: DetailSource
    replay: ReplayController | None
    prompter: Prompter
    recent: RecentLocations
    settings: QSettings
    bookmarks: BookmarkController
    appearance: Appearance
    exporter: ExportController
    history: HistoryController
    chat: ChatController
    find: FindController
    support: SupportController


def replay_target(session: SessionController) -> tuple[str, str | None] | None:
    """What guarded replay acts on: ``(PATH, character)`` of what the session has open, or ``None``."""
    folder = session.folder
    if folder is None:
        return None
    return str(folder.location.path), session.current
