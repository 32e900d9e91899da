"""Courses in the store: LMS contexts and hand-made courses, members and staff, views limited to one
course, line items per course, and the upgrade of a database written before courses (SQLite and
PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import text

from qkv.store import (
    CourseOrigin,
    LearnerScope,
    MembershipSource,
    StaffRole,
    Store,
    create_store_engine,
    upgrade,
)
from qkv.store.lti.links import LtiLinks
from qkv.store.lti.outbox import ScoreOutbox
from qkv.store.sql.migrations import MIGRATIONS

ADA, BEN, CLAIRE = "a" * 36, "b" * 36, "c" * 36


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store(database_url)
    yield opened
    opened.close()


def test_an_lms_context_is_one_course_per_platform_deployment_and_context(store: Store) -> None:
    courses = store.courses
    first = courses.for_lti_context("https://lms.one", "d1", "ctx-1", "Attention")
    assert first.origin is CourseOrigin.LTI
    assert courses.for_lti_context("https://lms.one", "d1", "ctx-1", "Attention, spring").id == first.id
    assert courses.get(first.id).title == "Attention, spring"  # type: ignore[union-attr]
    others = {
        courses.for_lti_context("https://lms.two", "d1", "ctx-1", "Same id, other LMS").id,
        courses.for_lti_context("https://lms.one", "d2", "ctx-1", "Same id, other deployment").id,
        courses.for_lti_context("https://lms.one", "d1", "ctx-2", "Other context").id,
    }
    assert first.id not in others and len(others) == 3
    manual = courses.create("By hand")
    assert manual.origin is CourseOrigin.MANUAL and manual.issuer is None
    assert len(courses.all()) == 5


def test_a_course_title_is_checked(store: Store) -> None:
    with pytest.raises(ValueError, match="cannot be empty"):
        store.courses.create("   ")
    with pytest.raises(ValueError, match="at most 255 characters, but this one has 300"):
        store.courses.create("x" * 300)


def test_views_within_a_course_read_only_its_learners(store: Store) -> None:
    one, two = store.courses.create("One"), store.courses.create("Two")
    for learner, course in ((ADA, one), (BEN, two), (CLAIRE, one), (CLAIRE, two)):
        store.progress.record_answer(learner, "L9.1", "q", "1", correct=learner != BEN, message="m")
        store.courses.enrol(course.id, learner, MembershipSource.ROSTER)
    scope = LearnerScope(one.id)
    assert {r.id for r in store.instructors.within(scope).learners()} == {ADA, CLAIRE}
    assert store.instructors.within(scope).learner(BEN) is None
    assert store.instructors.learner(BEN) is not None  # the whole server's view still has him
    assert {e.learner_id for e in store.instructors.within(scope).answer_events()} == {ADA, CLAIRE}
    view = store.class_view.within(scope)
    assert {s.id for s in view.standings({"L9.1": ["q"]})} == {ADA, CLAIRE}
    assert view.learner_count() == 2
    assert view.exercise_counts()[("L9.1", "q")].started == 2
    assert view.learner_events(BEN).total == 0  # another course's learner: nothing
    assert store.class_view.within(LearnerScope(two.id)).wrong_answers("L9.1")[0].learners == 1
    assert {row.learner_id for row in store.gradebook.within(scope).rows()} == {ADA, CLAIRE}
    # A learner's progress is one per person: Claire's answer counts in both of her courses.
    assert store.class_view.within(LearnerScope(two.id)).exercise_counts()[("L9.1", "q")].solved == 1


def test_staff_roles_and_administrators(store: Store) -> None:
    grace = store.instructors.add("Grace")[0]
    alan = store.instructors.add("Alan")[0]
    course = store.courses.create("One")
    store.courses.set_staff(course.id, grace.id, StaffRole.INSTRUCTOR)
    store.courses.set_staff(course.id, alan.id, StaffRole.TEACHING_ASSISTANT)
    assert store.courses.access(grace.id).role_in(course.id) is StaffRole.INSTRUCTOR
    assert store.courses.access(alan.id).role_in(course.id) is StaffRole.TEACHING_ASSISTANT
    store.courses.set_staff(course.id, alan.id, StaffRole.INSTRUCTOR)  # a role replaces the one before
    assert store.courses.access(alan.id).roles == {course.id: StaffRole.INSTRUCTOR}
    assert store.courses.access(grace.id).role_in("another") is None
    store.courses.grant_all_courses(grace.id)
    assert store.courses.access(grace.id).role_in("another") is StaffRole.INSTRUCTOR
    assert store.instructors.find("Grace").all_courses  # type: ignore[union-attr]
    assert store.instructors.remove("Alan")  # their course roles go with them


def test_a_learner_has_a_line_item_per_course_and_each_gets_the_score(store: Store) -> None:
    links, outbox = LtiLinks(store.database), ScoreOutbox(store.database)
    for course in ("course-a", "course-b"):
        links.remember_line_item(ADA, "L9.1", "https://lms", "c", "s1", f"https://lms/{course}/li", course)
    for item in links.line_items(ADA, "L9.1"):
        assert outbox.enqueue(item, 1, {"scoreGiven": 1})
    waiting = outbox.waiting()
    assert sorted((e.course_id, e.lineitem_url) for e in waiting) == [
        ("course-a", "https://lms/course-a/li"),
        ("course-b", "https://lms/course-b/li"),
    ]


# -- the upgrade of a database written before courses -----------------------------------------------

WRITTEN = datetime(2026, 11, 20, 9, 0, 0)
# Today's main: every migration before the one that brought courses (found by name, so that migrations
# ordered before or after it at a merge leave this test right).
BEFORE_COURSES = [step.__name__ for step in MIGRATIONS].index("courses_and_their_people")


def _write_database_before_courses(url: str) -> None:
    """What today's main leaves behind: its migrations only, then rows written with plain SQL."""
    engine = create_store_engine(url)
    assert upgrade(engine, target=BEFORE_COURSES) == (0, BEFORE_COURSES)
    rows: dict[str, list[dict[str, Any]]] = {
        "learners": [
            {
                "id": ADA,
                "display_name": "Ada",
                "created_at": WRITTEN,
                "issuer": "https://lms",
                "external_id": "u1",
            },
            {"id": BEN, "display_name": "Ben", "created_at": WRITTEN, "issuer": None, "external_id": None},
        ],
        "instructors": [{"id": "i" * 36, "name": "Grace", "created_at": WRITTEN}],
        "lti_contexts": [
            {
                "issuer": "https://lms",
                "client_id": "c",
                "context_id": "ctx",
                "title": "Attention",
                "memberships_url": None,
                "updated_at": WRITTEN,
            }
        ],
        "lti_line_items": [
            {
                "learner_id": ADA,
                "lesson_id": "L9.1",
                "issuer": "https://lms",
                "client_id": "c",
                "subject": "u1",
                "lineitem_url": "https://lms/li/1",
                "last_score": 2,
                "updated_at": WRITTEN,
            }
        ],
        "lti_score_outbox": [
            {
                "learner_id": ADA,
                "lesson_id": "L9.1",
                "issuer": "https://lms",
                "client_id": "c",
                "lineitem_url": "https://lms/li/1",
                "score_json": json.dumps({"scoreGiven": 2}),
                "created_at": WRITTEN,
                "attempts": 0,
                "next_attempt_at": WRITTEN,
            }
        ],
    }
    with engine.begin() as conn:
        for table, values in rows.items():
            for row in values:
                names = ", ".join(row)
                conn.execute(
                    text(f"INSERT INTO {table} ({names}) VALUES ({', '.join(':' + k for k in row)})"), row
                )
        conn.execute(
            text(
                "INSERT INTO answers (learner_id, lesson_id, exercise_id, answer, correct, message, created_at)"
                " VALUES (:l, 'L9.1', 'q', '3', TRUE, 'Right.', :t)"
            ),
            {"l": BEN, "t": WRITTEN},
        )
    engine.dispose()


