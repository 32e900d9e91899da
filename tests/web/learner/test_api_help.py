"""Nothing is lost and help that helps: drafts saved as the learner types, a failing call the learner can
repeat (every run draws fresh inputs), and a reference solution that no response carries before it is earned."""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest
from fastapi import FastAPI

from qkv.grading.verdict import shown
from qkv.lessons import SOLUTION_AFTER_FAILED_RUNS, load_catalog
from tests.web.backend_fixtures import API, CORRECT_SOLUTION, LESSON, LESSON_URL, WRONG_SOLUTION, Browser

needs_bubblewrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"
)
EXERCISE = "functions"
SOLUTION = load_catalog().code_exercise(f"{LESSON}/{EXERCISE}").exercise.solution
BROKEN = "def project_qkv(:\n"
A_TRY = (  # defines every function and runs every test, all wrong: a try at the exercise
    "def project_qkv(X, Wq, Wk, Wv):\n    return X, X, X\n\ndef qkv_shapes(n, d_model, d_k, d_v):\n"
    "    return {}\n\ndef output_shape(n_q, n_k, d_v):\n    return (0, 0)\n\n"
    "def param_count(d_model, d_k, d_v):\n    return 0\n"
)


def _plain_runs(hints: tuple[str, ...]) -> list[str]:
    """The longest run of plain text of each hint (no Markdown or HTML-escaped character in it)."""
    return [max(re.split(r"[`*_\"&<>]", hint), key=len).strip() for hint in hints]


def put_draft(browser: Browser, code: str, exercise_id: str = EXERCISE, token: str | None = None) -> Any:
    headers = {"X-CSRF-Token": browser.token if token is None else token}
    return browser.client.put(
        f"{API}/draft", json={"exercise_id": exercise_id, "code": code}, headers=headers
    )


def solution_lines() -> list[str]:
    """The solution's own lines (not the starter's), long enough to be unmistakable in a response."""
    assert SOLUTION is not None
    starter = load_catalog().code_exercise(f"{LESSON}/{EXERCISE}").exercise.starter_code or ""
    return [line.strip() for line in SOLUTION.splitlines() if len(line.strip()) > 20 and line not in starter]


def assert_no_solution_in(text: str) -> None:
    lines = solution_lines()
    assert lines
    leaked = [line for line in lines if line in text]
    assert leaked == [], leaked


def test_a_draft_is_saved_and_comes_back_with_the_page(app: FastAPI, browser: Browser) -> None:
    draft = "import numpy as np\n\ndef project_qkv(X, Wq, Wk, Wv):\n    return X @ Wq  # half done\n"
    assert browser.page_progress()["code"][EXERCISE]["draft"] is None
    response = put_draft(browser, draft)
    assert response.status_code == 200, response.text
    assert response.json() == {"saved": True, "exercise_id": EXERCISE}
    assert put_draft(browser, draft + "# more\n").status_code == 200
    assert browser.page_progress()["code"][EXERCISE]["draft"] == draft + "# more\n"
    assert browser.progress()["code"][EXERCISE]["draft"] == draft + "# more\n"
    # It follows the learner's cookie, not the browser's storage: another learner has no draft.
    assert Browser(app).open_lesson().page_progress()["code"][EXERCISE]["draft"] is None
    # A draft is not a run: no attempt is counted.
    assert browser.progress()["exercises"][EXERCISE]["attempts"] == 0


def test_a_draft_needs_the_csrf_token_a_code_exercise_and_a_size_limit(browser: Browser) -> None:
    assert put_draft(browser, "x = 1\n", token="").status_code == 403
    wrong_kind = put_draft(browser, "3, 2", exercise_id="q")
    assert wrong_kind.status_code == 422
    assert wrong_kind.json() == {"detail": "The exercise 'q' takes an answer, not code."}
    big = put_draft(browser, "#" * (64 * 1024 + 1))
    assert big.status_code == 413 and "at most 65,536 bytes" in big.json()["detail"]
    assert browser.page_progress()["code"][EXERCISE]["draft"] is None


