"""Open a cloud-save PATH: a folder in any layout of :mod:`journal.cloudsave.layout`, or a zip of
one (extracted into a private temp folder by :func:`journal.inputs.extract_zip`, the one extractor,
and removed by :meth:`OpenedCloud.close`)."""

from __future__ import annotations

import os
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from journal.cloudsave.layout import CloudInput, find_cloud
from journal.diagnosis.values import Finding, TempRoot, UnreadableInputError
from journal.inputs import descend, extract_zip


class NotCloudSaveError(UnreadableInputError):
    """PATH was read and holds no cloud-save layout."""


@dataclass(slots=True)
class OpenedCloud:
    """A cloud-save input, open; a zip's copy is removed by :meth:`close`."""

    found: CloudInput
    path: str
    zip_path: Path | None = None
    refused: list[Finding] = field(default_factory=list)
    _temp: TempRoot | None = None

    def close(self) -> None:
        if self._temp is not None:
            self._temp.close()

    def __enter__(self) -> OpenedCloud:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cloud_in_folder(folder: Path, export: Path | None = None) -> CloudInput | None:
    """The cloud layout at ``folder``, or in the one folder a zip's copy wraps it in."""
    found = find_cloud(folder, export=export)
    if found is None and export is not None:
        inner = descend(folder)
        if inner != folder:
            found = find_cloud(inner, export=export)
    return found


def open_cloud(path: str | os.PathLike[str]) -> OpenedCloud:
    """Open ``path`` as a cloud save.

    Raises:
        UnreadableInputError: PATH does not exist, cannot be read, or is not a folder or zip.
        NotCloudSaveError: PATH holds no cloud-save layout.
    """
    given = os.fspath(path)
    p = Path(given).absolute()
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise UnreadableInputError(f"{given}: no such file or folder") from None
    except OSError as exc:
        raise UnreadableInputError(f"{given}: cannot be read: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(st.st_mode):
        found = cloud_in_folder(p)
        if found is None:
            raise NotCloudSaveError(_not_cloud(given))
        return OpenedCloud(found, given)
    if not stat.S_ISREG(st.st_mode) or not zipfile.is_zipfile(p):
        raise UnreadableInputError(f"{given}: neither a folder nor a .zip export")
    temp = TempRoot(tempfile.mkdtemp(prefix="memory-inspector-cloudzip-"))
    try:
        refused = extract_zip(p, temp.path)
        base = Path(temp.path)
        found = cloud_in_folder(base, export=base)
        if found is None:
            raise NotCloudSaveError(_not_cloud(given))
    except BaseException:
        temp.close()
        raise
    return OpenedCloud(found, given, p, refused, temp)


def _not_cloud(given: str) -> str:
    return (
        f"{given}: no cloud save found here: a cloud-save root holds characters/<name>/ (profile.json, "
        "binding.json, meta.json, memory/) and memory/<name>/; a download backup is "
        "cloudsave_backups/character-download-<stamp>/"
    )
