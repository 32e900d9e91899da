"""A seccomp filter for the sandbox: no sockets but Unix ones, and no System V IPC.

The network namespace already leaves a submission no network, but two things cross namespaces: ``AF_VSOCK``
(the host's vsock port space is shared) and System V shared memory, which is not counted against a process's
``RLIMIT_AS`` (hundreds of 256 MiB segments could be held on a host without a memory cgroup). The filter
makes ``socket``/``socketpair`` fail with ``EAFNOSUPPORT`` for every family but ``AF_UNIX``, and
``shmget``/``msgget``/``semget`` fail with ``EPERM``; everything else is allowed. bubblewrap loads it
(``--seccomp FD``) after setting no-new-privileges, so nothing inside can lift it.

The program is classic BPF, written out here because it is short and its rules should be readable; it is
built for the machine's own architecture (x86-64 or AArch64), and any other architecture gets no filter.
"""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass

__all__ = ["SyscallNumbers", "filter_program", "syscall_numbers"]

# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # args[0]'s low 32 bits (little-endian): the socket family
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
EPERM, EAFNOSUPPORT = 1, 97
AF_UNIX = 1
X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class SyscallNumbers:
    """The audit architecture and the system-call numbers the filter needs, for one architecture."""

    arch: int
    socket: int
    socketpair: int
    shmget: int
    msgget: int
    semget: int


_TABLES = {
    "x86_64": SyscallNumbers(0xC000003E, socket=41, socketpair=53, shmget=29, msgget=68, semget=64),
    "aarch64": SyscallNumbers(0xC00000B7, socket=198, socketpair=199, shmget=194, msgget=186, semget=190),
}


def syscall_numbers(machine: str | None = None) -> SyscallNumbers | None:
    """The numbers for ``machine`` (default: this one), or None for an architecture without a table.

    Examples
    --------
    >>> syscall_numbers("x86_64").socket, syscall_numbers("riscv64") is None
    (41, True)
    """
    return _TABLES.get(machine or platform.machine())


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_program(numbers: SyscallNumbers) -> bytes:
    """The compiled filter (``struct sock_filter`` array) for ``numbers``' architecture.

    Examples
    --------
    >>> program = filter_program(syscall_numbers("x86_64"))
    >>> len(program) % 8, len(program) // 8
    (0, 16)
    """
    refuse_ipc = _ERRNO | EPERM
    ops = [
        _op(_LD_W_ABS, _ARCH),
        _op(_JEQ_K, numbers.arch, jt=1),  # another ABI (e.g. 32-bit calls on x86-64): no rules apply, so kill
        _op(_RET_K, _KILL),
        _op(_LD_W_ABS, _NR),
        _op(_JGE_K, X32_SYSCALL_BIT, jt=10),  # x32 calls share the arch but not the numbers: refuse them
        _op(_JEQ_K, numbers.socket, jt=5),
        _op(_JEQ_K, numbers.socketpair, jt=4),
        _op(_JEQ_K, numbers.shmget, jt=7),
        _op(_JEQ_K, numbers.msgget, jt=6),
        _op(_JEQ_K, numbers.semget, jt=5),
        _op(_RET_K, _ALLOW),
        # a socket: only the Unix family
        _op(_LD_W_ABS, _ARG0_LOW),
        _op(_JEQ_K, AF_UNIX, jt=0, jf=1),
        _op(_RET_K, _ALLOW),
        _op(_RET_K, _ERRNO | EAFNOSUPPORT),
        # System V IPC, and x32 calls
        _op(_RET_K, refuse_ipc),
    ]
    return b"".join(ops)
