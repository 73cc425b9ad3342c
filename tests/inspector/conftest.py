"""Fixtures shared by the guarded-replay tests (core, command line, window); none is autouse.

A module opts in with ``pytestmark = pytest.mark.usefixtures("replay_env")``.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def replay_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the real launcher lock or the real user data folder."""
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty memory root."""
    r = tmp_path / "memory"
    r.mkdir()
    return r


@pytest.fixture
def backups(tmp_path: Path) -> Path:
    """Where backups go (not created)."""
    return tmp_path / "backups"
