"""Which file of a character folder is which kind has one home, :mod:`journal.layout`: ``diff`` and the
support bundle read it there, and no other module spells a table of the folder's file names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from inspector.core.bundle import members
from inspector.core.bundle import rules as R
from inspector.core.compare import files as compare_files
from journal import layout

ROOT = Path(__file__).resolve().parent.parent

#: Every name the layout's tables hold.
NAMES = (
    set(layout.JSON_FILES)
    | set(layout.NDJSON_FILES)
    | layout.TIMESTAMP_FILES
    | layout.CHARACTER_MARKERS
    | layout.MANAGED_MEMORY_FILENAMES
    | {layout.CHAT_DB, layout.MIGRATION_MARKER, *layout.ARCHIVE_FOLDERS}
)

#: Lists of the folder's file names with a rule of their own, not a copy of a layout table.
OWN_LISTS = {
    "journal/cloudsave/layout.py": "NOT_EXPORTED: the files an upload never exports (cloudsave-format §1.3)",
}


def _tables(path: Path) -> list[tuple[int, list[str]]]:
    """``(line, names)`` of every dict, set, list or tuple literal naming 3 or more layout names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, (ast.Dict, ast.Set, ast.List, ast.Tuple)):
            elts = node.keys if isinstance(node, ast.Dict) else node.elts
            named = [e.value for e in elts if isinstance(e, ast.Constant) and e.value in NAMES]
            if len(named) >= 3:
                found.append((node.lineno, named))
    return found


def test_no_second_table_of_the_folders_file_names():
    offenders = []
    for folder in ("journal", "inspector", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            if rel == "journal/layout.py" or rel in OWN_LISTS:
                continue
            offenders += [(rel, line, names) for line, names in _tables(path)]
    assert offenders == []


def test_the_tables_are_disjoint_where_they_must_be():
    """A file is JSON or line-based or a timestamp, never two of them."""
    assert not set(layout.JSON_FILES) & set(layout.NDJSON_FILES)
    assert not (set(layout.JSON_FILES) | set(layout.NDJSON_FILES)) & layout.TIMESTAMP_FILES


def test_every_kind_has_a_bundle_keep_list():
    """A kind the layout names and the bundle has no keep-list for would fail at the first file."""
    assert set(layout.JSON_FILES.values()) | set(layout.NDJSON_FILES.values()) <= set(R.KINDS)


@pytest.mark.parametrize("name", sorted(layout.JSON_FILES))
def test_diff_compares_each_json_file_by_value(name: str):
    assert compare_files.rule_of(name) == compare_files.VALUE


@pytest.mark.parametrize("name", sorted(layout.NDJSON_FILES))
def test_diff_compares_each_line_file_by_line(name: str):
    assert compare_files.rule_of(name) == compare_files.LINES


def test_diff_compares_shards_and_the_marker_by_value_and_the_rest_by_bytes():
    for folder in layout.ARCHIVE_FOLDERS:
        assert compare_files.rule_of(f"{folder}/{layout.MIGRATION_MARKER}") == compare_files.VALUE
        assert compare_files.rule_of(f"{folder}/2026-05-01_0123abcd.json") == compare_files.VALUE
        assert compare_files.rule_of(f"{folder}/notes.txt") == compare_files.BYTES
    for name in (*layout.TIMESTAMP_FILES, layout.CHAT_DB, "notes.json"):
        assert compare_files.rule_of(name) == compare_files.BYTES


@pytest.mark.parametrize("name", sorted(layout.JSON_FILES))
def test_the_bundle_reads_each_json_file_by_its_kind(name: str):
    assert members._classify(name, name) == ("json", layout.JSON_FILES[name])
