"""Event vocabulary, the event value type and the exact on-disk line encoding."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Annotated, Any, Literal, Union, cast, get_args

import msgspec

from journal.codec import loads_exact
from journal.errors import PayloadError, UnknownEventTypeError

#: The 15 names the memory server declares (memory-format §3.3), as a type: msgspec refuses any
#: other value (that line then takes the exact per-line path of the reader, which reports
#: ``unknown_type``), and hands out one shared string object per name, so a million events cost
#: no million copies of their type.
DeclaredType = Literal[
    "fact.added",
    "fact.absorbed",
    "fact.archived",
    "reflection.synthesized",
    "reflection.state_changed",
    "reflection.surfaced",
    "reflection.rebutted",
    "persona.fact_added",
    "persona.fact_mentioned",
    "persona.suppressed",
    "correction.queued",
    "correction.resolved",
    "reflection.evidence_updated",
    "persona.evidence_updated",
    "persona.entry_updated",
]

#: The 15 declared names.
ALL_EVENT_TYPES: frozenset[str] = frozenset(get_args(DeclaredType))

#: The five names with production replay handlers.
REPLAYABLE_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "reflection.evidence_updated",
        "persona.evidence_updated",
        "persona.entry_updated",
        "reflection.state_changed",
        "persona.fact_added",
    }
)

JOURNAL_NAME = "events.ndjson"
SENTINEL_NAME = "events_applied.json"


def now_iso() -> str:
    """Naive local ISO-8601 timestamp, as the memory server writes it (no zero microseconds)."""
    return datetime.now().isoformat()


def new_uuid() -> str:
    """A fresh uuid4 in canonical form (``str(uuid.uuid4())``): what an event id is."""
    return str(uuid.uuid4())


#: Where a writer takes the timestamps it writes (an event's ``ts``, the sentinel's, ``archived_at``):
#: a callable giving a naive local ISO-8601 string. ``None`` wherever one is accepted means
#: :func:`now_iso`, looked up at each call.
Clock = Callable[[], str]

#: Where a writer takes fresh ids (event ids, the uuid8 of a new shard's name): a callable giving a
#: uuid4 string, canonical (:func:`new_uuid`) or hex; a shard takes its first 8 hex digits. ``None``
#: wherever one is accepted means :func:`new_uuid`, looked up at each call.
IdSource = Callable[[], str]


def is_unicode(text: str) -> bool:
    """Whether ``text`` is valid Unicode, i.e. UTF-8 can encode it: it holds no lone surrogate.

    Python's ``json`` reads an escaped lone surrogate (``"\\ud800"``) as such a string, so a
    journal line can hold one; no writer can write it back (UTF-8 refuses it).
    """
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_event_type(event_type: object) -> str:
    """Return ``event_type`` if it is a declared name, else raise ``UnknownEventTypeError``."""
    if not isinstance(event_type, str) or event_type not in ALL_EVENT_TYPES:
        raise UnknownEventTypeError(
            f"unknown event type {event_type!r}: not one of the {len(ALL_EVENT_TYPES)} declared names"
        )
    return event_type



_NULL = msgspec.Raw(b"null")

#: The :attr:`Event.body` of an event whose payload is held parsed (an object of its own: the
#: decoder never hands it out).
PARSED_BODY = msgspec.Raw(b"null")


def payload_json(payload: Any) -> bytes:
    """A payload's JSON as the memory server writes it inside a journal line (``json.dumps``,
    non-ASCII kept, default separators).

    Raises:
        PayloadError: a string in it is not valid Unicode (a lone surrogate): UTF-8 cannot hold
            it, so neither writer can append it, and no view could store it (the stdlib writer
            refuses it as well).
        TypeError, ValueError: a value JSON cannot hold (as ``json.dumps`` raises them).
    """
    text = json.dumps(payload, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PayloadError(
            f"the payload holds a string that is not valid Unicode (a lone surrogate, {text[exc.start]!r}): "
            "it cannot be written as UTF-8; nothing was written"
        ) from None


#: An event id as the decoder takes it: a non-empty string (the reader's exact path reports the rest).
EventId = Annotated[str, msgspec.Meta(min_length=1)]


class Event(msgspec.Struct, gc=False):
    """One journal record. Treat it as immutable.

    The reader makes a million of these for a big journal, so it is a ``gc=False`` struct that
    keeps the payload as the JSON bytes it was read from (:attr:`body`) and parses it only when
    :attr:`payload` is asked for. Build one from a payload object with :func:`make_event`.

    Attributes:
        event_id: uuid4 string; carries no order.
        type: event name (may be undeclared when read from a damaged or foreign journal).
        ts: naive local ISO-8601 timestamp, audit only.
        body: the payload's JSON bytes (``null`` when the record has none).
        line: 1-based line number in the journal file (0 for events not read from a file).
        offset: byte offset of the record's first byte in the file (-1 when not read from a file).
    """

    event_id: EventId
    type: DeclaredType  # the decoder's check; the reader's exact path may store an undeclared name
    ts: str = ""
    body: msgspec.Raw = msgspec.field(name="payload", default=_NULL)
    # Not JSON keys of a record: the reader sets them after decoding (a record holding a key of
    # this name has it overwritten).
    line: int = msgspec.field(name="(reader) line", default=0)
    offset: int = msgspec.field(name="(reader) offset", default=-1)
    #: The parsed payload, for the rare record whose payload cannot be held as JSON bytes (nested
    #: deeper than an encoder recurses): then :attr:`body` is :data:`PARSED_BODY`. Never trusted
    #: otherwise (a record may hold a key of this name).
    parsed: Any = msgspec.field(name="(reader) parsed", default=None)

    @property
    def payload(self) -> Any:
        """The payload, parsed exactly as Python's ``json`` parses it (``{}`` for ``null``).

        A new object on every call: change a copy, never expect the event to change.
        """
        if self.body is PARSED_BODY:
            return self.parsed
        value = loads_exact(bytes(self.body))
        return {} if value is None else value


class SnapshotKeys(msgspec.Struct, gc=False, frozen=True):
    """The one field of an archive event's ``entry_snapshot`` that says which entry it is."""

    id: Any = None