def test_the_solution_is_not_in_the_page_progress_or_variants_before_it_is_earned(browser: Browser) -> None:
    page = browser.client.get(LESSON_URL, headers={"accept": "text/html"}).text
    assert_no_solution_in(page)
    hints = load_catalog().code_exercise(f"{LESSON}/{EXERCISE}").exercise.hints
    assert "Stuck?" in page and 'data-hints="3"' in page
    assert [word for word in _plain_runs(hints) if word in page] == []  # no hint's text yet
    assert f"or after {SOLUTION_AFTER_FAILED_RUNS} runs of your own code that did not pass" in page  # when
    assert_no_solution_in(str(browser.progress()))
    assert browser.progress()["code"][EXERCISE]["solution"] == {
        "open": False,
        "after_failed_runs": SOLUTION_AFTER_FAILED_RUNS,
    }
    assert_no_solution_in(browser.post(f"{API}/variant", {}).text)
    refused = browser.client.get(f"{API}/solution/{EXERCISE}")
    assert refused.status_code == 403
    assert refused.json() == {
        "detail": "The reference solution opens once you have solved this exercise, or after "
        f"{SOLUTION_AFTER_FAILED_RUNS} runs of your own code that did not pass all the tests; you have had "
        "0 so far (the starter code, a program that does not define the functions or run their tests, or one "
        "you ran before, does not count)."
    }
    assert browser.client.get(f"{API}/solution/q").status_code == 422
    assert browser.client.get(f"{API}/solution/nope").status_code == 422


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(180)
def test_the_solution_opens_after_enough_failed_runs(browser: Browser) -> None:
    starter = load_catalog().code_exercise(f"{LESSON}/{EXERCISE}").exercise.starter_code or ""
    for program in (starter, starter):  # the starter code as it is, run and run again, earns nothing
        body = browser.submit_code(program).json()
        assert body["result"]["status"] != "pass"
        assert body["progress"]["code"][EXERCISE]["failed_runs"] == 0
    for run in range(1, SOLUTION_AFTER_FAILED_RUNS):
        browser.submit_code(A_TRY + f"# try {run}\n")
        body = browser.submit_code(A_TRY + f"# try {run}\n").json()  # the same program twice counts once
        assert body["result"]["status"] == "fail"
        # ... and "Stuck?" says so, rather than promising the next hint for any failing run.
        assert (
            "(a program you ran before does not count)" in body["progress"]["code"][EXERCISE]["hints"]["next"]
        )
        assert_no_solution_in(str(body))
        assert body["progress"]["code"][EXERCISE]["failed_runs"] == run
        refused = browser.client.get(f"{API}/solution/{EXERCISE}")
        assert refused.status_code == 403 and f"you have had {run} so far" in refused.json()["detail"]
    body = browser.submit_code(A_TRY + "# try 1\n").json()  # back to an earlier program: no try
    assert body["progress"]["code"][EXERCISE]["failed_runs"] == SOLUTION_AFTER_FAILED_RUNS - 1
    body = browser.submit_code(WRONG_SOLUTION).json()
    assert body["progress"]["code"][EXERCISE]["solution"]["open"] is True
    opened = browser.client.get(f"{API}/solution/{EXERCISE}")
    assert opened.status_code == 200
    assert opened.json()["solution"].strip() == SOLUTION.strip()


def test_no_hint_opens_before_a_counted_failed_run(app: FastAPI, browser: Browser) -> None:
    hints = load_catalog().code_exercise(f"{LESSON}/{EXERCISE}").exercise.hints
    first_note = "Hint 1 of 3 opens after a run of your own code that does not pass all the tests."
    assert browser.progress()["code"][EXERCISE]["hints"] == {
        "total": len(hints),
        "open": 0,
        "shown": 0,
        "next": first_note,
    }
    page = browser.client.get(LESSON_URL, headers={"accept": "text/html"}).text
    assert "Hints open as you work: the first after a run of your own code that does not pass" in page
    refused = browser.client.get(f"{API}/hints/{EXERCISE}/1")
    assert refused.status_code == 403
    assert refused.json() == {"detail": f"You have not earned hint 1 yet. {first_note}"}
    assert browser.client.get(f"{API}/hints/{EXERCISE}/3").status_code == 403
    missing = browser.client.get(f"{API}/hints/{EXERCISE}/{len(hints) + 1}")
    assert missing.status_code == 404
    assert missing.json() == {
        "detail": f"The exercise {EXERCISE!r} has {len(hints)} hints, so there is no hint {len(hints) + 1}."
    }
    assert browser.client.get(f"{API}/hints/{EXERCISE}/0").status_code == 422
    assert browser.client.get(f"{API}/hints/q/1").status_code == 422  # not a code exercise
    assert app.state.qkv.store.instructors.help_events() == []  # nothing was shown, nothing is kept


