"""A theme switch restyles every widget at once (issue 27 item 9): after View ▸ Theme ▸ Dark, a
grab of every visible pane is the same, pixel for pixel, as in a window started with the dark
theme in a new process (style-sheet colours, icons tinted at build time and highlight formats are
not in the palette, so comparing palettes would not see them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from journal import fixtures as folders
from tests.inspector.widgets.theme_grabs import sheet_names

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[3]


def _grabs(mode: str, folder: Path, out: Path) -> dict[str, QImage]:
    out.mkdir(parents=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("MEMORY_INSPECTOR_THEME", None)
    done = subprocess.run(
        [sys.executable, "-m", "tests.inspector.widgets.theme_grabs", mode, str(folder), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return {p.stem: QImage(str(p)) for p in out.glob("*.png")}


def _differing(a: QImage, b: QImage) -> int:
    """How many pixels differ (every pixel when the sizes do)."""
    if a.size() != b.size():
        return max(a.width() * a.height(), b.width() * b.height())
    a = a.convertToFormat(QImage.Format.Format_RGB32)
    b = b.convertToFormat(QImage.Format.Format_RGB32)
    pa, pb = bytes(a.constBits()), bytes(b.constBits())
    return sum(1 for i in range(0, len(pa), 4) if pa[i : i + 4] != pb[i : i + 4])


def test_a_runtime_switch_to_dark_looks_like_a_start_in_dark(qapp, tmp_path):
    built = folders.legacy_type_blocked(tmp_path / "memory")
    (built.path / "facts.json").write_text('{"facts": [', encoding="utf-8")  # the views tab's error shows
    started = _grabs("start", built.path, tmp_path / "start")
    switched = _grabs("switch", built.path, tmp_path / "switch")
    assert set(started) == set(switched) and {"characters", "server_panel", "event_tab", "toolbar"} <= set(started)
    # every widget the style sheet names is there and grabbed (a rule naming none is a dead rule),
    # and looks the same at a start as after a switch (a name set late kept the toolbar's rule off)
    assert {f"named-{name}" for name in sheet_names()} <= set(started), sorted(started)
    differing = {name: _differing(started[name], switched[name]) for name in started}
    assert differing == dict.fromkeys(started, 0)