def test_a_database_from_before_courses_upgrades_into_one_default_course(database_url: str) -> None:
    _write_database_before_courses(database_url)
    store = Store(database_url)
    try:
        (course,) = store.courses.all()
        assert course.origin is CourseOrigin.MIGRATED
        # Every learner, the instructor and every LMS row are in the one course; nothing is lost.
        scope = LearnerScope(course.id)
        assert {r.id for r in store.instructors.within(scope).learners()} == {ADA, BEN}
        assert [e.answer for e in store.instructors.within(scope).answer_events()] == ["3"]
        grace = store.instructors.find("Grace")
        assert grace is not None and not grace.all_courses
        assert store.courses.access(grace.id).roles == {course.id: StaffRole.INSTRUCTOR}
        links = LtiLinks(store.database)
        item = links.line_item(ADA, "L9.1", course.id)
        assert item is not None and (item.lineitem_url, item.last_score) == ("https://lms/li/1", 2)
        assert [c.course_id for c in links.contexts()] == [course.id]
        (waiting,) = ScoreOutbox(store.database).waiting()
        assert (waiting.course_id, waiting.document) == (course.id, {"scoreGiven": 2})
        # And the upgraded database takes the new writes: a second course's line item beside the first.
        links.remember_line_item(ADA, "L9.1", "https://lms", "c", "u1", "https://lms/li/2", "other")
        assert len(links.line_items(ADA, "L9.1")) == 2
        # A launch from the old class now has a course of its own: its line item moves there (one score,
        # not two, for one line item).
        links.remember_line_item(ADA, "L9.1", "https://lms", "c", "u1", "https://lms/li/1", "its-course")
        assert sorted(i.course_id for i in links.line_items(ADA, "L9.1")) == ["its-course", "other"]
    finally:
        store.close()


def test_an_empty_database_gets_no_course(database_url: str) -> None:
    store = Store(database_url)
    try:
        assert not store.courses.any()
    finally:
        store.close()
