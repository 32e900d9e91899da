"""``qkv serve --retain-days N``: anonymous learners inactive for N days are erased, once an hour.

Each pass erases them in small transactions (``PersonalData.prune_anonymous``) in a worker thread, so
the event loop never waits on it; several servers on one database may all prune, as an erased learner is
simply not found again. Accounts and LMS learners are never pruned: their data goes on request
(``qkv learners erase``) or with the course.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.concurrency import run_in_threadpool

from qkv.store import PersonalData, StoreError

log = logging.getLogger("qkv.web.retention")
PRUNE_EVERY_S = 3600.0

__all__ = ["PRUNE_EVERY_S", "prune_forever"]


async def prune_forever(data: PersonalData, days: int, every_s: float = PRUNE_EVERY_S) -> None:
    """Prune now and then every ``every_s`` seconds until cancelled; a failed pass is logged, not fatal.

    Parameters
    ----------
    data : PersonalData
        The store's personal data.
    days : int
        Days of inactivity after which an anonymous learner is erased.
    every_s : float
        Seconds between passes.
    """
    while True:
        try:
            erased = await run_in_threadpool(data.prune_anonymous, days)
        except StoreError as error:
            log.warning("Pruning inactive anonymous learners failed (tried again later): %s", error)
        else:
            if erased:
                log.info("Erased %d anonymous learners inactive for %d days (--retain-days).", erased, days)
        await asyncio.sleep(every_s)
