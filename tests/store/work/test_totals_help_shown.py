"""Every bit of help a learner is shown, kept on SQLite and PostgreSQL: each hint and the reference solution,
the first time, in the totals (a later solve is marked) and in the class's views, merged and erased with the
learner."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from qkv.store import Store

ADA = "a" * 36
BOB = "b" * 36
FAILING = {"status": "fail", "tests": [{"status": "fail"}]}
PASSING = {"status": "pass", "tests": [{"status": "pass"}]}


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store(database_url)
    yield opened
    opened.close()


def _fail(store: Store, learner: str, exercise: str = "code", text: str = "x = 1\n") -> None:
    store.code.record(learner, "L9.1", exercise, text, FAILING)


def test_each_hint_is_kept_once_with_its_time_and_counted(store: Store) -> None:
    _fail(store, ADA)
    assert store.code.help_shown(ADA, "L9.1", "code", 1) is True
    assert store.code.help_shown(ADA, "L9.1", "code", 1) is False  # read again: kept once
    assert store.code.help_shown(ADA, "L9.1", "code", 2) is True
    events = store.instructors.help_events()
    assert [(e.learner_id, e.lesson_id, e.exercise_id, e.hint, e.what) for e in events] == [
        (ADA, "L9.1", "code", 1, "hint 1"),
        (ADA, "L9.1", "code", 2, "hint 2"),
    ]
    assert events[0].created_at <= events[1].created_at
    activity = store.progress.lesson_activity(ADA, "L9.1").exercises["code"]
    assert (activity.hints_shown, activity.solved_after_hints) == (2, False)
    with pytest.raises(ValueError, match="at least 0"):
        store.code.help_shown(ADA, "L9.1", "code", -1)


def test_a_solve_after_hints_or_after_the_solution_is_marked_and_one_before_is_not(store: Store) -> None:
    _fail(store, ADA, "hinted")
    store.code.help_shown(ADA, "L9.1", "hinted", 1)
    store.code.record(ADA, "L9.1", "hinted", "x = 2\n", PASSING)
    _fail(store, ADA, "told")
    store.code.help_shown(ADA, "L9.1", "told", 1)
    store.code.solution_shown(ADA, "L9.1", "told")
    store.code.record(ADA, "L9.1", "told", "x = 2\n", PASSING)
    store.code.record(ADA, "L9.1", "alone", "x = 2\n", PASSING)
    store.code.help_shown(ADA, "L9.1", "alone", 1)  # read after solving: no mark
    rows = {row.exercise_id: row for row in store.gradebook.rows() if row.learner_id == ADA}
    assert {
        name: (r.hints_shown, r.solved_after_hints, r.solved_after_solution) for name, r in rows.items()
    } == {
        "hinted": (1, True, False),
        "told": (1, True, True),
        "alone": (1, False, False),
    }
    assert {name: row.helped for name, row in rows.items()} == {
        "hinted": "hints",
        "told": "solution",
        "alone": "",
    }
    assert [e.what for e in store.instructors.help_events(ADA) if e.exercise_id == "told"] == [
        "hint 1",
        "solution shown",
    ]
    (standing,) = store.class_view.standings({"L9.1": ["hinted", "told", "alone"]})
    assert standing.solved_by_lesson == {"L9.1": 3}
    assert (standing.after_solution_by_lesson, standing.after_hints_by_lesson) == ({"L9.1": 1}, {"L9.1": 1})


def test_the_timeline_shows_the_help_in_order_with_the_work(store: Store) -> None:
    _fail(store, ADA)
    store.code.help_shown(ADA, "L9.1", "code", 1)
    store.code.solution_shown(ADA, "L9.1", "code")
    store.code.record(ADA, "L9.1", "code", "x = 2\n", PASSING)
    _fail(store, BOB)
    store.code.help_shown(BOB, "L9.1", "code", 1)
    page = store.class_view.learner_events(ADA)
    assert page.total == 4
    assert [kind for kind, _ in page.order] == ["program", "help", "help", "program"]
    assert [event.what for event in page.help] == ["hint 1", "solution shown"]
    only = store.class_view.learner_events(ADA, offset=1, limit=1)
    assert [event.what for event in only.help] == ["hint 1"] and only.programs == []


def test_help_follows_the_person_when_anonymous_work_is_merged(store: Store) -> None:
    account = store.accounts.find_or_create(None, "s-1", "Ada")
    _fail(store, account)
    store.code.help_shown(account, "L9.1", "code", 1)
    _fail(store, BOB)
    store.code.help_shown(BOB, "L9.1", "code", 1)
    store.code.help_shown(BOB, "L9.1", "code", 2)
    store.accounts.merge(BOB, into=account)
    events = store.instructors.help_events()
    assert [(e.learner_id, e.hint) for e in events] == [(account, 1), (account, 2)]
    assert store.progress.lesson_activity(account, "L9.1").exercises["code"].hints_shown == 2


def test_help_is_exported_and_erased_with_the_learner(store: Store) -> None:
    _fail(store, ADA)
    store.code.help_shown(ADA, "L9.1", "code", 1)
    exported = store.personal_data.export(ADA)["tables"]["help_shown"]
    assert [(row["lesson_id"], row["exercise_id"], row["hint"]) for row in exported] == [("L9.1", "code", 1)]
    store.personal_data.erase(ADA)
    assert store.instructors.help_events() == []
