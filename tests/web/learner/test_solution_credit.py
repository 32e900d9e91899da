"""A solve after the reference solution was shown: marked in the gradebook, the exports and the LMS score,
and credited as the instructor chooses (full, reduced: half, the default; or none)."""

from __future__ import annotations

import io
import shutil
from datetime import datetime

import pytest
from fastapi import FastAPI

from qkv.lessons import SOLUTION_AFTER_FAILED_RUNS, load_catalog
from qkv.store import GradebookRow
from qkv.store.instructor.instructors import LearnerRecord
from qkv.store.lti.links import LtiLinks
from qkv.store.lti.outbox import ScoreOutbox
from qkv.store.sql.database import Database
from qkv.web.instructor.exports import counted_exercises, lms_records, write_gradebook
from qkv.web.learner.solution_credit import DEFAULT_CREDIT, AfterSolutionCredit
from qkv.web.lti.scores import ScoreHook
from qkv.web.settings import Settings
from tests.web.backend_fixtures import API, CORRECT_SOLUTION, LESSON, Browser, retyped_solution

A_TRY = (  # defines every function and runs every test, all wrong: a try at the exercise
    "def project_qkv(X, Wq, Wk, Wv):\n    return X, X, X\n\ndef qkv_shapes(n, d_model, d_k, d_v):\n"
    "    return {}\n\ndef output_shape(n_q, n_k, d_v):\n    return (0, 0)\n\n"
    "def param_count(d_model, d_k, d_v):\n    return 0\n"
)


def _row(learner: str, exercise: str, after: bool) -> GradebookRow:
    when = datetime(2026, 1, 2)
    return GradebookRow(learner, None, LESSON, exercise, 1, 1, True, None, when, when, after)


def test_the_lms_file_credits_a_solve_after_the_solution_as_the_instructor_chooses() -> None:
    catalog = load_catalog()
    counted = counted_exercises(catalog.lesson(LESSON))
    rows = [_row("a", counted[0], False), _row("a", counted[1], True)]
    learners = [LearnerRecord("a", "Ada", datetime(2026, 1, 1), None)]
    column = next(name for name in lms_records(catalog, rows, learners)[0] if name.startswith(LESSON))
    scores = {
        credit: lms_records(catalog, rows, learners, credit)[0][column] for credit in AfterSolutionCredit
    }
    assert scores == {
        AfterSolutionCredit.FULL: 2,
        AfterSolutionCredit.REDUCED: 1.5,
        AfterSolutionCredit.NONE: 1,
    }
    assert (
        DEFAULT_CREDIT is AfterSolutionCredit.REDUCED and Settings().after_solution_credit is DEFAULT_CREDIT
    )
    out = io.StringIO()
    write_gradebook(rows, "csv", out)
    header, first, second = out.getvalue().splitlines()[:3]
    assert header.endswith(",solved_after_solution") and first.endswith(",False") and second.endswith(",True")


def test_the_lms_score_says_so_and_a_half_score_is_queued_once() -> None:
    database = Database("sqlite://")
    hook = ScoreHook(LtiLinks(database), ScoreOutbox(database))
    hook.links.remember_line_item("a" * 36, "X1.1", "i", "c", "sub-1", "https://lms.example/li/1")
    note = "1 exercise solved after the reference solution was shown (half credit)."
    assert hook.lesson_changed("a" * 36, "X1.1", 2.5, 6, note=note) is True
    assert hook.lesson_changed("a" * 36, "X1.1", 2.5, 6, note=note) is False
    (entry,) = hook.outbox.waiting()
    assert (entry.document["scoreGiven"], entry.document["comment"]) == (2.5, note)
    assert hook.lesson_changed("a" * 36, "X1.1", 3, 6) is True
    database.close()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.sandbox
@pytest.mark.timeout(240)
def test_solving_after_seeing_the_solution_is_marked(app: FastAPI, browser: Browser) -> None:
    for run in range(SOLUTION_AFTER_FAILED_RUNS):
        browser.submit_code(A_TRY + f"# try {run}\n")
    assert browser.client.get(f"{API}/solution/functions").status_code == 200
    body = browser.submit_code(CORRECT_SOLUTION).json()
    assert body["result"]["status"] == "pass"
    assert body["progress"]["code"]["functions"]["solved_after_solution"] is True
    assert body["progress"]["solved_after_solution"] == 1
    (row,) = [row for row in app.state.qkv.store.gradebook.rows() if row.exercise_id == "functions"]
    assert row.solved and row.solved_after_solution


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_a_solve_before_the_solution_is_not_marked(app: FastAPI, browser: Browser) -> None:
    assert browser.submit_code(CORRECT_SOLUTION).json()["result"]["status"] == "pass"
    assert browser.client.get(f"{API}/solution/functions").status_code == 200  # looked after solving
    (row,) = [row for row in app.state.qkv.store.gradebook.rows() if row.exercise_id == "functions"]
    assert row.solved and not row.solved_after_solution
    assert browser.progress()["solved_after_solution"] == 0


def test_the_lesson_hook_credits_as_the_server_is_told() -> None:
    from types import SimpleNamespace

    from qkv.web import lti

    database = Database("sqlite://")
    hook = ScoreHook(LtiLinks(database), ScoreOutbox(database))
    hook.links.remember_line_item("a" * 36, "X1.1", "i", "c", "sub-1", "https://lms.example/li/1")
    progress = {"done": 3, "total": 6, "solved_after_solution": 1}
    for credit, given in ((AfterSolutionCredit.NONE, 2), (AfterSolutionCredit.REDUCED, 2.5)):
        state = SimpleNamespace(
            qkv_lti=SimpleNamespace(scores=hook),
            qkv=SimpleNamespace(settings=Settings(after_solution_credit=credit)),
        )
        lti.lesson_changed(state, "a" * 36, "X1.1", progress)
        document = hook.outbox.waiting()[-1].document
        assert document["scoreGiven"] == given
        assert document["comment"] == (
            f"1 exercise solved after the reference solution was shown ({credit.describe()})."
        )
    database.close()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_the_reference_solution_sent_by_someone_never_shown_it_is_marked(
    app: FastAPI, browser: Browser
) -> None:
    # Another browser (or a classmate) opened the solution; this learner never did, and never failed a run.
    retyped = retyped_solution()
    solution = load_catalog().lesson(LESSON).exercises["functions"].solution
    assert retyped != solution and "columns" in retyped and '"""Mine."""' in retyped
    body = browser.submit_code(retyped).json()
    assert body["result"]["status"] == "pass"
    assert body["progress"]["code"]["functions"]["failed_runs"] == 0
    assert body["progress"]["code"]["functions"]["solved_after_solution"] is True
    assert body["progress"]["solved_after_solution"] == 1
    (row,) = [row for row in app.state.qkv.store.gradebook.rows() if row.exercise_id == "functions"]
    assert row.solved and row.solved_after_solution
    # A program of one's own that passes is not marked (another learner, the same app).
    own = Browser(app).open_lesson()
    assert (
        own.submit_code(CORRECT_SOLUTION).json()["progress"]["code"]["functions"]["solved_after_solution"]
        is False
    )
