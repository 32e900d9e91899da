"""A solve after the reference solution was shown: marked in the gradebook, the exports and the LMS score,
and credited as the instructor chooses (full, reduced: half, the default; or none)."""

from __future__ import annotations

import io
import re
import shutil
from datetime import datetime
from typing import Any

import pytest
from fastapi import FastAPI

from qkv.lessons import SOLUTION_AFTER_FAILED_RUNS, load_catalog
from qkv.store import GradebookRow
from qkv.store.instructor.instructors import LearnerRecord
from qkv.store.lti.links import LtiLinks
from qkv.store.lti.outbox import ScoreOutbox
from qkv.store.sql.database import Database
from qkv.web.instructor.exports import counted_exercises, lms_records, write_gradebook
from qkv.web.lti.scores import ScoreHook
from qkv.web.settings import Settings
from qkv.web.solution_credit import DEFAULT_CREDIT, AfterSolutionCredit, HelpPolicy
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
        credit: lms_records(catalog, rows, learners, HelpPolicy(credit))[0][column]
        for credit in AfterSolutionCredit
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
    assert header.endswith(",solved_after_solution,hints_shown,solved_after_hints")
    assert first.endswith(",False,0,False") and second.endswith(",True,0,False")


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

    from qkv.store.instructor.due_dates import DueDates
    from qkv.web import lti

    database = Database("sqlite://")
    hook = ScoreHook(LtiLinks(database), ScoreOutbox(database))
    hook.links.remember_line_item("a" * 36, "X1.1", "i", "c", "sub-1", "https://lms.example/li/1")
    progress = {"done": 3, "total": 6, "solved_after_solution": 1}
    for credit, given in ((AfterSolutionCredit.NONE, 2), (AfterSolutionCredit.REDUCED, 2.5)):
        state = SimpleNamespace(
            qkv_lti=SimpleNamespace(scores=hook),
            qkv=SimpleNamespace(
                settings=Settings(after_solution_credit=credit),
                store=SimpleNamespace(due_dates=DueDates(database)),
            ),
        )
        lti.lesson_changed(state, "a" * 36, "X1.1", progress)
        document = hook.outbox.waiting()[-1].document
        assert document["scoreGiven"] == given
        assert document["comment"] == (
            f"1 exercise solved after the reference solution was shown ({credit.describe()})."
        )
    database.close()


# -- help after hints: one score everywhere ----------------------------------------------------------------

PASSING = {"status": "pass", "tests": [{"status": "pass"}]}
FAILING = {"status": "fail", "tests": [{"status": "fail"}]}


def _helped_learner(app: FastAPI) -> str:
    """A learner who solved L4.1's code after a hint (and one of its hand exercises alone), and L4.2's code
    after the reference solution."""
    from tests.web.backend_fixtures import learner_id_of

    browser = Browser(app).open_lesson()
    browser.progress()
    learner = learner_id_of(browser)
    store = app.state.qkv.store
    catalog = load_catalog()
    hand = next(e for e in counted_exercises(catalog.lesson("L4.1")) if e != "functions")
    store.progress.record_answer(learner, "L4.1", hand, "x", correct=True, message="Right.")
    store.code.record(learner, "L4.1", "functions", "x = 1\n", FAILING)
    store.code.help_shown(learner, "L4.1", "functions", 1)
    store.code.record(learner, "L4.1", "functions", "x = 2\n", PASSING)
    store.code.record(learner, "L4.2", "functions", "x = 1\n", FAILING)
    store.code.help_shown(learner, "L4.2", "functions", 1)
    store.code.solution_shown(learner, "L4.2", "functions")
    store.code.record(learner, "L4.2", "functions", "x = 2\n", PASSING)
    return learner


def _everywhere(app: FastAPI, learner: str) -> dict[str, Any]:
    """The learner's L4.1 and L4.2 scores and total as the class grid, the LMS file and the LMS score say."""
    import csv

    from fastapi.testclient import TestClient

    from qkv.web.lesson_progress import build_progress
    from qkv.web.lti.scores import lesson_score
    from tests.web.backend_fixtures import sign_in_instructor

    staff = TestClient(app)
    sign_in_instructor(app, staff)
    (row,) = [r for r in staff.get("/api/instructor/class").json()["rows"] if r["id"] == learner]
    grid = {
        cell["lesson_id"]: cell["solved"] for cell in row["cells"] if cell["lesson_id"] in ("L4.1", "L4.2")
    }
    (lms,) = [
        r
        for r in csv.DictReader(io.StringIO(staff.get("/instructor/export/lms.csv").text))
        if r["learner_id"] == learner
    ]
    file = {lesson: float(next(v for k, v in lms.items() if k.startswith(lesson + " "))) for lesson in grid}
    settings, store, catalog = app.state.qkv.settings, app.state.qkv.store, load_catalog()
    scores = {
        lesson: lesson_score(
            build_progress(catalog.lesson(lesson), store.progress.lesson_activity(learner, lesson)),
            settings.help_policy,
        )
        for lesson in grid
    }
    total = next(v for k, v in lms.items() if k.startswith("total"))
    return {
        "grid": grid,
        "file": file,
        "lms": {lesson: score.solved for lesson, score in scores.items()},
        "notes": {lesson: score.note for lesson, score in scores.items()},
        "totals": (row["solved"], float(total)),
        "page": staff.get("/instructor/class", headers={"accept": "text/html"}).text,
        "timeline": staff.get(f"/instructor/learners/{learner}", headers={"accept": "text/html"}).text,
        "events": list(csv.DictReader(io.StringIO(staff.get("/instructor/export/events.csv").text))),
        "gradebook": staff.get("/instructor/export/gradebook.json").json(),
    }


