"""The store's public surface: ``qkv.store.__all__`` is exactly what its docstring documents, every public
name has a docstring, the repositories' public methods have runnable examples, and nothing outside the
store opens its transactions through private names."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import qkv.store
from qkv.store import (
    ClientBudgets,
    CodeWork,
    Courses,
    Database,
    Gradebook,
    GradingJobs,
    InstructorDesk,
    Learners,
    Progress,
    Store,
)

ROOT = Path(__file__).resolve().parents[2]
STORE = Path(qkv.store.__file__).parent


def documented_names() -> set[str]:
    """The names the package docstring lists under "Public names" (each entry line names one or more)."""
    doc = qkv.store.__doc__ or ""
    section = doc.split("Public names\n------------\n", 1)[1]
    names: set[str] = set()
    for line in section.splitlines():
        if line and not line.startswith(" "):
            names.update(name.strip() for name in line.split(","))
    return names


def test_all_is_exactly_what_the_docstring_documents() -> None:
    assert set(qkv.store.__all__) == documented_names()
    assert len(qkv.store.__all__) == len(set(qkv.store.__all__))
    for name in qkv.store.__all__:
        assert hasattr(qkv.store, name), name


def test_every_public_name_has_a_docstring() -> None:
    for name in qkv.store.__all__:
        value = getattr(qkv.store, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"qkv.store.{name} has no docstring"


def test_the_store_is_the_composition_of_its_repositories() -> None:
    store = Store("sqlite://")
    try:
        assert isinstance(store.database, Database)
        for name, kind in {
            "learners": Learners,
            "progress": Progress,
            "code": CodeWork,
            "budgets": ClientBudgets,
            "gradebook": Gradebook,
            "instructors": InstructorDesk,
            "courses": Courses,
        }.items():
            repository = getattr(store, name)
            assert isinstance(repository, kind), name
            assert repository.database is store.database, f"store.{name} has a database of its own"
    finally:
        store.close()


def test_the_repositories_public_methods_have_runnable_examples() -> None:
    for kind in (
        Database,
        Learners,
        Progress,
        CodeWork,
        ClientBudgets,
        Gradebook,
        InstructorDesk,
        GradingJobs,
        Courses,
        Store,
    ):
        for name, method in inspect.getmembers(kind, inspect.isfunction):
            if name.startswith("_") or name == "close":
                continue
            doc = inspect.getdoc(method) or ""
            assert ">>> " in doc, f"{kind.__name__}.{name} has no runnable example"


def test_the_store_imports_nothing_of_ours_outside_itself() -> None:
    pattern = re.compile(r"^\s*(?:from|import)\s+(qkv(?:\.\w+)*)", re.MULTILINE)
    for path in STORE.glob("*.py"):
        for module in pattern.findall(path.read_text(encoding="utf-8")):
            assert module == "qkv.store" or module.startswith("qkv.store."), f"{path.name} imports {module}"


def test_nothing_outside_the_store_uses_its_private_transactions() -> None:
    private = re.compile(r"\._(?:read|write)\(")
    found = []
    for folder in ("src", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == Path(__file__):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if private.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "use Database.read()/write() instead:\n" + "\n".join(found)
    assert not hasattr(Database, "_read") and not hasattr(Database, "_write")
