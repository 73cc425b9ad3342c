"""Guarded replay and restore for the window: the controller that runs :mod:`inspector.core.replay`
off the GUI thread and asks through dialogs. Nothing here writes files; every guard is the core's.

Wiring into a main window::

    controller = install_replay_actions(window, tools_menu, current_target=window.replay_target)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QProgressDialog, QWidget

from inspector.core import replay as gr
from inspector.core.replay import (
    ASK_EXTRACT,
    ASK_RECENT_WRITES,
    Plan,
    PlannedEvent,
    Preflight,
    Question,
    ReplayOutcome,
    ReplayPrompter,
    RestoreOutcome,
    RestorePlan,
    Scope,
)
from inspector.widgets.replay_dialog import DialogReplayPrompter, ReplayDialog
from inspector.widgets.restore_dialog import RestoreDialog
from journal.handlers import HandlerRegistry

# -- the worker -------------------------------------------------------------------------------------------


class _Job(QObject):
    """Runs one function in a QThread; reports progress, the result or the error as signals.

    Signals:
        progress: ``(done, total)``.
        done: the function's result.
        failed: the error in words.
    """

    progress = Signal(int, int)
    done = Signal(object)
    failed = Signal(str)

    def __init__(self, fn: Callable[[_Job], Any]) -> None:
        super().__init__()
        self._fn = fn

    @Slot()
    def run(self) -> None:
        try:
            result = self._fn(self)
        except gr.GuardedReplayError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # a worker's failure is shown, never lost in a thread
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.done.emit(result)


# -- the controller -----------------------------------------------------------------------------------------

#: ``current_target()`` returns what the window has open: ``(PATH, character)``; PATH may be a
#: memory root, a character folder (character may then be ``None``) or a zip export.
TargetGetter = Callable[[], "tuple[str | Path, str | None] | None"]


class ReplayController(QObject):
    """Runs guarded replay and restore for the window: the same guards as the command line, with
    dialogs for questions and the slow steps (plan, apply, restore) in a worker thread.

    There is no server-lock override in the window: that exists only on the command line.

    Args:
        parent: the window (dialogs are parented to it).
        current_target: what the window has open.
        prompter: questions and notices (default: real dialogs).
        backup_root: where backups go (default: the user's data folder).
        index_path: the index of backups (default: the user's data folder); restore puts a backup
            back only into the folder recorded there.
        state_dir: where ``launcher.lock`` lives (default: ``NEKO_RUNTIME_STATE_DIR`` / platform).
        registry: replay handlers (default: the five production handlers).

    Signals:
        progress: ``(done, total)`` while applying.
        finished: the run's :class:`ReplayOutcome` / :class:`RestoreOutcome`, or ``None`` when it
            ended before anything ran (declined, refused, nothing chosen).
        folder_changed: the character folder that was written (the window may reload it).
        open_requested: a folder to open (a zip export extracted on request).
        busy_changed: whether a run is in progress.

    Attributes:
        replay_action: "Replay…".
        restore_action: "Restore backup…".
        progress_dialog: the progress dialog while applying (with its Cancel button), else ``None``.
    """

    progress = Signal(int, int)
    finished = Signal(object)
    folder_changed = Signal(str)
    open_requested = Signal(str)
    busy_changed = Signal(bool)

    def __init__(
        self,
        parent: QWidget,
        current_target: TargetGetter,
        *,
        prompter: ReplayPrompter | None = None,
        backup_root: Path | None = None,
        index_path: Path | None = None,
        state_dir: Path | None = None,
        registry: HandlerRegistry | None = None,
    ) -> None:
        super().__init__(parent)
        self._window = parent
        self._current_target = current_target
        self.prompter: ReplayPrompter = prompter or DialogReplayPrompter(parent)
        self.backup_root = Path(backup_root) if backup_root is not None else gr.default_backup_root()
        self.index_path = Path(index_path) if index_path is not None else gr.default_index_path()
        self.state_dir = state_dir
        self.registry = registry
        self._cancel = threading.Event()
        self._thread: QThread | None = None
        self._job: _Job | None = None
        self._on_done: Callable[[Any], None] | None = None
        self._preflight: Preflight | None = None
        self._replans = 0
        self._busy = False
        self.progress_dialog: QProgressDialog | None = None
        self.replay_action = QAction("Replay…", self)
        self.replay_action.setStatusTip("Apply pending events with a dry run, a backup and a fingerprint check first")
        self.replay_action.triggered.connect(lambda: self.start_replay())
        self.restore_action = QAction("Restore backup…", self)
        self.restore_action.setStatusTip("Put a replay backup back, verified against its manifest")
        self.restore_action.triggered.connect(lambda: self.start_restore())

    # -- public -------------------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether a replay or restore flow is in progress (dialogs included)."""
        return self._busy

    def cancel(self) -> None:
        """Ask the running apply to stop after the current event (the folder stays consistent)."""
        self._cancel.set()

    def shutdown(self) -> None:
        """Cancel and wait for the worker (call when the window closes)."""
        self._cancel.set()
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait()

    def start_replay(self, scope: Scope | None = None) -> None:
        """Preflight, then plan in the worker, then the plan dialog (see :meth:`_on_planned`)."""
        if self.busy:
            return
        self._replans = 0
        self._set_busy(True)
        current = self._current_target()
        if current is None:
            self._end("Open a character folder first.")
            return
        path, character = Path(current[0]), current[1] or Path(current[0]).name
        try:
            target = gr.resolve_target(path, character)
        except gr.BadInputError as exc:
            self._end(str(exc))
            return
        pf = gr.preflight(target, state_dir=self.state_dir)
        self._preflight = pf
        if target.zip_path is not None:
            self._offer_extract(target.zip_path)
            return
        if pf.refusals:
            self._end("Replay refused:\n" + "\n".join(r.message for r in pf.refusals))
            return
        if pf.recent:
            recent = next(w.message for w in pf.warnings if w.code == "files.recent")
            if not self.prompter.ask(Question(ASK_RECENT_WRITES, "A writer may be active", recent + ". Go on anyway?")):
                self._end(None)
                return
        self._plan(target, scope or Scope())

    def start_restore(self, backup: Path | None = None) -> None:
        """Choose a backup (unless given), verify and compare it in the worker, ask, restore."""
        if self.busy:
            return
        self._set_busy(True)
        if backup is None:
            current = self._current_target()
            character = None
            if current is not None:
                character = current[1] or Path(current[0]).name
            backups = gr.list_backups(self.backup_root, character, index_path=self.index_path) if character else []
            chosen = RestoreDialog.ask(self._window, backups, self.backup_root)
            if chosen is None:
                self._end(None)
                return
            backup = chosen
        index_path = self.index_path
        self._run(lambda job: gr.plan_restore(backup, index_path=index_path), self._on_restore_planned)

    # -- replay steps ----------------------------------------------------------------------------------------

    def _offer_extract(self, zip_path: Path) -> None:
        dest = gr.suggest_extract_dir(zip_path)
        question = Question(
            ASK_EXTRACT,
            "Zip export",
            f"{zip_path} is a zip export and replay writes. Extract it to {dest} and open that folder?",
            "The zip itself is left as it is.",
        )
        if not self.prompter.ask(question):
            self._end(None)
            return

        def extracted(result: Path) -> None:
            self.open_requested.emit(str(result))
            self._end(f"Extracted to {result}; it is opened now. Replay it from there.")

        self._run(lambda job: gr.extract_export(zip_path, dest), extracted)

    def _plan(self, target: gr.ReplayTarget, scope: Scope, notice: str = "") -> None:
        registry = self.registry

        def work(job: _Job) -> tuple[Plan, list[PlannedEvent]]:
            plan = gr.make_plan(target, scope, registry=registry)
            return plan, gr.pending_events(plan.char_dir)

        self._run(work, lambda result: self._on_planned(result[0], result[1], notice))

    def _on_planned(self, plan: Plan, pending: list[PlannedEvent], notice: str) -> None:
        choice = ReplayDialog.ask(self._window, plan, self._preflight, pending, notice)
        if choice.action == "replan":
            self._plan(plan.target, choice.scope)
            return
        if choice.action != "apply" or not plan.has_work:
            self._end(None)
            return
        self._apply(plan)

    def _apply(self, plan: Plan) -> None:
        self._cancel.clear()
        dialog = QProgressDialog("Backing up and applying…", "Cancel", 0, max(1, len(plan.events)), self._window)
        dialog.setWindowTitle("Guarded replay")
        dialog.setWindowModality(Qt.WindowModality.NonModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.canceled.connect(self.cancel)
        dialog.setValue(0)
        dialog.show()
        self.progress_dialog = dialog
        cancel, preflight, registry = self._cancel, self._preflight, self.registry
        backup_root, state_dir, index_path = self.backup_root, self.state_dir, self.index_path

        def work(job: _Job) -> ReplayOutcome:
            return gr.execute(
                plan,
                backup_root=backup_root,
                preflight_=preflight,
                state_dir=state_dir,
                registry=registry,
                should_continue=lambda: not cancel.is_set(),
                on_progress=job.progress.emit,
                index_path=index_path,
            )

        self._run(work, lambda outcome: self._on_applied(plan, outcome))

    def _on_applied(self, plan: Plan, outcome: ReplayOutcome) -> None:
        self._close_progress()
        if outcome.status == "changed" and self._replans < gr.MAX_REPLANS:
            self._replans += 1
            notice = f"Refused: {outcome.message}. This is a new plan of the folder as it is now."
            self._plan(plan.target, plan.scope, notice)
            return
        if outcome.applied or outcome.status in ("applied", "stopped", "cancelled", "failed"):
            self.folder_changed.emit(str(plan.char_dir))
        ReplayDialog.show_result(self._window, plan, outcome)
        self._end(None, outcome)

    # -- restore steps -----------------------------------------------------------------------------------------

    def _on_restore_planned(self, rp: RestorePlan) -> None:
        text = "\n".join(gr.describe_restore_plan(rp))
        if not rp.ok or not rp.has_work:
            status = "refused" if not rp.ok else "nothing_to_do"
            self._end(text, RestoreOutcome(status, rp, rp.refused_because or text))
            return
        if not self.prompter.ask(gr.restore_question(rp)):
            self._end(None)
            return
        state_dir, index_path = self.state_dir, self.index_path
        self._run(lambda job: gr.execute_restore(rp, state_dir=state_dir, index_path=index_path), self._on_restored)

    def _on_restored(self, outcome: RestoreOutcome) -> None:
        if (outcome.written or outcome.removed) and outcome.plan.target is not None:
            self.folder_changed.emit(str(outcome.plan.target))
        self._end("\n".join(gr.describe_restore_outcome(outcome)), outcome)

    # -- plumbing ----------------------------------------------------------------------------------------------

    def _run(self, fn: Callable[[_Job], Any], on_done: Callable[[Any], None]) -> None:
        thread = QThread()
        thread.setObjectName("guarded-replay")
        job = _Job(fn)
        job.moveToThread(thread)
        thread.started.connect(job.run)
        thread.finished.connect(job.deleteLater)
        job.progress.connect(self._on_job_progress)
        job.done.connect(self._on_job_done)
        job.failed.connect(self._on_job_failed)
        self._thread, self._job, self._on_done = thread, job, on_done
        thread.start()

    def _stop_thread(self) -> Callable[[Any], None] | None:
        thread, self._thread, self._job = self._thread, None, None
        if thread is not None:
            thread.quit()
            thread.wait()
        on_done, self._on_done = self._on_done, None
        return on_done

    @Slot(int, int)
    def _on_job_progress(self, done: int, total: int) -> None:
        if self.progress_dialog is not None:
            self.progress_dialog.setMaximum(max(1, total))
            self.progress_dialog.setValue(done)
            self.progress_dialog.setLabelText(f"Applied {done} of {total} event(s)…")
        self.progress.emit(done, total)

    @Slot(object)
    def _on_job_done(self, result: object) -> None:
        on_done = self._stop_thread()
        if on_done is not None:
            on_done(result)

    @Slot(str)
    def _on_job_failed(self, message: str) -> None:
        self._stop_thread()
        self._close_progress()
        self._end(message)

    def _close_progress(self) -> None:
        if self.progress_dialog is not None:
            self.progress_dialog.canceled.disconnect(self.cancel)
            self.progress_dialog.close()
            self.progress_dialog.deleteLater()
            self.progress_dialog = None

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.replay_action.setEnabled(not busy)
        self.restore_action.setEnabled(not busy)
        self.busy_changed.emit(busy)

    def _end(self, message: str | None, result: object = None) -> None:
        """Finish a flow: tell the person (when there is something to say) and emit ``finished``."""
        self._on_done = None
        self._set_busy(False)
        if message:
            self.prompter.notify(message)
        self.finished.emit(result)


def install_replay_actions(
    window: QWidget,
    menu: QMenu | None,
    current_target: TargetGetter,
    **kwargs: Any,
) -> ReplayController:
    """Build the controller and put "Replay…" and "Restore backup…" into ``menu``.

    Args:
        window: the main window (parent of the controller and of every dialog).
        menu: the menu to extend; ``None`` adds a "Replay" menu to ``window.menuBar()``.
        current_target: ``() -> (PATH, character) | None`` — what the window has open.
        kwargs: passed to :class:`ReplayController` (``prompter``, ``backup_root``, ``state_dir``).
    """
    controller = ReplayController(window, current_target, **kwargs)
    if menu is None:
        menu = window.menuBar().addMenu("&Replay")  # type: ignore[attr-defined]
    menu.addAction(controller.replay_action)
    menu.addAction(controller.restore_action)
    return controller


__all__ = ["ReplayController", "install_replay_actions"]
