"""The window's core stays importable without Qt (models and widgets build on it, not the reverse)."""

from __future__ import annotations

import subprocess
import sys

CORE_MODULES = (
    "export",
    "filtering",
    "jobs",
    "live",
    "loader",
    "location",
    "payloads",
    "prompter",
    "recent",
    "redaction",
    "replay_preview",
    "timeline",
    "timestamps",
    "text",
    "views",
    "vocabulary",
)


def test_core_modules_load_no_qt():
    imports = "; ".join(f"import inspector.core.{m}" for m in CORE_MODULES)
    code = f"import sys; {imports}; print(sorted(m for m in sys.modules if m.startswith('PySide6')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
