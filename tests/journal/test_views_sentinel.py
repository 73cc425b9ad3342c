"""journal.views: the sentinel's read states and its atomic write; loading and saving views."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from journal import SENTINEL_NAME, SentinelRead, ViewCorruptError, fs, load_view, read_sentinel, write_sentinel
from journal.views import save_view
from tests.helpers.fs_hooks import recorded


def put_sentinel(folder: Path, data: bytes) -> None:
    (folder / SENTINEL_NAME).write_bytes(data)


# -- reading the sentinel ------------------------------------------------------------------------------


def test_a_missing_sentinel_reads_as_missing_and_means_replay_from_start(tmp_path):
    s = read_sentinel(tmp_path)
    assert s == SentinelRead("missing")
    assert s.replay_from_start


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "not valid JSON"),
        (b'{"last_applied_event_id": "abc"', "not valid JSON"),
        (b"\xff\xfe", "not UTF-8 at byte 0"),
        (b'["abc"]', "top level is a list"),
        (b'"abc"', "top level is a str"),
        (b"null", "top level is a NoneType"),
    ],
)
def test_an_unreadable_or_non_object_sentinel_is_malformed(tmp_path, data, fragment):
    put_sentinel(tmp_path, data)
    s = read_sentinel(tmp_path)
    assert s.state == "malformed"
    assert s.event_id is None and s.replay_from_start
    assert s.message is not None and fragment in s.message


@pytest.mark.parametrize("value", [b"12", b"1.5", b"true", b"[]", b"{}"])
def test_a_non_string_id_is_malformed(tmp_path, value):
    put_sentinel(tmp_path, b'{"last_applied_event_id": ' + value + b', "ts": "2026-01-01T00:00:00"}')
    s = read_sentinel(tmp_path)
    assert (s.state, s.event_id, s.ts) == ("malformed", None, "2026-01-01T00:00:00")
    assert s.message is not None and "not a string" in s.message
    assert s.replay_from_start


def test_a_null_id_reads_as_null(tmp_path):
    put_sentinel(tmp_path, b'{"last_applied_event_id": null, "ts": "2026-01-01T00:00:00"}')
    assert read_sentinel(tmp_path) == SentinelRead("null", ts="2026-01-01T00:00:00")
    assert read_sentinel(tmp_path).replay_from_start


def test_an_absent_id_key_reads_as_null(tmp_path):
    put_sentinel(tmp_path, b'{"ts": 5}')
    assert read_sentinel(tmp_path) == SentinelRead("null")


def test_a_string_id_reads_as_ok(tmp_path):
    put_sentinel(tmp_path, b'{\n  "last_applied_event_id": "9b2f-\xe7\x8c\xab",\n  "ts": "2026-01-01T00:00:00"\n}')
    s = read_sentinel(tmp_path)
    assert s == SentinelRead("ok", event_id="9b2f-猫", ts="2026-01-01T00:00:00")
    assert not s.replay_from_start


def test_a_non_string_ts_is_dropped_but_the_id_kept(tmp_path):
    put_sentinel(tmp_path, b'{"last_applied_event_id": "abc", "ts": 12}')
    assert read_sentinel(tmp_path) == SentinelRead("ok", event_id="abc")


def test_a_folder_where_the_sentinel_should_be_is_refused_not_an_error(tmp_path):
    (tmp_path / SENTINEL_NAME).mkdir()
    s = read_sentinel(tmp_path)
    assert s.state == "refused" and s.event_id is None
    assert s.message is not None and "folder" in s.message


def test_a_sentinel_that_cannot_be_read_is_malformed_not_an_error(tmp_path, monkeypatch):
    put_sentinel(tmp_path, b'{"last_applied_event_id": "abc"}')

    def denied(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(fs, "open_regular", denied)
    s = read_sentinel(tmp_path)
    assert s.state == "malformed"
    assert s.message is not None and s.message.startswith("cannot read")


# -- writing the sentinel ----------------------------------------------------------------------------


def test_write_sentinel_writes_indent_2_json_atomically(tmp_path):
    before = datetime.now()
    with recorded() as calls:
        write_sentinel(tmp_path, "9b2f-猫")
    after = datetime.now()
    assert [c.op for c in calls if c.phase == "before"] == ["open", "write", "fsync", "close", "replace", "fsync_dir"]
    assert Path(calls[0].path).parent == tmp_path and Path(calls[0].path).name.startswith(fs.TEMP_PREFIX)
    assert next(Path(c.path) for c in calls if c.op == "replace") == tmp_path / SENTINEL_NAME

    data = (tmp_path / SENTINEL_NAME).read_bytes()
    obj = json.loads(data)
    assert list(obj) == ["last_applied_event_id", "ts"]
    assert data == json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")
    assert data.startswith(b'{\n  "last_applied_event_id": "9b2f-\xe7\x8c\xab",\n  "ts": "')
    assert not data.endswith(b"\n")
    ts = datetime.fromisoformat(obj["ts"])
    assert ts.tzinfo is None and before <= ts <= after
    assert read_sentinel(tmp_path).event_id == "9b2f-猫"
    assert [p.name for p in tmp_path.iterdir()] == [SENTINEL_NAME]


def test_write_sentinel_null(tmp_path):
    write_sentinel(tmp_path, None)
    assert json.loads((tmp_path / SENTINEL_NAME).read_bytes())["last_applied_event_id"] is None
    assert read_sentinel(tmp_path).state == "null"


def test_a_failed_sentinel_write_keeps_the_old_sentinel(tmp_path):
    write_sentinel(tmp_path, "old")

    def hook(call: fs.FsCall) -> None:
        if call.op == "replace" and call.phase == "before":
            raise OSError(5, "injected")

    previous = fs.set_fault_hook(hook)
    try:
        with pytest.raises(OSError):
            write_sentinel(tmp_path, "new")
    finally:
        fs.set_fault_hook(previous)
    assert read_sentinel(tmp_path).event_id == "old"
    assert [p.name for p in tmp_path.iterdir()] == [SENTINEL_NAME]


# -- views ----------------------------------------------------------------------------------------------


def test_a_missing_view_loads_as_an_empty_value_of_its_type(tmp_path):
    assert load_view(tmp_path / "reflections.json", list) == []
    assert load_view(tmp_path / "persona.json", dict) == {}
    assert load_view(tmp_path / "persona.json", dict, missing="absent") == "absent"


@pytest.mark.parametrize("data", [b"", b"[", b"\xff", b"{'a': 1}"])
def test_a_view_that_is_not_json_is_corrupt(tmp_path, data):
    (tmp_path / "reflections.json").write_bytes(data)
    with pytest.raises(ViewCorruptError, match="not valid JSON"):
        load_view(tmp_path / "reflections.json", list)


def test_a_view_of_the_wrong_top_level_type_is_corrupt(tmp_path):
    (tmp_path / "persona.json").write_bytes(b"[]")
    with pytest.raises(ViewCorruptError, match="top-level list, expected a dict"):
        load_view(tmp_path / "persona.json", dict)


def test_a_view_round_trips_unchanged_through_load_and_save(tmp_path):
    original = (
        '[\n  {\n    "id": "ref_0123456789abcdef",\n    "text": "主人喜欢绿茶",\n    "reinforcement": 2.4,\n'
        '    "big": 123456789012345678901234567890,\n    "neg": -9223372036854775809,\n    "nan": NaN\n  }\n]'
    ).encode()
    path = tmp_path / "reflections.json"
    path.write_bytes(original)
    save_view(path, load_view(path, list))
    assert path.read_bytes() == original
