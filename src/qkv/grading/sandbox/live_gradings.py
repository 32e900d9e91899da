"""Gradings at normal priority announce themselves on this machine; background work waits for a gap.

Nice values share the cores, but they do not share everything: the kernel's own work to start and end a
sandbox (namespaces, address spaces) runs unpreempted on a kernel built without preemption, and two
programs on two cores share the caches. A regrade running beside live learners, however low its priority,
still slows them. So every grading at normal priority holds a shared lock on a file of this user's while
it runs (:func:`announced`: the server's graders, ``qkv grader`` processes, any :class:`~qkv.grading.Grader`),
and background work asks, before each program, for a moment when nobody holds it (:func:`wait_for_a_gap`:
an exclusive lock taken without waiting and let go at once, asked again every few milliseconds). It waits
at most a bound, so that a machine that is never idle still sees the background work move; a live grading
that starts meanwhile runs beside the one background program as before.

Only processes of the same user on the same machine see each other; where the file cannot be opened (a
read-only temporary folder, another user's file in the way) nothing is announced and nobody waits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator

__all__ = ["announced", "lock_path", "wait_for_a_gap"]

POLL_S = 0.01  # how often a waiting background grading asks again


def lock_path() -> str:
    """The file this user's gradings lock: in ``$XDG_RUNTIME_DIR`` where there is one, else the temporary
    folder, named with the user id (so that two users' servers do not wait for each other).

    Examples
    --------
    >>> lock_path().endswith(f"qkv-live-gradings-{os.getuid()}.lock")
    True
    """
    folder = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return os.path.join(folder, f"qkv-live-gradings-{os.getuid()}.lock")


def _open(*, create: bool) -> int | None:
    """The lock file, opened without following a link (and created with ``create``); None if it cannot
    be, or belongs to another user."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    try:
        fd = os.open(lock_path(), flags, 0o600)
    except OSError:
        return None
    if os.fstat(fd).st_uid != os.getuid():
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def announced() -> Iterator[None]:
    """Within the block, this machine's background work sees a grading at normal priority running.

    Every call opens the file anew: a lock belongs to an open file, so two gradings on two threads of one
    process each hold their own, and one ending does not end the other's. The file is made by the first
    background work that waits (:func:`wait_for_a_gap`): until then nobody waits, and a grading (``qkv
    check`` on a learner's machine too) leaves nothing behind.

    Examples
    --------
    >>> with announced():
    ...     pass  # grade the program here
    """
    fd = _open(create=False)
    try:
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing lets go of the lock


def wait_for_a_gap(bound_s: float) -> bool:
    """Wait until no grading at normal priority runs on this machine, at most ``bound_s`` seconds.

    Parameters
    ----------
    bound_s : float
        The longest wait, in seconds.

    Returns
    -------
    bool
        True when a gap came (or nothing can be known here), False when the bound passed first.

    Raises
    ------
    ValueError
        If ``bound_s`` is negative.

    Examples
    --------
    >>> wait_for_a_gap(-1)
    Traceback (most recent call last):
    ValueError: bound_s must be zero or more seconds, but it is -1.
    """
    if bound_s < 0:
        raise ValueError(f"bound_s must be zero or more seconds, but it is {bound_s!r}.")
    fd = _open(create=True)
    if fd is None:
        return True
    deadline = time.monotonic() + bound_s
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True  # closing the file below lets go at once: live gradings never wait for us
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(POLL_S)
            except OSError:
                return True
    finally:
        os.close(fd)
