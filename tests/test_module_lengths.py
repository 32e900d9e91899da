"""No module of ``src/`` is over 700 lines: a longer one is split along its seams into a package or siblings.

docs/development.md's map says where each piece belongs.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).parents[1]
LIMIT = 700


def long_modules(src: Path, limit: int = LIMIT) -> dict[str, int]:
    """Every Python file under ``src`` over ``limit`` lines, with its count (paths from ``src``'s parent)."""
    found = {}
    for path in sorted(src.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found[str(path.relative_to(src.parent))] = lines
    return found


def test_no_module_is_over_the_bound() -> None:
    over = long_modules(REPO / "src")
    assert over == {}, f"split these modules (over {LIMIT} lines): {over}"


def test_the_bound_sees_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "src" / "qkv").mkdir(parents=True)
    (tmp_path / "src" / "qkv" / "short.py").write_text("x = 1\n" * LIMIT)
    (tmp_path / "src" / "qkv" / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    assert long_modules(tmp_path / "src") == {"src/qkv/long.py": LIMIT + 1}
