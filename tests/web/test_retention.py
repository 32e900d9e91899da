"""``qkv serve --retain-days N``: the server erases anonymous learners inactive for N days, and only them."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import update

from qkv.store import Store
from qkv.store.sql.clock import utc_now
from qkv.store.sql.tables import LearnerRow
from qkv.web.settings import Settings

OLD, RECENT = "c" * 36, "d" * 36


def _seed(url: str) -> str:
    store = Store(url)
    try:
        for learner_id in (OLD, RECENT):
            store.progress.record_answer(learner_id, "L4.1", "x", "1", correct=False, message="No.")
        account = store.accounts.find_or_create(None, "s-1", "Ada")
        store.progress.record_answer(account, "L4.1", "x", "1", correct=False, message="No.")
        with store.database.write() as conn:
            for learner_id, days in ((OLD, 40), (RECENT, 5), (account, 400)):
                when = utc_now() - timedelta(days=days)
                conn.execute(
                    update(LearnerRow.__table__).where(LearnerRow.id == learner_id).values(last_seen_at=when)
                )
        return account
    finally:
        store.close()


def test_the_server_prunes_inactive_anonymous_learners_when_asked(
    make_app: Callable[..., FastAPI], tmp_path: Path
) -> None:
    account = _seed(f"sqlite:///{tmp_path / 'web.sqlite3'}")
    app = make_app(retain_days=30)
    store = app.state.qkv.store
    deadline = time.monotonic() + 60
    while store.learners.has_saved_work(OLD):  # the first pass runs as the server starts
        assert time.monotonic() < deadline, "the inactive anonymous learner was never pruned"
        time.sleep(0.05)
    assert store.learners.has_saved_work(RECENT) and store.learners.has_saved_work(account)
    (line,) = store.personal_data.audit("")
    assert line["action"] == "retention"


def test_without_retain_days_nothing_is_pruned(make_app: Callable[..., FastAPI], tmp_path: Path) -> None:
    _seed(f"sqlite:///{tmp_path / 'web.sqlite3'}")
    app = make_app()
    assert app.state.qkv.store.learners.has_saved_work(OLD)
    assert app.state.qkv.store.personal_data.audit() == []


def test_retain_days_must_be_a_whole_number_of_at_least_one() -> None:
    with pytest.raises(ValueError, match="retain_days must be a whole number of days of at least 1, not 0"):
        Settings(retain_days=0)