class EntryKeys(msgspec.Struct, gc=False, frozen=True):
    """The payload fields that say which view entry an event touches, and where it archives it.

    Every other payload field is skipped while decoding. ``get`` reads it like the payload dict
    it stands for, so the rules that pick an event's entry take either.
    """

    reflection_id: Any = None
    entity_key: Any = None
    entry_id: Any = None
    to: Any = None
    absorbed_into: Any = None
    archive_shard_path: Any = None
    entry_snapshot: SnapshotKeys | None = None

    def get(self, key: str, default: Any = None) -> Any:
        if key not in _ENTRY_KEY_FIELDS:
            return default
        value = getattr(self, key)
        if value is None:
            return default
        return {"id": value.id} if key == "entry_snapshot" else value

    @classmethod
    def of(cls, payload: Any) -> EntryKeys:
        """The keys of a parsed payload (no keys for a payload that is not an object)."""
        if not isinstance(payload, dict):
            return _NO_KEYS
        snapshot = payload.get("entry_snapshot")
        return cls(
            payload.get("reflection_id"),
            payload.get("entity_key"),
            payload.get("entry_id"),
            payload.get("to"),
            payload.get("absorbed_into"),
            payload.get("archive_shard_path"),
            SnapshotKeys(snapshot.get("id")) if isinstance(snapshot, dict) else None,
        )


_NO_KEYS = EntryKeys()
_ENTRY_KEY_FIELDS = frozenset(EntryKeys.__struct_fields__)


# -- what an event touches ---------------------------------------------------------------------

#: The payload fields that name the entry an event touches, by the family its type starts with
#: (``reflection.``, ``persona.``; any other type names none): the entry is their values joined
#: with ``/``, when each is a non-empty string. The one home of that rule: :func:`entry_ref` reads
#: it, and the reader's summary records of the declared types are generated from it
#: (:data:`SUMMARY_TYPES`), so that the decoder itself checks those fields.
ENTRY_FIELDS: dict[str, tuple[str, ...]] = {
    "reflection": ("reflection_id",),
    "persona": ("entity_key", "entry_id"),
}

