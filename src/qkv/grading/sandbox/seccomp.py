"""The sandbox's seccomp filter: an allow-list of the system calls CPython and NumPy need.

Every call not on the list fails with ``EPERM``, so a refused call is an ordinary ``OSError`` in the
learner's program, never a kill that would look like a crash. ``socket`` and ``socketpair`` are allowed for
``AF_UNIX`` only (other families fail with ``EAFNOSUPPORT``); as the io_uring calls are refused, a socket
cannot be made any other way. ``clone`` is allowed without the flags that make namespaces (with them it fails
with ``EPERM``), and ``clone3``, whose flags a filter cannot read, fails with ``ENOSYS``, on which the C
library falls back to ``clone``: a sandbox forked by the zygote may not make a user namespace, and none may
make any namespace. Calls of a foreign ABI (32-bit calls on x86-64) and x32 calls are refused
with ``EPERM`` too: their numbers name other calls, so none of them is allowed. The page cache of the files
every sandbox shares is closed as a channel between sandboxes: ``fadvise64``, ``readahead``, ``mincore`` and
``cachestat`` are refused, ``madvise`` refuses ``MADV_COLD`` and ``MADV_PAGEOUT``, and ``preadv2`` /
``pwritev2`` refuse the ``RWF_NOWAIT`` flag (docs/grading.md says what remains).

The list is :data:`TRACED` (what the lessons' reference solutions, the solution corpora and the harness
were seen to call under ``strace``; ``scripts/trace_syscalls.py trace --write`` rewrites it) together with
:data:`GENEROUS` (harmless calls on paths the corpora do not reach: error paths, threads, other glibc
versions). :data:`REFUSED` names the dangerous calls that must never join it; a test holds the two apart.

bubblewrap loads the program (``--seccomp FD``) after setting no-new-privileges, just before it executes
the interpreter; the zygote's child loads it after dropping its capabilities, before it forks the
harness (``zygote.py``). Nothing inside can lift it. The program is classic BPF: after the architecture and
socket checks, a binary search over the allowed numbers' runs (see :func:`filter_program`).
"""

from __future__ import annotations

import platform
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from qkv.grading.sandbox.syscall_tables import AARCH64, X86_64

__all__ = [
    "ALLOWED",
    "GENEROUS",
    "REFUSED",
    "TRACED",
    "Architecture",
    "allowed_runs",
    "architecture",
    "filter_for_this_machine",
    "filter_program",
]

# --- traced: begin (rewritten by scripts/trace_syscalls.py trace --write)
TRACED = frozenset(
    {
        "access",
        "arch_prctl",
        "brk",
        "close",
        "execve",
        "exit_group",
        "fcntl",
        "fstat",
        "getdents64",
        "getrandom",
        "gettid",
        "ioctl",
        "lseek",
        "mbind",
        "mmap",
        "mprotect",
        "munmap",
        "newfstatat",
        "openat",
        "prctl",
        "pread64",
        "prlimit64",
        "read",
        "readlink",
        "rseq",
        "rt_sigaction",
        "sched_getaffinity",
        "set_robust_list",
        "set_tid_address",
        "sysinfo",
        "uname",
        "wait4",
        "write",
    }
)
# --- traced: end

