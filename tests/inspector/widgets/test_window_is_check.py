"""The window shows the diagnosis, and computes no verdict (issue 23).

For every case of the shared fixture builder, a folder with a truncated ``reflections.json`` and
the bundled sample, the window is read back through its own widgets and models and compared with
what ``check --json`` prints: no ``healthy`` beside a warning or an error, every "N <state>" it
shows is ``check``'s count, the timeline's rows per state are those counts, the Findings tab counts
``check``'s findings. The same after a view is corrupted, rows are appended and the sentinel moves
while the window is open, once the re-diagnosis has been merged; until then, what changed reads
"not yet checked" and is counted nowhere.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.timeline import UNCHECKED
from inspector.models.characters_model import BADGE_ROLE, HEALTH_COLOUR, HEALTH_ROLE
from inspector.models.timeline_model import COL_STATE, STATE_ROLE
from inspector.widgets.characters import chip_items, row_health
from journal import EventLog
from journal import fixtures as folders
from journal.diagnosis import EVENT_STATES
from journal.events import JOURNAL_NAME, SENTINEL_NAME
from journal.views import REFLECTIONS, write_sentinel
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
)
from tests.journal.test_server_model import twice_merged

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("replay_env")]

#: "N <state>" as the window writes it, and the ``counts`` key of each state word.
COUNTED = re.compile(r"(?<![\w#.])(\d[\d,]*) (applied|pending|blocked|orphaned|suspect|damaged)\b")
COUNT_KEY = {**{s: s for s in EVENT_STATES}, "damaged": "defects"}
COUNT_KEY_STATE = {key: state for state, key in COUNT_KEY.items()}
RANK = ("none", "info", "warning", "error")


def check_json(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, dict[str, Any]]:
    """``memory-inspector check PATH --json``, run in-process: its characters by name."""
    capsys.readouterr()
    main(["check", str(path), "--json"])
    out, _err = capsys.readouterr()
    return {c["name"]: c for c in json.loads(out)["characters"]}


def severity_of(doc: dict[str, Any]) -> str:
    """The highest severity among ``check``'s findings of one character (``none``: no finding)."""
    return max((f["severity"] for f in doc["findings"]), key=RANK.index, default="none")


def shown_texts(window: Any, name: str) -> dict[str, str]:
    """Everything the window says about the character shown, in words, where it says it."""
    model = window.session.characters_model
    row = model.rows()[model.row_of(name)]
    window.statusBar().clearMessage()
    window.navigation.goto_problem(1)  # the status bar speaks only when no row is a problem
    return {
        "chips": " | ".join(t for t, _ in chip_items(row)),
        "badge": model.index(model.row_of(name), 0).data(BADGE_ROLE),
        "tooltip": window.characters.describe(name),
        "guarded bar": window.sentinel_bar.label.text(),
        "sentinel tag": " | ".join(t.label for t in window.timeline.tags()),
        "status bar": window.statusBar().currentMessage(),
    }


def assert_window_is_check(window: Any, expected: dict[str, dict[str, Any]]) -> None:
    session = window.session
    assert sorted(r.name for r in session.characters_model.rows()) == sorted(expected)
    for name, doc in expected.items():
        window.characters.select_name(name)
        assert session.current == name
        counts = doc["counts"]
        health = severity_of(doc)
        model = session.characters_model
        row = model.rows()[model.row_of(name)]
        assert not row.unchecked and not session.timeline(name).unchecked, name
        # the health is the diagnosis's: the list's dot and role, and "healthy" only where check allows it
        assert model.index(model.row_of(name), 0).data(HEALTH_ROLE) == health, name
        assert row_health(row) == HEALTH_COLOUR[health], name
        texts = shown_texts(window, name)
        if health in ("warning", "error"):
            for where, text in texts.items():
                assert "healthy" not in text.lower(), (name, where, text)
        # every "N <state>" the window shows is check's count of that state
        for where, text in texts.items():
            for n, word in COUNTED.findall(text):
                assert int(n.replace(",", "")) == counts[COUNT_KEY[word]], (name, where, text, counts)
        bar = texts["guarded bar"]
        assert f"{counts['applied']:,} applied" in bar and f"{counts['pending']:,} pending" in bar, (name, bar)
        # the timeline's rows per state are those counts (an unknown type is an event, not a damaged line)
        timeline = session.timeline_model
        states = Counter(timeline.index(p, COL_STATE).data(STATE_ROLE) for p in range(timeline.rowCount()))
        assert states == Counter({COUNT_KEY_STATE[k]: v for k, v in counts.items() if v}), (name, states, counts)
        # the Findings tab counts check's findings
        n = len(doc["findings"])
        assert session.findings_model.rowCount() == n, name
        assert window.detail.tabText(2) == (f"Findings ({n})" if n else "Findings"), name


