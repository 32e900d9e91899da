"""What the sandbox sees: the Python runtime, NumPy and the harness, and the command that starts it.

Inside bubblewrap the filesystem is a read-only, empty root with only these bound in (all read-only): the
interpreter, its standard library (with ``site-packages`` and ``test`` hidden under empty tmpfs), the shared
libraries the interpreter and NumPy link against, NumPy's own directory in a fresh site directory, and the
harness script. The ``qkv`` package, the tests, the virtual environment and any database stay invisible.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import marshal
import os
import shutil
import stat
import sys
import sysconfig
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy

from qkv.grading.sandbox.shared_view import identity, publish, view_name

__all__ = [
    "SANDBOX_ENV",
    "Runtime",
    "bwrap_options",
    "bwrap_path",
    "find_runtime",
    "inside_paths",
    "pipe_holding",
    "sandbox_python_command",
    "zygote_command",
]

HARNESS = Path(__file__).with_name("harness.py")
ZYGOTE = Path(__file__).with_name("zygote.py")
# The sandbox runs the harness compiled (once per grader process): no sandbox spends time compiling it.
SANDBOX_HARNESS = "/grader/harness.pyc"
SANDBOX_ZYGOTE = "/grader/zygote.pyc"
SANDBOX_SITE = "/grader/site"
# The environment of every sandboxed interpreter, fresh or forked by the zygote: one BLAS thread each.
SANDBOX_ENV = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def pipe_holding(data: bytes) -> int:
    """A pipe's read end holding ``data`` (a few KiB at most: the pipe's buffer takes it all).

    Bubblewrap reads its seccomp filter and the zygote its options from such a pipe.
    """
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, data)
    finally:
        os.close(write_fd)
    return read_fd


@dataclass(frozen=True)
class Runtime:
    """Paths of the interpreter and NumPy on this machine."""

    python: str  # the base interpreter, not the virtual environment's
    stdlib: str
    site_packages: str  # the runtime's own, hidden inside the sandbox
    libpython: str | None
    numpy_dirs: tuple[str, ...]  # numpy/ and, for wheels, numpy.libs/
    library_dirs: tuple[str, ...]


@cache
def find_runtime() -> Runtime:
    """Locate the interpreter and NumPy once per process."""
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    stdlib = sysconfig.get_paths()["stdlib"]
    base_site = os.path.join(stdlib, "site-packages")
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    ldlibrary = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY") or ""
    libpython = os.path.join(libdir, ldlibrary) if libdir and ldlibrary else None
    if libpython is not None and (not os.path.isfile(libpython) or not ldlibrary.count(".so")):
        libpython = None
    numpy_dir = os.path.dirname(os.path.realpath(numpy.__file__))
    numpy_dirs = [numpy_dir]
    if os.path.isdir(numpy_dir + ".libs"):
        numpy_dirs.append(numpy_dir + ".libs")
    return Runtime(python, stdlib, base_site, libpython, tuple(numpy_dirs), _library_dirs())


def _library_dirs() -> tuple[str, ...]:
    """The shared-library directories: on Debian just /usr/lib/<multiarch>, not all of /usr/lib."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    found = []
    for directory in ("/usr/lib", "/lib", "/usr/lib64", "/lib64"):
        if os.path.islink(directory):
            found.append(directory)
        elif multiarch and os.path.isdir(os.path.join(directory, multiarch)):
            found.append(os.path.join(directory, multiarch))
        elif os.path.isdir(directory):
            found.append(directory)
    return tuple(found)


def bwrap_path() -> str | None:
    """The bubblewrap executable, or None when it is not installed."""
    return shutil.which("bwrap")


