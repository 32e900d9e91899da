"""The restore drill: a class's data → ``qkv backup`` → a fresh database → ``qkv restore`` → the same class.

On SQLite and on PostgreSQL (each drill gets two fresh PostgreSQL databases of its own, made with
``CREATE DATABASE`` and dropped afterwards): learners with names, answers, graded programs, drafts and
variants, and a row in every table that names a learner (the LMS outbox, accounts, sessions, …). After
the restore the gradebook, the events export and the LMS file (``qkv progress export``, byte for byte),
the LMS outbox and every row of every table are those of the original. The SQLite backup is taken while
another thread keeps writing answers, as a serving class does, and the copy holds a consistent moment.
Then the refusals, each a sentence: restoring over a database that holds one, a backup of the other
kind, a file that is no backup.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import MetaData, create_engine, select, text
from sqlalchemy.engine import make_url

from qkv.cli import build
from qkv.store import LATEST_VERSION, Store
from qkv.store.lti.outbox import ScoreOutbox
from qkv.store.work.retention import DEFAULT_KEEP
from tests.store.conftest import postgres_admin_url
from tests.store.learner.test_personal_data import seed_everything

__all__ = ["postgres_admin_url"]

LEARNERS = [f"00000000-0000-4000-8000-{n:012d}" for n in range(1, 5)]


def qkv(*arguments: str) -> tuple[int, str]:
    """Run ``qkv ARGUMENTS`` in-process: the exit code and what it printed (stdout and stderr)."""
    result = CliRunner().invoke(build(), list(arguments), catch_exceptions=False)  # type: ignore[arg-type]
    return result.exit_code, result.output


@pytest.fixture
def fresh_postgres(postgres_admin_url: str) -> Iterator[object]:
    """``fresh_postgres()``: the URL of a new, empty PostgreSQL database (dropped after the test)."""
    made: list[str] = []
    admin = create_engine(postgres_admin_url, isolation_level="AUTOCOMMIT")

    def make() -> str:
        name = f"qkv_drill_{uuid.uuid4().hex[:10]}"
        with admin.connect() as conn:
            conn.execute(text(f"CREATE DATABASE {name}"))
        made.append(name)
        return make_url(postgres_admin_url).set(database=name).render_as_string(hide_password=False)

    yield make
    with admin.connect() as conn:
        for name in made:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def two_databases(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The class's database and the fresh one the backup is restored into."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'class.sqlite3'}", f"sqlite:///{tmp_path / 'restored.sqlite3'}"
    make = request.getfixturevalue("fresh_postgres")
    return make(), make()


def _a_class(url: str) -> None:
    store = Store(url)
    try:
        for number, learner in enumerate(LEARNERS):
            seed_everything(store, learner)
            store.learners.set_display_name(learner, f"Learner {number}")
        with store.database.write() as conn:  # one score still waiting for its LMS, one parked, the rest sent
            conn.execute(text("""UPDATE lti_score_outbox SET score_json = '{"scoreGiven": 1}'"""))
            conn.execute(
                text("UPDATE lti_score_outbox SET sent_at = NULL, parked_at = NULL WHERE learner_id = :l"),
                {"l": LEARNERS[0]},
            )
            conn.execute(
                text("UPDATE lti_score_outbox SET sent_at = NULL WHERE learner_id = :l"), {"l": LEARNERS[1]}
            )
    finally:
        store.close()


def _every_row(url: str) -> dict[str, list[tuple[object, ...]]]:
    engine = create_engine(url)
    try:
        meta = MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            return {
                table.name: sorted(tuple(map(repr, row)) for row in conn.execute(select(table)))
                for table in meta.sorted_tables
            }
    finally:
        engine.dispose()


def _exports(url: str) -> dict[str, str]:
    found = {}
    for fmt in ("csv", "json", "events", "lms"):
        code, output = qkv("progress", "export", "--format", fmt, "--database-url", url)
        assert code == 0, output
        found[fmt] = output
    store = Store(url)
    try:
        outbox = ScoreOutbox(store.database)
        found["outbox"] = repr((outbox.waiting(), outbox.parked(), outbox.delivered_count()))
    finally:
        store.close()
    return found


@pytest.mark.timeout(300)
def test_the_restore_drill_gives_back_the_same_class(two_databases: tuple[str, str], tmp_path: Path) -> None:
    original, fresh = two_databases
    _a_class(original)
    before = _exports(original)
    assert "Learner 3" in before["csv"] and LEARNERS[0] in before["outbox"]
    rows = _every_row(original)
    assert sum(map(len, rows.values())) > 40 and rows["lti_score_outbox"]

    file = tmp_path / "class.backup"
    code, said = qkv("backup", str(file), "--database-url", original)
    assert code == 0, said
    assert f"(schema version {LATEST_VERSION}) into {file}" in said
    assert file.stat().st_mode & 0o077 == 0  # every learner's work and the signing key: the owner's only

    code, said = qkv("restore", str(file), "--database-url", fresh)
    assert code == 0, said
    assert _every_row(fresh) == rows
    assert _exports(fresh) == before


@pytest.mark.timeout(120)
def test_a_sqlite_backup_taken_while_a_class_writes_is_one_consistent_moment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'busy.sqlite3'}"
    store = Store(url)
    stop = threading.Event()
    written = threading.Event()

    def keep_writing() -> None:
        count = 0
        while not stop.is_set():
            store.progress.record_answer(LEARNERS[0], "L4.1", "q", str(count), correct=False, message="No.")
            count += 1
            if count == 20:
                written.set()

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        assert written.wait(60)
        code, said = qkv("backup", str(tmp_path / "busy.backup"), "--database-url", url)
    finally:
        stop.set()
        writer.join()
        store.close()
    assert code == 0, said
    assert (
        qkv(
            "restore", str(tmp_path / "busy.backup"), "--database-url", f"sqlite:///{tmp_path / 'r.sqlite3'}"
        )[0]
        == 0
    )
    copy = Store(f"sqlite:///{tmp_path / 'r.sqlite3'}")
    try:
        attempts = copy.progress.lesson_activity(LEARNERS[0], "L4.1").exercises["q"].attempts
        with copy.database.read() as conn:
            kept = conn.execute(text("SELECT COUNT(*) FROM answers")).scalar_one()
            assert conn.execute(text("PRAGMA integrity_check")).scalar_one() == "ok"
    finally:
        copy.close()
    # Each answer and its count are written in one transaction: in a copy of one moment the kept rows (the
    # last DEFAULT_KEEP of these wrong answers) and the count of attempts agree.
    assert attempts >= 20
    assert kept == min(attempts, DEFAULT_KEEP)


def test_restoring_over_a_database_that_holds_one_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    Store(url).close()
    assert qkv("backup", str(tmp_path / "b"), "--database-url", url)[0] == 0
    code, said = qkv("restore", str(tmp_path / "b"), "--database-url", url)
    assert code == 1
    assert "already exists; restore into a new file" in said and "Traceback" not in said


@pytest.mark.postgres
def test_restoring_into_a_postgresql_database_that_holds_one_is_refused(
    fresh_postgres: object, tmp_path: Path
) -> None:
    assert callable(fresh_postgres)
    url = fresh_postgres()
    Store(url).close()
    assert qkv("backup", str(tmp_path / "b"), "--database-url", url)[0] == 0
    code, said = qkv("restore", str(tmp_path / "b"), "--database-url", url)
    assert code == 1
    assert f"already holds a qkv database (schema version {LATEST_VERSION})" in said
    code, said = qkv(
        "restore", str(tmp_path / "b"), "--database-url", f"sqlite:///{tmp_path / 'new.sqlite3'}"
    )
    assert code == 1 and "is a PostgreSQL backup, so it restores into a PostgreSQL database" in said


def test_a_file_that_is_no_backup_is_refused_with_a_sentence(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database")
    code, said = qkv("restore", str(notes), "--database-url", f"sqlite:///{tmp_path / 'new.sqlite3'}")
    assert code == 1
    assert "is neither a SQLite database nor a pg_dump custom-format archive" in said
    code, said = qkv(
        "backup", str(tmp_path / "b"), "--database-url", f"sqlite:///{tmp_path / 'none.sqlite3'}"
    )
    assert code == 1 and "There is no qkv database at" in said
