"""Per-sandbox cgroups (v1 ``pids`` and ``memory`` controllers), where this process may create them.

``RLIMIT_NPROC`` does not hold for root, not even inside a user namespace, so the process limit comes from a
``pids`` cgroup of the sandbox's own: it counts exactly that sandbox's processes and threads. A ``memory``
cgroup bounds the whole tree (forked children and files in the tmpfs ``/tmp`` included).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from dataclasses import dataclass

__all__ = ["SandboxCgroup", "cgroups_available", "remove_stale"]

PIDS_ROOT = "/sys/fs/cgroup/pids"
MEMORY_ROOT = "/sys/fs/cgroup/memory"
_counter = itertools.count()


def cgroups_available() -> bool:
    """Whether this process may create cgroups under the v1 ``pids`` hierarchy."""
    return os.path.isdir(PIDS_ROOT) and os.access(PIDS_ROOT, os.W_OK)


def remove_stale() -> None:
    """Delete empty cgroups left behind by grading processes that no longer exist."""
    for root in (PIDS_ROOT, MEMORY_ROOT):
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if len(parts) != 4 or parts[:2] != ["qkv", "grading"] or not parts[2].isdigit():
                continue
            if os.path.exists(f"/proc/{parts[2]}"):
                continue
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(root, name))


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


@dataclass
class SandboxCgroup:
    """One sandbox's cgroups. ``paths`` are the directories whose ``cgroup.procs`` the sandbox joins."""

    paths: list[str]
    pids_dir: str | None
    memory_dir: str | None

    @classmethod
    def create(cls, max_pids: int, memory_bytes: int) -> SandboxCgroup | None:
        """Make the cgroups, or return None where that is not possible here."""
        if not cgroups_available():
            return None
        name = f"qkv-grading-{os.getpid()}-{next(_counter)}"
        pids_dir = os.path.join(PIDS_ROOT, name)
        try:
            os.mkdir(pids_dir)
            _write(os.path.join(pids_dir, "pids.max"), str(max_pids))
        except OSError:
            return None
        memory_dir: str | None = os.path.join(MEMORY_ROOT, name)
        try:
            assert memory_dir is not None
            os.mkdir(memory_dir)
            _write(os.path.join(memory_dir, "memory.limit_in_bytes"), str(memory_bytes))
        except OSError:
            memory_dir = None
        paths = [pids_dir] + ([memory_dir] if memory_dir else [])
        return cls(paths, pids_dir, memory_dir)

    def processes_limit_hit(self) -> bool:
        """Whether a fork was refused because of ``pids.max``."""
        events = _read(os.path.join(self.pids_dir, "pids.events")) if self.pids_dir else ""
        return any(
            line.split()[1:] not in ([], ["0"]) for line in events.splitlines() if line.startswith("max")
        )

    def memory_limit_hit(self) -> bool:
        """Whether the kernel killed a process of this sandbox for using too much memory."""
        if not self.memory_dir:
            return False
        for line in _read(os.path.join(self.memory_dir, "memory.oom_control")).splitlines():
            if line.startswith("oom_kill ") and line.split()[1] != "0":
                return True
        return False

    def remove(self) -> None:
        """Delete the cgroups once their processes are gone (retrying briefly while they exit)."""
        for directory in self.paths:
            for _ in range(50):
                try:
                    os.rmdir(directory)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
