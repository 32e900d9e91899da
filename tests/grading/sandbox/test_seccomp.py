"""The seccomp program, run here by a small classic-BPF interpreter (no kernel, no sandbox needed).

The interpreter knows only the instructions the program uses, and fails on anything else, on a jump out
of the program and on falling off its end, so the program's shape is checked along with its answers.
The real kernel runs it in tests/grading/test_hostile.py.
"""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

from qkv.grading.sandbox import seccomp
from qkv.grading.sandbox.seccomp import (
    ALLOWED,
    GENEROUS,
    REFUSED,
    TRACED,
    Architecture,
    architecture,
    filter_program,
)
from qkv.grading.sandbox.syscall_tables import AARCH64, X86_64

ALLOW, EPERM, ENOSYS, EAFNOSUPPORT = 0x7FFF0000, 0x00050001, 0x00050026, 0x00050061
AF_UNIX, AF_INET, AF_NETLINK, AF_VSOCK = 1, 2, 16, 40
ARCHES = [architecture("x86_64"), architecture("aarch64")]


def run(program: bytes, arch: int, nr: int, arg0: int = 0, *args: int) -> int:
    """What the program returns for one call (``struct seccomp_data`` built from its fields)."""
    rest = (*args, 0, 0, 0, 0, 0)[:5]
    data = struct.pack("<IIQ6Q", nr, arch, 0, arg0, *rest)
    ops = [struct.unpack_from("<HBBI", program, at) for at in range(0, len(program), 8)]
    assert len(ops) <= 4096, "the kernel takes at most 4096 instructions"
    accumulator, pc = 0, 0
    while True:
        assert 0 <= pc < len(ops), f"jumped or fell out of the program at {pc}"
        code, jt, jf, k = ops[pc]
        if code == seccomp.LD_W_ABS:
            accumulator = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
            if code == seccomp.JSET_K:
                taken = bool(accumulator & k)
            else:
                taken = accumulator == k if code == seccomp.JEQ_K else accumulator >= k
            pc += 1 + (jt if taken else jf)
        elif code == seccomp.JA:
            pc += 1 + k
        elif code == seccomp.RET_K:
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x} at {pc}")


@pytest.mark.parametrize("arch", ARCHES, ids=lambda arch: arch.name if arch else "none")
def test_every_number_gets_the_answer_the_lists_give(arch: Architecture | None) -> None:
    assert arch is not None
    program = filter_program(arch)
    allowed = {arch.numbers[name] for name in ALLOWED if name in arch.numbers}
    for nr in range(1024):
        expected = ALLOW if nr in allowed else EPERM
        if nr in (arch.numbers["socket"], arch.numbers["socketpair"]):
            expected = ALLOW  # for AF_UNIX; see the next test
        if nr == arch.numbers["clone3"]:
            expected = ENOSYS  # see test_clone_makes_no_namespace_and_clone3_falls_back
        assert run(program, arch.audit, nr, AF_UNIX) == expected, nr


