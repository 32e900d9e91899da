"""The layers run one way: core <- grading <- lessons <- web <- remote_grading <- cli; the store and the sandbox
harness stand alone. (remote_grading, the job queue of graders on other machines, needs the lessons to grade
and the web's interface it implements; the web never imports it: ``qkv serve`` hands it to the app.)

Every module's imports are read from its syntax tree, relative ones resolved against the module's package.
Dynamic imports (``import_module``, ``__import__``, ``spec_from_file_location``, ``runpy``, …) are refused
everywhere but in the one loader that imports lesson files (``qkv/lessons/pyfiles.py``): a dependency
hidden in a string or a path is still a dependency, and one the syntax tree cannot follow. Lesson folders
are data: their Python may use the library and the grader, like any lesson author's code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src"
PACKAGE = SRC / "qkv"
HARNESS = PACKAGE / "grading" / "sandbox" / "harness.py"
ZYGOTE = PACKAGE / "grading" / "sandbox" / "zygote.py"  # runs in the sandbox too, beside the harness
LESSON_FILE_LOADER = PACKAGE / "lessons" / "pyfiles.py"
DYNAMIC_IMPORTERS = {
    "import_module",
    "__import__",
    "spec_from_file_location",
    "spec_from_loader",
    "module_from_spec",
    "SourceFileLoader",
    "run_path",
    "run_module",
}
DYNAMIC = "<a dynamic import>"

# layer -> the layers it may import (itself included)
ALLOWED = {
    "core": {"core"},
    "grading": {"core", "grading"},
    "lessons": {"core", "grading", "lessons"},
    "content": {"core", "grading"},
    "store": {"store"},
    "web": {"core", "grading", "lessons", "store", "web"},
    "remote_grading": {"core", "grading", "lessons", "store", "web", "remote_grading"},
    "cli": {"core", "grading", "lessons", "store", "web", "remote_grading", "cli"},
    "harness": set(),
}


def layer_of_file(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    if path in (HARNESS, ZYGOTE):
        return "harness"
    if parts[:2] == ("lessons", "content"):
        return "content"
    if len(parts) == 1:
        return "cli" if parts[0] == "__main__.py" else "core"
    return parts[0]


def layer_of_module(name: str) -> str | None:
    """The layer of an imported module, or None when it is not part of qkv."""
    parts = name.split(".")
    if parts[0] != "qkv":
        return None
    if len(parts) == 1 or parts[1] not in {"grading", "lessons", "store", "web", "remote_grading", "cli"}:
        return "core"
    return parts[1]


def package_of(path: Path) -> list[str]:
    """The dotted package a file's relative imports start from: ``qkv/web/app.py`` -> ``["qkv", "web"]``."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return parts if path.name == "__init__.py" and parts.pop() == "__init__" else parts[:-1]


def absolute(path: Path, node: ast.ImportFrom) -> str:
    """The module an ``ImportFrom`` names, with ``from ..web import x`` resolved against the file's package."""
    if node.level == 0:
        return node.module or ""
    base = package_of(path)
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, node.module] if node.module else base)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module the file imports, with its line; a dynamic import is reported as ``DYNAMIC``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = absolute(path, node) if path.is_relative_to(SRC) else (node.module or "")
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call):
            function = node.func
            called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if called in DYNAMIC_IMPORTERS:
                found.append((node.lineno, DYNAMIC))
    return found


def violations(path: Path) -> list[str]:
    layer = layer_of_file(path)
    problems = []
    for line, module in imports_of(path):
        if module == DYNAMIC:
            if path != LESSON_FILE_LOADER:
                problems.append(
                    f"{path}:{line}: imports dynamically; only {LESSON_FILE_LOADER.name} may (lesson files)"
                )
            continue
        target = layer_of_module(module)
        if target is not None and target not in ALLOWED[layer]:
            # "from qkv.grading import x": the submodule guess x may not exist; the package decides
            problems.append(f"{path}:{line}: the {layer} layer imports {module} ({target})")
    return problems


def python_files() -> list[Path]:
    """Every module of the package; not a lesson folder's tests/ nor its corpus/ (test code and learners'
    programs, which the wheel leaves out: like tests/, they may import any layer)."""
    content = PACKAGE / "lessons" / "content"
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if not (path.is_relative_to(content) and {"tests", "corpus"} & set(path.relative_to(content).parts))
    )


