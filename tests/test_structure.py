"""The house of the code, checked: who may import whom (issue 15).

- Only :mod:`inspector.core.replay.flow` sequences the guarded-replay steps; drivers (the command
  line, the window's controller) and the dialogs import the flow, never a step module.
- Widgets import no ``journal`` module: they render what models and controllers hand them.
- Models import ``journal.diagnosis``'s public value types only, not its internals.
- Controllers live in ``inspector/controllers``, not in ``widgets/``.
- No import cycle among ``widgets/`` modules; only the composition root imports the window, and no
  helper takes it (each is given what it needs; issue 27).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSPECTOR = ROOT / "inspector"
REPLAY = INSPECTOR / "core" / "replay"

#: The steps' entry points: calling one is sequencing, which only the flow does.
STEP_ENTRY_POINTS = frozenset(
    {
        "preflight",
        "make_plan",
        "execute",
        "plan_restore",
        "execute_restore",
        "extract_export",
        "target_of",
        "list_backups",
        "run_guarded_replay",
        "run_guarded_restore",
    }
)


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import in ``path`` (``names`` empty for ``import x``)."""
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [alias.name for alias in node.names]))
    return out


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def test_outside_the_replay_package_only_the_flow_is_imported():
    offenders = []
    for path in _modules(INSPECTOR):
        if path.is_relative_to(REPLAY):
            continue
        for module, names in _imports(path):
            if module == "inspector.core" and "replay" in names:
                offenders.append((path.relative_to(ROOT), "inspector.core.replay (the package)"))
            elif module == "inspector.core.replay" or (
                module.startswith("inspector.core.replay.") and module != "inspector.core.replay.flow"
            ):
                offenders.append((path.relative_to(ROOT), module))
    assert offenders == []


def test_inside_the_replay_package_only_the_flow_calls_the_steps():
    offenders = []
    for path in _modules(REPLAY):
        if path.name in ("flow.py", "__init__.py"):
            continue
        for module, names in _imports(path):
            if module.startswith("inspector.core.replay."):
                called = sorted(STEP_ENTRY_POINTS & set(names))
                if called:
                    offenders.append((path.name, module, called))
    assert offenders == []


@pytest.mark.parametrize("driver", ["inspector/replay_cmd.py", "inspector/controllers/replay.py"])
def test_both_drivers_drive_the_flow(driver):
    modules = {m for m, _ in _imports(ROOT / driver)}
    assert "inspector.core.replay.flow" in modules


def test_widgets_import_no_journal_module():
    offenders = [
        (path.relative_to(ROOT), module)
        for path in _modules(INSPECTOR / "widgets")
        for module, _ in _imports(path)
        if module == "journal" or module.startswith("journal.")
    ]
    assert offenders == []


def test_models_import_only_the_public_value_types_of_the_diagnosis():
    offenders = [
        (path.relative_to(ROOT), module)
        for path in _modules(INSPECTOR / "models")
        for module, _ in _imports(path)
        if module.startswith("journal.") and module != "journal.diagnosis"
    ]
    assert offenders == []


def test_no_controller_lives_in_widgets():
    offenders = []
    for path in _modules(INSPECTOR / "widgets"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith(("Controller", "Scheduler", "Source")):
                offenders.append((path.relative_to(ROOT), node.name))
    assert offenders == []
    assert (INSPECTOR / "controllers" / "session.py").is_file() and (INSPECTOR / "controllers" / "replay.py").is_file()


def test_one_composition_root_builds_the_context():
    """Only ``inspector/app.py`` constructs the session, the replay controller and the context."""
    builders = {"SessionController", "ReplayController", "AppContext", "install_replay_actions"}
    offenders = []
    for path in _modules(INSPECTOR):
        if path.name == "app.py" and path.parent == INSPECTOR:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in builders:
                offenders.append((path.relative_to(ROOT), node.func.id))
    # install_replay_actions builds a controller by definition: its own module may call the class.
    offenders = [o for o in offenders if o != (Path("inspector/controllers/replay.py"), "ReplayController")]
    assert offenders == []


def test_the_refcount_guard_is_installed_in_one_place():
    """``refcount_guard.install()`` runs once, in the composition root (issue 15 item 4)."""
    calls = []
    for path in _modules(INSPECTOR):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "install"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "refcount_guard"
            ):
                calls.append(path.relative_to(ROOT))
    assert calls == [Path("inspector/app.py")]


def test_the_window_is_built_from_the_context_alone():
    """Nothing is attached to the window after the fact (issue 15 item 4)."""
    app = (INSPECTOR / "app.py").read_text(encoding="utf-8")
    assert "type: ignore" not in app and "window.replay_controller" not in app and ".parent = " not in app
    init = ast.parse((INSPECTOR / "widgets" / "main_window.py").read_text(encoding="utf-8"))
    (cls,) = [n for n in init.body if isinstance(n, ast.ClassDef) and n.name == "MainWindow"]
    (ctor,) = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
    assert [a.arg for a in ctor.args.args] == ["self", "context"]


