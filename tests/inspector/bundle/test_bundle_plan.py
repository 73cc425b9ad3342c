"""The journal's redaction by compiled plans gives the generic walk's bytes, on every input the
bundle is tested on and on random payloads of shapes no plan expects (issue 28)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.bundle import journal as bundle_journal
from inspector.core.bundle import redact as redact_module
from inspector.core.bundle import rules as R
from inspector.core.bundle.journal import redact_journal
from inspector.core.bundle.redact import BundleRedactor, id_shaped, not_id_shaped
from inspector.core.redaction import Redactor
from journal import layout
from tests.inspector.bundle.conftest import INPUTS, SECRET

_JOURNAL = R.KINDS["journal"]


class GenericRedactor(BundleRedactor):
    """The reference: every record by the generic walk."""

    def record(self, event_id: str, etype: str, ts: str, payload: Any) -> dict[str, Any]:
        return self.value({"event_id": event_id, "type": etype, "ts": ts, "payload": payload}, _JOURNAL)


class CountingRedactor(BundleRedactor):
    """The plan path, counting the plans it compiles (so a test knows plans ran)."""

    compiled = 0

    def plan(self, rules: Any, keys: tuple[str, ...], types: tuple[type, ...]) -> Any:
        CountingRedactor.compiled += 1
        return super().plan(rules, keys, types)


def _views(folder: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(folder.glob("*.json")) if layout.JSON_FILES.get(p.name) == "view"]


def redacted_both_ways(journal: Path) -> tuple[bytes, bytes, BundleRedactor, BundleRedactor]:
    """The journal redacted by plans and by the generic walk, each redactor first reading the
    views beside it (so text digests map alike)."""
    got = []
    for cls in (CountingRedactor, GenericRedactor):
        r = cls(Redactor(SECRET))
        for data in _views(journal.parent):
            r.json_file(data, "view")
        got.append((b"".join(redact_journal(journal, r)), r))
    (plan, rp), (generic, rg) = got
    return plan, generic, rp, rg


@pytest.mark.parametrize("build", [b for _, b in INPUTS], ids=[i for i, _ in INPUTS])
def test_every_input_plan_equals_generic(tmp_path: Path, build: Any) -> None:
    path = Path(build(tmp_path))
    journals = [path] if path.name == "events.ndjson" else sorted(path.rglob("events.ndjson"))
    journals = [j for j in journals if j.is_file() and not j.is_symlink()]
    for journal in journals:
        plan, generic, rp, rg = redacted_both_ways(journal)
        assert plan == generic, journal
        assert rp.digests == rg.digests


def test_the_plan_path_runs(tmp_path: Path) -> None:
    """The equality above is between two different paths: plans are compiled, once per shape."""
    journal = tmp_path / "events.ndjson"
    lines = [
        {"event_id": f"e{i}", "type": "reflection.evidence_updated", "ts": "2026-01-01T00:00:00",
         "payload": {"reflection_id": "ref_0123456789abcdef", "reinforcement": i / 7, "source": "user_fact"}}
        for i in range(50)
    ]  # fmt: skip
    journal.write_text("".join(json.dumps(x) + "\n" for x in lines))
    CountingRedactor.compiled = 0
    plan, generic, _rp, _rg = redacted_both_ways(journal)
    assert plan == generic
    assert CountingRedactor.compiled == 1  # one shape, fifty events
    assert b"0123456789abcdef" not in plan  # the id's hash part is keyed


# -- random payloads --------------------------------------------------------------------------

#: Keys the plans meet: every kept key, keys with a known suffix, text keys, dropped ones, and
#: names nobody defined.
_KEYS = st.one_of(
    st.sampled_from(sorted({k for rules in R.KINDS.values() for k in rules})),
    st.sampled_from(["text", "content", "embedding", "payload", "messages", "x_at", "a_text_sha256", "master"]),
    st.text(max_size=12),
)

_STRINGS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "2026-01-01T10:00:00",
            "2026-01-01 10:00:00.123+09:00",
            "２０２６-01-01",
            "ref_0123456789abcdef",
            "fact_20260101100000_0123abcd",
            "prom_ref_0123456789abcdef",
            "id with space",
            "id\u00a0nbsp",
            "tab\tid",
            "confirmed",
            "reflection.state_changed",
            "master",
            "neko",
            "2026-02-01_0000000a.json",
            "../../etc/passwd",
            "a/b/c.json",
            "0123abcd" * 8,
            "主人 drinks green tea",
            "\ud800",
            "x" * 300,
        ]
    ),
)

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    _STRINGS,
)

_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=6)),
    max_leaves=20,
)

_PAYLOADS = st.one_of(
    st.dictionaries(_KEYS, _JSON, max_size=10),
    _JSON,  # a payload that is not an object at all
)

_TYPES = st.one_of(st.sampled_from(sorted(redact_module.ALL_EVENT_TYPES)), st.text(max_size=10))


def _line(eid: str, etype: Any, ts: Any, payload: Any) -> str:
    return json.dumps({"event_id": eid, "type": etype, "ts": ts, "payload": payload})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(
        st.tuples(_TYPES, st.one_of(_STRINGS, st.integers()), _PAYLOADS), min_size=1, max_size=25
    ),
    repeat=st.booleans(),
)
def test_random_payloads_plan_equals_generic(tmp_path: Path, records: list[Any], repeat: bool) -> None:
    """Wrong JSON types under kept keys, unknown keys and types, nesting, non-ASCII, lone
    surrogates, integers past 64 bits, the same shapes again (the plans are reused)."""
    lines = [_line(f"e{i}", t, ts, p) for i, (t, ts, p) in enumerate(records)]
    if repeat:
        lines += [_line(f"r{i}", t, ts, p) for i, (t, ts, p) in enumerate(records)]
    journal = tmp_path / "events.ndjson"
    journal.write_text("\n".join(lines) + "\n")
    plan, generic, rp, rg = redacted_both_ways(journal)
    assert plan == generic
    assert rp.digests == rg.digests


def test_odd_payloads_plan_equals_generic(tmp_path: Path) -> None:
    """Huge strings, a text and its digest in either order, keys that key to the same token, too
    deep a nesting for any walk, a list too deep, a shape change inside one event type."""
    deep = '{"a": ' * 3000 + "1" + "}" * 3000
    deep_list = '{"k": ' + "[" * 990 + '"x"' + "]" * 990 + "}"
    text = "Master likes green tea"
    sha = __import__("hashlib").sha256(text.encode()).hexdigest()
    payloads = [
        {"text": "t" * 200_000, "entry_id": "i" * 5000, "status": "s" * 65},
        {"rewrite_text_sha256": sha, "text": text},
        {"text": text, "rewrite_text_sha256": sha},
        {"entity_key": "Alice", "Alice": {"facts": [{"text": text, "embedding": [0.1, 0.2]}]}},
        {"embedding": {"nested": "dropped"}, "source_fact_ids": ["fact_1", 2, None, ["x"]]},
        {"merged_from_ids": ["ref_0123456789abcdef", "id with space", ""], "archive_shard_path": "a/../b.json"},
        {"reflection_id": 7, "reinforcement": "0.5", "source": ["user_fact"]},
        {"reflection_id": "ref_0123456789abcdef", "reinforcement": 0.5, "source": "user_fact"},
        {"非ASCII キー": "値", "ts": "２０２６-01-01", "created_at": "2026-01-01T10:00:00Z"},
    ]
    lines = [_line(f"e{i}", "reflection.evidence_updated", "2026-01-01T10:00:00", p) for i, p in enumerate(payloads)]
    for i, raw in enumerate((deep, deep_list)):
        lines.append(f'{{"event_id": "d{i}", "type": "reflection.evidence_updated", "ts": "", "payload": {raw}}}')
    journal = tmp_path / "events.ndjson"
    journal.write_text("\n".join(lines) + "\n")
    plan, generic, rp, rg = redacted_both_ways(journal)
    assert plan == generic
    assert rp.digests == rg.digests
    assert text.encode() not in plan


def test_past_the_plan_limit_the_generic_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal of ever-new shapes: past the limit new shapes take the generic walk, alike."""
    monkeypatch.setattr(redact_module, "_PLANS_MAX", 3)
    lines = [_line(f"e{i}", "reflection.evidence_updated", "", {f"k{i}": "v", "entry_id": "x"}) for i in range(10)]
    journal = tmp_path / "events.ndjson"
    journal.write_text("\n".join(lines) + "\n")
    CountingRedactor.compiled = 0
    plan, generic, _rp, _rg = redacted_both_ways(journal)
    assert plan == generic
    assert CountingRedactor.compiled == 3


