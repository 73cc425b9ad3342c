"""Every module of ``journal/`` imports as the very first ``journal`` import of a process.

A circular import (``journal.inputs`` needing the diagnosis, whose package needs
``journal.inputs``) shows only when the cycle is entered from one side: ``import journal.inputs``
failed while ``import journal.diagnosis`` worked. So each module is imported alone, in a process
that has imported no ``journal`` module before.

One child interpreter does it for all of them: it imports the third-party and standard modules the
package names, then the package ``journal`` itself, then forks once per module and imports that
module in the fork. Importing ``journal.X`` first runs ``journal/__init__.py`` before anything of
``X`` (Python imports a module's parents first), so a fork that starts with only the package's own
``__init__`` done is where every fresh ``import journal.X`` stands at that moment; the package
import alone is the entry of ``journal``. The forks save the interpreter's start, the libraries and
the package's own imports, so the whole run stays within seconds. Where ``fork`` is missing, each
module gets an interpreter of its own.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JOURNAL = ROOT / "journal"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = sorted(_module_name(p) for p in JOURNAL.rglob("*.py") if "__pycache__" not in p.parts)


def _libraries() -> list[str]:
    """The top-level non-``journal`` modules that ``journal/`` imports by name."""
    names: set[str] = set()
    for path in JOURNAL.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return sorted(names - {"journal", "__future__"})


#: Run in the child: argv[1] is the libraries, argv[2:] the modules; prints one line per module,
#: "ok NAME" or "fail NAME: the last line of its traceback".
_CHILD = r"""
import importlib, os, sys, traceback

libraries, modules = sys.argv[1].split(","), sys.argv[2:]
for name in libraries:
    try:
        importlib.import_module(name)
    except ImportError:
        pass  # an optional library (a platform's own module); the fork imports it if it must
assert not any(m == "journal" or m.startswith("journal.") for m in sys.modules)

def first_import(name):
    try:
        importlib.import_module(name)
    except BaseException:
        return "fail " + name + ": " + traceback.format_exc().strip().splitlines()[-1]
    return "ok " + name

def start(name):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.write(write_end, first_import(name).encode("utf-8", "replace"))
        os._exit(0)
    os.close(write_end)
    return name, pid, read_end

def finish(name, pid, read_end):
    with os.fdopen(read_end, "rb") as answer:
        line = answer.read().decode("utf-8")
    _, status = os.waitpid(pid, 0)
    print(line or "fail " + name + ": the fork died (status " + str(status) + ")", flush=True)

# A few forks at a time (one per core): each answer is one short line, far below a pipe's buffer,
# so a fork never waits for its reader.
running = []
# Every ``import journal.X`` runs the package's __init__ first: done once, before the forks.
package = first_import("journal")
print(package, flush=True)
if not package.startswith("ok"):
    modules = []
    for name in sys.argv[2:]:
        if name != "journal":
            print("fail " + name + ": import journal failed first", flush=True)
modules = [m for m in modules if m != "journal"]

for name in modules:
    if not hasattr(os, "fork"):
        print("nofork " + name, flush=True)
        continue
    running.append(start(name))
    if len(running) >= min(4, os.cpu_count() or 1):
        finish(*running.pop(0))
for started in running:
    finish(*started)
"""


@pytest.fixture(scope="module")
def first_imports() -> dict[str, str]:
    """What importing each module first gave: ``"ok"`` or its error."""
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, ",".join(_libraries()), *MODULES],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    results: dict[str, str] = {}
    for line in run.stdout.splitlines():
        word, _, rest = line.partition(" ")
        name, _, error = rest.partition(": ")
        if word == "nofork":  # no fork on this platform: an interpreter of its own
            alone = subprocess.run(
                [sys.executable, "-c", f"import {name}"], capture_output=True, text=True, cwd=ROOT
            )
            results[name] = "ok" if alone.returncode == 0 else alone.stderr.strip().splitlines()[-1]
        else:
            results[name] = "ok" if word == "ok" else error
    return results


def test_every_module_is_listed():
    assert "journal.inputs" in MODULES and "journal.diagnosis" in MODULES
    assert len(MODULES) == len(set(MODULES))


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_first(first_imports: dict[str, str], module: str):
    answer = first_imports.get(module)
    assert answer == "ok", f"import {module} as the first journal import: {answer}"
