"""An exhausted connection pool: the store says so in a sentence, and the web app answers 503 + Retry-After.

Each test holds the only connection of a one-connection pool, so the next read or write waits for
the (short) pool timeout and gives up, as under a burst of requests larger than the pool.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from qkv.store import PoolLimits, Store, StoreError
from qkv.web.app import create_app
from qkv.web.settings import Settings

ONE_CONNECTION = PoolLimits(size=1, overflow=0, timeout_s=0.2)
LEARNER = "a" * 36


@pytest.fixture
def small_store(database_url: str) -> Iterator[Store]:
    """A migrated store whose pool has one connection and waits 0.2 s for it."""
    Store(database_url).close()  # create the schema with an ordinary store first
    store = Store(database_url, pool=ONE_CONNECTION, migrate=False)
    yield store
    store.close()


def test_the_pool_limits_reach_the_engine(small_store: Store) -> None:
    pool = small_store.database.engine.pool
    assert (pool.size(), pool.timeout()) == (1, 0.2)  # type: ignore[attr-defined]


def test_a_read_with_no_free_connection_is_a_store_error(small_store: Store) -> None:
    small_store.progress.record_answer(LEARNER, "L4.1", "q", "3, 2", correct=True, message="Right.")
    with small_store.database.engine.connect():  # the pool's only connection, held
        with pytest.raises(StoreError) as read:
            small_store.progress.lesson_activity(LEARNER, "L4.1")
        with pytest.raises(StoreError) as write:
            small_store.learners.set_display_name(LEARNER, "Ada")
    assert str(read.value).startswith("No connection to the database ")
    assert "came free in time for a read: QueuePool limit of size 1 overflow 0 reached" in str(read.value)
    assert "came free in time for a write: " in str(write.value)
    # Once the connection is back, the same store works again.
    assert small_store.progress.lesson_activity(LEARNER, "L4.1").exercises["q"].solved is True


def test_the_web_app_answers_503_with_retry_after_when_the_pool_is_exhausted(
    database_url: str, small_store: Store
) -> None:
    app = create_app(Settings(database_url=database_url, secret_key="pool-test-secret", warm_spares=0))
    services = app.state.qkv
    services.store.close()
    services.store = small_store  # the app's reads and writes now go through the one-connection pool
    client = TestClient(app)  # no lifespan: these requests need the store, not the grader

    assert client.get("/api/lessons/L4.1/progress").status_code == 200
    with small_store.database.engine.connect():
        api = client.get("/api/lessons/L4.1/progress")
        page = client.get("/lessons/L4.1", headers={"accept": "text/html"})
    assert api.status_code == 503
    assert api.headers["retry-after"] == "5"
    assert api.json() == {
        "detail": "Your work could not be saved or read just now: the database is not answering. "
        "Try again in a moment."
    }
    assert page.status_code == 503
    assert page.headers["retry-after"] == "5"
    assert "the database is not answering" in page.text
    assert client.get("/api/lessons/L4.1/progress").status_code == 200  # and it recovers
