"""Background jobs report exactly one outcome and can be cancelled between steps."""

from __future__ import annotations

import threading

import pytest

from inspector.core.jobs import BackgroundJob, Cancelled, CancelToken


def _run(work):
    outcome = {}
    done = threading.Event()

    def record(kind):
        def cb(*args):
            outcome[kind] = args
            done.set()

        return cb

    job = BackgroundJob("t", work, on_done=record("done"), on_error=record("error"), on_cancelled=record("cancelled"))
    job.start()
    return job, outcome, done


def test_done_error_and_cancel():
    job, outcome, done = _run(lambda token: 42)
    assert done.wait(10) and job.join(10)
    assert outcome == {"done": (42,)}

    job, outcome, done = _run(lambda token: 1 / 0)
    assert done.wait(10) and job.join(10)
    assert "ZeroDivisionError" in outcome["error"][0]

    gate = threading.Event()

    def slow(token: CancelToken):
        gate.wait(10)
        token.check()
        return "late"

    job, outcome, done = _run(slow)
    job.cancel()
    gate.set()
    assert done.wait(10) and job.join(10)
    assert list(outcome) == ["cancelled"]


def test_token_check_raises_once_cancelled():
    token = CancelToken()
    token.check()
    token.cancel()
    with pytest.raises(Cancelled):
        token.check()
    assert token.wait(0)
