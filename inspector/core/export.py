"""Rows and findings as text: the one home of what text a timeline row shows (the table, a copy,
an export) and of the copy and export formats.

- A row's cells (:func:`cell_text`, :func:`summary_text`) are what the timeline table paints;
  the model reads them from here.
- TSV (the clipboard): the columns shown, in the order shown, a header line first; a tab, a
  newline, a carriage return or a backslash inside a cell is written as ``\\t``, ``\\n``, ``\\r``,
  ``\\\\`` (:func:`tsv_cell`), so one row is always one line.
- CSV: the same cells, quoted by the :mod:`csv` module.
- NDJSON and "Copy as JSON": the records: an event's journal line as the reader has it, a damaged
  line as ``{"damaged_line": N, "kind": …, "offset": …, "text": …}`` (its text as UTF-8 with
  invalid bytes replaced).
- Findings: what ``check`` prints for the character, as JSON (schema 1) or as text, by
  :mod:`inspector.check_cmd`'s own functions.

Redaction (the window's, :mod:`inspector.core.redaction`) applies to all of them: a summary is
made redacted, an event's record has its text and chat values replaced
(:func:`~inspector.core.redaction.redact_tree`), and a damaged line's text is replaced whole
(:func:`~inspector.core.redaction.damaged_token`), in the cells, the records and the findings'
messages that quote it.

Nothing here holds Qt: the writers run in a worker, check a cancel token between chunks and
report progress.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

# The one home of check's JSON document and text report (a command module, but Qt-free).
from inspector.core.check_report import dumps_json, write_human
from inspector.core.jobs import CancelToken
from inspector.core.payloads import SUMMARY_LIMIT, RecordReader, record_summary
from inspector.core.redaction import damaged_token, redact_tree
from inspector.core.timeline import DEFECT_TEXT, UNCHECKED, CharacterTimeline, Row, defect_summary
from inspector.core.timestamps import format_ts
from journal import fs
from journal.codec import loads_exact
from journal.diagnosis import CharacterDiagnosis, Diagnosis, EventInfo
from journal.events import JOURNAL_NAME

#: The timeline's columns (the table's headers).
COLUMNS = ("#", "Time", "Type", "Entry", "Summary", "State")
COL_INDEX, COL_TIME, COL_TYPE, COL_ENTRY, COL_SUMMARY, COL_STATE = range(len(COLUMNS))

#: A row state in words.
STATE_LABELS = {
    "applied": "applied",
    "pending": "pending",
    "blocked": "blocked",
    "orphaned": "orphaned",
    "suspect": "suspect",
    "damaged": "damaged line",
    "loading": "…",
}

#: Rows read back from the journal at a time (the cancel token is checked between chunks).
CHUNK_ROWS = 5000

#: Export formats of the rows, and of the findings.
ROW_FORMATS = ("csv", "ndjson")
FINDING_FORMATS = ("json", "text")

Progress = Callable[[int, int], None]

_BOM = b"\xef\xbb\xbf"


# -- one row's cells -------------------------------------------------------------------------------


def cell_text(row: Row, state: str, col: int) -> str:
    """The text of column ``col`` of a row (not :data:`COL_SUMMARY`: see :func:`summary_text`)."""
    if isinstance(row, EventInfo):
        if col == COL_INDEX:
            return str(row.index)
        if col == COL_TIME:
            return format_ts(row.ts)
        if col == COL_TYPE:
            return row.type or "(no type)"
        if col == COL_ENTRY:
            return row.entry or ""
        if col == COL_STATE:
            label = STATE_LABELS.get(state, state)
            # A row changed since the last diagnosis shows no reason: the one it had may not hold any more.
            return f"{label} · {row.reason}" if row.reason and state not in ("loading", UNCHECKED) else label
        return ""
    if col == COL_TIME:
        return f"line {row.line}"
    if col == COL_TYPE:
        return f"⚠ {DEFECT_TEXT.get(row.kind, row.kind)}"
    if col == COL_STATE:
        return STATE_LABELS["damaged"]
    return ""


def summary_text(timeline: CharacterTimeline, ref: int, data: bytes | None, *, redact: bool) -> str:
    """The summary column of row ``ref``; ``data`` is an event's journal line (read with
    ``limit=SUMMARY_LIMIT``; unused for a damaged line)."""
    if ref < 0:
        return defect_summary(timeline.defects[~ref], redact=redact)
    return record_summary(timeline.events.type(ref), data, redact=redact)


def tsv_cell(text: str) -> str:
    """A cell for TSV: backslash, tab, newline and carriage return escaped (one row, one line)."""
    if "\\" in text:
        text = text.replace("\\", "\\\\")
    if "\t" in text or "\n" in text or "\r" in text:
        text = text.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return text


# -- the rows to copy or export ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RowSet:
    """Rows of one timeline to copy or export, as they were when asked for.

    Attributes:
        timeline: the character's timeline.
        refs: the rows' refs in journal order (a copy: live appends do not change it).
        columns: the columns shown, in the order shown (logical column numbers).
        redact: whether texts are redacted.
    """

    timeline: CharacterTimeline
    refs: Sequence[int]
    columns: tuple[int, ...] = tuple(range(len(COLUMNS)))
    redact: bool = False

    @property
    def journal(self) -> Path:
        return Path(self.timeline.path) / JOURNAL_NAME

    def header(self) -> list[str]:
        return [COLUMNS[c] for c in self.columns]


def _chunks(rows: RowSet, token: CancelToken | None, progress: Progress | None) -> Iterator[Sequence[int]]:
    total = len(rows.refs)
    for start in range(0, total, CHUNK_ROWS):
        if token is not None:
            token.check()
        yield rows.refs[start : start + CHUNK_ROWS]
        if progress is not None:
            progress(min(total, start + CHUNK_ROWS), total)


def iter_cells(
    rows: RowSet, token: CancelToken | None = None, progress: Progress | None = None
) -> Iterator[list[str]]:
    """Each row's cells (:attr:`RowSet.columns`), reading summaries from the journal by chunk.

    Raises:
        Cancelled: ``token`` was cancelled (checked between chunks).
    """
    tl = rows.timeline
    reader = RecordReader(rows.journal)
    summaries = COL_SUMMARY in rows.columns
    for refs in _chunks(rows, token, progress):
        raw = reader.raw_records((tl.offset(r) for r in refs if r >= 0), limit=SUMMARY_LIMIT) if summaries else {}
        for r in refs:
            row, state = tl.row(r), tl.state(r)
            yield [
                summary_text(tl, r, raw.get(tl.offset(r)), redact=rows.redact)
                if c == COL_SUMMARY
                else cell_text(row, state, c)
                for c in rows.columns
            ]


def tsv_text(rows: RowSet, token: CancelToken | None = None, progress: Progress | None = None) -> str:
    """The rows as TSV: a header line, then one line per row (see :func:`tsv_cell`)."""
    lines = ["\t".join(tsv_cell(h) for h in rows.header())]
    lines.extend("\t".join(map(tsv_cell, cells)) for cells in iter_cells(rows, token, progress))
    return "\n".join(lines) + "\n"


def csv_bytes(rows: RowSet, token: CancelToken | None = None, progress: Progress | None = None) -> bytes:
    """The rows as CSV (UTF-8, the :mod:`csv` module's quoting, ``\\r\\n`` line ends), header first."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(rows.header())
    for cells in iter_cells(rows, token, progress):
        writer.writerow(cells)
    return out.getvalue().encode("utf-8", "surrogatepass")


# -- records ----------------------------------------------------------------------------------------


def dumps_value(value: Any) -> bytes:
    """One JSON value on one line: orjson's, or the stdlib's ASCII-escaped JSON where orjson
    refuses (an integer beyond 64 bits, a lone surrogate from an escaped journal line)."""
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, ensure_ascii=True).encode("ascii")