# -- one tail-decision engine (issue 23) ----------------------------------------------------------------

JOURNAL = ROOT / "journal"
ENGINE = JOURNAL / "engine.py"

#: The primitives of a tail decision: building one outside the engine is a second copy of the rule.
DECISION_PRIMITIVES = frozenset({"Holds", "Rerun", "SentinelRun"})


def _calls(path: Path) -> list[str]:
    """The names called in ``path`` (``f(...)`` and ``x.f(...)``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call):
            f = node.func
            out.append(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
    return out


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("journal/reconcile.py", "TailPass"),  # the reconciler asks the engine for each event
        ("journal/diagnosis/pending.py", "decide_tail"),  # check's states and counts
        ("journal/diagnosis/server.py", "decide_tail"),  # the server model, with the server's rules
    ],
)
def test_every_actor_of_our_replay_takes_its_decisions_from_the_engine(module, name):
    path = ROOT / module
    assert any(m == "journal.engine" and name in names for m, names in _imports(path)), module
    assert name in _calls(path), f"{module} imports {name} but never calls it"


def test_the_dry_run_and_the_plan_reach_the_engine_through_the_reconciler_and_the_diagnosis():
    dryrun = JOURNAL / "dryrun.py"
    assert any(m == "journal.reconcile" and "Reconciler" in names for m, names in _imports(dryrun))
    plan = REPLAY / "plan.py"
    text = plan.read_text(encoding="utf-8")
    assert "d.tail.decisions" in text  # the plan's unapplied events are the engine's decisions
    assert any(m == "journal.dryrun" and "dry_run" in names for m, names in _imports(plan))


def test_no_module_but_the_engine_builds_the_decision_primitives():
    offenders = []
    for folder in (JOURNAL, INSPECTOR):
        for path in _modules(folder):
            if path in (ENGINE, JOURNAL / "holds.py", JOURNAL / "appliedset.py"):
                continue  # where they are defined, and the engine that drives them
            offenders += [(str(path.relative_to(ROOT)), c) for c in _calls(path) if c in DECISION_PRIMITIVES]
            offenders += [(str(path.relative_to(ROOT)), c) for c in _calls(path) if c == "admit_applied"]
    assert offenders == []


def test_the_second_copy_of_the_replay_loop_is_gone():
    for path in _modules(JOURNAL) + _modules(INSPECTOR):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert "check_tail" not in names, path


# -- one "is this path inside that folder" (issue 25) -----------------------------------------------

#: Where "inside" is spelled by hand on purpose: the helper itself, and the server model's own rule
#: about where the *server* writes (it is the server's code, not ours).
INSIDE_SPELLED_BY = frozenset({JOURNAL / "fs.py", JOURNAL / "serverrules.py", JOURNAL / "serverpersona.py"})


def test_inside_a_folder_is_asked_of_one_helper():
    spellings = ("is_relative_to(", "commonpath(", "startswith(str(", "+ os.sep)")
    offenders = []
    for path in _modules(JOURNAL) + _modules(INSPECTOR):
        if path in INSIDE_SPELLED_BY:
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [(str(path.relative_to(ROOT)), s) for s in spellings if s in text]
    assert offenders == []


def test_the_servers_start_is_worded_by_one_renderer_and_advice_by_one_module():
    """``check``'s text and the window's panel both show ``inspector.core.server_start_text``; the
    flags and window keys a finding's advice names are worded only in ``inspector.core.advice``."""
    renderer = ROOT / "inspector" / "core" / "server_start_text.py"
    for user in ("inspector/core/check_report.py", "inspector/widgets/server_start.py"):
        assert "for_character" in _calls(ROOT / user), user
    for path in [*_modules(ROOT / "inspector"), *_modules(ROOT / "journal")]:
        if path == renderer:
            continue
        text = path.read_text(encoding="utf-8")
        assert '"Stops at"' not in text and "its sentinel    " not in text, path
        if path.parts[-3:-1] == ("journal", "diagnosis"):
            for flag in ("--park", "--repair-journal", "--repair-orphans"):
                assert flag not in text, (path, flag)  # the diagnosis names an Advice; surfaces word it


# -- one CLI layer (issue 25) ------------------------------------------------------------------------


def _call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Attribute):
        base = f.value.id if isinstance(f.value, ast.Name) else ""
        return f"{base}.{f.attr}" if base else f.attr
    return f.id if isinstance(f, ast.Name) else ""


def _call_nodes(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))) if isinstance(n, ast.Call)]


