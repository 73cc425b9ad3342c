"""The character list's chips: none is dropped silently, and the sentinel's state shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.widgets.characters import chip_items, chips_that_fit
from journal import fixtures as folders
from journal.events import SENTINEL_NAME
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
)

pytestmark = pytest.mark.gui


def _measure(text: str) -> int:
    return 10 * len(text)


def test_all_chips_fit_or_the_rest_is_counted() -> None:
    texts = ["server: 1 error", "3 suspect", "2 pending", "1 defect"]
    total = sum(map(_measure, texts)) + 4 * 3
    assert chips_that_fit(texts, total, _measure, 4) == 4
    shown = chips_that_fit(texts, total - 1, _measure, 4)
    assert shown == 3  # three chips and "+1"
    used = sum(_measure(t) for t in texts[:shown]) + 4 * shown + _measure(f"+{len(texts) - shown}")
    assert used <= total - 1
    assert chips_that_fit(texts, 5, _measure, 4) == 1  # at least one chip, then "+3"


@pytest.mark.parametrize(
    ("content", "note"),
    [
        (None, "sentinel missing"),
        (b"{not json", "sentinel malformed"),
        (b'{"last_applied_event_id": "x"}', "sentinel unknown"),
    ],
)
def test_the_sentinel_state_is_a_chip(qtbot, inspector_window, tmp_path: Path, content, note) -> None:  # noqa: F811
    b = folders.healthy(tmp_path)
    if content is None:
        (b.path / SENTINEL_NAME).unlink()
    else:
        (b.path / SENTINEL_NAME).write_bytes(content)
    open_and_wait(qtbot, inspector_window, b.path)
    [row] = inspector_window.session.characters_model.rows()
    assert (note, "") in chip_items(row)
