"""The detail pane's tables on a first start at 900×600 (the window at 90 %: 810×540, the pane
about 280 px; issue 27 items 5 and 8, seen after them): the Findings table showed only Severity
and Code with the message off to the right, and History cut its Type, ts and changed fields.
Now every column of both is in view by one rule (:func:`inspector.core.columns.pane_widths`): what
carries identity whole, long text elided, the message (the changed fields) taking the room left.

Runs in a child process on an offscreen screen of that size, as the window-fit tests do.
"""

from __future__ import annotations

import pytest

from inspector.widgets.history_panel import MARKER_STATES, SERIES, symbol_name
from journal.finding import SEVERITIES
from tests.inspector.widgets.test_dialogs_fit_the_screen import _probe

pytestmark = pytest.mark.gui

#: The least width a message or the changed fields read with (pixels).
READABLE = 80


@pytest.fixture(scope="module")
def shown(tmp_path_factory):
    return _probe(tmp_path_factory.mktemp("detail-fit"), 900, 600, "_detail_fit_probe")


def _in_view(table: dict, where: object) -> None:
    """Every column shown, within the viewport, none past its right edge (no sideways scrolling)."""
    room = table["viewport"]
    for c in table["columns"]:
        assert not c["hidden"], (where, c["title"])
        assert c["x"] >= 0 and c["x"] + c["width"] <= room, (where, c["title"], c["x"], c["width"], room)
    assert table["scroll_max"] == 0, where


def _column(table: dict, title: str) -> dict:
    return next(c for c in table["columns"] if c["title"] == title)


def test_every_findings_column_is_in_view_and_the_message_reads(shown):
    with_findings = [c for c in shown if c["findings"]["rows"]]
    assert len(with_findings) >= 5 and {c["window"][0] for c in shown} == {810}
    for c in with_findings:
        table, where = c["findings"], c["name"]
        _in_view(table, where)
        message = _column(table, "Message")
        assert message["width"] >= READABLE, (where, message["width"])
        for cell in message["cells"]:
            # the start of the message, elided at its end (its whole text on hover)
            head = cell["shown"].removesuffix("…")
            assert len(head) >= 8 and cell["text"].startswith(head), (where, cell["shown"])
            assert cell["shown"] == cell["text"] or cell["shown"].endswith("…"), (where, cell["shown"])
        for cell in _column(table, "Code")["cells"]:
            assert cell["shown"] == cell["text"], (where, cell)  # the code whole


def test_the_severity_is_compact_an_icon_its_word_on_hover_and_as_its_text(shown):
    compact = 0
    for c in shown:
        for cell in _column(c["findings"], "Severity")["cells"]:
            assert cell["text"] in SEVERITIES and cell["icon"], (c["name"], cell)
            assert cell["shown"] in ("", cell["text"]), (c["name"], cell)  # the word whole, or the icon alone
            assert cell["tip"].startswith(f"<p><b>{cell['text']}</b>"), (c["name"], cell["tip"])
            compact += cell["shown"] == ""
    assert compact  # a 280 px pane shows the icon alone: the test saw the narrow case


def test_every_history_column_is_in_view_identity_whole_and_the_changes_read(shown):
    with_history = [c for c in shown if "history" in c]
    assert len(with_history) >= 5
    for c in with_history:
        table, where = c["history"], c["name"]
        assert table["rows"]
        _in_view(table, where)
        changed = table["columns"][-1]
        assert changed["title"].startswith("Changed") and changed["width"] >= READABLE, where
        for title in ("#", "State"):  # which event, and its state: whole
            for cell in _column(table, title)["cells"]:
                assert cell["shown"] == cell["text"], (where, title, cell)
        for title in ("Effect", "Type", "ts"):  # long text: cut shows the ellipsis, whole on hover
            for cell in _column(table, title)["cells"]:
                assert cell["shown"] == cell["text"] or "…" in cell["shown"], (where, title, cell)
                assert cell["tip"] == cell["text"], (where, title, cell)


def test_the_legend_wraps_between_its_items_only(shown):
    marks = {"●", "○"} | {symbol_name(symbol) for _name, _axis, symbol, _role in SERIES}
    names = set(MARKER_STATES) | {name for name, *_ in SERIES}
    for c in (c for c in shown if "history" in c):
        lines = [line.strip(" \u2028\xa0") for line in c["history"]["legend_lines"]]
        assert lines and len(lines) <= 4, (c["name"], lines)
        for line in lines:
            assert line[:1] in marks, (c["name"], lines)  # a line starts with an item's mark
            items = [part.strip("\xa0 ") for part in line.split("\xa0 ")]
            for item in items:  # each item a mark and its name, together on one line
                mark, _, name = item.partition("\xa0")
                assert mark in marks and name in names, (c["name"], lines)
