"""Bookmarks (issue 16 item 20): rows the user marked, kept per opened folder and character by
event id, in the user's config folder (never inside an opened folder)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from inspector.core.dirs import BOOKMARKS_NAME
from journal import fs


class BookmarkStore:
    """Bookmarked event ids per folder (by its absolute path) and character, in
    ``config_dir/bookmarks.json``: ``{folder: {character: [event id, ...]}}``.

    Reading tolerates a missing or damaged file (no bookmarks); writing is atomic
    (:func:`journal.fs.atomic_write_bytes`), and a failure to write is swallowed: a bookmark is
    never worth an error dialog (it stays for this session).

    Attributes:
        file: the JSON file.
    """

    def __init__(self, config_dir: str | os.PathLike[str]) -> None:
        self.file = Path(config_dir) / BOOKMARKS_NAME

    @staticmethod
    def folder_key(folder: str | os.PathLike[str]) -> str:
        return os.path.abspath(os.fspath(folder))

    def _load_all(self) -> dict[str, dict[str, list[str]]]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        out: dict[str, dict[str, list[str]]] = {}
        for folder, chars in data.items():
            if isinstance(folder, str) and isinstance(chars, dict):
                out[folder] = {
                    name: [i for i in ids if isinstance(i, str)]
                    for name, ids in chars.items()
                    if isinstance(name, str) and isinstance(ids, list)
                }
        return out

    def load(self, folder: str | os.PathLike[str], character: str) -> list[str]:
        """The bookmarked event ids of ``character`` in ``folder``, in the order they were added."""
        return list(self._load_all().get(self.folder_key(folder), {}).get(character, []))

    def save(self, folder: str | os.PathLike[str], character: str, event_ids: Iterable[str]) -> None:
        """Keep exactly ``event_ids`` for ``character`` in ``folder`` (an empty list forgets them)."""
        data = self._load_all()
        key = self.folder_key(folder)
        ids = list(dict.fromkeys(event_ids))
        chars = data.setdefault(key, {})
        if ids:
            chars[character] = ids
        else:
            chars.pop(character, None)
        if not chars:
            data.pop(key, None)
        try:
            fs.ensure_dir(self.file.parent)
            fs.atomic_write_bytes(self.file, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))
        except OSError:
            pass


def indices_of(event_ids: Sequence[str], wanted: Iterable[str]) -> dict[str, int]:
    """``{event id: index}`` of the ``wanted`` ids found in ``event_ids`` (one pass; the first
    event with an id wins, as :meth:`~inspector.core.timeline.CharacterTimeline.find_event`)."""
    want = set(wanted)
    out: dict[str, int] = {}
    if not want:
        return out
    for i, eid in enumerate(event_ids):
        if eid in want and eid not in out:
            out[eid] = i
            if len(out) == len(want):
                break
    return out