GENEROUS = frozenset(
    {
        # files and directories (only /tmp is writable, and it is a 16 MiB tmpfs)
        *("read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2"),
        *("pwritev2", "open", "openat", "openat2", "creat", "close", "close_range", "lseek", "dup", "dup2"),
        *("dup3", "fcntl", "flock", "fsync", "fdatasync", "ftruncate", "truncate", "fallocate", "stat"),
        *("fstat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2", "readlink"),
        *("readlinkat", "getdents", "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir"),
        *("unlink", "unlinkat", "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat"),
        *("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime"),
        *("utimes", "utimensat", "futimesat", "umask", "statfs", "fstatfs", "mknod", "mknodat", "pipe"),
        *("pipe2", "sendfile", "copy_file_range", "splice", "tee", "getxattr"),
        *("lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "setxattr", "lsetxattr"),
        *("fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "inotify_init", "inotify_init1"),
        *("inotify_add_watch", "inotify_rm_watch", "ioctl", "sync_file_range"),
        # memory (bounded by RLIMIT_AS and the memory cgroup)
        *("brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "msync", "mlock", "mlock2"),
        *("munlock", "mlockall", "munlockall", "membarrier", "get_mempolicy", "set_mempolicy", "mbind"),
        *("pkey_alloc", "pkey_free", "pkey_mprotect", "map_shadow_stack", "mseal"),
        # processes and threads (bounded by the pids cgroup or RLIMIT_NPROC)
        *("clone", "clone3", "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid"),
        *("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open"),
        *("pidfd_send_signal", "getpid", "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid"),
        *("getresuid", "getresgid", "getgroups", "getpgid", "getpgrp", "getsid", "setsid", "setpgid"),
        *("set_tid_address", "set_robust_list", "get_robust_list", "futex", "futex_waitv", "futex_wake"),
        *("futex_wait", "futex_requeue", "rseq", "arch_prctl", "prctl", "capget", "sched_yield"),
        *("sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_getscheduler"),
        *("sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval", "sched_getattr"),
        *("getpriority", "setpriority", "getrlimit", "setrlimit", "prlimit64", "getrusage", "times"),
        *("sysinfo", "uname", "getcpu", "getrandom"),
        # signals and time
        *("rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend"),
        *("rt_sigtimedwait", "sigaltstack", "alarm", "pause", "signalfd", "signalfd4", "restart_syscall"),
        *("clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time"),
        *("getitimer", "setitimer", "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun"),
        *("timer_delete", "timerfd_create", "timerfd_settime", "timerfd_gettime"),
        # waiting on descriptors
        *("select", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait"),
        *("epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2"),
        # sockets: only AF_UNIX ones can exist (socket and socketpair check the family; see below)
        *("bind", "connect", "listen", "accept", "accept4", "getsockname", "getpeername", "sendto"),
        *("recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "setsockopt", "getsockopt"),
    }
)

REFUSED = frozenset(
    {
        # io_uring makes sockets (IORING_OP_SOCKET) and binds them without the socket call, and is a large
        # kernel surface; legacy AIO is another
        *("io_uring_setup", "io_uring_enter", "io_uring_register", "io_setup", "io_submit", "io_destroy"),
        *("io_getevents", "io_pgetevents", "io_cancel"),
        # other processes' memory and descriptors
        *("ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd", "kcmp"),
        # kernel keyrings, memory outside RLIMIT_AS, System V IPC (not counted against RLIMIT_AS)
        *("keyctl", "add_key", "request_key", "memfd_secret", "memfd_create", "shmget", "shmat", "shmctl"),
        *("shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl"),
        *("mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"),
        # kernel programs, tracing and page-fault handling: large attack surfaces
        *("bpf", "userfaultfd", "perf_event_open", "fanotify_init", "fanotify_mark", "lookup_dcookie"),
        # the machine itself: kernels, modules, mounts, namespaces, clocks, devices, swap
        *("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot"),
        *("mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig"),
        *("fsmount", "fspick", "mount_setattr", "unshare", "setns", "swapon", "swapoff", "acct"),
        *("quotactl", "quotactl_fd", "name_to_handle_at", "open_by_handle_at", "syslog", "settimeofday"),
        *("clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "vhangup"),
        *("personality", "iopl", "ioperm", "modify_ldt", "uselib", "vmsplice", "sched_setscheduler"),
        *("sched_setattr", "sched_setparam", "capset", "landlock_create_ruleset"),
        # the page cache of the files every sandbox shares (the interpreter, NumPy): evicting a page and
        # asking whether one is cached carried a token from one learner's sandbox to a later one's
        # (cachestat, 451, is newer than the tables and refused as every call off the list is)
        *("fadvise64", "readahead", "mincore"),
    }
)

SOCKET_CALLS = ("socket", "socketpair")  # allowed for AF_UNIX only
ALLOWED = TRACED | GENEROUS | frozenset(SOCKET_CALLS)


@dataclass(frozen=True)
class Architecture:
    """One machine architecture: its name, its audit value (``AUDIT_ARCH_*``) and its call numbers."""

    name: str
    audit: int
    numbers: Mapping[str, int]


ARCHITECTURES = {
    "x86_64": Architecture("x86_64", 0xC000003E, X86_64),
    "aarch64": Architecture("aarch64", 0xC00000B7, AARCH64),
}


def architecture(machine: str | None = None) -> Architecture | None:
    """The architecture ``machine`` (default: this one's), or None where there is no table for it.

    Examples
    --------
    >>> architecture("x86_64").numbers["io_uring_setup"], architecture("aarch64").numbers["socket"]
    (425, 198)
    >>> architecture("riscv64") is None
    True
    """
    return ARCHITECTURES.get(machine or platform.machine())


def allowed_runs(arch: Architecture) -> list[tuple[int, int]]:
    """The allowed call numbers (the socket calls aside) as sorted runs ``(first, last)``, inclusive.

    Names the architecture does not have (``open`` on AArch64) are skipped.

    Examples
    --------
    >>> runs = allowed_runs(architecture("x86_64"))
    >>> runs[0][0], any(first <= 425 <= last for first, last in runs)  # read is 0; io_uring_setup 425
    (0, False)
    """
    numbers = sorted(arch.numbers[name] for name in ALLOWED - set(SOCKET_CALLS) if name in arch.numbers)
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and runs[-1][1] == number - 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # args[0]'s low 32 bits (little-endian): the socket family
_ARG2_LOW, _ARG5_LOW = 32, 56  # madvise's advice; preadv2's and pwritev2's flags
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
JA = 0x05  # BPF_JMP | BPF_JA
RET_K = 0x06  # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
RET_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
EPERM, ENOSYS, EAFNOSUPPORT = 1, 38, 97
AF_UNIX = 1
X32_SYSCALL_BIT = 0x40000000
# The page cache of the files every sandbox shares is no channel between sandboxes: madvise may not page a
# file's pages out (MADV_COLD, MADV_PAGEOUT), and preadv2 / pwritev2 may not ask RWF_NOWAIT, whose EAGAIN
# tells whether a page is cached. Other advice (NumPy's MADV_HUGEPAGE, malloc's MADV_DONTNEED) and plain
# flags pass.
MADV_COLD, MADV_PAGEOUT = 20, 21
RWF_NOWAIT = 0x00000008
# clone's flags that make namespaces (NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET). clone's
# low byte is the exit signal, so NEWTIME (0x80) is not among them; clone3 takes its flags in a struct,
# which a filter cannot read, so clone3 answers ENOSYS and the C library falls back to clone.
CLONE_NAMESPACE_FLAGS = (
    0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
)
_MAX_SHORT_JUMP = 255  # jt and jf are 8 bits; a longer jump goes through JA (32 bits)

Op = tuple[int, int, int, int]  # code, jt, jf, k


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> Op:
    return (code, jt, jf, k)


def _search(runs: list[tuple[int, int]]) -> list[Op]:
    """Allow the call number in the accumulator if it lies in one of ``runs``, refuse it otherwise."""
    refuse = RET_ERRNO | EPERM
    if len(runs) == 1:
        first, last = runs[0]
        return [
            _op(JGE_K, first, jt=0, jf=2),  # below the run: refuse
            _op(JGE_K, last + 1, jt=1, jf=0),  # above it: refuse
            _op(RET_K, RET_ALLOW),
            _op(RET_K, refuse),
        ]
    middle = len(runs) // 2
    below, above = _search(runs[:middle]), _search(runs[middle:])
    pivot = runs[middle][0]
    if len(below) <= _MAX_SHORT_JUMP:
        return [_op(JGE_K, pivot, jt=len(below)), *below, *above]
    return [_op(JGE_K, pivot, jt=0, jf=1), _op(JA, len(below)), *below, *above]


def filter_ops(arch: Architecture) -> list[Op]:
    """The filter as ``(code, jt, jf, k)`` instructions (see :func:`filter_program`)."""
    refuse = RET_ERRNO | EPERM
    return [
        _op(LD_W_ABS, _ARCH),
        _op(JEQ_K, arch.audit, jt=1),
        _op(RET_K, refuse),  # another ABI: its numbers name other calls, so none is allowed
        _op(LD_W_ABS, _NR),
        _op(JGE_K, X32_SYSCALL_BIT, jt=0, jf=1),
        _op(RET_K, refuse),  # x32 calls share x86-64's audit value but not its numbers
        _op(JEQ_K, arch.numbers["clone"], jt=0, jf=4),
        _op(LD_W_ABS, _ARG0_LOW),  # clone: no new namespaces (a user namespace needs no privilege)
        _op(JSET_K, CLONE_NAMESPACE_FLAGS, jt=0, jf=1),
        _op(RET_K, refuse),
        _op(RET_K, RET_ALLOW),
        _op(JEQ_K, arch.numbers["clone3"], jt=0, jf=1),
        _op(RET_K, RET_ERRNO | ENOSYS),
        _op(JEQ_K, arch.numbers["socket"], jt=1),
        _op(JEQ_K, arch.numbers["socketpair"], jt=0, jf=4),
        _op(LD_W_ABS, _ARG0_LOW),  # socket or socketpair: only the Unix family
        _op(JEQ_K, AF_UNIX, jt=0, jf=1),
        _op(RET_K, RET_ALLOW),
        _op(RET_K, RET_ERRNO | EAFNOSUPPORT),
        *_page_cache_checks(arch),
        *_search(allowed_runs(arch)),
    ]


def _page_cache_checks(arch: Architecture) -> list[Op]:
    """Refuse the advice and flags that evict or probe a shared file's page cache; allow the rest."""
    refuse = RET_ERRNO | EPERM
    ops = [
        _op(JEQ_K, arch.numbers["madvise"], jt=0, jf=5),
        _op(LD_W_ABS, _ARG2_LOW),
        _op(JEQ_K, MADV_COLD, jt=2),
        _op(JEQ_K, MADV_PAGEOUT, jt=1),
        _op(RET_K, RET_ALLOW),
        _op(RET_K, refuse),
    ]
    for name in ("preadv2", "pwritev2"):
        ops += [
            _op(JEQ_K, arch.numbers[name], jt=0, jf=4),
            _op(LD_W_ABS, _ARG5_LOW),
            _op(JSET_K, RWF_NOWAIT, jt=1),
            _op(RET_K, RET_ALLOW),
            _op(RET_K, refuse),
        ]
    return ops


def filter_for_this_machine() -> bytes:
    """The compiled filter for this machine's architecture; empty where there is no table for it.

    Examples
    --------
    >>> filter_for_this_machine() == (filter_program(architecture()) if architecture() else b"")
    True
    """
    arch = architecture()
    return b"" if arch is None else filter_program(arch)


def filter_program(arch: Architecture) -> bytes:
    """The compiled filter (a ``struct sock_filter`` array) for ``arch``.

    Examples
    --------
    >>> program = filter_program(architecture("x86_64"))
    >>> len(program) % 8, len(program) // 8 < 512
    (0, True)
    """
    return b"".join(struct.pack("<HBBI", code, jt, jf, k) for code, jt, jf, k in filter_ops(arch))
