"""Guarded replay and restore for the window: the controller that drives the one flow of
:mod:`inspector.core.replay.flow` (the command line drives the same one), answering its
questions through the prompter and running its work off the GUI thread with
:class:`~inspector.core.jobs.BackgroundJob`. Nothing here writes files or orders steps.

Wiring into a main window::

    controller = install_replay_actions(window, tools_menu, current_target=window.replay_target)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QProgressDialog, QWidget

from inspector.controllers.dispatch import GuiDispatcher
from inspector.core.advice import REPLAY_SHORTCUT
from inspector.core.jobs import BackgroundJob
from inspector.core.prompter import Prompter
from inspector.core.replay.flow import (
    MAX_REPLANS,
    Ask,
    ChooseBackup,
    Control,
    Flow,
    GuardedReplayError,
    ReplayRequest,
    ReplayRun,
    RestoreRequest,
    RestoreRun,
    Review,
    Scope,
    Tell,
    Work,
    default_backup_root,
    default_index_path,
    replay_flow,
    restore_flow,
)
from journal.handlers import HandlerRegistry

#: ``current_target()`` returns what the window has open: ``(PATH, character)``; PATH may be a
#: memory root, a character folder (character may then be ``None``) or a zip export.
TargetGetter = Callable[[], "tuple[str | Path, str | None] | None"]

#: What a window shows in another place than a notice: the preflight and the plan in the plan
#: review, a re-plan's reason as its notice, the extraction and the restore plan in the result.
SHOWN_ELSEWHERE = frozenset({"preflight", "plan", "replan", "extracted", "restore_plan"})


class _Failed:
    """An exception raised by work in the worker thread, carried back to the flow."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class ReplayController(QObject):
    """Drives guarded replay and restore for the window: the flow's questions go to the prompter
    (dialogs), its work runs in a worker thread, and the window hears the end.

    There is no server-lock override in the window: that exists only on the command line.

    Args:
        parent: the owner (the composition root's context, or a window in tests); dialogs are
            the prompter's, parented to the active window.
        current_target: what the window has open.
        prompter: the questions (the window's dialogs).
        dispatcher: delivers the worker's results on the GUI thread.
        backup_root: where backups go (default: the user's data folder).
        index_path: the index of backups (default: the user's data folder); restore puts a backup
            back only into the folder recorded there.
        state_dir: where ``launcher.lock`` lives (default: ``NEKO_RUNTIME_STATE_DIR`` / platform).
        registry: replay handlers (default: the five production handlers).
        max_replans: how often to re-plan after the folder changed under an apply.

    Signals:
        progress: ``(done, total)`` while applying.
        finished: the :class:`ReplayRun` / :class:`RestoreRun`, or ``None`` when it ended before
            the flow started (nothing open, bad input).
        folder_changed: the character folder that was written (the window reloads it).
        open_requested: a folder to open (a zip export extracted on request).
        busy_changed: whether a run is in progress.

    Attributes:
        replay_action: "Replay…" (Ctrl+Shift+P).
        restore_action: "Restore backup…".
        progress_dialog: the progress dialog while work runs (Cancel while planning and applying),
            else ``None``.
    """

    progress = Signal(int, int)
    finished = Signal(object)
    folder_changed = Signal(str)
    open_requested = Signal(str)
    busy_changed = Signal(bool)

    def __init__(
        self,
        parent: QObject | None,
        current_target: TargetGetter,
        *,
        prompter: Prompter,
        dispatcher: GuiDispatcher | None = None,
        backup_root: Path | None = None,
        index_path: Path | None = None,
        state_dir: Path | None = None,
        registry: HandlerRegistry | None = None,
        max_replans: int = MAX_REPLANS,
    ) -> None:
        super().__init__(parent)
        self._current_target = current_target
        self.prompter = prompter
        self._dispatcher = dispatcher if dispatcher is not None else GuiDispatcher(self)
        self.backup_root = Path(backup_root) if backup_root is not None else default_backup_root()
        self.index_path = Path(index_path) if index_path is not None else default_index_path()
        self.state_dir = state_dir
        self.registry = registry
        self.max_replans = max_replans
        self._cancel = threading.Event()
        self._job: BackgroundJob | None = None
        self._flow: Flow[Any] | None = None
        self._told: dict[str, str] = {}
        self._declined = False  # the person's last answer in this flow was No
        self._busy = False
        self.progress_dialog: QProgressDialog | None = None
        self._work: Work | None = None
        self.replay_action = QAction("Replay…", self)
        # The shortcut the findings' advice names (inspector.core.advice, the one home of its words).
        self.replay_action.setShortcut(QKeySequence(REPLAY_SHORTCUT))
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
        """Ask the running work to stop: an apply after the current event (the folder stays
        consistent), a plan while it reads the journal (nothing was written)."""
        self._cancel.set()

    def shutdown(self) -> None:
        """Cancel and wait for the worker (call when the window closes)."""
        self._cancel.set()
        job, self._job = self._job, None
        if job is not None:
            job.join()
        self._close_progress()
        if self._flow is not None:
            self._flow.close()
            self._flow = None

    def start_replay(self, scope: Scope | None = None) -> None:
        """Run the replay flow on what the window has open."""
        if self.busy:
            return
        current = self._current_target()
        if current is None:
            self._set_busy(True)
            self._end_with("Open a character folder first.", "info", None)
            return
        request = ReplayRequest(
            path=Path(current[0]),
            character=current[1],
            scope=scope or Scope(),
            backup_root=self.backup_root,
            index_path=self.index_path,
            state_dir=self.state_dir,
            max_replans=self.max_replans,
        )
        self._start(replay_flow(request, registry=self.registry))

    def start_restore(self, backup: Path | None = None, *, dry_run: bool = False) -> None:
        """Run the restore flow: choose a backup of the character open (unless given), verify it,
        ask, restore (``dry_run``: only say what would change)."""
        if self.busy:
            return
        character = None
        current = self._current_target()
        if current is not None:
            character = current[1] or Path(current[0]).name
        request = RestoreRequest(
            backup=backup,
            character=character,
            dry_run=dry_run,
            backup_root=self.backup_root,
            index_path=self.index_path,
            state_dir=self.state_dir,
        )
        self._start(restore_flow(request))

    # -- driving the flow -------------------------------------------------------------------------------------

    def _start(self, flow: Flow[Any]) -> None:
        self._set_busy(True)
        self._flow, self._told = flow, {}
        self._declined = False
        self._cancel.clear()
        self._advance(None, None)

    def _advance(self, answer: Any, error: Exception | None) -> None:
        """Answer the flow's steps until it needs work (run in the worker) or ends."""
        flow = self._flow
        if flow is None:
            return
        while True:
            try:
                step = flow.throw(error) if error is not None else flow.send(answer)
            except StopIteration as stop:
                self._finish(stop.value)
                return
            except GuardedReplayError as exc:
                self._end_with(str(exc), "warning", None)
                return
            except Exception as exc:  # a flow's failure is shown, never lost
                self._end_with(f"{type(exc).__name__}: {exc}", "warning", None)
                return
            answer, error = None, None
            if isinstance(step, Work):
                self._run(step)
                return
            if isinstance(step, Tell):
                if step.kind in SHOWN_ELSEWHERE:
                    self._told[step.kind] = step.text
                else:
                    self.prompter.notify(step.text, title=step.title, level=step.level)
            elif isinstance(step, Ask):
                answer = self.prompter.ask(step.question)
                self._declined = not answer
            elif isinstance(step, Review):
                answer = self.prompter.review(step)
            elif isinstance(step, ChooseBackup):
                answer = self.prompter.choose_backup(step.backups, step.start)

    def _run(self, step: Work) -> None:
        self._work = step
        self._show_progress(step)
        cancel = self._cancel
        cancel.clear()  # a Cancel pressed during an earlier apply stops that one only
        post = self._dispatcher.post

        def on_progress(done: int, total: int) -> None:
            post(lambda: self._on_work_progress(step, done, total))

        control = Control(should_continue=lambda: not cancel.is_set(), on_progress=on_progress)

        def work(_token: Any) -> Any:
            try:
                return step.run(control)
            except Exception as exc:  # handed back to the flow, which decides
                return _Failed(exc)

        def done(result: Any) -> None:
            post(lambda: self._on_work_done(job, result))

        job = BackgroundJob("guarded-replay", work, on_done=done)
        self._job = job
        job.start()

    def _on_work_done(self, job: BackgroundJob, result: Any) -> None:
        if job is not self._job:
            return  # shut down meanwhile
        job.join()
        self._job = None
        self._work = None
        self._close_progress()
        if isinstance(result, _Failed):
            self._advance(None, result.error)
        else:
            self._advance(result, None)

    def _on_work_progress(self, work: Work, done: int, total: int) -> None:
        if work is not self._work:
            return  # from work that ended meanwhile
        if work.unit == "bytes":  # the plan reading the journal
            if self.progress_dialog is not None and total:
                self.progress_dialog.setMaximum(100)  # in percent: a journal's size overflows an int
                self.progress_dialog.setValue(min(100, done * 100 // total))
                self.progress_dialog.setLabelText(
                    f"{work.label} {done * 100 // total}% · {done / 2**20:,.0f} of {total / 2**20:,.0f} MiB"
                )
            return
        if self.progress_dialog is not None and total:
            self.progress_dialog.setMaximum(max(1, total))
            self.progress_dialog.setValue(done)
            self.progress_dialog.setLabelText(f"Applied {done} of {total} event(s)…")
        self.progress.emit(done, total)

    def _finish(self, run: ReplayRun | RestoreRun) -> None:
        """The flow ended: reload what was written, show the result."""
        self._flow = None
        if isinstance(run, ReplayRun):
            plan = run.plan
            if run.wrote and plan is not None:
                self.folder_changed.emit(str(plan.char_dir))
            if run.extracted_to is not None:
                self.open_requested.emit(str(run.extracted_to))
                self._end_with(f"Extracted to {run.extracted_to}; it is opened now. Replay it from there.", "info", run)
            elif run.outcome is not None and plan is not None:
                self.prompter.show_result(run)
                self._end_with(None, "info", run)
            elif run.status == "declined" or (run.status == "refused" and self._declined):
                # One question, one answer: after the person's No (extract the zip first?) the
                # flow's refusal says only what they chose; no second box (issue 27 item 12).
                self._end_with(None, "info", run)
            else:
                level = "warning" if run.status == "refused" else "info"
                self._end_with("\n".join(run.lines), level, run)
            return
        if run.wrote and run.plan is not None and run.plan.target is not None:
            self.folder_changed.emit(str(run.plan.target))
        if run.status == "declined":
            self._end_with(None, "info", run, title="Restore backup")
            return
        lines = run.lines if run.outcome is not None else [self._told.get("restore_plan", ""), *run.lines]
        self._end_with("\n".join(t for t in lines if t), run.level, run, title="Restore backup")

    # -- plumbing ----------------------------------------------------------------------------------------------

    def _show_progress(self, step: Work) -> None:
        maximum = 100 if step.unit == "bytes" and step.total else max(0, step.total)
        dialog = QProgressDialog(
            step.label, "Cancel" if step.cancellable else "", 0, maximum, QApplication.activeWindow()
        )
        dialog.setWindowTitle("Guarded replay")
        dialog.setWindowModality(Qt.WindowModality.NonModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        if step.cancellable:
            dialog.canceled.connect(self.cancel)
        else:
            dialog.setCancelButton(None)  # type: ignore[arg-type]
        dialog.setValue(0)
        dialog.show()
        self.progress_dialog = dialog

    def _close_progress(self) -> None:
        if self.progress_dialog is not None:
            # Closing a progress dialog emits ``canceled``: that must not cancel the next apply.
            self.progress_dialog.canceled.disconnect()
            self.progress_dialog.close()
            self.progress_dialog.deleteLater()
            self.progress_dialog = None

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.replay_action.setEnabled(not busy)
        self.restore_action.setEnabled(not busy)
        self.busy_changed.emit(busy)

    def _end_with(
        self, message: str | None, level: str, run: ReplayRun | RestoreRun | None, title: str = "Guarded replay"
    ) -> None:
        """Finish a flow: tell the person (when there is something to say) and emit ``finished``."""
        self._flow = None
        self._set_busy(False)
        if message:
            self.prompter.notify(message, title=title, level=level)
        self.finished.emit(run)


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
        kwargs: passed to :class:`ReplayController` (``prompter``, ``dispatcher``, ``backup_root``,
            ``state_dir``, ...).
    """
    controller = ReplayController(window, current_target, **kwargs)
    if menu is None:
        menu = window.menuBar().addMenu("&Replay")  # type: ignore[attr-defined]
    menu.addAction(controller.replay_action)
    menu.addAction(controller.restore_action)
    return controller


__all__ = ["SHOWN_ELSEWHERE", "ReplayController", "TargetGetter", "install_replay_actions"]
