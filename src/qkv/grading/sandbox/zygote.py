"""The zygote: a warm interpreter that forks every submission into a fresh sandbox of its own.

Starting Python and importing NumPy is most of the cost of a grading, and it is the same work every time.
This program does it once. It runs inside bubblewrap, like the harness (``python -I -S -B -u
/grader/zygote.pyc CONTROL_FD SECCOMP_FD SITE_DIR TMP_BYTES``), in an outer sandbox that already has the
read-only root, no network and no capabilities, and it imports nothing from ``qkv``: only the standard
library, NumPy and the harness. It never runs a learner's code itself. For each submission the grader asks
for a child (one datagram on the control socket, carrying the child's pipes); the zygote forks, and the
child, before any of the learner's code exists in it, makes a sandbox nobody else has used:

1. it waits until the grader has moved it into the submission's own cgroups (the grader writes one byte);
2. it unshares new user, mount, PID, network, IPC, UTS and cgroup namespaces, so that it sees no other
   submission's processes, files, sockets or IPC objects;
3. it forks the new PID namespace's init, which mounts a fresh ``/tmp`` (a tmpfs of ``TMP_BYTES``) and a
   fresh ``/proc`` (showing only this sandbox's processes), drops every capability (bounding, ambient,
   effective, permitted, inheritable; securebits locked), sets no-new-privileges and loads the same
   seccomp filter as bubblewrap does for a fresh interpreter;
4. the init forks the harness (PID 2), which lowers its rlimits and serves the one job; the init reaps
   and exits with the harness's status, 128 + the signal if a signal ended it, as bubblewrap does.

The zygote reports on a per-child status pipe: ``forked PID CPU`` (the child's PID in the zygote's
namespace and the CPU seconds the fork cost the zygote), then ``exit CODE`` once the child is gone.
What the learner's code finds in memory is a copy of this process: NumPy, the harness and this file,
nothing of any other submission, and no descriptor but its own pipes.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import sys
import time
from typing import Any

# Namespaces (linux/sched.h).
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x10000000, 0x20000000, 0x40000000
NEW_NAMESPACES = (
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP
)
# Mounts (linux/mount.h).
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
# prctl (linux/prctl.h, linux/securebits.h, linux/seccomp.h).
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 1, 4, 22, 24, 28
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
SECCOMP_MODE_FILTER = 2
# NOROOT, NO_SETUID_FIXUP and NO_CAP_AMBIENT_RAISE, each with its lock, and KEEP_CAPS locked off.
LOCKED_SECUREBITS = 0b11101111
CAPABILITY_VERSION_3 = 0x20080522
# /proc entries that stay read-only over the fresh /proc, as bubblewrap covers them.
PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus")

# The child's descriptors, once moved into place.
STDIN, STDOUT, STDERR, REPORT_FD, GO_FD = 0, 1, 2, 3, 4
CHILD_FDS = 6  # stdin, stdout, stderr, report, go (read ends or write ends as the child needs), status
SET_UP_FAILED = 70  # the child's exit status when it could not build its sandbox (it says why on stderr)
NOT_RELEASED = 71  # the grader closed the go pipe instead of releasing the child

_libc = ctypes.CDLL(None, use_errno=True)


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def checked(result: int, what: str) -> None:
    """Raise ``OSError`` naming ``what`` when a libc call returned -1."""
    if result == -1:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def prctl(option: int, arg: int = 0, what: str = "prctl") -> None:
    checked(
        _libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
        what,
    )


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    result = _libc.mount(_bytes(source), target.encode(), _bytes(kind), ctypes.c_ulong(flags), _bytes(data))
    checked(result, f"mount {target}")


def write_file(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


# --- the child's steps, in order ---------------------------------------------------------------------


def enter_new_namespaces() -> None:
    """Step 2: new namespaces, with this process's uid and gid as the only ones mapped into them."""
    uid, gid = os.geteuid(), os.getegid()
    checked(_libc.unshare(NEW_NAMESPACES), "unshare")
    write_file("/proc/self/setgroups", "deny")
    write_file("/proc/self/uid_map", f"{uid} {uid} 1")
    write_file("/proc/self/gid_map", f"{gid} {gid} 1")


