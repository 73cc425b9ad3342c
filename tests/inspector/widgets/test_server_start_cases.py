"""Every case of the server model (tests/journal/test_server_model.py) as the window shows it: the
panel leads with the server's prediction for that folder, with each ``server.*`` finding, and our
guarded replay stays labelled as ours (memory-format §9)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.widgets.server_start import SUBTITLE, TITLE
from inspector.widgets.timeline_bars import GUARDED_TITLE
from journal import fixtures as folders
from journal.diagnosis import diagnose_path
from journal.diagnosis.values import is_server_start_finding, worst
from journal.events import SENTINEL_NAME
from tests.inspector.widgets.window_fixtures import (  # noqa: F401  (fixtures)
    WAIT_MS,
    inspector_window,
    make_inspector_window,
    open_and_wait,
    tree_hashes,
)
from tests.journal.test_server_model import (
    _pending_archive_named,
    _with_copy_of_line,
    correction_merge,
    twice_merged,
    write_characters,
)

pytestmark = pytest.mark.gui


def _correction(root: Path) -> str:
    b = folders.healthy(root)
    correction_merge(b.path, "Master drinks green tea every evening, and matcha on Sundays")
    return b.name


def _glued_twice_merged(root: Path) -> str:
    return str(twice_merged(root, glued=True)["path"].name)


def _missing_sentinel(root: Path) -> str:
    ids = twice_merged(root, glued=False)
    (ids["path"] / SENTINEL_NAME).unlink()
    return str(ids["path"].name)


def _corrupt_persona(root: Path) -> str:
    b = folders.pending_tail(root)
    (b.path / "persona.json").write_text("{torn", encoding="utf-8")
    return b.name


def _temp_leftovers(root: Path) -> str:
    b = folders.healthy(root)
    (b.path / ".nkatmpk3_9zq1x.tmp").write_bytes(b"")
    return b.name


def _not_listed(root: Path) -> str:
    folders.healthy(root)
    b = folders.pending_tail(root)
    write_characters(root.parent / "config" / "characters.json", ["healthy"])
    return b.name


def _duplicate(root: Path) -> str:
    b = folders.healthy(root)
    _with_copy_of_line(b, 4)
    return b.name


def _stray_view_write(root: Path) -> str:
    return _pending_archive_named(root, "../facts.json").name


CASES: dict[str, Callable[[Path], str]] = {
    "correction-merge": _correction,
    "glued-sentinel": _glued_twice_merged,
    "missing-sentinel": _missing_sentinel,
    "corrupt-persona": _corrupt_persona,
    "temp-leftovers": _temp_leftovers,
    "not-in-characters-json": _not_listed,
    "torn-tail": lambda root: folders.torn_tail(root).name,
    "paused-tail": lambda root: folders.legacy_type_blocked(root).name,
    "archive-lost": lambda root: folders.archive_entry_lost(root).name,
    "corrupt-shard": lambda root: folders.corrupt_shard(root).name,
    "hostile-basename": lambda root: folders.hostile_shard_basename(root).name,
    "stray-view-write": _stray_view_write,
    "duplicate-id": _duplicate,
    "wedged-merge": lambda root: folders.wedged_merge(root).name,
}


#: What the panel must say for each case, beside the summary line (memory-format §9).
SHOWN: dict[str, tuple[str, ...]] = {
    "correction-merge": (),
    "glued-sentinel": ("unknown_id", "Stops at", "reinforcement 3.5 → 2"),
    "missing-sentinel": ("Stops at", "reinforcement 3.5 → 2"),
    "corrupt-persona": ("replace", "persona.json"),
    "temp-leftovers": ("24 h",),
    "not-in-characters-json": ("not reconciled",),
    "torn-tail": ("glued onto it",),
    "paused-tail": ("Stops at", "no_handler"),
    "archive-lost": ("does not recover",),
    "corrupt-shard": ("Moves past", "corrupt"),
    "hostile-basename": ("escaped.json", "outside"),
    "stray-view-write": ("facts.json",),
    "duplicate-id": ("repeated event id",),
    "wedged-merge": ("Stops at", "view_drift"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_window_leads_with_the_servers_start_for_every_case(qtbot, inspector_window, tmp_path, case):  # noqa: F811
    root = tmp_path / "docs" / "memory"
    root.mkdir(parents=True)
    (root.parent / "config").mkdir()
    name = CASES[case](root)
    before = tree_hashes(root.parent)
    [expected] = [c for c in diagnose_path(root).characters if c.name == name]
    assert expected.server_start is not None
    window = inspector_window
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, root)
    window.characters.select_name(name)
    qtbot.waitUntil(lambda: window.session.current == name, timeout=WAIT_MS)
    panel = window.server_panel.plain_text()
    lines = panel.splitlines()
    assert lines[0].startswith(f"{TITLE} — {SUBTITLE}")
    summary = expected.server_start.summary()
    assert summary[0].upper() + summary[1:] in panel
    server = [f.severity for f in expected.findings if is_server_start_finding(f)]
    assert window.server_panel.severity == worst(server), case  # coloured by the server's worst finding
    for words in SHOWN[case]:
        assert words in panel, (case, words)
    guarded = window.sentinel_bar.plain_text()
    assert guarded.startswith(f"{GUARDED_TITLE}: ") and "memory server" not in guarded.lower()
    assert tree_hashes(root.parent) == before  # the window wrote nothing
