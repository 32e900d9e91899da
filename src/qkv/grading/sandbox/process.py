"""One sandboxed run of the harness: start it, send it one job, collect its report and output, kill it.

A :class:`SandboxProcess` is used for exactly one submission and then discarded. It is started ahead of
time (a warm spare) or on demand; either way it first imports NumPy and says ``ready`` on the report channel.
Its report is read by :mod:`qkv.grading.sandbox.report_reader`; the CPU time of its process tree is read by
:mod:`qkv.grading.sandbox.process_tree`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qkv.grading.sandbox.cgroups import HOST, CgroupHost, SandboxCgroup
from qkv.grading.sandbox.limits import Limits
from qkv.grading.sandbox.priority import SandboxPriority, lower, lower_session
from qkv.grading.sandbox.process_tree import processes_of_user, tree_cpu_seconds, tree_pids
from qkv.grading.sandbox.report_reader import (
    MAX_REPORT_BYTES,
    SMALL_READ_BYTES,
    SMALL_READ_PAUSE_S,
    ReportReader,
    decode_exit,
    ready_marks,
)
from qkv.grading.sandbox.runtime import (
    SANDBOX_ENV,
    bare_command,
    bwrap_options,
    bwrap_path,
    find_runtime,
    pipe_holding,
    sandbox_python_command,
)
from qkv.grading.sandbox.seccomp import filter_for_this_machine

if TYPE_CHECKING:
    from qkv.grading.sandbox.zygote_client import ForkedChild, Zygote

__all__ = ["RawRun", "SandboxProcess", "SandboxStartError", "drop_to_unprivileged_uid", "pipe_holding"]

READY_TIMEOUT_S = 30.0
GRACE_S = 0.5  # after "done": time for the process to exit by itself before it is killed
SLICE_POLL_S = 0.02  # how often a program running in a slice has its CPU time read
# Joins the sandbox's cgroups, then becomes bubblewrap (or the bare interpreter).
# Its arguments: how many cgroup directories, the directories, then the command.
JOIN_CGROUPS = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 97; shift; n=$((n - 1)); '
    'done; exec "$@"'
)
# Run as root, each sandbox starts as its own unprivileged uid from this range, so that it is nobody
# outside its user namespace too, and RLIMIT_NPROC (which root ignores) would hold for it.
SANDBOX_UIDS = range(61000, 62000)
_next_uid = itertools.count(random.randrange(len(SANDBOX_UIDS)))  # spread concurrent graders


def drop_to_unprivileged_uid() -> tuple[list[str], int]:
    """The ``setpriv`` prefix that turns the root grader into a fresh unprivileged uid, and that uid."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise SandboxStartError(
            "The grading sandbox needs setpriv (Debian package util-linux) to drop root before bubblewrap."
        )
    uid = SANDBOX_UIDS[next(_next_uid) % len(SANDBOX_UIDS)]
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"], uid


class SandboxStartError(RuntimeError):
    """The sandbox could not be started (a problem with this machine, not with the submission)."""


@dataclass
class RawRun:
    """Everything one run produced, before any judgement."""

    events: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    exit_status: int | None = None  # the harness's exit code, or None when it was ended by a signal
    signal: int | None = None
    malformed: str | None = None  # why the report could not be trusted, if it could not
    report_over: int | None = None  # the bound in bytes the report grew past (then ``malformed`` says so)
    unparsed: ReportReader | None = None  # the report's lines, until :meth:`parse` decodes them
    processes_limit_hit: bool = False
    memory_limit_hit: bool = False
    # Advisory timing facts (monotonic seconds and CPU seconds, see :meth:`SandboxProcess.timing`); no
    # verdict depends on them.
    timing: dict[str, float] = field(default_factory=dict)

    def parse(self) -> None:
        """Decode the report's lines into ``events`` (and ``malformed``), if :meth:`SandboxProcess.finish`
        left them undecoded; decoding is part of the judging's cost."""
        if self.unparsed is not None:
            self.events, self.malformed = self.unparsed.events()
            self.unparsed = None


