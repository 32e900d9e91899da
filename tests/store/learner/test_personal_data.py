"""A learner's data on request: export everything, erase everything, prune inactive anonymous learners.

Run on SQLite and PostgreSQL. The schema decides what belongs to a learner: every table with a
``learner_id`` column is filled here by a generic row maker (so a table another branch adds is covered
without an edit), and after an erasure no column of any table but the audit holds the learner's id.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import (
    BigInteger,
    Boolean,
    Connection,
    Date,
    DateTime,
    Integer,
    String,
    Table,
    Text,
    insert,
    select,
    update,
)

from qkv.store import LearnerErased, Store
from qkv.store.learner.personal_data import EXPORT_FORMAT, RELATED, learner_tables
from qkv.store.sql.clock import utc_now
from qkv.store.sql.tables import Base, LearnerRow

ADA, BEA = "a" * 36, "b" * 36
_COUNTER = itertools.count(1)
_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store(database_url)
    yield opened
    opened.close()


def _value(column: Any) -> Any:
    """A plain value of the column's type, unique where it may be a key."""
    kind, n = column.type, next(_COUNTER)
    if isinstance(kind, Boolean):
        return False
    if isinstance(kind, DateTime):
        return utc_now()
    if isinstance(kind, Date):
        return date.today()
    if isinstance(kind, Integer | BigInteger):
        return n
    if isinstance(kind, String | Text):
        text = f"v{n}-{uuid.uuid4().hex}"
        return text[: kind.length] if isinstance(kind, String) and kind.length else text
    raise AssertionError(f"no test value for {column.table.name}.{column.name} of type {kind!r}")


def _generated(column: Any) -> bool:
    """An integer primary key of its own: the database numbers it."""
    table = column.table
    return column.primary_key and len(table.primary_key.columns) == 1 and isinstance(column.type, Integer)


def fill(conn: Connection, table: Table, fixed: dict[str, Any]) -> dict[str, Any]:
    """Insert one row of ``table``; a foreign key to another table gets a row made there first."""
    row = dict(fixed)
    for column in table.c:
        if column.name in row or _generated(column):
            continue
        target = next(iter(column.foreign_keys), None)
        if target is not None:
            row[column.name] = fill(conn, target.column.table, {})[target.column.name]
        else:
            row[column.name] = _value(column)
    conn.execute(insert(table).values(**row))
    return row


def every_learner_table() -> list[Table]:
    return [
        table for table in Base.metadata.sorted_tables if "learner_id" in table.c or table.name in RELATED
    ]


def seed_everything(store: Store, learner_id: str) -> None:
    """Real work through the repositories, then one generic row in every learner table."""
    store.progress.record_answer(learner_id, "L9.1", "area", "11", correct=False, message="No.")
    store.progress.record_answer(learner_id, "L9.1", "area", "12", correct=True, message="Yes.")
    store.code.record(learner_id, "L9.1", "code", "def f(): return 1", {"status": "pass", "tests": []})
    store.code.save_draft(learner_id, "L9.1", "code", "def f(): return 2")
    store.progress.set_variant_seed(learner_id, "L9.1", 7)
    with store.database.write() as conn:
        for table in every_learner_table():
            if table.name != "learners":
                fill(conn, table, {"learner_id": learner_id})


def rows_naming(store: Store, learner_id: str) -> dict[str, int]:
    """Per table (the audit aside), how many rows hold ``learner_id`` in any text column."""
    found: dict[str, int] = {}
    with store.database.read() as conn:
        for table in Base.metadata.sorted_tables:
            if table.name == "privacy_audit":
                continue
            for column in table.c:
                if isinstance(column.type, String | Text):
                    count = len(conn.execute(select(table).where(column == learner_id)).all())
                    if count:
                        found[table.name] = found.get(table.name, 0) + count
    return found


def test_every_table_with_a_learner_column_is_covered() -> None:
    covered = {table.name for table, _ in learner_tables()}
    assert covered == {table.name for table in every_learner_table()}
    for expected in ("answers", "code_submissions", "code_sources", "code_drafts", "lesson_state"):
        assert expected in covered
    for expected in ("exercise_totals", "learner_sessions", "learner_sign_in_tokens", "lti_line_items"):
        assert expected in covered
    assert {"lti_score_outbox", "grading_jobs", "learners"} <= covered
    assert [table.name for table, _ in learner_tables()][-1] == "learners"  # deleted last
    # A table pointing at a learner under another column's name would be missed: name it in RELATED.
    pointing = {
        (table.name, key.parent.name)
        for table in Base.metadata.sorted_tables
        for key in table.foreign_keys
        if key.column.table.name == "learners"
    }
    assert {(name, column) for name, column in pointing if column != "learner_id"} == set()


