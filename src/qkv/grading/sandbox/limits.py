"""The limits a submission runs under, and how each one is explained to a learner."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits for one grading run.

    Parameters
    ----------
    wall_s : float
        Wall-clock seconds the submission may run once its job is sent; then the whole process tree is killed.
    cpu_s : int
        CPU seconds (``RLIMIT_CPU``).
    memory_bytes : int
        Address space of one process (``RLIMIT_AS``); the sandbox's cgroup, where there is one, allows the
        whole tree half as much again.
    processes : int
        Processes (and threads) the submission may start besides its own.
    file_bytes : int
        Largest file it may write (``RLIMIT_FSIZE``); ``/tmp`` is a tmpfs of the same size.
    open_files : int
        Open file descriptors (``RLIMIT_NOFILE``).
    output_bytes : int
        Bytes kept of each of stdout and stderr; the rest is discarded and a marker says so.

    Examples
    --------
    >>> Limits().describe_wall()
    'Your code ran past the 10 s time limit, so it was stopped.'
    >>> Limits(wall_s=2.5).describe_wall()
    'Your code ran past the 2.5 s time limit, so it was stopped.'
    """

    wall_s: float = 10.0
    cpu_s: int = 10
    memory_bytes: int = 1024 * MiB
    processes: int = 16
    file_bytes: int = 16 * MiB
    open_files: int = 64
    output_bytes: int = 64 * 1024

    def rlimit_spec(self, nproc: int | None = None) -> str:
        """The ``NAME=value`` list the harness applies to itself before the submission is loaded.

        Parameters
        ----------
        nproc : int, optional
            An ``RLIMIT_NPROC`` to add, for machines where no ``pids`` cgroup can be made (it counts every
            process of the user, and does not hold for root).

        Examples
        --------
        >>> Limits().rlimit_spec()
        'AS=1073741824,CPU=10,FSIZE=16777216,NOFILE=64,CORE=0'
        >>> Limits().rlimit_spec(nproc=40).endswith(",NPROC=40")
        True
        """
        spec = (
            f"AS={self.memory_bytes},CPU={self.cpu_s},FSIZE={self.file_bytes},NOFILE={self.open_files},CORE=0"
        )
        return spec + (f",NPROC={nproc}" if nproc is not None else "")

    def describe_wall(self) -> str:
        """The sentence for a run stopped by the wall clock."""
        return f"Your code ran past the {self.wall_s:g} s time limit, so it was stopped."

    def describe_cpu(self) -> str:
        """The sentence for a run stopped by ``RLIMIT_CPU``."""
        return f"Your code used more than {self.cpu_s} s of CPU time, so it was stopped."

    def describe_memory(self) -> str:
        """The sentence for a run that ran out of memory."""
        return f"Your code used more than {size_text(self.memory_bytes)} of memory, so it was stopped."

    def describe_processes(self) -> str:
        """The sentence for a run that tried to start too many processes."""
        return (
            f"Your code started too many processes (the limit is {self.processes}), "
            "so the next one could not start."
        )

    def describe_file_size(self) -> str:
        """The sentence for a run that wrote too large a file or filled ``/tmp``."""
        return (
            f"Your code wrote more than {size_text(self.file_bytes)} to a file or to /tmp, the most allowed, "
            "so the write failed."
        )

    def describe_open_files(self) -> str:
        """The sentence for a run that opened too many files."""
        return f"Your code opened more than {self.open_files} files at once, the most allowed."

    def describe_output(self, stream: str) -> str:
        """The marker put where captured output was cut off."""
        return (
            f"[… output truncated: your code printed more than {size_text(self.output_bytes)} "
            f"on {stream}; the rest was discarded …]"
        )


def size_text(n_bytes: int) -> str:
    """``1 GiB``, ``64 KiB``: sizes the way a learner reads them.

    Examples
    --------
    >>> size_text(1024 ** 3), size_text(64 * 1024), size_text(1536)
    ('1 GiB', '64 KiB', '1.5 KiB')
    """
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n_bytes >= factor:
            return f"{n_bytes / factor:g} {unit}"
    return f"{n_bytes} bytes"