def test_a_printable_string_has_no_whitespace_but_a_space() -> None:
    """The id rule checks "no whitespace" as ``isprintable()`` and no U+0020: of every character
    ``\\s`` matches, only U+0020 is printable."""
    space = re.compile(r"\s")
    both = [c for c in range(sys.maxunicode + 1) if chr(c).isprintable() and space.match(chr(c))]
    assert both == [0x20]
    r = BundleRedactor(Redactor(SECRET))
    for value in ("a b", "a\u00a0b", "a\u2028b", "a\tb", "a\x1cb", "a\u3000b"):
        assert r.string(value, R.ID).startswith("‹text")
    assert r.string("a_b-c.d", R.ID) == "a_b-c.d"


@given(values=st.lists(st.one_of(_STRINGS, st.sampled_from(["", "a" * 256, "a" * 257, "a b", "a\u2028b"]))))
def test_ids_told_at_once_are_those_told_one_by_one(values: list[str]) -> None:
    """check.txt's list of ids to key: a batch told at once equals the rule asked per id."""
    assert not_id_shaped(values) == [v for v in values if not id_shaped(v)]


def test_a_batch_of_only_blank_lines_keeps_the_line_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that holds only blank lines (more of them than one read takes): the next event
    stays on its line (the count of lines written once went back to 0 there)."""
    monkeypatch.setattr(bundle_journal, "_CHUNK", 4096)
    rec = '{"event_id": "e%d", "type": "reflection.evidence_updated", "ts": "", "payload": {}}\n'
    journal = tmp_path / "events.ndjson"
    journal.write_text(rec % 1 + "\n" * 10_000 + rec % 2 + "\n\n")
    out = b"".join(redact_journal(journal, BundleRedactor(Redactor(SECRET))))
    lines = journal.read_bytes().split(b"\n")
    assert len(out.split(b"\n")) == len(lines)
    assert [i for i, x in enumerate(out.split(b"\n")) if x] == [i for i, x in enumerate(lines) if x] == [0, 10_001]
