"""Learner accounts on SQLite and PostgreSQL: identities, roster imports, links, sessions and merging."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, text

from qkv.store import Store
from qkv.store.learner.accounts import DEVICE_LINK_LIFETIME, ROSTER_LINK_LIFETIME
from qkv.store.learner.roster import RosterEntry, parse_roster
from qkv.store.sql.tables import LearnerRow

ANON = "b" * 8 + "-0000-4000-8000-" + "0" * 12


@pytest.fixture
def store(database_url: str) -> Store:
    opened = Store(database_url)
    yield opened  # type: ignore[misc]
    opened.close()


def test_one_identity_is_one_learner_and_keeps_the_latest_name(store: Store) -> None:
    accounts = store.accounts
    ada = accounts.find_or_create(None, "s-1001", "Ada", "ada@example.org")
    assert accounts.find_or_create(None, "s-1001") == ada
    assert accounts.find_or_create(None, "s-1001", display_name="Ada Lovelace") == ada
    record = accounts.get(ada)
    assert record is not None
    assert (record.issuer, record.external_id, record.display_name, record.email) == (
        None,
        "s-1001",
        "Ada Lovelace",
        "ada@example.org",
    )
    lms = accounts.find_or_create("https://lms.example", "s-1001", "Ada on the LMS")
    assert lms != ada  # the same id at another issuer is another identity
    assert accounts.find("https://lms.example", "s-1001").learner_id == lms  # type: ignore[union-attr]
    assert [r.learner_id for r in accounts.all()] == [ada, lms]
    assert accounts.get(ANON) is None


def test_an_account_is_a_learner_so_its_work_is_the_learners(store: Store) -> None:
    ada = store.accounts.find_or_create(None, "s-1", "Ada")
    store.progress.record_answer(ada, "L9.1", "area", "12", correct=True, message="Right.")
    assert store.progress.lesson_activity(ada, "L9.1").exercises["area"].solved
    assert [row.display_name for row in store.gradebook.rows()] == ["Ada"]


def test_two_servers_on_one_database_find_the_same_account(database_url: str) -> None:
    first, second = Store(database_url), Store(database_url)
    try:
        made = first.accounts.find_or_create("https://lms.example", "sub-9", "Grace")
        assert second.accounts.find_or_create("https://lms.example", "sub-9") == made
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize(
    ("issuer", "external_id", "email", "message"),
    [
        (None, "  ", None, "An external id cannot be empty."),
        (None, "x" * 256, None, "An external id may have at most 255 characters"),
        ("", "s-1", None, "An issuer cannot be empty."),
        (None, "s\x07", None, "contains control characters"),
        (None, "s-1", "a\x01@b", "An email address 'a\\x01@b' contains control characters."),
    ],
)
def test_bad_identities_are_refused_with_a_sentence(
    store: Store, issuer: str | None, external_id: str, email: str | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("\\x", "\\\\x")):
        store.accounts.find_or_create(issuer, external_id, "Ada", email)
    assert store.accounts.all() == []


def test_a_long_lms_name_is_shortened_not_refused(store: Store) -> None:
    learner = store.accounts.find_or_create("https://lms.example", "sub-1", "N" * 120)
    name = store.accounts.get(learner).display_name  # type: ignore[union-attr]
    assert name is not None and len(name) == 80 and name.endswith("…")


def test_a_roster_import_makes_accounts_and_one_time_links(store: Store) -> None:
    made = store.accounts.import_roster(
        parse_roster("name,external id,email\nAda,s-1,ada@x.org\nGrace,s-2,\n")
    )
    assert [(record.display_name, record.external_id, record.email) for record, _ in made] == [
        ("Ada", "s-1", "ada@x.org"),
        ("Grace", "s-2", None),
    ]
    (ada, token), _ = made
    assert store.accounts.redeem(token) == ada.learner_id
    assert store.accounts.redeem(token) is None  # one use
    again = store.accounts.import_roster(parse_roster("name,external id\nAda Lovelace,s-1\n"))
    assert again[0][0].learner_id == ada.learner_id  # importing again updates, and gives a new link
    assert again[0][0].display_name == "Ada Lovelace"


def test_a_failing_import_leaves_nothing_half_imported(store: Store) -> None:
    entries = [
        RosterEntry(2, "Ada", "s-1"),
        RosterEntry(3, "Grace", "x" * 300),
    ]  # the second fails in the store
    with pytest.raises(ValueError, match="at most 255 characters"):
        store.accounts.import_roster(entries)
    assert store.accounts.all() == []


def test_links_are_hashed_at_rest_expire_and_belong_to_accounts_only(store: Store) -> None:
    ada = store.accounts.find_or_create(None, "s-1")
    token = store.accounts.new_sign_in_token(ada)
    with store.database.read() as conn:
        stored = " ".join(
            str(value) for row in conn.execute(text("SELECT * FROM learner_sign_in_tokens")) for value in row
        )
    assert token not in stored
    expired = store.accounts.new_sign_in_token(ada, lifetime=timedelta(seconds=-1))
    assert store.accounts.redeem(expired) is None
    assert store.accounts.redeem("x" * 500) is None
    assert timedelta(days=7) == ROSTER_LINK_LIFETIME and timedelta(hours=1) > DEVICE_LINK_LIFETIME
    store.progress.record_answer(ANON, "L9.1", "area", "1", correct=False, message="No.")
    with pytest.raises(ValueError, match="has no account"):
        store.accounts.new_sign_in_token(ANON)


def test_sessions_work_across_servers_and_signing_out_ends_them_everywhere(database_url: str) -> None:
    first, second = Store(database_url), Store(database_url)
    try:
        ada = first.accounts.find_or_create(None, "s-1")
        session = first.accounts.open_session(ada)
        assert second.accounts.learner_for_session(session) == ada
        with first.database.read() as conn:
            stored = conn.execute(text("SELECT session_hash FROM learner_sessions")).scalars().all()
        assert session not in stored
        second.accounts.end_session(session)
        assert first.accounts.learner_for_session(session) is None
        expired = first.accounts.open_session(ada, lifetime=timedelta(seconds=-1))
        assert first.accounts.learner_for_session(expired) is None
        first.accounts.open_session(ada)  # deletes the expired one on the way
        with first.database.read() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM learner_sessions")).scalar() == 1
        other = first.accounts.open_session(ada)
        first.accounts.end_all_sessions(ada)
        assert second.accounts.learner_for_session(other) is None
    finally:
        first.close()
        second.close()


def _tests(passed: int, total: int) -> dict[str, object]:
    return {
        "status": "pass" if passed == total else "fail",
        "tests": [{"status": "pass"}] * passed + [{"status": "fail"}] * (total - passed),
    }


def test_merging_keeps_every_attempt_and_the_better_result(store: Store) -> None:
    ada = store.accounts.find_or_create(None, "s-1", "Ada")
    # On the account (another device): two wrong answers, a program passing 1 of 3, a draft, a variant.
    store.progress.record_answer(ada, "L9.1", "area", "10", correct=False, message="No.")
    store.progress.record_answer(ada, "L9.1", "area", "11", correct=False, message="No.")
    store.code.record(ada, "L9.1", "code", "def f(): return 1\n", _tests(1, 3))
    store.code.save_draft(ada, "L9.1", "other", "account draft")
    store.progress.set_variant_seed(ada, "L9.1", 5)
    # In this browser, anonymously: the right answer, a program passing 2 of 3, another exercise, a name.
    store.progress.record_answer(ANON, "L9.1", "area", "12", correct=True, message="Yes.")
    store.code.record(ANON, "L9.1", "code", "def f(): return 2\n", _tests(2, 3))
    store.progress.record_answer(ANON, "L9.2", "dot", "3", correct=True, message="Yes.")
    store.code.save_draft(ANON, "L9.1", "other", "newer anonymous draft")
    store.progress.set_variant_seed(ANON, "L9.1", 9)
    store.progress.set_variant_seed(ANON, "L9.2", 4)
    store.learners.set_display_name(ANON, "Someone")

    report = store.accounts.merge(ANON, into=ada)

    assert (report.answers, report.programs, report.exercises) == (2, 1, 3)
    area = store.progress.lesson_activity(ada, "L9.1").exercises["area"]
    assert (area.attempts, area.solved) == (3, True)  # every attempt; the better result
    code = store.progress.lesson_activity(ada, "L9.1").exercises["code"]
    assert code.attempts == 2 and code.failed_runs == 2
    assert [r.best_score for r in store.gradebook.rows() if r.exercise_id == "code"] == ["2/3"]
    assert store.progress.lesson_activity(ada, "L9.2").exercises["dot"].solved
    assert store.progress.lesson_activity(ada, "L9.1").drafts["other"] == "newer anonymous draft"
    assert store.progress.variant_seed(ada, "L9.1") == 5  # the account's own variant stays
    assert store.progress.variant_seed(ada, "L9.2") == 4
    assert len(store.instructors.answer_events(ada)) == 4
    assert {e.source for e in store.instructors.code_events(ada)} == {
        "def f(): return 1\n",
        "def f(): return 2\n",
    }
    assert store.learners.display_name(ada) == "Ada"  # the account's name is kept
    with store.database.read() as conn:
        assert (
            conn.execute(select(LearnerRow.__table__).where(LearnerRow.__table__.c.id == ANON)).first()
            is None
        )
    assert store.accounts.merge(ANON, into=ada).nothing  # nothing left to merge


def test_the_same_program_text_on_both_sides_is_stored_once(store: Store) -> None:
    ada = store.accounts.find_or_create(None, "s-1")
    program = "def f(): return 3\n"
    store.code.record(ada, "L9.1", "code", program, _tests(3, 3))
    store.code.record(ANON, "L9.1", "code", program, _tests(3, 3))
    store.accounts.merge(ANON, into=ada)
    assert [e.source for e in store.instructors.code_events(ada)] == [program, program]
    with store.database.read() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM code_sources")).scalar() == 1


def test_an_account_is_never_merged_into_another(store: Store) -> None:
    ada = store.accounts.find_or_create(None, "s-1")
    grace = store.accounts.find_or_create(None, "s-2")
    with pytest.raises(ValueError, match="has an account of their own"):
        store.accounts.merge(grace, into=ada)
