"""journal.fs: durable append and atomic replace, fault-tested with the hook and with real failures."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from journal import encode_event, fs, make_event, read_journal
from journal.views import save_view
from tests.helpers.fs_hooks import fail_at, fault_hook, ops, recorded

LINE = encode_event(
    make_event("0f8e3a52-7c1b-4d2e-9a6f-5b4c3d2e1f0a", "fact.added", "2026-04-23T12:00:00", {"t": "茶"})
)
LINE2 = encode_event(
    make_event("1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "fact.added", "2026-04-23T12:00:01", {"t": "x"})
)


def listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def temp_litter(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.startswith(fs.TEMP_PREFIX)]


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def test_the_hook_is_not_installed_outside_tests():
    assert fs.set_fault_hook(None) is None


# -- durable append ------------------------------------------------------------------------------


def test_first_append_writes_the_whole_line_once_then_fsyncs_file_then_folder(tmp_path):
    journal = tmp_path / "events.ndjson"
    with recorded() as calls:
        offset = fs.durable_append(journal, LINE)
    assert ops(calls) == ["open", "write", "fsync", "close", "fsync_dir"]
    writes = [c for c in calls if c.op == "write" and c.phase == "before"]
    assert [w.data for w in writes] == [LINE]
    assert calls[-2].op == "fsync_dir" and Path(calls[-2].path) == tmp_path
    assert offset == 0
    assert journal.read_bytes() == LINE


def test_later_appends_do_not_fsync_the_folder(tmp_path):
    journal = tmp_path / "events.ndjson"
    fs.durable_append(journal, LINE)
    with recorded() as calls:
        offset = fs.durable_append(journal, LINE2)
    assert ops(calls) == ["open", "write", "fsync", "close"]
    assert offset == len(LINE)
    assert journal.read_bytes() == LINE + LINE2


def test_fsync_failure_propagates_and_the_folder_is_not_fsynced(tmp_path):
    journal = tmp_path / "events.ndjson"
    seen: list[str] = []

    def hook(call: fs.FsCall) -> None:
        if call.phase == "before":
            seen.append(call.op)
            if call.op == "fsync":
                raise OSError(errno.EIO, "injected fsync failure")

    with fault_hook(hook), pytest.raises(OSError, match="injected fsync failure"):
        fs.durable_append(journal, LINE)
    # The descriptor is still closed; nothing else runs after the failed fsync.
    assert seen == ["open", "write", "fsync", "close"]


def test_failure_at_every_call_of_an_append_propagates_and_leaks_no_descriptor(tmp_path):
    for index in range(4):  # open, write, fsync, close (the folder fsync is covered above)
        journal = tmp_path / f"events{index}.ndjson"
        journal.write_bytes(LINE)
        fds = open_fds()
        with fault_hook(fail_at(index)), pytest.raises(OSError, match="injected"):
            fs.durable_append(journal, LINE2)
        assert open_fds() == fds, f"descriptor leaked after failure at call {index}"
        # open or write failed: nothing landed; fsync or close failed: the bytes may be there.
        assert journal.read_bytes() == (LINE if index < 2 else LINE + LINE2)


def test_a_failed_write_is_truncated_back_so_no_partial_line_remains(tmp_path):
    journal = tmp_path / "events.ndjson"
    fs.durable_append(journal, LINE)
    state = {"writes": 0}

    def hook(call: fs.FsCall) -> int | None:
        if call.op == "write" and call.phase == "before":
            state["writes"] += 1
            if state["writes"] == 1:
                return 10  # a short write: 10 bytes land
            raise OSError(errno.ENOSPC, "injected ENOSPC")
        return None

    with fault_hook(hook), pytest.raises(OSError, match="ENOSPC"):
        fs.durable_append(journal, LINE2)
    assert journal.read_bytes() == LINE


def test_short_writes_are_continued_until_the_whole_line_is_written(tmp_path):
    journal = tmp_path / "events.ndjson"

    def hook(call: fs.FsCall) -> int | None:
        return 7 if call.op == "write" and call.phase == "before" else None

    with fault_hook(hook):
        fs.durable_append(journal, LINE)
    assert journal.read_bytes() == LINE


def test_append_after_a_torn_last_line_keeps_the_fragment_apart(tmp_path):
    journal = tmp_path / "events.ndjson"
    torn = LINE[:37]
    journal.write_bytes(torn)
    with recorded() as calls:
        offset = fs.durable_append(journal, LINE2)
    writes = [c.data for c in calls if c.op == "write" and c.phase == "before"]
    assert writes == [b"\n" + LINE2]  # separator and record in the same single write
    assert offset == len(torn) + 1
    assert journal.read_bytes() == torn + b"\n" + LINE2


def test_append_without_keeping_lines_apart_glues_like_the_memory_server(tmp_path):
    journal = tmp_path / "events.ndjson"
    journal.write_bytes(LINE[:37])
    fs.durable_append(journal, LINE2, keep_lines_apart=False)
    assert journal.read_bytes() == LINE[:37] + LINE2


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux /dev/full")
def test_real_enospc_from_dev_full_propagates():
    with pytest.raises(OSError) as info:
        fs.durable_append("/dev/full", LINE)
    assert info.value.errno == errno.ENOSPC


# -- atomic write ----------------------------------------------------------------------------------


def test_atomic_write_writes_a_temp_in_the_same_folder_fsyncs_replaces_then_fsyncs_folder(tmp_path):
    target = tmp_path / "view.json"
    target.write_bytes(b"old")
    with recorded() as calls:
        fs.atomic_write_bytes(target, b"new content")
    assert ops(calls) == ["open", "write", "fsync", "close", "replace", "fsync_dir"]
    tmp = Path(calls[0].path)
    assert tmp.parent == tmp_path
    assert tmp.name.startswith(".nkatmp") and tmp.name.endswith(".tmp") and len(tmp.name) == len(".nkatmp") + 8 + 4
    assert all(Path(c.path) == tmp for c in calls if c.op in ("open", "write", "fsync", "close"))
    assert [Path(c.path) for c in calls if c.op == "replace"] == [target, target]
    assert Path(calls[-1].path) == tmp_path
    assert target.read_bytes() == b"new content"
    assert temp_litter(tmp_path) == []


def test_atomic_write_creates_the_temp_file_private(tmp_path):
    modes: list[int] = []

    def hook(call: fs.FsCall) -> None:
        if call.op == "open" and call.phase == "after":
            modes.append(os.stat(call.path).st_mode & 0o777)

    with fault_hook(hook):
        fs.atomic_write_bytes(tmp_path / "view.json", b"{}")
    assert modes == [0o600]


def _atomic_call_count(tmp_path: Path) -> int:
    folder = tmp_path / "count"
    folder.mkdir()
    with recorded() as calls:
        fs.atomic_write_bytes(folder / "view.json", b"new")
    return len(ops(calls))


@pytest.mark.parametrize("existing", [True, False], ids=["over-old-file", "new-file"])
def test_failure_at_every_call_leaves_no_temp_and_old_content_or_new_content_whole(tmp_path, existing):
    n_calls = _atomic_call_count(tmp_path)
    assert n_calls == 6
    for index in range(n_calls):
        folder = tmp_path / f"case{index}"
        folder.mkdir()
        target = folder / "view.json"
        if existing:
            target.write_bytes(b'["old"]')
        fds = open_fds()
        with fault_hook(fail_at(index)), pytest.raises(OSError, match="injected"):
            fs.atomic_write_bytes(target, b'["new"]')
        assert open_fds() == fds, f"descriptor leaked after failure at call {index}"
        assert temp_litter(folder) == [], f"temp litter after failure at call {index}"
        if index <= 4:  # up to and including the replace: the old content (or no file) survives
            assert listing(folder) == ({"view.json": b'["old"]'} if existing else {})
        else:  # the folder fsync after the replace failed: the new content is whole
            assert listing(folder) == {"view.json": b'["new"]'}


def test_failure_reported_after_the_replace_happened_leaves_no_temp(tmp_path):
    target = tmp_path / "view.json"
    target.write_bytes(b"old")
    replace_index = 4
    with fault_hook(fail_at(replace_index, phase="after")), pytest.raises(OSError):
        fs.atomic_write_bytes(target, b"new")
    assert temp_litter(tmp_path) == []
    assert target.read_bytes() == b"new"


def test_real_replace_failure_onto_a_folder_leaves_no_temp(tmp_path):
    # A real OS error at os.replace (works as root, unlike a read-only folder).
    target = tmp_path / "view.json"
    target.mkdir()
    (target / "inside").write_bytes(b"keep")
    with pytest.raises(OSError) as info:
        fs.atomic_write_json(target, {"a": 1})
    assert info.value.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST)
    assert temp_litter(tmp_path) == []
    assert listing(tmp_path) == {"view.json/inside": b"keep"}


def test_real_write_failure_beyond_the_file_size_limit_keeps_old_content_and_no_temp(tmp_path):
    # A real failing write() in the target's own folder, also as root: RLIMIT_FSIZE makes the
    # kernel refuse bytes past the limit (EFBIG). Run in a child so the limit stays there.
    target = tmp_path / "view.json"
    target.write_bytes(b'["old"]')
    child = textwrap.dedent(
        """
        import errno, resource, signal, sys
        from journal import fs
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            fs.atomic_write_json(sys.argv[1], ["x" * 100] * 100)
        except OSError as exc:
            print(errno.errorcode.get(exc.errno, exc.errno))
        else:
            print("no error")
        """
    )
    out = subprocess.run([sys.executable, "-c", child, str(target)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "EFBIG"
    assert listing(tmp_path) == {"view.json": b'["old"]'}


def test_failed_atomic_write_into_a_missing_folder_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        fs.atomic_write_bytes(tmp_path / "missing" / "view.json", b"{}")
    assert listing(tmp_path) == {}


def test_view_is_written_like_the_server_indent_2_non_ascii_kept_no_trailing_newline(tmp_path):
    target = tmp_path / "reflections.json"
    view = [{"id": "ref_0123456789abcdef", "text": "主人喜欢绿茶", "tags": [], "score": 1.5, "x": None}]
    save_view(target, view)
    expected = (
        '[\n  {\n    "id": "ref_0123456789abcdef",\n    "text": "主人喜欢绿茶",\n    "tags": [],\n'
        '    "score": 1.5,\n    "x": null\n  }\n]'
    ).encode()
    assert target.read_bytes() == expected
    assert json.loads(expected) == view


# -- folders ---------------------------------------------------------------------------------------


def test_ensure_dir_creates_each_missing_folder_and_fsyncs_its_parent(tmp_path):
    target = tmp_path / "a" / "b"
    with recorded() as calls:
        fs.ensure_dir(target)
    assert [(c.op, Path(c.path)) for c in calls if c.phase == "before"] == [
        ("mkdir", tmp_path / "a"),
        ("fsync_dir", tmp_path),
        ("mkdir", tmp_path / "a" / "b"),
        ("fsync_dir", tmp_path / "a"),
    ]
    assert target.is_dir()


def test_ensure_dir_of_an_existing_folder_does_nothing(tmp_path):
    with recorded() as calls:
        fs.ensure_dir(tmp_path)
    assert calls == []


def test_replace_file_and_remove_file_fsync_the_folder(tmp_path):
    src, dst = tmp_path / "a", tmp_path / "b"
    src.write_bytes(b"1")
    with recorded() as calls:
        fs.replace_file(src, dst)
        fs.remove_file(dst)
    assert ops(calls) == ["replace", "fsync_dir", "unlink", "fsync_dir"]
    assert listing(tmp_path) == {}


def test_appended_journal_reads_back_after_short_writes_and_a_torn_tail(tmp_path):
    journal = tmp_path / "events.ndjson"
    journal.write_bytes(LINE + LINE2[:20])
    fs.durable_append(journal, LINE2)
    result = read_journal(journal)
    assert [e.event_id for e in result.events] == [
        "0f8e3a52-7c1b-4d2e-9a6f-5b4c3d2e1f0a",
        "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
    ]
    assert [(d.kind, d.line, d.offset) for d in result.defects] == [("malformed", 2, len(LINE))]


# -- is_inside: the one "is this path inside that folder" -------------------------------------------


def test_is_inside_holds_the_folder_itself_and_what_is_below_it(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert fs.is_inside(tmp_path / "a", tmp_path / "a")
    assert fs.is_inside(tmp_path / "a" / "b" / "not-yet.zip", tmp_path / "a")  # need not exist
    assert not fs.is_inside(tmp_path / "a", tmp_path / "a" / "b")
    assert not fs.is_inside(tmp_path / "ab", tmp_path / "a")  # a prefix of the name is not inside
    assert fs.is_inside(tmp_path / "a" / "b" / ".." / "x", tmp_path / "a")
    assert not fs.is_inside(tmp_path / "a" / ".." / "x", tmp_path / "a")


def test_is_inside_follows_links_both_ways(tmp_path: Path) -> None:
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "out").symlink_to(tmp_path / "elsewhere")
    assert fs.is_inside(tmp_path / "alias" / "deep", tmp_path / "real")
    assert fs.is_inside(tmp_path / "real" / "deep", tmp_path / "alias")
    assert not fs.is_inside(tmp_path / "real" / "out" / "f", tmp_path / "real")  # the link leaves it


def test_is_inside_folds_case_as_the_platform_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Memory").mkdir()
    assert not fs.is_inside(tmp_path / "MEMORY" / "x", tmp_path / "memory")  # POSIX: case matters
    monkeypatch.setattr(os.path, "normcase", str.lower)  # as ntpath.normcase folds it
    assert fs.is_inside(tmp_path / "MEMORY" / "x", tmp_path / "memory")
