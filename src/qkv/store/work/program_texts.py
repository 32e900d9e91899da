"""Program texts, stored once per learner and text (under the text's SHA-256) however often it is sent.

``programs()`` is the query every reader of saved programs starts from: each program with its text,
wherever that text is stored (programs saved before schema version 6 keep it in their own column).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Select, Table, delete, exists, func, select
from sqlalchemy.dialects import postgresql, sqlite

from qkv.store.sql.tables import CodeSource, CodeSubmission
from qkv.store.work.budget import text_bytes

_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_SOURCES: Table = CodeSource.__table__  # type: ignore[assignment]


def source_of_program() -> Any:
    """A program's text: from code_sources by its hash, or its own column for programs saved before."""
    shared = (
        select(_SOURCES.c.source)
        .where(_SOURCES.c.learner_id == _CODE.c.learner_id, _SOURCES.c.sha256 == _CODE.c.source_sha256)
        .scalar_subquery()
    )
    return func.coalesce(shared, _CODE.c.source).label("source")


def programs() -> Select[Any]:
    """Every column of code_submissions, with ``source`` the program's text wherever it is stored.

    Examples
    --------
    >>> "coalesce" in str(programs())
    True
    """
    columns = [column for column in _CODE.c if column.name != "source"]
    return select(*columns, source_of_program())


def put_source(conn: Connection, learner_id: str, digest: str, source: str) -> int:
    """Store the learner's program text under its hash unless it is there; the bytes it added."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    added = conn.execute(
        dialect.insert(_SOURCES)
        .values(learner_id=learner_id, sha256=digest, source=source)
        .on_conflict_do_nothing(index_elements=["learner_id", "sha256"])
        .returning(_SOURCES.c.sha256)  # a row only when it was added (rowcount is not reliable here)
    ).first()
    return text_bytes(source) if added is not None else 0


def drop_unused_sources(conn: Connection, learner_id: str) -> None:
    """Delete the learner's program texts that no kept program points at any more."""
    used = exists().where(_CODE.c.learner_id == learner_id, _CODE.c.source_sha256 == _SOURCES.c.sha256)
    conn.execute(delete(_SOURCES).where(_SOURCES.c.learner_id == learner_id, ~used))


__all__ = ["drop_unused_sources", "programs", "put_source", "source_of_program"]
