"""A lesson is its folder, its corpus and its tests included: the content tests that ``make test`` runs pass on a lesson added as
just that, so a lesson that passes ``qkv lessons check`` needs no edit outside its folder.

A copy of the built-in chapter gets a lesson more (``tests.lesson_contract.add_lesson``: a new lesson folder,
with a widget in its own ``widgets/``, a code exercise, its corpus in ``corpus/`` and its own tests in ``tests/``,
as ``qkv lessons new`` writes them; nothing else is touched).
The content selection (the ``content`` marker, ``--lesson`` the new id: the arguments ``qkv lessons check``
passes, the browser walks too where Chromium is, and the lesson folder's own tests) then runs in a pytest of
its own on that copy (``QKV_TEST_CONTENT``): every lesson-parametrised test must run for the new lesson, every
catalog-wide one must run, the lesson's own tests must run, and all must pass; and no test that names the new
lesson is left out of it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from qkv.cli.lesson_check import content_command
from qkv.grading import sandbox_available
from tests import lesson_contract as contract
from tests.time_scale import scaled
from tests.web.browser_support import CHROMIUM

REPO = Path(__file__).parents[2]
# The tests that take a lesson (or its exercise or program) as their parameter (but
# test_the_reference_solution_passes: the new lesson's exercise, like the sample's, shows no solution).
EXPECTED = {
    "test_the_lesson_validates",
    "test_every_section_renders_in_several_variants",
    "test_predict_first_comes_first",
    "test_no_answer_is_on_the_page_before_it_is_earned",
    "test_every_code_exercise_has_corpora",
    "test_the_lesson_names_every_catalogued_mistake_its_functions_can_make",
    "test_every_lesson_section_closes_the_tags_it_opens",
    "test_every_answer_box_shows_as_many_components_as_its_answer_has",
    "test_every_code_exercise_states_fresh_inputs_and_its_time_limit",
    "test_every_numeric_prompt_states_the_precision_it_checks_and_means_it",
    "test_the_lesson_page_and_its_progress_are_served",
    "test_an_answer_to_each_answered_exercise_is_judged_and_kept",
    "test_correct_programs_pass",
    "test_wrong_programs_fail_with_their_hint",
    "test_every_lesson_passes_the_smoke_walk",
}
# Tests of the whole catalog, which see the new lesson's widget folder (in the lesson's own folder).
CATALOG_WIDE = {
    "test_every_widget_folder_holds_its_three_files",
    "test_the_engine_finds_every_widget_the_lessons_place_and_no_other",
    "test_each_lesson_lists_the_widgets_its_page_shows",
    "test_no_generic_file_names_a_widget",
    "test_no_script_function_is_longer_than_60_lines",
}


def _pytest(arguments: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", *arguments]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=scaled(540))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_content_selection_runs_on_a_new_lesson_with_its_own_widget_and_passes(tmp_path: Path) -> None:
    content, _, new_id = contract.chapter_with_a_new_lesson(tmp_path / "copy")
    (folder,) = content.glob(f"*/{new_id}-*")
    assert list(folder.glob("widgets/*/widget.js"))  # a widget of the lesson's own folder
    own = sorted(path.stem for path in folder.glob("tests/test_*.py"))  # its own tests, in its folder
    assert len(own) == 2, own
    report = tmp_path / "report.xml"
    env = {key: value for key, value in os.environ.items() if key != "QKV_TEST_CORPORA"}
    env["QKV_TEST_CONTENT"] = str(content)
    arguments = content_command(new_id, folder=folder)  # what `qkv lessons check` runs
    done = _pytest([f"--junitxml={report}", *arguments], env)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    cases = list(ET.parse(report).getroot().iter("testcase"))
    names = [case.get("name", "") for case in cases]
    # The lesson's own tests ran (the browser walk where Chromium is) and passed, with the suite's fixtures.
    modules = {case.get("classname", "").rsplit(".", 1)[-1] for case in cases}
    assert set(own) - (set() if CHROMIUM.exists() else {own[0]}) <= modules, sorted(modules)
    ran = {name.split("[")[0] for name in names if new_id in name}
    # The sandbox's tests skip where bubblewrap is missing (and fail under CI=true, as everywhere).
    sandboxed = {"test_correct_programs_pass", "test_wrong_programs_fail_with_their_hint"}
    expected = EXPECTED if sandbox_available() else EXPECTED - sandboxed
    expected -= set() if CHROMIUM.exists() else {"test_every_lesson_passes_the_smoke_walk"}
    assert expected <= ran, sorted(expected - ran)
    assert {name.split("[")[0] for name in names} >= CATALOG_WIDE
    # No other lesson's parametrisation ran; every test that names the new lesson is in the selection.
    others = {lesson.id for lesson in contract.catalog().lessons}
    assert not [
        name for name in names if any(re.search(rf"(?<![\w.]){re.escape(o)}(?![\w.])", name) for o in others)
    ]
    # Every test parametrised by the new lesson is in the selection: outside it, --lesson finds none.
    unmarked = _pytest(["--collect-only", "-m", "not content", "--lesson", new_id, "tests"], env)
    assert unmarked.returncode == 4, unmarked.stdout[-3000:]  # 4: pytest's usage error
    assert f"--lesson {new_id}: no test selected here is parametrised by a lesson" in unmarked.stderr
