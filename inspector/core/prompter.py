"""Questions to the user, behind a protocol: the window shows dialogs, tests answer headlessly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class Prompter(Protocol):
    """What the window may ask or tell the user. Every method returns plain values."""

    def choose_folder(self, start: str) -> str | None:
        """A folder to open, or ``None`` when cancelled."""

    def choose_zip(self, start: str) -> str | None:
        """A ``.zip`` export to open, or ``None`` when cancelled."""

    def ask_event_id(self) -> str | None:
        """An event id, a prefix of one, or ``#index``; ``None`` when cancelled."""

    def show_error(self, title: str, message: str) -> None:
        """Tell the user something failed (the window stays usable)."""


@dataclass
class HeadlessPrompter:
    """A prompter with canned answers that records what it was told (tests, ``--screenshot``).

    Attributes:
        folder, zip_file, event_id: the answers to give.
        errors: ``(title, message)`` pairs shown so far.
    """

    folder: str | None = None
    zip_file: str | None = None
    event_id: str | None = None
    errors: list[tuple[str, str]] = field(default_factory=list)

    def choose_folder(self, start: str) -> str | None:
        return self.folder

    def choose_zip(self, start: str) -> str | None:
        return self.zip_file

    def ask_event_id(self) -> str | None:
        return self.event_id

    def show_error(self, title: str, message: str) -> None:
        self.errors.append((title, message))
