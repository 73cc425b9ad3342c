"""The cards persona ensure syncs (memory-format §9.9 fact 7): what the server's
``aget_character_data()`` gives it for one character, from ``characters.json`` as its start reads it
(:func:`journal.serverrules.read_characters`). A value that comes from the server's localized
defaults, which the notes do not give, is an :class:`Unknown`. Nothing here writes anything.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from journal.serverrules import CHARACTERS_KEY, DEFAULT_CHARACTERS, CharacterList

#: The profile fields of ``_reserved.persona_override`` (fact 7, ``utils/persona_presets.py:25-33``).
PROFILE_FIELDS = ("性格原型", "性格", "口癖", "爱好", "雷点", "隐藏设定", "一句话台词")

#: The flat keys ``migrate_catgirl_reserved`` deletes from a catgirl card (fact 7,
#: ``utils/config_manager/reserved_schema.py:418-447``); only the ``pngtuber*`` ones are not reserved.
LEGACY_FLAT_KEYS = (
    "voice_id", "system_prompt", "model_type", "live3d_sub_type", "live2d_item_id", "item_id", "live2d",
    "live2d_idle_animation", "vrm", "vrm_animation", "idleAnimation", "idleAnimations", "lighting", "vrm_rotation",
    "mmd", "mmd_animation", "mmd_idle_animation", "mmd_idle_animations", "pngtuber", "pngtuber_idle_image",
    "pngtuber_talking_image", "pngtuber_happy_image", "pngtuber_sad_image", "pngtuber_angry_image",
    "pngtuber_surprised_image",
)  # fmt: skip

#: The master card's key in ``characters.json`` and its name field (fact 7).
MASTER_CARD_KEY = "主人"
MASTER_NAME_FIELD = "档案名"

#: The card key whose entry text the rename events become (fact 7).
RENAME_EVENTS_FIELD = "__ai_context.profile_rename_events"


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value the server takes from something this inspector cannot know (its localized defaults).

    Attributes:
        what: what the value is, in words (for ``missing_inputs``).
    """

    what: str


@dataclass(frozen=True, slots=True)
class Cards:
    """What the server's ``aget_character_data()`` gives persona ensure for one character (fact 7).

    Attributes:
        neko: the character's effective card (a dict), ``None`` when the name is not a key of the
            catgirl map (no neko sync), or :class:`Unknown`. Its values may be :class:`Unknown`.
        master: the effective master card (synced when a non-empty dict), or :class:`Unknown`.
        human: ``name_mapping['human']``, or :class:`Unknown`.
        error: why ``aget_character_data()`` raises, or ``None``: then the settings fill raises and
            the card sync changes nothing.
    """

    neko: dict[str, Any] | Unknown | None = None
    master: Any = None
    human: Any = None
    error: str | None = None


# -- fact 7: the cards ------------------------------------------------------------------------------


def migrate_catgirl_card(card: dict[str, Any]) -> None:
    """Fact 7, ``migrate_catgirl_reserved`` as far as the card sync sees it
    (``utils/config_manager/reserved_schema.py:191-200``, ``:418-447``): ``_reserved`` becomes a
    dict (a non-dict one is replaced by ``{}``, losing its override), and the legacy flat keys
    (:data:`LEGACY_FLAT_KEYS`) are deleted. In place."""
    if not isinstance(card.get("_reserved"), dict):
        card["_reserved"] = {}
    for key in LEGACY_FLAT_KEYS:
        card.pop(key, None)


def effective_card(card: Any, entity: str) -> dict[str, Any]:
    """Fact 7, ``_build_effective_character_payload`` (``persona_payload.py:253-277``): a deep copy;
    if ``_reserved.persona_override`` is a dict, each non-blank ``profile`` value of
    :data:`PROFILE_FIELDS` is set, stripped; then the rename events may add
    ``__ai_context.profile_rename_events``. Not a dict: ``{}``."""
    if not isinstance(card, dict):
        return {}
    effective = copy.deepcopy(card)
    reserved = card.get("_reserved")
    override = reserved.get("persona_override") if isinstance(reserved, dict) else None
    profile = override.get("profile") if isinstance(override, dict) else None
    if isinstance(profile, dict):
        for key in PROFILE_FIELDS:
            value = str(profile.get(key) or "").strip()
            if value:
                effective[key] = value
    effective.update(rename_events_field(card, set(effective), entity))
    return effective


