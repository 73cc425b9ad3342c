"""Where guarded replay asks its questions: :class:`Question`, the :class:`ReplayPrompter`
protocol and :class:`HeadlessReplayPrompter` (tests and scripts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

# Question keys (what a prompter is asked).
ASK_APPLY = "confirm_apply"
ASK_RECENT_WRITES = "recent_writes"
ASK_EXTRACT = "extract_zip"
ASK_RESTORE = "confirm_restore"


@dataclass(frozen=True, slots=True)
class Question:
    """A yes/no question for the person running the replay.

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


class ReplayPrompter(Protocol):
    """Where guarded replay asks its questions and says what it is doing (git-cola style).

    The command line answers on the terminal, the window with dialogs, tests with
    :class:`HeadlessReplayPrompter`.
    """

    def ask(self, question: Question) -> bool:
        """Return ``True`` to go ahead."""
        ...

    def notify(self, text: str) -> None:
        """Tell the person something that needs no answer (a guard's finding, a plan, a result)."""
        ...


class HeadlessReplayPrompter:
    """A prompter without a person: answers from a fixed value, a mapping per key, or a function.

    Args:
        answers: ``True``/``False`` for every question, a mapping ``key → bool`` (keys not in it
            get ``default``), or ``fn(question) -> bool``.
        default: the answer for keys a mapping does not name.

    Attributes:
        asked: every question asked, in order.
        notes: every notification, in order.
    """

    def __init__(
        self,
        answers: bool | Mapping[str, bool] | Callable[[Question], bool] = False,
        *,
        default: bool = False,
    ) -> None:
        self._answers = answers
        self._default = default
        self.asked: list[Question] = []
        self.notes: list[str] = []

    def ask(self, question: Question) -> bool:
        self.asked.append(question)
        if isinstance(self._answers, bool):
            return self._answers
        if isinstance(self._answers, Mapping):
            return bool(self._answers.get(question.key, self._default))
        return bool(self._answers(question))

    def notify(self, text: str) -> None:
        self.notes.append(text)

    def keys(self) -> list[str]:
        """The keys of the questions asked, in order."""
        return [q.key for q in self.asked]
