"""The store: every read and write the lesson server makes, each in one short transaction.

Learners are created lazily: a browser gets a signed id on its first visit, and the row appears
with its first answer, so crawlers that never answer leave nothing behind.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, Table, case, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from qkv.store.engine import PoolLimits, create_store_engine, describe_url
from qkv.store.errors import StoreError
from qkv.store.migrations import schema_version, upgrade
from qkv.store.tables import Answer, CodeSubmission, Learner, LessonState, ServerSecret

_LEARNERS: Table = Learner.__table__  # type: ignore[assignment]
_ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_STATE: Table = LessonState.__table__  # type: ignore[assignment]
_SECRETS: Table = ServerSecret.__table__  # type: ignore[assignment]

MAX_DISPLAY_NAME = 80


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class AnswerRecord:
    """One saved answer."""

    exercise_id: str
    answer: str
    correct: bool
    message: str
    counted_as_attempt: bool
    variant_seed: int | None
    created_at: datetime


@dataclass(frozen=True)
class CodeRecord:
    """One saved code submission; ``result`` is the grader's JSON document."""

    exercise_id: str
    source: str
    status: str
    passed: int
    total: int
    result: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class ExerciseActivity:
    """What a learner did on one exercise: counted attempts, all submissions, solved ever, the latest."""

    attempts: int
    submissions: int
    solved: bool
    last_answer: AnswerRecord | None = None
    last_code: CodeRecord | None = None


@dataclass(frozen=True)
class LessonActivity:
    """A learner's saved work on one lesson."""

    lesson_id: str
    variant_seed: int | None
    exercises: dict[str, ExerciseActivity] = field(default_factory=dict)


