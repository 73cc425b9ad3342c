"""Payloads are read back by offset; the filter works on columns and, for text, on payload JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core import filtering, payloads
from inspector.core.filtering import (
    DAMAGED_TYPE,
    FEW_ROWS,
    FilterError,
    TimelineFilter,
    accepts_live,
    apply_filter,
    filter_fields,
    match_records,
)
from inspector.core.jobs import Cancelled, CancelToken
from inspector.core.payloads import RecordReader, SummaryCache, compile_search, payload_matches, search_payloads
from inspector.core.timeline import CharacterTimeline
from journal import EventLog
from tests.inspector.gui_fixtures import hand_diagnosis, write_character


@pytest.fixture
def timeline(tmp_path):
    char = write_character(tmp_path, applied=6, pending=2)
    log = EventLog(tmp_path)
    log.append("alice", "persona.fact_added", {"entity_key": "master", "entry_id": "card_1a2b3c4d", "text": "Oolong"})
    with open(char / "events.ndjson", "ab") as fh:
        fh.write(b"this line is garbage about oolong\n")
    return CharacterTimeline(hand_diagnosis(char))


def test_record_reader_returns_the_record_at_an_offset(timeline):
    reader = RecordReader(f"{timeline.path}/events.ndjson")
    record, raw = reader.record(timeline.row(3))
    assert record["event_id"] == timeline.events.event_id(3)
    assert raw.endswith(b"}")
    defect = timeline.row(timeline.refs[-1])
    record, raw = reader.record(defect)
    assert record is None and raw == b"this line is garbage about oolong"


def test_summary_cache_reads_a_window_in_one_open(timeline, monkeypatch):
    opens = []
    real = RecordReader.raw_records

    def counting(self, offsets, limit=None):
        opens.append(1)
        return real(self, offsets, limit)

    monkeypatch.setattr(RecordReader, "raw_records", counting)
    cache = SummaryCache(timeline, RecordReader(f"{timeline.path}/events.ndjson"))
    refs = list(timeline.refs)
    texts = [cache.summary(refs, pos) for pos in range(len(refs))]
    assert len(opens) == 1
    assert texts[0] == "rein 0.50 · (user_fact)"
    assert texts[8] == "added “Oolong”"
    assert texts[-1].startswith("not valid JSON")
    cache.set_redact(True)
    assert "Oolong" not in cache.summary(refs, 8)


def test_field_filters_use_types_states_and_entry(timeline):
    refs = timeline.refs
    assert filter_fields(timeline, refs, TimelineFilter(states=frozenset({"pending"}))) == [6, 7, 8]
    assert filter_fields(timeline, refs, TimelineFilter(types=frozenset({"persona.fact_added"}))) == [8]
    assert filter_fields(timeline, refs, TimelineFilter(types=frozenset({DAMAGED_TYPE}))) == [refs[-1]]
    assert filter_fields(timeline, refs, TimelineFilter(states=frozenset({"damaged"}))) == [refs[-1]]
    assert filter_fields(timeline, refs, TimelineFilter(entry="CARD_1A2B")) == [8]
    assert filter_fields(timeline, refs, TimelineFilter(types=frozenset())) == []


@pytest.mark.parametrize("few_rows", [FEW_ROWS, 0], ids=["records read back", "file scan"])
def test_text_filter_matches_payloads_only_and_is_case_insensitive(timeline, monkeypatch, few_rows):
    monkeypatch.setattr(filtering, "FEW_ROWS", few_rows)
    refs = timeline.refs
    assert apply_filter(timeline, refs, TimelineFilter(text="oolong")) == [8, refs[-1]]
    # an event id is not part of the payload: searching for it finds nothing
    assert apply_filter(timeline, refs, TimelineFilter(text=timeline.events.event_id(0))) == []
    assert apply_filter(timeline, refs, TimelineFilter(text=r'"reinforcement": 9\.0', regex=True)) == [6]
    with pytest.raises(FilterError):
        apply_filter(timeline, refs, TimelineFilter(text="(", regex=True))


def test_file_scan_and_record_reads_agree(timeline, monkeypatch):
    """The chunked file scan (for many rows) finds what reading records one by one finds."""
    monkeypatch.setattr(payloads, "_CHUNK", 300)  # many chunks, lines split across them
    pattern = compile_search("rein", False)
    refs = list(timeline.refs)
    assert search_payloads(f"{timeline.path}/events.ndjson", timeline, refs, pattern) == list(range(8))
    reader = RecordReader(f"{timeline.path}/events.ndjson")
    assert match_records(timeline, reader, refs, pattern) == list(range(8))


def test_search_can_be_cancelled(timeline):
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        search_payloads(f"{timeline.path}/events.ndjson", timeline, timeline.refs, compile_search("x", False), token)


def test_live_rows_pass_the_filter_with_their_payload_text(timeline):
    flt = TimelineFilter(states=frozenset({"pending"}), text="oolong")
    assert accepts_live(timeline, 8, flt, '{"text": "Oolong"}')
    assert not accepts_live(timeline, 8, flt, '{"text": "Sencha"}')
    assert not accepts_live(timeline, 0, flt, '{"text": "Oolong"}')  # applied


# -- the file scan against the rule it implements -------------------------------------------------------

#: Lines that make the search's shortcuts earn their keep: the text outside the payload, in a key
#: that only looks like it, in damaged lines, in other spellings of a letter, in bytes that are
#: not UTF-8, after a BOM, before a CR.
TRICKY = [
    b'{"event_id": "tea-1", "type": "fact.added", "ts": "tea", "payload": {"text": "nothing"}}',
    b'{"event_id": "e2", "type": "fact.added", "ts": "t", "payload": {"text": "Green TEA"}}',
    '{"event_id": "e3", "type": "fact.added", "ts": "t", "payload": {"text": "3 \u212a, \u017fpecial"}}'.encode(),
    '{"event_id": "e4", "type": "fact.added", "ts": "t", "payload": {"text": "\u0130stanbul"}}'.encode(),
    '{"event_id": "e5", "type": "fact.added", "ts": "t", "payload": {"text": "Σίσυφος"}}'.encode(),
    b'{"event_id": "e6", "type": "fact.added", "ts": "t", "payload": {"text": "tea \xff"}}',
    b'\xef\xbb\xbf{"event_id": "e7", "type": "fact.added", "ts": "t", "payload": {"text": "bom tea"}}',
    b'{"event_id": "torn tea{"event_id": "e8", "type": "fact.added", "ts": "t", "payload": {"text": "glued"}}',
    b'{"event_id": "e9", "type": "fact.added", "ts": "t", "payload": {"text": "crlf tea"}}\r',
    b'{"event_id": "e10", "type": "fact.added", "ts": "t", "PAYLOAD": "tea", "payload": {}}',
    b'{"event_id": "e11", "type": "tea.added", "ts": "t", "payload": {"text": "unknown type"}}',
    b'{"event_id": "e2", "type": "fact.added", "ts": "t", "payload": {"text": "duplicate tea"}}',
    b"",
    b"garbage about tea",
    '{"event_id": "e12", "type": "fact.added", "ts": "t", "payload": {"text": "主人喜欢喝茶", "k": 3}}'.encode(),
    b'{"event_id": "tail", "payload": "tea',  # torn: no newline
]

LITERALS = [
    "tea", "TEA", "k", "3 k", "special", "SPECIAL", "istanbul", "σίσυφοσ",
    "主人", "喝茶", "\ufffd", "glued", "e6", "payload", '"payload"', "x\ny", "rein", "}}\r", '"tea', "\ud800",
]
REGEXES = [
    r"tea$", r'^\{"event_id": "torn', r"(?<=\")tea", r"t.a", r"\d+\.\d", r"主人.*茶", r"TEA|crlf", r"\Agarbage",
    r"k$", r"x*", r"$", r"3 \S", r"te?a", r"\btea\b", r"[^a-z]tea", r"(?s)tea.*\}",
    # plain text every match holds, after or between what is not plain
    r"\d: \d\}", r"(t|g)ea", r"[ea]\u0061 ", r"\x74ea", r"\N{LATIN SMALL LETTER T}ea", r"\164ea", r"(t)e\1",
    r"a{2}b|tea", r"unknown(?= type)", r'"k": \d', r"t{0}ea", r"\w{1,99} tea", r"[]t]ea", r"(?i:T)EA\b",
    r"\d{1,3}\.?\d? k", r"[]qqqqqqq]* type",
]


@pytest.fixture
def tricky(tmp_path):
    char = write_character(tmp_path, applied=3, pending=1)
    with open(char / "events.ndjson", "ab") as fh:
        fh.write(b"\n".join(TRICKY))
    tl = CharacterTimeline(hand_diagnosis(char))
    kinds = {tl.row(r).kind for r in tl.refs if r < 0}
    assert kinds == {"invalid_utf8", "glued", "duplicate_event_id", "malformed", "torn_tail"}
    return tl


def _by_the_rule(timeline, refs, pattern):
    """Today's rule, line by line: a row's line decoded (invalid bytes replaced); an event from its
    first ``"payload"`` on, a damaged line whole."""
    lines = (Path(timeline.path) / "events.ndjson").read_bytes().split(b"\n")
    out = []
    for r in refs:
        text = lines[timeline.line(r) - 1].decode("utf-8", "replace")
        if payload_matches(text, pattern) if r >= 0 else pattern.search(text) is not None:
            out.append(r)
    return out


@pytest.mark.parametrize("chunk", [1, 7, 64, 300, 8 << 20])
@pytest.mark.parametrize("which", ["all", "every other", "damaged only"])
def test_file_scan_finds_exactly_what_the_rule_says(tricky, monkeypatch, chunk, which):
    monkeypatch.setattr(payloads, "_CHUNK", chunk)
    refs = list(tricky.refs)
    refs = {"all": refs, "every other": refs[::2], "damaged only": [r for r in refs if r < 0]}[which]
    journal = f"{tricky.path}/events.ndjson"
    found = {}
    for text, regex in [(t, False) for t in LITERALS] + [(t, True) for t in REGEXES]:
        pattern = compile_search(text, regex)
        got = search_payloads(journal, tricky, refs, pattern)
        assert got == _by_the_rule(tricky, refs, pattern), (text, regex)
        found[text] = got
    if which == "all":
        by_id = {r: tricky.row(r).event_id for r in refs if r >= 0}
        assert [by_id.get(r, "damaged") for r in found["tea"]] == [
            "e2", "damaged", "e7", "damaged", "e9", "damaged", "damaged", "damaged"
        ]  # not tea-1 (envelope), not e8 (tea in its glued fragment), not e10 ("PAYLOAD" is not the key)
        assert [by_id.get(r) for r in found["k"]] == ["e3", "e11", "e12"]  # the Kelvin sign is a k
        assert [by_id.get(r) for r in found["special"]] == ["e3"]  # long s
        assert [by_id.get(r) for r in found["istanbul"]] == ["e4"]  # dotted capital I
        assert [by_id.get(r) for r in found["σίσυφοσ"]] == ["e5"]  # a final sigma is a sigma
        assert [by_id.get(r) for r in found["主人"]] == ["e12"]
        assert [by_id.get(r, "damaged") for r in found["\ufffd"]] == ["damaged"]  # the line that is not UTF-8
        assert found["x\ny"] == [] and found["\ud800"] == []


def test_case_variants_are_the_regex_engines():
    assert set(payloads._case_variants("k")["k"]) == {"k", "K", "\u212a"}
    assert set(payloads._case_variants("s")["s"]) == {"s", "S", "\u017f"}
    assert set(payloads._case_variants("i")["i"]) == {"i", "I", "\u0130", "\u0131"}
    assert set(payloads._case_variants("\u03c3")["\u03c3"]) == {"\u03a3", "\u03c3", "\u03c2"}
    assert payloads._case_variants("主")["主"] == ("主",)


def test_file_scan_is_cancelled_between_chunks(tricky, monkeypatch):
    monkeypatch.setattr(payloads, "_CHUNK", 64)
    token = CancelToken()
    reads = []
    real = payloads._chunks

    def chunks(fh, tok):
        for piece in real(fh, tok):
            reads.append(piece)
            if len(reads) == 3:
                token.cancel()
            yield piece

    monkeypatch.setattr(payloads, "_chunks", chunks)
    for text, regex in [("tea", False), ("t.a", True), ("tea$", True)]:
        reads.clear()
        token = CancelToken()
        with pytest.raises(Cancelled):
            search_payloads(f"{tricky.path}/events.ndjson", tricky, tricky.refs, compile_search(text, regex), token)
        assert len(reads) == 3
