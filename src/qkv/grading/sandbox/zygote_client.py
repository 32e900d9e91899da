"""The grader's side of the zygote (``zygote.py``): start it in bubblewrap, and fork a sandbox per submission.

:class:`Zygote` starts the warm interpreter once; :meth:`Zygote.spawn` asks it for one child, finds the
child's pid on this machine, has the caller move it into the submission's cgroups, and only then lets it
build its sandbox. The returned :class:`ForkedChild` looks like a ``subprocess.Popen`` to the code that
runs the job (:class:`~qkv.grading.sandbox.process.SandboxProcess`): pipes, ``poll``, ``wait``,
``returncode``, and ``kill``, which signals through a pidfd so that a recycled pid can never be hit.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO

from qkv.grading.sandbox.runtime import (
    SANDBOX_ENV,
    bwrap_options,
    bwrap_path,
    find_runtime,
    pipe_holding,
    zygote_command,
)

__all__ = ["ForkedChild", "Zygote", "ZygoteError", "namespace_pids"]

READY_TIMEOUT_S = 30.0
FORK_TIMEOUT_S = 10.0


class ZygoteError(RuntimeError):
    """The zygote could not start, or could not fork a child (a problem of this machine, not of a program)."""


def namespace_pids(pid: int) -> list[int]:
    """``pid``'s pids from this namespace inwards (``NSpid`` in ``/proc/PID/status``); [] if it is gone.

    Examples
    --------
    >>> namespace_pids(os.getpid())[0] == os.getpid()
    True
    """
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return [int(field) for field in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    return found


def _find_descendant(root: int, inner_pid: int, depth: int) -> int | None:
    """The pid here of the process below ``root`` (``depth`` levels at most) whose innermost pid is
    ``inner_pid``."""
    level = [root]
    for _ in range(depth):
        level = [child for parent in level for child in _children(parent)]
        for pid in level:
            pids = namespace_pids(pid)
            if len(pids) > 1 and pids[-1] == inner_pid:
                return pid
    return None


class ForkedChild:
    """One child of the zygote, as the grader sees it: a ``Popen``-like handle.

    ``pid`` is the child's pid on this machine; ``returncode`` is the exit status the zygote reported
    (bubblewrap's convention: 128 + a signal for a harness ended by one; negative if the child itself was
    killed), or None while it runs.
    """

    def __init__(self, pid: int, pidfd: int, pipes: tuple[int, int, int], status_fd: int) -> None:
        self.pid = pid
        self._pidfd = pidfd
        self.stdin: IO[bytes] | None = os.fdopen(pipes[0], "wb", buffering=0)
        self.stdout: IO[bytes] | None = os.fdopen(pipes[1], "rb", buffering=0)
        self.stderr: IO[bytes] | None = os.fdopen(pipes[2], "rb", buffering=0)
        self._status_fd: int | None = status_fd
        self._status = b""
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """The exit status if the child has ended, else None (does not block)."""
        if self.returncode is None:
            self._read_status(timeout=0.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Block until the child has ended; its exit status.

        Raises
        ------
        subprocess.TimeoutExpired
            If it is still running after ``timeout`` seconds.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._read_status(left)
            if self.returncode is None and deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"sandbox {self.pid}", timeout or 0.0)
        return self.returncode

    def kill(self) -> None:
        """SIGKILL the child (through its pidfd: a pid reused by another process is never signalled)."""
        if self._pidfd >= 0:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def discard(self) -> None:
        """Kill the child, wait for it, and close every descriptor held for it (once it was never used)."""
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.wait(timeout=10)
        self._close()
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                stream.close()

    def _read_status(self, timeout: float | None) -> None:
        if self._status_fd is None:
            return
        if not select.select([self._status_fd], [], [], timeout)[0]:
            return
        chunk = os.read(self._status_fd, 4096)
        self._status += chunk
        for line in self._status.split(b"\n"):
            fields = line.split()
            if len(fields) == 2 and fields[0] == b"exit" and fields[1].lstrip(b"-").isdigit():
                self.returncode = int(fields[1])
        if self.returncode is None and not chunk:
            # The zygote died before it could report: the child died with it (parent-death signal).
            self._wait_gone()
            self.returncode = -signal.SIGKILL
        if self.returncode is not None:
            self._close()

    def _wait_gone(self) -> None:
        if self._pidfd >= 0:
            select.select([self._pidfd], [], [], 5.0)  # a pidfd is readable once its process has ended

    def _close(self) -> None:
        if self._status_fd is not None:
            os.close(self._status_fd)
            self._status_fd = None
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1


class Zygote:
    """The warm interpreter, started in bubblewrap (``zygote.py``); forks one fresh sandbox per submission.

    Parameters
    ----------
    tmp_bytes : int
        The size of each child's fresh ``/tmp``.
    seccomp : bytes
        The seccomp program every child loads (empty for none).
    command_prefix : list of str
        What runs bubblewrap (``setpriv`` to an unprivileged uid when the grader is root).

    Raises
    ------
    ZygoteError
        If bubblewrap is missing, or the zygote did not say it was ready.
    """

    def __init__(self, tmp_bytes: int, seccomp: bytes, command_prefix: list[str]) -> None:
        bwrap = bwrap_path()
        if bwrap is None:
            raise ZygoteError("The zygote needs bubblewrap, which is not installed.")
        self._lock = threading.Lock()
        self._control, inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        seccomp_fd = pipe_holding(seccomp)
        runtime = find_runtime()
        options_fd = pipe_holding(
            b"".join(option.encode() + b"\0" for option in bwrap_options(runtime, 1 << 20, zygote=True))
        )
        command = [
            *command_prefix,
            bwrap,
            "--args",
            str(options_fd),
            *zygote_command(runtime, inside.fileno(), seccomp_fd, tmp_bytes),
        ]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  (held while the zygote lives; closed by
        # close())
        passed = [inside.fileno(), seccomp_fd, options_fd]
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                pass_fds=passed,
                start_new_session=True,
                env=SANDBOX_ENV,
                cwd="/",
            )
        except OSError as error:
            self._control.close()
            raise ZygoteError(f"The zygote could not be started: {error}.") from None
        finally:
            inside.close()
            os.close(seccomp_fd)
            os.close(options_fd)
        self.host_pid = self._wait_ready()

    def _wait_ready(self) -> int:
        """The zygote's pid here, once it has imported NumPy and said ``ready``."""
        self._control.settimeout(READY_TIMEOUT_S)
        try:
            message = json.loads(self._control.recv(4096) or b"null")
        except (OSError, ValueError):
            message = None
        finally:
            self._control.settimeout(None)
        if not isinstance(message, dict) or message.get("event") != "ready":
            why = message.get("why") if isinstance(message, dict) else None
            self.close()
            raise ZygoteError(f"The zygote did not start: {why or self._said()}.")
        host_pid = _find_descendant(self.process.pid, int(message["pid"]), depth=3)
        if host_pid is None:
            self.close()
            raise ZygoteError("The zygote started but its process could not be found in /proc.")
        return host_pid

    def _said(self) -> str:
        self._stderr.seek(0)
        text = self._stderr.read()[-500:].decode(errors="replace").strip()
        return f"it said: {text}" if text else "it said nothing"

    def alive(self) -> bool:
        """Whether the zygote still runs (a dead one is replaced by the grader)."""
        return self.process.poll() is None

    def spawn(self, rlimits: str, report_fd: int, join: Callable[[int], None]) -> tuple[ForkedChild, float]:
        """Fork one child: its handle, and the CPU seconds its fork cost the zygote.

        Parameters
        ----------
        rlimits : str
            The harness's rlimits (``Limits.rlimit_spec``).
        report_fd : int
            The write end of the report pipe (the caller keeps it, and closes it).
        join : callable
            Moves a pid into the submission's cgroups; called before the child may run any further.

        Raises
        ------
        ZygoteError
            If the zygote is gone or does not answer; the child, if there is one, is killed.
        OSError
            From ``join``; the child is killed.
        """
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        go_r, go_w = os.pipe()
        status_r, status_w = os.pipe()
        ours = [stdin_w, stdout_r, stderr_r, go_w, status_r]
        try:
            with self._lock:
                socket.send_fds(
                    self._control,
                    [json.dumps({"rlimits": rlimits}).encode()],
                    [stdin_r, stdout_w, stderr_w, report_fd, go_r, status_w],
                )
        except OSError as error:
            _close_all(ours)
            raise ZygoteError(f"The zygote did not take the request ({error}).") from None
        finally:
            _close_all([stdin_r, stdout_w, stderr_w, go_r, status_w])
        try:
            inner_pid, fork_cpu = self._forked(status_r)
            pid, pidfd = self._open(inner_pid)
        except ZygoteError:
            _close_all(ours)
            raise
        forked = ForkedChild(pid, pidfd, (stdin_w, stdout_r, stderr_r), status_r)
        try:
            join(pid)
            os.write(go_w, b"G")
        except BaseException:
            forked.discard()
            raise
        finally:
            os.close(go_w)
        return forked, fork_cpu

    def probe(self) -> None:
        """Fork one child through every step of a sandbox's set-up and see it say ``ready``.

        A machine may let the zygote start but refuse what its children do (a security module that
        forbids user namespaces to all but bubblewrap, say); this finds out before any submission would.

        Raises
        ------
        ZygoteError
            Saying what the child reported, if it did not get ready.
        """
        report_r, report_w = os.pipe()
        try:
            child, _ = self.spawn("", report_w, lambda pid: None)
        finally:
            os.close(report_w)
        try:
            ready = select.select([report_r], [], [], READY_TIMEOUT_S)[0] and os.read(report_r, 4096)
            if not ready or not ready.startswith(b'{"event": "ready"'):
                assert child.stderr is not None
                child.kill()
                child.wait(timeout=10)
                said = child.stderr.read(2000).decode(errors="replace").strip()
                raise ZygoteError(
                    f"A sandbox forked by the zygote did not get ready ({said or 'it said nothing'})."
                )
        finally:
            child.discard()
            os.close(report_r)

    def _forked(self, status_fd: int) -> tuple[int, float]:
        """The child's pid in the zygote's namespace, from the first line of its status pipe."""
        line = b""
        deadline = time.monotonic() + FORK_TIMEOUT_S
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            chunk = (
                os.read(status_fd, 256) if left > 0 and select.select([status_fd], [], [], left)[0] else b""
            )
            if not chunk:
                raise ZygoteError("The zygote did not fork a child.")
            line += chunk
        fields = line.split()
        if len(fields) < 3 or fields[0] != b"forked" or not fields[1].isdigit():
            raise ZygoteError(f"The zygote answered {line[:100]!r} instead of a child's pid.")
        return int(fields[1]), float(fields[2])

    def _open(self, inner_pid: int) -> tuple[int, int]:
        """The child's pid here and a pidfd for it; it waits for its go byte, so its pid is stable."""
        pid = _find_descendant(self.host_pid, inner_pid, depth=1)
        if pid is None:
            raise ZygoteError(f"The zygote's child {inner_pid} could not be found in /proc.")
        pidfd = os.pidfd_open(pid)
        if namespace_pids(pid)[-1:] != [inner_pid]:  # it ended between the two looks
            os.close(pidfd)
            raise ZygoteError(f"The zygote's child {inner_pid} ended before it could be released.")
        return pid, pidfd

    def close(self) -> None:
        """Stop the zygote: it exits when its control socket closes (its children die with it)."""
        with contextlib.suppress(OSError):
            self._control.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self._stderr.close()


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
