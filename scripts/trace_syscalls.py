"""Derive the sandbox's system-call allow-list by tracing, and regenerate the number tables.

Two jobs, both for maintainers (the tests and CI need neither strace nor kernel headers):

``python scripts/trace_syscalls.py tables``
    Rewrites ``src/qkv/grading/sandbox/syscall_tables.py`` (names to numbers, x86-64 and AArch64) from the
    kernel headers of package ``linux-libc-dev``: ``asm/unistd_64.h`` for x86-64 and ``asm-generic/unistd.h``,
    with the options arm64 selects, for AArch64.

``python scripts/trace_syscalls.py trace``
    Grades every lesson's reference solution and every correct and wrong corpus program in the real
    sandbox under ``strace -f`` (apt-get install strace), with an allow-everything seccomp filter so that
    no refusal changes the path taken. It keeps the calls made from the moment bubblewrap's child loaded
    the filter (its ``execve`` of the interpreter onwards) and by every process that child started, and
    prints them. With ``--write`` it rewrites the ``TRACED`` set in ``src/qkv/grading/sandbox/seccomp.py``;
    the hand-kept ``GENEROUS`` set there (calls taken on paths the corpora do not reach) is left alone.
    It exits 1 if a traced call is in ``REFUSED`` (a contradiction to resolve by hand).
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "src/qkv/grading/sandbox/syscall_tables.py"
SECCOMP = ROOT / "src/qkv/grading/sandbox/seccomp.py"
X86_64_HEADER = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
GENERIC_HEADER = "/usr/include/asm-generic/unistd.h"
# What arch/arm64/include/uapi/asm/unistd.h selects before it includes the generic table.
ARM64_OPTIONS = (
    "__BITS_PER_LONG=64",
    "__ARCH_WANT_RENAMEAT",
    "__ARCH_WANT_NEW_STAT",
    "__ARCH_WANT_SET_GET_RLIMIT",
    "__ARCH_WANT_TIME32_SYSCALLS",
    "__ARCH_WANT_MEMFD_SECRET",
    "__ARCH_WANT_SYS_CLONE3",
)
NOT_CALLS = {"syscalls", "arch_specific_syscall"}
# Calls newer than Debian 12's headers that the allow-list names; since 5.x new calls share one number on
# every architecture (the kernel's syscall_64.tbl and asm-generic/unistd.h agree).
NEWER = {
    "fchmodat2": 452,
    "map_shadow_stack": 453,
    "futex_wake": 454,
    "futex_wait": 455,
    "futex_requeue": 456,
}
NEWER |= {"mseal": 462}


def header_table(header: str, options: tuple[str, ...] = ()) -> dict[str, int]:
    """``__NR_name`` macros of a header, with aliases (``__NR_fstat __NR3264_fstat``) resolved."""
    defines = [f"-D{option}" for option in options]
    text = subprocess.run(
        ["cpp", "-dM", *defines, "-include", header, "/dev/null"], check=True, capture_output=True, text=True
    ).stdout
    macros = dict(re.findall(r"^#define (__NR\w+) (\S+)$", text, re.MULTILINE))
    table = {}
    for macro, value in macros.items():
        while value in macros:
            value = macros[value]
        if macro.startswith("__NR_") and value.isdigit() and macro[5:] not in NOT_CALLS:
            table[macro[5:]] = int(value)
    return dict(sorted(table.items(), key=lambda item: item[1]))


def write_tables() -> None:
    x86_64 = NEWER | header_table(X86_64_HEADER)
    aarch64 = NEWER | header_table(GENERIC_HEADER, ARM64_OPTIONS)
    x86_64, aarch64 = (dict(sorted(table.items(), key=lambda item: item[1])) for table in (x86_64, aarch64))
    lines = [
        '"""System-call numbers by name, for x86-64 and AArch64 (generated; do not edit).',
        "",
        "Regenerate with ``python scripts/trace_syscalls.py tables`` (kernel headers of linux-libc-dev).",
        '"""',
        "",
        "X86_64 = {",
        *(f'    "{name}": {number},' for name, number in x86_64.items()),
        "}",
        "",
        "AARCH64 = {",
        *(f'    "{name}": {number},' for name, number in aarch64.items()),
        "}",
        "",
    ]
    TABLES.write_text("\n".join(lines))
    print(f"{TABLES.relative_to(ROOT)}: {len(x86_64)} x86-64 calls, {len(aarch64)} AArch64 calls")


_CALL = re.compile(r"^(\d+) +(?:<\.\.\. (\w+) resumed>|(\w+)\()")
_RESULT = re.compile(r"= (\d+)(?: <[^>]*>)?$")


