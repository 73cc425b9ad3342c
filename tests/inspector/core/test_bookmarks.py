"""Bookmarks kept per folder and character in the config folder, atomically; and the rules of find
and the overview ruler (pure functions)."""

from __future__ import annotations

import json
import os
import re

import pytest

from inspector.core.bookmarks import BookmarkStore, indices_of
from inspector.core.find import Step, match_spans, step_among
from inspector.core.overview import Mark, buckets, mark_near, pixel_of, problem_marks
from inspector.core.timeline import CharacterTimeline
from journal import fs
from tests.inspector.gui_fixtures import hand_diagnosis, write_character


def test_bookmarks_are_kept_per_folder_and_character(tmp_path):
    store = BookmarkStore(tmp_path / "cfg")
    store.save(tmp_path / "a", "alice", ["e1", "e2", "e1"])
    store.save(tmp_path / "a", "bob", ["e9"])
    store.save(tmp_path / "b", "alice", ["e3"])
    again = BookmarkStore(tmp_path / "cfg")  # another run
    assert again.load(tmp_path / "a", "alice") == ["e1", "e2"]
    assert again.load(tmp_path / "a", "bob") == ["e9"]
    assert again.load(tmp_path / "b", "alice") == ["e3"]
    assert again.load(tmp_path / "c", "alice") == []
    again.save(tmp_path / "a", "bob", [])
    data = json.loads(store.file.read_text())
    assert data == {
        os.path.abspath(tmp_path / "a"): {"alice": ["e1", "e2"]},
        os.path.abspath(tmp_path / "b"): {"alice": ["e3"]},
    }
    assert sorted(p.name for p in store.file.parent.iterdir()) == ["bookmarks.json"]  # no temp litter


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"x": [1]}', '{"x": {"alice": "e1"}}'])
def test_a_damaged_file_reads_as_no_bookmarks(tmp_path, content):
    store = BookmarkStore(tmp_path)
    store.file.write_text(content)
    assert store.load("x", "alice") == []
    store.save("y", "alice", ["e1"])
    assert store.load("y", "alice") == ["e1"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_litter(tmp_path):
    store = BookmarkStore(tmp_path)
    store.save("f", "alice", ["e1"])
    before = store.file.read_bytes()

    def fail(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before":
            raise OSError(28, "No space left on device")

    previous = fs.set_fault_hook(fail)
    try:
        store.save("f", "alice", ["e1", "e2"])  # swallowed: a bookmark is never worth an error dialog
    finally:
        fs.set_fault_hook(previous)
    assert store.file.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bookmarks.json"]


def test_an_unwritable_config_folder_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    store = BookmarkStore(blocker / "cfg")
    store.save("f", "alice", ["e1"])
    assert store.load("f", "alice") == []


def test_indices_of_finds_each_wanted_id_once():
    assert indices_of(["a", "b", "a", "c"], ["a", "c", "zz"]) == {"a": 0, "c": 3}
    assert indices_of(["a"], []) == {}


# -- find ------------------------------------------------------------------------------------------


def test_match_spans_skips_empty_matches_and_stops_at_the_limit():
    assert match_spans("green tea, TEA", re.compile("tea", re.IGNORECASE)) == [(6, 9), (11, 14)]
    assert match_spans("abc", re.compile("x*")) == []
    assert len(match_spans("a" * 500, re.compile("a"), limit=10)) == 10
    assert match_spans("abc", None) == []


@pytest.mark.parametrize(
    ("positions", "current", "step", "expected"),
    [
        ([2, 5, 9], None, 1, Step(2, False)),
        ([2, 5, 9], None, -1, Step(9, False)),
        ([2, 5, 9], 2, 1, Step(5, False)),
        ([2, 5, 9], 3, 1, Step(5, False)),  # from a row between two marks
        ([2, 5, 9], 9, 1, Step(2, True)),
        ([2, 5, 9], 2, -1, Step(9, True)),
        ([2, 5, 9], 7, -1, Step(5, False)),
        ([], None, 1, None),
    ],
)
def test_stepping_among_marked_rows_wraps_and_says_so(positions, current, step, expected):
    """F3 among the find's matches and F2 among the bookmarks: the one stepping rule."""
    assert step_among(positions, current, step) == expected


# -- the overview ruler ----------------------------------------------------------------------------


def _timeline(tmp_path, states, *, damaged=False):
    char_dir = write_character(tmp_path / "memory", applied=6, pending=4)
    if damaged:
        with open(char_dir / "events.ndjson", "ab") as fh:
            fh.write(b"{not an event\n")
    return CharacterTimeline(hand_diagnosis(char_dir, states=states))


def test_problem_marks_place_each_problem_among_the_rows_shown(tmp_path):
    tl = _timeline(
        tmp_path, {2: ("orphaned", "no_handler"), 7: ("blocked", "no_handler"), 8: ("suspect", None)}, damaged=True
    )
    assert len(tl.refs) == 11 and tl.refs[-1] < 0
    assert problem_marks(tl, tl.refs) == [
        Mark(2, "orphaned"),
        Mark(7, "blocked"),
        Mark(8, "suspect"),
        Mark(10, "damaged"),
    ]
    shown = [r for r in tl.refs if r not in (0, 1, 8)]  # a filter: positions move up, the suspect is hidden
    assert problem_marks(tl, shown) == [Mark(0, "orphaned"), Mark(5, "blocked"), Mark(7, "damaged")]
    assert problem_marks(tl, []) == []


def test_dense_problems_give_the_same_marks(tmp_path):
    states = {i: ("orphaned", "no_handler") for i in range(6)}
    tl = _timeline(tmp_path, states)
    assert problem_marks(tl, tl.refs) == [Mark(i, "orphaned") for i in range(6)]


def test_buckets_keep_the_most_telling_mark_per_pixel():
    marks = [Mark(0, "suspect"), Mark(1, "blocked"), Mark(2, "bookmark"), Mark(999, "damaged")]
    folded = buckets(marks, 1000, 100)
    assert folded == {0: Mark(1, "blocked"), 99: Mark(999, "damaged")}
    assert buckets(marks, 0, 100) == {} and buckets(marks, 10, 0) == {}
    assert buckets([Mark(3, "orphaned")], 5, 500) == {300: Mark(3, "orphaned")}  # fewer rows than pixels
    assert pixel_of(999, 1000, 100) == 99
    assert mark_near(folded, 2) == Mark(1, "blocked")
    assert mark_near(folded, 50) is None


def test_a_million_rows_fold_in_one_pass_over_their_problems():
    marks = [Mark(p, "orphaned") for p in range(0, 1_000_000, 97)]
    folded = buckets(marks, 1_000_000, 600)
    assert len(folded) == 600
