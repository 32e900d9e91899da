"""The class view's aggregates on SQLite and PostgreSQL: the grid, the current exercise, stuck learners,
exercise counts, grouped wrong answers and a learner's events a page at a time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import update

from qkv.store import Store
from qkv.store.instructor.class_view import ClassView
from qkv.store.instructor.class_view_records import StuckRule
from qkv.store.sql.clock import utc_now
from qkv.store.sql.tables import ExerciseTotals

ANN, BEN, CY = "a" * 36, "b" * 36, "c" * 36
COUNTED = {"L9.1": ["area", "shapes"], "L9.2": ["mean"]}


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store(database_url)
    yield opened
    opened.close()


def _answer(store: Store, learner: str, exercise: str, text: str, correct: bool, **extra: object) -> None:
    lesson = "L9.2" if exercise == "mean" else "L9.1"
    store.progress.record_answer(learner, lesson, exercise, text, correct=correct, message="m", **extra)  # type: ignore[arg-type]


def _program(store: Store, learner: str, status: str) -> None:
    tests = [{"name": "t1", "status": status, "hint": "Half way round." if status != "pass" else None}]
    store.code.record(learner, "L9.1", "shapes", f"# {status}\n", {"status": status, "tests": tests})


def _seed(store: Store) -> None:
    store.learners.set_display_name(ANN, "Ann")
    _answer(store, ANN, "area", "14", False, mistake="perimeter")
    _answer(store, ANN, "area", "12", True)
    _program(store, ANN, "fail")
    _program(store, ANN, "pass")
    _answer(store, ANN, "quiz", "B", True)  # a part that does not count toward done
    _answer(store, BEN, "area", "12", True)
    _answer(store, BEN, "mean", "abc", False, counted_as_attempt=False)
    for text in ("3", "4", "[3, 2]"):
        _answer(store, CY, "area", text, False)


def test_the_grid_counts_only_the_exercises_that_count(store: Store) -> None:
    _seed(store)
    view = ClassView(store.database)
    by_id = {s.id: s for s in view.standings(COUNTED)}
    assert by_id[ANN].solved_by_lesson == {"L9.1": 2, "L9.2": 0}
    assert by_id[ANN].solved == 2 and by_id[ANN].name == "Ann"
    assert by_id[ANN].submissions == 5
    assert by_id[BEN].solved_by_lesson == {"L9.1": 1, "L9.2": 0}
    assert by_id[BEN].started_by_lesson == {"L9.1": 1, "L9.2": 1}
    assert by_id[CY].solved == 0 and by_id[CY].name == f"anonymous {CY[:8]}"


def test_the_current_exercise_and_who_is_stuck(store: Store) -> None:
    _seed(store)
    view = ClassView(store.database)
    by_id = {s.id: s for s in view.standings(COUNTED)}
    cy = by_id[CY].current
    assert cy is not None and (cy.lesson_id, cy.exercise_id, cy.attempts, cy.solved) == (
        "L9.1",
        "area",
        3,
        False,
    )
    assert by_id[BEN].current is not None and by_id[BEN].current.exercise_id == "mean"
    now = utc_now()
    assert [s.id for s in view.stuck(list(by_id.values()), StuckRule(attempts=3), now)] == [CY]
    assert view.stuck(list(by_id.values()), StuckRule(attempts=4), now) == []
    # Ben's one unreadable answer costs no attempt, but 10 minutes on it without solving it is stuck too.
    later = now + timedelta(minutes=11)
    with store.database.write() as conn:
        totals = ExerciseTotals.__table__
        unsolved = totals.c.solved.is_(False)
        conn.execute(update(totals).where(unsolved).values(last_activity_at=later - timedelta(minutes=1)))
    assert {s.id for s in view.stuck(view.standings(COUNTED), StuckRule(attempts=9), later)} == {BEN, CY}
    # Away for longer than the active window: nobody is stuck *now*.
    assert view.stuck(view.standings(COUNTED), StuckRule(), later + timedelta(hours=1)) == []


def test_the_latest_failure_is_the_newest_wrong_answer_or_failing_program(store: Store) -> None:
    _seed(store)
    view = ClassView(store.database)
    latest = view.latest_failure(CY, "L9.1", "area")
    assert latest is not None and getattr(latest, "answer", None) == "[3, 2]"
    program = view.latest_failure(ANN, "L9.1", "shapes")
    assert program is not None and getattr(program, "status", None) == "fail"
    assert view.latest_failure(BEN, "L9.1", "area") is None


def test_exercise_counts_first_try_and_median(store: Store) -> None:
    _seed(store)
    counts = ClassView(store.database).exercise_counts()
    area = counts[("L9.1", "area")]
    assert (area.started, area.solved, area.solved_first_try, area.solvers_counted) == (3, 2, 1, 2)
    assert area.median_attempts == 1.5 and area.first_try_share == 0.5
    assert area.attempts == 6  # Ann 2, Ben 1, Cy 3
    shapes = counts[("L9.1", "shapes")]
    assert (shapes.solved, shapes.median_attempts, shapes.first_try_share) == (1, 2.0, 0.0)
    mean = counts[("L9.2", "mean")]
    assert (mean.started, mean.solved, mean.median_attempts, mean.first_try_share) == (1, 0, None, None)


def test_wrong_answers_are_grouped_in_the_database(store: Store) -> None:
    _seed(store)
    _answer(store, BEN, "area", "4", False)
    groups = ClassView(store.database).wrong_answers("L9.1")
    first = groups[0]
    assert (first.answer, first.count, first.learners, first.mistake) == ("4", 2, 2, None)
    assert ("14", "perimeter") in {(g.answer, g.mistake) for g in groups}
    assert all(g.exercise_id == "area" for g in groups)  # unreadable answers are no wrong answers


def test_a_learners_events_come_a_page_at_a_time(store: Store) -> None:
    _seed(store)
    view = ClassView(store.database)
    first = view.learner_events(ANN, offset=0, limit=3)
    second = view.learner_events(ANN, offset=3, limit=3)
    assert first.total == second.total == 5
    assert [kind for kind, _ in first.order] == ["answer", "answer", "program"]
    assert [kind for kind, _ in second.order] == ["program", "answer"]
    assert [a.answer for a in second.answers] == ["B"]
    one = view.learner_events(ANN, lesson_id="L9.1", exercise_id="shapes")
    assert one.total == 2 and [p.status for p in one.programs] == ["fail", "pass"]
    with pytest.raises(ValueError, match="1 to 500 events, not 0"):
        view.learner_events(ANN, limit=0)
    with pytest.raises(ValueError, match="at least 0, not -1"):
        view.learner_events(ANN, offset=-1)


def test_only_active_learners_are_read_for_the_stuck_list(store: Store) -> None:
    _seed(store)
    view = ClassView(store.database)
    now = utc_now()
    assert {s.id for s in view.active(now - timedelta(minutes=15))} == {ANN, BEN, CY}
    assert view.active(now + timedelta(minutes=1)) == []
    active = {s.id: s for s in view.active(now - timedelta(minutes=15))}
    assert active[ANN].name == "Ann" and active[CY].current is not None
    assert [s.id for s in view.stuck(list(active.values()), StuckRule(attempts=3), now)] == [CY]


def test_two_exercises_touched_at_once_give_one_current_exercise(store: Store) -> None:
    _seed(store)
    moment = utc_now()
    with store.database.write() as conn:
        conn.execute(
            update(ExerciseTotals.__table__)
            .where(ExerciseTotals.__table__.c.learner_id == ANN)
            .values(last_activity_at=moment)
        )
    ann = next(s for s in ClassView(store.database).standings(COUNTED) if s.id == ANN)
    assert ann.current is not None and (ann.current.lesson_id, ann.current.exercise_id) == ("L9.1", "area")


def test_totals_saved_before_the_class_view_are_read_without_their_new_columns(database_url: str) -> None:
    from sqlalchemy import text

    from qkv.store import LATEST_VERSION, create_store_engine, upgrade
    from qkv.store.sql.migration_steps import class_glance_aggregates
    from qkv.store.sql.migrations import MIGRATIONS

    before = MIGRATIONS.index(class_glance_aggregates)  # the schema just before the class view's migration
    engine = create_store_engine(database_url)
    upgrade(engine, target=before)
    written = utc_now() - timedelta(minutes=5)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO learners (id, created_at) VALUES (:id, :t)"), {"id": ANN, "t": written}
        )
        conn.execute(
            text(
                "INSERT INTO exercise_totals (learner_id, lesson_id, exercise_id, attempts, submissions, solved,"
                " first_solved_at, last_activity_at, failed_runs) VALUES (:l, 'L9.1', 'area', 2, 2, :s, :t, :t, 0)"
            ),
            {"l": ANN, "s": True, "t": written},
        )
    assert upgrade(engine)[1] == LATEST_VERSION
    engine.dispose()
    store = Store(database_url)
    view = ClassView(store.database)
    area = view.exercise_counts()[("L9.1", "area")]
    assert (area.started, area.solved, area.solvers_counted, area.median_attempts) == (1, 1, 0, None)
    (ann,) = view.standings(COUNTED)
    assert ann.current is not None and ann.current.started_at == ann.current.last_activity_at
    store.progress.record_answer(ANN, "L9.1", "area", "12", correct=True, message="m")
    assert view.exercise_counts()[("L9.1", "area")].solvers_counted == 0  # solved before: still unknown
    store.close()
