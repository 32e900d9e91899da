"""A module's tests are found by its name: ``tests/<package path>/test_<module>.py``.

For ``src/qkv/store/learner/accounts.py`` that is ``tests/store/learner/test_accounts.py`` (or
``test_accounts_<aspect>.py`` beside it); the core's modules (``src/qkv/attention.py``) have theirs in
``tests/core/``. The modules without one are listed in ``tests/modules_without_tests.txt``, a list that only
shrinks: a module that gains a test module leaves it, and a new module comes with its test module.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).parents[1]
ALLOW_LIST = REPO / "tests" / "modules_without_tests.txt"


def modules(src: Path) -> list[str]:
    """Every module of qkv under ``src`` as a dotted name, but packages' ``__init__``, ``__main__`` and the
    lessons' content (data, tested by the lesson contract)."""
    package = src / "qkv"
    content = package / "lessons" / "content"
    return sorted(
        ".".join(path.relative_to(src).with_suffix("").parts)
        for path in package.rglob("*.py")
        if not path.name.startswith("__") and content not in path.parents
    )


def where_tested(module: str, tests: Path) -> list[Path]:
    """Where the tests of ``module`` (``qkv.a.b``) are looked for: ``tests/a/test_b.py``, ``tests/a/test_b_*.py``."""
    parts = module.split(".")[1:]
    folder = tests.joinpath(*parts[:-1]) if len(parts) > 1 else tests / "core"
    return [*folder.glob(f"test_{parts[-1]}.py"), *folder.glob(f"test_{parts[-1]}_*.py")]


def untested(src: Path, tests: Path) -> list[str]:
    return [module for module in modules(src) if not where_tested(module, tests)]


def listed() -> list[str]:
    lines = ALLOW_LIST.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_module_without_a_test_module_is_listed() -> None:
    missing = sorted(set(untested(REPO / "src", REPO / "tests")) - set(listed()))
    assert missing == [], f"give these a test module named after them: {missing}"


def test_the_list_only_shrinks() -> None:
    """A listed module that now has its test module (or is gone) must leave the list."""
    stale = sorted(set(listed()) - set(untested(REPO / "src", REPO / "tests")))
    assert stale == [], f"remove these from {ALLOW_LIST.name}: {stale}"
    assert listed() == sorted(set(listed()))


def test_the_check_finds_a_module_by_its_tests_name(tmp_path: Path) -> None:
    for name in ("qkv/a.py", "qkv/b.py", "qkv/store/c.py", "qkv/store/d.py", "qkv/store/__init__.py"):
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text("")
    for name in ("core/test_a.py", "store/test_c_reads.py", "test_d.py"):
        (tmp_path / "tests" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tests" / name).write_text("")
    assert untested(tmp_path / "src", tmp_path / "tests") == ["qkv.b", "qkv.store.d"]
