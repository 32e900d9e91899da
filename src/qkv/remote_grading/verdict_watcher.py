"""Waiting for verdicts: one poll of the database per server for every request that waits.

A grader writes the verdict to ``grading_jobs``; any web server may be the one the learner asks. Each
server keeps the jobs its requests wait on and reads all of them in one query a few times a second,
so a class waiting on one server costs one small query per tick, not one per learner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from qkv.store import GradingJobs, JobView, StoreError

_log = logging.getLogger(__name__)


class VerdictWatcher:
    """Resolves waits on jobs as their verdicts appear in the database.

    Parameters
    ----------
    jobs : GradingJobs
        The store's jobs.
    interval_s : float
        Seconds between two reads while some request waits.
    """

    def __init__(self, jobs: GradingJobs, interval_s: float = 0.2) -> None:
        self.jobs = jobs
        self.interval_s = interval_s
        self._waiters: dict[str, set[asyncio.Future[JobView]]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start polling (call inside the server's event loop)."""
        self._task = asyncio.create_task(self._poll_forever(), name="qkv-verdict-watcher")

    async def stop(self) -> None:
        """Stop polling; requests still waiting time out as usual."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def wait(self, job_id: str, timeout_s: float) -> JobView | None:
        """The job once final, or None after ``timeout_s``."""
        future: asyncio.Future[JobView] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(job_id, set()).add(future)
        self._wake.set()
        try:
            done, _ = await asyncio.wait({future}, timeout=timeout_s)
            return future.result() if done else None
        finally:
            waiting = self._waiters.get(job_id)
            if waiting is not None:
                waiting.discard(future)
                if not waiting:
                    del self._waiters[job_id]
            future.cancel()

    async def _poll_forever(self) -> None:
        while True:
            if not self._waiters:
                self._wake.clear()
                await self._wake.wait()
            await self._poll_once()
            await asyncio.sleep(self.interval_s)

    async def _poll_once(self) -> None:
        try:
            views = await asyncio.to_thread(self.jobs.views, list(self._waiters))
        except StoreError as error:  # the database is away for a moment: the next tick tries again
            _log.warning("Verdicts could not be read: %s", error)
            return
        for job_id, view in views.items():
            if view.final:
                for future in self._waiters.pop(job_id, set()):
                    if not future.done():
                        future.set_result(view)


__all__ = ["VerdictWatcher"]
