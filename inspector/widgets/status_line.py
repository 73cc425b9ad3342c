"""The window's status bar as the window's helpers speak to it: a passing message, a message
about the rows shown that goes when they change, and the place of a job's progress."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QStatusBar, QWidget


class StatusLine:
    """What the window's helpers say in its status bar, built once by the window.

    Args:
        bar: the window's status bar.
    """

    def __init__(self, bar: QStatusBar) -> None:
        self.bar = bar
        self._row_message = ""

    def show(self, text: str, timeout: int = 5000) -> None:
        """A message that goes after ``timeout`` ms (or when another one comes)."""
        self.bar.showMessage(text, timeout)

    def show_row_message(self, text: str, timeout: int = 5000) -> None:
        """A message about the rows shown ("No problems in the rows shown."): it goes as soon as
        they change (another character, a filter, a reload), not only when it times out (issue 27
        item 13)."""
        self._row_message = text
        self.bar.showMessage(text, timeout)

    def clear_row_message(self, *_args: Any) -> None:
        """Take back the message of :meth:`show_row_message`, if it still shows."""
        if self._row_message and self.bar.currentMessage() == self._row_message:
            self.bar.clearMessage()
        self._row_message = ""

    def add_indicator(self, widget: QWidget) -> None:
        """Show a job's progress (and its Cancel) at the bar's right, with the permanent fields."""
        self.bar.addPermanentWidget(widget)
