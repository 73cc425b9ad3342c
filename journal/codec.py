"""The journal's one JSON codec: views written as the memory server writes them, bytes read as it reads them.

:func:`dumps_view` is ``json.dumps(obj, indent=2, ensure_ascii=False).encode()`` byte for byte, and
:func:`loads_exact` is ``json.loads(data.decode("utf-8"))`` value for value. Both take orjson's
result when it is provably the stdlib's, and run the stdlib otherwise; nothing else in the package
encodes a view or parses JSON exactly.

Where orjson (``OPT_INDENT_2``) and ``json.dumps(indent=2, ensure_ascii=False)`` write differently,
and how :func:`dumps_view` tells (every case is checked by ``tests/journal/test_codec.py``):

* orjson **refuses** what only the stdlib writes or refuses: integers beyond 64 bits, non-string
  keys, lone surrogates, subclasses of str/int/float/dict/list (``OPT_PASSTHROUGH_SUBCLASS``),
  datetimes and dataclasses (passthrough), sets, bytes, cycles, nesting deeper than 254. Its
  ``TypeError`` sends the value to the stdlib, which writes it or raises its own error.
* orjson **writes** what the stdlib refuses: ``uuid.UUID``, ``enum.Enum`` members,
  ``orjson.Fragment``. A pickler that accepts only exact dict/list/tuple/str/int/float/bool/None
  (anything else reaches ``reducer_override``, which refuses it) sends those to the stdlib.
* orjson writes **NaN and ±Infinity as null** (stdlib: ``NaN``, ``Infinity``), and floats in
  [1e-9, 1e-4) with **another spelling** (``1e-7`` / ``0.00001`` for ``1e-07`` / ``1e-05``).
  Every other float, every int within 64 bits, string escape (every code point), key, layout
  and empty container is written identically.

The floats are found in that pickle, not in the JSON text: pickle writes each float (never
memoised) as the opcode ``G`` followed by the IEEE 754 binary64 value big-endian, so its sign and
exponent bits are the two bytes after the ``G``. One regular expression finds the ``G`` whose
exponent says NaN/Infinity or [2^-30, 2^-13) (which holds [1e-9, 1e-4)). UTF-8 text cannot
produce most of those byte pairs; other bytes that merely look like one (inside another float, an
index) are told apart: a finite value is a real float of the view only if orjson's text of it
occurs in orjson's output, and a NaN/Infinity is real only if the output does not read back as
``obj`` (orjson wrote null for it). A match costs a search, never a wrong answer.

Measured on the 300-entry view of ``bench/bench_journal.py`` (340 KiB, CJK text, 3,800 ``null``),
CPython 3.11, orjson 3.13: orjson alone 0.12 ms, the pickle 0.27 ms and its scan 0.05 ms, so
``dumps_view`` 0.46 ms; the stdlib encoder 4.1 ms; the previous check (a text scan for the float
spellings, then re-parsing the output and comparing it with ``==``) 1.14 ms in all. A ``marshal``
image is quicker to make (0.18 ms) but marks a float with a byte that CJK text is full of, 8 bytes
before its exponent, and msgpack (msgspec) writes UUIDs and enum members, so neither checks alone.
"""

from __future__ import annotations

import io
import json
import math
import pickle
import re
import struct
from typing import Any

import orjson

#: orjson with these options refuses (``TypeError``) subclasses, datetimes and dataclasses, which
#: the stdlib writes differently or refuses itself.
_ORJSON_VIEW = (
    orjson.OPT_INDENT_2
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)

#: ``G`` + the first two bytes of a big-endian binary64 (``s eeeeeee``, ``eeee mmmm``) whose 11-bit
#: exponent is 0x7FF (NaN, ±Infinity) or 0x3E1..0x3F1 (2^-30 <= |x| < 2^-13).
_RISKY_FLOAT = re.compile(rb"G(?:[\x7f\xff][\xf0-\xff]|[\x3e\xbe][\x10-\xff]|[\x3f\xbf][\x00-\x1f])")
_BINARY64 = struct.Struct(">d")
_PICKLE_PROTOCOL = 5

#: Digits to "0", anything else to ".": a run of 19 "0"s is the only way to spell an integer
#: outside orjson's 64-bit range (a translate and a find are far faster than a regex here).
_DIGIT_MAP = bytes(0x30 if 0x30 <= b <= 0x39 else 0x2E for b in range(256))
_DIGIT_RUN = b"0" * 19


