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
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    LargeBinary,
    Table,
    case,
    cast,
    delete,
    exists,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from qkv.store.budget import (
    DEFAULT_CLIENT_BYTES_PER_DAY,
    Keeping,
    check_budget,
    check_client,
    keeping,
    source_hash,
    stored_result,
    text_bytes,
)
from qkv.store.engine import PoolLimits, create_store_engine, describe_url
from qkv.store.migrations import schema_version, upgrade
from qkv.store.store_error import StoreError
from qkv.store.tables import (
    Answer,
    ClientStorage,
    CodeDraft,
    CodeSource,
    CodeSubmission,
    ExerciseTotals,
    LearnerRow,
    LessonState,
    ServerSecret,
)

_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
_ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_STATE: Table = LessonState.__table__  # type: ignore[assignment]
_DRAFTS: Table = CodeDraft.__table__  # type: ignore[assignment]
_SECRETS: Table = ServerSecret.__table__  # type: ignore[assignment]
_TOTALS: Table = ExerciseTotals.__table__  # type: ignore[assignment]
_SOURCES: Table = CodeSource.__table__  # type: ignore[assignment]
_BUDGETS: Table = ClientStorage.__table__  # type: ignore[assignment]
DEFAULT_KEEP = 20  # answers and programs kept per learner and exercise (besides the first right / best one)

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
    failed_runs: int = 0  # code: the learner's own new programs that did not pass every test


