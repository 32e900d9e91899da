"""The class at a glance, read as aggregates: where each learner is, who is stuck, how each exercise goes.

Everything here is computed in SQL from the kept totals (``exercise_totals``, one row per learner and
exercise, counted as answers and programs arrive), so a view reads one row per learner and exercise at
most, never every answer or program. Only the wrong answers are grouped from the kept answer rows, and
only in SQL (one row per distinct wrong answer comes back); one learner's events are read a page at a time.

    >>> from qkv.store import Store
    >>> store = Store("sqlite://")
    >>> _ = store.progress.record_answer("a" * 36, "L9.1", "area", "11", correct=False, message="No.")
    >>> view = ClassView(store.database)
    >>> [(s.id[:3], s.solved_by_lesson) for s in view.standings({"L9.1": ["area"]})]
    [('aaa', {'L9.1': 0})]
    >>> view.exercise_counts()[("L9.1", "area")].started
    1
    >>> store.close()
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime

from sqlalchemy import (
    Connection,
    and_,
    func,
    literal,
    select,
    union_all,
)

from qkv.store.instructor.class_view_records import (
    _ANSWERS,
    _CODE,
    _EXERCISE_COUNTS,
    _HELP,
    _LEARNERS,
    _TOTALS,
    ACTIVE_MINUTES,
    DEFAULT_STUCK_ATTEMPTS,
    DEFAULT_STUCK_MINUTES,
    CurrentExercise,
    EventPage,
    ExerciseCounts,
    LearnerStanding,
    Standing,
    StuckRule,
    WrongAnswerGroup,
    _event,
    _per_lesson,
    _program,
    median_of_histogram,
)
from qkv.store.instructor.courses import EVERYONE, LearnerScope
from qkv.store.instructor.instructors import AnswerEvent, CodeEvent, help_event
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.work.program_texts import programs

__all__ = [
    "ACTIVE_MINUTES",
    "DEFAULT_STUCK_ATTEMPTS",
    "DEFAULT_STUCK_MINUTES",
    "ClassView",
    "CurrentExercise",
    "EventPage",
    "ExerciseCounts",
    "LearnerStanding",
    "Standing",
    "StuckRule",
    "WrongAnswerGroup",
    "median_of_histogram",
]


class ClassView:
    """Aggregates of the whole class for the instructor's view, computed in the database.

    Parameters
    ----------
    database : Database
        The database to read.
    scope : LearnerScope
        The learners it reads: every learner by default, or one course's (``within``).
    """

    def __init__(self, database: Database, scope: LearnerScope = EVERYONE) -> None:
        self.database = database
        self.scope = scope

    def within(self, scope: LearnerScope) -> ClassView:
        """The same view over the learners of ``scope`` only (a course's, for its instructors)."""
        return ClassView(self.database, scope)

    def standings(self, counted: Mapping[str, Sequence[str]]) -> list[LearnerStanding]:
        """Every learner: solved and started per lesson, totals, last activity and current exercise.

        Parameters
        ----------
        counted : mapping of lesson id to exercise ids
            The exercises that count toward done (as in the LMS export); only these are counted in
            ``solved_by_lesson`` and ``solved``. Every lesson named gets a cell, zero included.

        Returns
        -------
        list of LearnerStanding
            In no particular order (the page sorts them).
        """
        per_lesson = _per_lesson(counted, self.scope)
        with self.database.read() as conn:
            learners = conn.execute(
                select(_LEARNERS.c.id, _LEARNERS.c.display_name, _LEARNERS.c.external_id).where(
                    self.scope.admits(_LEARNERS.c.id)
                )
            ).all()
            cells: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
            helped: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
            submissions: dict[str, int] = defaultdict(int)
            last: dict[str, datetime] = {}
            for row in conn.execute(per_lesson):
                cells[row.learner_id][row.lesson_id] = (int(row.solved or 0), int(row.started or 0))
                helped[row.learner_id][row.lesson_id] = (
                    int(row.after_solution or 0),
                    int(row.after_hints or 0),
                )
                submissions[row.learner_id] += int(row.submissions or 0)
                seen = last.get(row.learner_id)
                last[row.learner_id] = (
                    row.last_activity_at if seen is None else max(seen, row.last_activity_at)
                )
            current = self._current(conn, scope=self.scope)
        standings = []
        for learner in learners:
            mine = cells.get(learner.id, {})
            solved = {lesson: mine.get(lesson, (0, 0))[0] for lesson in counted}
            standings.append(
                LearnerStanding(
                    id=learner.id,
                    display_name=learner.display_name,
                    last_activity_at=last.get(learner.id),
                    solved_by_lesson=solved,
                    started_by_lesson={lesson: mine.get(lesson, (0, 0))[1] for lesson in counted},
                    solved=sum(solved.values()),
                    submissions=submissions.get(learner.id, 0),
                    current=current.get(learner.id),
                    external_id=learner.external_id,
                    after_solution_by_lesson={k: v[0] for k, v in helped.get(learner.id, {}).items()},
                    after_hints_by_lesson={k: v[1] for k, v in helped.get(learner.id, {}).items()},
                )
            )
        return standings

    @staticmethod
    def _current(
        conn: Connection, since: datetime | None = None, scope: LearnerScope = EVERYONE
    ) -> dict[str, CurrentExercise]:
        """Each learner's most recently touched exercise (of those active since ``since``, if given).

        A join on each learner's latest activity, not a window function: it walks the table once by its
        primary key (learner first) and is several times faster on SQLite.
        """
        t = _TOTALS.c
        latest = (
            select(t.learner_id, func.max(t.last_activity_at).label("latest"))
            .where(scope.admits(t.learner_id))
            .group_by(t.learner_id)
        )
        if since is not None:
            latest = latest.having(func.max(t.last_activity_at) >= since)
        newest = latest.subquery()
        query = select(
            t.learner_id,
            t.lesson_id,
            t.exercise_id,
            t.solved,
            t.attempts,
            func.coalesce(t.started_at, t.last_activity_at).label("started_at"),
            t.last_activity_at,
        ).join(newest, and_(t.learner_id == newest.c.learner_id, t.last_activity_at == newest.c.latest))
        found: dict[str, CurrentExercise] = {}
        for row in conn.execute(query):
            here = CurrentExercise(
                row.lesson_id,
                row.exercise_id,
                bool(row.solved),
                int(row.attempts),
                row.started_at,
                row.last_activity_at,
            )
            there = found.get(row.learner_id)
            # Two exercises touched in the same instant: the first in (lesson, exercise) order, every time.
            if there is None or (here.lesson_id, here.exercise_id) < (there.lesson_id, there.exercise_id):
                found[row.learner_id] = here
        return found

    def active(self, since: datetime) -> list[LearnerStanding]:
        """The learners who touched an exercise at or after ``since``, with their current exercise only
        (no per-lesson counts): what the "stuck now" list needs, read without scanning the whole class.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> _ = store.progress.record_answer("a" * 36, "L9.1", "area", "11", correct=False, message="No.")
        >>> from datetime import timedelta
        >>> since = utc_now() - timedelta(minutes=15)
        >>> [s.current.exercise_id for s in ClassView(store.database).active(since)]
        ['area']
        >>> store.close()
        """
        with self.database.read() as conn:
            current = self._current(conn, since, self.scope)
            names = (
                {
                    row.id: (row.display_name, row.external_id)
                    for row in conn.execute(
                        select(_LEARNERS.c.id, _LEARNERS.c.display_name, _LEARNERS.c.external_id).where(
                            _LEARNERS.c.id.in_(list(current))
                        )
                    )
                }
                if current
                else {}
            )
        return [
            LearnerStanding(
                id=learner_id,
                display_name=names.get(learner_id, (None, None))[0],
                last_activity_at=exercise.last_activity_at,
                solved_by_lesson={},
                started_by_lesson={},
                solved=0,
                submissions=0,
                current=exercise,
                external_id=names.get(learner_id, (None, None))[1],
            )
            for learner_id, exercise in current.items()
        ]

    def learner_count(self) -> int:
        """How many learners have saved anything.

        Examples
        --------
        >>> ClassView(Database("sqlite://")).learner_count()
        0
        """
        with self.database.read() as conn:
            return int(
                conn.execute(
                    select(func.count()).select_from(_LEARNERS).where(self.scope.admits(_LEARNERS.c.id))
                ).scalar_one()
            )

    def stuck(
        self, standings: Sequence[LearnerStanding], rule: StuckRule, now: datetime | None = None
    ) -> list[LearnerStanding]:
        """The learners stuck now by ``rule``, the longest stuck first.

        Examples
        --------
        >>> t = datetime(2024, 1, 1, 12, 0)
        >>> on_q = CurrentExercise("L9.1", "q", False, 3, t, t)
        >>> ben = LearnerStanding("b" * 36, "Ben", t, {}, {}, 0, 3, on_q)
        >>> [s.name for s in ClassView(Database("sqlite://")).stuck([ben], StuckRule(), now=t)]
        ['Ben']
        """
        moment = now or utc_now()
        found = [
            s
            for s in standings
            if s.current is not None and s.current.standing(moment, rule) is Standing.STUCK
        ]
        return sorted(found, key=lambda s: (s.current.started_at if s.current else moment, s.id))

    def exercise_counts(self) -> dict[tuple[str, str], ExerciseCounts]:
        """Per (lesson, exercise) with saved work: started, solved, first-try solvers, median attempts.

        Examples
        --------
        >>> ClassView(Database("sqlite://")).exercise_counts()
        {}
        """
        query = _EXERCISE_COUNTS.where(self.scope.admits(_TOTALS.c.learner_id))
        sums: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        histograms: dict[tuple[str, str], dict[int, int]] = defaultdict(dict)
        with self.database.read() as conn:
            for row in conn.execute(query):
                key = (row.lesson_id, row.exercise_id)
                total = sums[key]
                total[0] += int(row.learners)
                total[1] += int(row.solved or 0)
                total[2] += int(row.attempts or 0)
                total[3] += int(row.submissions or 0)
                if row.solved_in is not None:
                    histograms[key][int(row.solved_in)] = int(row.learners)
        found = {}
        for key, (started, solved, attempts, submitted) in sums.items():
            hist = histograms.get(key, {})
            found[key] = ExerciseCounts(
                lesson_id=key[0],
                exercise_id=key[1],
                started=started,
                solved=solved,
                solved_first_try=hist.get(1, 0),
                solvers_counted=sum(hist.values()),
                median_attempts=median_of_histogram(hist),
                attempts=attempts,
                submissions=submitted,
            )
        return found

    def wrong_answers(self, lesson_id: str) -> list[WrongAnswerGroup]:
        """The lesson's kept wrong answers (those that cost an attempt), grouped by exercise, text, named
        mistake and variant, the most frequent first.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> for text in ("11", "11", "7"):
        ...     _ = store.progress.record_answer("a" * 36, "L9.1", "area", text, correct=False, message="No.")
        >>> [(g.answer, g.count, g.learners) for g in ClassView(store.database).wrong_answers("L9.1")]
        [('11', 2, 1), ('7', 1, 1)]
        >>> store.close()
        """
        a = _ANSWERS.c
        query = (
            select(
                a.exercise_id,
                a.answer,
                a.mistake,
                a.variant_seed,
                func.count().label("count"),
                func.count(a.learner_id.distinct()).label("learners"),
            )
            .where(a.lesson_id == lesson_id, a.correct.is_(False), a.counted_as_attempt.is_(True))
            .where(self.scope.admits(a.learner_id))
            .group_by(a.exercise_id, a.answer, a.mistake, a.variant_seed)
            .order_by(func.count().desc(), a.exercise_id, a.answer)
        )
        with self.database.read() as conn:
            rows = conn.execute(query).all()
        return [
            WrongAnswerGroup(r.exercise_id, r.answer, r.mistake, r.variant_seed, int(r[4]), int(r.learners))
            for r in rows
        ]

    def failing_programs(self, lesson_id: str, exercise_id: str, limit: int = 500) -> list[CodeEvent]:
        """The exercise's most recent kept programs that did not pass (at most ``limit``), newest first."""
        query = (
            programs()
            .where(
                _CODE.c.lesson_id == lesson_id, _CODE.c.exercise_id == exercise_id, _CODE.c.status != "pass"
            )
            .where(self.scope.admits(_CODE.c.learner_id))
            .order_by(_CODE.c.id.desc())
            .limit(limit)
        )
        with self.database.read() as conn:
            return [_program(row) for row in conn.execute(query)]

    def latest_programs(self, lesson_id: str, exercise_id: str) -> list[CodeEvent]:
        """Each learner's newest kept program for the exercise (one per learner), in the order they were sent.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> for text in ("x = 1", "x = 2"):
        ...     _ = store.code.record("a" * 36, "L9.1", "area", text, {"status": "fail", "tests": []})
        >>> [event.source for event in ClassView(store.database).latest_programs("L9.1", "area")]
        ['x = 2']
        >>> store.close()
        """
        c = _CODE.c
        newest = (
            select(func.max(c.id))
            .where(c.lesson_id == lesson_id, c.exercise_id == exercise_id)
            .where(self.scope.admits(c.learner_id))
            .group_by(c.learner_id)
        )
        query = programs().where(c.id.in_(newest)).order_by(c.id)
        with self.database.read() as conn:
            return [_program(row) for row in conn.execute(query)]

    def latest_failure(
        self, learner_id: str, lesson_id: str, exercise_id: str, *, code: bool | None = None
    ) -> AnswerEvent | CodeEvent | None:
        """The learner's latest kept wrong answer (one that cost an attempt) or failing program on the
        exercise, or None. ``code`` True reads only programs, False only answers, None both.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> _ = store.progress.record_answer("a" * 36, "L9.1", "area", "11", correct=False, message="No.")
        >>> ClassView(store.database).latest_failure("a" * 36, "L9.1", "area").answer
        '11'
        >>> store.close()
        """
        a, c = _ANSWERS.c, _CODE.c
        answer = program = None
        # Both walk the index on (learner, lesson, exercise, id) backwards from the newest row.
        with self.database.read() as conn:
            if code is not True:
                answer = conn.execute(
                    select(_ANSWERS)
                    .where(a.learner_id == learner_id, a.lesson_id == lesson_id, a.exercise_id == exercise_id)
                    .where(a.correct.is_(False), a.counted_as_attempt.is_(True))  # unreadable is not wrong
                    .order_by(a.learner_id.desc(), a.lesson_id.desc(), a.exercise_id.desc(), a.id.desc())
                    .limit(1)
                ).first()
            if code is not False:
                program = conn.execute(
                    programs()
                    .where(c.learner_id == learner_id, c.lesson_id == lesson_id, c.exercise_id == exercise_id)
                    .where(c.status != "pass")
                    .order_by(c.learner_id.desc(), c.lesson_id.desc(), c.exercise_id.desc(), c.id.desc())
                    .limit(1)
                ).first()
        found: list[AnswerEvent | CodeEvent] = []
        if answer is not None:
            found.append(_event(answer))
        if program is not None:
            found.append(_program(program))
        return max(found, key=lambda event: event.created_at) if found else None

    def learner_events(
        self,
        learner_id: str,
        *,
        offset: int = 0,
        limit: int = 50,
        lesson_id: str | None = None,
        exercise_id: str | None = None,
    ) -> EventPage:
        """One page of a learner's kept answers and programs (of one exercise, if given), oldest first.

        Raises
        ------
        ValueError
            If ``offset`` is negative or ``limit`` is not 1 to 500.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> for text in ("1", "2", "3"):
        ...     _ = store.progress.record_answer("a" * 36, "L9.1", "area", text, correct=False, message="No.")
        >>> page = ClassView(store.database).learner_events("a" * 36, offset=1, limit=1)
        >>> [event.answer for event in page.answers], page.total
        (['2'], 3)
        >>> store.close()
        """
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"A page's offset must be a whole number of at least 0, not {offset!r}.")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 500:
            raise ValueError(f"A page holds 1 to 500 events, not {limit!r}.")
        parts = []
        for kind, table, at in (
            ("answer", _ANSWERS, _ANSWERS.c.created_at),
            ("program", _CODE, _CODE.c.created_at),
            ("help", _HELP, _HELP.c.shown_at),
        ):
            conditions = [table.c.learner_id == learner_id, self.scope.admits(table.c.learner_id)]
            if lesson_id is not None:
                conditions.append(table.c.lesson_id == lesson_id)
            if exercise_id is not None:
                conditions.append(table.c.exercise_id == exercise_id)
            parts.append(
                select(literal(kind).label("kind"), table.c.id.label("id"), at.label("created_at")).where(
                    *conditions
                )
            )
        both = union_all(*parts).subquery()
        with self.database.read() as conn:
            total = int(conn.execute(select(func.count()).select_from(both)).scalar_one())
            order = [
                (str(row.kind), int(row.id))
                for row in conn.execute(
                    select(both.c.kind, both.c.id)
                    .order_by(both.c.created_at, both.c.kind, both.c.id)
                    .offset(offset)
                    .limit(limit)
                )
            ]
            answer_ids = [i for kind, i in order if kind == "answer"]
            program_ids = [i for kind, i in order if kind == "program"]
            answers = (
                [_event(r) for r in conn.execute(select(_ANSWERS).where(_ANSWERS.c.id.in_(answer_ids)))]
                if answer_ids
                else []
            )
            codes = (
                [_program(r) for r in conn.execute(programs().where(_CODE.c.id.in_(program_ids)))]
                if program_ids
                else []
            )
            help_ids = [i for kind, i in order if kind == "help"]
            shown = (
                [help_event(r) for r in conn.execute(select(_HELP).where(_HELP.c.id.in_(help_ids)))]
                if help_ids
                else []
            )
        return EventPage(answers, codes, total, offset, limit, order, shown)
