"""A lesson is its folder and its corpus: every lesson-parametrised test runs on a lesson added as just that.

A copy of the built-in chapter gets a lesson more (``tests.lesson_contract.add_lesson``: a new lesson folder,
with a widget of its own and a code exercise, and a new corpus folder; nothing else is touched). The
lesson-parametrised test modules (the browser smoke walk too, where Chromium is) then run in a pytest of their own, on that copy (``QKV_TEST_CONTENT`` and
``QKV_TEST_CORPORA``), selected by the new lesson's id: each must run for it, and pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from qkv.grading import sandbox_available
from tests import lesson_contract as contract
from tests.time_scale import scaled
from tests.web.browser_support import CHROMIUM

REPO = Path(__file__).parents[2]
# Every module whose tests are parametrised by the catalog's lessons (or their exercises and corpora).
LESSON_PARAMETRISED = [
    "tests/lessons/test_lesson_contract.py",
    "tests/lessons/test_lessons_catalogue_coverage.py",
    "tests/lessons/test_lessons_markup.py",
    "tests/lessons/test_exercise_notes.py",
    "tests/web/learner/test_api_every_lesson.py",
    "tests/web/test_browser_lessons.py",
]
# The tests of those modules that take a lesson (or its exercise or program) as their parameter (but
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


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_lesson_parametrised_test_runs_on_a_new_lesson_and_passes(tmp_path: Path) -> None:
    content, corpora, new_id = contract.chapter_with_a_new_lesson(tmp_path / "copy")
    report = tmp_path / "report.xml"
    env = dict(os.environ, QKV_TEST_CONTENT=str(content), QKV_TEST_CORPORA=str(corpora))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", "-k", new_id,
         f"--junitxml={report}", *LESSON_PARAMETRISED],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=scaled(540),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    cases = ET.parse(report).getroot().iter("testcase")
    ran = {case.get("name", "").split("[")[0] for case in cases if new_id in case.get("name", "")}
    # The sandbox's tests skip where bubblewrap is missing (and fail under CI=true, as everywhere).
    sandboxed = {"test_correct_programs_pass", "test_wrong_programs_fail_with_their_hint"}
    expected = EXPECTED if sandbox_available() else EXPECTED - sandboxed
    expected -= set() if CHROMIUM.exists() else {"test_every_lesson_passes_the_smoke_walk"}
    assert expected <= ran, sorted(expected - ran)
