"""Where one grading's time went: wall-clock and CPU seconds per phase, from outside and from the harness.

The figures are advisory, for benchmarks: the harness's own timestamps after the learner's code has run
could be forged by that code, so nothing here ever reaches a verdict. CPU figures need a cgroup that
counts the sandbox's CPU time (cgroup v1 ``cpuacct`` or v2 ``cpu.stat``); without one they are None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["PHASES", "Phases", "phases_of", "timing_events"]

PHASES = ("sandbox start", "imports", "set-up", "tests", "verdict")
"""The phases, in order: bubblewrap and the interpreter's start; the standard library and NumPy imported;
the inputs and expected values drawn (grader) and decoded (harness); the learner's file loaded and its
functions called; the report judged and the sandbox killed."""


@dataclass(frozen=True)
class Phases:
    """Wall-clock and CPU seconds of each phase of one grading.

    Parameters
    ----------
    wall : dict of str to float
        Seconds from the phase's start to its end, per phase (a warm spare's start and imports happened
        before the program arrived, so they add no waiting).
    cpu : dict of str to float or None
        CPU seconds of the grader's thread and the sandbox together, per phase; None where unknown.

    Examples
    --------
    >>> phases = Phases({"tests": 0.02}, {"tests": 0.015})
    >>> phases.total_cpu
    0.015
    >>> Phases({"tests": 0.02}, {"tests": None}).total_cpu is None
    True
    """

    wall: dict[str, float]
    cpu: dict[str, float | None]

    @property
    def total_cpu(self) -> float | None:
        """The CPU seconds of the whole grading, or None when a phase's are unknown."""
        values = list(self.cpu.values())
        if any(value is None for value in values):
            return None
        return sum(value for value in values if value is not None)


def phases_of(marks: dict[str, float]) -> Phases:
    """The phases from the grader's and the sandbox's marks (monotonic seconds; ``*_cpu``: CPU seconds).

    The marks: ``popen`` (the sandbox was started), ``boot`` and ``boot_cpu`` (the interpreter reached
    the harness), ``ready`` and ``ready_cpu`` (NumPy imported), ``cgroup_cpu_ready`` (the sandbox's CPU
    then), ``begin`` (``grade`` was called), ``prepared`` (inputs drawn), ``set_up`` and ``set_up_cpu``
    (the harness decoded them), ``tests`` (the last call returned: advisory), ``end`` (the verdict is
    ready), ``cgroup_cpu`` (the sandbox's CPU in all), and the grader thread's CPU: ``thread_start``
    (starting a sandbox), ``thread_prepare`` and ``thread_rest``. A sandbox forked by the zygote adds
    ``zygote_cpu`` (what the fork cost the zygote, outside the sandbox's cgroup) to its start; its
    ``boot`` is the moment it was released into its cgroups, and its imports were done by the zygote.

    Examples
    --------
    >>> marks = {"popen": 0.0, "boot": 0.03, "boot_cpu": 0.02, "ready": 0.1, "ready_cpu": 0.08,
    ...          "cgroup_cpu_ready": 0.09, "begin": 1.0, "prepared": 1.01, "sent": 1.01, "set_up": 1.012,
    ...          "set_up_cpu": 0.082, "tests": 1.03, "end": 1.04, "cgroup_cpu": 0.11,
    ...          "thread_start": 0.0, "thread_prepare": 0.01, "thread_rest": 0.005}
    >>> phases = phases_of(marks)
    >>> [round(phases.wall[name], 3) for name in PHASES]
    [0.03, 0.07, 0.012, 0.018, 0.01]
    >>> [round(phases.cpu[name] or 0, 3) for name in PHASES]
    [0.03, 0.06, 0.012, 0.018, 0.005]
    """

    def gap(later: str, earlier: str) -> float:
        return max(0.0, marks.get(later, marks.get(earlier, 0.0)) - marks.get(earlier, 0.0))

    tests_end = "tests" if "tests" in marks else "end"
    wall = {
        "sandbox start": gap("boot", "popen"),
        "imports": gap("ready", "boot"),
        "set-up": gap("prepared", "begin") + gap("set_up", "sent"),
        "tests": gap(tests_end, "set_up"),
        "verdict": gap("end", tests_end),
    }
    cpu: dict[str, float | None] = dict.fromkeys(PHASES)
    thread_start = marks.get("thread_start", 0.0)
    if {"boot_cpu", "ready_cpu", "set_up_cpu"} <= marks.keys():
        cpu["imports"] = marks["ready_cpu"] - marks["boot_cpu"]
        cpu["set-up"] = marks.get("thread_prepare", 0.0) + marks["set_up_cpu"] - marks["ready_cpu"]
        if {"cgroup_cpu_ready", "cgroup_cpu"} <= marks.keys():
            outside_python = marks["cgroup_cpu_ready"] - marks["ready_cpu"]  # sh, setpriv, bubblewrap
            forking = marks.get("zygote_cpu", 0.0)
            cpu["sandbox start"] = thread_start + forking + outside_python + marks["boot_cpu"]
            after_ready = marks["cgroup_cpu"] - marks["cgroup_cpu_ready"]
            cpu["tests"] = max(0.0, after_ready - (marks["set_up_cpu"] - marks["ready_cpu"]))
    cpu["verdict"] = marks.get("thread_rest")
    return Phases(wall, cpu)


def timing_events(events: list[dict[str, Any]]) -> dict[str, float]:
    """The harness's ``timing`` events (``set_up``, ``tests``) as marks; anything odd is dropped.

    Examples
    --------
    >>> timing_events([{"event": "timing", "phase": "set_up", "t": 2.0, "cpu": 0.1},
    ...                {"event": "result"}, {"event": "timing", "phase": "other", "t": 3.0}])
    {'set_up': 2.0, 'set_up_cpu': 0.1}
    """
    found: dict[str, float] = {}
    for event in events:
        phase = event.get("phase")
        if event.get("event") != "timing" or phase not in ("set_up", "tests") or phase in found:
            continue
        for key, suffix in (("t", ""), ("cpu", "_cpu")):
            value = event.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                found[phase + suffix] = float(value)
    return found
