"""The package boundary: journal/ stays Qt-free; the entry point answers."""

from __future__ import annotations

import subprocess
import sys


def test_importing_journal_loads_no_qt():
    code = "import sys, journal; print(sorted(m for m in sys.modules if m.startswith('PySide6')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_journal_imports_no_third_party_but_orjson_and_msgspec():
    # What msgspec itself imports (typing_extensions) comes with it.
    code = (
        "import sys; import msgspec; before=set(sys.modules); import journal; "
        "new={m.split('.')[0] for m in set(sys.modules)-before}; "
        "print(sorted(n for n in new if n not in sys.stdlib_module_names and n not in ('journal','orjson')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_version_flag():
    out = subprocess.run(
        [sys.executable, "-m", "inspector", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("memory-inspector ")
