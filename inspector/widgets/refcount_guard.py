"""A guard against a reference-counting bug of PySide6 6.12 on CPython before 3.12.

On those builds every call of a ``void`` Qt method from Python (``setText``, ``update``, …) drops
one reference to ``None`` that it never took, and every ``Signal.emit`` drops one to ``True``.
From CPython 3.12 on these objects are immortal and nothing happens; on 3.11 their reference count
falls with each call, and when it reaches zero the interpreter aborts (``Fatal Python error:
none_dealloc``). A window that is used for a while makes tens of thousands of such calls, so it
would crash mid-session.

The guard probes for the bug once; when it is there, it keeps the counts of ``None``, ``True`` and
``False`` far from zero by adding references held by lists that are deliberately never freed (so
they cannot give the stolen references back at exit either). It costs a few megabytes. The real
fix is a PySide6 release without the bug (6.11.3 does not have it).
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, QTimer

#: Top up when an object's count falls below this; the top-up brings it back to ``_TARGET``.
_LOW = 200_000
_TARGET = 1_000_000
#: How often the counts are checked (ms); a busy window drops at most a few thousand per second.
_INTERVAL_MS = 500

_GUARDED = (None, True, False)
_installed: list[QTimer] = []


def leaks_references() -> bool:
    """Whether this PySide6 drops references to ``None`` / ``True`` (probe: 64 calls of each kind)."""
    if sys.version_info >= (3, 12):
        return False  # immortal objects: the bug is harmless
    probe = QObject()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(64):
        probe.setObjectName("refcount-probe")
        probe.objectNameChanged.emit("refcount-probe")
    return none_before - sys.getrefcount(None) >= 32 or true_before - sys.getrefcount(True) >= 32


def top_up() -> int:
    """Add references to every guarded object whose count is low; returns how many were added."""
    added = 0
    for obj in _GUARDED:
        count = sys.getrefcount(obj)
        if count < _LOW:
            ballast = [obj] * (_TARGET - count)
            # Leak the list on purpose: freed at exit, it would give back references the bug stole.
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(ballast))
            added += len(ballast)
    return added


def install() -> bool:
    """Start guarding if this PySide6 needs it (idempotent); returns whether the guard runs."""
    if _installed:
        return True
    if not leaks_references():
        return False
    top_up()
    timer = QTimer()
    timer.setInterval(_INTERVAL_MS)
    timer.timeout.connect(top_up)
    timer.start()
    _installed.append(timer)
    return True
