"""Redacting the files of a character folder for a support bundle, value by value.

:class:`BundleRedactor` applies a kind's keep-list (:mod:`inspector.core.bundle.rules`) to a JSON
value: strings under a kept key keep their value when it has the rule's shape; every other string
becomes a token (:mod:`inspector.core.redaction`, the one home of the token format). A file or line
that cannot be parsed is replaced whole by a damaged token of the same length class that keeps the
defect's kind (still not JSON, still not UTF-8, still not an object).

Text digests (``rewrite_text_sha256``) stay true exactly where they were true: the redactor learns
the SHA-256 of every entry text it redacts, and a digest of a known text becomes the SHA-256 of
that text's token, which is what the bundle's entry holds; any other digest is keyed. So the view
drift check of the bundle's diagnosis gives the original's answer.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any, cast

import orjson

from inspector.core.bundle import rules as R
from inspector.core.redaction import Redactor, damaged_token
from journal import layout
from journal.codec import loads_exact
from journal.events import ALL_EVENT_TYPES

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_ENUM = re.compile(r"[A-Za-z0-9_.:@/+\-]{1,64}")
_EMPTY_SHA = hashlib.sha256(b"").hexdigest()
_JOURNAL_RULES = R.KINDS["journal"]

#: Strings longer than this are never ids.
_ID_MAX = 256

#: Decisions and keys remembered per rule, at most (a journal repeats its ids, enums and types).
_CACHE_MAX = 1_000_000

#: Shapes a redactor compiles a plan for, per file kind, at most: past this (a journal of ever-new
#: shapes) new shapes take the generic walk, as exactly.
_PLANS_MAX = 4096

#: JSON values that are kept as they are under every key but a dropped one.
_SCALARS = frozenset({type(None), bool, int, float})
_STR = frozenset({str})

Step = Callable[[Any], Any]

#: A dict's keys in order and the type of each value.
_Shape = tuple[tuple[str, ...], tuple[type, ...]]

#: Per kind, each key's output name and rule.
_Meta = dict[str, tuple[str, str | None]]


def _id_characters(text: str) -> bool:
    """Whether every character of ``text`` may stand in an id: printable, no whitespace (of what
    ``\\s`` matches only U+0020 is printable: a test reads every code point). A property of each
    character, so a joined list of strings has it exactly when each of them has it."""
    return text.isprintable() and " " not in text


def id_shaped(value: str) -> bool:
    """Whether a string has an id's shape, so that under an ``ID`` key it is kept (its hash parts
    keyed) rather than redacted as text: at most 256 characters, each one an id's
    (:func:`_id_characters`)."""
    return len(value) <= _ID_MAX and _id_characters(value)


def not_id_shaped(values: list[str]) -> list[str]:
    """The strings of ``values`` that are not :func:`id_shaped`, in order. A list of ids that all
    are (a journal's event ids) is told at once: none is too long, and their characters, joined,
    are an id's (:func:`_id_characters` is per character)."""
    if max(map(len, values), default=0) <= _ID_MAX and _id_characters("".join(values)):
        return []
    return [v for v in values if not id_shaped(v)]


class _Plan:
    """How to redact every dict of one shape (its keys in order and the type of each value) read
    as one file kind, compiled once from the kind's keep-list (:meth:`BundleRedactor.plan`).

    Attributes:
        keys: the shape's keys, in order.
        types: the type of each value.
        names: the output key of each position, or ``None`` when every key stays as it is (the
            output is then a copy with the changed values set in place).
        steps: ``(key, step)`` (``names`` is ``None``) or ``(position, step)`` for each value
            that changes; every other value is kept.
    """

    __slots__ = ("keys", "names", "steps", "types")

    def __init__(
        self,
        keys: tuple[str, ...],
        types: tuple[type, ...],
        names: tuple[str, ...] | None,
        steps: tuple[tuple[Any, Step], ...],
    ) -> None:
        self.keys = keys
        self.types = types
        self.names = names
        self.steps = steps


class BundleRedactor:
    """A kind-aware redactor of JSON values, under one secret.

    Two walks give the same bytes: :meth:`value`, the generic one, decides per key and per value
    as it goes; :meth:`redact` compiles a :class:`_Plan` per dict shape (which positions hold text
    to key, ids, names and paths to key, values that stay) and applies it, so a journal's million
    payloads of a dozen shapes are not walked key by key. Both take each key's rule from
    :func:`~inspector.core.bundle.rules.rule_for` and each string's decision from the same
    per-rule step (:meth:`string_step`). A list of strings is stepped item by item; a nested dict,
    any other list, a shape past :data:`_PLANS_MAX` and a record nested too deep for the plan's
    frames take the generic walk. A payload's event type names the plan tried first (a type's
    payloads mostly share one shape).

    Attributes:
        base: the token and keyed-value maker.
        digests: SHA-256 hex of each entry text seen → that text (what ``DIGEST`` values map by).
    """

    def __init__(self, base: Redactor) -> None:
        self.base = base
        self.digests: dict[str, str] = {_EMPTY_SHA: ""}
        self._keys: dict[str, str] = {}
        self._metas: dict[int, _Meta] = {}
        # Per kind: the plans by shape, and the last plan of each hint.
        self._plans: dict[int, tuple[dict[_Shape, _Plan], dict[str | None, _Plan]]] = {}
        self._head: tuple[tuple[str, Callable[[str], str]], ...] | None = None
        self._payload_head: tuple[str, str | None] = ("payload", None)
        self._decisions: dict[str, Callable[[str], str]] = {
            R.ID: self._id,
            R.TIME: self._time,
            R.ENUM: self._enum,
            R.TYPE: self._type,
            R.NAME: self.key,
            R.PATH: self._path,
            R.HEX: self._hex,
            R.DIGEST: self._digest,
        }
        self._steps: dict[str | None, Callable[[str], str]] = {None: self.text, R.TIME: self._time}

    # -- strings ------------------------------------------------------------------------------

    def text(self, value: str) -> str:
        """A text's token (an empty string stays empty: it holds nothing)."""
        return self.base.token(value) if value else value

    def string(self, value: str, rule: str | None) -> str:
        """``value`` under ``rule`` (``None``: text)."""
        return self.string_step(rule)(value)

    def string_step(self, rule: str | None) -> Callable[[str], str]:
        """The one step that redacts a string under ``rule``: an empty string stays empty; ids,
        enums, types, names, paths and digests repeat, so each is decided once; a timestamp is
        checked every time; a rule with no decision (text, ``drop``) gives a token."""
        step = self._steps.get(rule)
        if step is None:
            step = self._steps[rule] = self._cached(self._decisions.get(rule, self.text))
        return step

    @staticmethod
    def _cached(decide: Callable[[str], str]) -> Callable[[str], str]:
        seen = {"": ""}

        def step(value: str) -> str:
            got = seen.get(value)
            if got is None:
                got = decide(value)
                if len(seen) < _CACHE_MAX:
                    seen[value] = got
            return got

        return step

    def _id(self, value: str) -> str:
        if id_shaped(value):
            return self.base.keyed_ids(value)
        return self.text(value)

    def _time(self, value: str) -> str:
        return value if _TIME.fullmatch(value) else self.text(value)

    def _enum(self, value: str) -> str:
        return value if _ENUM.fullmatch(value) else self.text(value)

    def _type(self, value: str) -> str:
        return value if value in ALL_EVENT_TYPES else self.text(value)

    def _path(self, value: str) -> str:
        return "/".join(self.file_name(part) for part in value.split("/"))

    def _hex(self, value: str) -> str:
        return self.base.keyed_hex(value) if self.base.is_hex(value) else self.text(value)

    def _digest(self, value: str) -> str:
        known = self.digests.get(value)
        if known is not None:
            return hashlib.sha256(self.text(known).encode("utf-8", "surrogatepass")).hexdigest()
        return self.base.digest_token(value)

    def key(self, key: str) -> str:
        """A dict key, or a name that is one (``entity_key``): kept when the format notes define
        it (:func:`~inspector.core.bundle.rules.is_structure_key`); any other is a name someone
        chose, keyed as a ``‹key · N chars · tag›`` token (ids built from a text hash inside a
        kept key keyed, as in values)."""
        got = self._keys.get(key)
        if got is None:
            got = self.base.keyed_ids(key) if R.is_structure_key(key) else self.base.token(key, "key")
            if len(self._keys) < _CACHE_MAX:
                self._keys[key] = got
        return got

    def file_name(self, name: str) -> str:
        """A file name (or one part of a path) as the bundle holds it: kept when the format notes
        define it (:func:`~journal.layout.is_format_file_name`), else
        ``file-<8 hex>`` keyed like a text, with its ``.json`` ending, its NUL byte and its
        length when over 255 bytes kept (what a shard write of that name meets)."""
        if layout.is_format_file_name(name):
            return name
        got = f"file-{self.base.tag(name)}" + (".json" if name.endswith(".json") else "")
        if "\x00" in name:
            got += "\x00"
        size = len(name.encode("utf-8", "surrogatepass"))
        return got + "_" * (size - len(got)) if size > 255 else got

    # -- values -------------------------------------------------------------------------------

    def _meta(self, rules: R.Rules[str, str]) -> _Meta:
        """Per kind, each key's output name and rule, worked out once (a journal repeats its keys)."""
        meta = self._metas.get(id(rules))
        if meta is None:
            meta = self._metas[id(rules)] = {}
        return meta

    def _key_rule(self, meta: _Meta, rules: R.Rules[str, str], k: str) -> tuple[str, str | None]:
        got = meta.get(k)
        if got is None:
            got = meta[k] = (self.key(k), R.rule_for(rules, k))
        return got

    def _learn(self, value: str) -> None:
        """Remember an entry text's digest (``DIGEST`` values of it map to its token's)."""
        self.digests.setdefault(hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest(), value)

    def value(self, obj: Any, rules: R.Rules[str, str], rule: str | None = None) -> Any:
        """A redacted copy of the JSON value ``obj``, read as file kind ``rules``; ``rule`` is the
        rule of the key it is under. The generic walk (see the class)."""
        if rule == R.DROP:
            return None
        if isinstance(obj, str):
            return self.string(obj, rule)
        if isinstance(obj, dict):
            meta = self._meta(rules)
            out = {}
            for k, v in obj.items():
                name, krule = self._key_rule(meta, rules, k)
                cls = v.__class__
                if cls is str:
                    if k == "text":
                        self._learn(v)
                    out[name] = self.string(v, krule)
                elif v is None or cls is int or cls is float or cls is bool:
                    out[name] = None if krule == R.DROP else v
                else:
                    out[name] = self.value(v, rules, krule)
            return out
        if isinstance(obj, list):
            return [self.value(v, rules, rule) for v in obj]
        return obj

    def record(self, event_id: str, etype: str, ts: str, payload: Any) -> dict[str, Any]:
        """What :meth:`value` gives for the journal record ``{"event_id": event_id, "type": etype,
        "ts": ts, "payload": payload}`` (the reader's strings), its payload by the plan of its
        shape (see the class)."""
        rules = _JOURNAL_RULES
        try:
            head = self._head
            if head is None:
                # An event id is new on every line: decided, not remembered (the decision is pure).
                id_rule = R.rule_for(rules, "event_id")
                id_step = self._id if id_rule == R.ID else self.string_step(id_rule)
                head = self._head = (
                    (self.key("event_id"), id_step),
                    *((self.key(k), self.string_step(R.rule_for(rules, k))) for k in ("type", "ts")),
                )
                self._payload_head = self._key_rule(self._meta(rules), rules, "payload")
            (k_id, s_id), (k_type, s_type), (k_ts, s_ts) = head
            out = {k_id: s_id(event_id), k_type: s_type(etype), k_ts: s_ts(ts)}
            k_payload, p_rule = self._payload_head
            if payload.__class__ is dict and p_rule != R.DROP:
                out[k_payload] = self.redact(payload, rules, etype)
            else:
                out[k_payload] = self.value(payload, rules, p_rule)
            return out
        except RecursionError:  # the plan's frames run out first: the walk's answer, either way
            return self.value({"event_id": event_id, "type": etype, "ts": ts, "payload": payload}, rules)

    def redact(self, obj: dict[str, Any], rules: R.Rules[str, str], hint: str | None = None) -> dict[str, Any]:
        """What :meth:`value` gives for the dict ``obj`` read as file kind ``rules``, by the plan of
        its shape (see the class); ``hint`` names its family (a payload's event type), whose
        last plan is tried first."""
        keys = tuple(obj)
        types = tuple(map(type, obj.values()))
        tables = self._plans.get(id(rules))
        if tables is None:
            tables = self._plans[id(rules)] = ({}, {})
        plans, last = tables
        plan = last.get(hint)
        if plan is None or plan.keys != keys or plan.types != types:
            plan = plans.get((keys, types))
            if plan is None:
                if len(plans) >= _PLANS_MAX:
                    return cast(dict[str, Any], self.value(obj, rules))
                plan = plans[keys, types] = self.plan(rules, keys, types)
            last[hint] = plan
        if plan.names is None:
            out = obj.copy()
            for k, step in plan.steps:
                out[k] = step(out[k])
            return out
        values = list(obj.values())
        for i, step in plan.steps:
            values[i] = step(values[i])
        return dict(zip(plan.names, values, strict=True))

    def plan(self, rules: R.Rules[str, str], keys: tuple[str, ...], types: tuple[type, ...]) -> _Plan:
        """The plan of dicts with ``keys`` in this order holding values of ``types``, read as
        file kind ``rules``: each key's output name and rule as :meth:`value` takes them, and a
        step for each value :meth:`value` would change (a list of strings: each by its rule's
        step; any other list and a nested dict: the generic walk)."""
        meta = self._meta(rules)
        names: list[str] = []
        steps: list[tuple[int, Step]] = []
        for i, (k, t) in enumerate(zip(keys, types, strict=True)):
            name, rule = self._key_rule(meta, rules, k)
            names.append(name)
            step: Step | None
            if t is str:
                step = self.string_step(rule)
                if k == "text":
                    step = self._learning(step)
            elif rule == R.DROP:
                step = _dropped
            elif t in _SCALARS:
                step = None
            elif t is list:
                step = self._list_step(rules, rule)
            else:  # a nested dict, or what no parser gives: the generic walk (its frames, so depth fails alike)
                step = functools.partial(self.value, rules=rules, rule=rule)
            if step is not None:
                steps.append((i, step))
        if tuple(names) == keys:
            return _Plan(keys, types, None, tuple((keys[i], step) for i, step in steps))
        return _Plan(keys, types, tuple(names), tuple(steps))

    def _list_step(self, rules: R.Rules[str, str], rule: str | None) -> Step:
        """A list under a key of ``rule``: a list of strings by that rule's step, any other by
        the generic walk."""
        string = self.string_step(rule)
        value = self.value

        def list_step(items: list[Any]) -> Any:
            if set(map(type, items)) <= _STR:
                return list(map(string, items))
            return value(items, rules, rule)

        return list_step

    def _learning(self, step: Callable[[str], str]) -> Step:
        learn = self._learn

        def text_step(value: str) -> str:
            learn(value)
            return step(value)

        return text_step

    # -- whole files and lines ------------------------------------------------------------------

    def json_file(self, data: bytes, kind: str) -> bytes:
        """A JSON file of kind ``kind``, redacted; a file that is not JSON becomes a damaged token
        (still not JSON); an empty file stays empty."""
        if not data.strip():
            return data
        try:
            obj = loads_exact(data)
        except ValueError:
            return damaged_token("file", len(data)).encode("utf-8")
        try:
            return dumps_json(self.value(obj, R.KINDS[kind]), indent=True)
        except RecursionError:
            return damaged_token("file", len(data)).encode("utf-8")

    def timestamp_file(self, data: bytes) -> bytes:
        """A plain-text sidecar holding one timestamp: kept when it is one, else a damaged token."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return b"\xff" + damaged_token("file", len(data)).encode("utf-8")
        if _TIME.fullmatch(text.strip()) or not text.strip():
            return data
        return damaged_token("file", len(data)).encode("utf-8")

    def record_line(self, raw: bytes, kind: str) -> bytes:
        """One line of an outbox or park file (no newline): the record redacted, or a damaged token
        (those readers skip every line they cannot parse, so only that it is damaged matters)."""
        if not raw.strip():
            return b""
        try:
            obj = loads_exact(raw)
        except ValueError:
            return damaged_token("line", len(raw)).encode("utf-8")
        try:
            return dumps_json(self.value(obj, R.KINDS[kind]))
        except RecursionError:
            return damaged_token("line", len(raw)).encode("utf-8")

    def ndjson_file(self, data: bytes, kind: str) -> bytes:
        """A line-per-record file (outbox, parked events), redacted line by line; line numbers and
        an unterminated last line are kept."""
        lines = data.split(b"\n")
        return b"\n".join(self.record_line(line, kind) for line in lines)


def _dropped(_value: Any) -> None:
    return None


def dumps_json(obj: Any, *, indent: bool = False) -> bytes:
    """JSON bytes as the memory server writes them (non-ASCII kept). orjson where it can; the stdlib
    for what orjson refuses (integers beyond 64 bits, lone surrogates: those are then escaped)."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_INDENT_2 if indent else 0)
    except (orjson.JSONEncodeError, TypeError):
        text = json.dumps(obj, indent=2 if indent else None, ensure_ascii=False)
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(obj, indent=2 if indent else None, ensure_ascii=True).encode("ascii")
