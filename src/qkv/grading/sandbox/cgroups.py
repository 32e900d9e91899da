"""Per-sandbox cgroups: the v1 ``pids`` and ``memory`` hierarchies, or a cgroup v2 group where v1 is absent.

``RLIMIT_NPROC`` does not hold for root, not even inside a user namespace, so the process limit comes from a
``pids`` controller in a cgroup of the sandbox's own: it counts exactly that sandbox's processes and
threads. The ``memory`` controller bounds the whole tree (forked children and files in the tmpfs ``/tmp``
included).

Which cgroup a sandbox gets (:func:`choose`):

1. cgroup v1, when its ``pids`` hierarchy is mounted and writable (as today: root on a v1 or hybrid host);
   groups are made at the hierarchies' roots, the ``memory`` one where it can be.
2. cgroup v2 otherwise. qkv never moves a process other than a sandbox's, so the v2 "no internal
   processes" rule decides where the groups go: the kernel enables a controller for a group's children
   only where the group holds no processes itself, or is the hierarchy's root. The groups are therefore
   made in the first of these that can give them ``memory`` and ``pids``:

   - this process's own cgroup, if it is the root, or already has both in ``cgroup.subtree_control``;
   - its parent, if that holds no processes: a systemd unit with ``Delegate=yes`` and
     ``DelegateSubgroup=`` runs the service in a subgroup of its delegated unit group, which stays empty.

   An intermediate group of qkv's own would not help: it gets only what its parent enables for it.
3. None: the sandbox falls back to ``RLIMIT_NPROC`` and per-process rlimits (see ``docs/grading.md``).
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import os
import re
import time
from dataclasses import dataclass

__all__ = [
    "HOST",
    "CgroupChoice",
    "CgroupHost",
    "CgroupKind",
    "SandboxCgroup",
    "apply_v2_limits",
    "cgroups_available",
    "choose",
    "limit_hits",
    "remove_stale",
    "slices_pause",
]

_counter = itertools.count()
_NAME = re.compile(r"qkv-grading-(\d+)-\d+")


@dataclass(frozen=True)
class CgroupHost:
    """Where this host's cgroup files are, and which v2 controllers a sandbox's group must have.

    The defaults describe the running machine; tests point them elsewhere (a v1 root that does not
    exist, say, to see what a host without cgroup v1 would do).
    """

    v1_pids: str = "/sys/fs/cgroup/pids"
    v1_memory: str = "/sys/fs/cgroup/memory"
    v1_freezer: str = "/sys/fs/cgroup/freezer"
    v1_cpuacct: str = "/sys/fs/cgroup/cpuacct"
    mountinfo: str = "/proc/self/mountinfo"
    own_cgroup: str = "/proc/self/cgroup"
    v2_controllers: tuple[str, ...] = ("memory", "pids")


HOST = CgroupHost()


class CgroupKind(enum.Enum):
    """Which cgroups a sandbox gets on this host."""

    V1 = "cgroup v1"
    V2 = "cgroup v2"
    NONE = "none"


@dataclass(frozen=True)
class CgroupChoice:
    """The kind of cgroup sandboxes get, the directory their groups are made in, and why (a sentence)."""

    kind: CgroupKind
    parent: str | None
    reason: str


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _v1_problem(host: CgroupHost) -> str | None:
    """Why the v1 ``pids`` hierarchy cannot be used, or None where it can."""
    # "tasks" exists only in v1 groups: a v2 group that happens to be called "pids" is not the hierarchy.
    if not os.path.isfile(os.path.join(host.v1_pids, "tasks")):
        return f"the cgroup v1 pids hierarchy is not mounted at {host.v1_pids}"
    if not os.access(host.v1_pids, os.W_OK):
        return f"the cgroup v1 pids hierarchy at {host.v1_pids} is not writable by this process"
    return None


def _unescape(field: str) -> str:
    """A mountinfo path field, whose spaces, tabs, newlines and backslashes are octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)


