"""``qkv regrade``: grade the stored programs again against today's suites, and keep what changed.

Every verdict records the version of its lesson's grading (``qkv.lessons.suite_versions``). After an author
fixes a test, ``qkv regrade [--lesson ID] [--course ID] [--latest-only] [--dry-run]`` grades the kept
programs again in this machine's sandbox, at background priority (``qkv.grading.sandbox.priority``: the
learners' own programs get the cores first), prints each verdict that changed (pass to fail, fail to pass,
another first message), stores the new verdicts and the changes, sets the learners' totals again, and queues
the LMS scores that changed. ``--dry-run`` grades and prints, and stores nothing.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from qkv.cli.options import (
    after_hint_credit_option,
    after_solution_credit_option,
    database_url_option,
    opened_store,
)

if TYPE_CHECKING:
    from qkv.lessons import Catalog
    from qkv.store import Store, StoredProgram, VerdictChange
    from qkv.web.solution_credit import HelpPolicy


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


def _regrade_all(store: Store, pairs: Iterable[Any], dry_run: bool) -> list[VerdictChange]:
    """Regrade on a thread of its own at background priority: the sandboxes run in the background, and
    so does this side's work (the inputs, judging each report, explaining a failure). Linux's nice value
    is per thread and inherited by the threads a thread starts (the grader's), so the caller's thread
    keeps its own."""
    with concurrent.futures.ThreadPoolExecutor(1, "qkv-regrade", initializer=_in_the_background) as pool:
        return pool.submit(_regrade_here, store, pairs, dry_run).result()


def _in_the_background() -> None:
    from qkv.grading.sandbox.priority import SandboxPriority

    os.nice(max(0, SandboxPriority.BACKGROUND.value - os.nice(0)))  # this thread only (Linux)


def _regrade_here(store: Store, pairs: Iterable[Any], dry_run: bool) -> list[VerdictChange]:
    from qkv.grading import Grader
    from qkv.grading.sandbox.priority import SandboxPriority, running_at
    from qkv.lessons.suite_versions import suite_version
    from qkv.store import VerdictChange
    from qkv.store.work.regrades import first_message

    changes: list[VerdictChange] = []
    with Grader(warm_spares=1, zygote=False) as grader, running_at(SandboxPriority.BACKGROUND):
        for program, exercise in pairs:
            stored: StoredProgram = program
            result = grader.grade(stored.source, exercise.suite, seed=stored.seed).to_dict()
            if dry_run:
                after = (str(result["status"]), first_message(result))
                if after != (stored.status, stored.first_message):
                    key = (stored.id, stored.learner_id, stored.lesson_id, stored.exercise_id)
                    changes.append(
                        VerdictChange(*key, stored.status, after[0], stored.first_message, after[1])
                    )
            else:
                change = store.regrades.apply(stored, result, suite_version(exercise.lesson))
                if change is not None:
                    changes.append(change)
            if changes and changes[-1].submission_id == stored.id:
                click.echo(describe(changes[-1]))
    return changes


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
    from qkv.lessons import LessonError, load_catalog
    from qkv.web.solution_credit import AfterSolutionCredit, HelpPolicy

    policy = HelpPolicy(AfterSolutionCredit(after_solution_credit), AfterSolutionCredit(after_hint_credit))

    try:
        catalog = load_catalog(content)
    except LessonError as error:
        raise click.ClickException(str(error)) from None
    with opened_store(database_url) as store:
        pairs = _selected(store, catalog, lesson, course, latest_only)
        changes = _regrade_all(store, pairs, dry_run)
        queued = 0 if dry_run else _queue_scores(store, catalog, changes, policy)
    turned = sum(1 for c in changes if c.before_status != c.after_status)
    verb = "would change" if dry_run else "changed"
    click.echo(
        f"Regraded {len(pairs)} program{'' if len(pairs) == 1 else 's'}: {len(changes)} {verb} "
        f"({turned} pass/fail turned, {len(changes) - turned} with another first message)"
        + (
            "; nothing was stored."
            if dry_run
            else f"; {queued} LMS score{'' if queued == 1 else 's'} queued."
        )
    )


__all__ = ["describe", "regrade"]
