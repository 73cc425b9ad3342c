"""The guard that keeps PySide6 6.12's dropped references to None / True from aborting the window."""

from __future__ import annotations

import sys

import pytest

from inspector.widgets import refcount_guard

pytestmark = pytest.mark.gui


def test_top_up_restores_low_counts(qapp, monkeypatch):
    monkeypatch.setattr(refcount_guard, "_LOW", sys.getrefcount(None) + 10)
    monkeypatch.setattr(refcount_guard, "_TARGET", sys.getrefcount(None) + 1000)
    before = sys.getrefcount(None)
    assert refcount_guard.top_up() >= 990
    assert sys.getrefcount(None) >= before + 990


def test_install_guards_when_this_pyside_needs_it(qapp):
    needed = refcount_guard.leaks_references()
    assert refcount_guard.install() == needed
    if needed:
        assert sys.getrefcount(None) >= refcount_guard._LOW
        assert sys.getrefcount(True) >= refcount_guard._LOW
