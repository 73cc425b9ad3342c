"""Redaction, the one home of its token: for screenshots, the window and support bundles.

A redacted string reads ``‹text · 42 chars · 1a2b3c4d›``: what it was, its length, and a tag, so
two equal texts can still be recognised. The tag is an HMAC-SHA256 of the text keyed by a secret
(:class:`Redactor`), never a plain hash: a plain SHA-256 of a short sentence can be guessed from
a dictionary. The window uses a secret made for the session; a support bundle uses the sender's
secret, which stays on the sender's machine (``inspector.core.bundle.secret``), so only the sender
can say whether a guessed text has a given token.

The same :class:`Redactor` also keys values derived from text (``keyed_hex``), the hash parts of
ids built from a text hash (``keyed_ids``), and text digests such as ``rewrite_text_sha256``
(``text_digest``), each a pure function of its input and the secret, so every equality between
two such values holds after redaction exactly when it held before.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any

#: Keys whose values are user text (memory-format §2, §3.5): every string under them is hidden.
TEXT_KEYS = frozenset({"text", "content", "event_when_raw", "reject_explanation", "display_name"})

#: Keys whose values are conversation (outbox ``extract_facts``, memory-format §5.1).
CHAT_KEYS = frozenset({"messages"})

#: How many hex digits of the keyed HMAC a token shows.
TAG_HEX = 8

#: Ids whose hex part is built from a text hash (memory-format §2.1-§2.3): ``fact_<ts>_<hash8>``,
#: ``manual_<ts>_<sha8>``, ``legacy_<sha8>``, ``card_<sha8>``, and ``ref_<16 hex>`` (a hash over
#: fact ids, which hold text hashes), also inside ``prom_ref_…``.
_HASHED_ID = re.compile(
    r"(?<![A-Za-z0-9])(fact_\d{14}_|manual_\d{14}_|legacy_|card_|ref_)([0-9a-f]{16}|[0-9a-f]{8})(?![0-9a-f])"
)

_HEX = re.compile(r"[0-9a-f]+")


class Redactor:
    """Tokens and keyed values under one secret.

    Every method is a pure function of its argument and the secret (cached, since a journal repeats
    the same strings), so equal inputs give equal outputs and different inputs different ones.

    Attributes:
        key_id: 16 hex digits that name the secret without revealing it (recorded in a bundle's
            manifest, so the sender knows which secret answers a developer's question).
    """

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("a redaction secret has at least 16 bytes")
        self._secret = secret
        self._tokens: dict[tuple[str, str], str] = {}
        self._hex: dict[str, str] = {}
        self._ids: dict[str, str] = {}
        self.key_id = self._mac(b"memory-inspector key id")[:16]

    def _mac(self, data: bytes) -> str:
        return hmac.new(self._secret, data, hashlib.sha256).hexdigest()

    def tag(self, text: str) -> str:
        """The keyed tag of ``text`` (:data:`TAG_HEX` hex digits)."""
        return self._mac(b"text\x00" + text.encode("utf-8", "surrogatepass"))[:TAG_HEX]

    def token(self, text: str, kind: str = "text") -> str:
        """The label that replaces ``text``: ``‹kind · N chars · tag›``."""
        key = (text, kind)
        got = self._tokens.get(key)
        if got is None:
            got = self._tokens[key] = f"‹{kind} · {len(text)} chars · {self.tag(text)}›"
        return got

    def keyed_hex(self, value: str) -> str:
        """A hex value derived from text (a fact ``hash``, an id's hash part), keyed: as long as
        ``value``, and prefix-preserving by blocks of 8 (an id's ``hash8`` stays the prefix of the
        fact's ``hash``)."""
        got = self._hex.get(value)
        if got is None:
            parts = [
                self._mac(b"hex\x00" + value[: end].encode("ascii"))[:8] for end in range(8, len(value) + 8, 8)
            ]
            got = self._hex[value] = "".join(parts)[: len(value)]
        return got

    def keyed_ids(self, text: str) -> str:
        """``text`` with the hash part of every id built from a text hash keyed (other text unchanged)."""
        got = self._ids.get(text)
        if got is None:
            got = text
            if "_" in text:
                got = _HASHED_ID.sub(lambda m: m.group(1) + self.keyed_hex(m.group(2)), text)
            if len(self._ids) < 1_000_000:
                self._ids[text] = got
        return got

    def digest_token(self, digest: str) -> str:
        """A text digest no known text matches, keyed (64 hex digits, never a SHA-256 of a token)."""
        return self._mac(b"digest\x00" + digest.encode("utf-8", "surrogatepass"))

    def is_hex(self, value: str) -> bool:
        return _HEX.fullmatch(value) is not None


def length_class(size: int) -> str:
    """A size rounded up to a power of two (``up to 64 bytes``, ``up to 4 KiB``): what a damaged
    line's or file's token says of its length."""
    bound = 64
    while bound < size:
        bound <<= 1
    if bound < 1024:
        return f"up to {bound} bytes"
    if bound < 1 << 20:
        return f"up to {bound >> 10} KiB"
    return f"up to {bound >> 20} MiB"


def damaged_token(what: str, size: int) -> str:
    """The label that replaces a damaged line or file whole (it cannot be redacted key by key):
    ``‹damaged line · up to 128 bytes›``. It holds no character of the original."""
    return f"‹damaged {what} · {length_class(size)}›"


#: The window's redactor: a secret made for this session, so tokens of equal texts match on screen
#: and nothing shown can be checked against a dictionary.
_SESSION = Redactor(secrets.token_bytes(32))


def redact_text(text: str, kind: str = "text") -> str:
    """The window's label that replaces ``text`` (keyed by the session's secret)."""
    return _SESSION.token(text, kind)


def redact_derived(key: object, value: str) -> str | None:
    """``value`` keyed when ``key`` holds a value derived from a text (a fact ``hash``, a
    ``*_text_sha256``): a plain digest of a short text can be guessed from a dictionary. ``None``
    for any other key."""
    from inspector.core.bundle.rules import DIGEST, HEX, derived_from_text  # the one keep-list
    from journal.history import TEXT_SHA256

    # The history's own field TEXT_SHA256 is the digest of the entry's text (no file holds it).
    rule = DIGEST if key == TEXT_SHA256 else derived_from_text(key) if isinstance(key, str) else None
    if rule == DIGEST:
        return _SESSION.digest_token(value)
    if rule == HEX and _SESSION.is_hex(value):
        return _SESSION.keyed_hex(value)
    return None


#: A SHA-256 in a message (a view drift names the text's digest and the event's).
DIGEST_IN_TEXT = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")

#: A damaged line's preview inside a defect message (``not valid JSON: '{"eve…'``).
PREVIEW_IN_TEXT = re.compile(r"""(not valid JSON|unterminated last line): ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def redact_message(text: str) -> str:
    """A diagnosis message as the window shows it with redaction on: a quoted damaged line becomes
    a token of its length class, and a digest of a text a keyed value (ids stay, as everywhere in
    the window)."""
    if "not valid JSON: " in text or "unterminated last line: " in text:
        text = PREVIEW_IN_TEXT.sub(lambda m: f"{m.group(1)}: '{damaged_token('preview', len(m.group(2)))}'", text)
    if len(text) >= 64:
        text = DIGEST_IN_TEXT.sub(lambda m: _SESSION.digest_token(m.group(0)), text)
    return text


def hides(key: object) -> str | None:
    """The label kind for values stored under ``key``, or ``None`` when they are shown as they are."""
    if key in CHAT_KEYS:
        return "chat"
    if key in TEXT_KEYS:
        return str(key)
    return None


def hide_strings(value: Any, kind: str) -> Any:
    """``value`` with every string inside it replaced by its label."""
    if isinstance(value, str):
        return redact_text(value, kind)
    if isinstance(value, list):
        return [hide_strings(v, kind) for v in value]
    if isinstance(value, dict):
        return {k: hide_strings(v, kind) for k, v in value.items()}
    return value


def redact_tree(obj: Any) -> Any:
    """A copy of a JSON value with every text / chat value replaced by its label."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            kind = hides(k)
            keyed = redact_derived(k, v) if isinstance(v, str) else None
            out[k] = hide_strings(v, kind) if kind else keyed if keyed is not None else redact_tree(v)
        return out
    if isinstance(obj, list):
        return [redact_tree(v) for v in obj]
    return obj


#: Keys of a field change or comparison whose values are those of the field its ``name`` /
#: ``field`` / ``path`` names (the history's and the comparison's documents).
_FIELD_VALUE_KEYS = frozenset({"before", "after", "point", "view", "value"})

#: The list indices at the end of a field path (``facts[1]`` → ``facts``).
_PATH_INDEX = re.compile(r"(\[\d+\])+$")

#: Keys whose strings are diagnosis messages (shown as :func:`redact_message` shows them).
_MESSAGE_KEYS = frozenset({"message", "error", "summary"})


def redact_document(obj: Any) -> Any:
    """A copy of a command's JSON document with the window's redaction (``--redact``): what
    :func:`redact_tree` hides, a field change's values as those of the field it names (``{"name":
    "text", "before": ..., "after": ...}`` hides both; of a ``path`` such as ``facts[1].text``, the
    field it ends with), and messages as :func:`redact_message` shows them."""
    if isinstance(obj, dict):
        name = obj.get("name", obj.get("field"))
        if name is None and isinstance(obj.get("path"), str):
            name = _PATH_INDEX.sub("", obj["path"]).rpartition(".")[2]
        out = {}
        for k, v in obj.items():
            if isinstance(name, str) and k in _FIELD_VALUE_KEYS:
                out[k] = redact_tree({name: v})[name]
            elif k in _MESSAGE_KEYS and isinstance(v, str):
                out[k] = redact_message(v)
            elif (kind := hides(k)) is not None:
                out[k] = hide_strings(v, kind)
            elif isinstance(v, str) and (keyed := redact_derived(k, v)) is not None:
                out[k] = keyed
            else:
                out[k] = redact_document(v)
        return out
    if isinstance(obj, list):
        return [redact_document(v) for v in obj]
    return obj
