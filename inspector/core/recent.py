"""Recently opened locations, kept in the user's config folder (:func:`inspector.core.dirs.config_dir`;
never inside an opened folder)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from inspector.core.dirs import RECENT_NAME
from journal import fs

#: How many locations the File ▸ Recent menu lists.
MAX_RECENT = 10


class RecentLocations:
    """An ordered, de-duplicated list of paths stored as JSON in ``config_dir/recent.json``.

    Reading tolerates a missing or damaged file (an empty list); writing is atomic and a failure
    to write is swallowed, because a recent-files list is never worth an error dialog.

    Attributes:
        file: the JSON file.
    """

    def __init__(self, config_dir: str | os.PathLike[str], limit: int = MAX_RECENT) -> None:
        self.file = Path(config_dir) / RECENT_NAME
        self.limit = limit

    def load(self) -> list[str]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(data, list):
            return []
        return [p for p in data if isinstance(p, str)][: self.limit]

    def add(self, location: str | os.PathLike[str]) -> list[str]:
        """Put ``location`` first and save; returns the new list."""
        path = os.path.abspath(os.fspath(location))
        items = [path] + [p for p in self.load() if p != path]
        items = items[: self.limit]
        self._save(items)
        return items

    def remove(self, location: str) -> list[str]:
        items = [p for p in self.load() if p != location]
        self._save(items)
        return items

    def clear(self) -> list[str]:
        """Forget every location (File ▸ Clear recent); returns the new, empty list."""
        self._save([])
        return []

    def _save(self, items: list[str]) -> None:
        try:
            fs.ensure_dir(self.file.parent)
            fs.atomic_write_bytes(self.file, json.dumps(items, ensure_ascii=False, indent=1).encode("utf-8"))
        except OSError:
            pass
