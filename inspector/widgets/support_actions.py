"""File ▸ Export support bundle… and File ▸ Compare with (issue 17): the gestures, the status bar's
progress and Cancel, and the comparison's panel. The work is the context's
:class:`~inspector.controllers.support.SupportController`'s; this module only asks and shows."""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtWidgets import QMenu, QWidget

from inspector.controllers.context import AppContext
from inspector.controllers.support import CompareResult
from inspector.core.bundle import BundleResult
from inspector.core.cloud_report import CloudPreview
from inspector.core.text import count
from inspector.widgets.cloud_preview import CloudPreviewPanel
from inspector.widgets.compare_panel import ComparePanel
from inspector.widgets.icons import ActionFactory
from inspector.widgets.job_indicator import JobIndicator
from inspector.widgets.status_line import StatusLine
from inspector.widgets.support_dialogs import BundleOptionsDialog

BUNDLE_TITLE = "Export support bundle"
COMPARE_TITLE = "Compare"

#: The save dialog's name filters for a bundle.
BUNDLE_FILTERS = ("Zip files (*.zip)", "All files (*)")


class SupportActions(QObject):
    """The support-case actions of the window, built once by it (``window.support_actions``).

    Args:
        context: its ``support`` controller, the session (what is open, its redaction) and the prompter.
        host: the window (the dialogs' and panels' parent).
        status: where the results are said, and the job's progress shows.
        actions: makes the actions.
        closing: emitted when the window closes (the work is stopped, the panels closed).

    Signals:
        activated_a(int): an event of A was activated in the comparison's panel, and the window
            shows A's character: select that event (its index is its timeline ref).

    Attributes:
        controller: the context's support controller (``None``: the actions stay hidden).
        export_bundle_action: File ▸ Export support bundle….
        compare_folder_action, compare_zip_action: File ▸ Compare with ▸ Folder… / Zip export….
        compare_menu: File ▸ Compare with.
        indicator: the status bar's progress and Cancel while a bundle or a comparison runs.
        panel: the comparison shown last (``None`` before the first, or once it is closed).
    """

    activated_a = Signal(int)

    def __init__(
        self,
        context: AppContext,
        host: QWidget,
        status: StatusLine,
        actions: ActionFactory,
        closing: SignalInstance,
    ) -> None:
        super().__init__(host)
        self.host = host
        self.session = s = context.session
        self.prompter = context.prompter
        self.status = status
        self.controller = context.support
        self.export_bundle_action = actions(
            "Export support &bundle…", self.ask_export_bundle, None, None,
            "Pack the opened folder into a redacted zip for a support case (the folder is only read)",
        )
        self.compare_folder_action = actions(
            "&Folder…", lambda: self.ask_compare("folder"), None, None,
            "Compare the character shown with another export of it (a folder)",
        )
        self.compare_zip_action = actions(
            "&Zip export…", lambda: self.ask_compare("zip"), None, None,
            "Compare the character shown with another export of it (a .zip)",
        )
        self.compare_cloud_action = actions(
            "&Cloud save…", self.ask_cloud_preview, None, None,
            "What downloading a cloud save (a cloudsave folder or one unit) into the character shown would do",
        )
        self.compare_menu = QMenu("Compare &with", host)
        self.compare_menu.addAction(self.compare_folder_action)
        self.compare_menu.addAction(self.compare_zip_action)
        self.compare_menu.addAction(self.compare_cloud_action)
        self.cloud_panel: CloudPreviewPanel | None = None
        self.indicator = JobIndicator()
        self.indicator.cancel_button.setToolTip("Cancel the support bundle or the comparison (nothing is written)")
        status.add_indicator(self.indicator)
        self.panel: ComparePanel | None = None
        self._kind = ""
        c = self.controller
        self.indicator.cancel_button.clicked.connect(c.cancel)
        c.started.connect(self._on_started)
        c.progress.connect(self.indicator.set_progress)
        c.bundle_written.connect(self._on_bundle_written)
        c.compared.connect(self._on_compared)
        c.download_previewed.connect(self.show_cloud_preview)
        c.failed.connect(self._on_failed)
        c.cancelled.connect(lambda: self._ended("Cancelled: nothing was written."))
        closing.connect(self._on_window_closing)
        for signal in (s.loaded, s.load_failed, s.load_cancelled, s.loading_started):
            signal.connect(self._update_enabled)
        self._update_enabled()

    def add_to_file_menu(self, file_menu: QMenu) -> None:
        """File ▸ Export support bundle… and File ▸ Compare with (``window_actions`` builds the menus)."""
        file_menu.addAction(self.export_bundle_action)
        file_menu.addMenu(self.compare_menu)

    def _update_enabled(self, *_args: object) -> None:
        on = self.session.folder is not None and not self.controller.busy
        for a in (self.export_bundle_action, self.compare_folder_action, self.compare_zip_action,
                  self.compare_cloud_action):
            a.setEnabled(on)
        self.compare_menu.setEnabled(on)

    # -- the bundle ------------------------------------------------------------------------------------

    def ask_export_bundle(self) -> None:
        """Ask where, refuse a place inside the opened folder, confirm the redaction, then write."""
        c, prompter = self.controller, self.prompter
        source = c.opened_path() if c is not None else None
        if c is None or source is None:
            return
        base = source.stem if source.suffix.lower() == ".zip" else source.name
        start = os.path.join(os.path.expanduser("~"), f"{base}-support.zip")
        path = prompter.choose_save_path(BUNDLE_TITLE, start, list(BUNDLE_FILTERS))
        if not path:
            return
        why = c.bundle_refusal(path)
        if why is not None:
            prompter.show_error(BUNDLE_TITLE, f"{why}\n\nNothing was written.")
            return
        choice = BundleOptionsDialog.ask(self.host, str(source), path)
        if choice is None:
            self.status.show("Support bundle: cancelled, nothing was written.", 5000)
            return
        self._kind = "bundle"
        c.write_bundle(path, redact=choice.redact, include_chat=choice.include_chat)

    def _on_bundle_written(self, result: BundleResult) -> None:
        m = result.manifest
        state = "redacted" if m.get("redacted") else "NOT redacted (the manifest records it)"
        chars = m.get("characters")
        n = len(chars) if isinstance(chars, list) else 0
        self._ended(
            f"Wrote the support bundle {result.path} ({result.size:,} bytes, {count(n, 'character')}, {state})."
        )

    # -- the comparison --------------------------------------------------------------------------------

    def ask_compare(self, kind: str) -> None:
        """Choose B (a ``folder`` or a ``zip``) and compare the character shown with it."""
        c, prompter = self.controller, self.prompter
        source = c.opened_path() if c is not None else None
        if c is None or source is None:
            return
        start = str(source.parent)
        other = prompter.choose_folder(start) if kind == "folder" else prompter.choose_zip(start)
        if not other:
            return
        self._kind = "compare"
        c.compare_with(other)

    def ask_cloud_preview(self) -> None:
        """Choose a cloud save (a folder) and say what downloading it into the character shown does."""
        c, prompter = self.controller, self.prompter
        source = c.opened_path() if c is not None else None
        if c is None or source is None:
            return
        unit = prompter.choose_folder(str(source.parent))
        if not unit:
            return
        self._kind = "compare"
        c.preview_download(unit)

    def show_cloud_preview(self, preview: CloudPreview) -> CloudPreviewPanel:
        """Show a download preview (the one shown before is closed)."""
        if self.cloud_panel is not None:
            self.cloud_panel.close()
        panel = CloudPreviewPanel(preview, redact=self.session.redact, parent=self.host)
        panel.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        panel.destroyed.connect(lambda _obj=None, p=panel: self._forget_cloud(p))
        self.cloud_panel = panel
        panel.show()
        verdict = "would change this folder" if preview.changes else "would change nothing"
        self._ended(f"Download preview: a download of {preview.unit} {verdict}.")
        return panel

    def set_redact(self, on: bool) -> None:
        """The comparison's and the download preview's panels follow View ▸ Redact text."""
        for panel in (self.panel, self.cloud_panel):
            if panel is not None:
                panel.set_redact(on)

    def _forget_cloud(self, panel: CloudPreviewPanel) -> None:
        if self.cloud_panel is panel:
            self.cloud_panel = None

    def _on_compared(self, result: CompareResult) -> None:
        self.show_comparison(result)
        c = result.comparison
        if c.identical:
            text = "Compared: A and B are identical."
        else:
            j = c.journal
            text = (
                f"Compared: common prefix {count(j.common_prefix, 'event')}, "
                f"{len(j.only_a):,} only in A, {len(j.only_b):,} only in B, "
                f"{count(len(c.entries), 'entry', 'entries')} differ."
            )
        self._ended(text)

    def show_comparison(self, result: CompareResult) -> ComparePanel:
        """Show ``result`` in the panel (the one shown before is closed)."""
        if self.panel is not None:
            self.panel.close()
        panel = ComparePanel(result, redact=self.session.redact, parent=self.host)
        panel.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        panel.activated_a.connect(lambda index: self._on_a_activated(result, index))
        panel.destroyed.connect(lambda _obj=None, p=panel: self._forget(p))
        self.panel = panel
        panel.show()
        return panel

    def _forget(self, panel: ComparePanel) -> None:
        if self.panel is panel:
            self.panel = None

    def _on_a_activated(self, result: CompareResult, index: int) -> None:
        s = self.session
        if s.folder is None or s.folder.location is not result.location:
            self.status.show("A is no longer open: open it again to select its events.", 8000)
            return
        name = result.comparison.character
        if s.current != name and s.timeline(name) is not None:
            s.show_character(name)
        self.activated_a.emit(index)

    # -- the job ---------------------------------------------------------------------------------------

    def _on_started(self, what: str) -> None:
        self.indicator.start(what)
        self._update_enabled()

    def _ended(self, message: str) -> None:
        self.indicator.hide()
        self._update_enabled()
        self.status.show(message, 15000)

    def _on_failed(self, message: str) -> None:
        self.indicator.hide()
        self._update_enabled()
        if self._kind == "compare":
            self.prompter.show_error(COMPARE_TITLE, f"The comparison failed: {message}")
        else:
            self.prompter.show_error(BUNDLE_TITLE, f"{message}\n\nNothing was written.")

    def _on_window_closing(self) -> None:
        self.controller.shutdown()
        if self.panel is not None:
            self.panel.close()
        if self.cloud_panel is not None:
            self.cloud_panel.close()
