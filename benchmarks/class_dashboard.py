"""How fast the instructor's dashboard and grid are for a big class, and whether server memory stays flat.

Writes a class straight into a fresh database with bulk inserts (default: 200 learners × the 6 lessons of
chapter L4 × 2,000 events each, that is 2.4 million answers and programs, spread over the exercises of
each lesson, the last ones within the past hour so that some learners are working and some are stuck),
with the kept totals each learner and exercise would have. Then it serves the real app on uvicorn in this
process and fetches ``/instructor`` and ``/instructor/class`` as a signed-in instructor, reporting p50/p95
in milliseconds and the process's resident memory before and after 100 views of each. Targets: ≤ 300 ms
each, memory flat. It prints figures; it asserts nothing.

    .venv/bin/python benchmarks/class_dashboard.py [--learners 200] [--events 2000] [--views 100]
        [--database-url postgresql+psycopg://qkv:qkv@127.0.0.1:5432/qkv_bench]   # default: temporary SQLite

With PostgreSQL the class is written into a new schema of that database, dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import socket
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from sqlalchemy import MetaData, Table, create_engine, insert, text

from qkv.lessons import load_catalog
from qkv.store import Store
from qkv.store.sql.clock import utc_now
from qkv.web.app import create_app
from qkv.web.settings import Settings

CHUNK = 20_000
ANSWER_COLUMNS = (
    "learner_id",
    "lesson_id",
    "exercise_id",
    "variant_seed",
    "answer",
    "correct",
    "message",
    "counted_as_attempt",
    "mistake",
    "created_at",
)
CODE_COLUMNS = (
    "learner_id",
    "lesson_id",
    "exercise_id",
    "source",
    "status",
    "passed",
    "total",
    "result_json",
    "source_sha256",
    "created_at",
)
RESULT = json.dumps(
    {"version": 3, "status": "fail", "message": "", "tests": [{"name": "t", "status": "fail"}]}
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextmanager
def _own_schema(url: str) -> Iterator[str]:
    """For PostgreSQL, a fresh schema of the benchmark's own in that database (dropped afterwards)."""
    if not url.startswith("postgresql"):
        yield url
        return
    schema = f"qkv_bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


