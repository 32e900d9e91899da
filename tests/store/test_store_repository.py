"""The store's reads and writes, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest

from qkv.store import Store, clean_display_name

ALICE = "a" * 36
BOB = "b" * 36


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store(database_url)
    yield opened
    opened.close()


def test_every_answer_is_kept_and_format_errors_cost_no_attempt(store: Store) -> None:
    store.progress.record_answer(ALICE, "L4.1", "q", "3, 1", correct=False, message="Not quite.")
    store.progress.record_answer(
        ALICE, "L4.1", "q", "three", correct=False, message="Type two numbers.", counted_as_attempt=False
    )
    store.progress.record_answer(ALICE, "L4.1", "q", "3, 2", correct=True, message="Right.")

    activity = store.progress.lesson_activity(ALICE, "L4.1").exercises["q"]
    assert (activity.attempts, activity.submissions, activity.solved) == (2, 3, True)
    assert activity.last_answer is not None
    assert (activity.last_answer.answer, activity.last_answer.message) == ("3, 2", "Right.")
    assert activity.last_answer.counted_as_attempt is True


def test_solved_stays_true_after_a_later_wrong_answer(store: Store) -> None:
    store.progress.record_answer(ALICE, "L4.1", "letter", "V", correct=True, message="Yes.")
    store.progress.record_answer(ALICE, "L4.1", "letter", "K", correct=False, message="No.", variant_seed=7)
    activity = store.progress.lesson_activity(ALICE, "L4.1").exercises["letter"]
    assert activity.solved is True
    assert activity.last_answer is not None
    assert (activity.last_answer.answer, activity.last_answer.variant_seed) == ("K", 7)


def test_code_submissions_keep_the_result_document(store: Store) -> None:
    failing = {"status": "fail", "tests": [{"name": "a", "status": "pass"}, {"name": "b", "status": "fail"}]}
    passing = {"status": "pass", "tests": [{"name": "a", "status": "pass"}, {"name": "b", "status": "pass"}]}
    store.code.record(ALICE, "L4.1", "code", "def f(): pass", failing)
    store.code.record(ALICE, "L4.1", "code", "def f(): return 1", passing)

    activity = store.progress.lesson_activity(ALICE, "L4.1").exercises["code"]
    assert (activity.submissions, activity.solved) == (2, True)
    assert activity.last_code is not None
    assert activity.last_code.source == "def f(): return 1"
    assert activity.last_code.result == passing
    assert (activity.last_code.passed, activity.last_code.total) == (2, 2)


def test_only_new_tries_of_ones_own_code_count_as_failed_runs(store: Store) -> None:
    failing = {"status": "fail", "tests": [{"name": "a", "status": "fail"}]}
    store.code.record(ALICE, "L4.1", "code", "def f(): pass", failing, own_work=False)  # the starter
    store.code.record(ALICE, "L4.1", "code", "def f(): return 0", failing)
    store.code.record(ALICE, "L4.1", "code", "def f(): return 0\n", failing)  # the same program again
    store.code.record(ALICE, "L4.1", "code", "def f(): return 2", failing)
    store.code.record(ALICE, "L4.1", "code", "def f(): return 0", failing)  # back to an earlier one: no try
    store.code.record(
        ALICE, "L4.1", "code", "x = 3", failing, own_work=False
    )  # defined nothing (the web's call)
    activity = store.progress.lesson_activity(ALICE, "L4.1").exercises["code"]
    assert (activity.submissions, activity.attempts, activity.failed_runs) == (6, 6, 2)


def test_variant_seed_round_trips_and_resets(store: Store) -> None:
    assert store.progress.variant_seed(ALICE, "L4.1") is None
    store.progress.set_variant_seed(ALICE, "L4.1", 12345)
    store.progress.set_variant_seed(ALICE, "L4.1", 67890)
    assert store.progress.variant_seed(ALICE, "L4.1") == 67890
    assert store.progress.lesson_activity(ALICE, "L4.1").variant_seed == 67890
    store.progress.set_variant_seed(ALICE, "L4.1", None)
    assert store.progress.variant_seed(ALICE, "L4.1") is None


def test_learners_see_only_their_own_work(store: Store) -> None:
    store.progress.record_answer(ALICE, "L4.1", "q", "3, 2", correct=True, message="Right.")
    store.progress.set_variant_seed(ALICE, "L4.1", 5)
    bob = store.progress.lesson_activity(BOB, "L4.1")
    assert bob.exercises == {}
    assert bob.variant_seed is None


def test_display_names_are_cleaned_and_stored(store: Store) -> None:
    assert store.learners.display_name(ALICE) is None
    assert store.learners.set_display_name(ALICE, "  Ada   Lovelace ") == "Ada Lovelace"
    assert store.learners.display_name(ALICE) == "Ada Lovelace"
    assert store.learners.set_display_name(ALICE, "") is None
    assert store.learners.display_name(ALICE) is None


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("x" * 81, "A display name may have at most 80 characters, but this one has 81."),
        ("bell\x07", "The display name 'bell\\x07' contains control characters; use letters and spaces."),
        (42, "A display name must be text, not the int 42."),
    ],
)
def test_bad_display_names_are_refused_with_a_sentence(name: object, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        clean_display_name(name)
    assert str(raised.value) == message


def test_gradebook_has_one_row_per_learner_and_exercise(store: Store) -> None:
    store.progress.record_answer(ALICE, "L4.1", "q", "1", correct=False, message="No.")
    store.progress.record_answer(ALICE, "L4.1", "q", "3, 2", correct=True, message="Yes.")
    store.code.record(ALICE, "L4.1", "code", "src", {"status": "fail", "tests": [{"status": "pass"}, {}]})
    store.learners.set_display_name(BOB, "Bob")
    wanted = [("L4.1", "q"), ("L4.1", "k"), ("L4.1", "code")]

    rows = store.gradebook.rows(wanted)

    assert [(r.learner_id, r.exercise_id) for r in rows] == [
        (ALICE, "q"),
        (ALICE, "k"),
        (ALICE, "code"),
        (BOB, "q"),
        (BOB, "k"),
        (BOB, "code"),
    ]
    q, k, code = rows[:3]
    assert (q.attempts, q.solved, q.first_solved_at is not None) == (2, True, True)
    assert (k.attempts, k.solved, k.last_activity_at) == (0, False, None)
    assert (code.submissions, code.solved, code.best_score) == (1, False, "1/2")
    assert rows[3].display_name == "Bob"
    assert rows[0].to_dict()["first_solved_at"].endswith("Z")


def test_shared_secret_is_created_once_and_shared(database_url: str) -> None:
    first, second = Store(database_url), Store(database_url)
    try:
        secret = first.shared_secret("cookie")
        assert len(secret) >= 48
        assert second.shared_secret("cookie") == secret
        assert first.shared_secret("other") != secret
    finally:
        first.close()
        second.close()


@pytest.mark.timeout(60)
def test_concurrent_writers_lose_nothing(store: Store) -> None:
    learners = [str(uuid.uuid4()) for _ in range(4)]
    errors: list[BaseException] = []

    def work(learner: str) -> None:
        try:
            for i in range(15):
                store.progress.record_answer(learner, "L4.1", "q", str(i), correct=False, message="No.")
                if i % 5 == 0:
                    store.progress.set_variant_seed(learner, "L4.1", i)
        except BaseException as error:  # collected and re-raised in the test thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(learner,)) for learner in learners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    for learner in learners:
        activity = store.progress.lesson_activity(learner, "L4.1")
        assert activity.exercises["q"].submissions == 15
        assert activity.variant_seed == 10


def test_a_draft_is_kept_per_exercise_and_the_newest_wins(store: Store) -> None:
    assert store.progress.lesson_activity(ALICE, "L4.1").drafts == {}
    store.code.save_draft(ALICE, "L4.1", "code", "def f(): pass")
    store.code.save_draft(ALICE, "L4.1", "code", "def f():\n    return 2\n")
    store.code.save_draft(ALICE, "L4.2", "code", "other lesson")
    store.code.save_draft(BOB, "L4.1", "code", "bob's")
    assert store.progress.lesson_activity(ALICE, "L4.1").drafts == {"code": "def f():\n    return 2\n"}
    assert store.progress.lesson_activity(BOB, "L4.1").drafts == {"code": "bob's"}
    # A program sent to the grader is the newest text too.
    store.code.record(ALICE, "L4.1", "code", "def f():\n    return 3\n", {"status": "fail", "tests": []})
    assert store.progress.lesson_activity(ALICE, "L4.1").drafts == {"code": "def f():\n    return 3\n"}


def test_failed_runs_count_the_runs_that_did_not_pass(store: Store) -> None:
    for run, status in enumerate(("fail", "error", "pass", "fail")):
        store.code.record(ALICE, "L4.1", "code", f"x = {run}", {"status": status, "tests": []})
    activity = store.progress.lesson_activity(ALICE, "L4.1").exercises["code"]
    assert (activity.submissions, activity.failed_runs, activity.solved) == (4, 3, True)


def test_a_solve_with_the_reference_solution_is_marked_whoever_was_shown_it(store: Store) -> None:
    failing = {"status": "fail", "tests": [{"name": "a", "status": "fail"}]}
    passing = {"status": "pass", "tests": [{"name": "a", "status": "pass"}]}
    store.code.record(ALICE, "L4.1", "code", "def f(): return 2", failing, copies_solution=False)
    store.code.record(ALICE, "L4.1", "code", "def f(): return 1", passing, copies_solution=True)
    store.code.record(BOB, "L4.1", "code", "def f(): return 1 # mine", passing)  # his own: not marked
    store.code.record(BOB, "L4.1", "code", "def f(): return 1", passing, copies_solution=True)  # after: kept
    rows = {row.learner_id: row for row in store.gradebook.rows() if row.exercise_id == "code"}
    assert (rows[ALICE].solved, rows[ALICE].solved_after_solution) == (True, True)
    assert (rows[BOB].solved, rows[BOB].solved_after_solution) == (True, False)  # the first solve decides
    assert store.progress.lesson_activity(ALICE, "L4.1").exercises["code"].solved_after_solution is True
    latest = store.class_view.latest_programs("L4.1", "code")
    assert [(event.learner_id, event.source) for event in latest] == [
        (ALICE, "def f(): return 1"),
        (BOB, "def f(): return 1"),
    ]
