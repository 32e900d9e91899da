"""Which cgroups a sandbox gets, and what qkv does with them.

No development machine had cgroup v2 ``memory`` and ``pids`` controllers (on the one these tests were
written on, they are bound to cgroup v1 and cgroup v2 at /sys/fs/cgroup/unified offers only ``hugetlb``).
So the tests are of three sorts, each named for what it checks:

- this host, read for real: which kind is chosen, and the sentence that says why v2 cannot bound a sandbox;
- a real v2 group without controllers under the real cgroup2 mount: made, joined by a real sandbox,
  emptied with ``cgroup.kill`` and removed;
- the v2 limits at the level of files, against a temporary directory laid out like a cgroup v2 tree: what
  qkv writes there and how it reads the events files. These check qkv, not the kernel.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from qkv.grading import Grader, Limits, sandbox_available
from qkv.grading.sandbox.cgroups import (
    CgroupHost,
    CgroupKind,
    SandboxCgroup,
    apply_v2_limits,
    choose,
    remove_stale,
    slices_pause,
)
from qkv.grading.sandbox.process import SandboxProcess
from tests.builtin_lessons import L41_SUITE, L41_TESTS
from tests.time_scale import scaled

HOSTILE = Path(__file__).parents[1] / "hostile"
needs_bubblewrap = pytest.mark.skipif(
    not sandbox_available(), reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
TOO_MANY = (
    "Your code started too many processes (the limit is 16), so the next one could not start. "
    "This happened while your file was being loaded, so no test could run."
)


def _mounts(fstype: str) -> list[tuple[str, list[str]]]:
    """(mount point, super options) of each mount of ``fstype``, read from mountinfo here in the test."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, after = line.split(" - ")
        kind, _, options = after.split()
        if kind == fstype:
            found.append((before.split()[4], options.split(",")))
    return found


def _without_v1(tmp_path: Path, v2_controllers: tuple[str, ...] = ("memory", "pids")) -> CgroupHost:
    """This host, but with the cgroup v1 hierarchies missing (as on a cgroup-v2-only host)."""
    missing = str(tmp_path / "no-v1")
    return CgroupHost(v1_pids=f"{missing}/pids", v1_memory=f"{missing}/memory", v2_controllers=v2_controllers)


def _real_v2_mount() -> str | None:
    mounts = _mounts("cgroup2")
    return mounts[0][0] if mounts else None


def _own_v2_group() -> str:
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    return next(line[3:] for line in lines if line.startswith("0::"))


def _controller_less_host(tmp_path: Path) -> CgroupHost:
    return _without_v1(tmp_path, v2_controllers=())


def _can_make_real_v2_groups() -> bool:
    return choose(_controller_less_host(Path("/nonexistent"))).kind is CgroupKind.V2


