"""``diff`` prints values by the CLI's one privacy rule, and ``--redact`` applies the window's redaction (issue 25)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from inspector.cli import main
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