def test_the_export_holds_every_row_about_the_learner_and_nothing_of_others(store: Store) -> None:
    seed_everything(store, ADA)
    seed_everything(store, BEA)
    document = store.personal_data.export(ADA)
    assert document is not None and document["format"] == EXPORT_FORMAT and document["learner_id"] == ADA
    tables = document["tables"]
    assert set(tables) == {table.name for table in every_learner_table()}
    for name, rows in tables.items():
        assert rows, f"the export has no row of {name}"
        column = RELATED.get(name, "learner_id")
        assert {row[column] for row in rows} == {ADA}, name
    assert [row["answer"] for row in tables["answers"]][:2] == ["11", "12"]
    assert "def f(): return 2" in {row["source"] for row in tables["code_drafts"]}
    assert tables["learners"][0]["created_at"].startswith(str(utc_now().year))  # ISO 8601 text
    expected = {name: count for name, count in rows_naming(store, ADA).items()}
    assert {name: len(rows) for name, rows in tables.items() if name in expected} == expected
    assert [line["action"] for line in store.personal_data.audit(ADA)] == ["export"]


def test_erasing_removes_every_row_keeps_the_class_consistent_and_leaves_an_audit_line(store: Store) -> None:
    seed_everything(store, ADA)
    seed_everything(store, BEA)
    bea_before = store.progress.lesson_activity(BEA, "L9.1").exercises["area"]
    assert store.class_view.exercise_counts()[("L9.1", "area")].started == 2

    erasure = store.personal_data.erase(ADA)

    assert erasure.found and erasure.removed["answers"] >= 2 and erasure.removed["learners"] == 1
    assert rows_naming(store, ADA) == {}  # nothing anywhere names the learner any more
    assert store.personal_data.export(ADA) is None
    assert rows_naming(store, BEA) != {}
    counts = store.class_view.exercise_counts()[("L9.1", "area")]
    assert (counts.started, counts.solved) == (1, 1)  # as if Ada had never worked
    assert store.class_view.learner_count() == 1
    assert {row.learner_id for row in store.gradebook.rows()} == {BEA}
    assert store.progress.lesson_activity(BEA, "L9.1").exercises["area"] == bea_before
    lines = store.personal_data.audit(ADA)
    assert [line["action"] for line in lines] == ["erase"]
    assert "answers" in lines[0]["detail"] and "on request" in lines[0]["detail"]
    assert store.personal_data.erase(ADA).found is False  # a second erasure finds nothing, notes nothing
    assert len(store.personal_data.audit(ADA)) == 1


def test_nothing_is_saved_under_an_erased_id_again(store: Store) -> None:
    """A program graded while its learner was erased, or a browser still holding the old cookie, finds the
    id closed: the write is refused as a whole and no row names the learner again; others save as before."""
    seed_everything(store, ADA)
    store.personal_data.erase(ADA)

    with pytest.raises(LearnerErased, match=f"The learner {ADA} was erased on request"):
        store.progress.record_answer(ADA, "L9.1", "area", "12", correct=True, message="Right.")
    with pytest.raises(LearnerErased):
        store.code.record(ADA, "L9.1", "shapes", "x = 1\n", {"status": "pass", "tests": []})
    assert rows_naming(store, ADA) == {}
    store.progress.record_answer(BEA, "L9.1", "area", "12", correct=True, message="Right.")
    assert store.progress.lesson_activity(BEA, "L9.1").exercises["area"].solved


def test_an_account_is_erased_with_its_sessions_links_and_lms_scores(store: Store) -> None:
    ada = store.accounts.find_or_create(None, "s-1", "Ada")
    store.accounts.new_sign_in_token(ada)
    session = store.accounts.open_session(ada)
    store.progress.record_answer(ada, "L9.1", "area", "12", correct=True, message="Yes.")
    assert store.accounts.learner_for_session(session) == ada
    store.personal_data.erase(ada)
    assert store.accounts.learner_for_session(session) is None
    assert store.accounts.find(None, "s-1") is None
    assert "s-1" not in str(store.personal_data.audit())  # the audit keeps no external id


def _age(store: Store, learner_id: str, days: int) -> None:
    with store.database.write() as conn:
        when = utc_now() - timedelta(days=days)
        conn.execute(update(_LEARNERS).where(_LEARNERS.c.id == learner_id).values(last_seen_at=when))


def test_retention_prunes_only_anonymous_learners_inactive_that_long(store: Store) -> None:
    old, recent = "c" * 36, "d" * 36
    for learner_id in (old, recent):
        seed_everything(store, learner_id)
    account = store.accounts.find_or_create(None, "s-2", "Cy")
    store.progress.record_answer(account, "L9.1", "area", "12", correct=True, message="Yes.")
    _age(store, old, 40)
    _age(store, recent, 10)
    _age(store, account, 400)

    assert store.personal_data.inactive_anonymous(30) == [old]
    assert store.personal_data.prune_anonymous(30) == 1

    assert rows_naming(store, old) == {}
    assert rows_naming(store, recent) != {} and rows_naming(store, account) != {}
    (line,) = store.personal_data.audit("")
    assert line["action"] == "retention" and "1 anonymous learners inactive for 30 days" in line["detail"]
    assert store.personal_data.prune_anonymous(30) == 0
    with pytest.raises(ValueError, match="at least 1, not 0"):
        store.personal_data.prune_anonymous(0)
