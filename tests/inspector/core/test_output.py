"""The CLI's one output layer: its JSON contract, its streamed JSON, its terminal meter and exit codes."""

from __future__ import annotations

import io
import json

import pytest

from inspector.core import output
from inspector.core.output import ExitCode, Meter, Streamed


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# -- JSON ------------------------------------------------------------------------------------------


def test_json_is_indented_by_two_and_newline_terminated_with_unicode_kept():
    assert output.dumps({"a": [1, "é"]}) == '{\n  "a": [\n    1,\n    "é"\n  ]\n}\n'.encode()


@pytest.mark.parametrize("odd", ["lone \udcff surrogate", 2**70])
def test_what_orjson_refuses_is_written_ascii_escaped_and_round_trips(odd):
    data = output.dumps({"v": odd, "t": "é"})
    assert data.endswith(b"\n") and data.isascii()
    assert json.loads(data) == {"v": odd, "t": "é"}
    assert data == (json.dumps({"v": odd, "t": "é"}, indent=2, ensure_ascii=True) + "\n").encode()


def test_a_streamed_list_gives_the_bytes_of_the_whole_document(monkeypatch):
    monkeypatch.setattr(output, "ITEMS_PER_PIECE", 2)  # several pieces
    items = [{"i": i, "t": f"ü{i}"} for i in range(5)]
    doc = {"schema": 1, "characters": [{"name": "a", "events": items, "n": 5}, {"name": "b", "events": []}]}

    def streamed():
        return {
            "schema": 1,
            "characters": [
                {"name": "a", "events": Streamed(iter(items)), "n": 5},
                {"name": "b", "events": Streamed(iter([]))},
            ],
        }

    pieces = list(output.iter_json(streamed(), whole=lambda: doc))
    assert len(pieces) > 3
    assert b"".join(pieces) == output.dumps(doc)


def test_a_streamed_document_orjson_refuses_is_written_whole_by_the_fallback():
    doc = {"path": "\udcff", "events": [1, 2]}
    pieces = list(output.iter_json({"path": "\udcff", "events": Streamed([1, 2])}, whole=lambda: doc))
    assert pieces == [output.dumps(doc)]


def test_write_uses_the_binary_buffer_after_the_text_before_it():
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8")
    out.write("before ")
    output.write_json(out, {"a": 1})
    assert raw.getvalue() == b'before {\n  "a": 1\n}\n'
    plain = io.StringIO()
    output.write(plain, [b"x", "é".encode()])
    assert plain.getvalue() == "xé"


# -- exit codes ------------------------------------------------------------------------------------


def test_exit_codes_are_one_table():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 130, 141]
    assert ExitCode.of(True) is ExitCode.OK and ExitCode.of(False) is ExitCode.PROBLEMS


def test_an_error_is_one_escaped_line_on_stderr(capsys):
    assert output.error("memory-inspector x", "bad\nthing") == 2
    assert capsys.readouterr().err == "memory-inspector x: error: bad\\nthing\n"


# -- the terminal meter ----------------------------------------------------------------------------

LABEL = "memory-inspector check: reading journals"


def test_the_meter_waits_then_shows_one_line_and_clears_it() -> None:
    now = [100.0]
    out = _Terminal()
    meter = Meter(out, clock=lambda: now[0], columns=100, label=LABEL)
    meter(10 << 20, 400 << 20)  # a quick scan shows nothing
    assert out.getvalue() == ""
    now[0] += output.METER_AFTER
    meter(180 << 20, 400 << 20)
    assert out.getvalue() == "\rmemory-inspector check: reading journals 45% · 180 of 400 MiB"
    meter(190 << 20, 400 << 20)  # too soon after: not redrawn
    now[0] += output.METER_EVERY
    meter(400 << 20, 400 << 20)
    lines = out.getvalue().split("\r")
    assert lines[-1] == "memory-inspector check: reading journals 100% · 400 of 400 MiB" and len(lines) == 3
    meter.clear()
    assert out.getvalue().endswith("\r" + " " * (len(lines[-1]) + 2) + "\r")  # and a ^C echoed after it


def test_the_meter_stays_within_a_narrow_terminal() -> None:
    now = [0.0]
    out = _Terminal()  # not a real terminal: 80 columns are assumed
    assert Meter(out).columns == 80
    meter = Meter(out, clock=lambda: now[0], columns=30, label=LABEL)
    now[0] = output.METER_AFTER
    meter(1 << 20, 4 << 20)
    meter.clear()
    assert all(len(part) <= 29 for part in out.getvalue().split("\r"))
    assert out.getvalue().startswith("\rmemory-inspector check: read")


def test_the_meter_counts_other_units_as_they_are() -> None:
    now = [0.0]
    out = _Terminal()
    meter = Meter(out, clock=lambda: now[0], columns=100, label="memory-inspector replay: applying", unit="events")
    now[0] = output.METER_AFTER
    meter(3, 10)
    assert out.getvalue() == "\rmemory-inspector replay: applying 30% · 3 of 10 events"


def test_a_meter_is_made_only_for_a_terminal() -> None:
    assert output.meter("x", io.StringIO()) is None
    assert isinstance(output.meter("x", _Terminal()), Meter)


def test_filtered_lines_filter_each_whole_line_and_the_unterminated_last():
    out = io.StringIO()
    lines = output.FilteredLines(out, str.upper)
    lines.write("ab")
    assert out.getvalue() == ""  # not a whole line yet
    lines.write("c\nde\nf")
    assert out.getvalue() == "ABC\nDE\n"
    lines.close()
    assert out.getvalue() == "ABC\nDE\nF"


def test_one_size_wording_for_check_and_the_window() -> None:
    from inspector.core.text import size_text

    assert [size_text(n) for n in (0, 1, 1023, 1024, 4608, 1536 * 1024, 3 << 30, 5000 << 30)] == [
        "0 bytes",
        "1 byte",
        "1,023 bytes",
        "1.0 KiB",
        "4.5 KiB",
        "1.5 MiB",
        "3.0 GiB",
        "5,000.0 GiB",
    ]