#: The types whose payload keys say more than their entry (an archive's shard and snapshot, a
#: merge's ``absorbed_into``: :func:`journal.handlers.archive_target`): their summaries keep the
#: whole :class:`EntryKeys`.
KEYED_TYPES: frozenset[str] = frozenset({"reflection.state_changed", "persona.fact_added"})


def entry_fields(event_type: str) -> tuple[str, ...]:
    """The payload fields that name the entry of an event of ``event_type`` (:data:`ENTRY_FIELDS`)."""
    family, dot, _ = event_type.partition(".")
    return ENTRY_FIELDS.get(family, ()) if dot else ()


def entry_ref(event_type: object, payload: Any) -> str | None:
    """The entry an event touches: ``reflection_id``, or ``"<entity_key>/<entry_id>"``
    (:data:`ENTRY_FIELDS`); ``None`` when it names none.

    ``payload`` is the payload, or its keys as a summary decoded them (:class:`EntryKeys`, or the
    keys of a type's own summary: a field it lacks is absent).
    """
    if not isinstance(event_type, str):
        return None
    names = entry_fields(event_type)
    if not names:
        return None
    if isinstance(payload, dict):
        values = list(map(payload.get, names))
    elif isinstance(payload, msgspec.Struct):  # read as attributes
        values = [getattr(payload, name, None) for name in names]
    else:
        return None
    return join_entry([value if isinstance(value, str) and value else None for value in values])


def join_entry(values: Sequence[str | None]) -> str | None:
    """The entry named by its naming values in :data:`ENTRY_FIELDS` order: joined by ``/``;
    ``None`` when one is missing. The one join of :func:`entry_ref` and the per-type summaries."""
    return None if None in values else "/".join(cast("Sequence[str]", values))


class EventSummary(msgspec.Struct, gc=False):
    """One journal record without its payload: what a diagnosis of a million events keeps.

    The same record as :class:`Event`, read by the same reader; only the payload's entry keys are
    kept (:class:`EntryKeys`). Re-read the payload from :attr:`offset` when it is needed.

    This is the exact path's summary (any type, any payload). A record of a declared type whose
    entry-naming fields are strings or absent is decoded into that type's own summary instead
    (:data:`SUMMARY_TYPES`), which has the same attributes: ``type``, :attr:`entry` and
    :attr:`keeps` as class attributes, and ``keys`` only the fields that name the entry (the whole
    :class:`EntryKeys` for the :data:`KEYED_TYPES`).
    """

    event_id: EventId
    type: DeclaredType  # as in Event
    ts: str = ""
    keys: EntryKeys = msgspec.field(name="payload", default=_NO_KEYS)
    line: int = msgspec.field(name="(reader) line", default=0)
    offset: int = msgspec.field(name="(reader) offset", default=-1)

    @property
    def entry(self) -> str | None:
        """The entry the event touches (:func:`entry_ref`)."""
        return entry_ref(self.type, self.keys)

    @property
    def keeps(self) -> bool:
        """Whether its keys may say more than its entry (:data:`KEYED_TYPES`)."""
        return self.type in KEYED_TYPES


#: A string the decoder takes only when it is not empty (the exact path says what else it is).
_NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


def _joined(getter: Callable[[Any], Any]) -> Callable[[Any], str | None]:
    def entry(summary: Any) -> str | None:
        return join_entry(getter(summary))

    return entry


