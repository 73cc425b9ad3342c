"""``memory-inspector bundle``: write a redacted support bundle of a memory folder (issue 17)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.core import cli_args, output
from inspector.core.bundle import BundleError, load_or_create_secret, read_secret, secret_path, write_bundle
from inspector.core.output import ExitCode
from inspector.core.redaction import Redactor
from inspector.core.text import one_line
from journal.diagnosis import DiagnosisInputError

if TYPE_CHECKING:
    from PySide6.QtGui import QPixmap

PROG = "memory-inspector bundle"

#: How long ``--screenshots`` waits for the window to load PATH (seconds).
SCREENSHOT_TIMEOUT = 300


def add_parser(subparsers: Any) -> None:
    """Register ``bundle`` on the subcommands' parser (:mod:`inspector.cli` assembles them)."""
    p = subparsers.add_parser(
        "bundle",
        help="write a redacted support bundle",
        description="Write a redacted support bundle of a memory folder (PATH is only read).",
        epilog="exit codes: 0 written; 1 refused (CASE.zip exists, or lies inside PATH); 2 bad input; "
        "130 interrupted",
    )
    cli_args.add_path(p, note="only read; not needed with --guess", optional=True)
    p.add_argument("-o", "--output", metavar="CASE.zip", help="the bundle to write (never inside PATH)")
    cli_args.add_only_character(p)
    p.add_argument("--no-redact", action="store_true", help="copy the files as they are (recorded in the manifest)")
    p.add_argument(
        "--include-chat",
        action="store_true",
        help="include the chat history (time_indexed.db, rebuilt from a private copy; every message keyed unless "
        "--no-redact); left out by default",
    )
    p.add_argument("--force", action="store_true", help="replace CASE.zip if it exists")
    p.add_argument(
        "--screenshots",
        action="store_true",
        help="add a window screenshot per character, its most telling row selected (redacted unless --no-redact)",
    )
    p.add_argument(
        "--guess",
        metavar="TEXT",
        help="print the token TEXT has under your redaction secret (to answer a developer's guess); writes nothing",
    )
    p.set_defaults(run=run_bundle)


