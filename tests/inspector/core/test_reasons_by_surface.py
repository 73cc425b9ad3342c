"""What a person can do about a reason is worded for the surface that shows it (issue 27 item 11):
the window's detail pane and tooltips name its own actions and keys; the command line, its flags."""

from __future__ import annotations

import pytest

from inspector.core.advice import REPLAY_SHORTCUT
from inspector.core.reasons import REASONS, Do
from inspector.core.timeline import REASON_TEXT


def test_an_orphaned_archive_event_names_the_windows_repair_in_the_window() -> None:
    words = REASON_TEXT["archive_entry_lost"]
    assert f"Tools ▸ Replay… ({REPLAY_SHORTCUT}), scope “Repair orphaned archive events” (Alt+O)" in words
    assert "--repair-orphans" not in words and "by hand" not in words
    cli = " ".join(REASONS["archive_entry_lost"].actions_for("cli"))
    assert "memory-inspector replay PATH --character NAME --repair-orphans" in cli


@pytest.mark.parametrize("code", sorted(REASONS))
def test_no_reason_names_a_flag_in_the_window_or_a_key_on_the_command_line(code: str) -> None:
    text = REASONS[code]
    assert "--" not in REASON_TEXT[code] and "memory-inspector" not in REASON_TEXT[code]
    assert REASON_TEXT[code] == text.paragraph("window")
    for action in text.actions:
        if isinstance(action, Do):
            assert "Ctrl+" not in action.text("cli") and "memory-inspector replay" in action.text("cli")


def test_park_is_suggested_where_an_event_can_never_apply() -> None:
    for code in ("no_handler", "view_drift"):
        assert any("--park EVENT_ID" in a for a in REASONS[code].actions_for("cli")), code
        assert any("“Park held event” (Alt+P)" in a for a in REASONS[code].actions_for("window")), code
