"""docs/development.md stays true to the code: what it names exists, and it names every package.

Every backticked path (``src/...``, ``tests/...``, ``scripts/...``, ``docs/...``, ``benchmarks/...``) exists;
every backticked module file (``name.py``) exists in a folder its paragraph names (or, where the paragraph
names none, somewhere in the repository); every dotted ``qkv.`` module exists; every package of
``src/qkv`` (a folder of Python modules, but the lessons' content, which is data) and every module of the
core (``src/qkv/*.py``) is named; and what it says of the tests' imports holds.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).parents[1]
DOC = REPO / "docs" / "development.md"
PACKAGE = REPO / "src" / "qkv"
ROOTS = ("src/", "tests/", "scripts/", "docs/", "benchmarks/", ".ci/")
DATA = PACKAGE / "lessons" / "content"


def paragraphs(text: str) -> list[str]:
    """The doc's paragraphs and bullets (a bullet's continuation lines belong to it)."""
    return [chunk for chunk in re.split(r"\n\s*\n|\n(?=- )", text) if chunk.strip()]


def quoted(chunk: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", chunk)


def named_paths(chunk: str) -> list[str]:
    return [
        token.rstrip(",.")
        for token in quoted(chunk)
        if token.startswith(ROOTS) and " " not in token and "*" not in token and "{" not in token
    ]


def folders_of(chunk: str) -> list[Path]:
    """The folders a paragraph names (a named file stands for its folder)."""
    found = []
    for name in named_paths(chunk):
        path = REPO / name
        found.append(path if path.is_dir() else path.parent)
    return found


def missing_names(text: str) -> list[str]:
    """What the doc names that does not exist, as sentences."""
    problems = []
    for chunk in paragraphs(text):
        for name in named_paths(chunk):
            if not (REPO / name).exists():
                problems.append(f"{name} does not exist")
        folders = folders_of(chunk) or [REPO / "src", REPO / "tests", REPO / "scripts", REPO / "benchmarks"]
        for token in quoted(chunk):
            for module in re.findall(r"(?<![\w/.])(\w+\.py)\b", token):
                if "/" in token:
                    continue  # a path, checked above
                if not any(next(folder.rglob(module), None) for folder in folders if folder.is_dir()):
                    problems.append(f"{module} is in none of {[str(f.relative_to(REPO)) for f in folders]}")
            for dotted in re.findall(r"\bqkv(?:\.\w+)+", token):
                if not _is_module_or_its_name(dotted.split(".")[1:]):
                    problems.append(f"{dotted} is no module of qkv")
    return problems


def _module_file(parts: list[str]) -> Path | None:
    path = PACKAGE.joinpath(*parts)
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _is_module_or_its_name(parts: list[str]) -> bool:
    """``qkv.a.b`` is a module, or ``qkv.a`` is one that defines (or names) ``b``."""
    if _module_file(parts) is not None or (PACKAGE.joinpath(*parts)).is_dir():
        return True
    owner = _module_file(parts[:-1]) if len(parts) > 1 else None
    return owner is not None and re.search(rf"\b{re.escape(parts[-1])}\b", owner.read_text()) is not None


def packages() -> list[str]:
    """Every folder of Python modules under src/qkv but the lessons' content, as ``src/qkv/NAME/``."""
    found = {
        path.parent
        for path in PACKAGE.rglob("*.py")
        if path.parent != PACKAGE and DATA not in path.parents and "__pycache__" not in path.parts
    }
    return sorted(f"{path.relative_to(REPO)}/" for path in found)


def test_everything_the_doc_names_exists() -> None:
    assert missing_names(DOC.read_text()) == []


def test_the_check_sees_a_module_that_is_not_there() -> None:
    text = (
        "- `src/qkv/store/` — `tables.py`, `nowhere.py` and `qkv.store.nothing`; `tests/no_such_file.py`.\n"
    )
    assert missing_names(text) == [
        "tests/no_such_file.py does not exist",
        "nowhere.py is in none of ['src/qkv/store', 'tests']",
        "qkv.store.nothing is no module of qkv",
    ]


def test_every_package_is_named() -> None:
    text = DOC.read_text()
    assert [package for package in packages() if f"`{package}`" not in text] == []


def test_every_core_module_is_named() -> None:
    text = DOC.read_text()
    core = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert [name for name in core if f"`{name}`" not in text and f"`src/qkv/{name}`" not in text] == []


def test_a_module_name_in_two_packages_is_one_the_doc_lists_as_the_same_idea() -> None:
    text = DOC.read_text().split("- Same idea in two layers:", 1)[1].split("\n- ", 1)[0]
    seen: dict[str, list[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        if DATA not in path.parents and path.name != "__init__.py" and "__pycache__" not in path.parts:
            seen.setdefault(path.name, []).append(path.parent)
    repeated = sorted(name for name, folders in seen.items() if len(folders) > 1)
    assert [name for name in repeated if f"`{name}`" not in text] == []
    for name in repeated:
        assert all(f"`{folder.relative_to(REPO)}/`" in text for folder in seen[name]), name


def test_the_test_modules_that_import_another_are_the_ones_the_doc_names() -> None:
    importing = sorted(
        str(path.relative_to(REPO))
        for path in (REPO / "tests").rglob("test_*.py")
        if re.search(r"^from tests\.[\w.]*\.test_\w+ import", path.read_text(), re.M)
    )
    text = DOC.read_text()
    assert all(f"`{path}`" in text for path in importing), importing


def test_every_folder_of_tests_is_a_package_the_doc_names() -> None:
    text = DOC.read_text().split("## The tests' layout", 1)[1]
    folders = sorted(
        str(path.parent.relative_to(REPO / "tests"))
        for path in (REPO / "tests").rglob("test_*.py")
        if path.parent != REPO / "tests"
    )
    for folder in sorted(set(folders)):
        assert (REPO / "tests" / folder / "__init__.py").is_file(), folder
        assert f"`{folder}/`" in text, folder
