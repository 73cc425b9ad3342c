"""Opening: what a path is, clear reasons when it cannot be opened, the preview, cancelling."""

from __future__ import annotations

import threading
import zipfile
from typing import Any

import pytest

import journal.diagnosis.scan as diagnose_module
from inspector.core import loader as loader_module
from inspector.core import location as location_mod
from inspector.core.jobs import Cancelled, CancelToken
from inspector.core.loader import first_character_dir, holds_no_character, load_location, read_preview
from inspector.core.location import LocationError, open_sample, resolve_location
from journal.diagnosis import Diagnosis, UnreadableInputError, diagnose_path
from tests.inspector.gui_fixtures import hand_diagnosis, write_character


def test_folders_and_zips_resolve(tmp_path):
    char = write_character(tmp_path)
    assert resolve_location(tmp_path).kind == "folder"
    assert resolve_location(char).kind == "folder"
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(char / "events.ndjson", "alice/events.ndjson")
    loc = resolve_location(archive)
    assert loc.kind == "zip" and not loc.watchable and "read-only" in loc.label


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("nope", None, "no such file or folder"),
        ("empty.zip", b"", "an empty file, neither a folder nor a .zip export"),
        ("notes.txt", b"hi", "notes.txt: neither a folder nor a .zip export"),
    ],
)
def test_unopenable_paths_say_why(tmp_path, name, content, words):
    if content is not None:
        (tmp_path / name).write_bytes(content)
    with pytest.raises(LocationError, match=words):
        resolve_location(tmp_path / name)


def test_sample_is_copied_to_a_scratch_folder_and_discarded(tmp_path, monkeypatch):
    fake = tmp_path / "bundled"
    write_character(fake, "bob")
    monkeypatch.setattr(location_mod, "sample_source", lambda: fake)
    loc = open_sample(tmp_path)
    assert loc.kind == "sample" and "sample" in loc.label
    assert (loc.path / "bob" / "events.ndjson").read_bytes() == (fake / "bob" / "events.ndjson").read_bytes()
    assert loc.scratch is not None and loc.scratch != fake
    loc.discard()
    assert not loc.scratch.exists() and (fake / "bob").is_dir()


def test_missing_sample_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(location_mod, "sample_source", lambda: tmp_path / "absent")
    with pytest.raises(LocationError, match="sample is missing"):
        open_sample(tmp_path)


def test_preview_shows_the_first_rows_of_the_first_character(tmp_path):
    write_character(tmp_path, "bob", applied=50)
    write_character(tmp_path, "alice", applied=3)
    assert first_character_dir(tmp_path).name == "alice"
    preview = read_preview(tmp_path / "bob", max_bytes=1000)
    tl = preview.timeline
    assert tl.provisional and 0 < len(tl.events) < 50
    assert {tl.state(r) for r in tl.refs} == {"loading"}
    assert tl.marker_position(tl.refs) is None


def test_which_folder_a_preview_reads_follows_the_diagnosis_rules(tmp_path):
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "readme.txt").write_text("not memory")
    assert first_character_dir(docs) is None and holds_no_character(docs)  # no bogus "character" to preview
    staged = tmp_path / "cloudsave"
    write_character(staged / "characters" / "carol", "memory")  # a cloud-save unit: characters/carol/memory/
    assert first_character_dir(staged) == staged / "characters" / "carol" / "memory"
    write_character(tmp_path / "root", "bob")
    (tmp_path / "root" / "new-character").mkdir()  # empty: still a character, beside bob
    assert first_character_dir(tmp_path / "root") == tmp_path / "root" / "bob"
    assert not holds_no_character(tmp_path / "root") and not holds_no_character(tmp_path / "root" / "bob")
    assert not holds_no_character(tmp_path / "missing")  # unreadable: the diagnosis says why


