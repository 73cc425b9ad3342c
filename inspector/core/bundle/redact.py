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

import hashlib
import json
import re
from typing import Any

import orjson

from inspector.core.bundle import rules as R
from inspector.core.redaction import Redactor, damaged_token
from journal.codec import loads_exact
from journal.events import ALL_EVENT_TYPES

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_ENUM = re.compile(r"[A-Za-z0-9_.:@/+\-]{1,64}")
_SPACE = re.compile(r"\s")
_EMPTY_SHA = hashlib.sha256(b"").hexdigest()

#: Strings longer than this are never ids.
_ID_MAX = 256


class BundleRedactor:
    """A kind-aware redactor of JSON values, under one secret.

    Attributes:
        base: the token and keyed-value maker.
        digests: SHA-256 hex of each entry text seen → that text (what ``DIGEST`` values map by).
    """

    def __init__(self, base: Redactor) -> None:
        self.base = base
        self.digests: dict[str, str] = {_EMPTY_SHA: ""}
        self._keys: dict[str, str] = {}
        self._seen: dict[tuple[str, str], str] = {}
        self._metas: dict[int, dict[str, tuple[str, str | None]]] = {}

    # -- strings ------------------------------------------------------------------------------

    def text(self, value: str) -> str:
        """A text's token (an empty string stays empty: it holds nothing)."""
        return self.base.token(value) if value else value

    def string(self, value: str, rule: str | None) -> str:
        """``value`` under ``rule`` (``None``: text)."""
        if rule is None or not value:
            return self.text(value)
        if rule is not R.TIME:  # ids, enums and types repeat: decide each once
            key = (rule, value)
            got = self._seen.get(key)
            if got is None:
                got = self._decide(value, rule)
                if len(self._seen) < 1_000_000:
                    self._seen[key] = got
            return got
        return self._decide(value, rule)

    def _decide(self, value: str, rule: str) -> str:
        if rule == R.ID:
            if len(value) <= _ID_MAX and value.isprintable() and not _SPACE.search(value):
                return self.base.keyed_ids(value)
        elif rule == R.TIME:
            if _TIME.fullmatch(value):
                return value
        elif rule == R.ENUM:
            if _ENUM.fullmatch(value):
                return value
        elif rule == R.TYPE:
            if value in ALL_EVENT_TYPES:
                return value
        elif rule == R.NAME:
            return self.key(value)
        elif rule == R.PATH:
            return "/".join(self.file_name(part) for part in value.split("/"))
        elif rule == R.HEX:
            if self.base.is_hex(value):
                return self.base.keyed_hex(value)
        elif rule == R.DIGEST:
            known = self.digests.get(value)
            if known is not None:
                return hashlib.sha256(self.text(known).encode("utf-8", "surrogatepass")).hexdigest()
            return self.base.digest_token(value)
        return self.text(value)

    def key(self, key: str) -> str:
        """A dict key, or a name that is one (``entity_key``): kept when the format notes define
        it (:func:`~inspector.core.bundle.rules.is_structure_key`); any other is a name someone
        chose, keyed as a ``‹key · N chars · tag›`` token (ids built from a text hash inside a
        kept key keyed, as in values)."""
        got = self._keys.get(key)
        if got is None:
            got = self.base.keyed_ids(key) if R.is_structure_key(key) else self.base.token(key, "key")
            if len(self._keys) < 1_000_000:
                self._keys[key] = got
        return got

    def file_name(self, name: str) -> str:
        """A file name (or one part of a path) as the bundle holds it: kept when the format notes
        define it (:func:`~inspector.core.bundle.rules.is_format_file_name`), else
        ``file-<8 hex>`` keyed like a text, with its ``.json`` ending, its NUL byte and its
        length when over 255 bytes kept (what a shard write of that name meets)."""
        if R.is_format_file_name(name):
            return name
        got = f"file-{self.base.tag(name)}" + (".json" if name.endswith(".json") else "")
        if "\x00" in name:
            got += "\x00"
        size = len(name.encode("utf-8", "surrogatepass"))
        return got + "_" * (size - len(got)) if size > 255 else got

    # -- values -------------------------------------------------------------------------------

    def _meta(self, rules: R.Rules[str, str]) -> dict[str, tuple[str, str | None]]:
        """Per kind, each key's output name and rule, worked out once (a journal repeats its keys)."""
        meta = self._metas.get(id(rules))
        if meta is None:
            meta = self._metas[id(rules)] = {}
        return meta

    def value(self, obj: Any, rules: R.Rules[str, str], rule: str | None = None) -> Any:
        """A redacted copy of the JSON value ``obj``, read as file kind ``rules``; ``rule`` is the
        rule of the key it is under."""
        if rule == R.DROP:
            return None
        if isinstance(obj, str):
            return self.string(obj, rule)
        if isinstance(obj, dict):
            meta = self._meta(rules)
            out = {}
            for k, v in obj.items():
                got = meta.get(k)
                if got is None:
                    got = meta[k] = (self.key(k), R.rule_for(rules, k))
                name, krule = got
                cls = v.__class__
                if cls is str:
                    if k == "text":
                        self.digests.setdefault(hashlib.sha256(v.encode("utf-8", "surrogatepass")).hexdigest(), v)
                    out[name] = self.string(v, krule)
                elif v is None or cls is int or cls is float or cls is bool:
                    out[name] = None if krule == R.DROP else v
                else:
                    out[name] = self.value(v, rules, krule)
            return out
        if isinstance(obj, list):
            return [self.value(v, rules, rule) for v in obj]
        return obj

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
