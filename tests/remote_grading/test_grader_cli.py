"""``qkv grader`` and ``qkv serve --grading remote`` refuse what they cannot do, with a sentence.

A grader on a machine without bubblewrap takes no job: a program waiting in the queue stays there for a
grader that can sandbox it. Remote grading needs PostgreSQL; on SQLite both commands say so.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from qkv.remote_grading import QueueSubmitter
from qkv.store import Store
from qkv.web.runs.backend import RemoteProgram

REPO = Path(__file__).resolve().parents[2]
QKV = [sys.executable, "-m", "qkv"]


def _path_without_bubblewrap(tmp_path: Path) -> str:
    """A PATH with Python and everything but ``bwrap`` (a folder of links to /usr/bin, less bwrap)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for entry in Path("/usr/bin").iterdir():
        if entry.name != "bwrap":
            (bin_dir / entry.name).symlink_to(entry)
    return str(bin_dir)


@pytest.mark.postgres
def test_a_grader_without_bubblewrap_refuses_and_takes_no_job(postgres_url: str, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed, so there is nothing to hide from the grader")
    store = Store(postgres_url)
    submitter = QueueSubmitter(postgres_url, capacity=8, per_client=8)

    async def enqueue() -> str:
        await submitter.start(store)
        try:
            program = RemoteProgram("a" * 36, "T1.1", "shapes", "x = 1\n", "192.0.2.1", "192.0.2.1", True)
            return await submitter.submit(program)
        finally:
            await submitter.stop()

    job = asyncio.run(enqueue())
    env = dict(os.environ, PATH=_path_without_bubblewrap(tmp_path))
    refused = subprocess.run(
        [*QKV, "grader", "--database-url", postgres_url, "--content", str(REPO / "tests" / "sample_lessons")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1
    assert (
        "This machine cannot grade: Sandboxed grading needs bubblewrap, which is not installed."
        in refused.stderr
    )
    assert "qkv grader takes no programs without the sandbox" in refused.stderr
    view = store.grading_jobs.view(job)
    assert view is not None and view.state.value == "queued"  # still waiting for a grader that can sandbox it
    engine = create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            statuses = conn.execute(text("SELECT status FROM procrastinate_jobs")).scalars().all()
            workers = conn.execute(text("SELECT count(*) FROM procrastinate_workers")).scalar()
        assert (statuses, workers) == (["todo"], 0)  # never taken, and it never joined the queue's graders
    finally:
        engine.dispose()
        store.close()


@pytest.mark.parametrize("command", [["serve", "--grading", "remote"], ["grader"]])
def test_remote_grading_on_sqlite_is_refused_with_a_sentence(command: list[str], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    refused = subprocess.run(
        [*QKV, *command, "--database-url", url], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2
    assert "Grading on other machines needs PostgreSQL, because the graders take their jobs from a queue" in (
        refused.stderr
    )
    assert f"but sqlite:///{tmp_path / 'class.sqlite3'} is a sqlite database" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_grader_with_a_heartbeat_slower_than_its_stall_limit_is_refused(tmp_path: Path) -> None:
    refused = subprocess.run(
        [*QKV, "grader", "--database-url", "postgresql+psycopg://db.invalid/qkv", "--heartbeat", "20"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2
    assert "stalled_after_s (30) must be at least twice heartbeat_s (20)" in refused.stderr
