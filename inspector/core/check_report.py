"""What ``check`` says about a diagnosis, as text: the ``--json`` document (schema 1) and the
human report. One home for both, used by ``check``, the window's findings export and the support
bundle (Qt-free; the terminal and the exit codes stay in :mod:`inspector.check_cmd`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from inspector.core import output
from inspector.core.advice import finding_text
from inspector.core.cloud_report import KINDS as CLOUD_KINDS
from inspector.core.server_start_text import for_character
from inspector.core.text import count, one_line, size_text
from journal.diagnosis import CharacterDiagnosis, Diagnosis, EventList, Finding
from journal.diagnosis.values import is_server_start_finding
from journal.finding import SEVERITIES

PROG = "memory-inspector check"


# -- words shared with the window ------------------------------------------------------------------

#: The keys of a character's ``counts`` (:meth:`CharacterDiagnosis.counts`), in the order ``check``
#: prints them: the event states, then the damaged lines (``defects``).
COUNT_KEYS = ("applied", "pending", "blocked", "orphaned", "suspect", "defects")

#: The word the window shows beside each count: the state's name (a damaged line's row state is
#: ``damaged``). ``held`` and ``parked`` are reasons beside a state, never counted as one.
COUNT_WORDS = {
    "applied": "applied",
    "pending": "pending",
    "blocked": "blocked",
    "orphaned": "orphaned",
    "suspect": "suspect",
    "defects": "damaged",
}


def count_items(counts: dict[str, int], keys: Iterable[str] = COUNT_KEYS, *, always: Iterable[str] = ()) -> list[str]:
    """``"N word"`` for each of ``keys`` whose count is not zero (or that is in ``always``), in order:
    the diagnosis's own counts, never a sum of two (``10 applied``, ``1 pending``, ``1 blocked``)."""
    shown = set(always)
    return [f"{counts.get(k, 0):,} {COUNT_WORDS[k]}" for k in keys if counts.get(k, 0) or k in shown]


def severity_totals(findings: Iterable[Finding]) -> dict[str, int]:
    """How many findings there are of each severity (``info``, ``warning``, ``error``)."""
    total = dict.fromkeys(SEVERITIES, 0)
    for f in findings:
        total[f.severity] += 1
    return total


def severity_text(total: dict[str, int]) -> str:
    """``1 error, 0 warnings, 2 info``: :func:`severity_totals` as ``check``'s result line says it."""
    return f"{count(total['error'], 'error')}, {count(total['warning'], 'warning')}, {total['info']} info"


def report_order(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in the order ``check`` prints them and the window's Findings table lists them (the
    one ordering of both, issue 27 item 5): errors, then warnings, then info; within a severity,
    those about the memory server's next start first (:func:`is_server_start_finding`), then in
    the diagnosis's own stable order (by code, then as found)."""
    rank = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    return sorted(findings, key=lambda f: (rank[f.severity], not is_server_start_finding(f)))


def health_text(c: CharacterDiagnosis) -> str:
    """A character's health and its findings per severity: ``error (1 error, 0 warnings, 1 info)``."""
    return f"{c.health} ({severity_text(severity_totals(c.findings))})"


# -- JSON ----------------------------------------------------------------------------------------


def dumps_json(diagnosis: Diagnosis, *, all_events: bool = False) -> bytes:
    """The ``--json`` document (schema 1) as the CLI writes JSON (:func:`inspector.core.output.dumps`:
    UTF-8, indented by two spaces, newline-terminated, ASCII-escaped where orjson refuses)."""
    return output.dumps(diagnosis.to_json(all_events))


#: How many events the streaming writers encode and write at a time.
EVENTS_PER_PIECE = 10_000


def iter_json(diagnosis: Diagnosis, *, all_events: bool = False) -> Iterator[bytes]:
    """The ``--json`` document in pieces: the same bytes as :func:`dumps_json`, but each
    character's events are encoded :data:`EVENTS_PER_PIECE` at a time, so that the document of a
    million events (``--all-events``) is never held in memory whole, nor its million dicts
    (:func:`inspector.core.output.iter_json`).

    A string that is not valid Unicode (a lone surrogate, from an escaped journal line) makes
    :func:`dumps_json` escape the whole document, so then the whole document is made that way, here
    too: the events' ids and types are checked first, in C, since the events are read only once.
    """
    listings: list[Iterator[dict[str, Any]]] = []
    for c in diagnosis.characters:
        if all_events and isinstance(c.events, EventList):
            # Reasons come from the diagnosis's own closed set: only ids and types can be odd.
            valid = _unicode(c.events.event_ids()) and _unicode(c.events.types())
            listings.append(c.listed_json(all_events))
        else:
            listed = list(c.listed_events(all_events))
            valid = _unicode(f"{e.event_id}{e.type}{e.reason or ''}" for e in listed)
            listings.append(e.to_json() for e in listed)
        if not valid:
            yield dumps_json(diagnosis, all_events=all_events)
            return
    doc = diagnosis.to_json(all_events, with_events=False)
    for c_doc, items in zip(doc["characters"], listings, strict=True):
        c_doc["events"] = output.Streamed(items, per_piece=EVENTS_PER_PIECE)
    yield from output.iter_json(doc, whole=lambda: diagnosis.to_json(all_events))