def run_bundle(args: argparse.Namespace) -> int:
    """Exit codes: 0 written; 1 refused (the output exists, or lies inside PATH); 2 bad input;
    130 interrupted."""
    if args.guess is not None:
        return _guess(args.guess)
    try:
        secret = load_or_create_secret()
    except OSError as exc:
        return output.error(PROG, f"the redaction secret ({secret_path()}): {exc}")
    if not args.path or not args.output:
        return output.error(PROG, "PATH and -o CASE.zip are required")
    meter = None
    try:
        screenshots: dict[str, bytes] | None = None
        if args.screenshots:
            try:
                screenshots = _screenshots(args, secret)
            except ScreenshotError as exc:
                return output.error(PROG, f"--screenshots: {exc}")
        meter = output.meter(f"{PROG}:")
        result = write_bundle(
            args.path,
            args.output,
            secret=secret,
            character=args.character,
            redact=not args.no_redact,
            force=args.force,
            progress=meter,
            screenshots=screenshots,
            include_chat=args.include_chat,
        )
    except DiagnosisInputError as exc:
        output.clear(meter)
        return output.error(PROG, str(exc))
    except BundleError as exc:
        output.clear(meter)
        print(f"{PROG}: refused: {one_line(str(exc))}", file=sys.stderr)
        return ExitCode.PROBLEMS
    except OSError as exc:
        output.clear(meter)
        return output.error(PROG, f"cannot write {args.output}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        output.clear(meter)
        return output.interrupted(PROG, "nothing was written")
    output.clear(meter)
    m = result.manifest
    state = "redacted" if m["redacted"] else "NOT redacted (--no-redact)"
    chars = m["characters"]
    print(
        f"{PROG}: wrote {one_line(str(result.path))} ({result.size:,} bytes, "
        f"{len(chars)} character{'s' if len(chars) != 1 else ''}, {state})"
    )
    omitted = m["omitted"]
    if omitted:
        print(f"{PROG}: left out {len(omitted)} item(s); the manifest lists them", file=sys.stderr)
    return ExitCode.OK


def _screenshots(args: argparse.Namespace, secret: bytes) -> dict[str, bytes]:
    """The window's screenshots for the bundle. Redacted, they are of the bundle itself (written
    first to a private temp folder): the window then shows the ids, names and file names keyed as
    the bundle's files hold them, not the original's; by the character's folder in the bundle.

    Raises:
        ScreenshotError: the window could not render it.
        DiagnosisInputError, BundleError, OSError: as :func:`write_bundle`.
    """
    if args.no_redact:
        return render_screenshots(args.path, character=args.character, redact=False)
    with tempfile.TemporaryDirectory(prefix="memory-inspector-shots-") as folder:
        shots = Path(folder) / "shots.zip"
        write_bundle(args.path, shots, secret=secret, character=args.character)
        return render_screenshots(str(shots), redact=True)


def _guess(text: str) -> int:
    """``--guess TEXT``: the token under the sender's secret; writes nothing, so without a secret
    (no bundle made yet) there is no token to give (exit 2)."""
    try:
        secret = read_secret()
    except OSError as exc:
        return output.error(PROG, f"the redaction secret ({secret_path()}): {exc}")
    if secret is None:
        print(
            f"{PROG}: error: no redaction secret at {secret_path()}: no bundle was made here, so no token "
            "can match (nothing written)",
            file=sys.stderr,
        )
        return ExitCode.BAD_INPUT
    r = Redactor(secret)
    print(f"{r.token(text)}  (key {r.key_id})")
    return ExitCode.OK


class ScreenshotError(Exception):
    """The window could not render PATH (the message says why, in one line)."""


def render_screenshots(path: str, *, character: str | None = None, redact: bool = True) -> dict[str, bytes]:
    """One PNG of the window per character of ``path`` (only ``character`` when given), by name,
    each with its most telling row selected, rendered with redaction on unless ``redact`` is false.

    The window is built by the composition root with a headless prompter, no watcher and a
    throwaway config folder (no recent entry, no kept layout), and it opens ``path`` under its base
    name: the rendered window never shows the full path, which can hold a user name. Without a
    platform chosen (``QT_QPA_PLATFORM``) it renders offscreen: nothing appears on the screen.

    Raises:
        ScreenshotError: ``path`` cannot be opened or did not load in time.
    """
    if "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # read when the application is made, below
    from PySide6.QtCore import qInstallMessageHandler

    from inspector.app import (
        build_window,
        make_application,
        render,
        show_telling_row,
        wait_loaded,
        without_platform_noise,
    )
    from inspector.core.location import LocationError, resolve_location
    from inspector.core.prompter import HeadlessPrompter

    try:
        location = resolve_location(path)
    except LocationError as exc:
        raise ScreenshotError(str(exc)) from None
    make_application()
    previous = qInstallMessageHandler(without_platform_noise)  # as run_gui: Qt's messages, less its noise
    shots: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="memory-inspector-shots-") as config:
        window = build_window(prompter=HeadlessPrompter(), config_dir=config, watch=False, replay=False)
        try:
            window.set_redact(redact)
            window.session.open_location(replace(location, label=Path(location.path).name))
            error = wait_loaded(window, SCREENSHOT_TIMEOUT)
            if error is not None:
                raise ScreenshotError(error)
            folder = window.session.folder
            names = [n for n in (folder.timelines if folder is not None else {}) if character in (None, n)]
            window.show()
            for name in names:
                window.statusBar().clearMessage()  # the previous character's "No problems…" is not this one's
                show_telling_row(window, name)
                shots[name] = _grab_png(render(window))
        finally:
            window.close()
            window.deleteLater()
            qInstallMessageHandler(previous)
    return shots


def _grab_png(shot: QPixmap) -> bytes:
    """The window's rendering (:func:`inspector.app.render`) as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not shot.save(buffer, "PNG"):
        raise ScreenshotError("the window could not be rendered as PNG")
    buffer.close()
    return bytes(data.data())
