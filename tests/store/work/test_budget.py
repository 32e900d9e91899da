"""Storage bounded per client: a byte budget per address and day, truncated outputs, programs stored once."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from qkv.store import Keeping, Store
from qkv.store.work.budget import STORED_OUTPUT_BYTES

CLIENT = "203.0.113.9"
OTHER = "198.51.100.4"
KIB = 1024


def _learner(number: int) -> str:
    return f"{number:036d}"


def _result(passed: int, total: int = 4, output: str = "") -> dict[str, Any]:
    tests = [{"status": "pass"}] * passed + [{"status": "fail", "got": "0"}] * (total - passed)
    return {"status": "pass" if passed == total else "fail", "tests": tests, "output": output}


def _scalar(store: Store, sql: str) -> Any:
    with store.database.engine.connect() as conn:
        return conn.execute(text(sql)).scalar()


def _column(store: Store, sql: str) -> list[Any]:
    with store.database.engine.connect() as conn:
        return [row[0] for row in conn.execute(text(sql))]


def test_past_the_budget_programs_are_counted_but_only_the_best_and_last_kept(database_url: str) -> None:
    store = Store(database_url, keep=20, client_bytes_per_day=32 * KIB)
    ada = _learner(1)
    try:
        # Within the budget: every program is kept (four programs of about 8 KiB each).
        for number, passed in enumerate((1, 3, 2, 0)):
            source = f"# try {number}\n" + "x = 1\n" * 1300
            kept = store.code.record(ada, "L9.1", "shapes", source, _result(passed), client=CLIENT)
            assert kept is Keeping.ALL
        assert _scalar(store, "SELECT COUNT(*) FROM code_submissions") == 4
        # They spent the budget (the first one's draft counted too): what follows is kept as best and last.
        assert store.budgets.spent_today(CLIENT) >= 32 * KIB
        outcomes = [
            store.code.record(ada, "L9.1", "shapes", f"# late {n}\n", _result(1), client=CLIENT)
            for n in range(3)
        ]
        assert outcomes == [Keeping.BEST_AND_LAST] * 3
        assert _column(store, "SELECT passed FROM code_submissions ORDER BY id") == [3, 1]
        activity = store.progress.lesson_activity(ada, "L9.1").exercises["shapes"]
        # The learner's last program is the one shown, and every run is counted in the gradebook.
        assert activity.last_code is not None and activity.last_code.source.startswith("# late 2\n")
        assert (activity.submissions, activity.attempts) == (7, 7)
        (row,) = store.gradebook.rows()
        assert row.best_score == "3/4"
        # Another client's budget is its own: its learner keeps the usual last 20.
        for number in range(3):
            store.code.record(_learner(2), "L9.1", "shapes", f"# b {number}\n", _result(0), client=OTHER)
        assert (
            _scalar(store, f"SELECT COUNT(*) FROM code_submissions WHERE learner_id = '{_learner(2)}'") == 3
        )
    finally:
        store.close()


def test_past_the_ceiling_a_client_stores_nothing_more_but_every_run_is_graded_and_counted(
    database_url: str,
) -> None:
    store = Store(database_url, client_bytes_per_day=16 * KIB)
    try:
        big = "z = 3\n" * 1000  # 6,000 bytes
        outcomes = []
        for number in range(8):  # a client minting a learner for every program
            source = f"# learner {number}\n{big}"
            outcomes.append(
                store.code.record(_learner(number), "L9.1", "shapes", source, _result(4), client=CLIENT)
            )
        assert Keeping.NOTHING in outcomes, outcomes
        stored_before = store.budgets.spent_today(CLIENT)
        rows_before = _scalar(store, "SELECT COUNT(*) FROM code_submissions")
        kept = store.code.record(_learner(99), "L9.1", "shapes", f"# more\n{big}", _result(4), client=CLIENT)
        assert kept is Keeping.NOTHING
        assert _scalar(store, "SELECT COUNT(*) FROM code_submissions") == rows_before
        assert store.budgets.spent_today(CLIENT) == stored_before
        assert _scalar(store, "SELECT COUNT(*) FROM code_sources") == rows_before
        # Nothing stored, yet the run counts: the gradebook shows it solved.
        activity = store.progress.lesson_activity(_learner(99), "L9.1").exercises["shapes"]
        assert (activity.submissions, activity.solved, activity.last_code) == (1, True, None)
        # Answers follow the same budget.
        assert store.progress.record_answer(
            _learner(99), "L9.1", "area", "12", correct=True, message="Right.", client=CLIENT
        ) is (Keeping.NOTHING)
        assert store.progress.lesson_activity(_learner(99), "L9.1").exercises["area"].solved
        # Writes that name no client (qkv check, imports) are not bounded by any budget.
        assert store.code.record(_learner(99), "L9.1", "shapes", big, _result(4)) is Keeping.ALL
    finally:
        store.close()


def test_a_stored_result_keeps_a_few_kib_of_output_and_says_it_was_cut(database_url: str) -> None:
    store = Store(database_url)
    ada = _learner(3)
    try:
        output = "printed line\n" * 10_000  # 130,000 bytes, as a program at the grader's output limit
        result = _result(2, output=output)
        result["tests"][-1]["got"] = "9" * 5000
        store.code.record(ada, "L9.1", "shapes", "print('lots')\n", result, client=CLIENT)
        saved = store.progress.lesson_activity(ada, "L9.1").exercises["shapes"].last_code
        assert saved is not None
        kept_output = saved.result["output"]
        assert kept_output.startswith("printed line\n") and len(kept_output) < STORED_OUTPUT_BYTES + 200
        assert kept_output.endswith("[… 125,904 more bytes were shown when the program ran but not kept …]")
        assert saved.result["tests"][-1]["got"].endswith("not kept …]")
        assert [test["status"] for test in saved.result["tests"]] == ["pass", "pass", "fail", "fail"]
        assert result["output"] == output  # the caller's document (what the learner is shown) is untouched
        # The instructor's view reads the same stored text.

        (event,) = store.instructors.code_events(ada)
        assert event.result["output"] == kept_output and event.source == "print('lots')\n"
    finally:
        store.close()


def test_the_same_program_sent_again_is_stored_once(database_url: str) -> None:
    store = Store(database_url, keep=5)
    ada, bea = _learner(4), _learner(5)
    program = "def area(w, h):\n    return w * h\n" + "# padding\n" * 3000
    try:
        before = store.budgets.spent_today(CLIENT)
        store.code.record(ada, "L9.1", "shapes", program, _result(1), client=CLIENT)
        first = store.budgets.spent_today(CLIENT) - before
        store.code.record(ada, "L9.1", "shapes", program, _result(1), client=CLIENT)
        second = store.budgets.spent_today(CLIENT) - before - first
        store.code.record(ada, "L9.2", "other", program, _result(1), client=CLIENT)  # another exercise too
        assert _scalar(store, "SELECT COUNT(*) FROM code_submissions") == 3
        assert _scalar(store, "SELECT COUNT(*) FROM code_sources") == 1
        assert first > len(program) and second < 300  # the second time, only its result was stored
        for lesson, exercise in (("L9.1", "shapes"), ("L9.2", "other")):
            saved = store.progress.lesson_activity(ada, lesson).exercises[exercise].last_code
            assert saved is not None and saved.source == program
        # Stored once per learner: another learner's same text is theirs.
        store.code.record(bea, "L9.1", "shapes", program, _result(1), client=CLIENT)
        assert _scalar(store, "SELECT COUNT(*) FROM code_sources") == 2
        # A text no kept program points at is deleted with the last one that did.
        for number in range(6):
            store.code.record(ada, "L9.1", "shapes", f"# new {number}\n", _result(0), client=CLIENT)
            store.code.record(ada, "L9.2", "other", f"# new {number}\n", _result(0), client=CLIENT)
        texts = _column(store, f"SELECT source FROM code_sources WHERE learner_id = '{ada}'")
        # The best programs (1 passed, the first ones) stay, so their text stays; old "# new" ones went.
        assert program in texts and "# new 0\n" not in texts and "# new 5\n" in texts
    finally:
        store.close()


def test_drafts_count_their_growth_and_may_not_grow_past_the_budget(database_url: str) -> None:
    store = Store(database_url, client_bytes_per_day=10_000)
    ada = _learner(6)
    try:
        assert store.code.save_draft(ada, "L9.1", "shapes", "a" * 4000, client=CLIENT)
        assert store.code.save_draft(
            ada, "L9.1", "shapes", "a" * 3000, client=CLIENT
        )  # shrinking costs nothing
        assert store.budgets.spent_today(CLIENT) == 4000
        assert store.code.save_draft(ada, "L9.1", "shapes", "b" * 9000, client=CLIENT)  # grew by 6,000: spent
        assert store.budgets.spent_today(CLIENT) == 10_000
        assert not store.code.save_draft(ada, "L9.1", "shapes", "c" * 9001, client=CLIENT)
        assert store.progress.lesson_activity(ada, "L9.1").drafts == {"shapes": "b" * 9000}
        # Replacing it with text no longer than it is still saved: it stores nothing more.
        assert store.code.save_draft(ada, "L9.1", "shapes", "d" * 100, client=CLIENT)
        assert store.progress.lesson_activity(ada, "L9.1").drafts == {"shapes": "d" * 100}
        assert not store.code.save_draft(_learner(7), "L9.1", "shapes", "e", client=CLIENT)  # a new one grows
        assert store.budgets.spent_today(CLIENT) == 10_000
    finally:
        store.close()


def test_a_programs_text_past_the_budget_drops_a_shorter_draft(database_url: str) -> None:
    store = Store(database_url, client_bytes_per_day=4 * KIB)
    ada = _learner(8)
    try:
        store.code.save_draft(ada, "L9.1", "shapes", "short", client=CLIENT)
        store.code.save_draft(ada, "L9.1", "other", "x" * 5000, client=CLIENT)  # spends the budget
        store.code.record(ada, "L9.1", "shapes", "def f():\n    return 1\n", _result(4), client=CLIENT)
        activity = store.progress.lesson_activity(ada, "L9.1")
        # The draft would have grown, so it went: the page shows the last program instead.
        assert "shapes" not in activity.drafts
        code = activity.exercises["shapes"].last_code
        assert code is not None and code.source == "def f():\n    return 1\n"
    finally:
        store.close()


def test_budgets_are_per_day_and_old_days_are_forgotten(database_url: str) -> None:
    store = Store(database_url)
    try:
        with store.database.engine.begin() as conn:
            conn.execute(
                text("INSERT INTO client_storage (client, day, stored_bytes) VALUES (:c, :d, :b)"),
                {"c": CLIENT, "d": "2020-01-01", "b": 10**12},
            )
        # Years ago the client spent a terabyte; today it starts afresh.
        assert store.budgets.spent_today(CLIENT) == 0
        assert store.code.save_draft(_learner(9), "L9.1", "shapes", "x = 1\n", client=CLIENT)
        assert store.budgets.spent_today(CLIENT) == 6
        assert _column(store, "SELECT client FROM client_storage") == [CLIENT]
    finally:
        store.close()


def test_a_client_key_and_a_budget_are_checked() -> None:
    store = Store("sqlite://")
    try:
        with pytest.raises(ValueError, match=r"^A client key must be text of 1 to 64 characters"):
            store.code.save_draft(_learner(1), "L9.1", "shapes", "x", client="")
    finally:
        store.close()
    with pytest.raises(
        ValueError, match=r"storage budget must be a whole number of bytes of at least 1, not 0\.$"
    ):
        Store("sqlite://", client_bytes_per_day=0)


def test_programs_saved_before_version_6_keep_their_text_and_new_ones_are_shared(database_url: str) -> None:
    from qkv.store import create_store_engine, upgrade

    engine = create_store_engine(database_url)
    upgrade(engine, target=5)
    ada = _learner(10)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO learners (id, created_at) VALUES (:id, '2026-11-01 12:00:00')"), {"id": ada}
        )
        conn.execute(
            text(
                "INSERT INTO code_submissions (learner_id, lesson_id, exercise_id, source, status, passed, total,"
                " result_json, created_at) VALUES (:l, 'L9.1', 'shapes', '# old\n', 'fail', 0, 4,"
                " '{\"status\": \"fail\"}', '2026-11-01 12:00:00')"
            ),
            {"l": ada},
        )
    engine.dispose()
    store = Store(database_url)
    try:
        (old,) = store.instructors.code_events(ada)
        assert old.source == "# old\n"
        store.code.record(ada, "L9.1", "shapes", "# new\n", _result(1), client=CLIENT)
        sources = [event.source for event in store.instructors.code_events(ada)]
        assert sources == ["# old\n", "# new\n"]
        assert _column(store, "SELECT source FROM code_submissions ORDER BY id") == ["# old\n", ""]
        assert _column(store, "SELECT source FROM code_sources") == ["# new\n"]
        # The page shows the newest program, read from where it is stored.
        latest = store.progress.lesson_activity(ada, "L9.1").exercises["shapes"].last_code
        assert latest is not None and latest.source == "# new\n"
    finally:
        store.close()
