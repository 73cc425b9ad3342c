"""``diff`` prints values by the CLI's one privacy rule, and ``--redact`` applies the window's redaction (issue 25)."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

from inspector.cli import main
from inspector.core import output
from journal import fixtures
from journal.views import PERSONA


def test_a_changed_text_is_never_printed_and_redact_hides_it_in_json(tmp_path: Path, capsys) -> None:
    fixtures.healthy(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    a, b = (tmp_path / side / "healthy" for side in "ab")
    view = json.loads((b / PERSONA).read_text("utf-8"))
    section = next(iter(view))
    old = view[section]["facts"][0]["text"]
    view[section]["facts"][0]["text"] = "SECRET corrected words"
    (b / PERSONA).write_text(json.dumps(view, indent=2, ensure_ascii=False), "utf-8")

    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "SECRET" not in out and old not in out
    assert f"‹text, {len(old)} chars› → ‹text, 22 chars›" in out  # what changed and its size, never the words
    assert main(["diff", str(a), str(b), "--json"]) == 1
    assert "SECRET corrected words" in capsys.readouterr().out  # --json is the data
    assert main(["diff", str(a), str(b), "--json", "--redact"]) == 1
    out = capsys.readouterr().out
    assert "SECRET" not in out and old not in out and "‹text · 22 chars · " in out
    json.loads(out)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_diff_shows_a_meter_per_side_on_stderr_only(tmp_path, monkeypatch, capsys) -> None:
    a = fixtures.healthy(tmp_path / "a").path
    b = fixtures.healthy(tmp_path / "b").path
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(output, "METER_AFTER", 0.0)
    code = main(["diff", str(a), str(b), "--json"])
    assert code in (0, 1) and json.loads(capsys.readouterr().out)["schema"] >= 1
    shown = err.getvalue()
    assert "\rmemory-inspector diff: reading A " in shown and "\rmemory-inspector diff: reading B " in shown
    assert shown.index("reading A") < shown.index("reading B") and shown.endswith(" \r")
