"""The CPU priority a sandbox runs at: normal, or in the background of the other clients' sandboxes.

Fair order in the grading line decides who gets a grader, not who gets the cores: a client whose programs
hold several graders at once keeps as many sandboxes busy on the same few cores as an honest learner's one.
So the grading line names a priority for each program it hands out (:func:`running_at`, a context variable,
as :func:`qkv.grading.judging.judging_for` names the client), and the grader sets it on every process of
the program's sandbox before the program runs (:func:`lower`): ``BACKGROUND`` raises their nice value, so
the kernel gives a normal-priority sandbox the core first and the background ones what it leaves.

Nice values are relative among the processes of one scheduling group: sandboxes forked by the zygote share
its session, so they are compared with each other; a sandbox started fresh leads a session of its own, and
where the kernel groups by session (``/proc/sys/kernel/sched_autogroup_enabled``) its group's nice value is
raised as well (:func:`lower_session`).
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import os
from collections.abc import Iterable, Iterator

__all__ = ["SandboxPriority", "current_priority", "lower", "lower_session", "running_at"]


class SandboxPriority(enum.Enum):
    """How a sandbox's processes are scheduled; the value is the nice value they are given."""

    NORMAL = 0
    BACKGROUND = 19  # the lowest: beside a nice-0 process on one core, it gets about 1/70 of the time


_PRIORITY: contextvars.ContextVar[SandboxPriority] = contextvars.ContextVar(
    "qkv_sandbox_priority", default=SandboxPriority.NORMAL
)


@contextlib.contextmanager
def running_at(priority: SandboxPriority) -> Iterator[None]:
    """Within the block, sandboxes this thread takes up run at ``priority``.

    Examples
    --------
    >>> with running_at(SandboxPriority.BACKGROUND):
    ...     current_priority()
    <SandboxPriority.BACKGROUND: 19>
    >>> current_priority()
    <SandboxPriority.NORMAL: 0>
    """
    token = _PRIORITY.set(priority)
    try:
        yield
    finally:
        _PRIORITY.reset(token)


def current_priority() -> SandboxPriority:
    """The priority named by the innermost :func:`running_at` of this thread (``NORMAL`` outside any)."""
    return _PRIORITY.get()


def lower(pids: Iterable[int], priority: SandboxPriority) -> int:
    """Give the processes ``pids``, every thread of each, at least ``priority``'s nice value.

    A nice value belongs to a thread in Linux, so each thread is set (threads started later inherit it
    from the one that starts them). A thread never gets a higher priority than it has (a nice value is
    only ever raised, which needs no privilege), and one that has ended meanwhile is skipped.

    Parameters
    ----------
    pids : iterable of int
        Process ids on this machine.
    priority : SandboxPriority
        The priority they should run at.

    Returns
    -------
    int
        The threads whose nice value was raised.

    Examples
    --------
    >>> lower([], SandboxPriority.BACKGROUND)
    0
    """
    changed = 0
    for pid in pids:
        for thread in _threads(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpriority(os.PRIO_PROCESS, thread) < priority.value:
                    os.setpriority(os.PRIO_PROCESS, thread, priority.value)
                    changed += 1
    return changed


def _threads(pid: int) -> list[int]:
    """The thread ids of process ``pid`` ([] once it has ended)."""
    try:
        return [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return []


def lower_session(pid: int, priority: SandboxPriority) -> bool:
    """Raise the nice value of the kernel's scheduling group of ``pid``'s session (its autogroup).

    Only for a process that leads a session of its own: every process of the session shares the group.
    Returns False where the kernel has no such groups, or the process has ended.

    Examples
    --------
    >>> lower_session(2**22 + 1, SandboxPriority.BACKGROUND)  # past the largest pid: no such process
    False
    """
    path = f"/proc/{pid}/autogroup"
    try:
        with open(path) as handle:
            current = int(handle.read().rsplit("nice", 1)[1])
        if current < priority.value:
            with open(path, "w") as handle:
                handle.write(str(priority.value))
    except (OSError, ValueError, IndexError):
        return False
    return True
