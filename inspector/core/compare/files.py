"""The files part of a comparison: every file of both character folders but the journal (which
:mod:`~inspector.core.compare.journal` compares record by record), each by the rule of its kind
(issue 25 item 2):

- the JSON files the format notes list (views, sidecars, the legacy archives, the sentinel and the
  applied set; which file is which kind is :mod:`inspector.core.bundle.rules`), the well-named
  shards of both archive folders and their migration marker: by parsed value
  (:func:`~inspector.core.compare.tree.value_changes`: key order ignored, types strict). A side that
  is not JSON is compared by its bytes;
- the line-per-record files (the outbox, ``events_parked.ndjson``): as the list of their non-blank
  lines, each by parsed value (a line that is not JSON, or a last line without its newline, by its
  bytes);
- everything else (``time_indexed.db``, plain-text sidecars, unknown files): by bytes.

Links are not followed (a link is compared by its target); special files are never opened. A file
one side cannot read is a :class:`~inspector.core.compare.value.InputProblem` of that side.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.compare.tree import Raw, value_changes
from inspector.core.compare.value import FileDiff, InputProblem
from journal import fs
from journal.codec import loads_exact
from journal.events import JOURNAL_NAME
from journal.layout import ARCHIVE_FOLDERS, JSON_FILES, MIGRATION_MARKER, NDJSON_FILES
from journal.shards import is_shard_name

#: Files are compared by bytes in reads of this size.
_CHUNK = 1 << 20

#: How a file is compared.
VALUE, LINES, BYTES = "value", "lines", "bytes"


def rule_of(rel: str) -> str:
    """How the file at ``rel`` (relative to the character folder, ``/``-separated) is compared."""
    folder, _, name = rel.rpartition("/")
    if not folder:
        if name in JSON_FILES:
            return VALUE
        if name in NDJSON_FILES:
            return LINES
        return BYTES
    if folder in ARCHIVE_FOLDERS and (is_shard_name(name) or name == MIGRATION_MARKER):
        return VALUE
    return BYTES


@dataclass(frozen=True, slots=True)
class _Node:
    """One entry of a folder tree: ``file``, ``link`` (with its target) or ``special``."""

    kind: str
    path: str
    target: str = ""
    mode: int = 0


def _walk(char_dir: Path, side: str, problems: list[InputProblem]) -> dict[str, _Node]:
    """Every file, link and special file under ``char_dir`` (links not followed), by relative path;
    the journal at the top is left to the journal part."""
    out: dict[str, _Node] = {}

    def visit(folder: str, rel: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            problems.append(InputProblem(side, rel or ".", f"cannot be listed: {exc.strerror or exc}"))
            return
        for e in entries:
            sub = f"{rel}/{e.name}" if rel else e.name
            if sub == JOURNAL_NAME:
                continue
            try:
                st = os.lstat(e.path)
            except OSError as exc:
                problems.append(InputProblem(side, sub, f"cannot be read: {exc.strerror or exc}"))
                continue
            if stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(e.path)
                except OSError as exc:
                    problems.append(InputProblem(side, sub, f"cannot be read: {exc.strerror or exc}"))
                    continue
                out[sub] = _Node("link", e.path, target)
            elif stat.S_ISDIR(st.st_mode):
                visit(e.path, sub)
            elif stat.S_ISREG(st.st_mode):
                out[sub] = _Node("file", e.path)
            else:
                out[sub] = _Node("special", e.path, mode=stat.S_IFMT(st.st_mode))

    visit(os.fspath(char_dir), "")
    return out


def _read(node: _Node) -> bytes:
    with fs.open_regular(node.path) as fh:
        return fh.read()


def _same_bytes(a: _Node, b: _Node) -> bool:
    """Whether two regular files hold the same bytes (read in chunks: a big database is fine)."""
    with fs.open_regular(a.path) as fa, fs.open_regular(b.path) as fb:
        if os.fstat(fa.fileno()).st_size != os.fstat(fb.fileno()).st_size:
            return False
        while True:
            x, y = fa.read(_CHUNK), fb.read(_CHUNK)
            if x != y:
                return False
            if not x:
                return True


def parse(data: bytes) -> Any:
    """A JSON file's value, or :class:`Raw` when it is not JSON."""
    try:
        return loads_exact(data)
    except ValueError:
        return Raw(data)


def parse_lines(data: bytes) -> list[Any]:
    """A line-per-record file's value: its non-blank lines in order, each parsed (:func:`parse`);
    a last line without its newline (a torn append) is :class:`Raw` whatever it holds."""
    lines = data.split(b"\n")
    tail = lines.pop()
    out = [parse(line) for line in lines if line.strip()]
    if tail.strip():
        out.append(Raw(tail))
    return out


def _describe(node: _Node | None) -> str:
    if node is None:
        return "absent"
    if node.kind == "link":
        return f"a link to {node.target}"
    if node.kind == "special":
        return "a special file"
    return "a file"


def _compare_one(rel: str, a: _Node, b: _Node) -> FileDiff | None:
    """How two present entries differ (``None``: they do not). Raises ``OSError`` on a read."""
    if a.kind != b.kind or (a.kind == "link" and a.target != b.target):
        return FileDiff(rel, "changed", BYTES, note=f"A is {_describe(a)}, B is {_describe(b)}")
    if a.kind == "special":
        return None if a.mode == b.mode else FileDiff(rel, "changed", BYTES, note="special files of other kinds")
    if a.kind == "link" or _same_bytes(a, b):
        return None
    rule = rule_of(rel)
    if rule == BYTES:
        return FileDiff(rel, "changed", BYTES)
    da, db = _read(a), _read(b)
    va, vb = (parse(da), parse(db)) if rule == VALUE else (parse_lines(da), parse_lines(db))
    try:
        changes = value_changes(va, vb)
    except ValueError as exc:
        return FileDiff(rel, "changed", BYTES, note=str(exc))
    if not changes.total:
        return None  # the same value: key order, spacing or escapes only
    return FileDiff(rel, "changed", rule, tuple(changes.items), changes.total)


def compare_files(a_dir: Path, b_dir: Path) -> tuple[list[FileDiff], list[InputProblem]]:
    """Every file that differs between two character folders (the journal aside), in path order,
    and the files a side could not read."""
    problems: list[InputProblem] = []
    a, b = _walk(a_dir, "a", problems), _walk(b_dir, "b", problems)
    out: list[FileDiff] = []
    for rel in sorted(set(a) | set(b)):
        na, nb = a.get(rel), b.get(rel)
        unreadable = [(side, why) for side, node in (("a", na), ("b", nb)) if (why := _unreadable(node))]
        problems += [InputProblem(side, rel, why) for side, why in unreadable]
        if na is None or nb is None:
            out.append(FileDiff(rel, "added" if na is None else "removed", rule_of(rel)))
        elif not unreadable:
            try:
                diff = _compare_one(rel, na, nb)
            except OSError as exc:  # it changed under us between the two opens
                problems.append(InputProblem("a", rel, f"cannot be read: {exc.strerror or exc}"))
                continue
            if diff is not None:
                out.append(diff)
    return out, problems


def _unreadable(node: _Node | None) -> str | None:
    """Why a regular file cannot be opened, or ``None``."""
    if node is None or node.kind != "file":
        return None
    try:
        with fs.open_regular(node.path):
            return None
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