def mount_fresh_tmp_and_proc(tmp_bytes: int) -> None:
    """Step 3: nothing mounted here reaches the zygote; a new ``/tmp`` and a ``/proc`` of this sandbox."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_bytes},mode=0755")
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_COVERED:
        path = f"/proc/{name}"
        if os.path.exists(path):
            mount(path, path, None, MS_BIND | MS_REC)
            mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)


def drop_capabilities(last_cap: int) -> None:
    """Step 3: no capability in any set, now or after an ``execve``; securebits locked."""
    prctl(PR_SET_SECUREBITS, LOCKED_SECUREBITS, "securebits")
    for cap in range(last_cap + 1):
        prctl(PR_CAPBSET_DROP, cap, f"dropping capability {cap} from the bounding set")
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, "clearing the ambient capabilities")
    header, data = CapHeader(CAPABILITY_VERSION_3, 0), (CapData * 2)()
    checked(_libc.capset(ctypes.byref(header), data), "capset")
    checked(_libc.capget(ctypes.byref(header), data), "capget")
    if any(part.effective or part.permitted or part.inheritable for part in data):
        raise OSError(0, "capabilities were left after dropping them")


def load_seccomp(program: bytes) -> None:
    """Step 3: no new privileges, then the seccomp filter (which nothing can lift afterwards)."""
    prctl(PR_SET_NO_NEW_PRIVS, 1, "no_new_privs")
    if not program:
        return
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    checked(
        _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog), 0, 0), "seccomp"
    )


def exit_status(status: int) -> int:
    """A wait status as bubblewrap reports it: the exit code, or 128 + the signal that ended the process."""
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


# --- the three processes of one sandbox ---------------------------------------------------------------


def child(fds: list[int], rlimits: str, settings: ZygoteSettings) -> None:
    """Runs in the forked child (never returns): steps 1 and 2, then the init."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, "parent-death signal")  # the zygote gone: nothing left
        place_descriptors(fds)
        if os.read(GO_FD, 1) != b"G":
            os._exit(NOT_RELEASED)
        os.close(GO_FD)
        boot = {"t": time.monotonic(), "cpu": 0.0}
        enter_new_namespaces()
        init = os.fork()
        if init == 0:
            init_process(rlimits, settings, boot)
        # stdout and stderr stay open here until the sandbox's status is known, so that the grader, which
        # reads them to their end, learns the harness's exit status before it kills anything.
        for fd in (STDIN, REPORT_FD):
            os.close(fd)
        _, status = os.waitpid(init, 0)
        os._exit(exit_status(status))
    except BaseException as error:
        fail(error)


def init_process(rlimits: str, settings: ZygoteSettings, boot: dict[str, float]) -> None:
    """PID 1 of the new namespace (never returns): step 3, then the harness as PID 2, then reap."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, "parent-death signal")
        mount_fresh_tmp_and_proc(settings.tmp_bytes)
        os.chdir("/tmp")
        drop_capabilities(settings.last_cap)
        load_seccomp(settings.seccomp)
        # The init has the learner's uid, so only this keeps the learner's code out of its memory
        # (/proc/1/mem); the harness, forked next, makes itself dumpable again (its /proc is its own).
        prctl(PR_SET_DUMPABLE, 0, "not dumpable")
        harness_pid = os.fork()
        if harness_pid == 0:
            harness_process(rlimits, boot)
        for fd in (STDIN, STDOUT, STDERR, REPORT_FD):
            os.close(fd)
        while True:  # orphans of the learner's code end up here too: reap them until the harness ends
            pid, status = os.wait()
            if pid == harness_pid:
                os._exit(exit_status(status))
    except BaseException as error:
        fail(error)


def harness_process(rlimits: str, boot: dict[str, float]) -> None:
    """PID 2 (never returns): the harness serves the one job, as in a freshly started interpreter."""
    try:
        prctl(PR_SET_DUMPABLE, 1, "dumpable")
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter has it
        import harness  # loaded by the zygote; see load_harness

        harness.apply_limits(rlimits)
        harness.serve(REPORT_FD, {"boot": boot})
    except BaseException as error:
        fail(error)


def fail(error: BaseException) -> None:
    """Say on stderr why the sandbox could not be built, and exit (the grader shows it as its own error)."""
    with contextlib.suppress(BaseException):
        os.write(STDERR, f"the sandbox could not be set up: {error}\n".encode())
    os._exit(SET_UP_FAILED)


def place_descriptors(fds: list[int]) -> None:
    """Put the child's pipes at 0–4 and close everything else the zygote had (the control socket too)."""
    import fcntl

    above = [fcntl.fcntl(fd, fcntl.F_DUPFD, GO_FD + 1) for fd in fds[:5]]  # out of the way of 0–4
    for target, fd in enumerate(above):
        os.dup2(fd, target)
    os.closerange(GO_FD + 1, os.sysconf("SC_OPEN_MAX"))


