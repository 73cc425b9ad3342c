"""The characters list: one row per character folder, with the diagnosis's health and counts.

A row carries what the diagnosis says, as data: its health (:attr:`CharacterDiagnosis.health`, the
highest finding severity), its counts (``check``'s), and how many findings of each severity there
are about the memory server's next start and about the rest. It works out no verdict of its own:
the chips are those values in words.

The words of a health: ``healthy`` only when the diagnosis's health is ``none`` (no finding) or
``info`` (only notes such as an outbox being worked off or a compaction due: ``check`` exits 0 for
them); for ``info`` the chip says how many notes there are (``healthy · 2 info``). Never beside a
warning or an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from inspector.core.check_report import COUNT_WORDS, severity_totals
from inspector.core.text import count
from inspector.core.timeline import LOADING, UNCHECKED
from inspector.core.vocabulary import Finding, health_of, is_server_start_finding

Index = QModelIndex | QPersistentModelIndex

BADGE_ROLE = Qt.ItemDataRole.UserRole + 1
HEALTH_ROLE = Qt.ItemDataRole.UserRole + 2
NAME_ROLE = Qt.ItemDataRole.UserRole + 3

#: What a character says while only a preview of it was read (never ``healthy``: nothing is known).
LOADING_TEXT = f"{LOADING}…"

#: Healths that may be called :data:`HEALTHY_WORD` (``check`` exits 0 for them).
HEALTHY = frozenset({"none", "info"})

#: The word for them: the one place the window says it (``check`` says ``findings  none: healthy``).
HEALTHY_WORD = "healthy"

#: The state colour of each health (the dot, and the chip that names it).
HEALTH_COLOUR = {"error": "blocked", "warning": "suspect", "info": "applied", "none": "applied", LOADING: LOADING}

#: Count chips in display order (the diagnosis's ``counts`` keys), with the state colour each uses.
BADGE_ORDER = (
    ("blocked", "blocked"),
    ("orphaned", "orphaned"),
    ("suspect", "suspect"),
    ("pending", "pending"),
    ("defects", "damaged"),
)

#: The actors, as every verdict names them.
SERVER_ACTOR = "memory server"
OUR_ACTOR = "guarded replay (memory-inspector)"


@dataclass(frozen=True, slots=True)
class CharacterRow:
    """One character as listed: what its latest diagnosis says.

    Attributes:
        name: the folder name.
        counts: the diagnosis's counts (``check``'s ``counts``: the event states, ``defects``).
        health: the diagnosis's :attr:`~journal.diagnosis.CharacterDiagnosis.health`
            (``error`` / ``warning`` / ``info`` / ``none``; :data:`LOADING` while loading).
        note: a one-line remark (``views only``, ``no journal``...).
        loading: only a preview was read: nothing is known about its health yet.
        server: findings about the memory server's next start, per severity.
        server_health: their highest severity (``none``: there are none).
        ours: the other findings (the folder and our guarded replay), per severity.
        ours_health: their highest severity.
        ours_codes: the codes of those at that severity, in order (for the tooltip).
        unchecked: something changed since that diagnosis; the next one is on its way.
    """

    name: str
    counts: dict[str, int]
    health: str
    note: str = ""
    loading: bool = False
    server: dict[str, int] = field(default_factory=dict)
    server_health: str = "none"
    ours: dict[str, int] = field(default_factory=dict)
    ours_health: str = "none"
    ours_codes: tuple[str, ...] = ()
    unchecked: bool = False

    @classmethod
    def of(
        cls,
        name: str,
        counts: dict[str, int],
        findings: Iterable[Finding],
        *,
        health: str,
        note: str = "",
        unchecked: bool = False,
    ) -> CharacterRow:
        """The row of a diagnosis: its ``counts``, ``findings`` and ``health`` as it made them."""
        found = list(findings)
        server = [f for f in found if is_server_start_finding(f)]
        ours = [f for f in found if not is_server_start_finding(f)]
        ours_health = health_of(f.severity for f in ours)
        return cls(
            name,
            dict(counts),
            health,
            note,
            server=severity_totals(server),
            server_health=health_of(f.severity for f in server),
            ours=severity_totals(ours),
            ours_health=ours_health,
            ours_codes=tuple(dict.fromkeys(f.code for f in ours if f.severity == ours_health)),
            unchecked=unchecked,
        )

    @classmethod
    def preview(cls, name: str) -> CharacterRow:
        """A character of which only a preview was read (its diagnosis is running)."""
        return cls(name, {}, LOADING, loading=True)

    # -- the chips --------------------------------------------------------------------------------

    def server_chip(self) -> tuple[str, str] | None:
        """The memory server's chip, ``("server: 2 errors", colour)``, when its findings include a
        warning or an error (else ``None``)."""
        h = self.server_health
        if h not in ("error", "warning"):
            return None
        return (f"server: {count(self.server.get(h, 0), h)}", HEALTH_COLOUR[h])

    def count_chips(self) -> list[tuple[str, str]]:
        """Our guarded replay's counts, ``("3 pending", "pending")``: the diagnosis's, not zero."""
        return [
            (f"{self.counts[key]:,} {COUNT_WORDS[key]}", state)
            for key, state in BADGE_ORDER
            if self.counts.get(key, 0)
        ]

    def verdict_chip(self) -> tuple[str, str] | None:
        """What our side says without a count to show: its findings' highest severity, counted
        (``1 error``, ``2 warnings``), else ``healthy`` when the character's health allows it;
        ``None`` when only the memory server has a warning or an error."""
        h = self.ours_health
        if h in ("error", "warning"):
            return (count(self.ours.get(h, 0), h), HEALTH_COLOUR[h])
        if self.health not in HEALTHY:
            return None  # the server's chip says it
        if self.health == "info":
            notes = self.ours.get("info", 0) + self.server.get("info", 0)
            return (f"{HEALTHY_WORD} · {notes:,} info", HEALTH_COLOUR["info"])
        return (HEALTHY_WORD, HEALTH_COLOUR["none"])

    def chips(self) -> list[tuple[str, str]]:
        """Every chip of the row, ``(text, state colour)``, in order: the memory server's, then
        ours (counts, or the verdict), then whether it waits for a re-check, then the note; while
        it loads, only that (no colour: nothing is known yet)."""
        if self.loading:
            return [(LOADING_TEXT, "")]
        items: list[tuple[str, str]] = []
        server = self.server_chip()
        if server is not None:
            items.append(server)
        ours = self.count_chips()
        verdict = None if ours else self.verdict_chip()
        items += ours if ours else ([verdict] if verdict is not None else [])
        if self.unchecked:
            items.append((UNCHECKED, ""))
        if self.note:
            items.append((self.note, ""))
        return items

    def badge_text(self) -> str:
        """Every chip's text, ``" · "``-joined (what the row shows, in words)."""
        return " · ".join(t for t, _ in self.chips())

    def guarded_text(self) -> str:
        """What our guarded replay's side says (the tooltip's line): the counts, or the verdict."""
        if self.loading:
            return LOADING_TEXT
        ours = self.count_chips()
        verdict = self.verdict_chip()
        words = [t for t, _ in ours]
        if verdict is not None and self.ours_health in ("error", "warning"):
            codes = ", ".join(self.ours_codes)
            words.append(f"{'findings: ' if ours else ''}{verdict[0]} ({codes})")
        elif not ours:
            words.append(verdict[0] if verdict is not None else "no warning or error of its own")
        return " · ".join(words)


class CharacterListModel(QAbstractListModel):
    """Rows of :class:`CharacterRow`, fed with :meth:`set_rows` / :meth:`update_row`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[CharacterRow] = []

    def set_rows(self, rows: Sequence[CharacterRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def update_row(self, row: CharacterRow) -> None:
        """Replace the row with the same name (a live change of its counts)."""
        for i, old in enumerate(self._rows):
            if old.name == row.name:
                if old != row:
                    self._rows[i] = row
                    idx = self.index(i, 0)
                    self.dataChanged.emit(idx, idx)
                return

    def row_of(self, name: str) -> int | None:
        for i, r in enumerate(self._rows):
            if r.name == name:
                return i
        return None

    def rows(self) -> list[CharacterRow]:
        return list(self._rows)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Override: one row per character."""
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Override: name, chips in words and the diagnosis's health."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.name
        if role in (Qt.ItemDataRole.ToolTipRole, BADGE_ROLE):
            return row.badge_text()
        if role == HEALTH_ROLE:
            return row.health
        if role == NAME_ROLE:
            return row.name
        return None
