"""Before Qt starts on X11: which system libraries its xcb platform plugin needs and are missing.

Qt aborts with a terse "could not load the Qt platform plugin" when one is missing, and does not say
which. This check names the Debian/Ubuntu packages instead (the same list ``.ci/run`` installs). It
only reads the dynamic linker's cache; it never stops the program.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

#: Debian/Ubuntu package → the library it provides (``lib<name>.so``), for Qt's xcb platform.
XCB_PACKAGES = {
    "libgl1": "GL",
    "libegl1": "EGL",
    "libxkbcommon0": "xkbcommon",
    "libxkbcommon-x11-0": "xkbcommon-x11",
    "libfontconfig1": "fontconfig",
    "libdbus-1-3": "dbus-1",
    "libxcb-cursor0": "xcb-cursor",
    "libxcb-icccm4": "xcb-icccm",
    "libxcb-image0": "xcb-image",
    "libxcb-keysyms1": "xcb-keysyms",
    "libxcb-randr0": "xcb-randr",
    "libxcb-render-util0": "xcb-render-util",
    "libxcb-shape0": "xcb-shape",
    "libxcb-xinerama0": "xcb-xinerama",
    "libxcb-xkb1": "xcb-xkb",
    "libxcb-xfixes0": "xcb-xfixes",
}


def linker_cache() -> str | None:
    """``ldconfig -p``'s listing (``None`` when it cannot be read: then nothing is checked)."""
    for tool in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        try:
            done = subprocess.run([tool, "-p"], capture_output=True, text=True, timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and done.stdout:
            return done.stdout
    return None


def missing_xcb_packages(cache: str) -> list[str]:
    """The packages of :data:`XCB_PACKAGES` whose library the linker cache does not list."""
    names = {line.split()[0] for line in cache.splitlines()[1:] if line.strip()}
    return [pkg for pkg, lib in XCB_PACKAGES.items() if not any(n.startswith(f"lib{lib}.so") for n in names)]


def uses_xcb(environ: dict[str, str] | os._Environ[str], platform: str = sys.platform) -> bool:
    """Whether Qt will start on its xcb platform: Linux, ``QT_QPA_PLATFORM`` unset or ``xcb``, and an
    X display (Wayland sessions without ``DISPLAY`` use another plugin)."""
    chosen = environ.get("QT_QPA_PLATFORM", "")
    return platform.startswith("linux") and chosen in ("", "xcb") and bool(environ.get("DISPLAY"))


def warn_missing_xcb_libraries(
    environ: dict[str, str] | os._Environ[str] = os.environ,
    *,
    read_cache: Callable[[], str | None] = linker_cache,
    platform: str = sys.platform,
) -> list[str]:
    """Print one line naming the missing packages (if any, when Qt will use xcb); return them."""
    if not uses_xcb(environ, platform):
        return []
    cache = read_cache()
    if cache is None:
        return []
    missing = missing_xcb_packages(cache)
    if missing:
        print(
            "memory-inspector: Qt's xcb platform needs system libraries this machine lacks; on Debian/Ubuntu: "
            f"sudo apt install {' '.join(missing)}",
            file=sys.stderr,
        )
    return missing
