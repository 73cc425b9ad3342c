"""Suite-wide setup: headless Qt, no leaked threads, and the fault regime's summary over every worker."""

from __future__ import annotations

import os
import threading

import pytest

from tests.faults import tally

# Set before anything imports Qt: every Qt test in this suite runs headless unless a test
# deliberately starts a real X server (the Xvfb smoke test).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _no_leaked_threads():
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon]
    for t in leaked:
        t.join(timeout=5)
    still = [t.name for t in leaked if t.is_alive()]
    assert not still, f"test leaked threads: {still}"


_STYLED: list[bool] = []


@pytest.fixture(autouse=True)
def _styled_like_the_app(request):
    """Qt tests see the window as people do: the application styled by ``make_application``
    (Fusion and the style sheet), whichever test makes the application first. Under a style sheet
    Qt resolves fonts and sizes differently (a zoom that reached the tables without one did not
    with it)."""
    if not _STYLED and ("qtbot" in request.fixturenames or "qapp" in request.fixturenames):
        request.getfixturevalue("qapp")
        from inspector.app import make_application

        make_application()
        _STYLED.append(True)
    yield


def pytest_collection_modifyitems(items):
    """Auto-mark every test that uses qtbot (or lives under tests/inspector/widgets) as ``gui``."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "qtbot" in fixtures or "qapp" in fixtures or "/widgets/" in str(item.fspath):
            item.add_marker(pytest.mark.gui)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its fault-regime tally to the controller (``workeroutput``)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output[tally.OUTPUT_KEY] = tally.worker_output()


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent when the suite runs in one process
def pytest_testnodedown(node, error):
    """The controller adds up each worker's fault-regime tally as the worker ends."""
    tally.merge(getattr(node, "workeroutput", {}).get(tally.OUTPUT_KEY, {}))


def pytest_terminal_summary(terminalreporter):
    """What the fault regime exercised in this run (all workers), and any invariant violation."""
    lines = tally.summary_lines()
    if lines:
        terminalreporter.write_sep("=", "fault regime")
        for line in lines:
            terminalreporter.write_line(line)