def _v2_mount(host: CgroupHost) -> tuple[str, str] | None:
    """The first cgroup2 mount: its mount point and the path in the hierarchy that it shows."""
    for line in _read(host.mountinfo).splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        separator = fields.index("-")
        if separator >= 5 and fields[separator + 1 : separator + 2] == ["cgroup2"]:
            return _unescape(fields[4]), _unescape(fields[3])
    return None


def _own_v2_path(host: CgroupHost) -> str | None:
    """This process's cgroup in the v2 hierarchy (the ``0::/path`` line of /proc/self/cgroup)."""
    for line in _read(host.own_cgroup).splitlines():
        if line.startswith("0::"):
            return line[3:]
    return None


def _words(path: str) -> list[str]:
    return _read(path).split()


def _names(names: list[str] | tuple[str, ...]) -> str:
    return " and ".join(names) + (" controllers" if len(names) > 1 else " controller")


def _v2_parent_problem(directory: str, wanted: tuple[str, ...]) -> str | None:
    """Why sandbox groups cannot be made in ``directory`` with the ``wanted`` controllers, or None."""
    if not os.access(directory, os.W_OK):
        return f"{directory} is not writable by this process"
    offered = _words(os.path.join(directory, "cgroup.controllers"))
    missing = tuple(name for name in wanted if name not in offered)
    if missing:
        listed = " ".join(offered) if offered else "nothing"
        return f"{directory} lacks the {_names(missing)} (its cgroup.controllers lists {listed})"
    enabled = _words(os.path.join(directory, "cgroup.subtree_control"))
    if all(name in enabled for name in wanted):
        return None
    # cgroup.type exists in every group but the root, and only the root may enable controllers while it
    # holds processes.
    is_root = not os.path.exists(os.path.join(directory, "cgroup.type"))
    if not is_root and _words(os.path.join(directory, "cgroup.procs")):
        return (
            f"{directory} holds processes, and the kernel enables controllers only for the children of a "
            "group without processes (or of the root)"
        )
    return None


def _find_v2(host: CgroupHost) -> tuple[str | None, str]:
    """The directory to make v2 sandbox groups in (or None) and a sentence saying why."""
    mount = _v2_mount(host)
    if mount is None:
        return None, "no cgroup2 file system is mounted"
    mount_point, shown = mount
    own = _own_v2_path(host)
    if own is None:
        return None, f"{host.own_cgroup} names no cgroup v2 group for this process"
    shown = shown.rstrip("/")
    if own != shown and not own.startswith(shown + "/"):
        return (
            None,
            f"this process's cgroup {own} is outside the part of the hierarchy mounted at {mount_point}",
        )
    relative = own[len(shown) :].strip("/")
    candidates = [os.path.join(mount_point, relative) if relative else mount_point]
    if relative:
        candidates.append(os.path.dirname(candidates[0]))
    problems = []
    for directory in candidates:
        problem = _v2_parent_problem(directory, host.v2_controllers)
        if problem is None:
            return directory, f"cgroup v2 groups are made in {directory}"
        problems.append(problem)
    return None, f"cgroup v2 (mounted at {mount_point}) cannot bound a sandbox because " + "; ".join(problems)


def choose(host: CgroupHost = HOST) -> CgroupChoice:
    """Which cgroups sandboxes get on ``host``: v1 where its ``pids`` hierarchy is usable, else v2, else none.

    Only reads files; :meth:`SandboxCgroup.create` makes the groups.

    >>> choice = choose(CgroupHost(v1_pids="/nonexistent", mountinfo="/nonexistent"))
    >>> choice.kind, choice.parent
    (<CgroupKind.NONE: 'none'>, None)
    >>> print(choice.reason)
    No cgroup can be made for a sandbox here: the cgroup v1 pids hierarchy is not mounted at
    /nonexistent, and no cgroup2 file system is mounted.
    """
    v1_problem = _v1_problem(host)
    if v1_problem is None:
        return CgroupChoice(
            CgroupKind.V1, host.v1_pids, f"The cgroup v1 pids hierarchy at {host.v1_pids} is writable."
        )
    parent, why = _find_v2(host)
    if parent is not None:
        return CgroupChoice(CgroupKind.V2, parent, f"{v1_problem[0].upper()}{v1_problem[1:]}, so {why}.")
    return CgroupChoice(
        CgroupKind.NONE, None, f"No cgroup can be made for a sandbox here: {v1_problem}, and {why}."
    )


