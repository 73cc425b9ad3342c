"""HistoryController: the selected event's entry history is built in a worker, one build at a
time; a re-diagnosis or a reload while it builds makes its answer stale, and it is asked again."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from inspector.controllers.dispatch import GuiDispatcher
from inspector.controllers.history import HistoryController
from inspector.controllers.session import SessionController
from journal import fixtures as folders
from journal.diagnosis import CharacterDiagnosis
from journal.history import EntryHistory, EntryKey, JournalHistory

WAIT_MS = 20_000
PERSONA = EntryKey(folders.PERSONA_ENTRY[1], folders.PERSONA_ENTRY[0])


@pytest.fixture(autouse=True)
def _no_real_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path / "runtime"))


@pytest.fixture
def session(qtbot, tmp_path):
    built = folders.pending_tail(tmp_path / "memory")
    s = SessionController(GuiDispatcher(), watch=False)
    with qtbot.waitSignal(s.loaded, timeout=WAIT_MS):
        assert s.open_path(built.path)
    yield s
    s.close()  # joins every job, the history builds included


class GatedHistory(JournalHistory):
    """A JournalHistory whose first ``entry`` call waits for the test to release it."""

    def __init__(self, diagnosis: CharacterDiagnosis, gate: threading.Event | None, started: threading.Event) -> None:
        super().__init__(diagnosis)
        self.gate, self.started = gate, started
        self.threads: list[str] = []
        self.built: list[EntryKey] = []  # the builds that ran to their end

    def entry(self, key: EntryKey, progress=None) -> EntryHistory:
        self.threads.append(threading.current_thread().name)
        self.started.set()
        if self.gate is not None:
            assert self.gate.wait(WAIT_MS / 1000)
        built = super().entry(key, progress=progress)
        self.built.append(key)
        return built


def _row_touching(session: SessionController, key: EntryKey):
    tl = session.timeline()
    return next(e for e in tl.events if e.entry == key.ref)


def test_the_history_of_the_selected_events_entry_is_built_in_a_worker(qtbot, session):
    prepared_in = []

    def prepare(history):
        prepared_in.append(threading.current_thread() is threading.main_thread())
        return len(history.points)

    controller = HistoryController(session, prepare=prepare)
    row = _row_touching(session, PERSONA)
    with qtbot.waitSignal(controller.history_ready, timeout=WAIT_MS) as blocker:
        controller.request_event(row)
    request, history, prepared = blocker.args
    expected = JournalHistory(session.timeline().diagnosis).entry(PERSONA)
    assert request.key == PERSONA and request.event_index == row.index
    assert history.to_json() == expected.to_json()
    assert prepared == 4 and prepared_in == [False]


def test_an_event_that_touches_no_entry_clears(qtbot, session):
    controller = HistoryController(session)
    row = dataclasses.replace(_row_touching(session, PERSONA), type="fact.added", entry=None)
    with qtbot.waitSignal(controller.history_cleared, timeout=WAIT_MS) as blocker:
        controller.request_event(row)
    assert "touches no" in blocker.args[0]
    assert controller.wanted is None


def test_an_entry_no_event_touches_fails_with_the_histories_message(qtbot, session):
    controller = HistoryController(session)
    with qtbot.waitSignal(controller.history_failed, timeout=WAIT_MS) as blocker:
        controller.request_entry(EntryKey("ref_nobody"))
    assert blocker.args[1].startswith("no event of the journal of pending-tail touches entry 'ref_nobody'")


def test_one_journal_history_per_diagnosis_is_kept(qtbot, session):
    made = []

    def make(diagnosis):
        made.append(JournalHistory(diagnosis))
        return made[-1]

    controller = HistoryController(session, make_history=make)
    for key in (PERSONA, EntryKey(folders.REFLECTION_IDS[0]), PERSONA):
        with qtbot.waitSignal(controller.history_ready, timeout=WAIT_MS):
            controller.request_entry(key)
    assert len(made) == 1


def test_a_rediagnosis_while_building_drops_the_stale_answer_and_asks_again(qtbot, session):
    gate, started = threading.Event(), threading.Event()
    made: list[GatedHistory] = []

    def make(diagnosis):
        made.append(GatedHistory(diagnosis, gate if not made else None, started))
        return made[-1]

    controller = HistoryController(session, make_history=make)
    answers = []
    controller.history_ready.connect(lambda request, history, _prepared: answers.append((request, history)))
    controller.request_entry(PERSONA)
    qtbot.waitUntil(started.is_set, timeout=WAIT_MS)
    session.states_recomputed.emit(session.current)  # what merge_rediagnosis says when it merged
    with qtbot.waitSignal(controller.history_ready, timeout=WAIT_MS):
        gate.set()
    assert len(made) == 2  # the re-diagnosed character got a fresh JournalHistory
    assert [r.version for r, _ in answers] == [1]  # only the answer asked of the fresh one
    assert made[0].threads and made[1].threads and "MainThread" not in made[0].threads + made[1].threads


def test_a_reload_while_building_drops_the_answer(qtbot, session):
    gate, started = threading.Event(), threading.Event()
    controller = HistoryController(session, make_history=lambda d: GatedHistory(d, gate, started))
    answers = []
    controller.history_ready.connect(lambda *args: answers.append(args))
    controller.request_entry(PERSONA)
    qtbot.waitUntil(started.is_set, timeout=WAIT_MS)
    with qtbot.waitSignal(controller.history_cleared, timeout=WAIT_MS):
        session.loaded.emit(session.folder)  # a reload shows another diagnosis
    with qtbot.waitSignal(controller.building, timeout=WAIT_MS, check_params_cb=lambda on: on is False):
        gate.set()
    assert answers == []


def test_only_the_last_question_asked_during_a_build_is_answered(qtbot, session):
    gate, started = threading.Event(), threading.Event()
    controller = HistoryController(session, make_history=lambda d: GatedHistory(d, gate, started))
    answers = []
    controller.history_ready.connect(lambda request, history, _p: answers.append(request.key))
    controller.request_entry(PERSONA)
    qtbot.waitUntil(started.is_set, timeout=WAIT_MS)
    controller.request_entry(EntryKey(folders.REFLECTION_IDS[1]))
    controller.request_entry(EntryKey(folders.REFLECTION_IDS[0]))
    with qtbot.waitSignal(controller.history_ready, timeout=WAIT_MS):
        gate.set()
    assert answers == [EntryKey(folders.REFLECTION_IDS[0])]


# -- long builds: progress and Cancel (issue 27 item 10) -----------------------------------------------


def test_a_build_reports_its_progress(qtbot, session):
    controller = HistoryController(session)
    seen = []
    controller.progress.connect(lambda done, total: seen.append((done, total)))
    with qtbot.waitSignal(controller.history_ready, timeout=WAIT_MS):
        controller.request_event(_row_touching(session, PERSONA))
    events = len(session.timeline().diagnosis.events)
    assert seen and {total for _done, total in seen} == {2 * events}
    assert [done for done, _t in seen] == sorted(done for done, _t in seen)  # it only moves forward


def test_cancel_stops_the_build_and_shows_nothing_for_it(qtbot, session):
    from inspector.controllers.history import CANCELLED_TEXT

    gate, started = threading.Event(), threading.Event()
    made = []

    def make(diagnosis):
        made.append(GatedHistory(diagnosis, gate, started))
        return made[-1]

    controller = HistoryController(session, make_history=make)
    with qtbot.waitSignal(controller.building, timeout=WAIT_MS):
        controller.request_event(_row_touching(session, PERSONA))
    assert started.wait(WAIT_MS / 1000)
    with qtbot.assertNotEmitted(controller.history_ready, wait=0):
        with qtbot.waitSignal(controller.history_cleared, timeout=WAIT_MS) as cleared:
            controller.cancel()
        gate.set()  # the build goes on to its first progress report, which stops it
        with qtbot.waitSignal(controller.building, timeout=WAIT_MS) as ended:
            pass
        qtbot.waitUntil(lambda: not session.busy, timeout=WAIT_MS)
    assert cleared.args == [CANCELLED_TEXT] and ended.args == [False]
    assert controller.wanted is None
    assert [h.built for h in made] == [[]]  # stopped at its first report, not built to the end
