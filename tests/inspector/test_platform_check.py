"""The xcb pre-flight: it names the Debian/Ubuntu packages Qt's xcb plugin needs and lacks."""

from __future__ import annotations

import pytest

from inspector.platform_check import XCB_PACKAGES, missing_xcb_packages, uses_xcb, warn_missing_xcb_libraries


def _cache(libs: list[str]) -> str:
    lines = [f"{len(libs)} libs found in cache `/etc/ld.so.cache'"]
    lines += [f"\t{name} (libc6,x86-64) => /lib/x86_64-linux-gnu/{name}" for name in libs]
    return "\n".join(lines) + "\n"


ALL = [f"lib{lib}.so.0" for lib in XCB_PACKAGES.values()]


def test_a_complete_cache_misses_nothing() -> None:
    assert missing_xcb_packages(_cache(ALL)) == []


def test_the_missing_packages_are_named_and_printed(capsys: pytest.CaptureFixture[str]) -> None:
    libs = [n for n in ALL if not n.startswith(("libxcb-cursor.", "libxkbcommon-x11."))]
    env = {"DISPLAY": ":0"}
    missing = warn_missing_xcb_libraries(env, read_cache=lambda: _cache(libs), platform="linux")
    assert missing == ["libxkbcommon-x11-0", "libxcb-cursor0"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sudo apt install libxkbcommon-x11-0 libxcb-cursor0" in err


def test_libxcb_is_not_taken_for_libxcb_cursor() -> None:
    # "libxcb.so" is in every X11 cache; it must not count as "libxcb-cursor.so".
    assert "libxcb-cursor0" in missing_xcb_packages(_cache([*ALL[:6], "libxcb.so.1"]))


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({"DISPLAY": ":0"}, "linux", True),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, "linux", True),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux", False),
        ({}, "linux", False),  # no X display (a Wayland session, or none)
        ({"DISPLAY": ":0"}, "darwin", False),
    ],
)
def test_only_an_xcb_start_is_checked(env: dict[str, str], platform: str, expected: bool) -> None:
    assert uses_xcb(env, platform) is expected
    calls = []
    warn_missing_xcb_libraries(env, read_cache=lambda: calls.append(1) or _cache([]), platform=platform)
    assert bool(calls) is expected
