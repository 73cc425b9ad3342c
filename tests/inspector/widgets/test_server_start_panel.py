"""The window leads with the memory server's next start, per character, and labels our guarded
replay's verdicts as ours: neither passes for the other (memory-format §9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from inspector.core.rediagnose import DiagnosisDelta
from inspector.widgets.characters import chip_items, row_health
from inspector.widgets.server_start import SUBTITLE, TITLE, server_color
from inspector.widgets.timeline_bars import GUARDED_TITLE
from inspector.widgets.timeline_view import SERVER_STOP_TAG, SERVER_STRIPE
from journal import fixtures
from journal.diagnosis import diagnose_character
from journal.views import PERSONA
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A memory root inside an app-docs folder (``docs/memory``; ``docs/config`` beside it), away
    from the window's own config folder."""
    r = tmp_path / "docs" / "memory"
    r.mkdir(parents=True)
    return r


def _open(qtbot, window, path: Path, name: str | None = None):
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, path)
    if name is not None:
        window.characters.select_name(name)
        qtbot.waitUntil(lambda: window.session.current == name, timeout=WAIT_MS)
    return window


def _row(window, name: str):
    return next(r for r in window.session.characters_model.rows() if r.name == name)


def _guarded_text(window) -> str:
    return window.sentinel_bar.plain_text()


def _assert_actors_apart(window) -> None:
    """The panel names the server as its actor; the sentinel bar names our guarded replay."""
    panel = window.server_panel.plain_text()
    assert panel.startswith(f"{TITLE} — {SUBTITLE}")
    assert "memory server's next start" in panel.lower()
    assert "Guarded replay" not in panel.splitlines()[0]
    assert "applied ·" not in panel  # our counts are not the server's
    guarded = _guarded_text(window)
    assert guarded.startswith(f"{GUARDED_TITLE}: ") and "memory server" not in guarded.lower()
    layout = window.centralWidget().widget(1).layout()
    assert layout.indexOf(window.server_panel) < layout.indexOf(window.sentinel_bar)  # the server first


def test_a_glued_sentinel_shows_the_servers_full_replay_first(qtbot, inspector_window, root):  # noqa: F811
    built = fixtures.glued_torn_line(root)
    fixtures.healthy(root)
    before = tree_hashes(root)
    window = _open(qtbot, inspector_window, root, built.name)
    panel = window.server_panel
    text = panel.plain_text()
    assert "The memory server's next start replays 9 events from the start of the journal." in text
    assert "Its sentinel: unknown_id" in text and "replays the whole journal from the first event" in text
    assert "server.sentinel_unseen" in text and "server.full_replay" in text
    assert panel.severity == "error"
    _assert_actors_apart(window)
    # our guarded replay: nothing to do (the sentinel is on the last event, glued or not)
    assert window.sentinel_bar.label.text().endswith("10 applied · 0 pending · 1 damaged")  # check's counts
    # the timeline: every event before our sentinel is one the server applies again and ours would not
    tl = window.session.timeline()
    glued = tl.find_event(built.ids["glued"])
    assert [tl.server_only(i) for i in range(len(tl.events))] == [i != glued for i in range(len(tl.events))]
    assert tl.server_stop_ref() is None and window.timeline.server_stop_rect() is None
    view = window.timeline
    window.timeline.scrollToTop()
    image = view.viewport().grab().toImage()
    ratio = view.viewport().devicePixelRatio()
    y = view.rowViewportPosition(0) + view.rowHeight(0) // 2
    assert image.pixelColor(int(1 * ratio), int(y * ratio)).name() == server_color(view.palette()).name()
    assert (
        image.pixelColor(int((SERVER_STRIPE + 3) * ratio), int(y * ratio)).name() != server_color(view.palette()).name()
    )
    # the event detail says the server's part first, then nothing of ours (it is applied)
    assert window.select_ref(0)
    note = window.detail.event_detail.server_note
    assert note.isVisibleTo(window) and "applies this event again" in note.text()
    assert "behind our sentinel" in note.text()
    # the character list: the server's error shows although our badges only count a damaged line
    row = _row(window, built.name)
    assert chip_items(row)[0] == ("server: 1 error", "blocked")
    assert ("1 damaged", "damaged") in chip_items(row)
    assert row_health(row) == "blocked" and row.health == "error"  # the diagnosis's health
    healthy = _row(window, "healthy")
    assert healthy.health in ("none", "info")  # a compaction due is an info note: still healthy
    notes = f" · {healthy.ours['info']} info" if healthy.ours["info"] else ""
    assert chip_items(healthy) == [(f"healthy{notes}", "applied")]
    tip = window.characters.describe(built.name)
    assert tip.splitlines()[0].startswith("Memory server's next start: The memory server's next start replays 9")
    assert tip.splitlines()[1] == "Guarded replay (memory-inspector): 1 damaged · findings: 1 warning (line.glued)"
    assert tip.splitlines()[2].startswith("Diagnosis (as check reports it): error (1 error, ")
    window.close()
    assert tree_hashes(root) == before


