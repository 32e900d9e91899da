"""Every syntax tree qkv makes or compiles goes through ``qkv.grading.syntax_trees`` (one lock).

CPython 3.11 fails ("AST constructor recursion depth mismatch") when two threads convert trees at once; a
server parses on many threads, and a 300-learner burst hit it once in nine runs. The rule is read from
the code: no ``ast.parse`` and no built-in ``compile`` anywhere in ``src/qkv`` but that module, except in
the sandbox's own single-threaded programs, which compile source text (no trees), and in lessons' tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "qkv"
HELPER = SOURCE / "grading" / "syntax_trees.py"
# Compile source text, in a process of their own (the harness, the zygote) or once before the sandbox
# starts (the runtime's byte-compiled harness): no tree is made.
TEXT_ONLY = {SOURCE / "grading" / "sandbox" / name for name in ("harness.py", "runtime.py", "zygote.py")}


def _calls(path: Path) -> list[str]:
    """Where ``path`` calls ``ast.parse`` or the built-in ``compile`` (line: call)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id == "compile":
            found.append(f"{node.lineno}: compile(...)")
        if (
            isinstance(function, ast.Attribute)
            and function.attr == "parse"
            and isinstance(function.value, ast.Name)
            and function.value.id == "ast"
        ):
            found.append(f"{node.lineno}: ast.parse(...)")
    return found


def _modules() -> list[Path]:
    return [
        path
        for path in sorted(SOURCE.rglob("*.py"))
        if path != HELPER and path not in TEXT_ONLY and "tests" not in path.relative_to(SOURCE).parts
    ]


def test_the_rule_sees_the_calls_it_forbids(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("import ast\ntree = ast.parse('x')\ncode = compile(tree, 'x', 'exec')\n")
    assert _calls(module) == ["2: ast.parse(...)", "3: compile(...)"]


def test_no_module_makes_or_compiles_a_tree_but_through_the_lock() -> None:
    modules = _modules()
    assert SOURCE / "grading" / "same_program.py" in modules  # the rule reads the code it is about
    offenders = {str(path.relative_to(SOURCE)): _calls(path) for path in modules if _calls(path)}
    assert offenders == {}, f"use qkv.grading.syntax_trees.parse / compile_tree instead: {offenders}"