def dumps_view(obj: Any) -> bytes:
    """Serialise a view, shard or sentinel exactly as the memory server does.

    Returns:
        ``json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")``, byte for byte: indent 2,
        non-ASCII kept, no trailing newline.

    Raises:
        Whatever that expression raises, and only then: ``TypeError`` for a value JSON cannot hold,
        ``ValueError`` for a cycle, ``UnicodeEncodeError`` for a lone surrogate, ``RecursionError``
        for absurd nesting.
    """
    try:
        data = orjson.dumps(obj, option=_ORJSON_VIEW)
    except TypeError:  # orjson.JSONEncodeError: something only the stdlib may write (or refuse)
        pass
    else:
        if _written_alike(obj, data):
            return data
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


def renders_as(obj: Any, data: bytes) -> bool:
    """Whether orjson still renders ``obj`` as ``data``: a cheap check (one orjson pass, no
    pickle) that an object :func:`dumps_view` turned into ``data`` was not changed since.

    It sees every change to a value, type, key or order that changes the text, and misses the ones
    orjson writes alike: NaN or ±Infinity put where ``None`` was, a tuple where a list was, a UUID
    or enum member where its value was. It is ``False`` for every view orjson writes differently
    from the stdlib (one holding NaN, a big integer, a float such as ``1e-07``), so such a view is
    never taken for unchanged.
    """
    try:
        return orjson.dumps(obj, option=_ORJSON_VIEW) == data
    except TypeError:  # orjson.JSONEncodeError included
        return False


class _NotPlainJSON(Exception):
    """An object other than an exact dict, list, tuple, str, int, float, bool or None."""


class _PlainJSONPickler(pickle.Pickler):
    # The C pickler writes None, bools, ints, floats, str, dict, list, tuple (and bytes, sets,
    # which orjson refused already) itself, and offers every other object here first.
    def reducer_override(self, obj: Any) -> Any:
        raise _NotPlainJSON


def _written_alike(obj: Any, data: bytes) -> bool:
    """Whether ``data`` (orjson's rendering of ``obj``) is what the stdlib writes (module docstring)."""
    out = io.BytesIO()
    try:
        _PlainJSONPickler(out, _PICKLE_PROTOCOL).dump(obj)
    except _NotPlainJSON:
        return False
    image = out.getvalue()
    nonfinite_checked = False
    match = _RISKY_FLOAT.search(image)
    while match is not None:
        at = match.start()
        if at + 1 + _BINARY64.size <= len(image):
            (value,) = _BINARY64.unpack_from(image, at + 1)
            if math.isfinite(value):
                if 1e-9 <= abs(value) < 1e-4 and orjson.dumps(value) in data:
                    return False
            elif not nonfinite_checked:
                if orjson.loads(data) != obj:  # NaN/Infinity read back as None
                    return False
                nonfinite_checked = True
        # From the next byte: a look-alike may overlap a real float's opcode.
        match = _RISKY_FLOAT.search(image, at + 1)
    return True


def loads_exact(data: bytes) -> Any:
    """Parse ``data`` exactly as ``json.loads(data.decode("utf-8"))`` does.

    NaN, Infinity and integers of any size are accepted as the stdlib accepts them; a UTF-8 BOM,
    invalid UTF-8 and anything else the stdlib refuses are refused. orjson parses first; the stdlib
    runs when orjson refuses, or when ``data`` holds 19 digits in a row (orjson turns integers
    beyond 64 bits into floats; any such integer has at least 19 digits).

    Returns:
        The parsed value (a new object on every call).

    Raises:
        ValueError: ``data`` is not such JSON: ``json.JSONDecodeError``, ``UnicodeDecodeError``, or
            a plain ``ValueError`` for nesting too deep to parse (where the stdlib raises
            ``RecursionError``).
    """
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        if data.translate(_DIGIT_MAP).find(_DIGIT_RUN) < 0:
            return obj
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def same_json(a: Any, b: Any) -> bool:
    """JSON identity: equal values of the same JSON type (``1`` ≠ ``1.0`` ≠ ``True``; NaN = NaN)."""
    if a is b:
        return True
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is float:
        return bool(a == b or (math.isnan(a) and math.isnan(b)))
    if ta is list or ta is tuple:
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if ta is dict:
        return list(a) == list(b) and all(same_json(v, b[k]) for k, v in a.items())
    return bool(a == b)