@dataclass(frozen=True)
class GradebookRow:
    """One learner on one exercise, as ``qkv progress export`` prints it."""

    learner_id: str
    display_name: str | None
    lesson_id: str
    exercise_id: str
    attempts: int
    submissions: int
    solved: bool
    best_score: str | None
    first_solved_at: datetime | None
    last_activity_at: datetime | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types, times as ISO 8601 strings (UTC)."""
        row = dict(self.__dict__)
        for key in ("first_solved_at", "last_activity_at"):
            value = row[key]
            row[key] = value.isoformat() + "Z" if value is not None else None
        return row


def clean_display_name(name: object) -> str | None:
    """Check and tidy a display name: trimmed, at most 80 characters, no control characters.

    Parameters
    ----------
    name : object
        What the learner typed; an empty string clears the name.

    Returns
    -------
    str or None
        The trimmed name, or None for an empty one.

    Raises
    ------
    ValueError
        If the name is not a string, is too long or holds control characters.

    Examples
    --------
    >>> clean_display_name("  Ada ")
    'Ada'
    >>> clean_display_name("") is None
    True
    """
    if not isinstance(name, str):
        raise ValueError(f"A display name must be text, not the {type(name).__name__} {name!r}.")
    trimmed = " ".join(name.split())
    if len(trimmed) > MAX_DISPLAY_NAME:
        raise ValueError(
            f"A display name may have at most {MAX_DISPLAY_NAME} characters, but this one has {len(trimmed)}."
        )
    if any(not ch.isprintable() for ch in trimmed):
        raise ValueError(f"The display name {trimmed!r} contains control characters; use letters and spaces.")
    return trimmed or None


def check_storable(text: str, what: str) -> str:
    r"""``text`` if both databases can store it as it is; otherwise a ValueError naming the character.

    PostgreSQL refuses NUL in text and no UTF-8 encoder takes a lone surrogate, so neither is ever
    stored (the web app already refuses both in request bodies; this holds for every other caller).

    Examples
    --------
    >>> check_storable("3, 2", "The answer")
    '3, 2'
    >>> check_storable("a\x00b", "The answer")
    Traceback (most recent call last):
    ...
    ValueError: The answer contains a NUL character (\x00), which cannot be stored.
    """
    if "\x00" in text:
        raise ValueError(f"{what} contains a NUL character (\\x00), which cannot be stored.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{what} contains a lone surrogate (\\u{ord(text[error.start]):04x}), which cannot be stored."
        ) from None
    return text


class Store:
    """The learners' saved work, in SQLite or PostgreSQL, on one SQLAlchemy engine.

    Parameters
    ----------
    url : str
        A database URL (see ``create_store_engine``).
    migrate : bool
        Bring the schema up to date on opening (the server does; a read-only export does not).
    must_exist : bool
        Refuse to create a new SQLite file.
    pool : PoolLimits, optional
        The connection pool's size and wait (see ``create_store_engine``).

    Raises
    ------
    StoreError
        If the database cannot be reached, or was written by a newer qkv.

    Examples
    --------
    >>> store = Store("sqlite://")
    >>> store.record_answer("a" * 36, "L9.1", "area", "12", correct=True, message="Right.")
    >>> store.lesson_activity("a" * 36, "L9.1").exercises["area"].solved
    True
    >>> store.close()
    """

    def __init__(
        self, url: str, *, migrate: bool = True, must_exist: bool = False, pool: PoolLimits | None = None
    ) -> None:
        self.url = url
        self.engine: Engine = create_store_engine(url, must_exist=must_exist, pool=pool)
        try:
            if migrate:
                upgrade(self.engine)
            else:
                with self.engine.connect() as conn:
                    version = schema_version(conn)
                if version == 0:
                    raise StoreError(f"The database {describe_url(url)} holds no qkv data yet.")
        except OperationalError as error:
            self.engine.dispose()
            raise StoreError(
                f"Cannot open the database {describe_url(url)}: {_first_line(error.orig)}."
            ) from None
        except BaseException:
            self.engine.dispose()
            raise

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    # -- transactions ----------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        try:
            with self.engine.connect().execution_options(qkv_write=True) as conn, conn.begin():
                yield conn
        except PoolTimeout as error:
            raise self._pool_exhausted("write", error) from None
        except OperationalError as error:
            raise StoreError(
                f"The database {describe_url(self.url)} refused a write: {_first_line(error)}."
            ) from None

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn, conn.begin():
                yield conn
        except PoolTimeout as error:
            raise self._pool_exhausted("read", error) from None
        except OperationalError as error:
            raise StoreError(
                f"The database {describe_url(self.url)} refused a read: {_first_line(error)}."
            ) from None

    def _pool_exhausted(self, action: str, error: PoolTimeout) -> StoreError:
        return StoreError(
            f"No connection to the database {describe_url(self.url)} came free in time for a {action}: "
            f"{_first_line(error)}."
        )

    def _insert_ignore(
        self, conn: Connection, table: Any, values: Mapping[str, Any], keys: list[str]
    ) -> None:
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        conn.execute(dialect.insert(table).values(**values).on_conflict_do_nothing(index_elements=keys))

    def _ensure_learner(self, conn: Connection, learner_id: str) -> None:
        now = _now()
        self._insert_ignore(
            conn, _LEARNERS, {"id": learner_id, "created_at": now, "last_seen_at": now}, ["id"]
        )
        conn.execute(update(_LEARNERS).where(_LEARNERS.c.id == learner_id).values(last_seen_at=now))

    # -- learners --------------------------------------------------------------------------------

    def learner_display_name(self, learner_id: str) -> str | None:
        """The learner's display name, or None (also for a learner with no saved work)."""
        with self._read() as conn:
            return conn.execute(select(_LEARNERS.c.display_name).where(_LEARNERS.c.id == learner_id)).scalar()

    def set_display_name(self, learner_id: str, name: str | None) -> str | None:
        """Save a display name (checked with ``clean_display_name``) and return it as stored."""
        cleaned = clean_display_name(name if name is not None else "")
        with self._write() as conn:
            self._ensure_learner(conn, learner_id)
            conn.execute(update(_LEARNERS).where(_LEARNERS.c.id == learner_id).values(display_name=cleaned))
        return cleaned

    # -- lesson state ----------------------------------------------------------------------------

    def variant_seed(self, learner_id: str, lesson_id: str) -> int | None:
        """The variant the learner works on in this lesson (None = the page's own numbers)."""
        with self._read() as conn:
            return conn.execute(
                select(_STATE.c.variant_seed).where(
                    _STATE.c.learner_id == learner_id, _STATE.c.lesson_id == lesson_id
                )
            ).scalar()

    def set_variant_seed(self, learner_id: str, lesson_id: str, seed: int | None) -> None:
        """Remember the learner's variant for this lesson."""
        now = _now()
        with self._write() as conn:
            self._ensure_learner(conn, learner_id)
            self._insert_ignore(
                conn,
                _STATE,
                {"learner_id": learner_id, "lesson_id": lesson_id, "variant_seed": seed, "updated_at": now},
                ["learner_id", "lesson_id"],
            )
            conn.execute(
                update(_STATE)
                .where(_STATE.c.learner_id == learner_id, _STATE.c.lesson_id == lesson_id)
                .values(variant_seed=seed, updated_at=now)
            )

    # -- work ------------------------------------------------------------------------------------

    def record_answer(
        self,
        learner_id: str,
        lesson_id: str,
        exercise_id: str,
        answer: str,
        *,
        correct: bool,
        message: str,
        counted_as_attempt: bool = True,
        variant_seed: int | None = None,
        mistake: str | None = None,
    ) -> None:
        """Save one answer (every attempt is kept); ValueError for text that cannot be stored.

        ``mistake`` is the id of the named mistake the answer matched, if any (at most 64 characters).
        """
        check_storable(answer, "The answer")
        check_storable(message, "The feedback message")
        if mistake is not None and len(check_storable(mistake, "The mistake id")) > 64:
            raise ValueError(f"A mistake id may have at most 64 characters, but {mistake[:80]!r} has more.")
        with self._write() as conn:
            self._ensure_learner(conn, learner_id)
            conn.execute(
                insert(_ANSWERS).values(
                    learner_id=learner_id,
                    lesson_id=lesson_id,
                    exercise_id=exercise_id,
                    variant_seed=variant_seed,
                    answer=answer,
                    correct=correct,
                    message=message,
                    counted_as_attempt=counted_as_attempt,
                    mistake=mistake,
                    created_at=_now(),
                )
            )

    def record_code(
        self, learner_id: str, lesson_id: str, exercise_id: str, source: str, result: Mapping[str, Any]
    ) -> None:
        """Save one code submission with the grader's result document; ValueError for unstorable text."""
        check_storable(source, "The program")
        tests = result.get("tests") or []
        passed = sum(1 for test in tests if isinstance(test, Mapping) and test.get("status") == "pass")
        with self._write() as conn:
            self._ensure_learner(conn, learner_id)
            conn.execute(
                insert(_CODE).values(
                    learner_id=learner_id,
                    lesson_id=lesson_id,
                    exercise_id=exercise_id,
                    source=source,
                    status=str(result.get("status", "error"))[:16],
                    passed=passed,
                    total=len(tests),
                    result_json=json.dumps(result, allow_nan=False),
                    created_at=_now(),
                )
            )

    def lesson_activity(self, learner_id: str, lesson_id: str) -> LessonActivity:
        """Everything the learner saved on one lesson, summarised per exercise."""
        mine_a = (_ANSWERS.c.learner_id == learner_id, _ANSWERS.c.lesson_id == lesson_id)
        mine_c = (_CODE.c.learner_id == learner_id, _CODE.c.lesson_id == lesson_id)
        with self._read() as conn:
            seed = conn.execute(
                select(_STATE.c.variant_seed).where(
                    _STATE.c.learner_id == learner_id, _STATE.c.lesson_id == lesson_id
                )
            ).scalar()
            answer_totals = conn.execute(
                select(
                    _ANSWERS.c.exercise_id,
                    func.sum(case((_ANSWERS.c.counted_as_attempt, 1), else_=0)),
                    func.count(),
                    func.max(case((_ANSWERS.c.correct, 1), else_=0)),
                    func.max(_ANSWERS.c.id),
                )
                .where(*mine_a)
                .group_by(_ANSWERS.c.exercise_id)
            ).all()
            last_ids = [row[4] for row in answer_totals]
            last_answers = {
                row.exercise_id: row
                for row in conn.execute(select(_ANSWERS).where(_ANSWERS.c.id.in_(last_ids))).all()
            }
            code_totals = conn.execute(
                select(
                    _CODE.c.exercise_id,
                    func.count(),
                    func.max(case((_CODE.c.status == "pass", 1), else_=0)),
                    func.max(_CODE.c.id),
                )
                .where(*mine_c)
                .group_by(_CODE.c.exercise_id)
            ).all()
            last_code = {
                row.exercise_id: row
                for row in conn.execute(
                    select(_CODE).where(_CODE.c.id.in_([r[3] for r in code_totals]))
                ).all()
            }
        exercises: dict[str, ExerciseActivity] = {}
        for exercise_id, attempts, submissions, solved, _ in answer_totals:
            row = last_answers[exercise_id]
            exercises[exercise_id] = ExerciseActivity(
                attempts=int(attempts or 0),
                submissions=int(submissions),
                solved=bool(solved),
                last_answer=AnswerRecord(
                    exercise_id=row.exercise_id,
                    answer=row.answer,
                    correct=bool(row.correct),
                    message=row.message,
                    counted_as_attempt=bool(row.counted_as_attempt),
                    variant_seed=row.variant_seed,
                    created_at=row.created_at,
                ),
            )
        for exercise_id, submissions, solved, _ in code_totals:
            row = last_code[exercise_id]
            exercises[exercise_id] = ExerciseActivity(
                attempts=int(submissions),
                submissions=int(submissions),
                solved=bool(solved),
                last_code=CodeRecord(
                    exercise_id=row.exercise_id,
                    source=row.source,
                    status=row.status,
                    passed=int(row.passed),
                    total=int(row.total),
                    result=json.loads(row.result_json),
                    created_at=row.created_at,
                ),
            )
        return LessonActivity(lesson_id=lesson_id, variant_seed=seed, exercises=exercises)

    # -- the gradebook ---------------------------------------------------------------------------

    def gradebook(self, exercises: Iterable[tuple[str, str]] = ()) -> list[GradebookRow]:
        """One row per learner and exercise, sorted by learner then lesson and exercise.

        Parameters
        ----------
        exercises : iterable of (lesson_id, exercise_id)
            Exercises every learner gets a row for, even untouched ones (attempts 0). Exercises
            with saved work get a row whether listed or not.

        Returns
        -------
        list of GradebookRow
        """
        rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        a, c = _ANSWERS.c, _CODE.c
        with self._read() as conn:
            learners = {
                row.id: row.display_name
                for row in conn.execute(select(_LEARNERS.c.id, _LEARNERS.c.display_name))
            }
            for row in conn.execute(
                select(
                    a.learner_id,
                    a.lesson_id,
                    a.exercise_id,
                    func.sum(case((a.counted_as_attempt, 1), else_=0)),
                    func.count(),
                    func.max(case((a.correct, 1), else_=0)),
                    func.min(case((a.correct, a.created_at), else_=None)),
                    func.max(a.created_at),
                ).group_by(a.learner_id, a.lesson_id, a.exercise_id)
            ):
                rows[(row[0], row[1], row[2])] = {
                    "attempts": int(row[3] or 0),
                    "submissions": int(row[4]),
                    "solved": bool(row[5]),
                    "best_score": None,
                    "first_solved_at": row[6],
                    "last_activity_at": row[7],
                }
            for row in conn.execute(
                select(
                    c.learner_id,
                    c.lesson_id,
                    c.exercise_id,
                    func.count(),
                    func.max(case((c.status == "pass", 1), else_=0)),
                    func.min(case((c.status == "pass", c.created_at), else_=None)),
                    func.max(c.created_at),
                    func.max(c.passed),
                    func.max(c.total),
                ).group_by(c.learner_id, c.lesson_id, c.exercise_id)
            ):
                rows[(row[0], row[1], row[2])] = {
                    "attempts": int(row[3]),
                    "submissions": int(row[3]),
                    "solved": bool(row[4]),
                    "best_score": f"{int(row[7])}/{int(row[8])}",
                    "first_solved_at": row[5],
                    "last_activity_at": row[6],
                }
        empty = {
            "attempts": 0,
            "submissions": 0,
            "solved": False,
            "best_score": None,
            "first_solved_at": None,
            "last_activity_at": None,
        }
        wanted = list(exercises)
        for learner_id in learners:
            for lesson_id, exercise_id in wanted:
                rows.setdefault((learner_id, lesson_id, exercise_id), dict(empty))
        order = {key: index for index, key in enumerate(wanted)}
        keys = sorted(rows, key=lambda k: (k[0], order.get((k[1], k[2]), len(order)), k[1], k[2]))
        return [
            GradebookRow(
                learner_id=key[0],
                display_name=learners.get(key[0]),
                lesson_id=key[1],
                exercise_id=key[2],
                **rows[key],
            )
            for key in keys
        ]

    # -- shared secrets --------------------------------------------------------------------------

    def shared_secret(self, name: str) -> str:
        """A random secret stored once in the database and shared by every server that uses it.

        The first server to ask creates it; the others read the same value.
        """
        with self._write() as conn:
            self._insert_ignore(conn, _SECRETS, {"name": name, "value": secrets.token_urlsafe(48)}, ["name"])
            value = conn.execute(select(_SECRETS.c.value).where(_SECRETS.c.name == name)).scalar_one()
        return str(value)

    def ping(self) -> None:
        """Run a trivial query; raises StoreError if the database is unreachable."""
        with self._read() as conn:
            conn.execute(select(1))


def _first_line(error: object) -> str:
    error = getattr(error, "orig", None) or error
    text = str(error).strip().splitlines()
    return text[0].rstrip(".") if text else type(error).__name__


__all__ = [
    "AnswerRecord",
    "CodeRecord",
    "ExerciseActivity",
    "GradebookRow",
    "LessonActivity",
    "Store",
    "clean_display_name",
]
