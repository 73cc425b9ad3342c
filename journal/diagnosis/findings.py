"""Collecting findings in a stable order, and the finding of each journal defect kind."""

from __future__ import annotations

import sys

from journal.diagnosis.values import MAX_FINDINGS_PER_CODE, worst
from journal.finding import FINDING_CODES, SEVERITIES, Advice, Finding
from journal.reader import Defect

_CODE_RANK = {code: i for i, code in enumerate(FINDING_CODES)}


class Findings:
    """Collects findings in a stable order (by code, then as added), at most N per code."""

    def __init__(self) -> None:
        self._items: list[tuple[int, int, Finding]] = []
        self._per_code: dict[str, int] = {}
        self._overflow: dict[str, list[str]] = {}

    def add(
        self,
        code: str,
        severity: str,
        message: str,
        *,
        event_id: str | None = None,
        file: str | None = None,
        line: int | None = None,
        advice: Advice | None = None,
    ) -> None:
        assert code in _CODE_RANK and severity in SEVERITIES, (code, severity)
        n = self._per_code.get(code, 0)
        self._per_code[code] = n + 1
        if n >= MAX_FINDINGS_PER_CODE:
            self._overflow.setdefault(code, []).append(severity)
            return
        finding = Finding(code, severity, message, event_id, file, line, advice)
        self._items.append((_CODE_RANK[code], len(self._items), finding))

    def has(self, code: str) -> bool:
        """Whether a finding of ``code`` was added."""
        return self._per_code.get(code, 0) > 0

    def result(self) -> list[Finding]:
        items = list(self._items)
        for code, severities in self._overflow.items():
            items.append(
                (
                    _CODE_RANK[code],
                    sys.maxsize,
                    Finding(code, worst(severities), f"… and {len(severities)} more {code} findings, not listed"),
                )
            )
        items.sort(key=lambda t: (t[0], t[1]))
        return [f for _, _, f in items]


DEFECT_FINDINGS = {
    "malformed": ("line.malformed", "warning"),
    "not_object": ("line.malformed", "warning"),
    "missing_event_id": ("line.malformed", "warning"),
    "torn_tail": ("line.torn_tail", "warning"),
    "glued": ("line.glued", "warning"),
    "invalid_utf8": ("line.invalid_utf8", "warning"),
    "duplicate_event_id": ("event.duplicate_id", "warning"),
    "unknown_type": ("event.unknown_type", "warning"),
}


def defect_message(d: Defect) -> str:
    """The defect in words, without quoting the line (journal lines hold private text)."""
    size = f"{d.length:,} bytes"
    if d.kind == "malformed":
        return f"line {d.line} is not valid JSON ({size}); replay skips it"
    if d.kind == "torn_tail":
        return (
            f"line {d.line} is an unterminated last line ({size}), torn by a crash during an append; "
            "the memory server glues its next event onto it and loses both"
        )
    if d.kind == "glued":
        return (
            f"line {d.line}: {d.message} (a crash tore an append and the next one was glued on); event "
            f"{d.recovered_event_id} was recovered, but the memory server's replay skips the whole line"
        )
    return f"line {d.line}: {d.message}"