def record_line(timeline: CharacterTimeline, ref: int, data: bytes | None, *, redact: bool) -> bytes:
    """Row ``ref`` as one line of JSON (no newline): an event's record as the reader has it (its
    journal line itself, unless redacted), a damaged line as an object holding its text.

    ``data`` is the row's journal line read in full (``None``: it could not be read). Whatever is
    there, the result is valid JSON: a record that no longer parses (the journal changed under the
    window) is reported as such.
    """
    if ref >= 0:
        if data is None:
            return dumps_value({"event_id": timeline.events.event_id(ref), "unreadable": "the record cannot be read"})
        data = data.removeprefix(_BOM)
        try:
            record = loads_exact(data)
        except ValueError:
            why = "the record no longer parses: the journal changed"
            return dumps_value({"event_id": timeline.events.event_id(ref), "unreadable": why})
        return dumps_value(redact_tree(record)) if redact else data
    defect = timeline.defects[~ref]
    text = (
        damaged_token("line", defect.length) if redact else (data or b"").removeprefix(_BOM).decode("utf-8", "replace")
    )
    obj: dict[str, Any] = {"damaged_line": defect.line, "kind": defect.kind, "offset": defect.offset, "text": text}
    if defect.recovered_event_id:
        obj["recovered_event_id"] = defect.recovered_event_id
    return dumps_value(obj)