class Generator:
    """The class's events and kept totals, drawn from a fixed seed."""

    def __init__(self, learners: int, events: int, catalog: Any) -> None:
        self.learners = [f"00000000-0000-4000-8000-{n:012d}" for n in range(learners)]
        self.events = events
        self.lessons = [(lesson.id, list(lesson.exercises.items())) for lesson in catalog.lessons]
        self.random = random.Random(26)
        self.now = utc_now()
        self.totals: dict[tuple[str, str, str], dict[str, Any]] = {}

    def rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """("answers" | "code_submissions", row) for every event, oldest first per learner and lesson."""
        for n, learner in enumerate(self.learners):
            # Each learner's work ends at a different time in the last two hours; a quarter are active now.
            end = self.now - timedelta(
                minutes=self.random.uniform(0, 120) if n % 4 else self.random.uniform(0, 5)
            )
            start = end - timedelta(hours=6)
            step = (end - start) / (self.events * len(self.lessons))
            moment = start
            last_lesson = self.lessons[-1][0]
            for lesson_id, exercises in self.lessons:
                for e in range(self.events):
                    exercise_id, exercise = exercises[
                        min(len(exercises) - 1, e * len(exercises) // self.events)
                    ]
                    moment += step
                    # One active learner in eight never gets the last exercise right: stuck now.
                    hopeless = n % 8 == 0 and lesson_id == last_lesson and exercise_id == exercises[-1][0]
                    correct = not hopeless and self.random.random() < 0.3
                    yield self._event(learner, lesson_id, exercise_id, exercise.kind, correct, moment)

    def _event(
        self, learner: str, lesson_id: str, exercise_id: str, kind: str, correct: bool, moment: datetime
    ) -> tuple[str, dict[str, Any]]:
        key = (learner, lesson_id, exercise_id)
        total = self.totals.setdefault(
            key,
            {
                "attempts": 0,
                "submissions": 0,
                "solved": False,
                "first_solved_at": None,
                "attempts_to_solve": None,
                "failed_runs": 0,
                "started_at": moment,
                "best_passed": None,
                "best_total": None,
            },
        )
        total["attempts"] += 1
        total["submissions"] += 1
        total["last_activity_at"] = moment
        if correct and not total["solved"]:
            total.update(solved=True, first_solved_at=moment, attempts_to_solve=total["attempts"])
        base = {
            "learner_id": learner,
            "lesson_id": lesson_id,
            "exercise_id": exercise_id,
            "created_at": moment,
        }
        if kind == "code":
            if not correct:
                total["failed_runs"] += 1
            total["best_passed"], total["best_total"] = max(total["best_passed"] or 0, int(correct)), 1
            status = "pass" if correct else "fail"
            return "code_submissions", {
                **base,
                "source": "def f(x):\n    return x\n",
                "status": status,
                "passed": int(correct),
                "total": 1,
                "result_json": RESULT.replace('"fail"', f'"{status}"'),
                "source_sha256": None,
            }
        answer = "12" if correct else self.random.choice(["13", "[3, 2]", "7", "0.5"])
        return "answers", {
            **base,
            "variant_seed": None,
            "answer": answer,
            "correct": correct,
            "message": "m",
            "counted_as_attempt": True,
            "mistake": None if correct else self.random.choice([None, "x_wt"]),
        }


def _columns(table: str) -> list[str]:
    return list(ANSWER_COLUMNS if table == "answers" else CODE_COLUMNS)


def _sqlite_value(value: Any) -> Any:
    # As SQLAlchemy stores them on SQLite: times as text with microseconds, booleans as 0 or 1.
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    return int(value) if isinstance(value, bool) else value


def _insert_events(raw: Any, generator: Generator) -> None:
    batches: dict[str, list[tuple[Any, ...]]] = {"answers": [], "code_submissions": []}
    statements = {
        table: f"INSERT INTO {table} ({', '.join(_columns(table))}) "
        f"VALUES ({', '.join('?' for _ in _columns(table))})"
        for table in batches
    }
    for table, row in generator.rows():
        batch = batches[table]
        batch.append(tuple(_sqlite_value(row[column]) for column in _columns(table)))
        if len(batch) >= CHUNK:
            raw.executemany(statements[table], batch)
            batch.clear()
    for table, batch in batches.items():
        if batch:
            raw.executemany(statements[table], batch)


def _copy_events(raw: Any, generator: Generator) -> None:
    # One COPY per table: the generator's rows are split into two lists of tuples first.
    rows: dict[str, list[tuple[Any, ...]]] = {"answers": [], "code_submissions": []}
    for table, row in generator.rows():
        rows[table].append(tuple(row[column] for column in _columns(table)))
    with raw.cursor() as cursor:
        for table, values in rows.items():
            with cursor.copy(f"COPY {table} ({', '.join(_columns(table))}) FROM STDIN") as copy:
                for value in values:
                    copy.write_row(value)
            values.clear()


def fill(url: str, learners: int, events: int) -> float:
    """Write the class into ``url``; the seconds it took."""
    began = time.perf_counter()
    store = Store(url)
    engine = store.database.engine
    meta = MetaData()
    tables = {
        name: Table(name, meta, autoload_with=engine)
        for name in ("learners", "answers", "code_submissions", "exercise_totals")
    }
    generator = Generator(learners, events, load_catalog())
    with engine.begin() as conn:
        conn.execute(
            insert(tables["learners"]),
            [
                {
                    "id": learner,
                    "display_name": f"Learner {n:03d}",
                    "created_at": generator.now,
                    "last_seen_at": generator.now,
                }
                for n, learner in enumerate(generator.learners)
            ],
        )
    # The events go in through the driver's own bulk path (COPY on PostgreSQL, executemany of tuples on
    # SQLite): millions of rows through SQLAlchemy's insert() took minutes.
    with engine.begin() as conn:
        raw = conn.connection.driver_connection
        assert raw is not None
        if url.startswith("postgresql"):
            _copy_events(raw, generator)
        else:
            _insert_events(raw, generator)
    with engine.begin() as conn:
        conn.execute(
            insert(tables["exercise_totals"]),
            [
                {"learner_id": k[0], "lesson_id": k[1], "exercise_id": k[2], **v}
                for k, v in generator.totals.items()
            ],
        )
    if url.startswith("postgresql"):
        with engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
    store.close()
    return time.perf_counter() - began


def measure(url: str, views: int) -> dict[str, Any]:
    """Serve the app and time the dashboard and the grid; resident memory before and after."""
    app = create_app(Settings(database_url=url, warm_spares=0))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    figures: dict[str, Any] = {}
    try:
        _, token = app.state.qkv.store.instructors.add(f"Bench {time.time_ns()}")
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            client.post(
                "/instructor/sign-in", data={"token": token}, headers={"origin": f"http://127.0.0.1:{port}"}
            )
            for path in ("/instructor", "/instructor/class"):
                client.get(path).raise_for_status()  # warm up
            figures["rss_before"] = _rss_mib()
            for path in ("/instructor", "/instructor/class?sort=progress"):
                times = []
                for _ in range(views):
                    began = time.perf_counter()
                    response = client.get(path)
                    times.append((time.perf_counter() - began) * 1000)
                    response.raise_for_status()
                figures[path] = (statistics.median(times), _percentile(times, 0.95))
                if path == "/instructor":
                    found = re.search(r'data-live-count="(\d+)"', response.text)
                    figures["stuck"] = int(found.group(1)) if found else None
            figures["rss_after"] = _rss_mib()
    finally:
        server.should_exit = True
        thread.join()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument(
        "--events", type=int, default=2000, help="events per learner and lesson (default 2000)"
    )
    parser.add_argument("--views", type=int, default=100)
    parser.add_argument("--database-url", default=None, help="default: a temporary SQLite file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        given = args.database_url or f"sqlite:///{Path(workdir) / 'bench.sqlite3'}"
        with _own_schema(given) as url:
            run(url, args)


def run(url: str, args: argparse.Namespace) -> None:
    """Fill ``url`` with the class, then measure and print."""
    lessons = len(load_catalog().lessons)
    print(
        f"{args.learners} learners × {lessons} lessons × {args.events} events = "
        f"{args.learners * lessons * args.events:,} events on {url.split(':')[0]}"
    )
    print(f"generated in {fill(url, args.learners, args.events):.1f} s (bulk inserts)")
    figures = measure(url, args.views)
    for path in ("/instructor", "/instructor/class?sort=progress"):
        p50, p95 = figures[path]
        print(f"{path:34s} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   ({args.views} views)")
    print(f"learners stuck now: {figures['stuck']}")
    print(
        f"server memory: {figures['rss_before']:.0f} MiB before, {figures['rss_after']:.0f} MiB after "
        f"{2 * args.views} views"
    )


if __name__ == "__main__":
    main()
