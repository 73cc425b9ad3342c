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


def test_a_misspelt_command_suggests_the_command_and_exits_2(capsys, monkeypatch, tmp_path):
    from inspector import app
    from inspector.cli import main

    monkeypatch.chdir(tmp_path)  # no folder named "chek" here
    monkeypatch.setattr(app, "run_gui", lambda *a, **k: pytest.fail("the window was opened"))
    assert main(["chek", "somewhere"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'check'?" in err and err.count("\n") == 1
    assert main(["histroy", "x"]) == 2 and "did you mean 'history'?" in capsys.readouterr().err


def test_an_existing_path_named_like_a_command_opens_the_window(monkeypatch, tmp_path):
    from inspector import app
    from inspector.cli import main

    (tmp_path / "chek").mkdir()
    monkeypatch.chdir(tmp_path)
    opened = []
    monkeypatch.setattr(app, "run_gui", lambda path, **kw: opened.append((path, kw)) or 0)
    assert main(["chek", "--redact"]) == 0
    assert opened == [("chek", {"redact": True, "screenshot": None, "size": None})]


def test_without_arguments_the_window_opens_on_the_sample(monkeypatch):
    from inspector import app
    from inspector.cli import main

    opened = []
    monkeypatch.setattr(app, "run_gui", lambda path, **kw: opened.append(path) or 0)
    assert main([]) == 0 and opened == [None]


def test_each_command_has_its_help_and_epilog_from_its_own_module(capsys):
    from inspector.cli import SUBCOMMANDS, command_help, main

    for name in SUBCOMMANDS:
        text = command_help(name)
        assert text.startswith(f"usage: memory-inspector {name} "), name
        assert "exit codes: 0 " in text, name
    with pytest.raises(SystemExit) as exc:
        main(["check"])  # PATH missing
    assert exc.value.code == 2
    assert "memory-inspector check: error: the following arguments are required: path" in capsys.readouterr().err
