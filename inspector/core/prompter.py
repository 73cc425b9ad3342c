"""Questions to the person, behind one protocol (git-cola style): the window answers with dialogs,
the command line on the terminal, tests and ``--screenshot`` headlessly.

:class:`Question` is a yes/no question with a key, so a headless prompter can answer per key.
:class:`Prompter` is everything the inspector may ask or tell: where to open, an event id, and the
guarded-replay flow's questions (:mod:`inspector.core.replay.flow`), including the plan review,
whose answer may be a new scope, and the choice of a backup to restore.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from inspector.core.replay.flow import BackupSummary, ReplayRun, Review, Scope

# Question keys (what a prompter is asked).
ASK_APPLY = "confirm_apply"
ASK_RECENT_WRITES = "recent_writes"
ASK_EXTRACT = "extract_zip"
ASK_RESTORE = "confirm_restore"
ASK_CHOOSE_BACKUP = "choose_backup"

#: Levels of a notice: how the window shows it (an information or a warning icon).
NOTICE_LEVELS = ("info", "warning")


@dataclass(frozen=True, slots=True)
class Question:
    """A yes/no question for the person.

    Attributes:
        key: what is asked (``confirm_apply``, ``recent_writes``, ``extract_zip``,
            ``confirm_restore``), so a headless prompter can answer per key.
        title: a short title.
        text: the question in one or two sentences.
        details: supporting text (the plan, the diff, what will be replaced), may be empty.
        default: the answer a person gets by just pressing Enter.
    """

    key: str
    title: str
    text: str
    details: str = ""
    default: bool = False


class Prompter(Protocol):
    """What the inspector may ask or tell the person. Every method returns plain values."""

    def choose_folder(self, start: str) -> str | None:
        """A folder to open, or ``None`` when cancelled."""
        ...

    def choose_zip(self, start: str) -> str | None:
        """A ``.zip`` export to open, or ``None`` when cancelled."""
        ...

    def ask_event_id(self) -> str | None:
        """An event id, a prefix of one, or ``#index``; ``None`` when cancelled."""
        ...

    def choose_save_path(self, title: str, start: str, filters: Sequence[str]) -> str | None:
        """Where to write a file (an export), or ``None`` when cancelled.

        Args:
            title: what is saved (the dialog's title).
            start: the folder, or the suggested file path, to start from.
            filters: name filters such as ``"CSV files (*.csv)"``; the first one's suffix is
                added to a name typed without one.
        """
        ...

    def show_error(self, title: str, message: str) -> None:
        """Tell the person something failed (the window stays usable)."""
        ...

    def ask(self, question: Question) -> bool:
        """A yes/no question; ``True`` to go ahead."""
        ...

    def notify(self, text: str, *, title: str = "", level: str = "info") -> None:
        """Tell the person something that needs no answer (a guard's finding, a plan, a result)."""
        ...

    def review(self, review: Review) -> bool | Scope:
        """The plan of a guarded replay: ``True`` applies it, ``False`` declines, and a
        :class:`~inspector.core.replay.plan.Scope` asks for a plan of that scope instead."""
        ...

    def choose_backup(self, backups: Sequence[BackupSummary], start: Path) -> Path | None:
        """The backup folder to restore (``backups`` are listed first), or ``None``."""
        ...

    def show_result(self, run: ReplayRun) -> None:
        """The result of a replay that ran, beside its plan."""
        ...


class HeadlessPrompter:
    """A prompter without a person: canned answers, and a record of what it was asked and told.

    Args:
        answers: the yes/no answers: ``True``/``False`` for every question, a mapping
            ``key → bool`` (keys not in it get ``default``), or ``fn(question) -> bool``. The plan
            review is answered as its question (``confirm_apply``) is.
        default: the answer for keys a mapping does not name.
        folder, zip_file, event_id, backup, save_path: the answers to the choosers.

    Attributes:
        asked: every yes/no question asked (the review's included), in order.
        notes: every notification, in order.
        errors: ``(title, message)`` pairs shown so far.
        results: every replay result shown.
        save_requests: ``(title, start, filters)`` of every save-path question, in order.
    """

    def __init__(
        self,
        answers: bool | Mapping[str, bool] | Callable[[Question], bool] = False,
        *,
        default: bool = False,
        folder: str | None = None,
        zip_file: str | None = None,
        event_id: str | None = None,
        backup: Path | None = None,
        save_path: str | None = None,
    ) -> None:
        self._answers = answers
        self._default = default
        self.folder = folder
        self.zip_file = zip_file
        self.event_id = event_id
        self.backup = backup
        self.save_path = save_path
        self.save_requests: list[tuple[str, str, tuple[str, ...]]] = []
        self.asked: list[Question] = []
        self.notes: list[str] = []
        self.errors: list[tuple[str, str]] = []
        self.results: list[ReplayRun] = []

    def choose_folder(self, start: str) -> str | None:
        return self.folder

    def choose_zip(self, start: str) -> str | None:
        return self.zip_file

    def ask_event_id(self) -> str | None:
        return self.event_id

    def choose_save_path(self, title: str, start: str, filters: Sequence[str]) -> str | None:
        self.save_requests.append((title, start, tuple(filters)))
        return self.save_path

    def show_error(self, title: str, message: str) -> None:
        self.errors.append((title, message))

    def ask(self, question: Question) -> bool:
        self.asked.append(question)
        if isinstance(self._answers, bool):
            return self._answers
        if isinstance(self._answers, Mapping):
            return bool(self._answers.get(question.key, self._default))
        return bool(self._answers(question))

    def notify(self, text: str, *, title: str = "", level: str = "info") -> None:
        self.notes.append(text)

    def review(self, review: Review) -> bool | Scope:
        """Asked as its question; a plan without work has nothing to confirm (go ahead)."""
        return review.asked(self.ask)

    def choose_backup(self, backups: Sequence[BackupSummary], start: Path) -> Path | None:
        self.asked.append(Question(ASK_CHOOSE_BACKUP, "Restore backup", f"{len(backups)} backup(s) listed"))
        return self.backup

    def show_result(self, run: ReplayRun) -> None:
        self.results.append(run)

    def keys(self) -> list[str]:
        """The keys of the questions asked, in order."""
        return [q.key for q in self.asked]
