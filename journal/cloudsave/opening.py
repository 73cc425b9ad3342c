"""Open a cloud-save PATH through the one input resolver (:func:`journal.inputs.resolve`, which
knows every layout of :mod:`journal.cloudsave.layout` and extracts a zip into a private temp
folder, removed by :meth:`OpenedCloud.close`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from journal.cloudsave.layout import CloudInput
from journal.errors import UnreadableInputError
from journal.finding import Finding
from journal.inputs import NoCharacterError, TempRoot, resolve


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


def open_cloud(path: str | os.PathLike[str]) -> OpenedCloud:
    """Open ``path`` as a cloud save.

    Raises:
        UnreadableInputError: PATH does not exist, cannot be read, or is not a folder or zip.
        NotCloudSaveError: PATH holds no cloud-save layout.
    """
    given = os.fspath(path)
    try:
        found = resolve(given, cloud=True)
    except NoCharacterError:
        raise NotCloudSaveError(_not_cloud(given)) from None
    if found.cloud is None:
        found.close()
        raise NotCloudSaveError(_not_cloud(given))
    return OpenedCloud(found.cloud, given, found.zip_path, list(found.refused), found.take_temp())


def _not_cloud(given: str) -> str:
    return (
        f"{given}: no cloud save found here: a cloud-save root holds characters/<name>/ (profile.json, "
        "binding.json, meta.json, memory/) and memory/<name>/; a download backup is "
        "cloudsave_backups/character-download-<stamp>/"
    )
