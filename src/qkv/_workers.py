"""A small shared thread pool for NumPy work that releases the GIL, with BLAS held to one thread.

NumPy's matrix products already use every core through BLAS, but its element-wise functions
(``exp``, ``max``, subtractions) use one. Running independent pieces of work on a few threads
uses every core for both, provided BLAS does not start its own threads inside each of ours: while
work runs here, BLAS is limited to one thread through threadpoolctl. Without threadpoolctl
``worker_count()`` is 1 and callers should run their work inline, leaving BLAS its threads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["BUSY_LOAD_PER_CORE", "machine_is_busy", "run_on_threads", "worker_count"]

T = TypeVar("T")


def run_on_threads(run: Callable[[T], object], tasks: Sequence[T], workers: int) -> None:
    """Call ``run`` on every task, on ``workers`` threads: the caller and ``workers - 1`` pool threads.

    Each thread takes the next task in order until none is left, so a thread that finishes early
    takes over more of them. The caller works too, which saves waking one more thread. While the
    tasks run, BLAS is held to one thread (process-wide, lifted when the last caller returns).

    Parameters
    ----------
    run : callable
        Called once per task, from any of the threads.
    tasks : sequence
        The tasks, in the order they should start.
    workers : int
        How many threads work on them, the caller included.

    Raises
    ------
    Exception
        The first error ``run`` raised; the tasks not yet started are then dropped.

    Examples
    --------
    >>> done = []
    >>> run_on_threads(done.append, range(5), workers=2)
    >>> sorted(done)
    [0, 1, 2, 3, 4]
    """
    claim = threading.Lock()
    remaining = iter(range(len(tasks)))  # positions of the tasks no thread has taken yet

    def work() -> None:
        while True:
            with claim:
                position = next(remaining, None)
            if position is None:
                return
            run(tasks[position])

    with _single_threaded_blas():
        helpers = [_pool(workers - 1).submit(work) for _ in range(workers - 1)] if workers > 1 else []
        try:
            work()
        finally:
            with claim:  # after an error (or Ctrl-C) here, leave the helpers nothing more to start
                for _ in remaining:
                    pass
            for helper in helpers:
                helper.result()  # waits, and re-raises an error a helper hit


def worker_count() -> int:
    """How many threads ``run_on_threads`` should use: the cores this process may run on.

    Returns
    -------
    int
        The number of usable cores, or 1 when threadpoolctl is not installed (without it BLAS
        cannot be held to one thread per worker, and its own threads would compete with ours).

    Examples
    --------
    >>> worker_count() >= 1
    True
    """
    if _controller() is None:
        return 1
    return _usable_cores()


# The machine counts as busy when the 1-minute load average reaches this many runnable threads per
# core. qkv's own call adds up to one per core, so a load of 1.5 per core means other work as well.
BUSY_LOAD_PER_CORE = 1.5
# The load average moves slowly: it is read at most this often (seconds).
LOAD_READ_INTERVAL = 1.0
_load_seen: list[float] = [-LOAD_READ_INTERVAL, 0.0]  # [when read (monotonic), busy (1.0) or not]


def machine_is_busy(load_average: Callable[[], tuple[float, float, float]] | None = None) -> bool:
    """Whether other work keeps the cores busy: the 1-minute load average per usable core is at least
    ``BUSY_LOAD_PER_CORE`` (read at most once a second).

    Under such load BLAS's own threads wait on one another at every matrix product: one head of
    1024 queries took 386 ms with OpenBLAS's two threads against 19 ms on qkv's pool with BLAS held
    to one thread (float32, d = 64, load 15 on 2 cores), so callers hand mid-sized work to the pool
    when this is True.

    Parameters
    ----------
    load_average : callable, optional
        Returns the 1, 5 and 15-minute load averages; ``os.getloadavg`` by default. Passing one
        reads it now, whatever the last reading was.

    Returns
    -------
    bool
        False where the system reports no load average.

    Examples
    --------
    >>> machine_is_busy(lambda: (0.0, 0.0, 0.0))
    False
    >>> machine_is_busy(lambda: (64.0 * (os.cpu_count() or 1), 0.0, 0.0))
    True
    """
    now = time.monotonic()
    if load_average is None and now - _load_seen[0] < LOAD_READ_INTERVAL:
        return _load_seen[1] > 0
    try:
        one_minute = (load_average or os.getloadavg)()[0]
    except (AttributeError, OSError):  # no load average on this system
        one_minute = 0.0
    busy = one_minute >= BUSY_LOAD_PER_CORE * _usable_cores()
    _load_seen[:] = [now, 1.0 if busy else 0.0]
    return busy


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_lock = threading.Lock()
_state: dict[str, Any] = {"pool": None, "pool_size": 0, "controller": None, "limiter": None, "users": 0}


def _controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries (built once), or None if it is missing."""
    with _lock:
        if _state["controller"] is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                _state["controller"] = False
            else:
                _state["controller"] = ThreadpoolController()
        return _state["controller"] or None


def _pool(workers: int) -> ThreadPoolExecutor:
    with _lock:
        if _state["pool_size"] < workers:
            if _state["pool"] is not None:
                _state["pool"].shutdown(wait=False)
            _state["pool"] = ThreadPoolExecutor(workers, thread_name_prefix="qkv-attention")
            _state["pool_size"] = workers
        pool: ThreadPoolExecutor = _state["pool"]
        return pool


@contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """Hold BLAS to one thread while any run_on_threads call is running (the limit is process-wide)."""
    controller = _controller()
    if controller is None:
        yield
        return
    with _lock:
        if _state["users"] == 0:
            _state["limiter"] = controller.limit(limits=1, user_api="blas")
        _state["users"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["users"] -= 1
            if _state["users"] == 0:
                _state["limiter"].restore_original_limits()
                _state["limiter"] = None


def _forget_threads() -> None:
    # A forked child inherits the pool object but not its threads (and perhaps a held lock).
    global _lock
    _lock = threading.Lock()
    _state.update(pool=None, pool_size=0, limiter=None, users=0)


os.register_at_fork(after_in_child=_forget_threads)