# --- the zygote itself --------------------------------------------------------------------------------


class ZygoteSettings:
    """What every child needs: the seccomp filter, the size of ``/tmp``, the highest capability number."""

    def __init__(self, seccomp: bytes, tmp_bytes: int, last_cap: int) -> None:
        self.seccomp = seccomp
        self.tmp_bytes = tmp_bytes
        self.last_cap = last_cap


def load_harness() -> Any:
    """Import the harness (bound beside this file) once, so that every child has it ready."""
    sys.path.insert(0, "/grader")
    try:
        import harness

        return harness
    finally:
        sys.path.remove("/grader")


def read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    os.close(fd)
    return data


def spawn(request: bytes, fds: list[int], settings: ZygoteSettings) -> tuple[int, int] | None:
    """Fork a child for one request; its pid and status descriptor, or None for a malformed request."""
    try:
        rlimits = json.loads(request)["rlimits"]
        valid = isinstance(rlimits, str) and len(fds) == CHILD_FDS
    except (ValueError, KeyError, TypeError):
        valid = False
    if not valid:
        for fd in fds:
            os.close(fd)
        return None
    started = time.process_time()
    pid = os.fork()
    if pid == 0:
        child(fds, rlimits, settings)
    for fd in fds[:-1]:
        os.close(fd)
    status_fd = fds[-1]
    tell(status_fd, f"forked {pid} {time.process_time() - started:.6f}\n")
    return pid, status_fd


def tell(fd: int, line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, line.encode())


def reap(children: dict[int, int]) -> None:
    """Report every child that ended on its status pipe."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        status_fd = children.pop(pid, None)
        if status_fd is not None:
            tell(status_fd, f"exit {os.waitstatus_to_exitcode(status)}\n")
            os.close(status_fd)


def serve(control: socket.socket, settings: ZygoteSettings) -> None:
    """Fork children on request until the grader closes the control socket."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, int] = {}
    while True:
        readable, _, _ = select.select([control.fileno(), wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 4096)
            reap(children)
        if control.fileno() in readable:
            request, fds, _, _ = socket.recv_fds(control, 4096, CHILD_FDS)
            if not request:
                return  # the grader is gone; the children die with this process (parent-death signal)
            spawned = spawn(request, fds, settings)
            if spawned is not None:
                children[spawned[0]] = spawned[1]
                reap(children)  # a child that ended before it was recorded


def main() -> None:
    control_fd, seccomp_fd, site_dir, tmp_bytes = (
        int(sys.argv[1]),
        int(sys.argv[2]),
        sys.argv[3],
        int(sys.argv[4]),
    )
    sys.path.append(site_dir)  # holds NumPy and nothing else
    harness = load_harness()
    harness.keep_starters_priority()  # a zygote started in the background forks background children
    import numpy  # noqa: F401  (the point of the zygote: imported once, here)

    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last_cap = int(handle.read())
    settings = ZygoteSettings(read_all(seccomp_fd), tmp_bytes, last_cap)
    threads = len(os.listdir("/proc/self/task"))
    control = socket.socket(fileno=control_fd)
    if threads != 1:  # forking a process with threads copies only one of them: refuse to
        control.send(json.dumps({"event": "refused", "why": f"the zygote has {threads} threads"}).encode())
        return
    control.send(json.dumps({"event": "ready", "pid": os.getpid()}).encode())
    serve(control, settings)


if __name__ == "__main__":
    main()
