"""A small shared thread pool for NumPy work that releases the GIL, with BLAS held to one thread.

NumPy's matrix products already use every core through BLAS, but its element-wise functions
(``exp``, ``max``, subtractions) use one. Running independent pieces of work on a few threads
uses every core for both, provided BLAS does not start its own threads inside each of ours: while
work runs here, BLAS is limited to one thread through threadpoolctl. Without threadpoolctl
``worker_count()`` is 1 and callers should run their work inline, leaving BLAS its threads.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple, TypeVar, cast

__all__ = ["run_on_threads", "worker_count"]

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

    with _single_threaded_blas(), _helpers(workers - 1) as helpers:
        for helper in helpers:
            helper.start(work)
        try:
            work()
        finally:
            with claim:  # after an error (or Ctrl-C) here, leave the helpers nothing more to start
                for _ in remaining:
                    pass
            errors = [error for helper in helpers if (error := helper.join()) is not None]
        if errors:
            raise errors[0]


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


def _usable_cores() -> int:
    return len(_usable_core_set()) or os.cpu_count() or 1


def _usable_core_set() -> frozenset[int]:
    """The cores this process may run on (empty where the system does not say)."""
    try:
        return frozenset(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return frozenset()


def _current_core() -> int | None:
    """The core the calling thread runs on now (glibc's ``sched_getcpu``), or None where unknown."""
    getcpu = _sched_getcpu()
    core = getcpu() if getcpu is not None else -1
    return core if core >= 0 else None


@functools.lru_cache(maxsize=1)
def _sched_getcpu() -> Callable[[], int] | None:
    try:
        getcpu = ctypes.CDLL(None).sched_getcpu
    except (AttributeError, OSError):  # no sched_getcpu in this C library
        return None
    getcpu.restype = ctypes.c_int
    return cast(Callable[[], int], getcpu)


_lock = threading.Lock()
_state: dict[str, Any] = {"idle": [], "helpers": 0, "controller": None, "held": [], "users": 0}


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


class _Helper:
    """A pool thread that runs one job at a time, handed over and back by releasing a lock.

    A lock's release wakes the thread at once; concurrent.futures' queue, future and condition
    cost about 20 µs more per call, a twentieth of a call at n = 512 (docs/performance.md).
    """

    def __init__(self) -> None:
        self._go = threading.Lock()
        self._go.acquire()
        self._done = _EndSignal()
        self._job: Callable[[], object] | None = None
        self._error: BaseException | None = None
        self._cores: frozenset[int] | None = None  # the cores it was last allowed, None: all
        thread = threading.Thread(target=self._serve, name="qkv-attention", daemon=True)
        thread.start()
        self._native_id = thread.native_id

    def keep_off(self, core: int | None) -> None:
        """Let the thread run on any usable core but ``core`` (the caller's).

        Woken by a thread on a busy core, Linux tends to queue the helper on that same core, and the
        two then take turns there while the other core idles: at n = 512 every call we traced ran
        both halves on one core (docs/performance.md).
        """
        cores = _usable_core_set() - {core} if core is not None else frozenset()
        if not cores or cores == self._cores or self._native_id is None:
            return
        try:
            os.sched_setaffinity(self._native_id, cores)
        except OSError:  # the thread's cores are not ours to choose here: leave them
            return
        self._cores = cores

    def start(self, job: Callable[[], object]) -> None:
        self._job = job
        self._go.release()

    def join(self) -> BaseException | None:
        """Wait for the job to end; the error it raised, if any."""
        self._done.wait()
        error, self._error = self._error, None
        return error

    def _serve(self) -> None:
        while True:
            self._go.acquire()
            job, self._job = self._job, None
            try:
                if job is not None:
                    job()
            except BaseException as error:  # handed to the caller, who re-raises it
                self._error = error
            finally:
                self._done.set()


class _EndSignal:
    """A helper's "my job has ended", which the caller waits for once per job.

    Where the C library has POSIX spin locks (glibc, musl), the caller waits spinning on one in C,
    without the GIL, and sees the helper's release at once. Asleep on a lock, it was woken 20–30 µs
    later on a virtual machine whose idle cores halt, a twentieth of a call at n = 512
    (docs/performance.md). The spin lasts at most as long as the helper's last block. Elsewhere the
    signal is a Lock.
    """

    def __init__(self) -> None:
        self._spin = _spin_lock_functions()
        self._word = ctypes.c_int(0)  # the pthread_spinlock_t, held from one job's end to the next's
        self._lock = threading.Lock()  # used only where there are no spin locks
        if self._spin is None:
            self._lock.acquire()
        elif self._spin.init(self._ref(), 0) != 0 or self._spin.lock(self._ref()) != 0:
            raise OSError("pthread_spin_init or pthread_spin_lock failed for a helper's end signal.")

    def set(self) -> None:
        """Say that the job has ended (the helper)."""
        if self._spin is None:
            self._lock.release()
        else:
            self._spin.unlock(self._ref())

    def wait(self) -> None:
        """Return once ``set`` has been called, and leave the signal ready for the next job (the caller)."""
        if self._spin is None:
            self._lock.acquire()
        else:
            self._spin.lock(self._ref())

    def _ref(self) -> Any:
        return ctypes.byref(self._word)


class _SpinLockFunctions(NamedTuple):
    init: Callable[[Any, int], int]
    lock: Callable[[Any], int]
    unlock: Callable[[Any], int]


@functools.lru_cache(maxsize=1)
def _spin_lock_functions() -> _SpinLockFunctions | None:
    """The C library's ``pthread_spin_init``, ``_lock`` and ``_unlock``, which ctypes calls without the
    GIL, or None where it has none (macOS, Windows)."""
    try:
        library = ctypes.CDLL(None)
        functions = [getattr(library, f"pthread_spin_{name}") for name in ("init", "lock", "unlock")]
    except (AttributeError, OSError, TypeError):
        return None
    for function in functions:
        function.restype = ctypes.c_int
    return _SpinLockFunctions(*functions)


@contextmanager
def _helpers(wanted: int) -> Iterator[list[_Helper]]:
    """Up to ``wanted`` idle helpers, started on first need and kept; fewer while other calls hold
    them (their work already keeps the cores busy)."""
    with _lock:
        idle: list[_Helper] = _state["idle"]
        if _state["helpers"] < wanted:  # grow to what this call wants, never past one per core
            idle.extend(_Helper() for _ in range(min(wanted, _usable_cores()) - _state["helpers"]))
            _state["helpers"] = max(_state["helpers"], min(wanted, _usable_cores()))
        taken = [idle.pop() for _ in range(min(wanted, len(idle)))]
    caller_core = _current_core() if taken else None
    for helper in taken:
        helper.keep_off(caller_core)
    try:
        yield taken
    finally:
        with _lock:
            _state["idle"].extend(taken)


@contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """Hold BLAS to one thread while any run_on_threads call is running (the limit is process-wide)."""
    controller = _controller()
    if controller is None:
        yield
        return
    with _lock:
        if _state["users"] == 0:
            # Each library's own setter (threadpoolctl's limit() object cost 6 µs a call; this, 1). The
            # controller's libraries are fixed when it is built, so its BLAS ones are picked once.
            if "blas" not in _state:
                _state["blas"] = controller.select(user_api="blas").lib_controllers
            libraries = _state["blas"]
            _state["held"] = [(library, library.get_num_threads()) for library in libraries]
            for library, _threads in _state["held"]:
                library.set_num_threads(1)
        _state["users"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["users"] -= 1
            if _state["users"] == 0:
                for library, threads in _state["held"]:
                    library.set_num_threads(threads)
                _state["held"] = []


def _forget_threads() -> None:
    # A forked child inherits the helpers' objects but not their threads (and perhaps a held lock).
    global _lock
    _lock = threading.Lock()
    _state.update(idle=[], helpers=0, held=[], users=0)


os.register_at_fork(after_in_child=_forget_threads)
