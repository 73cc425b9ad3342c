"""The fault regime's end-of-run summary (counts from every suite of ``tests/faults``)."""

from __future__ import annotations

from typing import Any

from tests.faults.harness import COUNTS, VIOLATIONS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not any(COUNTS.values()):
        return  # no fault-regime test ran
    c = {k: int(v) if k != "soak seconds" else round(v) for k, v in COUNTS.items()}
    terminalreporter.write_sep("=", "fault regime")
    terminalreporter.write_line(
        f"fault regime: crash states {c['crash states']}, fault cases {c['fault cases']}, "
        f"kills {c['kills']}, fuzz examples {c['fuzz examples']}, soak seconds {c['soak seconds']}, "
        f"violations {c['violations']}, silent successes {c['silent successes']}"
    )
    for message in VIOLATIONS[:20]:
        terminalreporter.write_line(f"  violation: {message}")
