"""The memory server's next start in words: the one renderer ``check``'s text and the window's panel
both show (Qt-free).

:func:`describe_server_start` turns a character's prediction (``CharacterDiagnosis.server_start``,
memory-format §9) and its ``server.*`` findings into lines, in the order the server's start does
them; each line has the severity of the finding that says the same thing. It is told its surface,
so what a person can do is worded for it (:mod:`inspector.core.advice`: flags on the command line,
actions and shortcuts in the window). The two surfaces differ only there, and in where the other
``server.*`` findings go: the window's panel lists them among its lines, ``check`` lists them
under its findings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.advice import Surface, advice_text, finding_text
from journal.diagnosis.values import (
    CharacterDiagnosis,
    EntryChange,
    ServerStart,
    health_of,
    is_server_start_finding,
    is_shown,
)
from journal.finding import SEVERITIES, Finding

#: The renderer's title: the actor, and why it comes first.
TITLE = "Memory server's next start"
SUBTITLE = "what happens to this folder unless someone acts (predicted; nothing is written)"

#: At most this many changed entries are listed (the rest are counted), on every surface.
CHANGES_SHOWN = 20

#: Finding codes a structured line already says (their severity colours that line).
_CONSUMED = frozenset(
    {
        "server.persona_replaced",
        "server.replay_stops",
        "server.shard_passed",
        "server.writes_outside",
        "server.not_reconciled",
    }
)


@dataclass(frozen=True, slots=True)
class ServerLine:
    """One line: its severity, what it is about, and the words."""

    severity: str
    label: str
    text: str


@dataclass(slots=True)
class ServerStartText:
    """What the renderer says about one character.

    Attributes:
        summary: one sentence that names the memory server as the actor.
        severity: the worst severity of the server's findings (``info`` when there are none).
        lines: the details, in the order the server's start does them.
    """

    summary: str
    severity: str = "info"
    lines: list[ServerLine] = field(default_factory=list)

    def plain(self, indent: str = "  ") -> list[str]:
        """Every line as plain text, the title first (what ``check`` prints and Copy copies)."""
        out = [f"{TITLE} — {SUBTITLE}", f"{indent}{self.severity:<7}  {self.summary}"]
        out.extend(f"{indent}{ln.severity:<7}  {ln.label}: {ln.text}" for ln in self.lines)
        return out


def _worst(severities: Iterable[str], default: str = "info") -> str:
    """The highest of ``severities`` (:func:`journal.diagnosis.values.health_of`, the one home of
    that rule), ``default`` when there is none."""
    found = health_of(s for s in severities if s in SEVERITIES)
    return default if found == "none" else found


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def _value(value: Any) -> str | None:
    """A field value that may be shown (numbers, booleans, null); ``None`` for text (private)."""
    return json.dumps(value) if is_shown(value) else None


def change_text(change: EntryChange) -> str:
    """One changed entry in words: numbers as ``before → after``, text fields as ``changed`` only."""
    head = f"{change.file} {change.entry}: "
    if change.removed:
        return head + "removed from the view"
    parts = []
    for name, before, after in change.fields:
        b, a = _value(before), _value(after)
        parts.append(f"{name} {b} → {a}" if b is not None and a is not None else f"{name} changed")
    body = ", ".join(parts) or "changed"
    return head + ("added to the view: " + body if change.added else body)


def for_character(c: CharacterDiagnosis, surface: Surface) -> ServerStartText:
    """:func:`describe_server_start` of one character's diagnosis."""
    s = c.sentinel
    if c.not_applicable is not None:
        text = ServerStartText(_sentence(c.not_applicable) + ".")
        if c.cloud_unit is not None:
            text.lines.extend(unit_lines(c.cloud_unit))
        return text
    return describe_server_start(
        c.server_start,
        c.findings,
        surface=surface,
        our_sentinel_index=s.index if s.state == "ok" else None,
    )


