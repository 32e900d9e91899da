"""The behaviour signatures of a learner's failing functions, saved with each program that failed.

The grader signs each failing function of a program (``signatures`` in its result document: function →
digest). Each becomes a row of ``mistake_signatures`` with the first message the learner saw for the
function and the program's text, so that a class's mistakes can be grouped by behaviour
(``qkv.store.instructor.mistake_groups``) long after the program itself was pruned.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Table, and_, insert, update

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import MistakeGroupLearner, MistakeSignature
from qkv.store.work.budget import cut

__all__ = ["EXAMPLE_BYTES", "MAX_SIGNED", "first_message", "group_key", "record_signatures_in", "signed"]

_SIGNATURES: Table = MistakeSignature.__table__  # type: ignore[assignment]
_PAIRS: Table = MistakeGroupLearner.__table__  # type: ignore[assignment]
EXAMPLE_BYTES = 16 * 1024
"""A program kept as an example keeps this many bytes of its text."""
MAX_SIGNED = 8
"""At most this many functions of one program are saved."""
_DIGEST = re.compile(r"[0-9a-f]{32}")
_FUNCTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def group_key(lesson_id: str, exercise_id: str, function: str, signature: str) -> str:
    """The id of the group of every program whose ``function`` behaves as ``signature`` (16 hex digits).

    Examples
    --------
    >>> key = group_key("L9.1", "shapes", "area", "0" * 32)
    >>> len(key), key == group_key("L9.1", "shapes", "area", "0" * 32)
    (16, True)
    """
    text = "\x1f".join((lesson_id, exercise_id, function, signature))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def signed(result: Mapping[str, Any]) -> dict[str, str]:
    """The well-formed signatures of a result document (function → digest); others are left out.

    Examples
    --------
    >>> signed({"status": "fail", "signatures": {"area": "a" * 32, "bad name": "b" * 32, "x": 3}})
    {'area': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}
    >>> signed({"status": "pass", "signatures": {"area": "a" * 32}})
    {}
    """
    found = result.get("signatures")
    if result.get("status") != "fail" or not isinstance(found, Mapping):
        return {}
    kept = {
        name: digest
        for name, digest in found.items()
        if isinstance(name, str)
        and isinstance(digest, str)
        and _FUNCTION.fullmatch(name)
        and _DIGEST.fullmatch(digest)
    }
    return dict(sorted(kept.items())[:MAX_SIGNED])


def first_message(result: Mapping[str, Any], function: str) -> str:
    """What the learner read first about ``function``: its first failed test's message and hint.

    Examples
    --------
    >>> first_message({"tests": [{"function": "f", "status": "pass"},
    ...     {"function": "f", "status": "fail", "message": "Expected 2, got 1.", "hint": "Halve it."}]}, "f")
    'Expected 2, got 1. Halve it.'
    """
    for test in result.get("tests") or []:
        if isinstance(test, Mapping) and test.get("function") == function and test.get("status") != "pass":
            words = [str(test.get(part)) for part in ("message", "hint") if test.get(part)]
            return cut(" ".join(words), 2048)
    return ""


def record_signatures_in(
    conn: Connection,
    learner_id: str,
    lesson_id: str,
    exercise_id: str,
    source: str,
    result: Mapping[str, Any],
) -> int:
    """Save a row per signed function of a failed program, in the caller's transaction; how many.

    Examples
    --------
    >>> from sqlalchemy import func, select
    >>> from qkv.store.sql.database import Database
    >>> database = Database("sqlite://")
    >>> with database.write() as conn:
    ...     database.ensure_learner(conn, "a" * 36)
    ...     record_signatures_in(conn, "a" * 36, "L9.1", "shapes", "x = 1",
    ...                          {"status": "fail", "signatures": {"area": "c" * 32}, "tests": []})
    1
    >>> database.close()
    """
    signatures = signed(result)
    if not signatures:
        return 0
    now = utc_now()
    example = cut(source, EXAMPLE_BYTES)
    for function, digest in signatures.items():
        key = group_key(lesson_id, exercise_id, function, digest)
        row = {
            "learner_id": learner_id,
            "lesson_id": lesson_id,
            "exercise_id": exercise_id,
            "function": function,
            "signature": digest,
            "group_key": key,
            "message": first_message(result, function),
            "source": example,
            "created_at": now,
        }
        made = conn.execute(insert(_SIGNATURES).values(**row).returning(_SIGNATURES.c.id)).scalar_one()
        _count_in_group(conn, key, learner_id, lesson_id, int(made), now)
    return len(signatures)


def _count_in_group(conn: Connection, key: str, learner_id: str, lesson_id: str, made: int, now: Any) -> None:
    """One more program of the learner in the group (their first makes the learner's row)."""
    pair = and_(_PAIRS.c.group_key == key, _PAIRS.c.learner_id == learner_id)
    values = {"group_key": key, "learner_id": learner_id, "lesson_id": lesson_id}
    first = {"programs": 1, "first_seen": now, "first_id": made}
    if not Database.insert_ignore(conn, _PAIRS, {**values, **first}, ["group_key", "learner_id"]):
        conn.execute(update(_PAIRS).where(pair).values(programs=_PAIRS.c.programs + 1))
