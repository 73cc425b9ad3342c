"""The characters list on the left: a name per row, with health badge chips under it.

The first chip, when there is one, is about the memory server's next start (``server: 2 errors``:
its ``server.*`` findings); the others are our guarded replay's counts (``check``'s), or, without
one, its verdict (``1 error``, ``healthy``). The health dot is the diagnosis's health. Nothing
here works a verdict out: :class:`~inspector.models.characters_model.CharacterRow` carries them.
A row's tooltip names each actor.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QHelpEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

from inspector.models.characters_model import HEALTH_COLOUR, CharacterListModel, CharacterRow
from inspector.models.colors import accent_color, readable_on

_PAD = 6


def server_chip(row: CharacterRow) -> tuple[str, str] | None:
    """The chip for the memory server's next start: ``(text, state colour)``, or ``None``."""
    return row.server_chip()


def row_health(row: CharacterRow) -> str:
    """The health dot's colour: the diagnosis's health (:attr:`CharacterRow.health`), as a state colour."""
    return HEALTH_COLOUR.get(row.health, "")


def chips_that_fit(texts: list[str], width: int, measure: Callable[[str], int], gap: int) -> int:
    """How many chips of ``texts`` to draw in ``width`` pixels: all when they fit, else as many as
    fit beside a ``+N`` chip for the rest (at least one)."""
    widths = [measure(t) for t in texts]
    if sum(widths) + gap * max(0, len(widths) - 1) <= width:
        return len(texts)
    used = 0
    for i, w in enumerate(widths):
        plus = measure(f"+{len(texts) - i}")
        if i and used + w + gap + plus > width:
            return i
        used += w + gap
    return max(1, len(texts) - 1)


def chip_items(row: CharacterRow) -> list[tuple[str, str]]:
    """Every chip of a row, in order (:meth:`CharacterRow.chips`): the server's, then ours
    (``healthy`` only when the diagnosis's health is ``none`` or ``info``)."""
    return row.chips()


class BadgeDelegate(QStyledItemDelegate):
    """Paints a character as its name (with a health dot) and a line of coloured count chips."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """Override: two lines."""
        fm = QFontMetrics(option.font)
        # Narrow on purpose: the list elides names instead of growing a horizontal scroll bar.
        return QSize(120, fm.height() * 2 + 3 * _PAD)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        """Override: name, health dot, badge chips."""
        model = index.model()
        assert isinstance(model, CharacterListModel)
        row = model.rows()[index.row()]
        painter.save()
        palette: QPalette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(option.rect, palette.color(QPalette.ColorRole.Highlight))
        text_color = palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        fm = QFontMetrics(option.font)
        r = option.rect.adjusted(_PAD, _PAD, -_PAD, -_PAD)
        dot = accent_color(palette, row_health(row))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(dot)
        d = fm.height() - 6
        painter.drawEllipse(QRect(r.left(), r.top() + 3, d, d))
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text_color)
        name_rect = QRect(r.left() + d + 6, r.top(), r.width() - d - 6, fm.height())
        painter.drawText(name_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         QFontMetrics(bold).elidedText(row.name, Qt.TextElideMode.ElideRight, name_rect.width()))
        small = QFont(option.font)
        small.setPointSizeF(max(7.0, option.font.pointSizeF() * 0.85))
        painter.setFont(small)
        sfm = QFontMetrics(small)
        x = r.left()
        y = r.top() + fm.height() + _PAD // 2
        items = chip_items(row)
        shown = chips_that_fit([t for t, _ in items], r.width(), lambda t: sfm.horizontalAdvance(t) + 10, 4)
        if shown < len(items):  # never drop a chip silently: the rest is "+N" (all of them in the tooltip)
            items = [*items[:shown], (f"+{len(items) - shown}", "")]
        for text, state in items:
            w = sfm.horizontalAdvance(text) + 10
            chip = QRect(x, y, w, sfm.height() + 2)
            if state:
                fill = accent_color(palette, state)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(fill)
                painter.drawRoundedRect(chip, 3, 3)
                painter.setPen(readable_on(fill))
            else:
                painter.setPen(text_color)
            painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, text)
            x += w + 4
        painter.restore()

    def helpEvent(
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """Override: the tooltip names each actor (the list's :attr:`CharacterList.describe`)."""
        describe = getattr(view, "describe", None)
        if event.type() == event.Type.ToolTip and describe is not None and index.isValid():
            text = describe(index.data(Qt.ItemDataRole.DisplayRole))
            if text:
                QToolTip.showText(event.globalPos(), text, view)
                return True
        return super().helpEvent(event, view, option, index)


class CharacterList(QListView):
    """The characters of the opened folder.

    Attributes:
        describe: ``name -> tooltip text`` (``None``: the model's own tooltip).
    """

    def __init__(self, model: CharacterListModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.describe: Callable[[str], str] | None = None
        self.setModel(model)
        self.setItemDelegate(BadgeDelegate(self))
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setUniformItemSizes(True)
        self.setMinimumWidth(190)

    def select_name(self, name: str) -> None:
        model = self.model()
        assert isinstance(model, CharacterListModel)
        row = model.row_of(name)
        if row is not None:
            self.setCurrentIndex(model.index(row, 0))


