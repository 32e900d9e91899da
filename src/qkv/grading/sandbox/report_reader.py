"""The sandbox's report channel read safely: the harness's JSON lines, bounded in bytes, lines and reads
(a forged or trickled report is cut short and said so), its ready and timing marks, and its exit decoded.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = [
    "MAX_REPORT_BYTES",
    "MAX_REPORT_LINES",
    "MAX_REPORT_READS",
    "ReportReader",
    "decode_exit",
    "parse_report",
    "ready_marks",
    "report_overflow",
    "timing_marks",
]

MAX_REPORT_BYTES = 4 * 1024 * 1024
MAX_REPORT_LINES = 10_000  # the harness writes one line per test and three more; anything longer is forged
# The harness writes each line with one call, so its report arrives in a few dozen reads (a few more for
# large values). Code that trickles bytes into the pipe would make this process wake for every one of them.
MAX_REPORT_READS = 4096
SMALL_READ_BYTES, SMALL_READ_PAUSE_S = 4096, 0.001


def ready_marks(line: bytes) -> dict[str, float] | None:
    """The harness's start-up timestamps from its ``ready`` line, or None when the line is not one.

    The marks are advisory (benchmarks split the start-up with them); anything odd in them is dropped.

    Examples
    --------
    >>> ready_marks(b'{"event": "ready", "marks": {"boot": {"t": 1.5, "cpu": 0.01}}}')
    {'boot': 1.5, 'boot_cpu': 0.01}
    >>> ready_marks(b'{"event": "ready"}')
    {}
    >>> ready_marks(b'{"event": "done"}') is None
    True
    """
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("event") != "ready" or not set(event) <= {"event", "marks"}:
        return None
    return timing_marks(event.get("marks"))


def timing_marks(marks: Any) -> dict[str, float]:
    """``{"boot": {"t": 1.0, "cpu": 0.1}}`` as ``{"boot": 1.0, "boot_cpu": 0.1}``; odd entries dropped.

    Examples
    --------
    >>> timing_marks({"set_up": {"t": 2.0, "cpu": 0.2}, "x": "y", "z": {"t": True}})
    {'set_up': 2.0, 'set_up_cpu': 0.2}
    """
    found: dict[str, float] = {}
    if not isinstance(marks, dict):
        return found
    for name, mark in list(marks.items())[:8]:
        if not isinstance(name, str) or not isinstance(mark, dict):
            continue
        for key, suffix in (("t", ""), ("cpu", "_cpu")):
            value = mark.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                found[name[:32] + suffix] = float(value)
    return found


def decode_exit(returncode: int | None, *, use_bwrap: bool) -> tuple[int | None, int | None]:
    """Split a process's return code into the harness's exit status and the signal that ended it.

    Parameters
    ----------
    returncode : int or None
        ``Popen.returncode``: negative for a signal, None if the process was never reaped.
    use_bwrap : bool
        Whether bubblewrap ran the harness; it reports a signalled child as 128 + the signal.

    Returns
    -------
    (int or None, int or None)
        The exit status (None when a signal ended it) and the signal (None when it exited).

    Examples
    --------
    >>> decode_exit(0, use_bwrap=True)
    (0, None)
    >>> decode_exit(-9, use_bwrap=False)
    (None, 9)
    >>> decode_exit(137, use_bwrap=True), decode_exit(137, use_bwrap=False)
    ((None, 9), (137, None))
    """
    if returncode is not None and returncode < 0:
        return None, -returncode
    if returncode is not None and use_bwrap and returncode > 128:
        return None, returncode - 128
    return returncode, None


def report_overflow(size: int, reads: int, lines: int, max_bytes: int = MAX_REPORT_BYTES) -> str | None:
    """Which of the report's limits is broken, as the reason the report cannot be trusted, or None.

    Parameters
    ----------
    size : int
        Bytes received on the report channel so far.
    reads : int
        Reads it took to receive them.
    lines : int
        Complete lines among them.

    Examples
    --------
    >>> report_overflow(1_000, 3, 5) is None
    True
    >>> report_overflow(MAX_REPORT_BYTES + 1, MAX_REPORT_READS + 1, 0)
    'the report was larger than the grader accepts'
    >>> report_overflow(10, MAX_REPORT_READS + 1, 0)
    'the report came in more pieces than the harness ever writes'
    >>> report_overflow(10, 1, MAX_REPORT_LINES + 1)
    'the report had more lines than the grader accepts'
    """
    if size > min(max_bytes, MAX_REPORT_BYTES):
        return "the report was larger than the grader accepts"
    if reads > MAX_REPORT_READS:
        return "the report came in more pieces than the harness ever writes"
    if lines > MAX_REPORT_LINES:
        return "the report had more lines than the grader accepts"
    return None


class ReportReader:
    """The report channel's bytes, split into lines as they arrive, with the report's limits enforced.

    Parameters
    ----------
    leftover : bytes
        Bytes that arrived after the ``ready`` line, before the job was sent.
    max_bytes : int
        The most the report may hold (the job's bound; at most ``MAX_REPORT_BYTES``).

    Examples
    --------
    >>> report = ReportReader()
    >>> report.feed(b'{"event": "start"}\\n{"event": "do')
    >>> report.done
    False
    >>> report.feed(b'ne"}\\n')
    >>> report.done, report.events()
    (True, ([{'event': 'start'}, {'event': 'done'}], None))
    """

    def __init__(self, leftover: bytes = b"", max_bytes: int = MAX_REPORT_BYTES) -> None:
        self.max_bytes = min(max_bytes, MAX_REPORT_BYTES)
        self.over: int | None = None  # the bound, once the report grew past it
        self.lines: list[bytes] = []
        self.done = False  # the harness's last line, {"event": "done"}, has arrived
        self.malformed: str | None = None  # set when a limit is broken; nothing more is read then
        self._rest = leftover  # bytes after the last newline
        self._partial = bytearray()  # bytes after ``_rest`` that hold no newline yet
        self._size = len(leftover)
        self._reads = 0

    def feed(self, chunk: bytes) -> None:
        """Take the bytes of one read."""
        self._size += len(chunk)
        self._reads += 1
        self.malformed = report_overflow(self._size, self._reads, len(self.lines), self.max_bytes)
        if self._size > self.max_bytes:
            self.over = self.max_bytes
        if self.malformed is not None:
            return
        if b"\n" not in chunk:  # a line still in the making: append, do not re-scan
            self._partial += chunk
            return
        *complete, self._rest = (self._rest + bytes(self._partial) + chunk).split(b"\n")
        self._partial = bytearray()
        self.lines += complete
        self.malformed = report_overflow(self._size, self._reads, len(self.lines), self.max_bytes)
        if self.malformed is None and any(_is_done(line) for line in complete):
            self.done = True

    def events(self) -> tuple[list[dict[str, Any]], str | None]:
        """The report's events and, if it cannot be trusted, why (then the events are empty)."""
        if self.malformed is not None:
            return [], self.malformed
        return parse_report(self.lines, self._rest + bytes(self._partial))


def _is_done(line: bytes) -> bool:
    return line.strip() == b'{"event": "done"}'


def parse_report(lines: list[bytes], rest: bytes = b"") -> tuple[list[dict[str, Any]], str | None]:
    """Decode the report's lines; a line that is not a JSON object makes the whole report untrusted.

    Parameters
    ----------
    lines : list of bytes
        The complete lines, without their newlines.
    rest : bytes
        What came after the last newline (a last line the harness did not end).

    Returns
    -------
    (list of dict, str or None)
        The events decoded before any bad line, and the reason the report cannot be trusted, or None.

    Examples
    --------
    >>> parse_report([b'{"event": "start"}', b""], b'{"event": "done"}')
    ([{'event': 'start'}, {'event': 'done'}], None)
    >>> parse_report([b'{"event": "start"}', b"[1, 2]"])
    ([{'event': 'start'}], 'a line of the report was not a JSON object')
    """
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
