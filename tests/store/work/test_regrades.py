"""Regrading in the store (issue 46), on SQLite and PostgreSQL: programs keep their suite version; a new
verdict is applied, a change recorded and the totals set again from the kept programs."""

from __future__ import annotations

from qkv.store import LearnerScope, MembershipSource, Store

ADA, ALAN = "a" * 36, "b" * 36
FAIL = {"status": "fail", "tests": [{"status": "fail", "message": "No sign check."}], "suite_version": "v1"}
PASS = {"status": "pass", "tests": [{"status": "pass"}]}


def test_versions_changes_and_totals(database_url: str) -> None:
    store = Store(database_url)
    try:
        course = store.courses.create("Attention 101").id
        store.courses.enrol(course, ADA, MembershipSource.ROSTER)
        store.code.record(ADA, "T1.1", "shapes", "x = 1\n", FAIL)
        store.code.record(ADA, "T1.1", "shapes", "x = 2\n", FAIL)
        store.code.record(ALAN, "T1.1", "shapes", "x = 3\n", {**FAIL, "suite_version": "v2"})
        store.code.record(ALAN, "T1.2", "other", "x = 4\n", PASS)  # no version: saved "before versions"
        assert store.regrades.older_counts({"T1.1": "v2", "T1.2": "v2"}) == {"T1.1": 2, "T1.2": 1}
        assert store.regrades.older_counts({"T1.1": "v2"}, LearnerScope(course)) == {"T1.1": 2}
        latest = store.regrades.programs("T1.1", latest_only=True)
        assert [(p.learner_id, p.source) for p in latest] == [(ADA, "x = 2\n"), (ALAN, "x = 3\n")]
        assert [p.learner_id for p in store.regrades.programs(scope=LearnerScope(course))] == [ADA, ADA]
        ada_last = latest[0]
        assert (ada_last.first_message, ada_last.suite_version) == ("No sign check.", "v1")
        change = store.regrades.apply(ada_last, PASS, "v2")
        assert change is not None and (change.before_status, change.after_status) == ("fail", "pass")
        assert store.regrades.apply(latest[1], {**FAIL, "suite_version": "v2"}, "v2") is None  # unchanged
        rows = {(r.learner_id, r.lesson_id): r for r in store.gradebook.rows()}
        assert rows[(ADA, "T1.1")].solved and rows[(ADA, "T1.1")].first_solved_at is not None
        assert not rows[(ALAN, "T1.1")].solved
        assert [c.learner_id for c in store.regrades.changes("T1.1")] == [ADA]
        # And back: the suite turns it again, and the exercise is no longer solved.
        again = store.regrades.programs("T1.1", latest_only=True)[0]
        assert store.regrades.apply(again, FAIL, "v3") is not None
        assert not {(r.learner_id, r.lesson_id): r for r in store.gradebook.rows()}[(ADA, "T1.1")].solved
    finally:
        store.close()


def test_a_solve_a_regrade_makes_is_marked_after_the_help_shown_before_its_program(database_url: str) -> None:
    # Ada saw the solution, then hint 1, before her second program; hint 2 only after it. A regrade turns
    # that program to a pass: it is her first solve, after the solution and after one hint, as a solve
    # saved then would have been marked; turned back, the marks go with the solve.
    store = Store(database_url)
    try:
        store.code.record(ADA, "T1.1", "shapes", "x = 1\n", FAIL)
        store.code.help_shown(ADA, "T1.1", "shapes", 0)
        store.code.help_shown(ADA, "T1.1", "shapes", 1)
        store.code.record(ADA, "T1.1", "shapes", "x = 2\n", FAIL)
        store.code.help_shown(ADA, "T1.1", "shapes", 2)
        second = store.regrades.programs("T1.1", latest_only=True)[0]
        assert store.regrades.apply(second, PASS, "v2") is not None
        (row,) = store.gradebook.rows()
        assert (row.solved, row.solved_after_solution, row.solved_after_hints) == (True, True, True)
        shapes = store.progress.lesson_activity(ADA, "T1.1").exercises["shapes"]
        assert (shapes.solved_after_solution, shapes.solved_after_hints) == (True, True)
        again = store.regrades.programs("T1.1", latest_only=True)[0]
        assert store.regrades.apply(again, FAIL, "v3") is not None
        (row,) = store.gradebook.rows()
        assert (row.solved, row.solved_after_solution, row.solved_after_hints) == (False, False, False)
    finally:
        store.close()
