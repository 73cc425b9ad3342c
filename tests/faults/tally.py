"""The fault regime's counters and its end-of-run summary, summed over every process that ran tests.

Each test process (the one pytest process, or each pytest-xdist worker) counts into
:data:`COUNTS` and :data:`VIOLATIONS`; a worker hands its tally to the controller when it ends
(:func:`worker_output` / :func:`merge`, called from ``tests/conftest.py``), and the process that
prints the terminal summary prints the sum (:func:`summary_lines`).

Only the standard library: ``tests/conftest.py`` imports this in the xdist controller, which
collects no test.
"""

from __future__ import annotations

from typing import Any

#: The key of a worker's tally in its ``workeroutput``.
OUTPUT_KEY = "fault_regime"

COUNTS: dict[str, float] = {
    "crash states": 0,
    "recovery crash states": 0,
    "fault cases": 0,
    "silent successes": 0,
    "kills": 0,
    "kill soak seconds": 0,
    "acknowledged events": 0,
    "fuzz examples": 0,
    "soak seconds": 0,
    "violations": 0,
}
VIOLATIONS: list[str] = []


def count(name: str, n: float = 1) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + n


def violation(message: str) -> None:
    """Record an invariant violation (the test asserts there are none at its end)."""
    COUNTS["violations"] += 1
    VIOLATIONS.append(message)


def worker_output() -> dict[str, Any]:
    """This process's tally, as a worker sends it to the controller (plain data: execnet)."""
    return {"counts": dict(COUNTS), "violations": list(VIOLATIONS)}


def merge(output: dict[str, Any]) -> None:
    """Add a worker's tally (:func:`worker_output`) to this process's."""
    for name, n in output.get("counts", {}).items():
        count(name, n)
    VIOLATIONS.extend(output.get("violations", []))


def summary_lines() -> list[str]:
    """What the fault regime exercised in this run, and any invariant violation; nothing when no
    fault-regime test ran."""
    if not any(COUNTS.values()):
        return []
    c = {k: round(v) for k, v in COUNTS.items()}
    lines = [
        f"fault regime: crash states {c['crash states']}, fault cases {c['fault cases']}, kills {c['kills']}, "
        f"fuzz examples {c['fuzz examples']}, soak seconds {c['soak seconds']}, violations {c['violations']}",
        f"  ({c['recovery crash states']} of the crash states during recovery; "
        f"{c['silent successes']} silent successes among the fault cases; "
        f"kill soak {c['kill soak seconds']} s, {c['acknowledged events']} acknowledged events)",
    ]
    lines += [f"  violation: {message}" for message in VIOLATIONS[:20]]
    return lines
