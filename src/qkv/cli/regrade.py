"""``qkv regrade``: grade the stored programs again against today's suites, and keep what changed.

Every verdict records the version of its lesson's grading (``qkv.lessons.suite_versions``). After an author
fixes a test, ``qkv regrade [--lesson ID] [--course ID] [--latest-only] [--dry-run]`` grades the kept
programs again in this machine's sandbox, at background priority (``qkv.grading.sandbox.priority``: the
learners' own programs get the cores first), each program after a moment with no live grading on the
machine (``qkv.grading.sandbox.live_gradings``; ``GAP_WAIT_S`` at most), prints each verdict that changed
(pass to fail, fail to pass, another first message), stores the new verdicts and the changes, sets the
learners' totals again, and queues the LMS scores that changed. ``--dry-run`` grades and prints, and
stores nothing.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from qkv.cli.options import (
    after_hint_credit_option,
    after_solution_credit_option,
    database_url_option,
    opened_store,
)

if TYPE_CHECKING:
    from qkv.grading import Grader, Suite
    from qkv.lessons import Catalog
    from qkv.store import Store, StoredProgram, VerdictChange
    from qkv.web.solution_credit import HelpPolicy

_T = TypeVar("_T")

# Before each program the regrade waits for a moment when no live learner's program is being graded on
# this machine (qkv.grading.sandbox.live_gradings), at most this long: on a machine that is never idle it
# still grades twelve programs a minute. (A shorter wait lets more programs run beside live ones: one in
# a hundred live gradings slowed is what a p99 shows.)
GAP_WAIT_S = 5.0


def describe(change: VerdictChange) -> str:
    """One changed verdict, as ``qkv regrade`` prints it.

    Examples
    --------
    >>> from qkv.store import VerdictChange
    >>> describe(VerdictChange(7, "a" * 36, "X1.1", "shapes", "fail", "pass", "No sign check.", ""))
    'X1.1/shapes, learner aaaaaaaa, program 7: fail → pass'
    >>> describe(VerdictChange(7, "a" * 36, "X1.1", "shapes", "fail", "fail", "Old.", "New."))
    "X1.1/shapes, learner aaaaaaaa, program 7: fail, first message 'Old.' → 'New.'"
    """
    exercise = f"{change.lesson_id}/{change.exercise_id}"
    where = f"{exercise}, learner {change.learner_id[:8]}, program {change.submission_id}"
    if change.before_status != change.after_status:
        return f"{where}: {change.before_status} → {change.after_status}"
    return (
        f"{where}: {change.after_status}, first message {change.before_message!r} → {change.after_message!r}"
    )


def _selected(
    store: Store, catalog: Catalog, lesson: str | None, course: str | None, latest: bool
) -> list[Any]:
    from qkv.lessons import LessonError
    from qkv.store import LearnerScope

    if lesson is not None:
        try:
            catalog.lesson(lesson)
        except LessonError as error:
            raise click.ClickException(str(error)) from None
    if course is not None and store.courses.get(course) is None:
        raise click.ClickException(
            f"There is no course with the id {course!r}; 'qkv courses list' shows them."
        )
    scope = None if course is None else LearnerScope(course)
    codes = {exercise.id: exercise for exercise in catalog.code_exercises()}
    found = store.regrades.programs(lesson, scope, latest_only=latest)
    return [
        (p, codes[f"{p.lesson_id}/{p.exercise_id}"])
        for p in found
        if f"{p.lesson_id}/{p.exercise_id}" in codes
    ]


@dataclasses.dataclass
class _Regraded:
    """What the regrade's background side found and did."""

    store: Store
    catalog: Catalog
    policy: HelpPolicy
    count: int
    changes: list[VerdictChange]
    again: list[Any]


def _in_the_background(work: Callable[[], _T]) -> _T:
    """Run ``work`` on a thread of its own at background priority and return what it returns.

    Everything a regrade does runs there: reading the lessons and the kept programs, the sandboxes, judging
    each report, explaining a failure, storing. Linux's nice value is per thread and inherited by the
    threads and processes a thread starts (the grader's, its sandboxes), so the caller's thread keeps its
    own.
    """
    with concurrent.futures.ThreadPoolExecutor(1, "qkv-regrade", initializer=_lower_this_thread) as pool:
        return pool.submit(work).result()


def _lower_this_thread() -> None:
    from qkv.grading.sandbox.priority import SandboxPriority

    os.nice(max(0, SandboxPriority.BACKGROUND.value - os.nice(0)))  # this thread only (Linux)


def _regrade_each(
    store: Store, pairs: Iterable[Any], dry_run: bool, *, in_the_background: bool
) -> tuple[list[VerdictChange], list[Any]]:
    """Grade each program again and keep (or, with ``dry_run``, only list) the verdicts that changed.

    In the background each program waits for a gap in the live gradings first (at most ``GAP_WAIT_S``).
    There a program can run out of time only because the machine was busy: such a verdict
    (where the kept one had not run out of time) is not kept but returned with the programs to grade
    again at normal priority; at normal priority every verdict counts.
    """
    from qkv.grading import Grader
    from qkv.grading.sandbox.live_gradings import wait_for_a_gap
    from qkv.grading.sandbox.priority import SandboxPriority, running_at
    from qkv.lessons.suite_versions import suite_version

    priority = SandboxPriority.BACKGROUND if in_the_background else SandboxPriority.NORMAL
    changes: list[VerdictChange] = []
    again: list[Any] = []
    if in_the_background:
        wait_for_a_gap(GAP_WAIT_S)  # starting the sandboxes is work too
    with Grader(warm_spares=1) as grader, running_at(priority):
        for program, exercise in pairs:
            stored: StoredProgram = program
            if in_the_background:
                wait_for_a_gap(GAP_WAIT_S)
            result = grader.grade(stored.source, exercise.suite, seed=stored.seed).to_dict()
            if in_the_background and _ran_out_of_time(result, stored, grader, exercise.suite):
                again.append((program, exercise))
                continue
            if dry_run:
                change = _changed(stored, result)
            else:
                change = store.regrades.apply(stored, result, suite_version(exercise.lesson))
            if change is not None:
                changes.append(change)
                click.echo(describe(change))
    return changes, again


