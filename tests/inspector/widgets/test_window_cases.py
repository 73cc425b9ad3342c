"""Every diagnosis case of the shared fixture builder, opened in the window: it shows the same
analysis as ``check`` (counts, states, blocked event), renders each character, writes nothing."""

from __future__ import annotations

import pytest

from inspector.models.characters_model import BADGE_ROLE
from inspector.models.timeline_model import STATE_ROLE
from journal.diagnosis import diagnose_path
from journal.fixtures import CASES
from tests.inspector.models.dump import dump
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def every_case(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    for build in CASES.values():
        build(root)
    return root


def test_the_window_shows_what_check_reports(qtbot, inspector_window, every_case):  # noqa: F811
    window = inspector_window
    before = tree_hashes(every_case)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, every_case)
    expected = {c.name: c for c in diagnose_path(every_case).characters}
    listed = [r[0] for r in dump(window.session.characters_model)]
    assert listed == sorted(expected)
    for name, check in expected.items():
        window.characters.select_name(name)
        assert window.session.current == name
        counts = check.counts()
        badge = window.session.characters_model.index(listed.index(name), 0).data(BADGE_ROLE)
        for key in ("blocked", "orphaned", "suspect", "pending"):
            assert (f"{counts[key]:,} {key}" in badge) == bool(counts[key]), (name, badge, counts)
        model = window.session.timeline_model
        states = [model.index(p, 0).data(STATE_ROLE) for p in range(model.rowCount())]
        events = [s for s in states if s != "damaged"]
        assert events == [e.state for e in check.events], name
        shown_defects = [d for d in check.defects if d.kind != "unknown_type"]
        assert states.count("damaged") == len(shown_defects), name
        assert window.session.findings_model.rowCount() == len(check.findings)
        assert window.session.outbox_model.rowCount() == len(check.outbox)
        if check.blocked is not None:
            assert window.select_ref(check.blocked.index)
            assert "Why blocked" in window.detail.event_detail.reason.text(), name
        assert not window.timeline.viewport().grab().isNull()
    window.close()
    assert tree_hashes(every_case) == before
