"""Saved progress: learners, every answer and code submission, and per-lesson state.

SQLite (a file in the user data directory by default) or PostgreSQL through SQLAlchemy 2.0, with
a versioned schema upgraded forward on opening.

    >>> from qkv.store import Store
    >>> store = Store("sqlite://")
    >>> store.set_display_name("0" * 36, "Ada")
    'Ada'
    >>> store.close()
"""

from qkv.store.budget import DEFAULT_CLIENT_BYTES_PER_DAY, Keeping
from qkv.store.engine import PoolLimits, create_store_engine, default_database_url, describe_url
from qkv.store.migrations import LATEST_VERSION, schema_version, upgrade
from qkv.store.repository import (
    AnswerRecord,
    CodeRecord,
    ExerciseActivity,
    GradebookRow,
    LessonActivity,
    Store,
    clean_display_name,
)
from qkv.store.store_error import StoreError

__all__ = [
    "DEFAULT_CLIENT_BYTES_PER_DAY",
    "LATEST_VERSION",
    "AnswerRecord",
    "CodeRecord",
    "ExerciseActivity",
    "GradebookRow",
    "Keeping",
    "LessonActivity",
    "PoolLimits",
    "Store",
    "StoreError",
    "clean_display_name",
    "create_store_engine",
    "default_database_url",
    "describe_url",
    "schema_version",
    "upgrade",
]
