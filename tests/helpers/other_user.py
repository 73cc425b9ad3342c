"""Run this tree's code in a child Python as another, unprivileged user (``nobody`` when we are root).

Some tests need the permission checks that root bypasses (a folder that cannot be listed), so
when the suite runs as root their child drops to ``nobody``. Whether ``nobody`` can do that
depends on where the suite happens to live, not on the code under test: the interpreter may sit
under a private (``0700``) home, the clone under a private temp folder. An unreadable folder on
``PYTHONPATH`` is silently ignored, so the child then either fails with empty output or, worse,
imports an *installed* copy of the package and tests that instead of this tree.

:func:`run_python_as_other_user` therefore first runs a probe with the same interpreter,
environment, working folder and user, and skips with the precise reason unless that user can run
the interpreter, imports every package from this tree, and can read the folders the test names.
Only then does it run the real command, so a test that gets that far fails if the code misbehaves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

TREE = Path(__file__).resolve().parents[2]
"""The root of the tree under test (the folder holding ``journal/`` and ``inspector/``)."""

PACKAGES = ("journal", "inspector")

_PROBE = r"""
import importlib, json, os, sys
ask = json.loads(sys.argv[1])
seen = {"euid": os.geteuid(), "groups": os.getgroups(), "modules": {}, "unreadable": {}}
for name in ask["packages"]:
    try:
        seen["modules"][name] = {"file": importlib.import_module(name).__file__}
    except Exception as e:
        seen["modules"][name] = {"error": f"{type(e).__name__}: {e}"}
for path in ask["reads"]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").close()
    except OSError as e:
        seen["unreadable"][path] = f"{type(e).__name__}: {e.strerror}"
print(json.dumps(seen))
"""


@dataclass(frozen=True)
class OtherUser:
    """Who the child runs as: ``uid``/``gid`` to switch to, or ``None`` to stay ourselves (not root)."""

    name: str
    uid: int | None
    gid: int | None


def other_user() -> OtherUser:
    """``nobody`` when we are root (root's permission overrides would hide what is tested), else us."""
    import pwd  # POSIX only: imported here so that collecting the tests works everywhere

    euid = os.geteuid()
    if euid != 0:
        try:
            return OtherUser(pwd.getpwuid(euid).pw_name, None, None)
        except KeyError:
            return OtherUser(str(euid), None, None)
    try:
        pw = pwd.getpwnam("nobody")
    except KeyError:
        return OtherUser("65534", 65534, 65534)
    return OtherUser("nobody", pw.pw_uid, pw.pw_gid)


def _run(
    cmd: list[str], user: OtherUser, env: Mapping[str, str], cwd: Path, timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """``cmd`` as ``user``: subprocess switches group, clears the extra groups, then the user, before the exec."""
    if user.uid is None:
        return subprocess.run(cmd, capture_output=True, env=dict(env), cwd=cwd, timeout=timeout, check=False)
    return subprocess.run(
        cmd,
        capture_output=True,
        env=dict(env),
        cwd=cwd,
        timeout=timeout,
        check=False,
        user=user.uid,
        group=user.gid,
        extra_groups=[],
    )


def _last_line(data: bytes) -> str:
    lines = data.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""


def require_other_user_runs_this_tree(
    *,
    env: Mapping[str, str],
    cwd: Path,
    reads: Sequence[Path] = (),
    timeout: float = 120,
    tree: Path = TREE,
    packages: Sequence[str] = PACKAGES,
) -> OtherUser:
    """Skip the calling test unless :func:`other_user` can run ``sys.executable`` here, with ``env``
    (whose ``PYTHONPATH`` must name ``tree``) in ``cwd``, imports each of ``packages`` from ``tree``,
    and can read each of ``reads``. Returns that user."""
    user = other_user()
    python = sys.executable
    cmd = [python, "-c", _PROBE, json.dumps({"packages": list(packages), "reads": [str(p) for p in reads]})]
    try:
        proc = _run(cmd, user, env, cwd, timeout)
    except OSError as e:  # the child's failed exec (or switch of user) is raised here, in the parent
        if e.filename is not None:
            pytest.skip(f"user {user.name} cannot run {python}: {e.strerror}")
        pytest.skip(f"cannot switch to user {user.name}: {e}")
    try:
        seen = json.loads(proc.stdout)
    except ValueError:
        seen = None
    if proc.returncode != 0 or not isinstance(seen, dict):
        detail = _last_line(proc.stderr) or f"exit status {proc.returncode}, no output"
        pytest.skip(f"user {user.name} cannot run {python}: {detail}")
    if user.uid is not None and seen["euid"] != user.uid:
        pytest.skip(f"could not switch to user {user.name}: the child runs as uid {seen['euid']}")
    here = tree.resolve()
    for name in packages:
        got = seen["modules"][name]
        if "error" in got:
            pytest.skip(
                f"user {user.name} running {python} cannot import {name} from this tree ({here}): {got['error']}"
            )
        where = got["file"]
        if where is None or not Path(where).resolve().is_relative_to(here):
            pytest.skip(f"user {user.name} running {python} imports {name} from {where}, not this tree ({here})")
    for path, error in seen["unreadable"].items():
        pytest.skip(f"user {user.name} cannot read {path}: {error}")
    return user


def run_python_as_other_user(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    reads: Sequence[Path] = (),
    timeout: float = 120,
    tree: Path = TREE,
    packages: Sequence[str] = PACKAGES,
) -> subprocess.CompletedProcess[bytes]:
    """``sys.executable *args`` run as :func:`other_user` on this tree's code, in ``cwd``.

    ``env`` is used with ``PYTHONPATH`` set to ``tree`` alone (whatever is installed) and no
    bytecode written. The calling test is skipped, with the reason, when that user cannot run
    this tree here (see :func:`require_other_user_runs_this_tree`); otherwise the completed
    process is returned for the test to judge."""
    child_env = {**env, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    user = require_other_user_runs_this_tree(
        env=child_env, cwd=cwd, reads=reads, timeout=timeout, tree=tree, packages=packages
    )
    return _run([sys.executable, *args], user, child_env, cwd, timeout)