def test_each_command_module_owns_its_parser():
    """``cli.py`` only assembles the subcommands: each command's module registers its own parser
    (``add_parser(subparsers)``, with ``set_defaults(run=...)``); the only options ``cli.py`` adds
    are the window's."""
    from inspector.cli import COMMANDS

    tree = ast.parse((INSPECTOR / "cli.py").read_text(encoding="utf-8"))
    gui = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "build_gui_parser")
    in_gui = {id(n) for n in ast.walk(gui)}
    stray = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and id(n) not in in_gui and _call_name(n).endswith("add_argument")
    ]
    assert stray == [], f"cli.py adds options outside the window's parser, lines {stray}"
    for module in set(COMMANDS.values()):
        path = ROOT / (module.replace(".", "/") + ".py")
        calls = _call_nodes(path)
        registered = {
            c.args[0].value
            for c in calls
            if _call_name(c) == "subparsers.add_parser" and c.args and isinstance(c.args[0], ast.Constant)
        }
        assert registered == {name for name, m in COMMANDS.items() if m == module}, module
        runs = [c for c in calls if _call_name(c).endswith("set_defaults") and any(k.arg == "run" for k in c.keywords)]
        assert len(runs) == len(registered), module


#: The only modules of ``inspector`` that encode JSON with orjson themselves: the CLI's one output
#: module, and format writers that keep their own exact bytes.
ORJSON_WRITERS = {
    "core/output.py": "the CLI's JSON (its one contract) and its streamed form",
    "core/export.py": "dumps_value: the export formats' one-line records",
    "core/bundle/redact.py": "dumps_json: bundle members in the bytes the memory server writes",
    "controllers/session.py": "the payload search matches a value's compact JSON text (nothing is written)",
}

#: What the command line prints: every JSON document of it goes through the output module.
CLI_MODULES = sorted({*INSPECTOR.glob("*_cmd.py"), INSPECTOR / "cli.py", INSPECTOR / "core" / "check_report.py"})


def test_cli_json_goes_through_the_output_module():
    for path in _modules(INSPECTOR):
        rel = path.relative_to(INSPECTOR).as_posix()
        if rel in ORJSON_WRITERS:
            continue
        found = [c.lineno for c in _call_nodes(path) if _call_name(c) == "orjson.dumps"]
        assert found == [], f"{rel} encodes JSON itself (lines {found}): use inspector.core.output"
    for path in CLI_MODULES:
        command = path.name.endswith("_cmd.py")  # its values for people go through output.value_text
        documents = [
            c.lineno
            for c in _call_nodes(path)
            if _call_name(c) == "json.dumps" and (command or any(k.arg == "indent" for k in c.keywords))
        ]
        assert documents == [], f"{path.name} writes JSON itself (lines {documents}): use inspector.core.output"
    for rel in ORJSON_WRITERS:
        assert (INSPECTOR / rel).exists(), rel  # a named exception that went is removed from the list