@pytest.mark.parametrize(
    ("hint_credit", "expected"),
    [
        (AfterSolutionCredit.FULL, {"L4.1": 2, "L4.2": 0.5}),
        (AfterSolutionCredit.REDUCED, {"L4.1": 1.5, "L4.2": 0.5}),
    ],
)
def test_the_grid_the_exports_and_the_lms_score_agree_after_hints_and_the_solution(
    make_app: Any, hint_credit: AfterSolutionCredit, expected: dict[str, float]
) -> None:
    app = make_app(after_hint_credit=hint_credit)
    learner = _helped_learner(app)
    seen = _everywhere(app, learner)
    assert seen["grid"] == seen["file"] == seen["lms"] == expected
    assert seen["totals"][0] == seen["totals"][1] == sum(expected.values())
    assert seen["notes"] == {
        "L4.1": f"1 exercise solved after hints ({hint_credit.describe()}).",
        "L4.2": "1 exercise solved after the reference solution was shown (half credit).",
    }
    assert f"{hint_credit.describe()} after hints" in seen["page"] and "1 after hints" in seen["page"]
    assert "1 after the solution" in seen["page"]
    assert seen["timeline"].count("Hint 1 shown") == 2 and "Reference solution shown" in seen["timeline"]
    # Each passing program says the help shown before it, as the grid marks the solve; the failing ones do not.
    passes = re.findall(
        r"Program: <strong>(\w+)</strong>[^<]*(?:<strong>([^<]*)</strong>)?\.</p>", seen["timeline"]
    )
    assert passes == [
        ("fail", ""),
        ("pass", "after hints"),
        ("fail", ""),
        ("pass", "after the reference solution was shown"),
    ]
    helped = [
        (e["lesson_id"], e["event"], e["hint_number"])
        for e in seen["events"]
        if e["learner_id"] == learner and e["event"] in ("hint", "solution")
    ]
    assert helped == [("L4.1", "hint", "1"), ("L4.2", "hint", "1"), ("L4.2", "solution", "")]
    marks = {
        r["lesson_id"]: (r["hints_shown"], r["solved_after_hints"], r["solved_after_solution"])
        for r in seen["gradebook"]
        if r["learner_id"] == learner and r["exercise_id"] == "functions" and r["lesson_id"] in expected
    }
    assert marks == {"L4.1": (1, True, False), "L4.2": (1, True, True)}


def test_qkv_serve_takes_both_credits_and_defaults_to_half_after_the_solution_and_full_after_hints() -> None:
    from qkv.cli.serve import _settings, serve

    def policy(*args: str) -> HelpPolicy:
        return _settings("sqlite://", serve.make_context("serve", list(args)).params).help_policy

    assert (
        policy()
        == HelpPolicy(AfterSolutionCredit.REDUCED, AfterSolutionCredit.FULL)
        == Settings().help_policy
    )
    assert policy("--after-hint-credit", "none", "--after-solution-credit", "full") == HelpPolicy(
        AfterSolutionCredit.FULL, AfterSolutionCredit.NONE
    )


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


def test_only_a_solve_is_checked_against_the_reference_solution(
    app: FastAPI, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check parses the program (a few percent of the server's CPU a run), and only a first solve's
    mark reads it: a failing run is not checked."""
    exercise_type = type(load_catalog().lesson(LESSON).exercises["functions"])
    checked: list[str] = []
    original = exercise_type.copies_solution
    monkeypatch.setattr(
        exercise_type,
        "copies_solution",
        lambda exercise, source: checked.append(source) or original(exercise, source),
    )
    assert browser.submit_code(A_TRY).json()["result"]["status"] == "fail"
    assert checked == []
    assert browser.submit_code(CORRECT_SOLUTION).json()["result"]["status"] == "pass"
    assert checked == [CORRECT_SOLUTION]