def test_every_module_imports_along_the_layers() -> None:
    found = [problem for path in python_files() for problem in violations(path)]
    assert found == []


@pytest.mark.parametrize(
    ("layer", "source", "expected"),
    [
        ("grading", "from qkv.lessons import load_catalog\n", "the grading layer imports qkv.lessons"),
        ("store", "import qkv\n", "the store layer imports qkv (core)"),
        ("core", "import importlib\nimportlib.import_module('qkv.web.app')\n", "imports dynamically"),
        ("lessons", "from importlib import import_module\nimport_module(name)\n", "imports dynamically"),
        (
            "web",
            "import importlib.util\nimportlib.util.spec_from_file_location('m', p)\n",
            "imports dynamically",
        ),
        ("cli", "import runpy\nrunpy.run_path('x.py')\n", "imports dynamically"),
        ("lessons", "name = 'qkv.web.app'\n__import__(name)\n", "imports dynamically"),
        ("harness", "from qkv.grading.values import clean_text\n", "the harness layer imports qkv.grading"),
        ("lessons", "from qkv.web import app\n", "the lessons layer imports qkv.web (web)"),
        (
            "web",
            "from qkv.remote_grading import QueueSubmitter\n",
            "the web layer imports qkv.remote_grading (remote_grading)",
        ),
        ("store", "from qkv.remote_grading import queue\n", "the store layer imports qkv.remote_grading"),
        ("remote_grading", "from qkv.cli.serve import serve\n", "the remote_grading layer imports qkv.cli"),
    ],
)
def test_the_layer_check_catches_a_wrong_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layer: str, source: str, expected: str
) -> None:
    monkeypatch.setattr(f"{__name__}.layer_of_file", lambda path: layer)
    module = tmp_path / "module.py"
    module.write_text(source)
    assert any(expected in problem for problem in violations(module)), violations(module)


def test_the_files_are_where_the_layers_say() -> None:
    assert layer_of_file(PACKAGE / "attention.py") == "core"
    assert layer_of_file(HARNESS) == "harness"
    assert layer_of_file(ZYGOTE) == "harness"
    assert layer_of_file(PACKAGE / "store" / "database.py") == "store"
    assert {layer_of_file(path) for path in python_files()} == set(ALLOWED)


@pytest.mark.parametrize(
    ("file", "statement", "module"),
    [
        (PACKAGE / "lessons" / "render.py", "from ..web import app", "qkv.web"),
        (PACKAGE / "lessons" / "render.py", "from .markup import fill", "qkv.lessons.markup"),
        (PACKAGE / "lessons" / "__init__.py", "from .catalog import Catalog", "qkv.lessons.catalog"),
        (PACKAGE / "web" / "app.py", "from ...qkv import attention", "qkv"),
        (PACKAGE / "web" / "app.py", "from .. import attention", "qkv"),
    ],
)
def test_relative_imports_are_resolved_against_the_package(file: Path, statement: str, module: str) -> None:
    node = ast.parse(statement).body[0]
    assert isinstance(node, ast.ImportFrom)
    assert absolute(file, node) == module
    # and the layer check sees them: a lessons module importing the web layer relatively is caught
    if module.startswith("qkv.web"):
        assert layer_of_module(module) == "web" not in ALLOWED[layer_of_file(file)]


# ----------------------------------------------------------------------------- inside the grader and the web
# The package moves (grading/ into its parts, web/'s shared pieces below its audiences) are made by one
# script after the other branches merge; it sets this to True. Until then the tree is in its flat layout.
MOVES_DONE = True
GRADING = PACKAGE / "grading"
AUDIENCES = ("learner", "instructor", "lti")
# web/'s crossings that the moves remove (shared pieces still in an audience's package), until they are made
CROSSINGS_BEFORE_THE_MOVES: set[tuple[str, str]] = set()  # the moves removed every one


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def grading_part(name: str) -> str:
    """``sandbox`` (running a program safely), ``feedback`` (explaining a failure) or ``judging`` (the top)."""
    parts = name.split(".")
    return parts[2] if len(parts) > 3 and parts[2] in ("sandbox", "feedback") else "judging"