def iter_records(
    rows: RowSet, token: CancelToken | None = None, progress: Progress | None = None
) -> Iterator[bytes]:
    """Each row as one line of JSON (:func:`record_line`), without its newline."""
    tl = rows.timeline
    reader = RecordReader(rows.journal)
    for refs in _chunks(rows, token, progress):
        raw = reader.raw_records(tl.offset(r) for r in refs)
        for r in refs:
            yield record_line(tl, r, raw.get(tl.offset(r)), redact=rows.redact)


def ndjson_bytes(rows: RowSet, token: CancelToken | None = None, progress: Progress | None = None) -> bytes:
    """The rows' records, one JSON value per line."""
    return b"".join(line + b"\n" for line in iter_records(rows, token, progress))


def json_text(rows: RowSet, token: CancelToken | None = None, progress: Progress | None = None) -> str:
    """"Copy as JSON": a JSON array of the rows' records, one record per line."""
    lines = list(iter_records(rows, token, progress))
    if not lines:
        return "[]\n"
    return "[\n" + ",\n".join(line.decode("utf-8", "surrogatepass") for line in lines) + "\n]\n"


def row_bytes(fmt: str, rows: RowSet, token: CancelToken | None = None, progress: Progress | None = None) -> bytes:
    """The export of ``rows`` in ``fmt`` (:data:`ROW_FORMATS`)."""
    if fmt == "csv":
        return csv_bytes(rows, token, progress)
    if fmt == "ndjson":
        return ndjson_bytes(rows, token, progress)
    raise ValueError(f"unknown row format {fmt!r}")


# -- findings ---------------------------------------------------------------------------------------


def _redacted_character(c: CharacterDiagnosis, timeline: CharacterTimeline) -> CharacterDiagnosis:
    """``c`` with every quoted damaged line replaced in its findings' messages (a defect's message
    quotes the line; the finding's message holds the defect's)."""
    subs = {d.message: defect_summary(d, redact=True) for d in timeline.defects if d.message}

    def scrub(text: str | None) -> str | None:
        if not text:
            return text
        for old, new in subs.items():
            if old in text:
                text = text.replace(old, new)
        return text

    findings = [dataclasses.replace(f, message=scrub(f.message) or "") for f in c.findings]
    return dataclasses.replace(c, findings=findings, blocked_message=scrub(c.blocked_message))


def character_report(diagnosis: Diagnosis, timeline: CharacterTimeline, *, redact: bool) -> Diagnosis:
    """The diagnosis ``check`` reports for the character of ``timeline``, as the window has it now
    (live merges included): the folder's facts, this character alone, redacted when ``redact``."""
    c = timeline.diagnosis
    if redact:
        c = _redacted_character(c, timeline)
    # Not dataclasses.replace: the copy must not own the zip's temp folder (it would remove it).
    return Diagnosis(
        path=diagnosis.path,
        root=diagnosis.root,
        characters=[c],
        is_zip=diagnosis.is_zip,
        kind=diagnosis.kind,
        memory_root=diagnosis.memory_root,
        findings=list(diagnosis.findings),
        server=diagnosis.server,
    )


def findings_bytes(fmt: str, report: Diagnosis) -> bytes:
    """The findings export: ``check --json``'s document (``json``) or ``check``'s text (``text``)."""
    if fmt == "json":
        return dumps_json(report)
    if fmt == "text":
        out = io.StringIO()
        write_human(report, out)
        return out.getvalue().encode("utf-8", "backslashreplace")
    raise ValueError(f"unknown findings format {fmt!r}")


# -- where an export may go -------------------------------------------------------------------------


def refused_target(target: str | os.PathLike[str], opened: str | os.PathLike[str] | None) -> str | None:
    """Why an export may not be written to ``target`` (``None``: it may): the inspector is
    read-only, so nothing is written inside the opened folder (nor over an opened zip)."""
    if opened is None:
        return None
    if fs.is_inside(target, opened):
        return f"{target} is inside the opened folder: the inspector never writes there. Choose another folder."
    return None
