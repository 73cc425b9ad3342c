"""What a person can do about a finding, in the words of the surface they read it on.

The diagnosis names the action (:class:`journal.finding.Advice`); this module is the one
home of its words: on the command line, the ``memory-inspector replay`` flags; in the window, the
action and the Replay dialog's scope, each with its shortcut. The window's action and the dialog's
radio buttons take their shortcut and label from here, so the advice cannot name a key that does
nothing.
"""

from __future__ import annotations

import shlex
from typing import Literal

from journal.finding import Advice, Finding

#: Where a text is shown: ``cli`` (``check``'s text, the findings export) or ``window``.
Surface = Literal["cli", "window"]

#: The window's guarded-replay action and its shortcut (``Tools ▸ Replay…``).
REPLAY_ACTION = "Tools ▸ Replay…"
REPLAY_SHORTCUT = "Ctrl+Shift+P"

#: The Replay dialog's scope of each action, with its mnemonic (``&``: Alt + the next letter).
SCOPE_LABELS = {
    "park": "&Park held event:",
    "repair_journal": "Repair &journal",
    "repair_orphans": "Repair &orphaned archive events",
}

#: The command line's flags of each action.
_FLAGS = {"park": "--park", "repair_journal": "--repair-journal", "repair_orphans": "--repair-orphans"}


def _shell_word(text: str) -> str:
    """``text`` as one shell word, quoted only when it needs it (a name with spaces)."""
    return shlex.quote(text)


def mnemonic_key(label: str) -> str | None:
    """``Alt+X`` for a label holding ``&X`` (``None`` without a mnemonic)."""
    at = label.find("&")
    if at < 0 or at + 1 >= len(label):
        return None
    return f"Alt+{label[at + 1].upper()}"


def scope_words(action: str) -> str:
    """The Replay dialog's scope as a person reads it: ``“Repair journal” (Alt+J)``."""
    label = SCOPE_LABELS[action]
    key = mnemonic_key(label)
    plain = label.replace("&", "").rstrip(":")
    return f"“{plain}”" + (f" ({key})" if key else "")


def advice_text(advice: Advice, surface: Surface) -> str:
    """What to do, for ``surface``: a command on the command line, actions and keys in the window."""
    if surface == "cli":
        words = ["memory-inspector replay PATH --character", _shell_word(advice.character), _FLAGS[advice.action]]
        if advice.event_id is not None:
            words.append(_shell_word(advice.event_id))
        return " ".join(words)
    text = f"{REPLAY_ACTION} ({REPLAY_SHORTCUT}), scope {scope_words(advice.action)}"
    if advice.event_id is not None:
        text += f" with event {advice.event_id}"
    return text


def finding_text(finding: Finding, surface: Surface) -> str:
    """A finding's message with its advice, for ``surface``."""
    if finding.advice is None:
        return finding.message
    return f"{finding.message} (what to do: {advice_text(finding.advice, surface)})"
