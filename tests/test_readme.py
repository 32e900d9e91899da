"""The README's and the library page's examples run as written, and the README's two commands are the Makefile's."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("page", "examples"), [("README.md", 1), ("docs/library.md", 12)])
def test_the_examples_run(page: str, examples: int) -> None:
    result = doctest.testfile(
        str(ROOT / page), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted >= examples
    assert result.failed == 0


def test_every_docs_link_of_the_readme_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert len(links) >= 9
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_the_readme_commands_are_make_targets() -> None:
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for target in ("run", "test"):
        assert f"make {target}" in readme
        assert re.search(rf"^{target}:", makefile, re.MULTILINE)