def cgroups_available(host: CgroupHost = HOST) -> bool:
    """Whether sandboxes get a cgroup here (v1, or v2 with the controllers ``host`` asks for)."""
    return choose(host).kind is not CgroupKind.NONE


def slices_pause(host: CgroupHost = HOST) -> bool:
    """Whether a sandbox's cgroups can pause its programs and count their CPU time here.

    Then a program that outgrows a slice of CPU time is frozen and later thawed; elsewhere a slice is
    wall-clock time and a program that outgrows it is stopped, to run again from the start. v2 groups can
    always do both; v1 needs the ``freezer`` and ``cpuacct`` hierarchies.
    """
    choice = choose(host)
    if choice.kind is CgroupKind.V2:
        return True
    return choice.kind is CgroupKind.V1 and all(
        os.path.isfile(os.path.join(root, "tasks")) for root in (host.v1_freezer, host.v1_cpuacct)
    )


def remove_stale(host: CgroupHost = HOST) -> None:
    """Delete empty sandbox cgroups left behind by grading processes that no longer exist."""
    choice = choose(host)
    roots = (
        [host.v1_pids, host.v1_memory, host.v1_freezer, host.v1_cpuacct]
        if choice.kind is CgroupKind.V1
        else [choice.parent]
    )
    for root in roots:
        if root is None:
            continue
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            match = _NAME.fullmatch(name)
            if match is None or os.path.exists(f"/proc/{match.group(1)}"):
                continue
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(root, name))


def apply_v2_limits(directory: str, max_pids: int, memory_bytes: int) -> tuple[str, ...]:
    """Write the limits of a new v2 group for the controllers it has; return those controllers.

    ``memory.max`` bounds the tree's memory and ``memory.swap.max = 0`` (where swap is accounted) keeps
    it from spilling into swap; ``pids.max`` bounds its processes and threads. Raises OSError when a
    write fails.
    """
    controllers = tuple(
        name for name in ("memory", "pids") if name in _words(os.path.join(directory, "cgroup.controllers"))
    )
    if "memory" in controllers:
        _write(os.path.join(directory, "memory.max"), str(memory_bytes))
        swap = os.path.join(directory, "memory.swap.max")
        if os.path.exists(swap):
            _write(swap, "0")
    if "pids" in controllers:
        _write(os.path.join(directory, "pids.max"), str(max_pids))
    return controllers


def _optional_v1_group(root: str, name: str) -> str | None:
    """Make ``name`` in the v1 hierarchy at ``root`` when one is mounted there; None otherwise."""
    if not os.path.isfile(os.path.join(root, "tasks")):  # only v1 groups have "tasks"
        return None
    directory = os.path.join(root, name)
    try:
        os.mkdir(directory)
    except OSError:
        return None
    return directory


def limit_hits(events: str, counter: str) -> bool:
    """Whether the ``counter`` line of an events file (``pids.events``, ``memory.events``, v1's
    ``memory.oom_control``) counts more than zero.

    >>> limit_hits("low 0\\nhigh 0\\nmax 3\\noom 0\\noom_kill 0\\n", "oom_kill")
    False
    >>> limit_hits("max 2\\n", "max")
    True
    """
    for line in events.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == counter:
            return fields[1] != "0"
    return False


