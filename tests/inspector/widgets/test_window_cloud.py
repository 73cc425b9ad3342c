"""A cloud-save unit in the window (issue 26): opened, it is the character its unit names, with no
server start; File ▸ Compare with ▸ Cloud save… shows what downloading a unit into the character
shown would do. Both the unit and the opened folder are only read."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.widgets.cloud_preview import CloudPreviewPanel
from inspector.widgets.main_window import MainWindow
from journal import fixtures
from journal.fixtures import cloudunit
from journal.views import load_view, save_view
from tests.inspector.widgets.window_fixtures import WAIT_MS, make_inspector_window, open_and_wait, tree_hashes  # noqa: F401

pytestmark = [pytest.mark.gui]

NAME = "小满.N.E.K.O"


@pytest.fixture
def window(make_inspector_window) -> MainWindow:  # noqa: F811
    return make_inspector_window()


def _cloud(tmp_path: Path) -> cloudunit.CloudBuilt:
    src = fixtures.healthy(tmp_path / "other-device")
    reflections = load_view(src.path / "reflections.json", list)
    reflections[0]["status"] = "pending"
    save_view(src.path / "reflections.json", reflections)
    return cloudunit.upload(tmp_path / "N.E.K.O", src.path, NAME)


def test_a_cloud_unit_opens_as_its_character(qtbot, window, tmp_path) -> None:
    built = _cloud(tmp_path)
    before = tree_hashes(built.anchor)
    open_and_wait(qtbot, window, built.root)
    assert window.session.current == NAME
    [c] = window.session.folder.diagnosis.characters
    assert c.server_start is None and c.not_applicable is not None
    assert tree_hashes(built.anchor) == before


def test_compare_with_a_cloud_save_shows_the_download_preview(qtbot, window, tmp_path) -> None:
    built = _cloud(tmp_path)
    local = fixtures.healthy(tmp_path / "memory")
    open_and_wait(qtbot, window, local.path)
    before = (tree_hashes(built.anchor), tree_hashes(local.path))
    window.prompter.folder = str(built.root)
    actions = window.support_actions
    assert actions.compare_cloud_action in actions.compare_menu.actions()
    with qtbot.waitSignal(window.context.support.download_previewed, timeout=WAIT_MS):
        actions.compare_cloud_action.trigger()
    panel = actions.cloud_panel
    assert isinstance(panel, CloudPreviewPanel)
    text = panel.text.toPlainText()
    assert "would change this folder" in panel.heading.text()
    assert "replaces: reflections.json" in text and "view.replaced" in text
    assert 'status "pending" in the view, "confirmed" by the journal' in text
    assert "until the memory server process restarts" in text
    window.window_actions.redact_action.setChecked(True)
    assert panel.text.toPlainText() != "" and (tree_hashes(built.anchor), tree_hashes(local.path)) == before


def test_a_live_re_diagnosis_of_a_unit_keeps_it_a_unit(qtbot, window, tmp_path) -> None:
    """A re-diagnosis after a file change reads the unit as check does: still no server start."""
    from inspector.core.jobs import CancelToken

    built = _cloud(tmp_path)
    open_and_wait(qtbot, window, built.root)
    work = window.session.rediagnosis_work(NAME)
    assert work is not None
    delta = work(CancelToken())
    assert delta.server_start is None and delta.not_applicable is not None
    with qtbot.waitSignal(window.session.states_recomputed, timeout=WAIT_MS):
        window.session.rediagnosis.finished(window.session.generation, NAME, delta, 0.01)
    tl = window.session.timeline(NAME)
    assert tl.diagnosis.not_applicable is not None and tl.server_start is None
    assert tl.diagnosis.cloud_unit is not None
    assert "Not applicable: a cloud-save unit is not a memory folder." in window.server_panel.plain_text()
