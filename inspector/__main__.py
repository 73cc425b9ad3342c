"""``python -m inspector``."""

from inspector.cli import run

run()
