"""The storage budget of a client address: how much it may store in a day, and what is kept beyond it.

A learner's rows are bounded by retention (the last few of each exercise), but one client can mint many
learners. So every write that comes with a client key is also counted against that client's bytes for
the day (UTC), in the database, so that several servers on one database share one count:

- within the budget, everything is kept as usual;
- past the budget, programs and answers are still graded, checked and counted, but only the best (the
  first right answer) and the last are kept for that learner and exercise, and drafts may not grow;
- past the budget and a quarter (the ceiling), nothing more is stored for that client until the next day
  (the gradebook's counts still go up): a client that mints learners would otherwise keep adding "a best
  and a last" for every new learner.

Whatever the budget, a stored result keeps at most a few KiB of each text (the learner saw all of it when
the program ran), with the cut said in the text, and a learner's same program is stored once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from enum import Enum
from typing import Any

# A class of 50 behind one NAT: about 160 runs per learner a day (a stored result of L4's exercises is
# 9–20 KB), with drafts and answers besides. Any hour of one client stays under its ceiling, 160 MiB.
DEFAULT_CLIENT_BYTES_PER_DAY = 128 * 1024 * 1024
STORED_OUTPUT_BYTES = 4 * 1024  # of the program's printed output, in a stored result
STORED_TEXT_BYTES = 1024  # of any other text in a stored result (a test's message, got, expected, ...)
MAX_CLIENT_KEY = 64


class Keeping(Enum):
    """What the store keeps of a client's next write, by how much the client stored today."""

    ALL = "all"  # within the budget: the usual retention
    BEST_AND_LAST = "best and last"  # past the budget
    NOTHING = "nothing"  # past the ceiling: counted, not stored


def ceiling(budget: int) -> int:
    """Bytes a client may store in a day at most: its budget and a quarter more for "best and last".

    >>> ceiling(128 * 1024 * 1024) // (1024 * 1024)
    160
    """
    return budget + budget // 4


def keeping(spent: int, budget: int) -> Keeping:
    """What is kept of a client's next write when it has stored ``spent`` bytes today.

    Examples
    --------
    >>> keeping(0, 100), keeping(100, 100), keeping(125, 100)
    (<Keeping.ALL: 'all'>, <Keeping.BEST_AND_LAST: 'best and last'>, <Keeping.NOTHING: 'nothing'>)
    """
    if spent < budget:
        return Keeping.ALL
    if spent < ceiling(budget):
        return Keeping.BEST_AND_LAST
    return Keeping.NOTHING


def check_budget(budget: int) -> int:
    """``budget`` if it is a whole number of bytes of at least 1; otherwise a ValueError in a sentence.

    Examples
    --------
    >>> check_budget(1024)
    1024
    >>> check_budget(0)
    Traceback (most recent call last):
    ...
    ValueError: A client's storage budget must be a whole number of bytes of at least 1, not 0.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(
            f"A client's storage budget must be a whole number of bytes of at least 1, not {budget!r}."
        )
    return budget


def check_client(client: str) -> str:
    """``client`` if it can key the budget table: text of 1 to 64 characters.

    Examples
    --------
    >>> check_client("203.0.113.7")
    '203.0.113.7'
    >>> check_client("")
    Traceback (most recent call last):
    ...
    ValueError: A client key must be text of 1 to 64 characters, such as an address, not ''.
    """
    if not isinstance(client, str) or not 1 <= len(client) <= MAX_CLIENT_KEY or "\x00" in client:
        raise ValueError(
            f"A client key must be text of 1 to {MAX_CLIENT_KEY} characters, such as an address, "
            f"not {client!r:.100}."
        )
    return client


def text_bytes(text: str) -> int:
    """Bytes of ``text`` in UTF-8, the measure of everything the budget counts.

    >>> text_bytes("ä")
    2
    """
    return len(text.encode("utf-8"))


def source_hash(source: str) -> str:
    """The key a learner's program is stored under: the SHA-256 of its UTF-8 text, in hex.

    >>> len(source_hash("x = 1\\n"))
    64
    """
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def cut(text: str, limit: int) -> str:
    """``text`` itself if it has at most ``limit`` bytes; else its first ``limit`` bytes and a note saying so.

    Examples
    --------
    >>> cut("short", 10)
    'short'
    >>> cut("x" * 3000, 1024).endswith("[… 1,976 more bytes were shown when the program ran but not kept …]")
    True
    """
    size = text_bytes(text)
    if size <= limit:
        return text
    head = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    dropped = size - text_bytes(head)
    return f"{head}\n[… {dropped:,} more bytes were shown when the program ran but not kept …]"


def stored_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """The grader's result document as it is stored: each long text cut, with the cut said in it.

    The printed output keeps its first 4 KiB, every other text (a test's message, the value it got) its
    first 1 KiB; numbers, statuses and the document's shape are unchanged.

    Examples
    --------
    >>> kept = stored_result({"status": "fail", "output": "y" * 10_000, "tests": [{"got": "z" * 2000}]})
    >>> len(kept["output"]) < 4200, kept["output"].endswith("not kept …]")
    (True, True)
    >>> len(kept["tests"][0]["got"]) < 1100
    True
    """

    def shrink(value: Any, limit: int) -> Any:
        if isinstance(value, str):
            return cut(value, limit)
        if isinstance(value, Mapping):
            return {str(key): shrink(item, STORED_TEXT_BYTES) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [shrink(item, STORED_TEXT_BYTES) for item in value]
        return value

    return {
        str(key): shrink(value, STORED_OUTPUT_BYTES if key == "output" else STORED_TEXT_BYTES)
        for key, value in result.items()
    }


__all__ = [
    "DEFAULT_CLIENT_BYTES_PER_DAY",
    "STORED_OUTPUT_BYTES",
    "STORED_TEXT_BYTES",
    "Keeping",
    "ceiling",
    "check_budget",
    "check_client",
    "cut",
    "keeping",
    "source_hash",
    "stored_result",
    "text_bytes",
]