def describe_server_start(
    start: ServerStart | None,
    findings: Sequence[Finding],
    *,
    surface: Surface,
    our_sentinel_index: int | None = None,
) -> ServerStartText:
    """What the memory server's next start does to one character folder, for ``surface``.

    Args:
        start: the prediction (``None``: not predicted for this folder).
        findings: the character's findings; the ``server.*`` ones colour the lines.
        surface: where the text is shown (:data:`inspector.core.advice.Surface`).
        our_sentinel_index: where our reader finds the sentinel (the server's is shown when it differs).
    """
    server = [f for f in findings if is_server_start_finding(f)]
    severity = _worst(f.severity for f in server)

    def sev(code: str, default: str = "info") -> str:
        return _worst((f.severity for f in server if f.code == code), default)

    if start is None:
        text = ServerStartText("The memory server's next start was not predicted for this folder.", severity)
        _findings_lines(text, server, surface, everything=True)
        return text
    text = ServerStartText(_sentence(start.summary()) + ".", severity)
    add = text.lines.append
    if start.reconciled is False:
        where = f" {start.characters_file}" if start.characters_file else ""
        add(
            ServerLine(
                sev("server.not_reconciled"),
                "Reconciled",
                f"not reconciled (not in characters.json{': ' + where.strip() if where else ''}): the memory server "
                "never replays this character's journal",
            )
        )
        if start.outbox:
            add(ServerLine("info", "Outbox", f"it still runs {_plural(start.outbox, 'pending operation')}"))
        _findings_lines(text, server, surface)
        return text
    _persona_lines(text, start, sev("server.persona_replaced", "error"))
    _replay_lines(text, start, sev, our_sentinel_index)
    for change in start.changes[:CHANGES_SHOWN]:
        add(ServerLine("info", "Changes", change_text(change)))
    more = start.changes_total - min(len(start.changes), CHANGES_SHOWN)
    if more > 0:
        add(ServerLine("info", "Changes", f"… and {_plural(more, 'more entry', 'more entries')}"))
    _file_lines(text, start, sev("server.writes_outside", "error"))
    if start.outbox:
        add(ServerLine("info", "Then", f"runs {_plural(start.outbox, 'pending outbox operation')} in the background"))
    for note in start.notes:
        add(ServerLine("info", "Note", note))
    for advice in start.advice:
        add(ServerLine("info", "Instead", advice_text(advice, surface)))
    _findings_lines(text, server, surface)
    if start.reconciled is None and start.characters_file is None:
        add(ServerLine("info", "Reconciled", "not known (no characters.json found beside the memory root)"))
    elif start.reconciled:
        add(ServerLine("info", "Reconciled", f"yes (listed in {start.characters_file})"))
    return text


def _persona_lines(text: ServerStartText, start: ServerStart, replaced: str) -> None:
    action, message = start.persona
    if action == "keep" and not (start.persona_ensure is not None and start.persona_ensure.may_rewrite):
        return
    severity = {"replace": replaced, "unknown": "warning", "raises": "error"}.get(action, "info")
    text.lines.append(ServerLine(severity, "Persona ensure", f"{action}: {message}" if message else action))
    ensure = start.persona_ensure
    if ensure is not None and ensure.changes:
        text.lines.append(ServerLine("info", "Persona ensure", "changes " + ", ".join(ensure.changes)))
    if ensure is not None and ensure.missing_inputs:
        text.lines.append(ServerLine("info", "Persona ensure", "not known here: " + "; ".join(ensure.missing_inputs)))


def _replay_lines(text: ServerStartText, start: ServerStart, sev: Any, our_sentinel_index: int | None) -> None:
    add = text.lines.append
    st = start.sentinel
    full = st.state != "ok"
    if full and start.replays:
        ident = f" ({st.event_id})" if st.event_id else ""
        add(
            ServerLine(
                _worst((sev("server.sentinel_unseen", ""), sev("server.full_replay", "")), "warning"),
                "Its sentinel",
                f"{st.state}{ident} as the server's reader sees it: it replays the whole journal from the first event",
            )
        )
    elif st.index is not None and st.index != our_sentinel_index:
        add(ServerLine("info", "Its sentinel", f"at event #{st.index} as the server's reader sees it"))
    if start.raises is not None:
        pass  # the summary says it replays nothing, and why; its finding says what to do
    elif start.replays == 0:
        add(ServerLine("info", "Replay", "nothing to replay"))
    else:
        origin = "the first event" if full else (f"event #{st.index + 1}" if st.index is not None else "its sentinel")
        add(
            ServerLine(
                "info", "Replay", f"{_plural(start.replays, 'event')} from {origin}; it applies {start.applied:,}"
            )
        )
    if start.stop is not None:
        stop = start.stop
        where = f"event #{stop.index} (line {stop.line})" if stop.index is not None else f"line {stop.line}"
        left = f"; it leaves {_plural(start.unapplied, 'event')} unapplied" if start.unapplied else ""
        add(
            ServerLine(
                sev("server.replay_stops", "error"),
                "Stops at",
                f"{where} {stop.type or '(no type)'}: {stop.reason}: {stop.message}{left}",
            )
        )
    for index in start.passed:
        add(
            ServerLine(
                sev("server.shard_passed", "error"),
                "Moves past",
                f"event #{index}: its shard is corrupt; the server keeps the entry in the view and moves its "
                "sentinel on (our guarded replay pauses there)",
            )
        )


