"""Every widget's script, read as text: one ``mount`` export, the shared kit instead of private copies of its
helpers, and no function longer than a screen (60 lines), so a mount reads as a list of named steps.

The function scan matches braces, skipping strings, template literals and comments; a ``{`` opens a
function body when it follows ``=>`` or a parameter list that is not an ``if``/``for``/``while``/
``switch``/``catch`` condition.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qkv.lessons import load_catalog

STATIC = Path(__file__).resolve().parents[2] / "src" / "qkv" / "web" / "static"
KIT = STATIC / "js" / "widget-kit.js"
MAX_FUNCTION_LINES = 60
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "with"}


def widget_scripts() -> list[Path]:
    return [widget.asset("widget.js") for widget in load_catalog().widgets]


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


@pytest.mark.parametrize("path", widget_scripts(), ids=lambda path: path.parent.name)
def test_no_widget_function_is_longer_than_60_lines(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    too_long = [
        f"{path.parent.name}/widget.js:{first}: {lines[first - 1].strip()[:50]!r} has {count} lines"
        for first, count in function_lengths(text)
        if count > MAX_FUNCTION_LINES
    ]
    assert too_long == []


@pytest.mark.parametrize("path", widget_scripts(), ids=lambda path: path.parent.name)
def test_each_widget_exports_mount_and_uses_the_shared_kit(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert re.search(r"^export function mount\(element(, ctx = \{\})?\) \{$", text, re.M), (
        f"{path} exports no mount(element) or mount(element, ctx = {{}})."
    )
    imports = re.findall(r'^import .* from "([^"]+)";$', text, re.M)
    assert "/static/js/widget-kit.js" in imports
    # Other widgets' files are not its business: it imports the page's shared modules only.
    assert all(re.fullmatch(r"/static/js/[a-z-]+\.js", source) for source in imports), imports
    # The kit's helpers are not written again: no private SVG factory, config parsing or id counter.
    assert "createElementNS" not in text
    assert "JSON.parse" not in text
    assert "dataset.mounted" not in text


def test_the_kit_exports_what_the_widgets_import() -> None:
    kit = KIT.read_text(encoding="utf-8")
    exported = set(re.findall(r"^export function (\w+)", kit, re.M))
    exported |= {
        name.strip() for group in re.findall(r"^export \{([^}]*)\}", kit, re.M) for name in group.split(",")
    }
    for path in widget_scripts():
        (names,) = re.findall(
            r'^import \{([^}]*)\} from "/static/js/widget-kit.js";$', path.read_text(), re.M
        )
        assert {name.strip() for name in names.split(",")} <= exported, path
    assert max(count for _, count in function_lengths(kit)) <= MAX_FUNCTION_LINES


def test_lesson_js_loads_each_widget_from_its_folder_and_names_none() -> None:
    lesson_js = (STATIC / "lesson.js").read_text(encoding="utf-8")
    assert "import(`/widgets/${name}/widget.js`)" in lesson_js
    assert not any(name in lesson_js for name in load_catalog().widgets.names())
    assert not (STATIC / "js" / "widgets").exists()