@pytest.fixture
def every_case(tmp_path: Path) -> Path:
    """Every case of the fixture builder in one memory root, plus the folders of issue 23's items:
    a healthy one whose view is truncated (1), a sentinel naming an event glued onto a torn
    fragment (3), and a FIFO where the sentinel should be (4)."""
    root = tmp_path / "memory"
    root.mkdir()
    for build in folders.CASES.values():
        build(root)
    corrupt = folders.healthy(root, "corrupt-view")
    view = corrupt.path / REFLECTIONS
    view.write_bytes(view.read_bytes()[: len(view.read_bytes()) // 2])
    twice_merged(root, "glued-sentinel", glued=True)
    if hasattr(os, "mkfifo"):
        fifo = folders.pending_tail(root, "fifo-sentinel").path / SENTINEL_NAME
        fifo.unlink()
        os.mkfifo(fifo)
    return root


def _merged(qtbot: Any, window: Any, name: str) -> None:
    """Wait until a re-diagnosis of ``name`` that saw every change so far is merged."""
    qtbot.waitUntil(lambda: not window.session.timeline(name).unchecked, timeout=WAIT_MS)


def test_every_case_reads_as_check_says_also_after_a_view_is_corrupted_live(
    qtbot, capsys, inspector_window, every_case  # noqa: F811
):
    window = inspector_window
    open_and_wait(qtbot, window, every_case)
    expected = check_json(capsys, every_case)
    assert severity_of(expected["corrupt-view"]) == "error"  # view.corrupt, as issue 23 found it
    assert severity_of(expected["outbox-backlog"]) == "warning"  # outbox.dead_letter
    assert severity_of(expected["glued-sentinel"]) == "error"  # server.sentinel_unseen
    assert_window_is_check(window, expected)

    # corrupted while the window is open: once the re-diagnosis is merged the window is check again
    view = every_case / "healthy" / REFLECTIONS
    window.characters.select_name("healthy")
    with qtbot.waitSignal(
        window.session.states_recomputed, timeout=WAIT_MS, check_params_cb=lambda name: name == "healthy"
    ):
        view.write_bytes(view.read_bytes()[:40])
    _merged(qtbot, window, "healthy")
    expected = check_json(capsys, every_case)
    assert severity_of(expected["healthy"]) == "error"
    assert_window_is_check(window, expected)


def test_the_bundled_sample_reads_as_check_says(qtbot, capsys, inspector_window):  # noqa: F811
    window = inspector_window
    with qtbot.waitSignal(window.session.loaded, timeout=WAIT_MS):
        assert window.session.open_sample()
    expected = check_json(capsys, window.session.location.path)  # the scratch copy the window opened
    assert sorted(expected) == sorted(folders.SAMPLE_CASES)
    wedged = expected["wedged-merge"]["counts"]
    assert (wedged["pending"], wedged["blocked"]) == (1, 1)  # issue 23: the window said "2 pending"
    assert_window_is_check(window, expected)


def test_live_rows_are_not_yet_checked_until_the_rediagnosis(qtbot, capsys, inspector_window, tmp_path):  # noqa: F811
    root = tmp_path / "memory"
    built = folders.pending_tail(root)
    name = built.name
    window = inspector_window
    open_and_wait(qtbot, window, root)
    before = check_json(capsys, root)
    assert_window_is_check(window, before)
    session, model = window.session, window.session.timeline_model
    rows = model.rowCount()

    # appended rows: no state, counted nowhere, until the re-diagnosis
    log = EventLog(root)
    with qtbot.waitSignal(model.rowsInserted, timeout=WAIT_MS):
        log.append(name, "reflection.evidence_updated", {"reflection_id": "ref_0000000000000001", "reinforcement": 2.0})
    assert model.index(rows, COL_STATE).data(STATE_ROLE) == UNCHECKED
    assert model.index(rows, COL_STATE).data() == UNCHECKED
    assert session.timeline(name).counts == before[name]["counts"]  # the diagnosis's, as it made them
    texts = shown_texts(window, name)
    assert UNCHECKED in texts["chips"] and UNCHECKED in texts["guarded bar"]
    for where, text in texts.items():
        for n, word in COUNTED.findall(text):
            assert int(n.replace(",", "")) == before[name]["counts"][COUNT_KEY[word]], (where, text)
    _merged(qtbot, window, name)
    after = check_json(capsys, root)
    assert after[name]["counts"]["pending"] == before[name]["counts"]["pending"] + 1
    assert_window_is_check(window, after)

    # a moved sentinel: the rows it can change wait for the re-diagnosis too; no state is worked out
    tl = session.timeline(name)
    old = tl.sentinel.index
    write_sentinel(built.path, tl.events.event_id(len(tl.events) - 1))
    qtbot.waitUntil(lambda: model.index(model.rowCount() - 1, COL_STATE).data(STATE_ROLE) == UNCHECKED, timeout=WAIT_MS)
    assert tl.sentinel.index == old  # the marker stays where the diagnosis found the sentinel
    assert [model.index(p, COL_STATE).data(STATE_ROLE) for p in range(old + 1)] == ["applied"] * (old + 1)
    _merged(qtbot, window, name)
    moved = check_json(capsys, root)
    assert moved[name]["sentinel"]["index"] == rows
    assert_window_is_check(window, moved)
    assert (built.path / JOURNAL_NAME).exists()
