"""Migration 3 and the instructor's store: named mistakes kept with answers, accounts, links, sessions."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from sqlalchemy import inspect, text

from qkv.store import LATEST_VERSION, Store, create_store_engine, schema_version, upgrade
from qkv.store.instructor.instructors import clean_instructor_name

LEARNER = "d" * 36


def _write_version_2_database(url: str) -> None:
    """What qkv left behind before answers kept their mistake id: schema 2 with a learner's work."""
    engine = create_store_engine(url)
    assert upgrade(engine, target=2) == (0, 2)
    written = datetime(2026, 11, 20, 9, 30, 0)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO learners (id, display_name, created_at, last_seen_at) VALUES (:id, 'Ada', :t, :t)"
            ),
            {"id": LEARNER, "t": written},
        )
        for answer, correct, counted in (("x", False, False), ("3, 1", False, True), ("3, 2", True, True)):
            conn.execute(
                text(
                    "INSERT INTO answers (learner_id, lesson_id, exercise_id, variant_seed, answer, correct,"
                    " message, counted_as_attempt, created_at)"
                    " VALUES (:l, 'L9.1', 'q', NULL, :a, :c, 'saved by v2', :n, :t)"
                ),
                {"l": LEARNER, "a": answer, "c": correct, "n": counted, "t": written},
            )
        conn.execute(text("INSERT INTO server_secrets (name, value) VALUES ('cookie-signing', 'old-key')"))
    engine.dispose()


def test_a_version_2_database_is_migrated_in_place(database_url: str) -> None:
    _write_version_2_database(database_url)
    store = Store(database_url)
    try:
        with store.database.engine.connect() as conn:
            assert schema_version(conn) == LATEST_VERSION
            tables = set(inspect(conn).get_table_names())
        assert {"instructors", "instructor_sign_in_tokens", "instructor_sessions"} <= tables
        desk = store.instructors
        old = desk.answer_events(LEARNER)
        assert [(e.answer, e.correct, e.counted_as_attempt, e.mistake) for e in old] == [
            ("x", False, False, None),
            ("3, 1", False, True, None),
            ("3, 2", True, True, None),
        ]
        assert store.progress.lesson_activity(LEARNER, "L9.1").exercises["q"].attempts == 2
        assert store.shared_secret("cookie-signing") == "old-key"  # the servers' key survives
        store.progress.record_answer(
            LEARNER, "L9.1", "q", "2, 3", correct=False, message="Swapped.", mistake="q_swapped"
        )
        assert desk.answer_events(LEARNER)[-1].mistake == "q_swapped"
        record, token = desk.add("Grace")
        assert desk.instructor_for_session(desk.redeem(token)) == record
    finally:
        store.close()


def test_a_mistake_id_is_at_most_64_characters(sqlite_url: str) -> None:
    store = Store(sqlite_url)
    try:
        with pytest.raises(ValueError, match="at most 64 characters"):
            store.progress.record_answer(
                LEARNER, "L9.1", "q", "1", correct=False, message="No.", mistake="m" * 65
            )
    finally:
        store.close()


def test_instructor_names_are_checked_and_unique(sqlite_url: str) -> None:
    store = Store(sqlite_url)
    desk = store.instructors
    try:
        desk.add("  Grace   Hopper ")
        assert [r.name for r in desk.all()] == ["Grace Hopper"]
        with pytest.raises(ValueError, match="already exists"):
            desk.add("Grace Hopper")
        for bad, message in (
            ("", "cannot be empty"),
            ("x" * 81, "at most 80"),
            ("a\x07b", "control characters"),
        ):
            with pytest.raises(ValueError, match=message):
                clean_instructor_name(bad)
        with pytest.raises(ValueError, match="no instructor named 'Nobody'"):
            desk.new_sign_in_token("Nobody")
    finally:
        store.close()


def test_tokens_and_sessions_are_stored_only_as_hashes(sqlite_url: str) -> None:
    store = Store(sqlite_url)
    desk = store.instructors
    try:
        _, token = desk.add("Grace")
        session = desk.redeem(token)
        assert session
        with store.database.engine.connect() as conn:
            stored = [
                *conn.execute(text("SELECT token_hash FROM instructor_sign_in_tokens")).scalars(),
                *conn.execute(text("SELECT session_hash FROM instructor_sessions")).scalars(),
            ]
        assert len(stored) == 2
        assert token not in stored and session not in stored
        assert all(len(value) == 64 for value in stored)
    finally:
        store.close()


def test_expired_links_and_sessions_do_not_work(database_url: str) -> None:
    store = Store(database_url)
    desk = store.instructors
    try:
        desk.add("Grace")
        assert desk.redeem(desk.new_sign_in_token("Grace", lifetime=timedelta(seconds=-1))) is None
        session = desk.redeem(desk.new_sign_in_token("Grace"), lifetime=timedelta(seconds=-1))
        assert session is not None and desk.instructor_for_session(session) is None
        live = desk.redeem(desk.new_sign_in_token("Grace"))
        assert desk.instructor_for_session(live) is not None
        desk.end_session(live or "")
        assert desk.instructor_for_session(live) is None
    finally:
        store.close()


def test_a_link_redeemed_at_once_by_several_servers_opens_one_session(database_url: str) -> None:
    stores = [Store(database_url) for _ in range(4)]
    try:
        _, token = stores[0].instructors.add("Grace")
        sessions: list[str | None] = []
        lock = threading.Lock()

        def redeem(store: Store) -> None:
            found = store.instructors.redeem(token)
            with lock:
                sessions.append(found)

        threads = [threading.Thread(target=redeem, args=(store,)) for store in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(sessions) == 4
        assert sum(session is not None for session in sessions) == 1
    finally:
        for store in stores:
            store.close()