def _unicode(strings: Iterable[str]) -> bool:
    """Whether every string is valid Unicode (no lone surrogate), checked in C."""
    try:
        "".join(strings).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def write_json(diagnosis: Diagnosis, out: TextIO, *, all_events: bool = False) -> None:
    """The ``--json`` document written to ``out`` (:func:`iter_json`'s pieces)."""
    output.write(out, iter_json(diagnosis, all_events=all_events))


# -- for people ----------------------------------------------------------------------------------


def _finding_line(f: Finding) -> str:
    where = []
    if f.file:
        where.append(f.file)
    if f.event_id:
        where.append(f"event {f.event_id}")
    suffix = f"  [{', '.join(where)}]" if where else ""
    return f"    {f.severity:<7}  {f.code:<24}  {one_line(finding_text(f, 'cli'))}{one_line(suffix)}"


def character_block(c: CharacterDiagnosis, *, all_events: bool = False) -> Iterator[str]:
    """The lines printed for one character, one at a time (a timeline can be a million lines)."""
    counts = c.counts()
    yield f"{one_line(c.name)}"
    if c.journal.present:
        yield f"  journal   {c.journal.lines:,} lines, {c.journal.events:,} events, {size_text(c.journal.bytes)}"
    else:
        yield "  journal   none" + (" (views only: a cloud-save export)" if c.views_only else "")
    if c.server_start is not None or c.not_applicable is not None:
        yield from server_start_lines(c)
    yield "  guarded replay (memory-inspector, stricter than the server)"
    s = c.sentinel
    where = f" at event #{s.index}" if s.index is not None else ""
    ident = f" {s.event_id}" if s.event_id else ""
    yield f"  sentinel  {s.state}{where}{one_line(ident)}"
    yield (
        "  events    "
        + " · ".join(f"{counts[k]:,} {k}" for k in COUNT_KEYS if k != "defects")
        + f" · {count(counts['defects'], 'defect')}"
    )
    if c.blocked is not None:
        b = c.blocked
        yield (
            f"  blocked   event #{b.index} {one_line(b.type)}: {b.reason}: "
            f"{one_line(c.blocked_message or b.message or '')}"
        )
    if all_events:
        yield "  timeline"
        for e in c.listed_json(all_events=True):
            reason = f" ({e['reason']})" if e["reason"] else ""
            what = f"{one_line(e['type'])}{reason}  {one_line(e['event_id'])}"
            yield f"    #{e['index']:<6} line {e['line']:<7} {e['state']:<8} {what}"
    if c.findings:
        # Errors first (report_order); within a severity, those about the server's next start first.
        yield f"  findings ({len(c.findings)})"
        yield from (_finding_line(f) for f in report_order(c.findings))
    else:
        yield "  findings  none: healthy"


def server_start_lines(c: CharacterDiagnosis) -> Iterator[str]:
    """What the memory server's next start does: printed first, since it happens unless someone acts
    (:mod:`inspector.core.server_start_text`, the window's words; its other ``server.*`` findings
    are listed under the character's findings)."""
    for line in for_character(c, "cli").plain(indent="  "):
        yield f"  {one_line(line)}"


def write_human(diagnosis: Diagnosis, out: TextIO, *, all_events: bool = False) -> None:
    """One block per character, blank lines between blocks, written as it is made (a timeline
    can be a million lines: at most :data:`EVENTS_PER_PIECE` of them are held at a time)."""
    kinds = {"root": "memory root", "character": "character folder"}
    if diagnosis.cloud_layout is not None:
        kind = CLOUD_KINDS.get(diagnosis.cloud_layout, diagnosis.cloud_layout)
        kind = f"zip of a {kind}" if diagnosis.is_zip else kind
    else:
        kind = "zip export" if diagnosis.is_zip else kinds.get(diagnosis.kind, diagnosis.kind)
    n = len(diagnosis.characters)
    header = [f"{PROG}: {one_line(diagnosis.path)} ({kind}, {count(n, 'character')})"]
    if diagnosis.server is not None:
        header.append(f"server: {diagnosis.server.state}: {one_line(diagnosis.server.message)}")
    for finding in report_order(diagnosis.findings):
        header.append(_finding_line(finding).strip())
    worst = diagnosis.worst_severity()
    total = severity_totals(f for c in diagnosis.characters for f in c.findings)
    result = f"result: {'OK' if worst == 'info' else 'PROBLEMS FOUND'} ({severity_text(total)})"
    blocks: Iterable[Iterable[str]] = itertools.chain(
        [header], (character_block(c, all_events=all_events) for c in diagnosis.characters), [[result]]
    )
    sep = ""
    for block in blocks:
        lines = iter(block)
        while piece := list(itertools.islice(lines, EVENTS_PER_PIECE)):
            _write(out, sep + "\n".join(piece))
            sep = "\n"
        sep = "\n\n"
    _write(out, "\n")


def _write(out: TextIO, text: str) -> None:
    """``text`` to ``out``, backslash-escaped where ``out``'s encoding cannot take it."""
    try:
        out.write(text)
    except UnicodeEncodeError:
        out.write(text.encode("ascii", "backslashreplace").decode("ascii"))