@dataclass
class _Flight:
    """A job sent to the sandbox and not yet finished: what is left to write, and what came back so far."""

    pending: bytes
    report: ReportReader
    stdout: _Capture
    stderr: _Capture
    wall_left_s: float  # running time left before the wall-clock limit (paused time does not count)
    streams: dict[int, Any] = field(default_factory=dict)  # open fds -> "stdin", a capture or the report
    grace_left_s: float | None = None  # set once "done" arrived: time left for the process to exit
    timed_out: bool = False


class _Capture:
    """Keeps the first ``limit`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.limit - len(self.kept)
        self.kept += data[:room]
        self.dropped += max(0, len(data) - room)

    def text(self, marker: str) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        return text + ("\n" + marker + "\n" if self.dropped else "")


def _seccomp_pipe() -> int | None:
    """A pipe's read end holding the seccomp filter for bubblewrap, or None where there is no filter."""
    program = filter_for_this_machine()
    return pipe_holding(program) if program else None


class SandboxProcess:
    """A started harness waiting for its one job.

    It is started one of two ways: forked by the ``zygote`` (a warm interpreter that imported NumPy
    once; see ``zygote.py``), when one is given and the sandbox has a cgroup that bounds its processes;
    otherwise as a fresh interpreter that bubblewrap (or, without it, rlimits alone) starts.
    """

    def __init__(
        self,
        limits: Limits,
        *,
        use_bwrap: bool,
        cgroup_host: CgroupHost = HOST,
        zygote: Zygote | None = None,
    ) -> None:
        self.limits = limits
        self.use_bwrap = use_bwrap
        self._buffer = b""
        self._flight: _Flight | None = None
        self._stopped = False
        self._marks: dict[str, float] = {"popen": time.monotonic()}
        self._own_uid: int | None = None  # the uid drawn for this sandbox, when it has one of its own
        self.process: subprocess.Popen[bytes] | ForkedChild
        read_fd, write_fd = os.pipe()
        self._report_fd = read_fd
        self.cgroup = SandboxCgroup.create(limits.processes + 3, limits.memory_bytes * 3 // 2, cgroup_host)
        self.forked = (
            zygote is not None and use_bwrap and self.cgroup is not None and self.cgroup.bounds_processes
        )
        try:
            if self.forked:
                assert zygote is not None
                self._fork_from(zygote, write_fd)
            else:
                self._start_fresh(write_fd)
        except BaseException:
            os.close(read_fd)
            self._remove_cgroup()
            raise
        finally:
            os.close(write_fd)

    def _fork_from(self, zygote: Zygote, report_fd: int) -> None:
        """Have the zygote fork this sandbox, moved into its cgroups before it runs (see ``zygote.py``)."""
        assert self.cgroup is not None
        cgroup = self.cgroup
        try:
            self.process, fork_cpu = zygote.spawn(self.limits.rlimit_spec(None), report_fd, cgroup.add)
        except (OSError, RuntimeError) as error:
            raise SandboxStartError(f"The zygote could not fork a sandbox: {error}") from None
        self._marks["zygote_cpu"] = fork_cpu

    def _start_fresh(self, report_fd: int) -> None:
        """Start bubblewrap (or the bare interpreter) on the harness; it imports NumPy itself."""
        limits = self.limits
        runtime = find_runtime()
        bwrap = bwrap_path() if self.use_bwrap else None
        drop, uid = drop_to_unprivileged_uid() if bwrap and os.geteuid() == 0 else ([], os.getuid())
        self._own_uid = uid if drop else None  # drawn for this sandbox (another grader process may share it)
        nproc = None
        if (self.cgroup is None or not self.cgroup.bounds_processes) and uid != 0:
            # No pids controller (neither v1 nor v2 offers one): RLIMIT_NPROC bounds the processes. It counts
            # every process of the uid (three are the sandbox's own) and holds for any uid but root's.
            nproc = processes_of_user(uid) + limits.processes + 3
        rlimits = limits.rlimit_spec(nproc)
        seccomp_fd = _seccomp_pipe() if bwrap else None
        passed = [] if seccomp_fd is None else [seccomp_fd]
        if bwrap:
            # The options (every bind's host path) go through a pipe: bubblewrap's command line is what
            # the submission reads as /proc/1/cmdline.
            options = bwrap_options(runtime, limits.file_bytes, seccomp_fd)
            passed.append(pipe_holding(b"".join(option.encode() + b"\0" for option in options)))
            python = sandbox_python_command(runtime, report_fd, rlimits)
            command = [*drop, bwrap, "--args", str(passed[-1]), *python]
        else:
            command = bare_command(runtime, rlimits, report_fd)
        if self.cgroup is not None:
            # The cgroup paths are the shell's arguments, not its environment, which bubblewrap would
            # inherit and the submission read as /proc/1/environ.
            count = str(len(self.cgroup.paths))
            command = ["/bin/sh", "-c", JOIN_CGROUPS, "sh", count, *self.cgroup.paths, *command]
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=[report_fd, *passed],
                start_new_session=True,
                env=SANDBOX_ENV,
                cwd="/",
            )
        except OSError as error:
            raise SandboxStartError(f"The grading sandbox could not be started: {error}.") from None
        finally:
            for fd in passed:
                os.close(fd)

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Block until the harness has imported NumPy; raise :class:`SandboxStartError` if it never does."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            ready = remaining > 0 and selectors_wait(self._report_fd, remaining)
            chunk = os.read(self._report_fd, 65536) if ready else b""
            if not chunk:
                stderr = self._kill_and_collect_stderr()
                raise SandboxStartError(
                    "The grading sandbox did not start"
                    + (f"; it said: {stderr.strip()[-500:]}" if stderr.strip() else ".")
                )
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        marks = ready_marks(line)
        if marks is None:
            self._kill_and_collect_stderr()
            raise SandboxStartError(f"The grading sandbox started but sent {line[:200]!r} instead of ready.")
        self._marks.update(marks, ready_seen=time.monotonic())
        cpu = self.cgroup.cpu_seconds() if self.cgroup is not None else None
        if cpu is not None:
            self._marks["cgroup_cpu_ready"] = cpu

    def alive(self) -> bool:
        """Whether the process is still waiting (a spare that died is thrown away)."""
        return self.process.poll() is None

    def run(self, job: dict[str, Any], wall_s: float | None = None) -> RawRun:
        """Send the job, collect the report and output until the harness ends or the wall clock runs out.

        ``wall_s`` shortens the wall-clock limit for this job (an exercise may declare a shorter one).
        """
        self.send(job, wall_s)
        self.advance()
        return self.finish()

    def send(self, job: dict[str, Any], wall_s: float | None = None, report_bytes: int | None = None) -> None:
        """Start the job; :meth:`advance` then runs it, :meth:`finish` ends it.

        ``report_bytes`` bounds the report below ``MAX_REPORT_BYTES`` (what the job's tests can need);
        past it the report is not read on.
        """
        process = self.process
        assert process.stdin and process.stdout and process.stderr and self._flight is None
        for stream in (process.stdin, process.stdout, process.stderr):
            os.set_blocking(stream.fileno(), False)
        report = ReportReader(self._buffer, MAX_REPORT_BYTES if report_bytes is None else report_bytes)
        wall = self.limits.wall_s if wall_s is None else min(wall_s, self.limits.wall_s)
        stdout, stderr = _Capture(self.limits.output_bytes), _Capture(self.limits.output_bytes)
        self._flight = _Flight(json.dumps(job).encode(), report, stdout, stderr, wall)
        self._flight.streams = {
            process.stdin.fileno(): "stdin",
            process.stdout.fileno(): stdout,
            process.stderr.fileno(): stderr,
            self._report_fd: report,
        }
        self._marks["sent"] = time.monotonic()

    def advance(self, slice_s: float | None = None) -> bool:
        """Let the job run; True once it is over, False when it used ``slice_s`` more seconds first.

        A slice is measured in CPU time where the sandbox's cgroup counts it, else in wall-clock time.
        Time spent here counts against the wall-clock limit; time between calls (paused) does not.
        """
        assert self._flight is not None
        started = time.monotonic()
        try:
            return self._exchange(self._flight, slice_s)
        except BaseException:
            self._stop(self._flight.stdout, self._flight.stderr)
            raise
        finally:
            self._flight.wall_left_s -= time.monotonic() - started

    def pause(self) -> bool:
        """Freeze every process of the sandbox (the cgroup freezer); False where it cannot be frozen."""
        frozen = self.cgroup is not None and self.cgroup.freeze()
        if not frozen and self.cgroup is not None:
            self.cgroup.thaw()  # half frozen helps nobody
        return frozen

    def unpause(self) -> None:
        """Let a paused sandbox run again."""
        if self.cgroup is not None:
            self.cgroup.thaw()

    def run_at(self, priority: SandboxPriority) -> int:
        """Set ``priority`` on every process of the sandbox (before its job runs; see ``priority.py``).

        A fresh sandbox leads sessions of its own (bubblewrap's and the harness's), whose scheduling
        groups are lowered too; a forked one shares the zygote's with the other sandboxes. Returns the
        threads whose nice value was raised.
        """
        if priority is SandboxPriority.NORMAL:
            return 0
        pids = self.cgroup.processes() if self.cgroup is not None else tree_pids(self.process.pid)
        if not self.forked:
            for pid in pids:  # bubblewrap's own session and the one it starts for the harness
                lower_session(pid, priority)
        return lower(pids, priority)

    @property
    def can_pause(self) -> bool:
        """Whether :meth:`pause` can work here (the sandbox has a freezer cgroup)."""
        return self.cgroup is not None and self.cgroup.can_freeze

    def finish(self, *, parse: bool = True) -> RawRun:
        """Kill the sandbox and return everything the job produced (its report undecoded, in
        ``unparsed``, with ``parse=False``: :meth:`RawRun.parse` decodes it)."""
        flight = self._flight
        assert flight is not None
        result = RawRun(timed_out=flight.timed_out)
        self._stop(flight.stdout, flight.stderr)
        self._marks["ended"] = time.monotonic()
        result.stdout = flight.stdout.text(self.limits.describe_output("stdout"))
        result.stderr = flight.stderr.text(self.limits.describe_output("stderr"))
        result.exit_status, result.signal = decode_exit(self.process.returncode, use_bwrap=self.use_bwrap)
        if self.cgroup is not None:
            result.processes_limit_hit = self.cgroup.processes_limit_hit()
            result.memory_limit_hit = self.cgroup.memory_limit_hit()
            cpu = self.cgroup.cpu_seconds()
            if cpu is not None:
                self._marks["cgroup_cpu"] = cpu
        self._remove_cgroup()
        result.unparsed = flight.report
        if parse:
            result.parse()
        result.report_over = flight.report.over
        result.timing = dict(self._marks)
        return result

    def _cpu_or_clock(self) -> float:
        """The sandbox's CPU seconds: its cgroup's count, else its live processes' (``/proc``), else the
        monotonic clock."""
        cpu = self.cgroup.cpu_seconds() if self.cgroup is not None else None
        if cpu is None:
            cpu = tree_cpu_seconds(self.process.pid)
        return time.monotonic() if cpu is None else cpu

    def _exchange(self, flight: _Flight, slice_s: float | None) -> bool:
        """Write the job to stdin while reading the report and output; True once the job is over.

        It is over when every pipe is closed, ``GRACE_S`` after the harness's ``done`` line, when the report
        breaks one of its limits, or at the wall-clock limit (``flight.timed_out``). False: the slice ran out.
        """
        report = flight.report
        now = time.monotonic()
        deadline = now + flight.wall_left_s
        if flight.grace_left_s is not None:
            deadline = min(deadline, now + flight.grace_left_s)
        slice_start = self._cpu_or_clock() if slice_s is not None else 0.0
        # The sandbox cannot have used more CPU than the wall time since then on every core of the machine,
        # so its count (a file read each time: ~4 % of a server's CPU per run when read on every wake-up)
        # is read only from the moment the slice could have run out.
        could_run_out_at = now + (slice_s or 0.0) / (os.cpu_count() or 1)
        with selectors.DefaultSelector() as selector:
            for fd, data in flight.streams.items():
                selector.register(
                    fd, selectors.EVENT_WRITE if data == "stdin" else selectors.EVENT_READ, data
                )
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    flight.timed_out = not report.done
                    return True
                if slice_s is not None and not report.done:
                    if time.monotonic() >= could_run_out_at and self._cpu_or_clock() - slice_start >= slice_s:
                        return False
                    remaining = min(remaining, SLICE_POLL_S)
                for key, _ in selector.select(remaining):
                    if key.data == "stdin":
                        flight.pending = self._send_job(selector, key.fd, flight.pending)
                        if not flight.pending:
                            flight.streams.pop(key.fd, None)
                        continue
                    try:
                        chunk = os.read(key.fd, 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        selector.unregister(key.fd)
                        flight.streams.pop(key.fd, None)
                    elif isinstance(key.data, ReportReader):
                        was_done = report.done
                        report.feed(chunk)
                        if report.malformed is not None:
                            _empty(selector)
                            flight.streams.clear()
                            break
                        if report.done and not was_done:
                            # Wait a little for the harness to exit and its output to drain.
                            deadline = min(deadline, time.monotonic() + GRACE_S)
                            flight.grace_left_s = GRACE_S
                    else:
                        _capture_output(key.data, chunk)
        return True

    def _send_job(self, selector: selectors.BaseSelector, fd: int, pending: bytes) -> bytes:
        """Write what the pipe takes of the job; close stdin once all of it is written (or the pipe broke)."""
        try:
            pending = pending[os.write(fd, pending) :]
        except BlockingIOError:
            return pending
        except OSError:
            pending = b""
        if not pending:
            selector.unregister(fd)
            assert self.process.stdin is not None
            self.process.stdin.close()
        return pending

    def _stop(self, stdout: _Capture, stderr: _Capture) -> None:
        """Kill the sandbox, keep what is left of its output, and close its pipes (once)."""
        if self._stopped:
            return
        self._stopped = True
        self._kill()
        for stream, capture in ((self.process.stdout, stdout), (self.process.stderr, stderr)):
            assert stream is not None
            _drain(stream.fileno(), capture)
            stream.close()
        os.close(self._report_fd)

    def discard(self) -> None:
        """Kill an unused spare (or a set-aside one) and release what it holds; once only, so that no
        descriptor number is closed twice (it may belong to another file by then)."""
        if self._stopped:
            return
        self._stopped = True
        self._kill()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(OSError):
            os.close(self._report_fd)
        self._remove_cgroup()

    def _kill(self) -> None:
        """Kill the whole tree: the process group, every process in the cgroup, then reap."""
        for _ in range(20):
            pids = self.cgroup.processes() if self.cgroup is not None else []
            if isinstance(self.process, subprocess.Popen):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            else:
                self.process.kill()  # the forked child: its sandbox's init dies with it
            if pids and self.cgroup is not None:
                self.cgroup.kill()  # v2: the whole group at once; the loop below covers kernels without it
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if self.cgroup is not None and self.cgroup.can_freeze:
                self.cgroup.thaw()  # a frozen v1 process takes its SIGKILL only once thawed
            if not pids:
                break
            time.sleep(0.002)
        self.process.wait()
        if self.cgroup is None and self._own_uid is not None:
            # Without a cgroup to empty, wait for the PID namespace's teardown, which the kernel does
            # asynchronously once bubblewrap is dead, so that nothing of the sandbox outlives this call.
            deadline = time.monotonic() + 1.0
            while processes_of_user(self._own_uid) and time.monotonic() < deadline:
                time.sleep(0.002)

    def _kill_and_collect_stderr(self) -> str:
        self._kill()
        assert self.process.stderr is not None
        capture = _Capture(4096)
        _drain(self.process.stderr.fileno(), capture)
        self.discard()
        return capture.text("")

    def _remove_cgroup(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None


def selectors_wait(fd: int, timeout: float) -> bool:
    """Whether ``fd`` became readable within ``timeout`` seconds."""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        return bool(selector.select(timeout))


def _empty(selector: selectors.BaseSelector) -> selectors.BaseSelector:
    for key in list(selector.get_map().values()):
        selector.unregister(key.fd)
    return selector


def _drain(fd: int, capture: _Capture) -> None:
    """Read what is left in a pipe whose writers are all dead."""
    os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, 65536)
        except (BlockingIOError, OSError):
            return
        if not chunk:
            return
        capture.add(chunk)


def _capture_output(capture: _Capture, chunk: bytes) -> None:
    capture.add(chunk)
    if len(chunk) < SMALL_READ_BYTES:
        # Let output trickled a byte at a time pile up: a wake-up per write would cost this process
        # as much CPU as the submission spends writing.
        time.sleep(SMALL_READ_PAUSE_S)
