"""The arguments the commands share (PATH, ``--character``, ``--json``, ``--redact``, ``--yes``) are
declared once, in :mod:`inspector.core.cli_args`, and every command still takes what it took."""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

import pytest

import journal.compaction
from inspector.cli import COMMANDS, SUBCOMMANDS, _subparser, build_command_parser, build_gui_parser, main
from inspector.core import cli_args
from journal import fixtures as folders
from journal.fixtures import FIXTURE_NOW

INSPECTOR = Path(__file__).resolve().parents[2] / "inspector"

#: What each command took before its shared arguments moved to one home: its positionals, and
#: every option string (taken from the ``--help`` texts of the commit before).
TAKES = {
    "check": (["path"], {"--character", "--json", "--all-events", "--redact", "--characters"}),
    "history": (["path"], {"--character", "--entry", "--entity", "--at", "--between", "--json", "--redact"}),
    "diff": (["a", "b"], {"--character", "--json", "--redact"}),
    "chat": (["path"], {"--character", "--around", "--between", "--minutes", "--json", "--show-text", "--redact"}),
    "cloud": (["unit"], {"--character", "--against", "--characters", "--json", "--redact"}),
    "bundle": (
        ["path"],
        {"-o", "--output", "--character", "--no-redact", "--include-chat", "--force", "--screenshots", "--guess"},
    ),
    "replay": (
        ["path"],
        {
            "--character",
            "--dry-run",
            "--until",
            "--repair-orphans",
            "--park",
            "--repair-journal",
            "--yes",
            "--backup-dir",
            "--i-know-the-server-is-stopped",
        },
    ),
    "restore": (["backup"], {"--to", "--dry-run", "--yes"}),
}

#: The shared arguments, by the option string (or positional) each adder declares.
SHARED = {"path", "a", "b", "--character", "--json", "--redact", "--yes"}


def _parser(command: str) -> argparse.ArgumentParser:
    return _subparser(build_command_parser(command), command)


def _actions(command: str) -> dict[str, argparse.Action]:
    """Each argument of ``command``'s parser by its option strings (a positional by its name)."""
    out: dict[str, argparse.Action] = {}
    for action in _parser(command)._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        for name in action.option_strings or [action.dest]:
            out[name] = action
    return out


def test_every_command_is_listed() -> None:
    assert set(TAKES) == set(SUBCOMMANDS)


@pytest.mark.parametrize("command", sorted(TAKES))
def test_each_command_takes_what_it_took(command: str) -> None:
    positionals, options = TAKES[command]
    actions = _actions(command)
    assert [n for n, a in actions.items() if not a.option_strings] == positionals
    assert {n for n, a in actions.items() if a.option_strings} == options


@pytest.mark.parametrize("command", sorted(TAKES))
def test_help_names_the_shared_arguments_in_their_one_wording(command: str) -> None:
    text = " ".join(_parser(command).format_help().split())  # argparse wraps at the terminal's width
    actions = _actions(command)
    for name in ("path", "a", "b"):
        if name in actions:
            assert cli_args.PATH_KINDS in (actions[name].help or ""), (command, name)
            assert re.search(rf"(^|\s){name}\s", text), (command, name)  # the positional stands in its help
    if "--character" in actions:
        assert "--character NAME" in text
        assert actions["--character"].help in (
            "only this character (default: every character of PATH)",
            "the character (needed when PATH holds several)",
            "the character (needed when an export holds several)",
            "the character (needed when UNIT holds several)",
        ), command
    if "--json" in actions:
        assert re.fullmatch(r"machine-readable output \(schema \d+, see README\)", actions["--json"].help or "")
    if "--redact" in actions:
        assert actions["--redact"].help == cli_args.REDACT_HELP
        assert "--redact" in text and "tokens in --json" in text


def test_the_window_names_its_path_as_the_commands_do() -> None:
    path = next(a for a in build_gui_parser()._actions if a.dest == "path")
    assert path.nargs == "?" and path.help == f"{cli_args.PATH_KINDS} (default: bundled sample)"


def _add_argument_names(path: Path) -> list[tuple[int, str]]:
    """``(line, name)`` of every ``add_argument("NAME", ...)`` call in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            found += [(node.lineno, a.value) for a in node.args if isinstance(a, ast.Constant)]
    return found


#: Declared outside :mod:`inspector.core.cli_args` on purpose: the window's ``--redact`` hides text in
#: the window (for screenshots), which is not what the commands' ``--redact`` does to their output.
OWN = {("cli.py", "--redact")}


def test_command_modules_declare_no_shared_argument_themselves() -> None:
    """A shared argument declared again in a command module is a second wording coming back."""
    modules = {INSPECTOR / (m.split(".")[-1] + ".py") for m in COMMANDS.values()} | {INSPECTOR / "cli.py"}
    offenders = [
        (path.name, line, name)
        for path in sorted(modules)
        for line, name in _add_argument_names(path)
        if name in SHARED and (path.name, name) not in OWN
    ]
    assert offenders == []
    assert {n for _, n in _add_argument_names(INSPECTOR / "core" / "cli_args.py")} >= SHARED - {"path", "a", "b"}


@pytest.fixture
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEKO_RUNTIME_STATE_DIR", str(tmp_path_factory.mktemp("runtime")))
    monkeypatch.setattr(journal.compaction, "_now", lambda: FIXTURE_NOW)


@pytest.mark.usefixtures("_isolated")
@pytest.mark.parametrize("command", ["check", "diff", "history"])
def test_json_help_names_the_schema_the_command_writes(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folders.CASES["healthy"](tmp_path)
    argv = {"check": [str(tmp_path)], "diff": [str(tmp_path), str(tmp_path)], "history": [str(tmp_path)]}[command]
    main([command, *argv, "--json"])
    written = json.loads(capsys.readouterr().out)["schema"]
    helped = re.search(r"schema (\d+)", _actions(command)["--json"].help or "")
    assert helped is not None and int(helped.group(1)) == written
