"""Every dialog fits the screen it opens on, its buttons always on it and its texts readable whole
(wrapped, or in a box that scrolls); long event labels elide in the middle with the whole text on
hover (issue 27 item 1, and the Replay dialog's result page after it).

Each screen size runs in a child process on Qt's offscreen platform configured to that screen
(``offscreen:configfile=``), styled as the application is (:func:`inspector.app.make_application`):
the suite's own application has one screen, of Qt's default size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.widgets.screen_fit import SCREEN_SHARE

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[3]

#: Every dialog the probe shows (a missing one would pass unmeasured).
DIALOGS = {
    "replay plan", "replay park plan", "replay result", "restore", "support bundle", "shortcuts",
    "about", "tour", "go to event", "compare", "question",
}


def _probe(tmp_path: Path, width: int, height: int, probe: str = "_dialog_fit_probe") -> list[dict]:
    """Run ``tests.inspector.widgets.<probe>`` on a ``width``×``height`` offscreen screen; its JSON."""
    screen = {"name": "probe", "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96, "dpr": 1}
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
    env = dict(os.environ)
    env.update(
        QT_QPA_PLATFORM=f"offscreen:configfile={config}",
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        NEKO_RUNTIME_STATE_DIR=str(tmp_path / "runtime"),
    )
    done = subprocess.run(
        [sys.executable, "-m", f"tests.inspector.widgets.{probe}", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """The probe's answer for a screen size, one child process per size for the whole module."""
    shown: dict[tuple[int, int], list[dict]] = {}

    def answer(width: int, height: int) -> list[dict]:
        if (width, height) not in shown:
            shown[width, height] = _probe(tmp_path_factory.mktemp(f"screen{width}x{height}"), width, height)
        return shown[width, height]

    return answer


def _inside(inner: list[int], outer: list[int]) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh


@pytest.mark.parametrize(("width", "height"), [(900, 600), (1366, 768)])
def test_every_dialog_and_its_buttons_fit_the_screen(probe, width, height):
    shown = probe(width, height)
    assert {d["name"] for d in shown} == DIALOGS
    for d in shown:
        name, frame, avail = d["name"], d["frame"], d["available"]
        assert avail == [0, 0, width, height]
        assert frame[2] <= avail[2] * SCREEN_SHARE and frame[3] <= avail[3] * SCREEN_SHARE, (name, frame)
        assert _inside(frame, avail), (name, frame)
        for text, rect in d["buttons"].items():
            assert rect[2] > 0 and rect[3] > 0, (name, text)
            assert _inside(rect, frame), (name, text, rect, frame)
        # every text can be read whole: inside the dialog, a wrapped label as tall as its text,
        # a text box whole or scrolling (the result page's "blocked at" box was cut at 540 px)
        for t in d["texts"]:
            assert t["inside"] and t["whole"], (name, t)
    result = next(d for d in shown if d["name"] == "replay result")
    assert any(t["text"].startswith("Blocked at event") for t in result["texts"]), result["texts"]  # a blocked run
    assert "Close" in result["buttons"]
    # the Replay dialog's buttons are all there: the scopes, and the one that applies
    plan = next(d for d in shown if d["name"] == "replay park plan")
    for text in ("Back up and apply", "Cancel", "Pending tail", "Up to event:"):
        assert text in plan["buttons"], sorted(plan["buttons"])
    assert any(t.startswith("Repair orphaned") for t in plan["buttons"])
    assert any(t.startswith("Park") for t in plan["buttons"])


def test_long_event_labels_elide_in_the_middle_with_the_whole_text_on_hover(probe):
    shown = probe(900, 600)
    plan = next(d for d in shown if d["name"] == "replay park plan")
    labels = [c for c in plan["combos"] if c["text"]]
    assert labels, plan["combos"]
    elided = [c for c in labels if c["shown"] != c["text"]]
    assert elided, labels  # a UUID label does not fit a combo of a 900 px screen's dialog
    for c in elided:
        head, sep, tail = c["shown"].partition("…")
        assert sep and head and tail, c  # cut in the middle: both ends kept
        assert c["text"].startswith(head) and c["text"].endswith(tail)
        assert c["tooltip"] == c["text"]
