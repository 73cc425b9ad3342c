"""The one renderer of the memory server's next start (issue 25): ``check``'s text and the window's
panel are the same lines, told their surface; only what a person can do is worded per surface."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from inspector.core.advice import REPLAY_SHORTCUT, SCOPE_LABELS, advice_text, finding_text, mnemonic_key
from inspector.core.check_report import write_human
from inspector.core.server_start_text import CHANGES_SHOWN, ServerLine, describe_server_start, for_character
from inspector.core.text import one_line
from journal.diagnosis import diagnose_character, diagnose_path
from journal.diagnosis.values import EntryChange, ServerStart
from journal.finding import ADVICE_ACTIONS, Advice, Finding
from journal.fixtures import CASES

#: The labels of the lines whose words depend on the surface.
_PER_SURFACE = {"Instead", "Finding"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_and_the_window_say_the_same_lines_of_every_case(tmp_path: Path, case: str) -> None:
    built = CASES[case](tmp_path)
    c = diagnose_character(built.path)
    assert c.server_start is not None
    cli, window = for_character(c, "cli"), for_character(c, "window")
    assert (cli.summary, cli.severity) == (window.summary, window.severity)
    same = [ln for ln in window.lines if ln.label not in _PER_SURFACE]
    assert [ln for ln in cli.lines if ln.label not in _PER_SURFACE] == same
    # check prints exactly the renderer's lines for the command line, under the character's name
    out = io.StringIO()
    write_human(diagnose_path(str(built.path)), out)
    printed = out.getvalue().splitlines()
    for line in cli.plain(indent="  "):
        assert f"  {one_line(line)}" in printed


def test_the_window_lists_the_other_server_findings_and_check_lists_them_under_its_findings() -> None:
    f = Finding("server.full_replay", "warning", "it replays the whole journal")
    start = ServerStart(reconciled=True, characters_file="characters.json")
    window = describe_server_start(start, [f], surface="window")
    cli = describe_server_start(start, [f], surface="cli")
    assert ServerLine("warning", "Finding", "server.full_replay: it replays the whole journal") in window.lines
    assert all(ln.label != "Finding" for ln in cli.lines)
    assert cli.severity == window.severity == "warning"


def test_one_limit_of_changes_on_every_surface() -> None:
    changes = [EntryChange("reflections.json", f"ref_{i}", (("reinforcement", i, i + 1),)) for i in range(25)]
    start = ServerStart(reconciled=True, characters_file="c.json", changes=changes, changes_total=25, replays=25)
    for surface in ("cli", "window"):
        text = describe_server_start(start, [], surface=surface)  # type: ignore[arg-type]
        listed = [ln for ln in text.lines if ln.label == "Changes"]
        assert len(listed) == CHANGES_SHOWN + 1 and listed[-1].text == "… and 5 more entries"
        assert listed[0].text == "reflections.json ref_0: reinforcement 0 → 1"


def test_text_values_of_a_change_are_never_shown() -> None:
    change = EntryChange("persona.json", "master/p_1", (("text", "a secret", "another"), ("weight", 1, 2)))
    start = ServerStart(reconciled=True, characters_file="c.json", changes=[change], changes_total=1, replays=1)
    text = "\n".join(describe_server_start(start, [], surface="cli").plain())
    assert "secret" not in text and "another" not in text and "text changed, weight 1 → 2" in text


@pytest.mark.parametrize("action", ADVICE_ACTIONS)
def test_advice_is_flags_on_the_command_line_and_actions_with_keys_in_the_window(action: str) -> None:
    event = "e 1" if action == "park" else None
    advice = Advice(action, "Jane Doe", event)
    cli = advice_text(advice, "cli")
    assert cli.startswith("memory-inspector replay PATH --character 'Jane Doe' --")
    assert ("'e 1'" in cli) == (event is not None)  # a name with spaces stays one shell word
    window = advice_text(advice, "window")
    key = mnemonic_key(SCOPE_LABELS[action])
    assert key is not None and f"({REPLAY_SHORTCUT})" in window and f"({key})" in window
    assert "--" not in window and "memory-inspector" not in window


def test_mnemonic_keys_are_distinct_and_the_finding_text_adds_the_advice() -> None:
    keys = [mnemonic_key(label) for label in SCOPE_LABELS.values()]
    assert len(set(keys)) == len(keys) == len(ADVICE_ACTIONS)
    f = Finding("replay.held", "error", "held", advice=Advice("park", "x", "e1"))
    assert finding_text(f, "cli") == "held (what to do: memory-inspector replay PATH --character x --park e1)"
    assert finding_text(Finding("tail.pending", "warning", "two"), "window") == "two"