def rename_events_field(card: dict[str, Any], existing: set[str], entity: str) -> dict[str, Any]:
    """Fact 7 (``persona_payload.py:316-401``): ``_reserved.ai_context.rename_events`` as one card
    field, ``__ai_context.profile_rename_events`` (``.2``, ``.3``… if taken), its lines joined by
    ``\\n``. A ``profile_rename`` event with an old and a new name becomes a localized sentence,
    which is not known here (:class:`Unknown`); one without them contributes its stripped ``text``."""
    reserved = card.get("_reserved")
    context = reserved.get("ai_context") if isinstance(reserved, dict) else None
    events = context.get("rename_events", []) if isinstance(context, dict) else []
    if not isinstance(events, list):
        return {}
    key = RENAME_EVENTS_FIELD
    index = 2
    while key in existing:
        key = f"{RENAME_EVENTS_FIELD}.{index}"
        index += 1
    old_names: list[str] = []
    current = ""
    lines: list[str] = []
    for event in events:
        if not isinstance(event, dict) or str(event.get("type") or "").strip() != "profile_rename":
            continue
        old, new = str(event.get("old_name") or "").strip(), str(event.get("new_name") or "").strip()
        if old and new:
            if old not in old_names:
                old_names.append(old)
            current = new
        elif str(event.get("text") or "").strip():
            lines.append(str(event.get("text") or "").strip())
    if current and [n for n in old_names if n != current]:
        return {key: Unknown(f"the localized rename sentence of the {entity} card's rename events")}
    return {key: "\n".join(lines)} if lines else {}


def cards_from(characters: CharacterList, name: str) -> Cards:
    """Fact 7 (``utils/config_manager/characters.py:171-241``): the cards from ``characters.json``,
    or from the server's localized defaults (not known here) when it is missing, unreadable or not
    a dict. The master card is ``主人`` (the default one if absent), the neko card ``猫娘[name]``
    after :func:`migrate_catgirl_card`, both through :func:`effective_card`; ``human`` is the
    master card's ``档案名``, else the default's."""
    doc = characters.document
    if not isinstance(doc, dict):
        if characters.path is not None and not characters.defaults:
            u = Unknown(f"characters.json was not read ({characters.error})")
            return Cards(u, u, u)
        why = "no characters.json found" if characters.path is None else f"characters.json {characters.error}"
        neko = Unknown(f"the server's localized default card of {name!r} ({why})")
        listed = characters.path is None or name in DEFAULT_CHARACTERS
        return Cards(
            neko if listed else None,
            Unknown(f"the server's localized default master card ({why})"),
            Unknown(f"the default master card's {MASTER_NAME_FIELD} ({why})"),
        )
    if MASTER_CARD_KEY in doc:
        master = effective_card(doc[MASTER_CARD_KEY], "master")
        human = master.get(MASTER_NAME_FIELD, Unknown(f"the default master card's {MASTER_NAME_FIELD}"))
        master_card: Any = master
    else:
        master_card = Unknown("the server's localized default master card (characters.json has no 主人)")
        human = Unknown(f"the default master card's {MASTER_NAME_FIELD} (characters.json has no 主人)")
    catgirls = doc.get(CHARACTERS_KEY)
    if not catgirls:
        why = f"characters.json has no {CHARACTERS_KEY!r} entries: the server's localized defaults"
        default = Unknown(f"the default card of {name!r} ({why})") if name in DEFAULT_CHARACTERS else None
        return Cards(default, master_card, human)
    if not isinstance(catgirls, dict):
        return Cards(error=f"its {CHARACTERS_KEY!r} is a JSON {json_type(catgirls)}: AttributeError")
    if name not in catgirls:
        return Cards(None, master_card, human)
    raw = copy.deepcopy(catgirls[name])
    if isinstance(raw, dict):
        migrate_catgirl_card(raw)
    return Cards(effective_card(raw, "neko"), master_card, human)


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value, as messages say it."""
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")

