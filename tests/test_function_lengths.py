"""No function longer than a screen (60 lines) in ``src/`` or the front-end scripts, so a long job reads as a
list of named steps.

A Python function counts from its ``def`` to its last line, less its docstring (numpydoc docstrings are long by
design); its decorators do not count. A script's function counts from its ``{`` to its ``}``: the scan matches
braces, skipping strings, template literals and comments; a ``{`` opens a function body when it follows ``=>``
or a parameter list that is not an ``if``/``for``/``while``/``switch``/``catch`` condition. The scripts are
every one under ``src/qkv/web/static`` (not the ``vendor/`` bundles) and every widget's ``widget.js``. A lesson
folder's ``tests/`` and ``corpus/`` are left out, as ``tests/`` is.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests import lesson_contract as contract

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
STATIC = SRC / "qkv" / "web" / "static"
CONTENT = SRC / "qkv" / "lessons" / "content"
MAX_FUNCTION_LINES = 60
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "with"}


def python_function_lengths(text: str) -> list[tuple[int, str, int]]:
    """``(def line, name, lines)`` of every function and method in a module, nested ones included."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = node.end_lineno - node.lineno + 1 if node.end_lineno else 1
            first = node.body[0]
            docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            if docstring and isinstance(first.value.value, str) and first.end_lineno:
                lines -= first.end_lineno - first.lineno + 1
            found.append((node.lineno, node.name, lines))
    return sorted(found)


def _code_only(text: str) -> str:
    """``text`` with comments, strings and template literals blanked (newlines kept, so lines still count).

    A template literal's ``${…}`` stays code; regular expression literals are left as they are (the widgets
    hold none with braces or quotes).
    """
    out = list(text)
    i, stack = 0, []  # stack: "`" inside a template literal, "{" inside a ${…} of one
    while i < len(text):
        c = text[i]
        in_template = bool(stack) and stack[-1] == "`"
        if in_template:
            if c == "\\":
                out[i : i + 2] = "  "
                i += 2
                continue
            if c == "`":
                stack.pop()
            elif text.startswith("${", i):
                stack.append("{")
                i += 2
                continue
            elif c != "\n":
                out[i] = " "
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
        elif text.startswith("/*", i):
            end = text.index("*/", i) + 2
            out[i:end] = [ch if ch == "\n" else " " for ch in text[i:end]]
            i = end
        elif c in "\"'":
            end = i + 1
            while text[end] != c:
                end += 2 if text[end] == "\\" else 1
            out[i + 1 : end] = " " * (end - i - 1)
            i = end + 1
        elif c == "`":
            stack.append("`")
            i += 1
        elif c == "{" and stack:
            stack.append("{")
            i += 1
        elif c == "}" and stack and stack[-1] == "{":
            stack.pop()
            i += 1
        else:
            i += 1
    return "".join(out)


def _opens_function(code: str, brace: int) -> bool:
    before = code[:brace].rstrip()
    if before.endswith("=>"):
        return True
    if not before.endswith(")"):
        return False
    depth, j = 0, len(before) - 1
    while j >= 0:  # back to the "(" that opens the parameter list or condition
        depth += {")": 1, "(": -1}.get(before[j], 0)
        if depth == 0:
            break
        j -= 1
    word = re.search(r"(\w+)\s*$", before[:j])
    return not (word and word.group(1) in _NOT_FUNCTIONS)


def function_lengths(text: str) -> list[tuple[int, int]]:
    """``(first line, lines)`` of every function body in a script, counted from its ``{`` to its ``}``."""
    code = _code_only(text)
    opened: list[tuple[int, bool]] = []
    found = []
    for index, c in enumerate(code):
        if c == "{":
            opened.append((index, _opens_function(code, index)))
        elif c == "}":
            start, is_function = opened.pop()
            if is_function:
                first = code.count("\n", 0, start) + 1
                found.append((first, code.count("\n", start, index) + 1))
    assert not opened, "unbalanced braces"
    return sorted(found)


def test_the_scan_measures_functions_and_nothing_else() -> None:
    body = "\n".join(f"  step{i}();" for i in range(59))
    script = (
        "// a { in a comment\n"
        f"export function mount(element) {{\n{body}\n}}\n"  # 61 lines from { to }
        "const f = (x) => {\n  if (x) {\n    return `${x} {`;\n  }\n  return '}';\n};\n"
        "for (const y of [1]) {\n  g(y);\n}\n"
    )
    assert function_lengths(script) == [(2, 61), (63, 6)]


def test_the_python_scan_leaves_out_docstrings_and_decorators() -> None:
    body = "\n".join(f"    step{i}()" for i in range(59))
    module = (
        "@decorated\n"
        "def long(x):\n"  # 1 + 59 + 1 = 61 lines without its docstring
        '    """A docstring\n\n    over three lines."""\n'
        f"{body}\n"
        "    return x\n"
        "\n\n"
        "class C:\n"
        "    def short(self):\n"
        '        """Only a docstring."""\n'
        "        return 1\n"
    )
    assert python_function_lengths(module) == [(2, "long", 61), (69, "short", 2)]


def scripts() -> list[Path]:
    """Every front-end script of ours: the static folder (but its vendor bundles) and every widget."""
    static = [path for path in STATIC.rglob("*.js") if "vendor" not in path.relative_to(STATIC).parts]
    return sorted(static) + [widget.asset("widget.js") for widget in contract.catalog().widgets]


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def long_python_functions() -> list[str]:
    """``path:line name lines`` of each Python function of ``src/`` over the limit (a lesson folder's tests
    and corpus are test code and learners' programs, held like ``tests/``: not at all)."""
    too_long = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(CONTENT) and {"tests", "corpus"} & set(path.relative_to(CONTENT).parts):
            continue
        for line, name, lines in python_function_lengths(path.read_text(encoding="utf-8")):
            if lines > MAX_FUNCTION_LINES:
                too_long.append(f"{_shown(path)}:{line} {name} {lines}")
    return too_long


def test_no_python_function_of_src_is_longer_than_60_lines() -> None:
    too_long = long_python_functions()
    assert not too_long, (
        f"These functions are longer than {MAX_FUNCTION_LINES} lines (docstrings not counted); split each "
        "into named steps:\n" + "\n".join(too_long)
    )


@pytest.mark.content
def test_no_script_function_is_longer_than_60_lines() -> None:
    found = scripts()
    assert any(path.name == "widget.js" for path in found) and any(path.name == "lesson.js" for path in found)
    too_long = []
    for path in found:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for first, count in function_lengths(text):
            if count > MAX_FUNCTION_LINES:
                too_long.append(f"{_shown(path)}:{first} {lines[first - 1].strip()[:50]!r} {count}")
    assert not too_long, (
        f"These script functions are longer than {MAX_FUNCTION_LINES} lines; split each into named steps:\n"
        + "\n".join(too_long)
    )
