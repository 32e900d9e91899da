"""One sandboxed run of the harness: start it, send it one job, collect its report and output, kill it.

A :class:`SandboxProcess` is used for exactly one submission and then discarded. It is started ahead of
time (a warm spare) or on demand; either way it first imports NumPy and says ``ready`` on the report channel.
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
from typing import Any

from qkv.grading.cgroups import SandboxCgroup
from qkv.grading.limits import Limits
from qkv.grading.runtime import bare_command, bwrap_command, bwrap_path, find_runtime

__all__ = ["RawRun", "SandboxProcess", "SandboxStartError"]

MAX_REPORT_BYTES = 4 * 1024 * 1024
MAX_REPORT_LINES = 10_000  # the harness writes one line per test and three more; anything longer is forged
# The harness writes each line with one call, so its report arrives in a few dozen reads (a few more for
# large values). Code that trickles bytes into the pipe would make this process wake for every one of them.
MAX_REPORT_READS = 4096
SMALL_READ_BYTES, SMALL_READ_PAUSE_S = 4096, 0.001
READY_TIMEOUT_S = 30.0
GRACE_S = 0.5  # after "done": time for the process to exit by itself before it is killed
# Joins the sandbox's cgroups, then becomes bubblewrap (or the bare interpreter).
JOIN_CGROUPS = 'for g in $QKV_CGROUPS; do echo $$ > "$g/cgroup.procs" || exit 97; done; exec "$@"'


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
    processes_limit_hit: bool = False
    memory_limit_hit: bool = False


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


class SandboxProcess:
    """A started harness waiting for its one job."""

    def __init__(self, limits: Limits, *, use_bwrap: bool) -> None:
        self.limits = limits
        self.use_bwrap = use_bwrap
        self._buffer = b""
        runtime = find_runtime()
        bwrap = bwrap_path() if use_bwrap else None
        drop, uid = drop_to_unprivileged_uid() if bwrap and os.geteuid() == 0 else ([], os.getuid())
        self._own_uid = uid if drop else None  # drawn for this sandbox (another grader process may share it)
        read_fd, write_fd = os.pipe()
        self._report_fd = read_fd
        self.cgroup = SandboxCgroup.create(limits.processes + 3, limits.memory_bytes * 3 // 2)
        nproc = None
        if self.cgroup is None and uid != 0:
            # No pids cgroup (cgroup v2 only, say): RLIMIT_NPROC bounds the processes instead. It counts
            # every process of the uid (three are the sandbox's own) and holds for any uid but root's.
            nproc = processes_of_user(uid) + limits.processes + 3
        rlimits = limits.rlimit_spec(nproc)
        if bwrap:
            command = [*drop, *bwrap_command(bwrap, runtime, rlimits, limits.file_bytes, write_fd)]
        else:
            command = bare_command(runtime, rlimits, write_fd)
        env = {
            "PATH": "/usr/bin:/bin",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        }
        if self.cgroup is not None:
            command = ["/bin/sh", "-c", JOIN_CGROUPS, "sh", *command]
            env["QKV_CGROUPS"] = " ".join(self.cgroup.paths)
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd,),
                start_new_session=True,
                env=env,
                cwd="/",
            )
        except OSError as error:
            os.close(read_fd)
            self._remove_cgroup()
            raise SandboxStartError(f"The grading sandbox could not be started: {error}.") from None
        finally:
            os.close(write_fd)

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
        if line != b'{"event": "ready"}':
            self._kill_and_collect_stderr()
            raise SandboxStartError(f"The grading sandbox started but sent {line[:200]!r} instead of ready.")

    def alive(self) -> bool:
        """Whether the process is still waiting (a spare that died is thrown away)."""
        return self.process.poll() is None

    def run(self, job: dict[str, Any]) -> RawRun:
        """Send the job, collect the report and output until the harness ends or the wall clock runs out."""
        result = RawRun()
        stdout, stderr = _Capture(self.limits.output_bytes), _Capture(self.limits.output_bytes)
        pending = json.dumps(job).encode()
        lines: list[bytes] = []
        report_bytes = len(self._buffer)
        partial = bytearray()  # report bytes after self._buffer that hold no newline yet
        report_reads = 0
        selector: selectors.BaseSelector = selectors.DefaultSelector()
        process = self.process
        assert process.stdin and process.stdout and process.stderr
        for stream in (process.stdin, process.stdout, process.stderr):
            os.set_blocking(stream.fileno(), False)
        selector.register(process.stdin.fileno(), selectors.EVENT_WRITE, "stdin")
        selector.register(process.stdout.fileno(), selectors.EVENT_READ, stdout)
        selector.register(process.stderr.fileno(), selectors.EVENT_READ, stderr)
        selector.register(self._report_fd, selectors.EVENT_READ, "report")
        deadline = time.monotonic() + self.limits.wall_s
        done = False
        try:
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    result.timed_out = not done
                    break
                for key, _ in selector.select(remaining):
                    if key.data == "stdin":
                        try:
                            pending = pending[os.write(key.fd, pending) :]
                        except BlockingIOError:
                            continue
                        except OSError:
                            pending = b""
                        if not pending:
                            selector.unregister(key.fd)
                            process.stdin.close()
                        continue
                    try:
                        chunk = os.read(key.fd, 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        selector.unregister(key.fd)
                    elif key.data == "report":
                        report_bytes += len(chunk)
                        report_reads += 1
                        if report_bytes > MAX_REPORT_BYTES or report_reads > MAX_REPORT_READS:
                            result.malformed = (
                                "the report was larger than the grader accepts"
                                if report_bytes > MAX_REPORT_BYTES
                                else "the report came in more pieces than the harness ever writes"
                            )
                            selector = _empty(selector)
                            break
                        if b"\n" not in chunk:  # a line still in the making: append, do not re-scan
                            partial += chunk
                            continue
                        *complete, rest = (self._buffer + bytes(partial) + chunk).split(b"\n")
                        self._buffer, partial = rest, bytearray()
                        lines += complete
                        if len(lines) > MAX_REPORT_LINES:
                            result.malformed = "the report had more lines than the grader accepts"
                            selector = _empty(selector)
                            break
                        if not done and any(_is_done(line) for line in complete):
                            done = True  # wait a little for it to exit and its output to drain
                            deadline = min(deadline, time.monotonic() + GRACE_S)
                    else:
                        key.data.add(chunk)
                        if len(chunk) < SMALL_READ_BYTES:
                            # Let output trickled a byte at a time pile up: a wake-up per write would
                            # cost this process as much CPU as the submission spends writing.
                            time.sleep(SMALL_READ_PAUSE_S)
        finally:
            selector.close()
            self._kill()
            for stream, capture in ((process.stdout, stdout), (process.stderr, stderr)):
                _drain(stream.fileno(), capture)
                stream.close()
            os.close(self._report_fd)
        result.stdout = stdout.text(self.limits.describe_output("stdout"))
        result.stderr = stderr.text(self.limits.describe_output("stderr"))
        returncode = process.returncode
        if returncode is not None and returncode < 0:
            result.signal = -returncode
        elif returncode is not None and self.use_bwrap and returncode > 128:
            result.signal = returncode - 128  # bubblewrap reports a signalled child as 128 + signal
        else:
            result.exit_status = returncode
        if self.cgroup is not None:
            result.processes_limit_hit = self.cgroup.processes_limit_hit()
            result.memory_limit_hit = self.cgroup.memory_limit_hit()
        self._remove_cgroup()
        if result.malformed is None:
            result.events, result.malformed = _parse(lines, self._buffer + bytes(partial))
        return result

    def discard(self) -> None:
        """Kill an unused spare and release what it holds."""
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
            pids = self._cgroup_pids()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
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

    def _cgroup_pids(self) -> list[int]:
        if self.cgroup is None or self.cgroup.pids_dir is None:
            return []
        try:
            with open(os.path.join(self.cgroup.pids_dir, "cgroup.procs")) as handle:
                return [int(line) for line in handle if line.strip()]
        except OSError:
            return []

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


def processes_of_user(uid: int) -> int:
    """How many processes ``uid`` runs now (``RLIMIT_NPROC`` counts them all, not just the sandbox's)."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{pid}").st_uid == uid:
                count += 1
    return count


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


def _is_done(line: bytes) -> bool:
    return line.strip() == b'{"event": "done"}'


def _parse(lines: list[bytes], rest: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """Decode the report's lines; a line that is not a JSON object makes the whole report untrusted."""
    events: list[dict[str, Any]] = []
    if rest.strip():
        lines = [*lines, rest]
    for line in lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            return events, "a line of the report was not valid JSON"
        if not isinstance(event, dict):
            return events, "a line of the report was not a JSON object"
        events.append(event)
    return events, None
