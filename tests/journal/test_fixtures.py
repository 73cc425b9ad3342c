"""The fixture builders (journal.fixtures): every case reproducible byte for byte, and built without
touching anything global: ``uuid.uuid4``, ``journal.events.now_iso`` and every ``now_iso`` a journal
module holds keep their identity while a builder runs, after it, and after it fails midway."""

from __future__ import annotations

import errno
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from journal import fixtures as folders
from journal import fs
from journal.fixtures import Built
from tests.helpers.fs_hooks import fail_at, fault_hook, recorded

#: What a builder used to replace for the whole process, by holder and attribute.
PATCHABLE = ("now_iso", "new_uuid", "uuid4")


def _holders() -> list[tuple[str, Any, str]]:
    """``(name, holder, attribute)`` of ``uuid.uuid4`` and of every clock or id function a journal
    module holds (``from journal.events import now_iso`` makes a module one)."""
    found: list[tuple[str, Any, str]] = [("uuid", uuid, "uuid4")]
    for name, module in sorted(sys.modules.items()):
        if name == "journal" or name.startswith("journal."):
            found += [(name, module, attr) for attr in PATCHABLE if hasattr(module, attr)]
    return found


def _identities(holders: list[tuple[str, Any, str]]) -> dict[str, int]:
    return {f"{name}.{attr}": id(getattr(holder, attr)) for name, holder, attr in holders}


def _described(b: Built) -> tuple[str, list[str], dict[str, str], dict[str, str]]:
    return b.name, b.events, b.ids, {k: str(v) for k, v in b.notes.items()}


def _build_all(root: Path) -> list[tuple[str, list[str], dict[str, str], dict[str, str]]]:
    return [_described(build(root, name)) for name, build in folders.CASES.items()]


def test_the_holders_are_found() -> None:
    names = {f"{name}.{attr}" for name, _, attr in _holders()}
    assert {"uuid.uuid4", "journal.events.now_iso", "journal.events.new_uuid", "journal.views.now_iso"} <= names
    assert {"journal.log.now_iso", "journal.appliedset.now_iso"} <= names


def test_every_case_builds_to_the_same_bytes_twice(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    assert _build_all(first) == _build_all(second)
    snapshot = folders.tree_snapshot(first)
    assert snapshot == folders.tree_snapshot(second)
    assert {rel.split("/")[0] for rel in snapshot if rel} == set(folders.CASES)
    for rel, (kind, _) in snapshot.items():
        if kind == "file":
            assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel


def test_another_seed_gives_other_ids_and_the_same_shape(tmp_path: Path) -> None:
    a = folders.healthy(tmp_path / "a", seed="a")
    b = folders.healthy(tmp_path / "b", seed="b")
    assert len(a.events) == len(b.events) and not set(a.events) & set(b.events)


def test_building_every_case_leaves_uuid4_and_every_now_iso_untouched(tmp_path: Path) -> None:
    holders = _holders()
    before = _identities(holders)
    during: list[dict[str, int]] = []

    def hook(call: fs.FsCall) -> None:
        during.append(_identities(holders))

    with fault_hook(hook):
        _build_all(tmp_path)
    assert during and all(seen == before for seen in during)
    assert _identities(holders) == before
    # a module the builders imported meanwhile holds the real ones too
    real = {attr: before[f"{name}.{attr}"] for name, _, attr in holders if name in ("uuid", "journal.events")}
    assert all(id(getattr(holder, attr)) == real[attr] for _, holder, attr in _holders())


@pytest.mark.parametrize("case", sorted(folders.CASES))
def test_a_builder_failing_midway_leaves_them_untouched(tmp_path: Path, case: str) -> None:
    with recorded() as calls:
        folders.CASES[case](tmp_path / "counted", case)
    before = _identities(_holders())
    midway = sum(c.phase == "before" for c in calls) // 2
    with fault_hook(fail_at(midway, error=errno.ENOSPC)), pytest.raises(OSError) as failed:
        folders.CASES[case](tmp_path / "failed", case)
    assert failed.value.errno == errno.ENOSPC
    assert _identities(_holders()) == before


def test_the_builders_never_ask_the_real_clock_or_uuid4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> str:
        raise AssertionError("a builder asked the process's clock or uuid4")

    for _, holder, attr in _holders():
        monkeypatch.setattr(holder, attr, refuse)
    built = _build_all(tmp_path / "refused")
    monkeypatch.undo()
    assert built == _build_all(tmp_path / "real")