def test_where_the_server_stops_is_marked_apart_from_our_blocked_event(qtbot, inspector_window, root):  # noqa: F811
    built = fixtures.persona_drift(root)
    window = _open(qtbot, inspector_window, root / built.name)
    text = window.server_panel.plain_text()
    assert "stops at #9 (view_drift) after applying 0" in text
    assert "error    Stops at: event #9 (line 10) persona.entry_updated: view_drift:" in text
    assert "it leaves 1 event unapplied" in text
    _assert_actors_apart(window)
    # ours, in the guarded bar: our replay holds only that entry
    assert "holds persona prom_ref_77aa88bb99cc00dd at event #9 (view_drift); other entries replay" in (
        window.sentinel_bar.label.text()
    )
    tl = window.session.timeline()
    assert tl.server_stop_ref() == 9
    assert window.select_ref(9)
    view = window.timeline
    rect = view.server_stop_rect()
    assert rect is not None and rect.top() == view.rowViewportPosition(view.timeline_model().position_of(9))
    detail = window.detail.event_detail
    assert "Memory server's next start:" in detail.server_note.text()
    assert "stops here too (persona.entry_updated: view_drift)" in detail.server_note.text()
    assert "Why blocked</b> (our guarded replay, memory-inspector)" in detail.reason.text()
    layout = detail.layout()
    assert layout.indexOf(detail.server_note) < layout.indexOf(detail.reason)
    assert not any(tl.server_only(i) for i in range(len(tl.events)))
    assert SERVER_STOP_TAG.startswith("■")


def test_a_shard_basename_leading_outside_is_an_error(qtbot, inspector_window, root):  # noqa: F811
    built = fixtures.hostile_shard_basename(root)
    docs = root.parent
    before = tree_hashes(docs)
    window = _open(qtbot, inspector_window, root / built.name)
    panel = window.server_panel
    outside = [ln for ln in panel.content.lines if "OUTSIDE the character folder" in ln.text]
    assert len(outside) == 1 and outside[0].severity == "error" and outside[0].label == "Writes"
    assert outside[0].text.endswith("escaped.json — OUTSIDE the character folder")
    assert "writes outside the folder" in panel.content.summary
    assert "Changes: reflections.json ref_4d5e6f708192a3b4: removed from the view" in panel.plain_text()
    # the server applies the archive event that our guarded replay refuses (bad_shard_name)
    tl = window.session.timeline()
    assert tl.diagnosis.blocked is not None and tl.diagnosis.blocked.reason == "bad_shard_name"
    assert tl.server_only(tl.diagnosis.blocked.index)
    row = _row(window, built.name)
    assert row.server["error"] >= 1 and row.server_chip() == (f"server: {row.server['error']} error", "blocked")
    window.close()
    assert tree_hashes(docs) == before
    assert not (docs / "escaped.json").exists()


def test_a_corrupt_persona_is_replaced_before_its_pending_event(qtbot, inspector_window, root):  # noqa: F811
    built = fixtures.pending_tail(root)
    (built.path / PERSONA).write_bytes(b'{"master": {"facts": [')
    before = tree_hashes(root)
    window = _open(qtbot, inspector_window, root / built.name)
    content = window.server_panel.content
    assert content.summary.startswith("The memory server's next start replaces persona.json with a fresh persona")
    persona = next(ln for ln in content.lines if ln.label == "Persona ensure")
    assert persona.severity == "error" and persona.text.startswith("replace: persona.json is unusable")
    assert content.lines.index(persona) == 0  # persona ensure runs before the replay
    assert content.severity == "error"
    assert "server.persona_replaced" not in window.server_panel.plain_text()  # said once, by its own line
    _assert_actors_apart(window)
    window.close()
    assert tree_hashes(root) == before