needs_writable_v2 = pytest.mark.skipif(
    not _can_make_real_v2_groups(), reason="this process cannot make cgroup v2 groups here (not root?)"
)


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found, frontier = set(), [root]
    while frontier:
        parent = frontier.pop()
        children = {pid for pid, ppid in parents.items() if ppid == parent}
        found |= children
        frontier += children
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _named(name: str) -> list[int]:
    """Living processes called ``name``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name and _alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _run_a_sandbox_and_check_its_group(host: CgroupHost, hierarchy_prefix: str) -> None:
    """Start a real sandbox with ``host``'s cgroups; its processes must be in the group, which goes after."""
    box = SandboxProcess(Limits(), use_bwrap=True, cgroup_host=host)
    assert box.cgroup is not None
    group = box.cgroup.procs_dir
    try:
        box.wait_ready()
        members = set(box.cgroup.processes())
        tree = {box.process.pid} | _descendants(box.process.pid)
        harness = [pid for pid in tree if b"harness.py" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert harness, "no harness process was found below the sandbox"
        assert tree <= members, f"sandbox processes {sorted(tree - members)} are not in {group}"
        # Seen from outside, the harness's own /proc entry names the group (bubblewrap's cgroup namespace
        # hides it only from the inside).
        own_lines = Path(f"/proc/{harness[0]}/cgroup").read_text().splitlines()
        assert f"{hierarchy_prefix}/{os.path.basename(group)}" in own_lines
        raw = box.run({"source": "x = 6 * 7\n", "calls": []})
    finally:
        if box.cgroup is not None:
            box.discard()
    verdict_events = [event for event in raw.events if event["event"] != "timing"]  # timing: advisory
    assert verdict_events == [{"event": "imported"}, {"event": "done"}]
    assert not os.path.exists(group), f"{group} is still there after the sandbox ended"
    assert not any(_alive(pid) for pid in tree)


# -- this host, read for real ------------------------------------------------------------------------


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_the_choice_reads_this_host_and_a_sandbox_runs_in_the_group_chosen() -> None:
    pids_v1 = [point for point, options in _mounts("cgroup") if "pids" in options]
    choice = choose()
    if "/sys/fs/cgroup/pids" in pids_v1 and os.access("/sys/fs/cgroup/pids", os.W_OK):
        # This machine: root, with the v1 pids hierarchy mounted read-write (cgroup2 is there as well).
        assert choice.kind is CgroupKind.V1
        assert choice.reason == "The cgroup v1 pids hierarchy at /sys/fs/cgroup/pids is writable."
        v1_lines = Path("/proc/self/cgroup").read_text().splitlines()
        prefix = next(line.rsplit(":", 1)[0] for line in v1_lines if line.split(":")[1] == "pids")
        _run_a_sandbox_and_check_its_group(CgroupHost(), f"{prefix}:")
    else:
        assert choice.kind is not CgroupKind.V1
        assert "/sys/fs/cgroup/pids" in choice.reason


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_without_cgroup_v1_this_host_says_which_v2_controllers_are_missing_and_the_sandbox_falls_back(
    tmp_path: Path,
) -> None:
    host = _without_v1(tmp_path)
    mount = _real_v2_mount()
    choice = choose(host)
    offered = Path(f"{mount}/cgroup.controllers").read_text().split() if mount else []
    missing = [name for name in ("memory", "pids") if name not in offered]
    if mount is not None and _own_v2_group() == "/" and missing:
        # This machine: memory and pids are bound to cgroup v1, so v2's root offers neither.
        assert choice.kind is CgroupKind.NONE
        names = " and ".join(missing) + (" controllers" if len(missing) > 1 else " controller")
        assert choice.reason == (
            f"No cgroup can be made for a sandbox here: the cgroup v1 pids hierarchy is not mounted at "
            f"{tmp_path}/no-v1/pids, and cgroup v2 (mounted at {mount}) cannot bound a sandbox because "
            f"{mount} lacks the {names} (its cgroup.controllers lists {' '.join(offered) or 'nothing'})."
        )
        assert SandboxCgroup.create(19, 2**30, host) is None
    elif choice.kind is CgroupKind.V2:  # a host whose v2 has both controllers: it is used
        assert choice.reason.endswith(f"so cgroup v2 groups are made in {choice.parent}.")
    # Either way the process limit holds: by RLIMIT_NPROC on the unprivileged uid (as without any
    # cgroup), or by pids.max.
    with Grader(require_sandbox=True, limits=Limits(wall_s=5.0), cgroup_host=host) as grader:
        result = grader.grade((HOSTILE / "fork_flood.py").read_text(), L41_SUITE, seed=5)
    assert (result.status, result.message) == ("error", TOO_MANY)


# -- a real cgroup v2 group without controllers -------------------------------------------------------


@needs_bubblewrap
@needs_writable_v2
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_a_real_sandbox_joins_a_real_v2_group_without_controllers_which_is_removed_after(
    tmp_path: Path,
) -> None:
    host = _controller_less_host(tmp_path)
    choice = choose(host)
    assert choice.kind is CgroupKind.V2 and choice.parent is not None
    prefix = "0::" + choice.parent.removeprefix(str(_real_v2_mount())).rstrip("/")
    _run_a_sandbox_and_check_its_group(host, prefix)


@needs_bubblewrap
@needs_writable_v2
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_in_a_v2_group_without_pids_a_daemon_is_killed_and_rlimit_nproc_bounds_a_fork_flood(
    tmp_path: Path,
) -> None:
    host = _controller_less_host(tmp_path)
    parent = choose(host).parent
    assert parent is not None
    with Grader(require_sandbox=True, limits=Limits(wall_s=5.0), cgroup_host=host) as grader:
        daemon = grader.grade((HOSTILE / "daemon_escape.py").read_text(), L41_SUITE, seed=5)
        flood = grader.grade((HOSTILE / "fork_flood.py").read_text(), L41_SUITE, seed=5)
    param_count_tests = sum(row.function == "param_count" for row in L41_SUITE.table)  # all it defines
    assert daemon.status == "fail" and daemon.score == (param_count_tests, L41_TESTS)
    assert _named("qkvdaemonchild") == [] and _named("qkvfloodchild") == []
    assert (flood.status, flood.message) == ("error", TOO_MANY)
    ours = [name for name in os.listdir(parent) if name.startswith(f"qkv-grading-{os.getpid()}-")]
    assert ours == []


@needs_writable_v2
def test_cgroup_kill_empties_a_real_v2_group_forks_in_other_sessions_included(tmp_path: Path) -> None:
    group = SandboxCgroup.create(19, 2**30, _controller_less_host(tmp_path))
    assert group is not None and group.kind is CgroupKind.V2
    assert (group.pids_dir, group.memory_dir) == (None, None)
    if not os.path.exists(f"{group.procs_dir}/cgroup.kill"):
        group.remove()
        pytest.skip("this kernel has no cgroup.kill (Linux 5.14 added it)")
    # The shell joins the group, then starts a sleep in a session of its own and one in its own.
    script = 'echo $$ > "$0/cgroup.procs" || exit 1; setsid sleep 60 & sleep 60 & wait'
    shell = subprocess.Popen(["/bin/sh", "-c", script, group.procs_dir])
    try:
        deadline = time.monotonic() + scaled(10)
        while len(group.processes()) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        members = group.processes()
        assert len(members) >= 3, f"only {members} joined {group.procs_dir}"
        assert group.kill() is True
        deadline = time.monotonic() + scaled(10)
        while group.processes() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert group.processes() == []
        assert shell.wait(timeout=scaled(10)) == -9
        assert not any(_alive(pid) for pid in members)
    finally:  # should the test fail, leave no sleeper and no group behind
        for pid in [shell.pid, *group.processes()]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shell.wait()
        group.remove()
    assert not os.path.exists(group.procs_dir)


@needs_writable_v2
def test_stale_v2_groups_of_ended_graders_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    host = _controller_less_host(tmp_path)
    parent = choose(host).parent
    assert parent is not None
    ended = subprocess.Popen(["true"])
    ended.wait()
    assert not os.path.exists(f"/proc/{ended.pid}")
    stale = os.path.join(parent, f"qkv-grading-{ended.pid}-0")
    live = os.path.join(parent, f"qkv-grading-{os.getpid()}-999999")
    os.mkdir(stale)
    os.mkdir(live)
    try:
        remove_stale(host)
        assert not os.path.exists(stale)
        assert os.path.exists(live)
    finally:
        for directory in (stale, live):
            if os.path.exists(directory):
                os.rmdir(directory)


# -- files laid out like cgroup v2: what qkv writes and reads (not the kernel) ------------------------


def _group(directory: Path, controllers: str = "", procs: str = "", *, root: bool = False) -> Path:
    directory.mkdir(parents=True)
    (directory / "cgroup.controllers").write_text(controllers + "\n")
    (directory / "cgroup.subtree_control").write_text("\n")
    (directory / "cgroup.procs").write_text(procs)
    if not root:
        (directory / "cgroup.type").write_text("domain\n")
    return directory


def _laid_out_host(tmp_path: Path, own: str, mount_root: str = "/") -> CgroupHost:
    (tmp_path / "mountinfo").write_text(
        f"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        f"41 31 0:38 {mount_root} {tmp_path}/cg rw,relatime - cgroup2 cgroup2 rw\n"
    )
    (tmp_path / "cgroup").write_text(f"0::{own}\n")
    return CgroupHost(
        v1_pids=str(tmp_path / "no-v1"),
        v1_memory=str(tmp_path / "no-v1"),
        mountinfo=str(tmp_path / "mountinfo"),
        own_cgroup=str(tmp_path / "cgroup"),
    )


def test_laid_out_v2_a_grader_in_the_root_group_makes_its_groups_there(tmp_path: Path) -> None:
    _group(tmp_path / "cg", "cpu io memory pids", "1\n640\n", root=True)  # the root may hold processes
    choice = choose(_laid_out_host(tmp_path, "/"))
    assert (choice.kind, choice.parent) == (CgroupKind.V2, f"{tmp_path}/cg")
    assert choice.reason == (
        f"The cgroup v1 pids hierarchy is not mounted at {tmp_path}/no-v1, so cgroup v2 groups are made "
        f"in {tmp_path}/cg."
    )


def test_laid_out_v2_a_delegated_unit_with_a_subgroup_gets_its_groups_in_the_unit_group(
    tmp_path: Path,
) -> None:
    # systemd with Delegate=yes and DelegateSubgroup=grader: the service runs in .../qkv.service/grader,
    # and the unit group above it holds no processes, so it may enable memory and pids for its children.
    _group(tmp_path / "cg", "memory pids", "1\n", root=True)
    unit = _group(tmp_path / "cg/system.slice/qkv.service", "memory pids")
    _group(unit / "grader", "", "640\n")
    choice = choose(_laid_out_host(tmp_path, "/system.slice/qkv.service/grader"))
    assert (choice.kind, choice.parent) == (CgroupKind.V2, str(unit))


def test_laid_out_v2_a_group_shown_by_a_mount_of_part_of_the_hierarchy_is_found(tmp_path: Path) -> None:
    unit = _group(tmp_path / "cg", "memory pids")  # the mount shows /system.slice/qkv.service only
    _group(unit / "grader", "", "640\n")
    host = _laid_out_host(
        tmp_path, "/system.slice/qkv.service/grader", mount_root="/system.slice/qkv.service"
    )
    assert choose(host).parent == str(unit)


def test_laid_out_v2_the_no_internal_processes_rule_is_named_when_it_rules_a_group_out(
    tmp_path: Path,
) -> None:
    # A container with a cgroup namespace: its group looks like the root ("0::/") but is not one (it has
    # cgroup.type), and it holds the container's processes.
    own = _group(tmp_path / "cg", "memory pids", "1\n75\n")
    choice = choose(_laid_out_host(tmp_path, "/"))
    assert choice.kind is CgroupKind.NONE
    assert choice.reason == (
        f"No cgroup can be made for a sandbox here: the cgroup v1 pids hierarchy is not mounted at "
        f"{tmp_path}/no-v1, and cgroup v2 (mounted at {own}) cannot bound a sandbox because {own} holds "
        "processes, and the kernel enables controllers only for the children of a group without processes "
        "(or of the root)."
    )


def test_laid_out_v2_each_group_tried_is_named_with_what_it_lacks(tmp_path: Path) -> None:
    # A delegated unit with a subgroup, whose slice enables memory but not pids (TasksAccounting=no).
    _group(tmp_path / "cg", "memory pids", "1\n", root=True)
    unit = _group(tmp_path / "cg/system.slice/qkv.service", "memory")
    grader = _group(unit / "grader", "", "640\n")
    choice = choose(_laid_out_host(tmp_path, "/system.slice/qkv.service/grader"))
    assert choice.kind is CgroupKind.NONE
    assert choice.reason.endswith(
        f"cannot bound a sandbox because {grader} lacks the memory and pids controllers (its "
        f"cgroup.controllers lists nothing); {unit} lacks the pids controller (its cgroup.controllers "
        "lists memory)."
    )


def test_laid_out_v2_limits_go_to_memory_max_swap_and_pids_max(tmp_path: Path) -> None:
    group = _group(tmp_path / "qkv-grading-1-0", "memory pids")
    for name in ("memory.max", "memory.swap.max", "pids.max"):
        (group / name).write_text("max\n")
    assert apply_v2_limits(str(group), 19, 1536 * 2**20) == ("memory", "pids")
    written = {name: (group / name).read_text() for name in ("memory.max", "memory.swap.max", "pids.max")}
    assert written == {"memory.max": "1610612736", "memory.swap.max": "0", "pids.max": "19"}


def test_laid_out_v2_only_the_controllers_a_group_has_get_limits(tmp_path: Path) -> None:
    group = _group(tmp_path / "qkv-grading-1-0", "pids")  # no memory controller, no swap accounting
    assert apply_v2_limits(str(group), 19, 2**30) == ("pids",)
    assert not (group / "memory.max").exists() and not (group / "memory.swap.max").exists()
    assert (group / "pids.max").read_text() == "19"


def test_laid_out_v2_a_group_the_parent_gives_no_controllers_is_refused_and_removed(tmp_path: Path) -> None:
    # mkdir in a plain directory makes no cgroup.controllers, as if the kernel had not enabled memory and
    # pids for the new group: create must give up, leave nothing behind, and let the sandbox fall back.
    _group(tmp_path / "cg", "memory pids", root=True)
    assert SandboxCgroup.create(19, 2**30, _laid_out_host(tmp_path, "/")) is None
    assert not [name for name in os.listdir(tmp_path / "cg") if name.startswith("qkv-grading-")]


@pytest.mark.parametrize(
    ("memory_events", "pids_events", "hits"),
    [
        ("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n", "max 0\n", (False, False)),
        # "max" counts reclaims at memory.max, which a program survives: only a kill is the limit hit.
        ("low 0\nhigh 0\nmax 57\noom 0\noom_kill 0\noom_group_kill 0\n", "max 0\n", (False, False)),
        ("low 0\nhigh 0\nmax 60\noom 1\noom_kill 1\noom_group_kill 0\n", "max 0\n", (True, False)),
        ("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n", "max 4\n", (False, True)),
        ("", "", (False, False)),  # unreadable files: no hit claimed
    ],
)
def test_laid_out_v2_events_files_are_read_as_limit_hits(
    tmp_path: Path, memory_events: str, pids_events: str, hits: tuple[bool, bool]
) -> None:
    group = _group(tmp_path / "qkv-grading-1-0", "memory pids")
    if memory_events:
        (group / "memory.events").write_text(memory_events)
    if pids_events:
        (group / "pids.events").write_text(pids_events)
    cgroup = SandboxCgroup(CgroupKind.V2, [str(group)], str(group), str(group), str(group))
    assert (cgroup.memory_limit_hit(), cgroup.processes_limit_hit()) == hits
    assert cgroup.bounds_processes


def test_a_v1_group_still_reads_oom_control_and_its_pids_events(tmp_path: Path) -> None:
    pids, memory = tmp_path / "pids", tmp_path / "memory"
    pids.mkdir()
    memory.mkdir()
    (pids / "pids.events").write_text("max 2\n")
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    cgroup = SandboxCgroup(CgroupKind.V1, [str(pids), str(memory)], str(pids), str(pids), str(memory))
    assert (cgroup.memory_limit_hit(), cgroup.processes_limit_hit()) == (True, True)
    assert cgroup.kill() is False  # v1 has no cgroup.kill: the caller kills the processes one by one


def test_slices_pause_where_v1_has_a_freezer_and_cpuacct_and_always_in_v2(tmp_path: Path) -> None:
    def v1_host(*hierarchies: str) -> CgroupHost:
        for name in hierarchies:  # a v1 hierarchy, as far as the checks go: a writable folder with "tasks"
            (tmp_path / "v1" / name).mkdir(parents=True, exist_ok=True)
            (tmp_path / "v1" / name / "tasks").write_text("")
        return CgroupHost(
            **{
                f"v1_{name}": str(tmp_path / "v1" / name) for name in ("pids", "memory", "freezer", "cpuacct")
            },
            mountinfo=str(tmp_path / "no-mountinfo"),
        )

    assert choose(v1_host("pids", "memory", "cpuacct")).kind is CgroupKind.V1
    assert slices_pause(v1_host("pids", "memory", "cpuacct")) is False  # no freezer: stop and run again
    assert slices_pause(v1_host("pids", "memory", "cpuacct", "freezer")) is True
    _group(tmp_path / "cg", "cpu io memory pids", "1\n", root=True)
    assert slices_pause(_laid_out_host(tmp_path, "/")) is True
    assert slices_pause(CgroupHost(v1_pids="/nonexistent", mountinfo="/nonexistent")) is False
