"""The one place that locates bundled resources (icons, stylesheet, the sample memory root)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def path(*parts: str) -> Path:
    """Absolute path of a bundled resource."""
    return ROOT.joinpath(*parts)