def _changed(stored: StoredProgram, result: dict[str, Any]) -> VerdictChange | None:
    """What would change if ``result`` were kept for ``stored`` (a dry run stores nothing)."""
    from qkv.store import VerdictChange
    from qkv.store.work.regrades import first_message

    after = (str(result["status"]), first_message(result))
    if after == (stored.status, stored.first_message):
        return None
    key = (stored.id, stored.learner_id, stored.lesson_id, stored.exercise_id)
    return VerdictChange(*key, stored.status, after[0], stored.first_message, after[1])


def _ran_out_of_time(result: dict[str, Any], stored: StoredProgram, grader: Grader, suite: Suite) -> bool:
    """Whether the new verdict's first message is the time limit's, and the kept verdict's was not."""
    from qkv.grading import Limits
    from qkv.store.work.regrades import first_message

    walls = {grader.limits.wall_s, suite.time_limit_s or grader.limits.wall_s}
    sentences = tuple(Limits(wall_s=wall).describe_wall() for wall in walls)
    return first_message(result).startswith(sentences) and not stored.first_message.startswith(sentences)


def _queue_scores(store: Store, catalog: Catalog, changes: list[VerdictChange], policy: HelpPolicy) -> int:
    """Queue the LMS score of each learner and lesson a change touched (where it changed), with the help
    credits of ``policy`` (the server's); how many."""
    from qkv.store.lti.links import LtiLinks
    from qkv.store.lti.outbox import ScoreOutbox
    from qkv.web.lesson_progress import build_progress
    from qkv.web.lti.scores import ScoreHook, queue_lesson_score

    hook = ScoreHook(LtiLinks(store.database), ScoreOutbox(store.database))
    queued = 0
    for learner_id, lesson_id in sorted({(c.learner_id, c.lesson_id) for c in changes}):
        lesson = catalog.lesson(lesson_id)
        progress = build_progress(lesson, store.progress.lesson_activity(learner_id, lesson_id))
        # The server's help credits; each line item's course's dates weigh late solves.
        sent = queue_lesson_score(hook, store.due_dates, learner_id, lesson_id, progress, policy)
        queued += int(sent)
    return queued


@click.command("regrade")
@click.option("--lesson", help="Only this lesson's programs.")
@click.option("--course", help="Only the programs of this course's learners.")
@click.option("--latest-only", is_flag=True, help="Only each learner's latest program of each exercise.")
@click.option("--dry-run", is_flag=True, help="Grade and print what would change; store nothing.")
@click.option(
    "--content",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The lessons the server serves, if not the built-in ones.",
)
@after_solution_credit_option
@after_hint_credit_option
@database_url_option
def regrade(
    lesson: str | None,
    course: str | None,
    latest_only: bool,
    dry_run: bool,
    content: Path | None,
    after_solution_credit: str,
    after_hint_credit: str,
    database_url: str | None,
) -> None:
    """Grade the stored programs again against today's suites; print and keep what changed.

    The LMS scores that changed are sent with the help credits given here: give those the server runs
    with (its --after-solution-credit and --after-hint-credit).
    """

    def regrade_in_the_background(stack: contextlib.ExitStack[bool | None]) -> _Regraded:
        # Even the imports and the database's opening: this process's start-up slows live learners too.
        from qkv.lessons import LessonError, load_catalog
        from qkv.web.solution_credit import AfterSolutionCredit, HelpPolicy

        policy = HelpPolicy(
            AfterSolutionCredit(after_solution_credit), AfterSolutionCredit(after_hint_credit)
        )
        try:
            catalog = load_catalog(content)
        except LessonError as error:
            raise click.ClickException(str(error)) from None
        store = stack.enter_context(opened_store(database_url))
        pairs = _selected(store, catalog, lesson, course, latest_only)
        changes, again = _regrade_each(store, pairs, dry_run, in_the_background=True)
        return _Regraded(store, catalog, policy, len(pairs), changes, again)

    with contextlib.ExitStack() as stack:
        done = _in_the_background(lambda: regrade_in_the_background(stack))
        store, changes, again = done.store, done.changes, done.again
        if again:
            click.echo(
                f"{len(again)} program{' ran' if len(again) == 1 else 's ran'} out of time in the background "
                "(the machine was busy, or the program is too slow now): grading "
                f"{'it' if len(again) == 1 else 'them'} once more at normal priority."
            )
            changes += _regrade_each(store, again, dry_run, in_the_background=False)[0]
        queued = 0
        if not dry_run:
            queued = _in_the_background(lambda: _queue_scores(store, done.catalog, changes, done.policy))
    count = done.count
    turned = sum(1 for c in changes if c.before_status != c.after_status)
    verb = "would change" if dry_run else "changed"
    click.echo(
        f"Regraded {count} program{'' if count == 1 else 's'}: {len(changes)} {verb} "
        f"({turned} pass/fail turned, {len(changes) - turned} with another first message)"
        + (
            "; nothing was stored."
            if dry_run
            else f"; {queued} LMS score{'' if queued == 1 else 's'} queued."
        )
    )


__all__ = ["describe", "regrade"]
