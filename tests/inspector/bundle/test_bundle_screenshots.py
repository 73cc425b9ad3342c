"""``memory-inspector bundle --screenshots``: one window screenshot per character, its most telling
row selected, rendered with redaction on (unless ``--no-redact``).

Pixels cannot prove that no secret text shows, so the proof is on what was rendered: the window was
in redacted mode at every grab, and the texts it rendered then (the timeline's cells, every label
and text box) hold none of the sample's secret strings (``secrets_of``, the bundle's own proof)."""

from __future__ import annotations

import json
import re
import shutil
import zipfile

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QLabel, QTextEdit, QWidget

from inspector.cli import main
from inspector.core.bundle import SCREENSHOT_NAME, read_secret
from inspector.core.redaction import Redactor
from inspector.widgets.main_window import MainWindow
from tests.inspector.bundle.conftest import SAMPLE, secrets_of
from tests.inspector.widgets.window_fixtures import tree_hashes

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("replay_env", "qapp")]

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def rendered_texts(window: MainWindow) -> list[str]:
    """What the window renders as text: the timeline's cells (display and tooltip), and every
    visible label and text box."""
    model = window.session.timeline_model
    out = [
        str(model.index(r, c).data(role))
        for r in range(model.rowCount())
        for c in range(model.columnCount(QModelIndex()))
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
    ]
    for w in window.findChildren(QWidget):
        if w.isVisible() and isinstance(w, QLabel):
            out.append(w.text())
        elif w.isVisible() and isinstance(w, QTextEdit):
            out.append(w.toPlainText())
    return out


@pytest.fixture
def grabs(monkeypatch):
    """Per character, what the window was when it was grabbed."""
    seen: dict[str, dict[str, object]] = {}
    real = MainWindow.grab

    def grab(self: MainWindow, *args):
        tl = self.session.timeline()
        blocked = tl.diagnosis.blocked if tl is not None else None
        seen[str(self.session.current)] = {
            "redact": self.session.redact
            and self.window_actions.redact_action.isChecked()
            and self.status_redacted.isVisible(),
            "texts": rendered_texts(self),
            "title": self.windowTitle(),
            "selected": self.selected_ref(),
            "blocked": blocked.index if blocked is not None else None,
        }
        return real(self, *args)

    monkeypatch.setattr(MainWindow, "grab", grab)
    return seen


@pytest.fixture
def sample(tmp_path):
    path = shutil.copytree(SAMPLE, tmp_path / "sample")
    before = tree_hashes(path)
    yield path
    assert tree_hashes(path) == before  # only read


def test_one_redacted_screenshot_per_character(tmp_path, sample, grabs):
    out = tmp_path / "case.zip"
    assert main(["bundle", str(sample), "-o", str(out), "--screenshots"]) == 0
    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
        shots = {n.split("/")[0]: zf.read(n) for n in names if n.endswith("/" + SCREENSHOT_NAME)}
        folders = sorted(c["folder"] for c in json.loads(zf.read("manifest.json"))["characters"])
    secret = read_secret()
    assert secret is not None
    characters = sorted(f"character-{Redactor(secret).tag(p.name)}" for p in sample.iterdir() if p.is_dir())
    assert sorted(shots) == sorted(grabs) == folders == characters  # one each, under its folder's keyed name
    assert all(png.startswith(PNG_MAGIC) and len(png) > 10_000 for png in shots.values())
    secrets = secrets_of(sample)
    assert secrets  # the proof has something to look for
    # ids built from a text hash show keyed as the bundle's files hold them, never as the original's
    hashed = {
        m.group(0)
        for p in sample.rglob("*.json")
        for m in re.finditer(r"(?:legacy_|card_|fact_\d{14}_)[0-9a-f]{8}\b", p.read_text(encoding="utf-8"))
    }
    assert hashed
    for name, seen in grabs.items():
        assert seen["redact"] is True, name
        text = "\n".join(seen["texts"])  # type: ignore[arg-type]
        assert [s for s in secrets if s in text] == [], name
        assert [i for i in hashed if i in text] == [], name
        assert str(sample) not in str(seen["title"])  # the full path never shows
        assert seen["selected"] is not None or seen["blocked"] is None, name
        if seen["blocked"] is not None:
            assert seen["selected"] == seen["blocked"], name  # the most telling row: where replay stops


def test_screenshots_follow_no_redact_and_character(tmp_path, sample, grabs):
    out = tmp_path / "plain.zip"
    argv = ["bundle", str(sample), "-o", str(out), "--screenshots", "--no-redact", "--character", "wedged-merge"]
    assert main(argv) == 0
    with zipfile.ZipFile(out) as zf:
        assert [n for n in zf.namelist() if n.endswith(SCREENSHOT_NAME)] == [f"wedged-merge/{SCREENSHOT_NAME}"]
    assert list(grabs) == ["wedged-merge"] and grabs["wedged-merge"]["redact"] is False
    text = "\n".join(grabs["wedged-merge"]["texts"])  # type: ignore[arg-type]
    assert any(s in text for s in secrets_of(sample / "wedged-merge"))  # what the redacted proof looks for shows


def test_a_path_the_window_cannot_open_writes_nothing(tmp_path, capsys):
    out = tmp_path / "case.zip"
    assert main(["bundle", str(tmp_path / "missing"), "-o", str(out), "--screenshots"]) == 2
    assert "no such file" in capsys.readouterr().err and not out.exists()
