"""``--redact`` on ``check`` and ``history``: the window's redaction in what the CLI prints (issue 25)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.redaction import redact_message
from journal import fixtures

pytestmark = pytest.mark.usefixtures("replay_env")

#: A SHA-256 as messages name a text's digest.
DIGEST = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")

ENTRY = "master/prom_ref_77aa88bb99cc00dd"


@pytest.fixture
def drifted(root: Path) -> Path:
    """A persona entry whose text drifted from the journal: check's messages name both digests."""
    fixtures.persona_drift(root)
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_redact_hides_the_digests_its_messages_name(
    capsys: pytest.CaptureFixture[str], drifted: Path
) -> None:
    code, plain, _ = _run(capsys, "check", str(drifted))
    digests = set(DIGEST.findall(plain))
    assert code == 1 and digests  # the plain report names the text's digest
    code, redacted, _ = _run(capsys, "check", str(drifted), "--redact")
    assert code == 1 and not any(d in redacted for d in digests)  # keyed, as the window keys them
    assert redacted.splitlines() == [redact_message(line) for line in plain.splitlines()]  # nothing else changes
    code, doc_text, err = _run(capsys, "check", str(drifted), "--json", "--redact")
    assert code == 1 and not any(d in doc_text or d in err for d in digests)
    plain_doc = json.loads(_run(capsys, "check", str(drifted), "--json")[1])
    doc = json.loads(doc_text)
    [before] = [f for f in plain_doc["characters"][0]["findings"] if DIGEST.search(f["message"])][:1]
    [after] = [f for f in doc["characters"][0]["findings"] if f["code"] == before["code"]][:1]
    assert after["message"] == redact_message(before["message"])
    assert doc["characters"][0]["counts"] == plain_doc["characters"][0]["counts"]  # a verdict is not changed


def test_history_redact_keys_the_text_digest_as_the_window_does(
    capsys: pytest.CaptureFixture[str], drifted: Path
) -> None:
    plain = json.loads(_run(capsys, "history", str(drifted), "--entry", ENTRY, "--json")[1])
    digests = {p["fields"].get("text_sha256") for p in plain["points"]} - {None}
    assert digests and all(DIGEST.fullmatch(d) for d in digests)
    code, out, _ = _run(capsys, "history", str(drifted), "--entry", ENTRY, "--json", "--redact")
    assert code == 0 and not any(d in out for d in digests)
    doc = json.loads(out)
    assert [p["index"] for p in doc["points"]] == [p["index"] for p in plain["points"]]
    keyed = [p["fields"].get("text_sha256") for p in doc["points"]]
    assert len(set(keyed) - {None}) == len(digests)  # keyed, so equal digests stay equal
