"""The window's command line: ``--size WxH`` (so ``--screenshot`` can show a small screen)."""

from __future__ import annotations

import pytest

from inspector.cli import build_gui_parser


def test_size_is_parsed():
    args = build_gui_parser().parse_args(["--screenshot", "out.png", "--size", "900x600"])
    assert args.size == (900, 600) and args.screenshot == "out.png"
    assert build_gui_parser().parse_args([]).size is None


@pytest.mark.parametrize("bad", ["900", "x600", "900x", "axb", "10x10", "900x60000", "-900x600"])
def test_a_bad_size_is_exit_2_with_one_message(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        build_gui_parser().parse_args(["--size", bad])
    assert exc.value.code == 2
    assert "--size" in capsys.readouterr().err


def test_the_help_names_every_subcommand(capsys):
    from inspector.cli import SUBCOMMANDS

    with pytest.raises(SystemExit):
        build_gui_parser().parse_args(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert all(name in out for name in SUBCOMMANDS)