def test_one_terminal_meter_and_one_exit_code_table():
    """The progress meter and the exit codes live in the output module; no command defines a
    meter of its own or returns a bare exit number."""
    for path in INSPECTOR.glob("*_cmd.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        meters = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and "Meter" in n.name]
        assert meters == [], f"{path.name} defines its own meter: {meters}"
        bare = [
            n.lineno
            for n in ast.walk(tree)
            if isinstance(n, ast.Return)
            and isinstance(n.value, ast.Constant)
            and isinstance(n.value.value, int)
            and not isinstance(n.value.value, bool)
        ]
        assert bare == [], f"{path.name} returns bare exit codes (lines {bare}): use output.ExitCode"


# -- one input resolver (issue 25) --------------------------------------------------------------------

INPUTS = JOURNAL / "inputs.py"

#: The resolvers this one replaced: a def of one of these names is a second copy coming back.
OLD_RESOLVERS = frozenset({"_fill", "_characters_of", "resolve_target", "_target"})

#: What deciding a PATH's layout is made of; only the resolver calls them. Exceptions: extracting a
#: zip export into a folder the person chose (replay's way out of a zip, not a reading of PATH), and
#: the restore rule that a destination must be a character folder (or empty).
LAYOUT_PRIMITIVES = {
    "characters_in": frozenset(),
    "descend": frozenset(),
    "holds_characters": frozenset(),
    "find_characters_file": frozenset(),
    "is_zipfile": frozenset(),
    "read_recorded": frozenset(),
    "extract_zip": frozenset({REPLAY / "target.py"}),
    "is_character_folder": frozenset({REPLAY / "backup.py"}),
}


def test_no_second_resolver_is_defined():
    offenders = []
    for path in _modules(JOURNAL) + _modules(INSPECTOR):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        offenders += [(str(path.relative_to(ROOT)), n) for n in sorted(names & OLD_RESOLVERS)]
    assert offenders == []


def test_only_the_resolver_decides_what_a_path_holds():
    offenders = []
    for path in _modules(JOURNAL) + _modules(INSPECTOR):
        if path == INPUTS:
            continue
        called = set(_calls(path))
        offenders += [
            (str(path.relative_to(ROOT)), name)
            for name, allowed in LAYOUT_PRIMITIVES.items()
            if name in called and path not in allowed
        ]
    assert offenders == []


@pytest.mark.parametrize(
    "module",
    [
        "journal/diagnosis/path.py",  # check, history, bundle, diff (diagnose_path), the window's load
        "inspector/core/replay/target.py",  # replay's target
        "inspector/core/loader.py",  # the window's preview
        "inspector/core/location.py",  # what the window opens
    ],
)
def test_each_reader_of_a_path_asks_the_resolver(module):
    path = ROOT / module
    assert any(m == "journal.inputs" and "resolve" in names for m, names in _imports(path)), module
    assert "resolve" in _calls(path), module


def test_the_commands_read_path_through_the_diagnosis_or_the_replay_target():
    """Each command module reaches PATH through :func:`diagnose_path` (which resolves it) or the
    replay flow's target (which resolves it), never by a stat or listing of its own."""
    commands = {
        "check_cmd.py": "diagnose_path",
        "history_cmd.py": "diagnose_path",
        "diff_cmd.py": "compare_paths",
        "bundle_cmd.py": "write_bundle",
        "replay_cmd.py": "run_guarded_replay",
    }
    for module, entry in commands.items():
        path = INSPECTOR / module
        assert entry in _calls(path), module
        assert not {"listdir", "scandir", "is_zipfile", "characters_in"} & set(_calls(path)), module


def test_table_models_live_in_models_not_widgets():
    """A widget shows a model; the model of the rows it shows lives in ``inspector/models``."""
    for path in _modules(ROOT / "inspector" / "widgets"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b) for b in node.bases]
                assert not any(b.endswith("Model") for b in bases), (path.name, node.name, bases)


# -- the window's helpers are given what they need, not the window (issue 27 code shape) -------------

WIDGETS = INSPECTOR / "widgets"

#: Where the window may be named: its own module, and the composition root that builds it.
WINDOW_NAMED_BY = frozenset({WIDGETS / "main_window.py", INSPECTOR / "app.py"})


def _widget_imports(path: Path, widgets: set[str]) -> set[str]:
    """The ``inspector/widgets`` modules ``path`` imports anywhere in it (at the top, under
    ``TYPE_CHECKING``, inside a function), relative imports resolved."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("inspector.widgets.")}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # from . import x / from .x import y, inside inspector/widgets
                module = ".".join(["inspector", "widgets", *([module] if module else [])])
            if module == "inspector.widgets":
                found |= {a.name for a in node.names if a.name in widgets}
            elif module.startswith("inspector.widgets."):
                found.add(module.split(".")[2])
    return found - {path.stem}


def _widget_import_graph() -> dict[str, set[str]]:
    paths = [p for p in _modules(WIDGETS) if p.parent == WIDGETS]
    names = {p.stem for p in paths}
    return {p.stem: _widget_imports(p, names) for p in paths}


def _a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` as ``[a, b, ..., a]`` (``[]``: none)."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str]:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return []
        for nxt in sorted(graph.get(node, ())):
            cycle = visit(nxt, [*path, node])
            if cycle:
                return cycle
        done.add(node)
        return []

    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle:
            return cycle
    return []


def test_the_cycle_finder_finds_a_cycle():
    assert _a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _a_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_no_import_cycle_among_the_widgets():
    """No ``inspector/widgets`` module reaches itself through its imports, counting the ones under
    ``TYPE_CHECKING`` and inside functions (the window's helpers once formed a circle with it)."""
    graph = _widget_import_graph()
    assert graph.get("main_window")  # the graph is read, not empty
    cycle = _a_cycle(graph)
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def _names_the_window(annotation: ast.expr) -> bool:
    """Whether an annotation is (or holds) ``MainWindow``, also as a string; not ``QMainWindow``."""
    return re.search(r"\bMainWindow\b", ast.unparse(annotation)) is not None


def test_no_helper_takes_the_window():
    """Only the composition root imports ``main_window``; no parameter in ``inspector`` is a
    ``MainWindow``: each helper is given the controllers, models and widgets it needs."""
    importers, takers = [], []
    for path in _modules(INSPECTOR):
        if path in WINDOW_NAMED_BY:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if _widget_imports(path, {"main_window"}) & {"main_window"}:
            importers.append(str(path.relative_to(ROOT)))
        for node in ast.walk(tree):
            if isinstance(node, ast.arg) and node.annotation is not None and _names_the_window(node.annotation):
                takers.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.arg}")
    assert importers == []
    assert takers == []
