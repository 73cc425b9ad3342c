"""What the user asked to open: a memory root, a character folder, a ``.zip`` export, or the sample."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import resources
from journal.diagnosis import DiagnosisInputError
from journal.inputs import NoCharacterError, resolve


class LocationError(Exception):
    """The location cannot be opened; the message says why, in one line, for a dialog."""


@dataclass(frozen=True, slots=True)
class Location:
    """A validated place to open.

    Attributes:
        path: what is read (a folder, or the zip file).
        kind: ``folder``, ``zip`` or ``sample`` (a scratch copy of the bundled sample).
        label: what the title bar calls it.
        scratch: a folder this program created and must delete when it closes it.
    """

    path: Path
    kind: str
    label: str
    scratch: Path | None = None

    @property
    def kept_as(self) -> Path:
        """What the user's settings about this location (its bookmarks) are kept under: its path,
        but the bundled sample itself for the sample's scratch copy, whose path is new at every
        open (bookmarks on the sample were lost at every start, issue 27 item 14)."""
        return sample_source() if self.kind == "sample" else self.path

    @property
    def watchable(self) -> bool:
        """A zip export is a snapshot: there is nothing to watch."""
        return self.kind != "zip"

    def discard(self) -> None:
        """Delete the scratch folder, if this location owns one."""
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def resolve_location(path: str | os.PathLike[str]) -> Location:
    """Check that ``path`` can be opened and say what it is, as :func:`journal.inputs.resolve`
    reads it (a zip is not opened here: the diagnosis extracts it). A folder holding no character
    opens, and shows why it is empty.

    Raises:
        LocationError: it does not exist, cannot be read, or is neither a folder nor a zip (the
            resolver's words).
    """
    p = Path(os.path.expanduser(os.fspath(path))).absolute()
    try:
        with resolve(p, extract=False) as found:
            is_zip = found.is_zip
    except NoCharacterError:
        return Location(p, "folder", str(p))
    except DiagnosisInputError as exc:
        raise LocationError(f"{exc}: open a memory folder, a character folder or a .zip export.") from None
    return Location(p, "zip", f"{p} (zip export, read-only)") if is_zip else Location(p, "folder", str(p))


def sample_source() -> Path:
    """The bundled sample memory root."""
    return resources.path("sample")


def open_sample(scratch_parent: str | os.PathLike[str] | None = None) -> Location:
    """Copy the bundled sample to a fresh scratch folder and return it as a location.

    Trying replay on the copy is safe: the bundled files are never opened for writing.

    Raises:
        LocationError: the sample is not installed, or the copy failed.
    """
    src = sample_source()
    if not src.is_dir():
        raise LocationError(f"The bundled sample is missing ({src}); pass a PATH to open.")
    scratch = Path(tempfile.mkdtemp(prefix="memory-inspector-sample-", dir=scratch_parent))
    dest = scratch / "memory"
    try:
        shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.py", "README*"))
    except OSError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        raise LocationError(f"Could not copy the bundled sample: {exc}") from None
    return Location(dest, "sample", "bundled sample (scratch copy)", scratch=scratch)
