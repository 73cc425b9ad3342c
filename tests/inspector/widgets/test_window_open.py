"""Opening: folders, zip exports, drag and drop, recent locations, the sample, unreadable input,
cancelling a load; ``--screenshot`` offscreen and on a real X server."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from inspector.controllers.context import replay_target
from inspector.core import location as location_mod
from journal.diagnosis import diagnose_path
from tests.inspector.widgets.folders_for_gui import two_characters
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
)

pytestmark = pytest.mark.gui

REPO = Path(__file__).resolve().parents[3]


def test_unreadable_input_says_why_and_the_window_stays_usable(qtbot, inspector_window, tmp_path):  # noqa: F811
    window = inspector_window
    window.session.open_path(tmp_path / "missing")
    assert window.prompter.errors[-1][0] == "Cannot open"
    assert "no such file or folder" in window.prompter.errors[-1][1]
    (tmp_path / "notes.txt").write_text("not a memory folder")
    window.session.open_path(tmp_path / "notes.txt")
    assert "neither a folder nor a .zip export" in window.prompter.errors[-1][1]
    root = two_characters(tmp_path / "memory")
    open_and_wait(qtbot, window, root)
    assert window.session.timeline_model.rowCount() == 32
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 truncated zip")
    window.session.open_path(tmp_path / "bad.zip")
    assert "neither a folder nor a .zip export" in window.prompter.errors[-1][1]
    assert window.session.timeline_model.rowCount() == 32  # what was shown stays shown


def test_a_failing_diagnosis_keeps_the_previous_folder(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    def diagnose(path, progress=None):
        if path.endswith("broken"):
            raise PermissionError(13, "Permission denied", path)
        return diagnose_path(path, progress=progress)

    window = make_inspector_window(diagnose=diagnose)
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    (tmp_path / "broken").mkdir()
    with qtbot.waitSignal(window.session.load_failed, timeout=WAIT_MS):
        window.session.open_path(tmp_path / "broken")
    assert "Permission denied" in window.prompter.errors[-1][1]
    assert window.session.current == "alice" and window.session.timeline_model.rowCount() == 32
    assert "memory" in window.windowTitle()


def test_cancel_a_load_keeps_what_was_shown(qtbot, make_inspector_window, tmp_path):  # noqa: F811
    gate = threading.Event()

    def diagnose(path, progress=None):
        if path.endswith("slow"):
            gate.wait(WAIT_MS / 1000)
        return diagnose_path(path, progress=progress)

    window = make_inspector_window(diagnose=diagnose)
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    two_characters(tmp_path / "slow", applied=3)
    window.session.open_path(tmp_path / "slow")
    assert window.cancel_button.isVisibleTo(window)
    with qtbot.waitSignal(window.session.load_cancelled, timeout=WAIT_MS):
        window.cancel_button.click()
    gate.set()
    qtbot.waitUntil(lambda: not window.session.busy, timeout=WAIT_MS)
    assert window.session.timeline_model.rowCount() == 32
    assert window.session.location.path.name == "memory"
    assert not window.cancel_button.isVisibleTo(window)


def test_zip_export_opens_read_only_and_is_not_watched(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for p in root.rglob("*"):
            if p.is_file():
                zf.write(p, p.relative_to(root).as_posix())
    open_and_wait(qtbot, inspector_window, archive)
    assert "zip export, read-only" in inspector_window.windowTitle()
    assert inspector_window.session.watch_status.mode == "off"
    assert "zip" in inspector_window.status_watch.text()
    extracted = Path(inspector_window.session.folder.diagnosis.root)
    assert extracted.is_dir() and not str(extracted).startswith(str(tmp_path))
    inspector_window.close()
    assert not extracted.exists()  # the private copy goes with the window


def _drag_enter(mime: QMimeData) -> QDragEnterEvent:
    """A drag-enter event at (10, 10): PySide6 6.12 takes a QPointF (its QPoint overload is
    deprecated), earlier bindings take only a QPoint."""
    rest = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    try:
        return QDragEnterEvent(QPointF(10, 10), *rest)
    except TypeError:
        return QDragEnterEvent(QPoint(10, 10), *rest)


def test_drag_and_drop_a_folder(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(root))])
    enter = _drag_enter(mime)
    inspector_window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    with qtbot.waitSignal(inspector_window.session.loaded, timeout=WAIT_MS):
        inspector_window.dropEvent(drop)
    assert inspector_window.session.location.path == root
    text = QMimeData()
    text.setText("hello")
    refused = _drag_enter(text)
    inspector_window.dragEnterEvent(refused)
    assert not refused.isAccepted()


def test_file_menu_open_folder_and_recent_locations(qtbot, inspector_window, tmp_path):  # noqa: F811
    window = inspector_window
    a = two_characters(tmp_path / "a")
    b = two_characters(tmp_path / "b")
    window.prompter.folder = str(a)
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        window.window_actions.open_folder_action.trigger()
    assert window.window_actions.open_folder_action.shortcut().toString() == "Ctrl+O"
    open_and_wait(qtbot, window, b)
    assert [act.text() for act in window.recent_menu.actions()] == [str(b), str(a)]
    assert replay_target(window.session) == (str(b), "alice")  # what Tools ▸ Replay… acts on
    assert [act.text() for act in window.window_actions.tools_menu.actions()] == ["Replay…", "Restore backup…"]
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        window.recent_menu.actions()[1].trigger()
    assert window.session.location.path == a
    assert (tmp_path / "config" / "recent.json").is_file()


def test_the_sample_opens_from_a_scratch_copy(qtbot, inspector_window, tmp_path, monkeypatch):  # noqa: F811
    bundled = two_characters(tmp_path / "bundled")
    monkeypatch.setattr(location_mod, "sample_source", lambda: bundled)
    with qtbot.waitSignal(inspector_window.session.loaded, timeout=WAIT_MS):
        assert inspector_window.session.open_sample()
    assert "bundled sample" in inspector_window.windowTitle()
    scratch = inspector_window.session.location.path
    assert scratch != bundled and not str(scratch).startswith(str(bundled))
    inspector_window.close()
    assert not scratch.exists()


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def _run_cli(args, env_extra, tmp_path):
    env = {**os.environ, "MEMORY_INSPECTOR_CONFIG_DIR": str(tmp_path / "cfg"), **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_screenshot_offscreen_with_redaction(tmp_path):
    root = two_characters(tmp_path / "memory")
    out = tmp_path / "shot.png"
    done = _run_cli(["--screenshot", str(out), "--redact", str(root)], {"QT_QPA_PLATFORM": "offscreen"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "platform offscreen" in done.stdout
    assert "propagateSizeHints" not in done.stderr  # Qt platform noise is not shown to the user
    width, height = _png_size(out)
    # the first open takes at most 90 % of the screen (issue 27 item 3), offscreen's too
    assert 640 <= width <= 1440 and 420 <= height <= 880
    bad = _run_cli(
        ["--screenshot", str(tmp_path / "x.png"), str(tmp_path / "nope")], {"QT_QPA_PLATFORM": "offscreen"}, tmp_path
    )
    assert bad.returncode == 2 and "no such file or folder" in bad.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed (.ci/run installs it)")
def test_real_window_under_xvfb(tmp_path):
    """Starts Xvfb on a free display, then the app with the xcb platform, and checks its screenshot."""
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as pipe:
            display = pipe.readline().strip()  # Xvfb writes its display number once it accepts clients
        assert display.isdigit(), "Xvfb did not start"
        root = two_characters(tmp_path / "memory")
        out = tmp_path / "xcb.png"
        env = {"QT_QPA_PLATFORM": "xcb", "DISPLAY": f":{display}"}
        done = _run_cli(["--screenshot", str(out), str(root)], env, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "platform xcb" in done.stdout
        assert "propagateSizeHints" not in done.stderr
        width, height = _png_size(out)
        assert width >= 1000 and height >= 600
    finally:
        xvfb.terminate()
        xvfb.wait(10)


def test_redaction_shows_in_the_title_and_the_status_bar(qtbot, inspector_window, tmp_path):  # noqa: F811
    root = two_characters(tmp_path / "memory")
    open_and_wait(qtbot, inspector_window, root)
    plain = inspector_window.windowTitle()
    assert "(redacted)" not in plain and inspector_window.status_redacted.isHidden()
    inspector_window.window_actions.redact_action.trigger()
    assert inspector_window.windowTitle() == f"{plain} (redacted)"
    assert not inspector_window.status_redacted.isHidden()
    inspector_window.window_actions.redact_action.trigger()
    assert inspector_window.windowTitle() == plain and inspector_window.status_redacted.isHidden()


def test_with_nothing_open_the_window_says_what_to_do(qtbot, inspector_window, tmp_path):  # noqa: F811
    from PySide6.QtGui import QImage

    from inspector.widgets.main_window import NOTHING_OPEN

    window = inspector_window
    window.show()
    qtbot.waitExposed(window)
    assert "Open a memory root" in NOTHING_OPEN and "bundled sample" in NOTHING_OPEN
    assert window.server_panel.plain_text().endswith(NOTHING_OPEN)

    def drawn_in_the_middle() -> bool:
        image = window.timeline.viewport().grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
        background = image.pixelColor(2, 2)
        middle = image.height() // 2
        return any(
            image.pixelColor(x, y) != background for y in range(middle - 20, middle + 20) for x in range(image.width())
        )

    assert drawn_in_the_middle()  # the empty timeline shows the same hint
    open_and_wait(qtbot, window, two_characters(tmp_path / "memory"))
    assert not window.server_panel.plain_text().endswith(NOTHING_OPEN)