def inside_paths(runtime: Runtime) -> tuple[str, str, str | None]:
    """Where the interpreter, its standard library and libpython appear inside the sandbox.

    Generic paths, so that nothing the submission can read (``sys.executable``, ``/proc/self/maps``)
    names the host's layout: a pyenv, a virtual environment, a home directory.

    Examples
    --------
    >>> home = "/opt/py"
    >>> runtime = Runtime(f"{home}/bin/python3.11", f"{home}/lib/python3.11", "",
    ...                   f"{home}/lib/libpython3.11.so.1.0", (), ())
    >>> inside_paths(runtime)
    ('/usr/bin/python3.11', '/usr/lib/python3.11', '/usr/lib/libpython3.11.so.1.0')
    """
    libpython = f"/usr/lib/{os.path.basename(runtime.libpython)}" if runtime.libpython else None
    return (
        f"/usr/bin/{os.path.basename(runtime.python)}",
        f"/usr/lib/{os.path.basename(runtime.stdlib)}",
        libpython,
    )


def bwrap_options(
    runtime: Runtime, tmp_bytes: int, seccomp_fd: int | None = None, *, zygote: bool = False
) -> list[str]:
    """bubblewrap's options (the command aside) for a sandbox holding ``runtime``, with the seccomp
    filter on ``seccomp_fd`` when there is one. They travel to bubblewrap through ``--args FD``, so that its
    command line, which the submission sees as ``/proc/1/cmdline``, names no host path.

    With ``zygote``, the options of the zygote's outer sandbox (see ``zygote.py``): the zygote may make
    user namespaces (each child's sandbox is one, and the child's seccomp filter refuses any further),
    and the zygote is bound beside the harness.
    """
    args = [*_isolation_options(zygote=zygote), *_filesystem_options(tmp_bytes), *_environment_options()]
    args += _runtime_binds(runtime, zygote=zygote)
    args += ["--remount-ro", "/"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return args


def _isolation_options(*, zygote: bool) -> list[str]:
    """New namespaces of every kind, as nobody, in a session and on a host name of their own."""
    return [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        *([] if zygote else ["--disable-userns", "--die-with-parent"]),
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--new-session",
        "--hostname",
        "sandbox",
    ]


def _filesystem_options(tmp_bytes: int) -> list[str]:
    """A /proc and a read-only /dev of the sandbox's own, no terminals, and a bounded /tmp to work in."""
    return [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        # No pseudo-terminals: an empty, read-only /dev/pts leaves /dev/ptmx pointing at nothing, so one
        # sandbox cannot hold the host's terminals (bubblewrap's devpts instance has no limit of its own).
        "--tmpfs",
        "/dev/pts",
        "--remount-ro",
        "/dev/pts",
        "--remount-ro",  # bubblewrap's /dev is a tmpfs of no fixed size: /tmp is the only writable place
        "/dev",
        "--size",
        str(tmp_bytes),
        "--tmpfs",
        "/tmp",
        "--chdir",
        "/tmp",
    ]


def _environment_options() -> list[str]:
    """A clean environment: a home in /tmp, the system's PATH, one BLAS thread, UTF-8."""
    return [
        "--clearenv",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "OPENBLAS_NUM_THREADS",
        "1",
        "--setenv",
        "OMP_NUM_THREADS",
        "1",
        "--setenv",
        "LANG",
        "C.UTF-8",
    ]


def _runtime_binds(runtime: Runtime, *, zygote: bool) -> list[str]:
    """Read-only binds of the interpreter, its libraries, NumPy and the harness (and the zygote)."""
    args: list[str] = []
    # Host-specific paths are bound from a staged copy laid out as the sandbox sees it, so that even
    # /proc/self/mountinfo (which shows each bind's source) names no host directory but the staging one;
    # run as root, it is also what lets the unprivileged uid (see sandbox.py) read a path under /root.
    for directory in runtime.library_dirs:
        if os.path.islink(directory):
            args += ["--symlink", os.readlink(directory), directory]
        else:
            args += ["--ro-bind", reachable_copy(directory), directory]
    python, stdlib, libpython = inside_paths(runtime)
    args += ["--ro-bind", reachable_copy(runtime.python, python), python]
    args += ["--ro-bind", reachable_copy(runtime.stdlib, stdlib), stdlib]
    for hidden in ("site-packages", "test"):
        if os.path.isdir(os.path.join(runtime.stdlib, hidden)):  # other packages; the tests' keys
            inside = f"{stdlib}/{hidden}"
            args += ["--tmpfs", inside, "--remount-ro", inside]  # empty, and not a second, unbounded /tmp
    bound = tuple(directory + "/" for directory in runtime.library_dirs)
    if runtime.libpython and libpython and not os.path.realpath(runtime.libpython).startswith(bound):
        args += ["--ro-bind", reachable_copy(runtime.libpython, libpython), libpython]
    for directory in runtime.numpy_dirs:
        inside = f"{SANDBOX_SITE}/{os.path.basename(directory)}"
        args += ["--ro-bind", reachable_copy(directory, inside), inside]
    args += ["--ro-bind", compiled_harness(), SANDBOX_HARNESS]
    if zygote:
        args += ["--ro-bind", compiled_zygote(), SANDBOX_ZYGOTE]
    return args


def sandbox_python_command(runtime: Runtime, report_fd: int, rlimits: str) -> list[str]:
    """The command bubblewrap runs: the interpreter at its path inside the sandbox, on the harness."""
    return python_command(inside_paths(runtime)[0], SANDBOX_HARNESS, report_fd, rlimits, SANDBOX_SITE)


def python_command(python: str, harness: str, report_fd: int, rlimits: str, site_dir: str) -> list[str]:
    """The interpreter's own command line: isolated mode, no site packages, unbuffered output."""
    return [python, "-I", "-S", "-B", "-u", harness, str(report_fd), rlimits, site_dir]


def others_can_read(path: str) -> bool:
    """Whether a user with no special rights can reach ``path`` (every parent searchable, itself readable)."""
    real = Path(os.path.realpath(path))
    for parent in reversed(real.parents):
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
    mode = os.stat(real).st_mode
    needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & needed == needed


_STAGING_PREFIX = "sandbox-view-"
# Bumped whenever what a shared view holds, or how, changes: a view of the old layout is then never used.
_VIEW_FORMAT = 1
# The compiled programs a sandbox runs, by where they appear inside it. They are part of the shared view;
# compiled_program() compiles any other one into this process's own staging directory.
SANDBOX_PROGRAMS: dict[str, Path] = {SANDBOX_HARNESS: HARNESS, SANDBOX_ZYGOTE: ZYGOTE}


@cache
def _staging_root() -> Path:
    """A root-owned, world-readable directory for this process's own staged copies, removed at exit.

    Used for what the shared view (:func:`_shared_view`) does not hold, or where there is none.
    """
    _remove_stale_staging()
    # A neutral name: the submission sees it in /proc/self/mountinfo, as the source of its binds.
    root = Path(tempfile.mkdtemp(prefix=f"{_STAGING_PREFIX}{os.getpid()}-"))
    root.chmod(0o755)
    atexit.register(shutil.rmtree, root, True)
    return root


def _remove_stale_staging() -> None:
    """Remove the staged copies of grader processes that were killed before they could clean up.

    That is each ``sandbox-view-<pid>-…`` directory (a process's own, or a shared view it was building)
    of ours whose process is gone. Shared views (``sandbox-view-<digest>``) are never removed: another
    process may be binding from one right now.
    """
    for stale in Path(tempfile.gettempdir()).glob(f"{_STAGING_PREFIX}*-*"):
        pid = stale.name.removeprefix(_STAGING_PREFIX).split("-")[0]
        try:
            if not pid.isdigit() or stale.lstat().st_uid != os.geteuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(stale, ignore_errors=True)
        except OSError:  # another process removed it first; or a pid we may not signal, alive
            pass


@cache
def _staged_items(runtime: Runtime) -> dict[tuple[str, str], str]:
    """What :func:`bwrap_options` stages for ``runtime``: ``(real host path, inside) -> inside``.

    Everything but what the sandbox can be shown in place (a system Python's own directories).
    """
    python, stdlib, libpython = inside_paths(runtime)
    wanted = [(directory, directory) for directory in runtime.library_dirs if not os.path.islink(directory)]
    wanted += [(runtime.python, python), (runtime.stdlib, stdlib)]
    if runtime.libpython and libpython:
        wanted.append((runtime.libpython, libpython))
    wanted += [
        (directory, f"{SANDBOX_SITE}/{os.path.basename(directory)}") for directory in runtime.numpy_dirs
    ]
    items = {}
    for path, inside in wanted:
        real = os.path.realpath(path)
        if not (real == inside and others_can_read(real)):
            items[real, inside] = inside
    return items


@cache
def _shared_view() -> Path | None:
    """The staged view this user's grader processes share, found or built; None when it cannot be used.

    It holds every path :func:`_staged_items` names and the :data:`SANDBOX_PROGRAMS` compiled, each at
    its place inside the sandbox, and its name is a digest of all that: the paths and the identity of
    each (device, inode, size, modification time), the programs' sources, the interpreter's bytecode
    version and this user. A changed source or a reinstalled NumPy gives a new name, so a view, once
    built, never changes (old ones stay until the temporary directory is cleaned). None when the name is
    taken by a directory we cannot trust (see :mod:`qkv.grading.sandbox.shared_view`); the caller then stages
    a private copy, as every process did before views were shared.
    """
    items = _staged_items(find_runtime())
    programs = {inside: source.read_bytes() for inside, source in SANDBOX_PROGRAMS.items()}
    parts: list[object] = [_VIEW_FORMAT, os.geteuid(), importlib.util.MAGIC_NUMBER]
    parts += sorted((real, inside, identity(real)) for real, inside in items)
    parts += sorted((inside, hashlib.sha256(code).hexdigest()) for inside, code in programs.items())
    inner = [inside.lstrip("/") for inside in [*items.values(), *programs]]

    def build(view: Path) -> None:
        for (real, _), inside in items.items():
            _stage(view, real, inside)
        for inside, code in programs.items():
            _write_compiled(view, _compile(code, inside), inside)

    _remove_stale_staging()  # the leftovers of a builder that was killed, among others
    parent = Path(tempfile.gettempdir())
    return publish(
        parent, view_name(_STAGING_PREFIX, parts), inner, build, f"{_STAGING_PREFIX}{os.getpid()}-"
    )


def _link_or_copy(source: str, destination: str) -> None:
    try:
        os.link(source, destination)  # same file system: instant, and no second copy on disk
    except OSError:
        shutil.copy2(source, destination)


_staging_lock = threading.Lock()  # warm spares start on several threads at once


def reachable_copy(path: str, inside: str | None = None) -> str:
    """What to bind at ``inside`` (default: ``path``'s own real path) to show the sandbox ``path``.

    That is ``path`` itself if it already lies at ``inside`` and an unprivileged user can read it;
    otherwise a read-only copy staged at ``inside`` under a neutrally named directory, so that the bind's
    source names neither the host's layout nor a private directory: the view shared by this user's grader
    processes when it holds ``path`` (the runtime's paths), else this process's own. Files are hard-linked
    where possible, so staging the standard library takes a fraction of a second. The copy keeps the
    permission bits of the original files, and staged directories are not writable by anyone but the
    grader's own user.
    """
    with _staging_lock:
        return _reachable_copy(path, inside)


@cache
def _reachable_copy(path: str, inside: str | None) -> str:
    real = os.path.realpath(path)
    inside = inside or real
    if real == inside and others_can_read(path):
        return path
    if (real, inside) in _staged_items(find_runtime()):
        view = _shared_view()
        if view is not None:
            return str(view / inside.lstrip("/"))
    return str(_stage(_staging_root(), real, inside))


def _stage(root: Path, real: str, inside: str) -> Path:
    """Copy ``real`` (hard links where possible) to ``inside`` under ``root``, no directory group-writable."""
    staged = root / inside.lstrip("/")
    for directory in reversed(staged.relative_to(root).parents):
        if not (root / directory).is_dir():
            (root / directory).mkdir()
            (root / directory).chmod(0o755)
    if os.path.isdir(real):
        shutil.copytree(real, staged, symlinks=True, copy_function=_link_or_copy, ignore=_skip_hidden)
        for name in _skip_hidden(real, os.listdir(real)):
            (staged / name).mkdir()  # an empty mount point for the tmpfs that hides it
        for folder, _, _ in os.walk(staged):  # copytree copied the originals' modes, group-writable too
            mode = os.stat(folder).st_mode
            if mode & (stat.S_IWGRP | stat.S_IWOTH):
                os.chmod(folder, stat.S_IMODE(mode) & ~(stat.S_IWGRP | stat.S_IWOTH))
    else:
        _link_or_copy(real, str(staged))
    return staged


def _skip_hidden(directory: str, names: list[str]) -> list[str]:
    """Leave out what the sandbox hides anyway (other packages, the test suite); keep empty mount points."""
    if os.path.realpath(directory) != os.path.realpath(find_runtime().stdlib):
        return []
    return [name for name in names if name in ("site-packages", "test")]


@cache
def compiled_harness() -> str:
    """The harness compiled to bytecode, in the shared view (or this process's staging directory)."""
    return compiled_program(HARNESS, SANDBOX_HARNESS)


@cache
def compiled_zygote() -> str:
    """The zygote compiled to bytecode, in the shared view (or this process's staging directory)."""
    return compiled_program(ZYGOTE, SANDBOX_ZYGOTE)


def zygote_command(runtime: Runtime, control_fd: int, seccomp_fd: int, tmp_bytes: int) -> list[str]:
    """The command bubblewrap runs for the zygote: the interpreter at its path inside, on the zygote."""
    python = inside_paths(runtime)[0]
    descriptors = [str(control_fd), str(seccomp_fd)]
    return [python, "-I", "-S", "-B", "-u", SANDBOX_ZYGOTE, *descriptors, SANDBOX_SITE, str(tmp_bytes)]


def compiled_program(source: Path, inside: str) -> str:
    """``source`` compiled to bytecode in the staging directory, to be bound at ``inside`` (a ``.pyc``).

    The interpreter runs a ``.pyc`` file given as its script without reading the source, and imports a
    sourceless ``.pyc`` found on its path; the header is a hash-based, unchecked one, since the file is
    made from the source this grader process has. A program of :data:`SANDBOX_PROGRAMS` is compiled once
    into the shared view (whose name covers its source); any other into this process's own directory.
    """
    with _staging_lock:
        if SANDBOX_PROGRAMS.get(inside) == source:
            view = _shared_view()
            if view is not None:
                return str(view / inside.lstrip("/"))
        code = _compile(source.read_bytes(), inside)
        return str(_write_compiled(_staging_root(), code, os.path.basename(inside)))


def _compile(source: bytes, inside: str) -> bytes:
    """The ``.pyc`` file of ``source``, whose code objects name ``inside`` as their file."""
    code = compile(source, inside, "exec", dont_inherit=True, optimize=0)
    unchecked_hash_based = (1).to_bytes(4, "little")
    return importlib.util.MAGIC_NUMBER + unchecked_hash_based + bytes(8) + marshal.dumps(code)


def _write_compiled(root: Path, data: bytes, inside: str) -> Path:
    path = root / inside.lstrip("/")
    for directory in reversed(path.relative_to(root).parents):
        if not (root / directory).is_dir():
            (root / directory).mkdir(mode=0o755)
    path.write_bytes(data)
    path.chmod(0o644)
    return path


@cache
def bare_site_dir() -> str:
    """For runs without bubblewrap: a temporary directory that links to NumPy and nothing else."""
    site = tempfile.mkdtemp(prefix="qkv-grading-site-")
    atexit.register(shutil.rmtree, site, True)
    for directory in find_runtime().numpy_dirs:
        os.symlink(directory, os.path.join(site, os.path.basename(directory)))
    return site


def bare_command(runtime: Runtime, rlimits: str, report_fd: int) -> list[str]:
    """The command line that starts the harness with rlimits only (no bubblewrap)."""
    return python_command(runtime.python, str(HARNESS), report_fd, rlimits, bare_site_dir())
