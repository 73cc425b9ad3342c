"""EventLog's saved view: the object the last ``record_and_save`` saved is handed to the next mutator.

It is reused only while the file holds exactly the saved bytes and the object still renders as
them (:func:`journal.codec.renders_as`). These tests aim at what a kept reference can change
between two calls: changes the bytes show (``1``/``1.0``/``True``, ``0.0``/``-0.0``, key order),
changes they do not (NaN, Infinity and ``None`` are all ``null`` to orjson), and any sequence of
edits by the mutators themselves. Whatever the mutator is handed, the file is then exactly
``json.dumps(indent=2, ensure_ascii=False)`` of what it left.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import EventLog, encode_event
from tests.journal.test_log import CHAR, E0, VIEW, make_char

NAN, INF = math.nan, math.inf


def render(obj: Any) -> bytes:
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


def entries(n: int = 6) -> list[dict[str, Any]]:
    return [
        {
            "id": f"ref_{i}",
            "text": f"反思 {i}",
            "w": 1.0,
            "z": 0.0,
            "none": None,
            "nested": {"xs": [None, 1, "a"], "flag": True},
        }
        for i in range(n)
    ]


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], None]:
    def change(view: Any) -> None:
        target = view
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _record(log: EventLog, mutate: Callable[[Any], Any]) -> None:
    log.record_and_save(CHAR, "reflection.evidence_updated", {"n": 1}, mutate, view=VIEW)


@pytest.mark.parametrize(
    "change",
    [
        _set((0, "w"), 1),
        _set((0, "w"), True),
        _set((0, "z"), -0.0),
        _set((0, "nested", "xs", 2), "b"),
        lambda v: v[0].pop("none"),
        lambda v: v.__setitem__(0, dict(reversed(list(v[0].items())))),
        _set((0, "nested", "xs", 1), 1.0),
    ],
    ids=["int-for-float", "bool-for-float", "neg-zero", "value", "key-removed", "key-order", "float-for-int"],
)
def test_a_kept_reference_changed_in_a_way_the_bytes_show_is_not_handed_out_again(
    tmp_path: Path, change: Callable[[Any], None]
) -> None:
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=entries())
    log = EventLog(tmp_path)
    kept: list[Any] = []
    _record(log, kept.append)
    before = (cd / VIEW).read_bytes()
    change(kept[0])  # a caller that kept the view changes it without an event
    seen: list[Any] = []
    _record(log, seen.append)
    assert seen[0] is not kept[0]
    assert (cd / VIEW).read_bytes() == before == render(seen[0])


def test_a_mutator_that_keeps_a_reference_and_changes_it_later(tmp_path: Path) -> None:
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=entries())
    log = EventLog(tmp_path)
    kept: list[Any] = []
    _record(log, lambda v: kept.append(v[2]["nested"]))
    _record(log, lambda v: v[0].__setitem__("w", 2.0))  # warm: the same object is handed out again
    seen: list[Any] = []

    kept[0]["flag"] = 1  # True -> 1 between calls: == cannot tell, the bytes can
    _record(log, lambda v: seen.append(v) or v[0].__setitem__("w", 3.0))
    assert seen[0][2]["nested"] is not kept[0] and seen[0][2]["nested"]["flag"] is True
    assert (cd / VIEW).read_bytes() == render(seen[0])

    # NaN where None was, between calls: the bytes cannot tell, so the object is handed out again;
    # what is saved is still exactly what the mutator was handed.
    kept2: list[Any] = []
    _record(log, lambda v: kept2.append(v[2]["nested"]["xs"]))
    kept2[0][0] = NAN
    seen.clear()
    _record(log, lambda v: seen.append(v) or v[4].__setitem__("w", 4.0))
    assert (cd / VIEW).read_bytes() == render(seen[0])
    assert b"NaN" in (cd / VIEW).read_bytes()


def test_a_mutator_that_sets_nan_where_none_was_is_saved_exactly(tmp_path: Path) -> None:
    cd = make_char(tmp_path, journal=encode_event(E0), sentinel=E0.event_id, view=entries())
    log = EventLog(tmp_path)
    for path, value in [((1, "none"), NAN), ((1, "none"), None), ((1, "nested", "xs", 0), INF),
                        ((1, "nested", "xs", 0), -INF), ((1, "z"), -0.0), ((1, "w"), True), ((1, "w"), 1),
                        ((1, "w"), 1e-7), ((1, "w"), 2**70), ((1, "w"), 0.5)]:
        _record(log, _set(path, value))
        assert (cd / VIEW).read_bytes() == render(json.loads((cd / VIEW).read_bytes()))
    assert json.loads((cd / VIEW).read_bytes())[1]["w"] == 0.5


# -- any sequence of edits ----------------------------------------------------------------------------

# Values that collide under orjson (null), under == (1, 1.0, True; 0.0, -0.0) or in their text.
tricky = st.sampled_from([None, NAN, INF, -INF, 0.0, -0.0, 1, 1.0, True, False, "1", "null", "", '","', "]",
                          1e-7, 5e-5, 2**64, -(2**63) - 1])
scalars = st.one_of(tricky, st.integers(-50, 50), st.floats(allow_nan=False), st.text('ab",:[]{}\\ 1', max_size=5))
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text("abk", max_size=2), children, max_size=3),
    ),
    max_leaves=12,
)
edits = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.integers(0, 99), st.text("abk", max_size=2), values),
        st.tuples(st.just("deep"), st.integers(0, 99), st.integers(0, 99), tricky),
        st.tuples(st.just("insert"), st.integers(0, 99), values),
        st.tuples(st.just("delete"), st.integers(0, 99)),
        st.tuples(st.just("reorder"), st.integers(0, 99)),
        st.tuples(st.just("replace"), st.integers(0, 99), values),
    ),
    max_size=10,
)


def _deep_set(value: Any, where: int, new: Any) -> None:
    """Set the ``where``-th scalar slot (depth first) inside ``value``, if there is one."""
    slots: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        v = stack.pop()
        keys = list(v) if type(v) is dict else range(len(v)) if type(v) is list else []
        for k in keys:
            (stack.append(v[k]) if type(v[k]) in (dict, list) else slots.append((v, k)))
    if slots:
        container, key = slots[where % len(slots)]
        container[key] = new


def _apply(view: list[Any], edit: tuple[Any, ...]) -> None:
    op, where = edit[0], edit[1]
    if op == "insert":
        view.insert(where % (len(view) + 1), edit[2])
        return
    if not view:
        return
    at = where % len(view)
    if op == "delete":
        del view[at]
    elif op == "replace":
        view[at] = edit[2]
    elif op == "set" and type(view[at]) is dict:
        view[at][edit[2]] = edit[3]
    elif op == "deep":
        _deep_set(view[at], edit[2], edit[3])
    elif op == "reorder" and type(view[at]) is dict:
        pairs = list(view[at].items())
        view[at].clear()
        view[at].update(reversed(pairs))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(values, max_size=6), edits, st.lists(st.booleans(), min_size=10, max_size=10))
def test_any_sequence_of_edits_is_saved_exactly(
    start: list[Any], script: list[tuple[Any, ...]], kept: list[bool]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cd = make_char(root, journal=encode_event(E0), sentinel=E0.event_id)
        (cd / VIEW).write_bytes(render(start))
        log = EventLog(root)
        held: list[Any] = []
        for edit, keep in zip(script, kept, strict=False):
            left: list[Any] = []

            def mutate(view: list[Any], edit: tuple[Any, ...] = edit, left: list[Any] = left) -> None:
                _apply(view, edit)
                left.append(view)

            _record(log, mutate)
            assert (cd / VIEW).read_bytes() == render(left[0])
            if keep:  # a caller keeps the view and changes it behind the log's back
                held.append(left[0])
                _apply(left[0], ("deep", 0, 0, NAN))