def test_a_folder_holding_no_character_loads_empty_with_the_diagnosiss_words(tmp_path):
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    previews = []
    loaded = load_location(resolve_location(docs), CancelToken(), diagnose_path, on_preview=previews.append)
    with pytest.raises(UnreadableInputError) as raised:
        diagnose_path(str(docs))
    assert previews == [] and loaded.timelines == {}
    assert loaded.empty_reason == str(raised.value)  # the line `check` prints, from its one home
    assert "no character folder found here" in loaded.empty_reason

    def broken(path, progress=None):
        raise UnreadableInputError(f"{path}: cannot be listed: Permission denied")

    write_character(tmp_path / "root", "bob")
    with pytest.raises(UnreadableInputError):  # any other unreadable input stays a failure
        load_location(resolve_location(tmp_path / "root"), CancelToken(), broken)


def _diagnose_with(char_dirs):
    def diagnose(path: str, progress: Any = None) -> Diagnosis:
        return Diagnosis(path, path, [hand_diagnosis(d) for d in char_dirs])

    return diagnose


def test_load_location_previews_then_builds_timelines(tmp_path):
    a = write_character(tmp_path, "alice", applied=2)
    b = write_character(tmp_path, "bob", applied=1, pending=1)
    previews, progress = [], []
    loaded = load_location(
        resolve_location(tmp_path),
        CancelToken(),
        _diagnose_with([a, b]),
        on_preview=previews.append,
        on_progress=progress.append,
    )
    assert [p.timeline.name for p in previews] == ["alice"]
    assert list(loaded.timelines) == ["alice", "bob"]
    assert loaded.timelines["bob"].badge()["pending"] == 1
    assert progress and progress[-1].total == 2


def test_cancel_during_the_diagnosis_discards_the_result(tmp_path):
    a = write_character(tmp_path, "alice")
    token = CancelToken()
    entered, release = threading.Event(), threading.Event()

    def slow(path, progress=None):
        entered.set()
        release.wait(10)
        return Diagnosis(path, path, [hand_diagnosis(a)])

    result = {}

    def run():
        try:
            load_location(resolve_location(tmp_path), token, slow)
        except Cancelled:
            result["cancelled"] = True

    t = threading.Thread(target=run)
    t.start()
    assert entered.wait(10)
    token.cancel()
    release.set()
    t.join(10)
    assert result == {"cancelled": True}


def test_the_analysis_shows_measured_progress_and_a_cancel_stops_its_scan(tmp_path, monkeypatch):
    write_character(tmp_path, "alice", applied=300, pending=100)
    write_character(tmp_path, "bob", applied=200)
    monkeypatch.setattr(diagnose_module, "REPORT_EVERY", 4096)
    monkeypatch.setattr(loader_module, "PROGRESS_INTERVAL", 0.0)
    progress = []
    load_location(resolve_location(tmp_path), CancelToken(), diagnose_path, on_progress=progress.append)
    measured = [p for p in progress if p.message.startswith("Analysing") and p.total]
    assert len(measured) > 5 and all(p.total == 1000 for p in measured)
    assert [p.done for p in measured] == sorted(p.done for p in measured) and measured[-1].done == 1000
    assert measured[-1].message.startswith("Analysing") and measured[-1].detail.endswith(" MiB")

    # Updates are spaced out (they are work for the GUI thread); the last one always shows.
    monkeypatch.setattr(loader_module, "PROGRESS_INTERVAL", 3600.0)
    progress.clear()
    load_location(resolve_location(tmp_path), CancelToken(), diagnose_path, on_progress=progress.append)
    assert [p.done for p in progress if p.message.startswith("Analysing") and p.total] == [0, 1000]

    # Cancelling while the journal is being scanned stops the scan at the next report.
    token = CancelToken()
    reports: list[int] = []

    def counting(path: str, progress: Any = None) -> Diagnosis:
        def seen(done: int, total: int) -> None:
            reports.append(done)
            if len(reports) == 3:
                token.cancel()
            progress(done, total)

        return diagnose_path(path, progress=seen)

    with pytest.raises(Cancelled):
        load_location(resolve_location(tmp_path), token, counting)
    total = sum((tmp_path / n / "events.ndjson").stat().st_size for n in ("alice", "bob"))
    assert len(reports) == 3 and reports[-1] < total // 2  # it raised at once, far from the end