def calls_after_filter(log: str) -> set[str]:
    """The calls made under the seccomp filter in one ``strace -f`` log (lines ``PID call(...) = ret``).

    A process is under the filter once it loads one (bubblewrap's child, just before its ``execve``), and
    every process a filtered process creates is under it too.
    """
    filtered: set[int] = set()
    found: set[str] = set()
    for line in log.splitlines():
        match = _CALL.match(line)
        if match is None:
            continue
        pid = int(match.group(1))
        name = match.group(2) or match.group(3)
        if pid in filtered:
            found.add(name)
        elif name in ("seccomp", "prctl") and ("SECCOMP_SET_MODE_FILTER" in line or "PR_SET_SECCOMP" in line):
            if "unfinished" not in line and not line.rstrip().endswith("= 0"):
                continue
            filtered.add(pid)
        if pid in filtered and name in ("clone", "clone3", "fork", "vfork"):
            result = _RESULT.search(line)
            if result:
                filtered.add(int(result.group(1)))
    return found


def trace(write: bool) -> int:
    strace = shutil.which("strace")
    if strace is None:
        print("strace is not installed (apt-get install strace).", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT / "tests"))
    import qkv.grading.sandbox.process as sandbox
    from qkv.grading import Grader, Limits
    from qkv.lessons import load_catalog

    logs = Path(tempfile.mkdtemp(prefix="qkv-syscall-trace-"))
    original_drop = sandbox.drop_to_unprivileged_uid
    counter = iter(range(10**6))

    def traced_drop() -> tuple[list[str], int]:
        drop, uid = original_drop()
        log = logs / f"run-{next(counter)}.log"
        return [strace, "-f", "-qq", "-o", str(log), *drop], uid

    sandbox.drop_to_unprivileged_uid = traced_drop  # type: ignore[assignment]
    sandbox.filter_for_this_machine = lambda: b"\x06\x00\x00\x00\x00\x00\xff\x7f"  # type: ignore[assignment]
    catalog = load_catalog()
    programs = [
        (entry.exercise.solution, entry.suite)
        for entry in catalog.code_exercises()
        if entry.exercise.solution
    ]
    corpora = [*ROOT.glob("src/qkv/lessons/content/*/*/corpus/*/*/*.py")]  # each lesson folder's corpus
    for path in corpora:
        exercise = f"{path.parents[3].name.split('-')[0]}/{path.parents[1].name}"
        programs.append((path.read_text(), catalog.code_exercise(exercise).suite))
    from builtin_lessons import L41_SUITE

    for path in [*ROOT.glob("tests/grading/correct/*.py"), *ROOT.glob("tests/grading/wrong/*.py")]:
        programs.append((path.read_text(), L41_SUITE))
    # Fresh interpreters, traced from their start; a forked sandbox runs the same harness after its
    # filter is loaded (zygote.py), so what it calls under the filter is a part of this.
    with Grader(require_sandbox=True, limits=Limits(wall_s=30.0), zygote=False) as grader:
        for index, (source, suite) in enumerate(programs):
            grader.grade(source, suite, seed=index)
    traced: set[str] = set()
    for log in logs.glob("*.log"):
        traced |= calls_after_filter(log.read_text())
    shutil.rmtree(logs)
    print(f"{len(programs)} programs graded; {len(traced)} calls traced:")
    print(" ".join(sorted(traced)))
    module = ast.parse(SECCOMP.read_text())
    refused = _frozenset_literal(module, "REFUSED")
    clash = traced & refused
    if clash:
        print(f"Traced calls that REFUSED holds: {sorted(clash)}; resolve by hand.", file=sys.stderr)
        return 1
    if write:
        _write_traced(sorted(traced))
    else:
        missing = traced - _frozenset_literal(module, "TRACED") - _frozenset_literal(module, "GENEROUS")
        print(f"Not yet allowed: {sorted(missing) or 'none'}")
    return 0


def _frozenset_literal(module: ast.Module, name: str) -> set[str]:
    for node in module.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and target.id == name and node.value is not None:
                return {
                    element.value for element in ast.walk(node.value) if isinstance(element, ast.Constant)
                }
    raise SystemExit(f"{SECCOMP} has no {name}.")


def _write_traced(names: list[str]) -> None:
    text = SECCOMP.read_text()
    start, end = "# --- traced: begin", "# --- traced: end"
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    body = "\n".join(f'        "{name}",' for name in names)
    note = "(rewritten by scripts/trace_syscalls.py trace --write)"
    block = f"{start} {note}\nTRACED = frozenset(\n    {{\n{body}\n    }}\n)\n{end}"
    SECCOMP.write_text(head + block + tail)
    print(f"{SECCOMP.relative_to(ROOT)}: TRACED rewritten ({len(names)} calls); run ruff format on it.")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("job", choices=["tables", "trace"])
    parser.add_argument("--write", action="store_true", help="rewrite TRACED in seccomp.py (trace only)")
    arguments = parser.parse_args()
    if arguments.job == "tables":
        write_tables()
        return 0
    return trace(arguments.write)


if __name__ == "__main__":
    sys.exit(main())
