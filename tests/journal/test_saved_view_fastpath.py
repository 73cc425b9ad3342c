"""The incremental view encoder of EventLog: which elements it may reuse, and that it stays exact.

``_encode_view`` serialises the whole view once with orjson, lines the elements up with those of
the previous save by their bytes, and reuses an element's rendering only if the element is also
``==`` its private copy. These tests aim at what bytes cannot tell (NaN, Infinity and ``None`` are
all ``null`` to orjson; a tuple or a UUID looks like a list or a string), at what ``==`` cannot tell
(``1``/``1.0``/``True``, ``0.0``/``-0.0``, key order), and at the lining up itself (numbers that are
prefixes of others, JSON punctuation inside strings, runs inserted or removed).
"""

from __future__ import annotations

import copy
import json
import math
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import EventLog, encode_event, handlers
from journal.log import _encode_view, _SavedView
from tests.journal.test_log import CHAR, E0, VIEW, make_char

NAN, INF = math.nan, math.inf


@pytest.fixture(autouse=True)
def _verify_saves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "VERIFY_INCREMENTAL_SAVES", True)


def render(obj: Any) -> bytes:
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


def same(a: Any, b: Any) -> bool:
    """Strict identity of JSON values: same types, key order, float signs; NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is dict:
        return list(a) == list(b) and all(same(v, b[k]) for k, v in a.items())
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def containers(value: Any) -> list[int]:
    """ids of every dict and list inside ``value`` (itself included)."""
    found: list[int] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) in (dict, list):
            found.append(id(v))
            stack.extend(v.values() if type(v) is dict else v)
    return found


def encode(obj: Any, old: _SavedView | None) -> _SavedView:
    saved = _encode_view(obj, old)
    assert saved is not None
    assert saved.data == render(obj)
    assert saved.compact == orjson.dumps(obj)
    items = obj if type(obj) is list else list(obj.values())
    assert len(saved.parts) == len(saved.shadow) == len(saved.seglens) == len(items)
    for item, copied in zip(items, saved.shadow, strict=True):
        assert same(item, copied), "an element was kept with a private copy it is not equal to"
    live = set(containers(obj))
    assert not live & set(containers(saved.shadow[:])), "a private copy shares a container with the view"
    assert saved.intact()
    return saved


def reencoded(old: _SavedView, new: _SavedView) -> list[int]:
    """Indexes of the new elements whose rendering was not taken over from ``old``."""
    kept = {id(p) for p in old.parts}
    return [i for i, p in enumerate(new.parts) if id(p) not in kept]


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


# -- what the bytes cannot tell -------------------------------------------------------------------


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], None]:
    def change(view: Any) -> None:
        target = view
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("start", "change"),
    [
        (None, _set((2, "nested", "xs", 0), NAN)),  # NaN where None was, deep inside
        (None, _set((2, "none"), INF)),
        (None, _set((2, "none"), -INF)),
        (NAN, _set((2, "none"), None)),
        (INF, _set((2, "none"), -INF)),
        (INF, _set((2, "none"), NAN)),
        (-INF, _set((2, "none"), None)),
        (None, _set((2, "nested", "xs"), [None, 1, "a"])),  # an equal new list: reused or not, exact
    ],
    ids=["nan-for-none-nested", "inf-for-none", "-inf-for-none", "none-for-nan", "-inf-for-inf", "nan-for-inf",
         "none-for--inf", "equal-copy"],
)
def test_a_change_orjson_writes_as_the_same_null_is_seen(start: Any, change: Callable[[Any], None]) -> None:
    view = entries()
    view[2]["none"] = start
    saved = encode(view, None)
    before = orjson.dumps(view[2])
    change(view)
    assert orjson.dumps(view[2]) == before  # the bytes cannot tell: only == can
    new = encode(view, saved)
    assert reencoded(saved, new) in ([], [2])
    assert new.data == render(view)


@pytest.mark.parametrize(
    "change",
    [
        _set((1, "w"), 1),
        _set((1, "w"), True),
        _set((1, "nested", "xs", 1), 1.0),
        _set((1, "nested", "xs", 1), True),
        _set((1, "z"), -0.0),
        _set((1, "nested"), {"flag": True, "xs": [None, 1, "a"]}),  # same items, other key order
        lambda v: v.__setitem__(1, dict(reversed(list(v[1].items())))),
    ],
    ids=["int-for-float", "bool-for-float", "float-for-int", "bool-for-int", "neg-zero", "nested-key-order",
         "key-order"],
)
def test_a_change_equality_cannot_see_is_seen(change: Callable[[Any], None]) -> None:
    view = entries()
    saved = encode(view, None)
    shadow = copy.deepcopy(view[1])
    change(view)
    assert view[1] == shadow  # == cannot tell: only the bytes can
    new = encode(view, saved)
    assert reencoded(saved, new) == [1]


def test_a_tuple_for_a_list_renders_the_same_and_is_copied_as_a_tuple() -> None:
    view = entries()
    saved = encode(view, None)
    view[3]["nested"]["xs"] = (None, 1, "a")
    new = encode(view, saved)
    assert new.data == saved.data and reencoded(saved, new) == [3]
    assert type(new.shadow[3]["nested"]["xs"]) is tuple


def test_a_uuid_for_its_string_is_not_reused_and_refused_like_json_dumps() -> None:
    view = entries()
    value = uuid.UUID("12345678-1234-4234-8234-123456789abc")
    view[3]["text"] = str(value)
    saved = encode(view, None)
    view[3]["text"] = value
    with pytest.raises(TypeError):
        json.dumps(view)
    with pytest.raises(TypeError):
        _encode_view(view, saved)


def test_only_the_changed_element_is_encoded_again() -> None:
    view = entries(50)
    saved = encode(view, None)
    for i in (0, 17, 49):
        view[i]["w"] = i + 0.5
        new = encode(view, saved)
        assert reencoded(saved, new) == [i]
        saved = new
    assert reencoded(saved, encode(view, saved)) == []


# -- lining elements up -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ([1, 2, 3], [12, 2, 3]),  # "1" is a prefix of "12": the delimiter decides
        ([1, 2, 3], [1, 2, 34]),
        ([1, 2, 3], [1, 23]),
        ([1, 23], [1, 2, 3]),
        (["a", "b"], ["a\",\"b"]),
        (["a\",\"b"], ["a", "b"]),
        ([[1], [2]], [[1, 2]]),
        ([{"a": 1}, {"b": 2}], [{"a": 1, "b": 2}]),
        ([1.5, -0.0, 0.0], [1.5, 0.0, -0.0]),
        (["x", "x", "x"], ["x", "x"]),
        ([None, NAN, INF, -INF], [NAN, INF, -INF, None]),
    ],
)
def test_prefixes_and_punctuation_do_not_fool_the_lining_up(before: list[Any], after: list[Any]) -> None:
    saved = encode(before, None)
    encode(after, saved)
    view = list(before)
    saved = encode(view, None)
    view[:] = after  # the same list object, changed in place
    encode(view, saved)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda v: v.insert(0, {"id": "new"}), [0]),
        (lambda v: v.insert(4, {"id": "new"}), [4]),
        (lambda v: v.append({"id": "new"}), [8]),
        (lambda v: v.pop(0), []),
        (lambda v: v.pop(3), []),
        (lambda v: v.pop(), []),
        (lambda v: v.__delitem__(slice(2, 5)), []),
        (lambda v: v.__setitem__(slice(2, 2), [{"id": "a"}, {"id": "b"}, {"id": "c"}]), [2, 3, 4]),
        (lambda v: v.__setitem__(slice(2, 4), [{"id": "a"}]), [2]),
        (lambda v: v.clear(), []),
    ],
    ids=["insert-first", "insert-middle", "append", "pop-first", "pop-middle", "pop-last", "remove-run",
         "insert-run", "replace-two-by-one", "clear"],
)
def test_a_run_inserted_or_removed_leaves_the_others_reused(change: Callable[[Any], None], expected: list[int]) -> None:
    view = entries(8)
    saved = encode(view, None)
    change(view)
    assert reencoded(saved, encode(view, saved)) == expected


def test_a_reversed_or_shuffled_view_is_still_exact() -> None:
    view = entries(9)
    saved = encode(view, None)
    view.reverse()
    saved = encode(view, saved)
    view[:] = view[1::2] + view[::2]
    encode(view, saved)


def test_a_dict_view_reuses_its_values_across_keys_inserted_removed_and_changed() -> None:
    view: dict[str, Any] = {f"k{i}": {"facts": [{"id": i, "w": None}]} for i in range(6)}
    saved = encode(view, None)
    view["k3"]["facts"][0]["w"] = NAN
    new = encode(view, saved)
    assert reencoded(saved, new) == [3]
    view["new"] = {}
    del view["k0"]
    saved, new = new, encode(view, new)
    assert reencoded(saved, new) == [5]
    renamed = {("K2" if k == "k2" else k): v for k, v in view.items()}  # same value, other key
    saved, new = new, encode(renamed, new)
    assert reencoded(saved, new) == [1]
    assert new.data == render(renamed)


def test_a_list_view_after_a_dict_view_and_the_other_way_round() -> None:
    saved = encode({"a": [1]}, None)
    saved = encode([[1]], saved)
    encode({"a": [1]}, saved)


def test_what_only_the_stdlib_renders_falls_back() -> None:
    saved = encode(entries(), None)
    assert _encode_view([{"big": 2**70}], saved) is None
    assert _encode_view([{1: "non-string key"}], saved) is None
    assert _encode_view({1: "x"}, saved) is None
    assert _encode_view("not a container", saved) is None


# -- the view kept between calls ------------------------------------------------------------------


def test_intact_sees_a_kept_reference_changed_in_type_or_key_order() -> None:
    view = entries()
    for change in (_set((0, "w"), 1), _set((0, "z"), -0.0), _set((0, "nested", "xs", 2), "b"),
                   lambda v: v[0].pop("none")):
        saved = encode(view, None)
        change(view)
        assert not saved.intact()


def _record(log: EventLog, mutate: Callable[[Any], Any]) -> None:
    log.record_and_save(CHAR, "reflection.evidence_updated", {"n": 1}, mutate, view=VIEW)


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
    # what is saved is still exactly what the mutator was handed (VERIFY_INCREMENTAL_SAVES is on).
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
                        ((1, "nested", "xs", 0), -INF), ((1, "z"), -0.0), ((1, "w"), True), ((1, "w"), 1)]:
        _record(log, _set(path, value))
        assert (cd / VIEW).read_bytes() == render(json.loads((cd / VIEW).read_bytes()))
    assert json.loads((cd / VIEW).read_bytes())[1]["w"] == 1


# -- any sequence of edits ----------------------------------------------------------------------------

# Values that collide under orjson (null), under == (1, 1.0, True; 0.0, -0.0) or in their text.
tricky = st.sampled_from([None, NAN, INF, -INF, 0.0, -0.0, 1, 1.0, True, False, "1", "null", "", '","', "]"])
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
    max_size=12,
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


def _apply(view: Any, edit: tuple[Any, ...]) -> None:
    items = view if type(view) is list else list(view.values())
    op, where = edit[0], edit[1]
    if op == "insert":
        if type(view) is list:
            view.insert(where % (len(view) + 1), edit[2])
        else:
            view[f"n{where}"] = edit[2]
        return
    if not items:
        return
    at = where % len(items)
    if op == "delete":
        if type(view) is list:
            del view[at]
        else:
            del view[list(view)[at]]
    elif op == "replace":
        if type(view) is list:
            view[at] = edit[2]
        else:
            view[list(view)[at]] = edit[2]
    elif op == "set" and type(items[at]) is dict:
        items[at][edit[2]] = edit[3]
    elif op == "deep":
        _deep_set(items[at], edit[2], edit[3])
    elif op == "reorder" and type(items[at]) is dict:
        pairs = list(items[at].items())
        items[at].clear()
        items[at].update(reversed(pairs))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(values, max_size=6), st.booleans(), edits)
def test_any_sequence_of_edits_is_saved_exactly_with_exact_private_copies(
    start: list[Any], as_dict: bool, script: list[tuple[Any, ...]]
) -> None:
    view: Any = {f"k{i}": v for i, v in enumerate(start)} if as_dict else start
    saved = encode(view, None)
    for edit in script:
        _apply(view, edit)
        saved = encode(view, saved)
