"""The layers run one way: core <- grading <- lessons <- web, cli; the store and the sandbox harness stand alone.

Every module's imports are read from its syntax tree, including the strings given to ``import_module`` and
``__import__`` (a dependency hidden in a string is still a dependency). Lesson folders are data: their
``lesson.py`` and ``grading.py`` may use the library and the grader, like any lesson author's code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src"
PACKAGE = SRC / "qkv"
HARNESS = PACKAGE / "grading" / "harness.py"

# layer -> the layers it may import (itself included)
ALLOWED = {
    "core": {"core"},
    "grading": {"core", "grading"},
    "lessons": {"core", "grading", "lessons"},
    "content": {"core", "grading"},
    "store": {"store"},
    "web": {"core", "grading", "lessons", "store", "web"},
    "cli": {"core", "grading", "lessons", "store", "web", "cli"},
    "harness": set(),
}


def layer_of_file(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    if path == HARNESS:
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
    if len(parts) == 1 or parts[1] not in {"grading", "lessons", "store", "web", "cli"}:
        return "core"
    return parts[1]


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module the file imports, with its line: import statements and import_module("...") strings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call):
            function = node.func
            called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if called in {"import_module", "__import__"} and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.append((node.lineno, first.value))
                else:
                    found.append((node.lineno, "<a module named at run time>"))
    return found


def violations(path: Path) -> list[str]:
    layer = layer_of_file(path)
    problems = []
    for line, module in imports_of(path):
        if module == "<a module named at run time>":
            problems.append(f"{path}:{line}: imports a module whose name is computed at run time")
            continue
        target = layer_of_module(module)
        if target is not None and target not in ALLOWED[layer]:
            # "from qkv.grading import x": the submodule guess x may not exist; the package decides
            problems.append(f"{path}:{line}: the {layer} layer imports {module} ({target})")
    return problems


def python_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_imports_along_the_layers() -> None:
    found = [problem for path in python_files() for problem in violations(path)]
    assert found == []


@pytest.mark.parametrize(
    ("layer", "source", "expected"),
    [
        ("grading", "from qkv.lessons import load_catalog\n", "the grading layer imports qkv.lessons"),
        ("store", "import qkv\n", "the store layer imports qkv (core)"),
        ("core", "import importlib\nimportlib.import_module('qkv.web.app')\n", "imports qkv.web.app (web)"),
        ("lessons", "from importlib import import_module\nimport_module(name)\n", "computed at run time"),
        ("harness", "from qkv.grading.values import clean_text\n", "the harness layer imports qkv.grading"),
        ("lessons", "from qkv.web import app\n", "the lessons layer imports qkv.web (web)"),
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
    assert layer_of_file(PACKAGE / "store" / "repository.py") == "store"
    assert {layer_of_file(path) for path in python_files()} == set(ALLOWED)
