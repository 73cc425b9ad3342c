"""The window under test: built by the real composition root with a headless prompter."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from inspector.app import build_window
from inspector.core.prompter import HeadlessPrompter
from inspector.widgets.main_window import MainWindow

#: Loads and live updates of small test folders take milliseconds; this bounds a broken one.
WAIT_MS = 20_000

#: The size windows under test have unless a test says otherwise: the offscreen screen is smaller,
#: and a window opens at 90 % of it at most (issue 27 item 3).
TEST_SIZE = (1440, 880)


@pytest.fixture
def make_inspector_window(qtbot, tmp_path):
    """``make_window(size=TEST_SIZE, **build_window kwargs) -> MainWindow``; every window is closed
    after the test."""
    windows: list[MainWindow] = []

    def make(*, size: tuple[int, int] | None = TEST_SIZE, **kwargs) -> MainWindow:
        kwargs.setdefault("prompter", HeadlessPrompter())
        kwargs.setdefault("config_dir", tmp_path / "config")
        window = build_window(**kwargs)
        if size is not None:  # None: the size the window opens at by itself (the screen decides)
            window.resize(*size)
        qtbot.addWidget(window)
        windows.append(window)
        return window

    yield make
    for w in windows:
        w.close()  # stops the watcher and joins every job (the leak check runs after this)


@pytest.fixture
def inspector_window(make_inspector_window):
    return make_inspector_window()


def open_and_wait(qtbot, window: MainWindow, path: str | os.PathLike[str]) -> None:
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_path(path)


def tree_hashes(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path → sha256), folders included as entries."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root) + "/"] = "dir"
        for f in filenames:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out
