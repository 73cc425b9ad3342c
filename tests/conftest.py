"""Suite-wide setup: headless Qt, no leaked threads, and the fault regime's summary over every worker."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from tests.faults import tally

# Set before anything imports Qt: every Qt test in this suite runs headless unless a test
# deliberately starts a real X server (the Xvfb smoke test).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Each test process (each pytest-xdist worker) has user folders of its own, so no test reads or
# writes the real user's recent list, layout, backups or launcher lock, and two workers never share
# one; the child processes tests start inherit them. A test about these folders sets its own.
_USER_FOLDERS = Path(tempfile.mkdtemp(prefix="mi-test-user-"))
atexit.register(shutil.rmtree, _USER_FOLDERS, ignore_errors=True)
for _var, _name in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("NEKO_RUNTIME_STATE_DIR", "runtime")):
    os.environ[_var] = str(_USER_FOLDERS / _name)
os.environ.pop("MEMORY_INSPECTOR_CONFIG_DIR", None)  # inspector.core.dirs.CONFIG_DIR_ENV


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


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook, like pytest_testnodedown below
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (the suite's addopts): a worker per core for the suite or a folder of it, but a
    run of named test files or tests stays in one process, where starting and filling workers costs
    more than it gains; ``None`` leaves the count to pytest-xdist (its own implementation)."""
    named = [arg.split("::")[0] for arg in config.args]
    if named and all((config.invocation_params.dir / arg).is_file() for arg in named):
        return 0
    return None


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