def grading_crossings(path: Path) -> list[str]:
    """The sandbox imports nothing of the grader outside itself; the feedback never imports the sandbox."""
    here = grading_part(module_name(path))
    found = []
    for line, module in imports_of(path):
        if not module.startswith("qkv.grading.") or here == "judging":
            continue
        there = grading_part(module)
        if (here == "sandbox" and there != "sandbox") or (here == "feedback" and there == "sandbox"):
            found.append(f"{path}:{line}: grading's {here} imports {module} ({there})")
    return found


def web_part(name: str) -> str:
    """An audience (``learner``, ``instructor``, ``lti``), ``app``, or ``shared`` (http/, runs/, web's own
    modules): ``shared`` <- the audiences <- ``app``."""
    parts = name.split(".")
    if len(parts) > 2 and parts[2] in AUDIENCES:
        return parts[2]
    return "app" if len(parts) > 2 and parts[2] == "app" else "shared"


def web_crossings(path: Path) -> list[tuple[str, str]]:
    """(importer, imported) for every import against web/'s direction: an audience importing another, or
    a shared module importing an audience or the app."""
    here_name = module_name(path)
    here = web_part(here_name)
    found = []
    for _, module in imports_of(path):
        if not module.startswith("qkv.web.") or here == "app":
            continue
        there = web_part(module)
        if there != here and there != "shared" and not (here == "shared" and there == "shared"):
            found.append((here_name, owning_module(module)))
    return sorted(set(found))


def owning_module(name: str) -> str:
    """The module an imported name is in (``qkv.web.app.create_app`` -> ``qkv.web.app``)."""
    file = PACKAGE.joinpath(*name.split(".")[1:])
    return name if file.with_suffix(".py").is_file() or file.is_dir() else name.rsplit(".", 1)[0]


def test_the_grader_has_its_parts_and_they_keep_apart() -> None:
    assert (GRADING / "sandbox").is_dir() == (GRADING / "feedback").is_dir() == MOVES_DONE
    assert [problem for path in GRADING.rglob("*.py") for problem in grading_crossings(path)] == []


def test_web_imports_run_from_its_shared_parts_to_its_audiences_to_the_app() -> None:
    found = {crossing for path in (PACKAGE / "web").rglob("*.py") for crossing in web_crossings(path)}
    allowed = set() if MOVES_DONE else CROSSINGS_BEFORE_THE_MOVES
    assert sorted(found - allowed) == []
    assert sorted(allowed - found) == []  # the list only shrinks: a crossing removed leaves it


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("qkv.grading.sandbox.pool", "from qkv.grading.verdict import judge\n", "grading's sandbox imports"),
        ("qkv.grading.sandbox.pool", "from qkv.grading.feedback.hints import Hint\n", "(feedback)"),
        ("qkv.grading.feedback.explain", "from qkv.grading.sandbox.limits import Limits\n", "(sandbox)"),
        ("qkv.grading.feedback.explain", "import qkv.grading.sandbox.limits\n", "(sandbox)"),
    ],
)
def test_the_grading_check_catches_a_part_importing_across(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, source: str, expected: str
) -> None:
    monkeypatch.setattr(f"{__name__}.module_name", lambda path: module)
    path = tmp_path / "module.py"
    path.write_text(source)
    assert any(expected in problem for problem in grading_crossings(path)), grading_crossings(path)


@pytest.mark.parametrize(
    ("module", "source", "crossing"),
    [
        ("qkv.web.learner.sign_in", "from qkv.web.instructor.routes import x\n", "qkv.web.instructor.routes"),
        ("qkv.web.lti.tool", "import qkv.web.learner.pages\n", "qkv.web.learner.pages"),
        ("qkv.web.http.security", "from qkv.web.learner import pages\n", "qkv.web.learner.pages"),
        ("qkv.web.services", "from qkv.web.app import create_app\n", "qkv.web.app"),
    ],
)
def test_the_web_check_catches_an_import_against_the_direction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, source: str, crossing: str
) -> None:
    monkeypatch.setattr(f"{__name__}.module_name", lambda path: module)
    path = tmp_path / "module.py"
    path.write_text(source)
    assert (module, crossing) in web_crossings(path), web_crossings(path)


def test_the_web_check_lets_an_audience_use_the_shared_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(f"{__name__}.module_name", lambda path: "qkv.web.lti.tool")
    path = tmp_path / "module.py"
    path.write_text(
        "from qkv.web.http.security import x\nfrom qkv.web.services import Services\nimport qkv.web.lti.claims\n"
    )
    assert web_crossings(path) == []