@pytest.mark.parametrize("arch", ARCHES, ids=lambda arch: arch.name if arch else "none")
def test_the_red_team_calls_are_refused_with_eperm(arch: Architecture | None) -> None:
    assert arch is not None
    program = filter_program(arch)
    for name in ("io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "memfd_secret"):
        assert run(program, arch.audit, arch.numbers[name]) == EPERM, name
    for name in ("ptrace", "bpf", "userfaultfd", "perf_event_open", "shmget", "mount", "kexec_load"):
        assert run(program, arch.audit, arch.numbers[name]) == EPERM, name
    for name in ("read", "mmap", "clone", "futex", "getrandom", "execve", "exit_group"):
        assert run(program, arch.audit, arch.numbers[name]) == ALLOW, name


@pytest.mark.parametrize("arch", ARCHES, ids=lambda arch: arch.name if arch else "none")
def test_clone_makes_no_namespace_and_clone3_falls_back(arch: Architecture | None) -> None:
    assert arch is not None
    program, clone = filter_program(arch), arch.numbers["clone"]
    sigchld, thread_flags = 17, 0x003D0F00  # fork's flags, and glibc's pthread_create's
    for flags in (sigchld, thread_flags, 0):
        assert run(program, arch.audit, clone, flags) == ALLOW, hex(flags)
    new_user, new_pid, new_net, new_ns = 0x10000000, 0x20000000, 0x40000000, 0x00020000
    for flags in (new_user | sigchld, new_pid, new_net | thread_flags, new_ns, 0x7E020000):
        assert run(program, arch.audit, clone, flags) == EPERM, hex(flags)
    assert (
        run(program, arch.audit, arch.numbers["clone3"]) == ENOSYS
    )  # its flags are out of the filter's reach


@pytest.mark.parametrize("arch", ARCHES, ids=lambda arch: arch.name if arch else "none")
@pytest.mark.parametrize("call", ["socket", "socketpair"])
def test_sockets_only_of_the_unix_family(arch: Architecture | None, call: str) -> None:
    assert arch is not None
    program, nr = filter_program(arch), arch.numbers[call]
    assert run(program, arch.audit, nr, AF_UNIX) == ALLOW
    for family in (AF_INET, AF_NETLINK, AF_VSOCK, 0, 2**32 - 1):
        assert run(program, arch.audit, nr, family) == EAFNOSUPPORT, family


@pytest.mark.parametrize("arch", ARCHES, ids=lambda arch: arch.name if arch else "none")
def test_no_call_evicts_or_probes_the_page_cache(arch: Architecture | None) -> None:
    assert arch is not None
    program, numbers = filter_program(arch), arch.numbers
    for name in ("fadvise64", "readahead", "mincore"):
        assert run(program, arch.audit, numbers[name]) == EPERM, name
    madv_dontneed, madv_hugepage, madv_cold, madv_pageout = 4, 14, 20, 21
    for advice in (0, madv_dontneed, madv_hugepage):  # malloc's and NumPy's advice
        assert run(program, arch.audit, numbers["madvise"], 0, 4096, advice) == ALLOW, advice
    for advice in (madv_cold, madv_pageout):
        assert run(program, arch.audit, numbers["madvise"], 0, 4096, advice) == EPERM, advice
    rwf_hipri, rwf_nowait = 0x1, 0x8
    for name in ("preadv2", "pwritev2"):
        for flags in (0, rwf_hipri):
            assert run(program, arch.audit, numbers[name], 3, 0, 1, 0, 0, flags) == ALLOW, (name, flags)
        for flags in (rwf_nowait, rwf_nowait | rwf_hipri):
            assert run(program, arch.audit, numbers[name], 3, 0, 1, 0, 0, flags) == EPERM, (name, flags)


def test_other_abis_and_x32_calls_are_refused_not_killed() -> None:
    arch = architecture("x86_64")
    assert arch is not None
    program = filter_program(arch)
    i386, arm = 0x40000003, 0x40000028
    for audit in (i386, arm, architecture("aarch64").audit):  # type: ignore[union-attr]
        assert run(program, audit, 0) == EPERM  # read, were the numbers the same
    assert run(program, arch.audit, 0x40000000 | 0) == EPERM  # x32's read
    assert run(program, arch.audit, 2**32 - 1) == EPERM  # nr -1, as a tracer may set


def test_a_long_list_reaches_its_far_branches_through_long_jumps() -> None:
    # Every other number up to 1600: 800 runs, far more code below a pivot than 8-bit jumps reach.
    sparse = {name: 2 * index for index, name in enumerate(sorted(ALLOWED))}
    sparse |= {f"gap{index}": 2 * index + 1 for index in range(len(sparse))}
    arch = Architecture("test", 0xC000003E, sparse)
    program = filter_program(arch)
    assert any(struct.unpack_from("<H", program, at)[0] == seccomp.JA for at in range(0, len(program), 8))
    for name, nr in sparse.items():
        expected = ALLOW if name in ALLOWED else EPERM
        if name in ("socket", "socketpair"):
            expected = EAFNOSUPPORT  # arg0 0 is AF_UNSPEC
        if name == "clone3":
            expected = ENOSYS
        assert run(program, arch.audit, nr) == expected, name


def test_the_lists_are_consistent() -> None:
    assert not ALLOWED & REFUSED
    assert TRACED <= ALLOWED and GENEROUS <= ALLOWED
    unknown = sorted(name for name in ALLOWED | REFUSED if name not in X86_64 and name not in AARCH64)
    assert unknown == []  # a misspelt name would silently allow or refuse nothing
    # What the interpreter and NumPy were seen to need on x86-64 (TRACED) is all allowed there.
    assert all(name in X86_64 for name in TRACED)


def test_the_tables_agree_with_known_numbers() -> None:
    assert (X86_64["read"], X86_64["socket"], X86_64["clone3"], X86_64["io_uring_setup"]) == (0, 41, 435, 425)
    assert (AARCH64["read"], AARCH64["socket"], AARCH64["keyctl"], AARCH64["newfstatat"]) == (
        63,
        198,
        219,
        79,
    )
    assert "open" not in AARCH64 and "openat" in AARCH64
    assert len(ALLOWED) < 300  # an allow-list, not everything


def test_the_trace_script_keeps_only_calls_made_under_the_filter() -> None:
    path = Path(__file__).parents[3] / "scripts" / "trace_syscalls.py"
    spec = importlib.util.spec_from_file_location("trace_syscalls", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    log = """\
100 execve("/usr/bin/bwrap", ["bwrap"], 0x7ffd) = 0
100 mount("none", "/", NULL, MS_REC|MS_PRIVATE, NULL) = 0
100 clone(child_stack=NULL, flags=CLONE_NEWPID|SIGCHLD) = 101
101 prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, {len=241, filter=0x5580}) = 0
101 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>
100 pivot_root(".", ".") = 0
101 <... clone resumed>) = 102
102 seccomp(SECCOMP_SET_MODE_FILTER, 0, {len=241, filter=0x5580}) = 0
102 execve("/usr/bin/python3.11", ["python3.11"], 0x55 /* 5 vars */) = 0
102 getrandom("\\x1e", 24, GRND_NONBLOCK) = 24
103 unshare(CLONE_NEWNS) = 0
101 wait4(-1,  <unfinished ...>
"""
    assert script.calls_after_filter(log) == {"clone", "seccomp", "execve", "getrandom", "wait4"}