def _signed_in(app: FastAPI, external_id: str) -> Browser:
    """A fresh browser signed in to a new account (a roster's sign-in link)."""
    accounts = app.state.qkv.store.accounts
    token = accounts.new_sign_in_token(accounts.find_or_create(None, external_id, "Ada"))
    browser = Browser(app).open_lesson()
    used = browser.client.post("/sign-in", data={"token": token}, headers={"accept": "text/html"})
    assert used.status_code in (200, 303), used.text
    return browser.open_lesson()


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(240)
def test_each_hint_opens_after_one_more_failed_run_for_that_person_and_is_kept(app: FastAPI) -> None:
    throwaway = Browser(app).open_lesson()
    body = throwaway.submit_code(A_TRY).json()
    assert body["progress"]["code"][EXERCISE]["hints"]["open"] == 1
    first = throwaway.client.get(f"{API}/hints/{EXERCISE}/1")
    assert first.status_code == 200
    hints = load_catalog().code_exercise(f"{LESSON}/{EXERCISE}").exercise.hints
    assert _plain_runs(hints)[0] in first.json()["html"] and "`" not in first.json()["html"]
    assert first.json()["next"] == (
        "Hint 2 of 3 opens after 1 more run of your own code that does not pass all the tests (a program you "
        "ran before does not count)."
    )
    second = throwaway.client.get(f"{API}/hints/{EXERCISE}/2")
    assert second.status_code == 403 and "Hint 2 of 3 opens after 1 more run" in second.json()["detail"]
    # Earned by the person, not the browser: an account signed in elsewhere has earned nothing.
    account = _signed_in(app, "s-hints")
    assert account.client.get(f"{API}/hints/{EXERCISE}/1").status_code == 403
    assert account.progress()["code"][EXERCISE]["hints"]["open"] == 0
    throwaway.submit_code(A_TRY + "# another try\n")
    assert throwaway.client.get(f"{API}/hints/{EXERCISE}/2").status_code == 200
    assert throwaway.client.get(f"{API}/hints/{EXERCISE}/1").status_code == 200  # read again: kept once
    events = app.state.qkv.store.instructors.help_events()
    assert [(event.exercise_id, event.what) for event in events] == [
        (EXERCISE, "hint 1"),
        (EXERCISE, "hint 2"),
    ]
    assert len({event.learner_id for event in events}) == 1
    solved = throwaway.submit_code(CORRECT_SOLUTION).json()
    assert solved["progress"]["code"][EXERCISE]["solved_after_hints"] is True
    assert solved["progress"]["solved_after_hints"] == 1 and solved["progress"]["solved_after_solution"] == 0
    (row,) = [r for r in app.state.qkv.store.gradebook.rows() if r.exercise_id == EXERCISE]
    assert (row.solved, row.hints_shown, row.solved_after_hints, row.solved_after_solution) == (
        True,
        2,
        True,
        False,
    )


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(180)
def test_junk_that_defines_nothing_never_opens_the_solution(browser: Browser) -> None:
    # Three different junk files (issue 39: "x = i" three times opened it), a file that stops at a syntax
    # error, and one that defines only some of the functions: none is a try at the exercise.
    half = "def project_qkv(X, Wq, Wk, Wv):\n    return X, X, X\n"
    for program in ("x = 1\n", "x = 2\n", "x = 3\n", BROKEN, half, half + "# again\n"):
        body = browser.submit_code(program).json()
        assert body["result"]["status"] != "pass"
        assert body["progress"]["code"][EXERCISE]["failed_runs"] == 0, program
    assert body["progress"]["code"][EXERCISE]["solution"]["open"] is False
    assert browser.client.get(f"{API}/solution/{EXERCISE}").status_code == 403


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_the_solution_opens_once_solved(browser: Browser) -> None:
    assert browser.submit_code(CORRECT_SOLUTION).json()["result"]["status"] == "pass"
    assert browser.client.get(f"{API}/solution/{EXERCISE}").status_code == 200


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(180)
def test_every_run_draws_fresh_inputs_and_a_failing_call_repeats_in_the_learners_own_python(
    browser: Browser,
) -> None:
    first = browser.submit_code(WRONG_SOLUTION).json()["result"]
    again = browser.submit_code(WRONG_SOLUTION).json()["result"]
    assert first["seed"] != again["seed"]
    assert [test["call"] for test in first["tests"]] != [test["call"] for test in again["tests"]]
    # Each failure shows its whole call: pasted into Python beside the learner's own code, it gives back
    # exactly the value the page showed as "Got".
    failures = [test for test in first["tests"] if test["status"] == "fail"]
    assert failures
    learners_python: dict[str, Any] = {}
    exec(WRONG_SOLUTION, learners_python)
    for test in failures:
        assert shown(eval(test["call"], learners_python)) == test["got"], test["call"]


def test_a_draft_no_database_can_store_is_refused_with_400(browser: Browser) -> None:
    for body, what in (('"x = 1\\u0000"', "NUL character"), ("\"x = '\\ud800'\"", "\\ud800")):
        response = browser.client.put(
            f"{API}/draft",
            content=f'{{"exercise_id": "{EXERCISE}", "code": {body}}}'.encode(),
            headers={"X-CSRF-Token": browser.token, "Content-Type": "application/json"},
        )
        assert response.status_code == 400, response.text
        assert what in response.json()["detail"]
    assert browser.progress()["code"][EXERCISE]["draft"] is None
