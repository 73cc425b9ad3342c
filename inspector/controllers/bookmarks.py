"""Bookmarks of the character shown (issue 16 item 20): which rows are marked, toggling one, and
the next or previous one; kept per folder by :class:`~inspector.core.bookmarks.BookmarkStore`."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal

from inspector.controllers.session import SessionController
from inspector.core.bookmarks import BookmarkStore, indices_of
from inspector.core.find import Step, step_among
from inspector.core.loader import LoadedFolder


class BookmarkController(QObject):
    """The bookmarks of the character the session shows.

    Bookmarks are event ids (a damaged line has none, so it cannot be bookmarked); the rows they
    are on are worked out once per character shown, in one pass over the event ids.

    Args:
        session: what is open (the folder's path and the character shown).
        store: where bookmarks are kept (the user's config folder).

    Attributes:
        refs: the refs of the bookmarked events of the character shown.

    Signals:
        changed: the bookmarks of the character shown changed (another character, a toggle).
    """

    changed = Signal()

    def __init__(self, session: SessionController, store: BookmarkStore) -> None:
        super().__init__()
        self.session = session
        self.store = store
        self.refs: frozenset[int] = frozenset()
        self._ids: list[str] = []
        self._where: tuple[str, str] | None = None
        session.character_shown.connect(self._on_character_shown)
        session.loaded.connect(self._on_loaded)

    def _place(self) -> tuple[str, str] | None:
        folder, name = self.session.folder, self.session.current
        if folder is None or name is None:
            return None
        return str(folder.location.kept_as), name

    def _reload(self) -> None:
        self._where = self._place()
        tl = self.session.timeline()
        if self._where is None or tl is None:
            self._ids, self.refs = [], frozenset()
        else:
            self._ids = self.store.load(*self._where)
            self.refs = frozenset(indices_of(tl.events.event_ids(), self._ids).values())
        self.changed.emit()

    def _on_character_shown(self, _name: str) -> None:
        self._reload()

    def _on_loaded(self, _folder: LoadedFolder) -> None:
        if self.session.current is None:
            self._reload()  # a folder without characters: the previous one's bookmarks go

    def is_bookmarked(self, ref: int) -> bool:
        return ref in self.refs

    def toggle(self, ref: int) -> bool | None:
        """Bookmark event ``ref``, or remove its bookmark; returns whether it is now bookmarked
        (``None``: it cannot be, a damaged line or nothing shown)."""
        tl = self.session.timeline()
        if self._where is None or tl is None or ref < 0 or ref >= len(tl.events):
            return None
        event_id = tl.events.event_id(ref)
        on = ref not in self.refs
        if on:
            self._ids.append(event_id)
            self.refs = self.refs | {ref}
        else:
            self._ids = [i for i in self._ids if i != event_id]
            self.refs = self.refs - {ref}
        self.store.save(*self._where, self._ids)
        self.changed.emit()
        return on

    def positions(self, shown: Sequence[int]) -> list[int]:
        """The positions in ``shown`` (the rows shown) of the bookmarked rows, in order."""
        tl = self.session.timeline()
        if tl is None:
            return []
        found = (tl.position(shown, ref) for ref in self.refs)
        return sorted(p for p in found if p is not None)

    def next_position(self, shown: Sequence[int], current: int | None, step: int) -> Step | None:
        """The bookmarked row after (``step`` = 1) or before (-1) position ``current`` in ``shown``,
        wrapping around; ``None`` when no bookmarked row is shown."""
        return step_among(self.positions(shown), current, step)