def _file_lines(text: ServerStartText, start: ServerStart, outside: str) -> None:
    """The files it writes and deletes, and what its one-shot migrations after reconcile lose (its
    notes say what they do)."""
    add = text.lines.append
    inside = [p for p, out in start.writes if not out]
    if inside:
        add(ServerLine("info", "Writes", ", ".join(inside)))
    for path, out in start.writes:
        if out:
            add(ServerLine(outside, "Writes", f"{path} — OUTSIDE the character folder"))
    if start.deletes:
        add(ServerLine("info", "Deletes", ", ".join(start.deletes)))
    if start.evidence_seeds and (start.migration_orphans or start.migration_glues):
        words = []
        if start.migration_orphans:
            words.append(
                f"its evidence migration orphans {_plural(start.migration_orphans, 'record')} reconcile left unapplied"
            )
        if start.migration_glues:
            words.append("its first append is glued onto the torn last line and lost")
        add(ServerLine("warning", "After", "; ".join(words)))


def _findings_lines(
    text: ServerStartText, server: Sequence[Finding], surface: Surface, *, everything: bool = False
) -> None:
    """The ``server.*`` findings no structured line says: listed here in the window; on the command
    line ``check`` lists them under its findings (``everything``: there is no prediction to list
    them beside, so they are listed here on every surface)."""
    if surface == "cli" and not everything:
        return
    for f in server:
        if everything or f.code not in _CONSUMED:
            text.lines.append(ServerLine(f.severity, "Finding", f"{f.code}: {finding_text(f, surface)}"))


def unit_lines(check: Any) -> list[ServerLine]:
    """A cloud-save unit's metadata, where people look for what a folder is (``check`` and the
    window's panel): its layout, ``meta.json``, profile (text by the privacy rule), binding,
    fingerprint and manifest (``check``: :class:`journal.cloudsave.verify.UnitCheck`)."""
    from inspector.core.output import value_text

    u, files, fp, m = check.unit, check.files, check.fingerprint, check.manifest
    out = [ServerLine("info", "Unit", f"{u.layout}; the server reads {u.memory_dir}")]
    if check.layouts_same is not None:
        same = "the same bytes" if check.layouts_same else "different bytes: " + ", ".join(check.layouts_differing)
        out.append(ServerLine("info" if check.layouts_same else "warning", "Layouts", f"both hold {same}"))
    meta = files.meta.value
    if isinstance(meta, dict):
        shown = ("updated_at_utc", "sequence_number", "source_client_id", "asset_state")
        out.append(ServerLine("info", "meta.json", ", ".join(f"{k} {meta[k]}" for k in shown if k in meta)))
    else:
        out.append(ServerLine("info", "meta.json", "none (a legacy-only unit)"))
    profile = files.profile.value
    if isinstance(profile, dict):
        keys = ", ".join(f"{k} {value_text(v)}" for k, v in list(profile.items())[:6])
        out.append(ServerLine("info", "Profile", keys + (", …" if len(profile) > 6 else "")))
    binding = files.binding.value
    if isinstance(binding, dict):
        out.append(
            ServerLine(
                "info",
                "Binding",
                ", ".join(f"{k} {binding.get(k, '')}" for k in ("model_type", "asset_source", "asset_state")),
            )
        )
    severity = "info" if fp.state != "differs" else "warning"
    note = f": {fp.note}" if fp.note else ""
    out.append(ServerLine(severity, "Fingerprint", f"{fp.state}{note}"))
    if m.present:
        bad = len(m.differs) + len(m.missing) + len(m.extra)
        out.append(
            ServerLine(
                "info" if not bad else "warning",
                "Manifest",
                f"{m.checked:,} files checked, " + ("all as listed" if not bad else f"{bad} not as listed"),
            )
        )
    else:
        out.append(ServerLine("info", "Manifest", "none: the files that differ cannot be named"))
    for b in check.surroundings.backups:
        out.append(ServerLine("info", "Download backup", f"{b.stamp}: {b.path}"))
    return out