def _summary_type(event_type: str) -> type[Any]:
    """The summary record of one declared type, generated from :data:`ENTRY_FIELDS`.

    Its entry-naming fields decode as a non-empty string or ``None`` (absent or null); any other
    value fails the decode, and that line takes the exact path (:class:`EventSummary`). So
    :attr:`entry` is those values joined, without a rule of its own.
    """
    names = entry_fields(event_type)
    stem = "".join(part.title() for part in event_type.replace("_", ".").split("."))
    namespace: dict[str, Any] = {"type": event_type, "keeps": event_type in KEYED_TYPES}
    if event_type in KEYED_TYPES:
        keys: Any = EntryKeys
        default: Any = _NO_KEYS
        namespace["entry"] = EventSummary.entry
    else:
        keys = msgspec.defstruct(
            f"{stem}Keys",
            [(name, _NonEmpty | None, None) for name in names],
            module=__name__,
            gc=False,
            frozen=True,
        )
        default = keys()
        if not names:
            namespace["entry"] = None
        elif len(names) == 1:
            namespace["entry"] = property(attrgetter(f"keys.{names[0]}"))
        else:
            namespace["entry"] = property(_joined(attrgetter(*(f"keys.{name}" for name in names))))
    return msgspec.defstruct(
        f"{stem}Summary",
        [
            ("event_id", EventId),
            ("ts", str, ""),
            ("keys", keys, msgspec.field(name="payload", default=default)),
            ("line", int, msgspec.field(name="(reader) line", default=0)),
            ("offset", int, msgspec.field(name="(reader) offset", default=-1)),
        ],
        module=__name__,
        namespace=namespace,
        tag_field="type",
        tag=event_type,
        gc=False,
    )


#: The summary record of each declared type, by type (:func:`_summary_type`): one tagged union
#: the reader's summaries decoder takes, so a record's ``type`` picks its fields.
SUMMARY_TYPES: dict[str, type[Any]] = {name: _summary_type(name) for name in get_args(DeclaredType)}
for _cls in SUMMARY_TYPES.values():
    globals()[_cls.__name__] = _cls  # importable by name: a summary pickles
for _cls in {c.__annotations__["keys"] for c in SUMMARY_TYPES.values()} - {EntryKeys}:
    globals()[_cls.__name__] = _cls
del _cls

#: What the reader's summaries decoder decodes a record into.
SummaryRecord = Union[tuple(SUMMARY_TYPES.values())]  # type: ignore[valid-type]  # noqa: UP007


def make_event(
    event_id: str, event_type: str, ts: str, payload: Any = None, line: int = 0, offset: int = -1
) -> Event:
    """An :class:`Event` from a payload object (``None`` gives ``{}``).

    Raises:
        PayloadError: the payload cannot be written (see :func:`payload_json`).
    """
    body = msgspec.Raw(payload_json({} if payload is None else payload))
    return Event(event_id, cast(DeclaredType, event_type), ts, body, line, offset)


def new_event(
    event_type: str, payload: dict[str, Any], *, clock: Clock | None = None, new_id: IdSource | None = None
) -> Event:
    """Build a fresh event with a new uuid4 and the current local timestamp.

    ``clock`` and ``new_id`` give the ``ts`` and the id instead (default: :func:`now_iso`,
    :func:`new_uuid`); the id is taken first.

    Raises:
        UnknownEventTypeError: ``event_type`` is not declared.
        TypeError: ``payload`` is not a dict.
        PayloadError: the payload cannot be written as a journal line (a string in it is not
            valid Unicode); nothing is written anywhere.
    """
    check_event_type(event_type)
    if not isinstance(payload, dict):
        raise TypeError(f"payload must be a dict, not {type(payload).__name__}")
    event_id = (new_id or new_uuid)()
    return make_event(event_id, event_type, (clock or now_iso)(), payload)


def encode_event(event: Event) -> bytes:
    """Encode ``event`` as one journal line, byte-compatible with the memory server.

    ``json.dumps(record, ensure_ascii=False)`` with default separators, keys in the order
    event_id, type, ts, payload, terminated by ``\\n``: the payload's bytes are spliced in as
    they are (for a read event, as they were read).
    """
    head = json.dumps(
        {"event_id": event.event_id, "type": event.type, "ts": event.ts}, ensure_ascii=False
    ).encode("utf-8")
    return head[:-1] + b', "payload": ' + bytes(event.body) + b"}\n"
