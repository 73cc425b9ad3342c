"""The fault regime's end-of-run summary (counts from every suite of ``tests/faults``)."""

from __future__ import annotations

from typing import Any

from tests.faults.harness import COUNTS, VIOLATIONS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print what the fault regime exercised in this run, and any invariant violation."""
    if not any(COUNTS.values()):
        return  # no fault-regime test ran
    c = {k: round(v) for k, v in COUNTS.items()}
    terminalreporter.write_sep("=", "fault regime")
    terminalreporter.write_line(
        f"fault regime: crash states {c['crash states']}, fault cases {c['fault cases']}, kills {c['kills']}, "
        f"fuzz examples {c['fuzz examples']}, soak seconds {c['soak seconds']}, violations {c['violations']}"
    )
    terminalreporter.write_line(
        f"  ({c['recovery crash states']} of the crash states during recovery; "
        f"{c['silent successes']} silent successes among the fault cases; "
        f"kill soak {c['kill soak seconds']} s, {c['acknowledged events']} acknowledged events)"
    )
    for message in VIOLATIONS[:20]:
        terminalreporter.write_line(f"  violation: {message}")
