"""The PostgreSQL fixtures of the store's tests (a fresh schema per test), for remote grading's tests."""

from tests.store.conftest import postgres_admin_url, postgres_url

__all__ = ["postgres_admin_url", "postgres_url"]
