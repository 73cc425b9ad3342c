"""The harness's premise: every filesystem effect of ``journal/`` on a memory folder goes through
``journal/fs.py``, so the fault hook sees (and can fail or crash) each of them.

An AST scan of every other module of the package looks for calls that change the filesystem.
Effects confined to private temp folders the package creates for itself are allowed by name
below: the dry run's scratch copy (created, filled and removed around a replay that itself writes
through ``fs`` with ``durable=False``), and the diagnosis of a ``.zip`` export, extracted to a
private temp folder. A fault there cannot touch a memory folder; it surfaces as an exception of
``dry_run`` / ``diagnose``. Anything else is a bypass the crash and fault suites cannot see.
"""

from __future__ import annotations

import ast
from pathlib import Path

import journal

PACKAGE = Path(journal.__file__).parent

#: ``module:function`` → why its direct filesystem effects are allowed.
ALLOWED = {
    "dryrun:_copy_for_replay": "builds the dry run's scratch copy in a private temp folder",
    "dryrun:_copy_entry": "builds the dry run's scratch copy in a private temp folder",
    "dryrun:dry_run": "creates the scratch root inside its TemporaryDirectory",
    "stores:FolderStore.save_shard": "durable=False only: the scratch copy's archive folder",
    "inputs:extract_zip": "extracts a .zip export into a fresh folder (check: private temp; replay: the chosen one)",
    "chat.snapshot:_copy": "copies time_indexed.db and its -journal/-wal/-shm into its own private temp folder",
    "chat.snapshot:snapshot": "removes that private temp folder",
    "recorded:remake_refused": "re-makes a bundle's refused inputs inside the check's private copy of it",
    "recorded:_remake_folder_link": "re-makes a bundle's linked character folder in that private copy",
    "cloudsave.dbhash:shadow_sha256": "removes the private temp folder of its shadow copy of a unit's db",
    "cloudsave.download:_scratch_copy": "copies the local folder into the download preview's private temp folder",
    "cloudsave.download:apply_download": "applies a download to that scratch copy only (never to a user's folder)",
    "cloudsave.download:preview_download": "removes the preview's private temp folder",
    "fixtures.cloudunit:write_server_json": "the fixture builder writes a cloud-save unit as the server does",
    "fixtures.cloudunit:upload": "the fixture builder uploads a test folder into a cloud-save root",
    "fixtures.cloudunit:download": "the fixture builder applies a download to a test folder, as the server does",
    "runtime:probe_lock_file": "opens the launcher lock read-only to probe it (outside the data root)",
    "fixtures.cases.files:outbox_backlog": "the fixture builder writes an outbox as the server does (fixtures only)",
    "fixtures.lock:server_lock_held": "the fixture builder holds a launcher lock in a test's runtime folder",
    "fixtures.registry:build_sample": "the fixture builder creates the sample's memory root",
}

OS_EFFECTS = {
    "replace",
    "rename",
    "renames",
    "write",
    "pwrite",
    "fsync",
    "fdatasync",
    "unlink",
    "remove",
    "rmdir",
    "removedirs",
    "mkdir",
    "makedirs",
    "truncate",
    "ftruncate",
    "symlink",
    "link",
    "chmod",
    "chown",
    "utime",
    "open",
    "fdopen",
}
PATH_EFFECTS = {"write_bytes", "write_text", "mkdir", "unlink", "rmdir", "touch", "symlink_to", "hardlink_to", "chmod"}


def _effects(tree: ast.Module) -> list[tuple[str, int, str]]:
    """``(enclosing function qualname, line, call)`` of each filesystem-changing call."""
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                what = _describe(child)
                if what is not None:
                    found.append((".".join(scope) or "<module>", child.lineno, what))
            visit(child, scope)

    visit(tree, [])
    return found


def _describe(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        if f.value.id == "os" and f.attr == "open" and len(call.args) > 1 and _read_only_flags(call.args[1]):
            return None
        if f.value.id == "os" and f.attr in OS_EFFECTS:
            return f"os.{f.attr}"
        if f.value.id == "shutil":
            return f"shutil.{f.attr}"
    if isinstance(f, ast.Attribute) and f.attr in PATH_EFFECTS:
        return f".{f.attr}()"
    if isinstance(f, ast.Name) and f.id == "open":
        mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
        if mode is None or (
            isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) <= set("rbt")
        ):
            return None  # read-only
        return "open(write)"
    return None


def _read_only_flags(flags: ast.expr) -> bool:
    """``os.O_RDONLY``, or a module constant named ``_O_RDONLY`` (``os.O_RDONLY | O_CLOEXEC``)."""
    if isinstance(flags, ast.Attribute) and isinstance(flags.value, ast.Name):
        return flags.value.id == "os" and flags.attr == "O_RDONLY"
    return isinstance(flags, ast.Name) and flags.id == "_O_RDONLY"


def test_every_filesystem_effect_of_the_journal_package_goes_through_fs():
    bypasses = []
    for module in sorted(PACKAGE.rglob("*.py")):  # subpackages too (``journal.diagnosis``)
        name = ".".join(module.relative_to(PACKAGE).with_suffix("").parts)
        if name == "fs":
            continue
        for scope, line, what in _effects(ast.parse(module.read_text(encoding="utf-8"))):
            if f"{name}:{scope}" not in ALLOWED:
                bypasses.append(f"journal/{module.relative_to(PACKAGE)}:{line} {scope}: {what}")
    assert not bypasses, "filesystem effects outside journal/fs.py:\n" + "\n".join(bypasses)


def test_the_scan_sees_a_bypass():
    tree = ast.parse(
        "import os, shutil\ndef f(p):\n    os.replace(p, p)\n    shutil.copy(p, p)\n"
        "    open(p, 'ab')\n    open(p, 'rb')\n    p.write_text('x')\n"
        "    os.open(p, os.O_RDONLY)\n    os.open(p, _O_RDONLY)\n    os.open(p, os.O_WRONLY)\n    os.open(p, flags)\n"
    )
    assert [w for _, _, w in _effects(tree)] == [
        "os.replace",
        "shutil.copy",
        "open(write)",
        ".write_text()",
        "os.open",
        "os.open",
    ]


def test_the_read_only_open_constant_is_read_only():
    import os

    from journal import log

    assert log._O_RDONLY & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND) == 0
