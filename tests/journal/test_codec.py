"""journal.codec: ``dumps_view`` is ``json.dumps(indent=2, ensure_ascii=False).encode()`` byte for byte,
``loads_exact`` is ``json.loads(data.decode("utf-8"))`` value for value, whichever path runs.

Each case orjson writes or reads differently (module docstring of :mod:`journal.codec`) has a test
here, and so has each kind of byte pattern the float scan must not be fooled by.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import json
import math
import struct
import uuid
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import codec
from journal.codec import dumps_view, loads_exact, renders_as

_JSON_DUMPS = json.dumps  # the real one, also while a test replaces json.dumps


def stdlib_view(obj: object) -> bytes:
    return _JSON_DUMPS(obj, indent=2, ensure_ascii=False).encode("utf-8")


def same(a: Any, b: Any) -> bool:
    """Strict identity of parsed JSON: same types, key order, float signs; NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is dict:
        return list(a) == list(b) and all(same(v, b[k]) for k, v in a.items())
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.fixture
def no_stdlib_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the stdlib path fail loudly: the value must be written by orjson."""

    def refuse(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("dumps_view fell back to json.dumps")

    monkeypatch.setattr(codec.json, "dumps", refuse)


# -- dumps_view: what orjson writes alike, and what it does not ----------------------------------------


def test_an_empty_list_and_dict():
    assert dumps_view([]) == b"[]"
    assert dumps_view({}) == b"{}"


@pytest.mark.parametrize(
    "value",
    [
        [1e-05, 7.830194789052468e-05, 1e-07, 2.5e-09, 1e-10, 1e-4, 1e16, 1.5e300, -0.0, 5e-324],
        [float("nan"), float("inf"), -float("inf")],
        [2**64, -(2**63) - 1, 2**63 - 1, 2**64 - 1, -(2**63)],
        {2: "int key", None: "none key", True: "bool key", 1.5: "float key"},
        ("a", ("b",)),
        {"text": "0.00001 and 1e-7 and re-run", "ctl": "\x00\x1f\x7f\u2028\b\f\n\r\t\"\\"},
        {"a": [], "b": {}, "c": [[], [{}]], "猫": "主人喜欢绿茶"},
        "a top-level string",
        None,
        [[[[[[[[[[[[]]]]]]]]]]]],
    ],
)
def test_tricky_values_are_byte_identical_to_the_stdlib(value):
    assert dumps_view(value) == stdlib_view(value)


def test_every_code_point_and_the_float_edges_are_written_exactly():
    every_code_point = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    edges: list[Any] = [0.0, -0.0, 1e-4, 9.999999999999999e-05, 1e-5, 1e-7, 1e16, 9999999999999998.0, 1e22,
                        5e-324, float("nan"), float("inf"), -float("inf"), 2**63 - 1, 2**63, 2**64 - 1, 2**64,
                        -(2**63), -(2**63) - 1, True, False, None, every_code_point, "\u2028\x7f\x00"]
    entries = [{"id": f"e{i}", "v": v, "nested": [v, {"k": v}]} for i, v in enumerate(edges)]
    assert dumps_view(entries) == stdlib_view(entries)
    assert dumps_view({"s": {"facts": entries}}) == stdlib_view({"s": {"facts": entries}})


def _floats_around_every_binary_exponent() -> list[float]:
    values = []
    for exponent in range(-1074, 1024):
        for mantissa in (1.0, 1.5, 1.9999999999999998):
            x = math.ldexp(mantissa, exponent)
            if math.isfinite(x):
                values += [x, -x]
    for edge in (1e-9, 1e-4, 1e-5, 1e16):  # where the spellings change, and one ulp on each side
        values += [math.nextafter(edge, 0.0), edge, math.nextafter(edge, 1.0)]
    return values


def test_every_float_magnitude_is_written_exactly():
    for x in _floats_around_every_binary_exponent():
        assert dumps_view([x, {"k": x}]) == stdlib_view([x, {"k": x}]), x


def test_orjson_writes_the_plain_floats_and_the_stdlib_only_the_others(monkeypatch):
    calls: list[Any] = []
    monkeypatch.setattr(codec.json, "dumps", lambda obj, **kw: calls.append(obj) or _JSON_DUMPS(obj, **kw))
    for x in (0.0, -0.0, 1.0, 0.1, 1e-4, 1.5e-10, 9.3e-10, 1.2e-4, 1e16, 1e300, 5e-324):
        assert dumps_view([x]) == stdlib_view([x])
    assert calls == []
    for x in (1e-9, 9.999999999999999e-05, 1e-5, 3.3e-7, -2e-6, math.nan, math.inf, -math.inf):
        dumps_view([x])
    assert len(calls) == 8


class Colour(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    LOW = 1


class Tag(enum.StrEnum):
    A = "a"


@dataclasses.dataclass
class Point:
    x: int


def test_it_raises_what_the_stdlib_raises():
    circular: list[object] = []
    circular.append(circular)
    for bad in (
        {"when": datetime.datetime(2026, 1, 1)},
        [datetime.date(2026, 1, 1)],
        [uuid.uuid4()],  # orjson writes UUIDs
        [Colour.RED],  # and enum members
        [orjson.Fragment(b"{}")],  # and fragments, verbatim
        [Point(1)],
        {"x": {1, 2}},
        [frozenset()],
        [b"bytes"],
        [bytearray(b"x")],
        [memoryview(b"x")],
        [1j],
        {(1, 2): "tuple key"},
    ):
        with pytest.raises(TypeError):
            json.dumps(bad)
        with pytest.raises(TypeError):
            dumps_view(bad)
    with pytest.raises(UnicodeEncodeError):
        dumps_view(["\ud800"])
    with pytest.raises(ValueError):
        dumps_view(circular)


def test_subclasses_and_named_tuples_are_written_as_the_stdlib_writes_them():
    class Text(str):
        pass

    class Number(float):
        def __repr__(self) -> str:
            return "not used by json"

    Pair = collections.namedtuple("Pair", "a b")
    values = [Level.LOW, Tag.A, Text("x"), {Text("k"): 1}, Number(1.5), Pair(1, 2), collections.OrderedDict(a=1)]
    for value in values:
        assert dumps_view([value]) == stdlib_view([value])


def test_nesting_deeper_than_orjson_allows_is_written_by_the_stdlib():
    deep: Any = []
    for _ in range(400):
        deep = [deep]
    assert dumps_view(deep) == stdlib_view(deep)


# -- dumps_view: the float scan is not fooled by bytes that look like a float --------------------------


def _float_bytes(b7: int, b6: int) -> float:
    value: float = struct.unpack(">d", bytes([b7, b6, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC]))[0]
    return value


def test_text_that_looks_like_a_small_float_to_the_scan_is_written_by_orjson(no_stdlib_encoder):
    # Pickled as raw bytes: "G" ">" "A" reads as a float of exponent 2^-27, whose text is not in the view.
    view = [{"text": "G>Abcdefgh, G?\x01abcdefg", "w": 1.5}]
    assert dumps_view(view) == stdlib_view(view)


def test_text_that_looks_like_a_nan_to_the_scan_is_written_by_orjson(no_stdlib_encoder):
    view = [{"text": "G\x7f😀", "n": None}]  # "G", 0x7f, 0xf0 (the emoji's first byte): a NaN's exponent
    assert dumps_view(view) == stdlib_view(view)


def test_a_look_alike_inside_a_float_does_not_hide_the_next_float():
    # The last two bytes of the first float are "G" and 0x3e: with the next float's "G" they look like
    # a float of exponent 2^-27, and that look-alike covers the real one's opcode.
    first = struct.unpack(">d", b"\x3f\xf0\x00\x00\x00\x00\x47\x3e")[0]
    for risky in (1e-7, 5e-5, math.nan, math.inf):
        view = [first, risky]
        assert dumps_view(view) == stdlib_view(view)


def test_a_float_whose_mantissa_looks_like_a_risky_float_is_written_by_orjson(no_stdlib_encoder):
    lookalikes = [
        struct.unpack(">d", bytes([0x3F, 0xF0, 0x00, 0x47, b7, b6, 0x00, 0x01]))[0]
        for b7, b6 in ((0x7F, 0xF8), (0xFF, 0xF0), (0x3E, 0x50), (0xBF, 0x10))
    ]
    view = [{"w": x} for x in lookalikes]
    assert dumps_view(view) == stdlib_view(view)  # the last look-alike runs past the end of the pickle
    view.append({"w": 2.5})
    assert dumps_view(view) == stdlib_view(view)


def test_a_small_float_whose_text_is_also_in_a_string_is_still_written_by_the_stdlib():
    value = _float_bytes(0x3E, 0x81)  # a real float of exponent 2^-23
    view = [{"v": value, "text": orjson.dumps(value).decode()}]
    assert dumps_view(view) == stdlib_view(view)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    | st.dictionaries(st.integers(-3, 3), inner, max_size=2),
    max_leaves=12,
)
# Floats near the spellings' edges and with every exponent, integers near 64 bits.
edge_values = st.recursive(
    st.floats(min_value=1e-10, max_value=2e-4)
    | st.floats(min_value=-2e-4, max_value=-1e-10)
    | st.floats(min_value=1e15, max_value=1e17)
    | st.builds(lambda m, e: math.ldexp(m, e), st.floats(0.5, 1.0), st.integers(-1074, 1023))
    | st.integers(min_value=-(2**65), max_value=2**65)
    | st.sampled_from([math.nan, math.inf, -math.inf, None, "G>", "G?\n", "G\x7f\U0001f600"])
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=1000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values)
def test_any_json_value_is_byte_identical_to_json_dumps_indent_2(value):
    assert dumps_view(value) == stdlib_view(value)


@settings(max_examples=1000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=edge_values)
def test_values_at_the_edges_are_byte_identical_to_json_dumps_indent_2(value):
    assert dumps_view(value) == stdlib_view(value)


# -- renders_as ------------------------------------------------------------------------------------------


def test_renders_as_sees_changes_to_values_types_and_key_order():
    view = [{"w": 1.0, "z": 0.0, "n": None, "xs": [None, 1, "a"], "flag": True}]
    data = dumps_view(view)
    assert renders_as(view, data)
    for change in (
        lambda v: v[0].__setitem__("w", 1),
        lambda v: v[0].__setitem__("z", -0.0),
        lambda v: v[0].__setitem__("flag", 1),
        lambda v: v[0]["xs"].__setitem__(2, "b"),
        lambda v: v[0].pop("n"),
        lambda v: v.__setitem__(0, dict(reversed(list(v[0].items())))),
        lambda v: v[0].__setitem__("when", datetime.datetime(2026, 1, 1)),
    ):
        changed = json.loads(data)
        change(changed)
        assert not renders_as(changed, data)


def test_renders_as_is_false_for_bytes_only_the_stdlib_wrote():
    for view in ([math.nan], [1e-7], [2**70], {1: "x"}):
        assert not renders_as(view, dumps_view(view))


# -- loads_exact ------------------------------------------------------------------------------------------


def test_integers_beyond_64_bits_stay_exact_integers():
    got = loads_exact(b"[-9223372036854775809, 18446744073709551616, 123456789012345678901234567890]")
    assert got == [-(2**63) - 1, 2**64, 123456789012345678901234567890]
    assert all(type(v) is int for v in got)


def test_what_python_writes_is_accepted():
    got = loads_exact(b'{"x": Infinity, "y": -Infinity, "z": NaN}')
    assert same(got, {"x": math.inf, "y": -math.inf, "z": math.nan})
    assert loads_exact(b"[1e400, -1e400]") == [math.inf, -math.inf]
    assert loads_exact(b'"\\ud800\\udc00\\ud800"') == "\U00010000\ud800"
    assert loads_exact(b'{"a": 1, "b": 2, "a": 3}') == {"a": 3, "b": 2}


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"nope", json.JSONDecodeError),
        (b"", json.JSONDecodeError),
        (b"[1,]", json.JSONDecodeError),
        (b"\xef\xbb\xbf[]", json.JSONDecodeError),  # a BOM, as json.loads(str) refuses it
        (b"\xef\xbb\xbf[NaN]", json.JSONDecodeError),  # also when orjson refuses the rest
        (b'["\xff"]', UnicodeDecodeError),
        (b"[NaN]\xc3", UnicodeDecodeError),
        (b'\xff\xfe[\x00]\x00', UnicodeDecodeError),  # UTF-16, which json.loads(bytes) would accept
        (b"[" * 100_000, ValueError),  # RecursionError in the stdlib
    ],
)
def test_what_the_stdlib_refuses_is_refused_with_a_value_error(data, error):
    with pytest.raises(error):
        loads_exact(data)
    assert issubclass(error, ValueError)


def _stdlib_loads(data: bytes) -> tuple[str, Any]:
    try:
        return "ok", json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return "error", None


def _ours(data: bytes) -> tuple[str, Any]:
    try:
        return "ok", loads_exact(data)
    except ValueError:
        return "error", None


json_texts = st.one_of(
    edge_values.map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass")),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda digits, frac, exp: f"[{digits}{frac}{exp}]".encode(),
        st.text("0123456789-", min_size=1, max_size=25),
        st.sampled_from(["", ".", ".0", ".5", ".000000000000000000001", ".1234567890123456789012"]),
        st.sampled_from(["", "e", "e5", "E-7", "e+400", "e-400", "e308", "e-324"]),
    ),
    st.binary(max_size=12),
    st.text('[]{}",:0123456789.eE+-tfnulrsaNIy \\u', max_size=20).map(str.encode),
)


@settings(max_examples=2000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=json_texts)
def test_any_bytes_parse_as_json_loads_of_their_utf8_text(data):
    expected, ours = _stdlib_loads(data), _ours(data)
    assert expected[0] == ours[0], data
    assert same(expected[1], ours[1]), data