def test_a_character_not_in_characters_json_is_not_reconciled(qtbot, inspector_window, root):  # noqa: F811
    built = fixtures.pending_tail(root)
    fixtures.healthy(root)
    config = root.parent / "config"
    config.mkdir()
    (config / "characters.json").write_text(json.dumps({"猫娘": {"healthy": {}}}), encoding="utf-8")
    window = _open(qtbot, inspector_window, root, built.name)
    content = window.server_panel.content
    assert "does not reconcile this character" in content.summary
    line = next(ln for ln in content.lines if ln.label == "Reconciled")
    assert line.text.startswith("not reconciled (not in characters.json")
    assert not any(ln.label in ("Replay", "Changes") for ln in content.lines)
    window.characters.select_name("healthy")
    qtbot.waitUntil(lambda: window.session.current == "healthy", timeout=WAIT_MS)
    assert "Reconciled: yes (listed in" in window.server_panel.plain_text()


def test_the_panel_is_selectable_and_copyable(qtbot, inspector_window, root):  # noqa: F811
    built = fixtures.persona_drift(root)
    window = _open(qtbot, inspector_window, root / built.name)
    panel = window.server_panel
    body = panel.body
    flags = body.textInteractionFlags()
    assert flags & Qt.TextInteractionFlag.TextSelectableByKeyboard
    assert flags & Qt.TextInteractionFlag.TextSelectableByMouse
    assert body.isReadOnly() and body.focusPolicy() == Qt.FocusPolicy.StrongFocus
    assert body.accessibleName() == TITLE
    clipboard = QGuiApplication.clipboard()
    clipboard.clear()
    with qtbot.waitSignal(panel.copied, timeout=WAIT_MS):
        qtbot.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    assert clipboard.text() == panel.plain_text()
    assert window.statusBar().currentMessage() == "Copied the memory server's next start."
    clipboard.clear()
    body.setFocus()
    qtbot.waitUntil(body.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(body, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(body, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "stops at #9 (view_drift)" in clipboard.text(), timeout=WAIT_MS)


def test_a_live_rediagnosis_carries_a_fresh_prediction(qtbot, inspector_window, root):  # noqa: F811
    built = fixtures.glued_torn_line(root)
    window = _open(qtbot, inspector_window, root / built.name)
    tl = window.session.timeline()
    before = tl.server_start
    assert before is not None and before.sentinel.state == "unknown_id"
    delta = DiagnosisDelta.of(diagnose_character(str(built.path)), len(tl.events) - 1)
    assert delta.server_start is not None
    with qtbot.waitSignal(window.session.states_recomputed, timeout=WAIT_MS):
        window.session.rediagnosis.finished(window.session.generation, built.name, delta, 0.01)
    assert tl.server_start is delta.server_start
    assert "from the start of the journal" in window.server_panel.plain_text()



def test_the_wedge_shows_as_our_replays_error_beside_the_servers_stop(qtbot, inspector_window, root):  # noqa: F811
    built = fixtures.wedged_merge(root)
    window = _open(qtbot, inspector_window, root / built.name)
    findings = window.session.findings_model
    rows = {findings.index(r, 1).data(): findings.index(r, 0).data() for r in range(findings.rowCount())}
    assert rows.get("replay.held") == "error"  # ours: the wedge, with the entry held and since when
    assert rows.get("server.replay_stops") == "error"  # the server's: its start stops there for good
    held = next(f for f in window.session.timeline().diagnosis.findings if f.code == "replay.held")
    assert held.advice is not None and held.advice.event_id == built.ids["wedge"] and "ts " in held.message
    # the window words the advice as its own action and keys, never as command-line flags
    message = next(
        findings.index(r, 2).data() for r in range(findings.rowCount()) if findings.index(r, 1).data() == "replay.held"
    )
    assert f"Tools ▸ Replay… (Ctrl+Shift+P), scope “Park held event” (Alt+P) with event {built.ids['wedge']}" in message
    assert "--park" not in message
    replay_keys = [k.toString() for k in window.context.replay.replay_action.shortcuts()]
    assert replay_keys == ["Ctrl+Shift+P"]
    # our bar names the entry it holds; the server's panel says where the server stops
    assert "holds persona" in _guarded_text(window) and "other entries replay" in _guarded_text(window)
    assert "Stops at: event #9" in window.server_panel.plain_text()
    assert row_health(_row(window, built.name)) == "blocked"