@dataclass
class SandboxCgroup:
    """One sandbox's cgroups.

    ``paths`` are the groups whose ``cgroup.procs`` the sandbox joins (v1: ``pids`` and ``memory``; v2:
    one group). ``procs_dir`` is the one whose ``cgroup.procs`` lists every process of the sandbox;
    ``pids_dir`` and ``memory_dir`` are None where that controller is missing; ``freezer_dir`` (pausing)
    and ``cpu_dir`` (the tree's CPU time) likewise.
    """

    kind: CgroupKind
    paths: list[str]
    procs_dir: str
    pids_dir: str | None
    memory_dir: str | None
    freezer_dir: str | None = None
    cpu_dir: str | None = None

    @classmethod
    def create(cls, max_pids: int, memory_bytes: int, host: CgroupHost = HOST) -> SandboxCgroup | None:
        """Make the cgroups, or return None where that is not possible here."""
        choice = choose(host)
        name = f"qkv-grading-{os.getpid()}-{next(_counter)}"
        if choice.kind is CgroupKind.V1:
            return cls._create_v1(name, max_pids, memory_bytes, host)
        if choice.kind is CgroupKind.V2 and choice.parent is not None:
            return cls._create_v2(os.path.join(choice.parent, name), max_pids, memory_bytes, host)
        return None

    @classmethod
    def _create_v1(
        cls, name: str, max_pids: int, memory_bytes: int, host: CgroupHost
    ) -> SandboxCgroup | None:
        pids_dir = os.path.join(host.v1_pids, name)
        try:
            os.mkdir(pids_dir)
            _write(os.path.join(pids_dir, "pids.max"), str(max_pids))
        except OSError:
            with contextlib.suppress(OSError):
                os.rmdir(pids_dir)
            return None
        memory_dir: str | None = os.path.join(host.v1_memory, name)
        try:
            os.mkdir(os.path.join(host.v1_memory, name))
            _write(os.path.join(host.v1_memory, name, "memory.limit_in_bytes"), str(memory_bytes))
        except OSError:  # no memory hierarchy here: the pids group alone, as before
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(host.v1_memory, name))
            memory_dir = None
        # Optional: the freezer pauses a program that outgrows its first slice, cpuacct measures the slice.
        freezer_dir = _optional_v1_group(host.v1_freezer, name)
        cpu_dir = _optional_v1_group(host.v1_cpuacct, name)
        paths = [path for path in (pids_dir, memory_dir, freezer_dir, cpu_dir) if path is not None]
        return cls(CgroupKind.V1, paths, pids_dir, pids_dir, memory_dir, freezer_dir, cpu_dir)

    @classmethod
    def _create_v2(
        cls, group: str, max_pids: int, memory_bytes: int, host: CgroupHost
    ) -> SandboxCgroup | None:
        parent = os.path.dirname(group)
        enabled = _words(os.path.join(parent, "cgroup.subtree_control"))
        try:
            for controller in host.v2_controllers:
                if controller not in enabled:
                    _write(os.path.join(parent, "cgroup.subtree_control"), f"+{controller}")
            os.mkdir(group)
        except OSError:
            return None
        try:
            controllers = apply_v2_limits(group, max_pids, memory_bytes)
            if any(name not in controllers for name in host.v2_controllers):
                raise OSError(f"{group} lacks a controller its parent enables")
        except OSError:
            with contextlib.suppress(OSError):
                os.rmdir(group)
            return None
        pids_dir = group if "pids" in controllers else None
        memory_dir = group if "memory" in controllers else None
        # cgroup.freeze and cpu.stat are core files of every v2 group but the root: no controller needed.
        freezer_dir = group if os.path.exists(os.path.join(group, "cgroup.freeze")) else None
        cpu_dir = group if os.path.exists(os.path.join(group, "cpu.stat")) else None
        return cls(CgroupKind.V2, [group], group, pids_dir, memory_dir, freezer_dir, cpu_dir)

    def add(self, pid: int) -> None:
        """Move the process ``pid`` into every group of the sandbox (its children will be born there).

        Raises
        ------
        OSError
            If a group refuses it (the process is gone, say); the caller must not let it run then.
        """
        for path in self.paths:
            _write(os.path.join(path, "cgroup.procs"), str(pid))

    @property
    def bounds_processes(self) -> bool:
        """Whether a ``pids`` controller bounds this sandbox's processes (else ``RLIMIT_NPROC`` must)."""
        return self.pids_dir is not None

    def processes(self) -> list[int]:
        """The pids of every process in the sandbox's group now."""
        return [int(line) for line in _read(os.path.join(self.procs_dir, "cgroup.procs")).split()]

    def kill(self) -> bool:
        """Kill every process of the group at once, forks in flight included (v2's ``cgroup.kill``).

        Returns False where the kernel has no ``cgroup.kill`` (v1, or v2 before Linux 5.14): the caller
        then kills the :meth:`processes` one by one.
        """
        if self.kind is not CgroupKind.V2:
            return False
        try:
            _write(os.path.join(self.procs_dir, "cgroup.kill"), "1")
        except OSError:
            return False
        return True

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process of the sandbox so far (None where no group measures it)."""
        if self.cpu_dir is None:
            return None
        if self.kind is CgroupKind.V1:
            text = _read(os.path.join(self.cpu_dir, "cpuacct.usage")).strip()
            return int(text) / 1e9 if text.isdigit() else None
        for line in _read(os.path.join(self.cpu_dir, "cpu.stat")).splitlines():
            fields = line.split()
            if len(fields) == 2 and fields[0] == "usage_usec" and fields[1].isdigit():
                return int(fields[1]) / 1e6
        return None

    @property
    def can_freeze(self) -> bool:
        """Whether the sandbox can be paused (v1 ``freezer``, or v2's ``cgroup.freeze``)."""
        return self.freezer_dir is not None

    def freeze(self, timeout_s: float = 1.0) -> bool:
        """Pause every process of the sandbox; True once the kernel says the whole group is frozen."""
        if self.freezer_dir is None:
            return False
        v1 = self.kind is CgroupKind.V1
        try:
            if v1:
                _write(os.path.join(self.freezer_dir, "freezer.state"), "FROZEN")
            else:
                _write(os.path.join(self.freezer_dir, "cgroup.freeze"), "1")
        except OSError:
            return False
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.frozen():
                return True
            time.sleep(0.002)
        return False

    def frozen(self) -> bool:
        """Whether the kernel reports the group as wholly frozen now."""
        if self.freezer_dir is None:
            return False
        if self.kind is CgroupKind.V1:
            return _read(os.path.join(self.freezer_dir, "freezer.state")).strip() == "FROZEN"
        return "frozen 1" in _read(os.path.join(self.freezer_dir, "cgroup.events")).splitlines()

    def thaw(self) -> None:
        """Let a paused sandbox run again (v1's frozen processes cannot even die until thawed)."""
        if self.freezer_dir is None:
            return
        v1 = self.kind is CgroupKind.V1
        with contextlib.suppress(OSError):
            if v1:
                _write(os.path.join(self.freezer_dir, "freezer.state"), "THAWED")
            else:
                _write(os.path.join(self.freezer_dir, "cgroup.freeze"), "0")

    def processes_limit_hit(self) -> bool:
        """Whether a fork was refused because of ``pids.max``."""
        if self.pids_dir is None:
            return False
        return limit_hits(_read(os.path.join(self.pids_dir, "pids.events")), "max")

    def memory_limit_hit(self) -> bool:
        """Whether the kernel killed a process of this sandbox for using too much memory.

        v2 counts such kills as ``oom_kill`` in ``memory.events``; its ``max`` line counts every time the
        tree reached ``memory.max`` and the kernel reclaimed memory, which a program survives.
        """
        if self.memory_dir is None:
            return False
        events = "memory.oom_control" if self.kind is CgroupKind.V1 else "memory.events"
        return limit_hits(_read(os.path.join(self.memory_dir, events)), "oom_kill")

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
