"""Cloud-save units (cloudsave-format.md): open every layout, verify a unit, and say what a
download of it would do to a local character folder. Read-only; never imports Qt.

One module per step: :mod:`~journal.cloudsave.layout` (where the units are),
:mod:`~journal.cloudsave.opening` (a folder or a zip), :mod:`~journal.cloudsave.meta` (meta.json,
profile, binding), :mod:`~journal.cloudsave.canonical` (the canonical JSON and fingerprints),
:mod:`~journal.cloudsave.dbhash` (the db hash rule), :mod:`~journal.cloudsave.anchor`
(``root_state.json``, tombstones, download backups), :mod:`~journal.cloudsave.verify` (fingerprint,
manifest, layouts, findings) and :mod:`~journal.cloudsave.download` (the download preview).
"""

from __future__ import annotations

# journal.inputs and journal.diagnosis import each other: the diagnosis package first, as they expect.
from journal import diagnosis as _diagnosis  # noqa: F401
from journal.cloudsave.anchor import DownloadBackup, RootState, download_backups, read_root_state
from journal.cloudsave.canonical import canonical_json, payload_fingerprint
from journal.cloudsave.download import DownloadPlan, DownloadPreview, plan_download, preview_download
from journal.cloudsave.layout import CloudInput, CloudUnit, find_cloud
from journal.cloudsave.opening import NotCloudSaveError, OpenedCloud, open_cloud
from journal.cloudsave.verify import UnitCheck, verify_input, verify_unit

__all__ = [
    "CloudInput",
    "CloudUnit",
    "DownloadBackup",
    "DownloadPlan",
    "DownloadPreview",
    "NotCloudSaveError",
    "OpenedCloud",
    "RootState",
    "UnitCheck",
    "canonical_json",
    "download_backups",
    "find_cloud",
    "open_cloud",
    "payload_fingerprint",
    "plan_download",
    "preview_download",
    "read_root_state",
    "verify_input",
    "verify_unit",
]