@dataclass(frozen=True)
class LessonActivity:
    """A learner's saved work on one lesson."""

    lesson_id: str
    variant_seed: int | None
    exercises: dict[str, ExerciseActivity] = field(default_factory=dict)
    # code exercise id -> the editor's latest saved text (a draft, or the last program sent to the grader)
    drafts: dict[str, str] = field(default_factory=dict)


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
    keep : int
        Answers and programs kept per learner and exercise: the last ``keep`` of each, plus the first
        correct answer and the best program. Older ones are deleted as new ones arrive; the counts the
        gradebook shows (attempts, submissions, solved, best score, times) are kept as numbers and stay
        exact.
    client_bytes_per_day : int
        Bytes one client may store in a day (UTC) through the writes that name it (``client=``): past
        it only the best and the last program or answer of each learner and exercise are kept and drafts
        may not grow; past a quarter more, nothing more is stored that day (see ``qkv.store.budget``).

    Raises
    ------
    StoreError
        If the database cannot be reached, or was written by a newer qkv.

    Examples
    --------
    >>> store = Store("sqlite://")
    >>> store.record_answer("a" * 36, "L9.1", "area", "12", correct=True, message="Right.")
    <Keeping.ALL: 'all'>
    >>> store.lesson_activity("a" * 36, "L9.1").exercises["area"].solved
    True
    >>> store.close()
    """

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        must_exist: bool = False,
        pool: PoolLimits | None = None,
        keep: int = DEFAULT_KEEP,
        client_bytes_per_day: int = DEFAULT_CLIENT_BYTES_PER_DAY,
    ) -> None:
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep must be a whole number of at least 1, not {keep!r}.")
        self.keep = keep
        self.client_bytes_per_day = check_budget(client_bytes_per_day)
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

    def _count(
        self,
        conn: Connection,
        key: tuple[str, str, str],
        now: datetime,
        *,
        attempt: bool,
        solved: bool,
        score: tuple[int, int] | None = None,
        new_try: bool = True,
    ) -> None:
        """Add one answer or program to the learner's totals for the exercise (one atomic row update)."""
        learner_id, lesson_id, exercise_id = key
        zero = {"attempts": 0, "submissions": 0, "solved": False, "failed_runs": 0, "last_activity_at": now}
        self._insert_ignore(
            conn,
            _TOTALS,
            {"learner_id": learner_id, "lesson_id": lesson_id, "exercise_id": exercise_id, **zero},
            ["learner_id", "lesson_id", "exercise_id"],
        )
        t = _TOTALS.c
        changes: dict[str, Any] = {
            "attempts": t.attempts + (1 if attempt else 0),
            "submissions": t.submissions + 1,
            "last_activity_at": now,
        }
        if solved:
            changes["solved"] = True
            changes["first_solved_at"] = func.coalesce(t.first_solved_at, now)
        if score is not None:
            if not solved and new_try:
                changes["failed_runs"] = t.failed_runs + 1
            better = (t.best_passed.is_(None)) | (t.best_passed < score[0])
            changes["best_passed"] = case((better, score[0]), else_=t.best_passed)
            changes["best_total"] = case((better, score[1]), else_=t.best_total)
        conn.execute(update(_TOTALS).where(*_of(_TOTALS, key)).values(**changes))

    def _prune(
        self, conn: Connection, table: Table, key: tuple[str, str, str], *, keep_also: Any, keeping: Keeping
    ) -> None:
        """Delete the rows of ``key`` beyond the last ``keep`` (the last one past a client's budget),
        except the one ``keep_also`` selects."""
        keep = self.keep if keeping is Keeping.ALL else 1
        newest = select(table.c.id).where(*_of(table, key)).order_by(table.c.id.desc()).limit(keep).subquery()
        conn.execute(
            delete(table).where(
                *_of(table, key),
                table.c.id.not_in(select(newest.c.id)),
                table.c.id != func.coalesce(keep_also, -1),
            )
        )

    # -- the clients' storage budgets -------------------------------------------------------------

    def _keeping(self, conn: Connection, client: str | None) -> Keeping:
        """What is kept of the next write of ``client`` (everything for a write that names none)."""
        if client is None:
            return Keeping.ALL
        spent = conn.execute(
            select(_BUDGETS.c.stored_bytes).where(
                _BUDGETS.c.client == check_client(client), _BUDGETS.c.day == _now().date()
            )
        ).scalar()
        return keeping(int(spent or 0), self.client_bytes_per_day)

    def _charge(self, conn: Connection, client: str | None, stored: int) -> None:
        """Add ``stored`` bytes to the client's count for today (one atomic row update)."""
        if client is None or stored <= 0:
            return
        day = _now().date()
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        created = conn.execute(
            dialect.insert(_BUDGETS)
            .values(client=client, day=day, stored_bytes=0)
            .on_conflict_do_nothing(index_elements=["client", "day"])
            .returning(_BUDGETS.c.day)
        ).first()
        if created is not None:  # the first write of a client's day: forget the days before yesterday
            conn.execute(delete(_BUDGETS).where(_BUDGETS.c.day < day - timedelta(days=1)))
        conn.execute(
            update(_BUDGETS)
            .where(_BUDGETS.c.client == client, _BUDGETS.c.day == day)
            .values(stored_bytes=_BUDGETS.c.stored_bytes + stored)
        )

    def client_storage(self, client: str) -> int:
        """Bytes the client stored today (UTC), as its budget counts them.

        Examples
        --------
        >>> store = Store("sqlite://")
        >>> store.save_draft("a" * 36, "L9.1", "area", "x = 1\\n", client="192.0.2.1")
        True
        >>> store.client_storage("192.0.2.1")
        6
        >>> store.close()
        """
        with self._read() as conn:
            spent = conn.execute(
                select(_BUDGETS.c.stored_bytes).where(
                    _BUDGETS.c.client == check_client(client), _BUDGETS.c.day == _now().date()
                )
            ).scalar()
        return int(spent or 0)

    # -- learners --------------------------------------------------------------------------------

    def has_saved_work(self, learner_id: str) -> bool:
        """Whether the learner has saved anything: an answer, a program, a draft, a name, a variant, a seed.

        Examples
        --------
        >>> store = Store("sqlite://")
        >>> store.has_saved_work("c" * 36)
        False
        >>> _ = store.set_display_name("c" * 36, "Ada"); store.has_saved_work("c" * 36)
        True
        >>> store.close()
        """
        with self._read() as conn:
            found = conn.execute(select(_LEARNERS.c.id).where(_LEARNERS.c.id == learner_id)).first()
        return found is not None

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
        client: str | None = None,
    ) -> Keeping:
        """Save one answer (counted, then pruned to the last ``keep``); ValueError for unstorable text.

        ``mistake`` is the id of the named mistake the answer matched, if any (at most 64 characters).
        ``client`` (an address) is the client whose storage budget the answer counts against; the answer
        is counted in the gradebook whatever the budget, and the returned ``Keeping`` says what was kept.
        """
        check_storable(answer, "The answer")
        check_storable(message, "The feedback message")
        if mistake is not None and len(check_storable(mistake, "The mistake id")) > 64:
            raise ValueError(f"A mistake id may have at most 64 characters, but {mistake[:80]!r} has more.")
        now = _now()
        key = (learner_id, lesson_id, exercise_id)
        with self._write() as conn:
            self._ensure_learner(conn, learner_id)
            kept = self._keeping(conn, client)
            self._count(conn, key, now, attempt=counted_as_attempt, solved=correct)
            if kept is Keeping.NOTHING:
                return kept
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
                    created_at=now,
                )
            )
            self._charge(conn, client, text_bytes(answer) + text_bytes(message) + text_bytes(mistake or ""))
            first_right = (
                select(func.min(_ANSWERS.c.id))
                .where(*_of(_ANSWERS, key), _ANSWERS.c.correct)
                .scalar_subquery()
            )
            self._prune(conn, _ANSWERS, key, keep_also=first_right, keeping=kept)
        return kept

    def record_code(
        self,
        learner_id: str,
        lesson_id: str,
        exercise_id: str,
        source: str,
        result: Mapping[str, Any],
        *,
        own_work: bool = True,
        client: str | None = None,
    ) -> Keeping:
        """Save one code submission with the grader's result document; ValueError for unstorable text.

        A failed run counts in ``failed_runs`` only when it is a new try: ``own_work`` (the caller's
        judgement, e.g. not the exercise's starter code) and not the same text as the learner's previous
        program, so pressing Run again on unchanged code earns nothing.

        The stored result keeps a few KiB of each text (``qkv.store.budget.stored_result``), and the
        learner's program text is stored once however often it is sent. ``client`` (an address) is the
        client whose storage budget the program counts against; the run is counted in the gradebook
        whatever the budget, and the returned ``Keeping`` says what was kept.
        """
        check_storable(source, "The program")
        tests = result.get("tests") or []
        passed = sum(1 for test in tests if isinstance(test, Mapping) and test.get("status") == "pass")
        status = str(result.get("status", "error"))[:16]
        document = json.dumps(stored_result(result), allow_nan=False, separators=(",", ":"))
        digest = source_hash(source)
        now = _now()
        key = (learner_id, lesson_id, exercise_id)
        with self._write() as conn:
            self._ensure_learner(conn, learner_id)
            kept = self._keeping(conn, client)
            previous = conn.execute(
                select(_source_of_program()).where(*_of(_CODE, key)).order_by(_CODE.c.id.desc()).limit(1)
            ).scalar()
            new_try = own_work and (previous is None or previous.strip() != source.strip())
            stored = 0
            if kept is not Keeping.NOTHING:
                stored = text_bytes(document) + self._put_source(conn, learner_id, digest, source)
                conn.execute(
                    insert(_CODE).values(
                        learner_id=learner_id,
                        lesson_id=lesson_id,
                        exercise_id=exercise_id,
                        source="",
                        source_sha256=digest,
                        status=status,
                        passed=passed,
                        total=len(tests),
                        result_json=document,
                        created_at=now,
                    )
                )
            self._count(
                conn,
                key,
                now,
                attempt=True,
                solved=status == "pass",
                score=(passed, len(tests)),
                new_try=new_try,
            )
            if kept is not Keeping.NOTHING:
                best = (
                    select(_CODE.c.id)
                    .where(*_of(_CODE, key))
                    .order_by(_CODE.c.passed.desc(), _CODE.c.id)
                    .limit(1)
                    .scalar_subquery()
                )
                self._prune(conn, _CODE, key, keep_also=best, keeping=kept)
                self._drop_unused_sources(conn, learner_id)
            # What was sent to the grader is also the editor's latest text; past the budget a draft may
            # not grow, so a longer one is dropped (the page then shows the last kept program).
            grown = self._put_draft(conn, key, source, kept, drop_if_refused=True)
            self._charge(conn, client, stored + max(grown, 0))
        return kept

    def _put_source(self, conn: Connection, learner_id: str, digest: str, source: str) -> int:
        """Store the learner's program text under its hash unless it is there; the bytes it added."""
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        added = conn.execute(
            dialect.insert(_SOURCES)
            .values(learner_id=learner_id, sha256=digest, source=source)
            .on_conflict_do_nothing(index_elements=["learner_id", "sha256"])
            .returning(_SOURCES.c.sha256)  # a row only when it was added (rowcount is not reliable here)
        ).first()
        return text_bytes(source) if added is not None else 0

    def _drop_unused_sources(self, conn: Connection, learner_id: str) -> None:
        """Delete the learner's program texts that no kept program points at any more."""
        used = exists().where(_CODE.c.learner_id == learner_id, _CODE.c.source_sha256 == _SOURCES.c.sha256)
        conn.execute(delete(_SOURCES).where(_SOURCES.c.learner_id == learner_id, ~used))

    def save_draft(
        self, learner_id: str, lesson_id: str, exercise_id: str, source: str, *, client: str | None = None
    ) -> bool:
        """Keep the editor's text of a code exercise (one draft per exercise; the newest wins).

        The draft's growth counts against ``client``'s storage budget (an address, if given); past the
        budget a draft may be replaced by one no longer than it, and False says a longer one was not kept.
        """
        check_storable(source, "The draft")
        with self._write() as conn:
            self._ensure_learner(conn, learner_id)
            kept = self._keeping(conn, client)
            grown = self._put_draft(conn, (learner_id, lesson_id, exercise_id), source, kept)
            self._charge(conn, client, grown)
        return grown >= 0

    def _put_draft(
        self,
        conn: Connection,
        key: tuple[str, str, str],
        source: str,
        kept: Keeping,
        *,
        drop_if_refused: bool = False,
    ) -> int:
        """Save the draft; the bytes it grew by, or -1 when it would grow past the client's budget.

        A refused draft stays as it was, or with ``drop_if_refused`` is deleted.
        """
        now = _now()
        mine = _of(_DRAFTS, key)
        length = (
            func.octet_length(_DRAFTS.c.source)
            if conn.dialect.name == "postgresql"
            else func.length(cast(_DRAFTS.c.source, LargeBinary))
        )
        before = conn.execute(select(length).where(*mine)).scalar()
        grown = text_bytes(source) - int(before or 0)
        if grown > 0 and kept is not Keeping.ALL:
            if drop_if_refused:
                conn.execute(delete(_DRAFTS).where(*mine))
            return -1
        if before is None:
            learner_id, lesson_id, exercise_id = key
            dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
            added = conn.execute(
                dialect.insert(_DRAFTS)
                .values(
                    learner_id=learner_id,
                    lesson_id=lesson_id,
                    exercise_id=exercise_id,
                    source=source,
                    updated_at=now,
                )
                .on_conflict_do_nothing(index_elements=["learner_id", "lesson_id", "exercise_id"])
                .returning(_DRAFTS.c.learner_id)
            ).first()
            if added is not None:  # not written a second time (on PostgreSQL that would store it twice)
                return max(grown, 0)
        conn.execute(update(_DRAFTS).where(*mine).values(source=source, updated_at=now))
        return max(grown, 0)

    def lesson_activity(self, learner_id: str, lesson_id: str) -> LessonActivity:
        """Everything the learner saved on one lesson, summarised per exercise.

        The counts come from the kept totals (exact even after old rows were pruned); the last answer or
        program from the rows.
        """
        mine_a = (_ANSWERS.c.learner_id == learner_id, _ANSWERS.c.lesson_id == lesson_id)
        mine_c = (_CODE.c.learner_id == learner_id, _CODE.c.lesson_id == lesson_id)
        with self._read() as conn:
            seed = conn.execute(
                select(_STATE.c.variant_seed).where(
                    _STATE.c.learner_id == learner_id, _STATE.c.lesson_id == lesson_id
                )
            ).scalar()
            totals = {
                row.exercise_id: row
                for row in conn.execute(
                    select(_TOTALS).where(
                        _TOTALS.c.learner_id == learner_id, _TOTALS.c.lesson_id == lesson_id
                    )
                )
            }
            last_answer_ids = select(func.max(_ANSWERS.c.id)).where(*mine_a).group_by(_ANSWERS.c.exercise_id)
            last_answers = {
                row.exercise_id: row
                for row in conn.execute(select(_ANSWERS).where(_ANSWERS.c.id.in_(last_answer_ids))).all()
            }
            last_code_ids = select(func.max(_CODE.c.id)).where(*mine_c).group_by(_CODE.c.exercise_id)
            last_code = {
                row.exercise_id: row for row in conn.execute(_programs().where(_CODE.c.id.in_(last_code_ids)))
            }
            drafts = {
                row.exercise_id: row.source
                for row in conn.execute(
                    select(_DRAFTS.c.exercise_id, _DRAFTS.c.source).where(
                        _DRAFTS.c.learner_id == learner_id, _DRAFTS.c.lesson_id == lesson_id
                    )
                ).all()
            }
        exercises: dict[str, ExerciseActivity] = {}
        for exercise_id, total in totals.items():
            answer, code = last_answers.get(exercise_id), last_code.get(exercise_id)
            exercises[exercise_id] = ExerciseActivity(
                attempts=int(total.attempts),
                submissions=int(total.submissions),
                solved=bool(total.solved),
                failed_runs=int(total.failed_runs),
                last_answer=None
                if answer is None
                else AnswerRecord(
                    exercise_id=answer.exercise_id,
                    answer=answer.answer,
                    correct=bool(answer.correct),
                    message=answer.message,
                    counted_as_attempt=bool(answer.counted_as_attempt),
                    variant_seed=answer.variant_seed,
                    created_at=answer.created_at,
                ),
                last_code=None
                if code is None
                else CodeRecord(
                    exercise_id=code.exercise_id,
                    source=code.source,
                    status=code.status,
                    passed=int(code.passed),
                    total=int(code.total),
                    result=json.loads(code.result_json),
                    created_at=code.created_at,
                ),
            )
        return LessonActivity(lesson_id=lesson_id, variant_seed=seed, exercises=exercises, drafts=drafts)

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
        with self._read() as conn:
            learners = {
                row.id: row.display_name
                for row in conn.execute(select(_LEARNERS.c.id, _LEARNERS.c.display_name))
            }
            for row in conn.execute(select(_TOTALS)):
                best = None if row.best_passed is None else f"{int(row.best_passed)}/{int(row.best_total)}"
                rows[(row.learner_id, row.lesson_id, row.exercise_id)] = {
                    "attempts": int(row.attempts),
                    "submissions": int(row.submissions),
                    "solved": bool(row.solved),
                    "best_score": best,
                    "first_solved_at": row.first_solved_at,
                    "last_activity_at": row.last_activity_at,
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


def _source_of_program() -> Any:
    """A program's text: from code_sources by its hash, or its own column for programs saved before."""
    shared = (
        select(_SOURCES.c.source)
        .where(_SOURCES.c.learner_id == _CODE.c.learner_id, _SOURCES.c.sha256 == _CODE.c.source_sha256)
        .scalar_subquery()
    )
    return func.coalesce(shared, _CODE.c.source).label("source")


def _programs() -> Any:
    """Every column of code_submissions, with ``source`` the program's text wherever it is stored."""
    columns = [column for column in _CODE.c if column.name != "source"]
    return select(*columns, _source_of_program())


def _of(table: Table, key: tuple[str, str, str]) -> tuple[Any, ...]:
    """The conditions that pick one learner's rows for one exercise."""
    learner_id, lesson_id, exercise_id = key
    return (
        table.c.learner_id == learner_id,
        table.c.lesson_id == lesson_id,
        table.c.exercise_id == exercise_id,
    )


def _first_line(error: object) -> str:
    error = getattr(error, "orig", None) or error
    text = str(error).strip().splitlines()
    return text[0].rstrip(".") if text else type(error).__name__


__all__ = [
    "AnswerRecord",
    "CodeRecord",
    "ExerciseActivity",
    "GradebookRow",
    "Keeping",
    "LessonActivity",
    "Store",
    "clean_display_name",
]
