"""The grader: runs a submission in a sandbox and judges its raw results against the reference.

The sandbox's report becomes a verdict in :mod:`qkv.grading.grader_report`; a program paused after its
first slice is an :class:`~qkv.grading.grader_slices.Unfinished`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import logging
import math
import os
import secrets
import subprocess
import threading
import time
import weakref
from types import TracebackType
from typing import Any

import numpy as np

from qkv.grading.behaviour import fixed_names, probe_cases, signatures
from qkv.grading.feedback.explain import explain
from qkv.grading.feedback.hints import Outcome
from qkv.grading.feedback.mutants import prepare_in_background
from qkv.grading.grader_report import error_line, interpret
from qkv.grading.grader_slices import Unfinished, _Prepared
from qkv.grading.judging import JudgeLine, current_client
from qkv.grading.results import GradeResult, TestResult
from qkv.grading.sandbox.cgroups import HOST, CgroupHost, cgroups_available, slices_pause
from qkv.grading.sandbox.cgroups import remove_stale as remove_stale_cgroups
from qkv.grading.sandbox.limits import Limits
from qkv.grading.sandbox.live_gradings import announced
from qkv.grading.sandbox.pool import SparePool
from qkv.grading.sandbox.priority import SandboxPriority, current_priority
from qkv.grading.sandbox.process import RawRun, SandboxProcess, SandboxStartError, drop_to_unprivileged_uid
from qkv.grading.sandbox.report_bound import bound_of_shares, share_of_test
from qkv.grading.sandbox.runtime import bwrap_path
from qkv.grading.sandbox.seccomp import filter_for_this_machine
from qkv.grading.sandbox.zygote_client import Zygote, ZygoteError
from qkv.grading.suite import Case, Suite
from qkv.grading.timing import timing_events
from qkv.grading.values import dtype_name

__all__ = [
    "BUBBLEWRAP",
    "RLIMITS_ONLY",
    "Grader",
    "SandboxStart",
    "SandboxUnavailable",
    "Unfinished",
    "sandbox_available",
]

BUBBLEWRAP = "bubblewrap"
RLIMITS_ONLY = "rlimits only (no bubblewrap)"
MAX_SOURCE_BYTES = 256 * 1024


# How recently a program at normal priority must have taken a sandbox for one in the background to leave it
# the last warm spare (see Grader._spares_to_keep).
NORMAL_RECENT_S = 2.0

_log = logging.getLogger(__name__)


class SandboxStart(enum.Enum):
    """How a grader starts each sandbox."""

    FORKED = "forked from a warm interpreter (the zygote)"
    FRESH = "a fresh interpreter"


class SandboxUnavailable(RuntimeError):
    """Sandboxed grading was required, but bubblewrap is missing or cannot start here."""


@functools.cache
def sandbox_available() -> bool:
    """Whether bubblewrap is installed and can start a sandbox on this machine.

    Examples
    --------
    >>> isinstance(sandbox_available(), bool)
    True
    """
    bwrap = bwrap_path()
    if bwrap is None:
        return False
    probe = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--", "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


class Grader:
    """Grades submissions of a code exercise, in a sandbox when one is available.

    Parameters
    ----------
    require_sandbox : bool
        Refuse to work without bubblewrap (the web server's default).
    warm_spares : int
        How many started sandboxes to keep waiting, so that a submission does not wait for Python and NumPy
        to start. Each spare grades exactly one submission and is then thrown away.
    limits : Limits, optional
        The resource limits (the defaults are those the learner is told about).
    cgroup_host : CgroupHost, optional
        Where the cgroup files are (this machine's by default); see
        :func:`qkv.grading.sandbox.cgroups.choose`.
    max_paused : int
        Programs that outgrew their first slice (:meth:`grade_first_slice`) kept paused at once, each in
        its frozen sandbox (holding its memory); beyond that they are stopped and later run again.
    zygote : bool
        Fork every sandbox from a warm interpreter that imported NumPy once (``zygote.py``), where this
        machine allows it: bubblewrap, user namespaces inside it, and cgroups that bound processes. Each
        sandbox is still new: its own namespaces, ``/tmp``, ``/proc``, cgroups and seccomp filter. Where
        the zygote cannot start, or with False, each sandbox starts a fresh interpreter
        (:attr:`start_mode` says which).
    judge_workers : int
        Judge reports on this many threads of their own, fairly across the clients named with
        :func:`qkv.grading.judging.judging_for` (see :class:`~qkv.grading.judging.JudgeLine`); 0 (the
        default) judges in the calling thread.

    Raises
    ------
    SandboxUnavailable
        If ``require_sandbox`` is true and bubblewrap is missing or cannot start.

    Examples
    --------
    >>> from qkv.grading.compare import Whole
    >>> from qkv.grading.suite import TestCase
    >>> box = TestCase("a 2 by 3 by 4 box", "volume", (2, 3, 4), lambda a, b, c: a * b * c, Whole())
    >>> suite = Suite(["volume"], [box])
    >>> with Grader() as grader:
    ...     result = grader.grade("def volume(a, b, c):\\n    return a * b\\n", suite, seed=1)
    >>> result.status, result.score, result.tests[0].call
    ('fail', (0, 1), 'volume(2, 3, 4)')
    """

    def __init__(
        self,
        require_sandbox: bool = False,
        warm_spares: int = 0,
        *,
        limits: Limits | None = None,
        cgroup_host: CgroupHost = HOST,
        max_paused: int = 8,
        zygote: bool = True,
        judge_workers: int = 0,
    ) -> None:
        self.limits = limits or Limits()
        if max_paused < 0:
            raise ValueError(f"max_paused must be zero or more, but it is {max_paused}.")
        self.max_paused = max_paused
        self._paused: set[SandboxProcess] = set()  # frozen sandboxes of set-aside programs
        self._paused_lock = threading.Lock()
        self._use_bwrap = sandbox_available()
        self._cgroup_host = cgroup_host
        remove_stale_cgroups(cgroup_host)
        if require_sandbox and not self._use_bwrap:
            reason = (
                "is not installed" if bwrap_path() is None else "is installed but cannot start a sandbox here"
            )
            raise SandboxUnavailable(
                f"Sandboxed grading needs bubblewrap, which {reason}. Install it with "
                "'apt-get install bubblewrap' (Debian/Ubuntu), or explicitly allow grading with rlimits only "
                "('qkv serve --allow-unsandboxed', or Grader(require_sandbox=False)), which does not protect "
                "this machine from the submitted code."
            )
        if warm_spares < 0:
            raise ValueError(f"warm_spares must be zero or more, but it is {warm_spares}.")
        self._want_zygote = zygote and self._use_bwrap and cgroups_available(cgroup_host)
        self._zygotes: list[Zygote] = []  # the running one, if any (a list, for the finalizer)
        self._zygote_lock = threading.Lock()
        self._pool = SparePool(warm_spares, self._new_process) if warm_spares else None
        self._last_normal = -math.inf  # when a program at normal priority last took a sandbox
        self.judges = JudgeLine(judge_workers) if judge_workers else None
        # Spares and the zygote are stopped even if close() is never called (cgroups removed with them).
        self._finalizer = weakref.finalize(self, _shut_down, self._pool, self._zygotes)

    @property
    def sandbox(self) -> str:
        """``"bubblewrap"``, or ``"rlimits only (no bubblewrap)"`` where it is not available."""
        return BUBBLEWRAP if self._use_bwrap else RLIMITS_ONLY

    @property
    def spares(self) -> SparePool | None:
        """The pool of warm spares, if there is one."""
        return self._pool

    @property
    def slices_pause(self) -> bool:
        """Whether a program that outgrows a slice is paused, its slices counted in CPU time (the sandbox's
        cgroups can freeze it and count its CPU), rather than stopped to run again, its slices counted on
        the wall clock."""
        return self._use_bwrap and slices_pause(self._cgroup_host)

    @property
    def start_mode(self) -> SandboxStart:
        """How sandboxes start here (the zygote is started by this call if it is not running yet)."""
        return SandboxStart.FORKED if self._running_zygote() is not None else SandboxStart.FRESH

    def _new_process(self) -> SandboxProcess:
        zygote = self._running_zygote()
        try:
            return self._sandbox_from(zygote)
        except SandboxStartError:
            if zygote is None or zygote.alive():
                raise
            return self._sandbox_from(self._running_zygote())  # the zygote had died: once more, a new one

    def _sandbox_from(self, zygote: Zygote | None) -> SandboxProcess:
        return SandboxProcess(
            self.limits, use_bwrap=self._use_bwrap, cgroup_host=self._cgroup_host, zygote=zygote
        )

    def _running_zygote(self) -> Zygote | None:
        """The zygote, started (or restarted) if need be; None where sandboxes start fresh interpreters."""
        with self._zygote_lock:
            if not self._want_zygote:
                return None
            if self._zygotes and self._zygotes[0].alive():
                return self._zygotes[0]
            for dead in self._zygotes:
                dead.close()
            self._zygotes.clear()
            try:
                self._zygotes.append(self._start_zygote())
            except (ZygoteError, SandboxStartError) as error:
                _log.warning("Sandboxes will start fresh interpreters: %s", error)
                self._want_zygote = False
                return None
            return self._zygotes[0]

    def _start_zygote(self) -> Zygote:
        seccomp = filter_for_this_machine()
        prefix = drop_to_unprivileged_uid()[0] if os.geteuid() == 0 else []
        zygote = Zygote(self.limits.file_bytes, seccomp, prefix)
        try:
            zygote.probe()
        except BaseException:
            zygote.close()
            raise
        return zygote

    def grade(self, source: str, suite: Suite, *, seed: int | None = None) -> GradeResult:
        """Grade one submission. Safe to call from several threads at once.

        Parameters
        ----------
        source : str
            The learner's file. Nothing in it makes this method raise.
        suite : Suite
            The exercise's hidden tests (from the lesson's grading module).
        seed : int, optional
            The seed of the random inputs; a new one is drawn (and recorded in the result) when omitted.

        Returns
        -------
        GradeResult

        Raises
        ------
        TypeError
            If ``suite`` is not a Suite or ``source`` is not a str.
        ValueError
            If ``seed`` is negative.
        """
        outcome = self.grade_first_slice(source, suite, seed=seed, slice_s=None)
        return outcome if isinstance(outcome, GradeResult) else outcome.finish()

    def grade_first_slice(
        self, source: str, suite: Suite, *, seed: int | None = None, slice_s: float | None
    ) -> GradeResult | Unfinished:
        """Grade one submission within a first slice of ``slice_s`` CPU seconds (all of it for None).

        A program that is still running when its slice is used up is paused (its sandbox frozen) or, where
        the sandbox cannot be frozen or ``max_paused`` programs already are, stopped; the
        :class:`Unfinished` returned then finishes it with the rest of its limits, or again from the
        start in a fresh sandbox. The slice is measured in CPU time where the sandbox's cgroup counts it,
        else in wall-clock time. Parameters, errors and safety as for :meth:`grade`.

        Examples
        --------
        >>> from qkv.grading.compare import Whole
        >>> from qkv.grading.suite import TestCase
        >>> suite = Suite(["one"], [TestCase("one", "one", (), lambda: 1, Whole())])
        >>> with Grader() as grader:
        ...     first = grader.grade_first_slice("def one():\\n    return 1\\n", suite, slice_s=2.0)
        >>> first.status
        'pass'
        """
        with self._announced():
            return self._first_slice(source, suite, seed, slice_s)

    def _announced(self) -> contextlib.AbstractContextManager[None]:
        """A grading at normal priority tells this machine's background work it runs (``live_gradings``)."""
        return announced() if current_priority() is SandboxPriority.NORMAL else contextlib.nullcontext()

    def _first_slice(
        self, source: str, suite: Suite, seed: int | None, slice_s: float | None
    ) -> GradeResult | Unfinished:
        prepared = self._prepare(source, suite, seed)
        if isinstance(prepared, GradeResult):
            return prepared
        process = self._start_sandbox(prepared)
        if isinstance(process, GradeResult):
            return process
        process.send(prepared.job, wall_s=prepared.limits.wall_s, report_bytes=prepared.report_bytes)
        if process.advance(slice_s):
            return self._conclude(prepared, process)
        return self._set_aside(prepared, process)

    def _prepare(self, source: str, suite: Suite, seed: int | None) -> _Prepared | GradeResult:
        """Check the arguments, draw the inputs and expected values, and write the job for the harness."""
        if not isinstance(suite, Suite):
            raise TypeError(f"suite must be a qkv.grading.Suite, not the {type(suite).__name__} {suite!r}.")
        if not isinstance(source, str):
            raise TypeError(f"source must be a str, not {type(source).__name__}.")
        if seed is None:
            seed = secrets.randbelow(2**31)
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed must be a whole number of zero or more, but it is {seed!r}.")
        marks = {"begin": time.monotonic()}
        thread_started = time.thread_time()
        prepared = _Prepared(seed, time.perf_counter(), self.sandbox, marks)
        size = len(source.encode("utf-8", errors="replace"))
        if size > MAX_SOURCE_BYTES:
            return prepared.finish(
                "error",
                f"Your file is {size // 1024} KiB long; the grader accepts up to "
                f"{MAX_SOURCE_BYTES // 1024} KiB.",
                [],
            )
        if suite.explain and suite.reference:
            # The mutants of the reference are built while the sandbox runs (once per grader process).
            prepare_in_background(suite.reference, suite.functions)
        cases = suite.cases(seed)
        # The calls run in an order shuffled by the seed, so code that counts its calls cannot know which
        # test it is in; the results are reported in the suite's own order. A test that repeats another
        # runs right after it: state a function keeps from one call to the next is then the last call's.
        prepared.order = repeats_follow(
            run_order(len(cases), seed), [row.name for row in suite.table], [row.again for row in suite.table]
        )
        prepared.cases = cases
        _write_job(prepared, source, suite)
        if suite.time_limit_s is not None and suite.time_limit_s < self.limits.wall_s:
            prepared.limits = dataclasses.replace(
                self.limits, wall_s=suite.time_limit_s
            )  # the exercise's own
        else:
            prepared.limits = self.limits
        marks["prepared"] = time.monotonic()
        marks["thread_prepare"] = time.thread_time() - thread_started
        return prepared

    def _start_sandbox(self, prepared: _Prepared) -> SandboxProcess | GradeResult:
        """A warm spare, or a sandbox started now; an error result when none can start."""
        thread_started = time.thread_time()
        try:
            process = self._pool.take(self._spares_to_keep()) if self._pool else None
            if process is None:
                process = self._new_process()
                process.wait_ready()
        except SandboxStartError as error:
            return prepared.finish(
                "error", f"The grader could not start its sandbox, so your code was not run ({error})", []
            )
        process.run_at(current_priority())  # a spare was started before anyone knew whose it would be
        prepared.marks["thread_start"] = time.thread_time() - thread_started
        prepared.thread_mark = time.thread_time()
        return process

    def _spares_to_keep(self) -> int:
        """Warm spares a program about to start must leave to others: 1 for a program in the background
        while programs at normal priority have been arriving (within ``NORMAL_RECENT_S``), else 0.

        Such a program then waits for its own sandbox's start instead of making a single learner's wait
        for one; where every program is in the background (a class behind one address), all spares serve.
        """
        now = time.monotonic()
        if current_priority() is SandboxPriority.NORMAL:
            self._last_normal = now
            return 0
        return 1 if now - self._last_normal < NORMAL_RECENT_S else 0

    def _conclude(self, prepared: _Prepared, process: SandboxProcess) -> GradeResult:
        """End the sandbox and judge its report (on the judging line, in its client's turn, if any)."""
        raw = process.finish(parse=False)
        seen: dict[str, Outcome] = {}

        def judged() -> tuple[str, str | None, list[TestResult]]:
            raw.parse()
            if any(event.get("outcome") == "oversized" for event in raw.events):
                raw.report_over = prepared.report_bytes  # the harness found a value too large to write
            if raw.report_over is not None:
                raw.report_over = prepared.tests_report_bytes
            probed = _take_probes(raw, len(prepared.running), len(prepared.probes))
            status, message, ran = interpret(
                raw, prepared.running, prepared.limits, seen, prepared.job.get("source")
            )
            # Back to the suite's order, each result saying when it ran.
            order = prepared.order
            tests = [
                dataclasses.replace(ran[order.index(index)], ran=order.index(index))
                for index in range(len(ran))
            ]
            if status == "fail":
                # Every test of a function looked at together: a relation or a mutant of the reference
                # names what no hint did, and each function's first failure shown is the one that says
                # most. On the judging line too, so its cost is charged to the client that caused it.
                started = time.perf_counter()
                tests = explain(tests, prepared.cases, seen, prepared.job.get("source"))
                prepared.marks["explain_s"] = time.perf_counter() - started
                started = time.perf_counter()
                prepared.signatures = _sign(prepared, tests, probed)
                prepared.marks["sign_s"] = time.perf_counter() - started
            return status, message, tests

        if self.judges is None:
            status, message, tests = judged()
        else:
            status, message, tests = self.judges.judge(current_client(), judged)
        prepared.marks.update(raw.timing)
        prepared.marks.update(timing_events(raw.events))  # advisory: never read by the verdict
        prepared.marks["end"] = time.monotonic()
        prepared.marks["thread_rest"] = prepared.thread_cpu + time.thread_time() - prepared.thread_mark
        line = error_line(raw) if status == "error" else None
        return prepared.finish(status, message, tests, _output(raw), line)

    def _set_aside(self, prepared: _Prepared, process: SandboxProcess) -> Unfinished:
        """Pause a program that outgrew its slice, or stop it to run again later."""
        with self._paused_lock:
            room = len(self._paused) < self.max_paused
            if room:
                self._paused.add(process)
        if room and process.can_pause and process.pause():
            prepared.paused_at = time.perf_counter()
            prepared.thread_cpu += time.thread_time() - prepared.thread_mark
            return Unfinished(self, prepared, process)
        if room:
            self._release_paused(process)
        process.finish()  # stopped: it runs again from the start, in a fresh sandbox
        prepared.thread_cpu += time.thread_time() - prepared.thread_mark
        return Unfinished(self, prepared, None)

    def _resume_unfinished(
        self, prepared: _Prepared, process: SandboxProcess | None, slice_s: float | None
    ) -> GradeResult | Unfinished:
        """Run a set-aside program on: thaw and continue it for ``slice_s`` more (None: to its end), or,
        if it was stopped, start it again from scratch and run it to its end."""
        with self._announced():
            return self._resume(prepared, process, slice_s)

    def _resume(
        self, prepared: _Prepared, process: SandboxProcess | None, slice_s: float | None
    ) -> GradeResult | Unfinished:
        if prepared.paused_at is not None:
            prepared.paused_s += time.perf_counter() - prepared.paused_at
            prepared.paused_at = None
        prepared.thread_mark = time.thread_time()
        if process is None:
            started = self._start_sandbox(prepared)
            if isinstance(started, GradeResult):
                return started
            started.send(prepared.job, wall_s=prepared.limits.wall_s, report_bytes=prepared.report_bytes)
            process, slice_s = started, None  # run again from the start: a slice would only repeat itself
        else:
            self._release_paused(process)
            process.run_at(current_priority())
            process.unpause()
        if process.advance(slice_s):
            return self._conclude(prepared, process)
        return self._set_aside(prepared, process)

    def _release_paused(self, process: SandboxProcess) -> None:
        with self._paused_lock:
            self._paused.discard(process)

    def close(self) -> None:
        """Kill the sandboxes of set-aside programs nobody finished; stop the warm spares and the zygote."""
        with self._paused_lock:
            paused, self._paused = list(self._paused), set()
        for process in paused:
            process.discard()
        if self.judges is not None:
            self.judges.close()
        self._finalizer()

    def __enter__(self) -> Grader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _shut_down(pool: SparePool | None, zygotes: list[Zygote]) -> None:
    if pool is not None:
        pool.close()
    for zygote in zygotes:
        zygote.close()
    zygotes.clear()


def _write_job(prepared: _Prepared, source: str, suite: Suite) -> None:
    """The harness's job: the tests in their shuffled order, then the behaviour signature's probes."""
    cases = prepared.cases
    prepared.running = [cases[index] for index in prepared.order]
    # The probes of the behaviour signature run after every test, so they never change the verdict.
    prepared.probes = probe_cases(suite)
    prepared.fixed = fixed_names(suite)
    calls = [*prepared.running, *prepared.probes]
    prepared.job = {
        "source": source,
        "calls": [
            {
                "id": index,
                "function": case.function,
                "args": [_encode_arg(arg) for arg in case.args],
                "keywords": list(case.keywords),
                "inputs": case.check_inputs,
                "warnings": case.refuse_warnings,
            }
            for index, case in enumerate(calls)
        ],
    }
    shares = [share_of_test(case.expected, case.args) for case in calls]  # the tests' first, then the probes'
    prepared.report_bytes = bound_of_shares(shares)
    # What the learner is told the tests can need: the probes' share is the grader's, not theirs.
    prepared.tests_report_bytes = bound_of_shares(shares[: len(prepared.running)])
    prepared.job["report_bytes"] = prepared.report_bytes  # the harness writes no value past it


def _take_probes(raw: RawRun, tests: int, probes: int) -> dict[int, dict[str, Any]]:
    """Take the probes' results out of the report, so that the verdict reads the tests' alone.

    Returns every result event by its call's id (the tests' first, then the probes'). A program stopped
    during a probe (every test had its result) is judged as one that ended: the probes are no part of
    its grade.
    """
    kept: list[dict[str, Any]] = []
    probed: dict[int, dict[str, Any]] = {}
    results = 0
    for event in raw.events:
        index = event.get("id") if event.get("event") == "result" else None
        if isinstance(index, int) and not isinstance(index, bool):
            probed.setdefault(index, event)
        if isinstance(index, int) and tests <= index < tests + probes:
            continue  # a probe's result (any other id is for the verdict to refuse)
        results += event.get("event") == "result"
        kept.append(event)
    if probes and results == tests and not any(event.get("event") == "done" for event in kept):
        kept.append({"event": "done"})  # stopped inside a probe, after every test
    raw.events = kept
    return probed


def _sign(prepared: _Prepared, tests: list[TestResult], events: dict[int, dict[str, Any]]) -> dict[str, str]:
    """The behaviour signature of each failing function (:mod:`qkv.grading.behaviour`): its outcomes on
    the fixed tests and on the probes, ``events`` holding every call's result by its id."""
    failing = sorted({test.function for test in tests if test.status in ("fail", "error", "timeout")})
    if not failing:
        return {}
    calls: list[tuple[Case, dict[str, Any] | None]] = [
        (case, events.get(index))
        for index, case in enumerate(prepared.running)
        if case.name in prepared.fixed
    ]
    first = len(prepared.running)
    calls += [(case, events.get(first + index)) for index, case in enumerate(prepared.probes)]
    return signatures(failing, calls)


def run_order(count: int, seed: int) -> list[int]:
    """The order the tests of one run are called in: a permutation drawn from the run's seed.

    Examples
    --------
    >>> run_order(5, 1) == run_order(5, 1), sorted(run_order(5, 1))
    (True, [0, 1, 2, 3, 4])
    >>> run_order(10, 1) != run_order(10, 2)
    True
    """
    return [int(index) for index in np.random.default_rng([seed, 0x0D3E]).permutation(count)]


def repeats_follow(order: list[int], names: list[str], again: list[str | None]) -> list[int]:
    """``order`` with each test that repeats another (``again``: the name of the test it repeats, None
    for the others) moved to run right after it, the repeats of one test in the suite's order.

    Examples
    --------
    >>> repeats_follow([3, 0, 2, 1], ["a", "a again", "b", "a fresh"], [None, "a", None, "a"])
    [0, 1, 3, 2]
    """
    index_of = {name: index for index, name in enumerate(names)}
    followers: dict[int, list[int]] = {}
    for index, of in enumerate(again):
        if of is not None and of in index_of:
            followers.setdefault(index_of[of], []).append(index)
    following = {index for indices in followers.values() for index in indices}
    placed: list[int] = []

    def place(index: int) -> None:
        placed.append(index)
        for follower in followers.get(index, []):
            place(follower)

    for index in order:
        if index not in following:
            place(index)
    return placed


def _encode_arg(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": dtype_name(value.dtype)}
    if isinstance(value, dict):  # a dict of arguments (a layer's parameters by name), arrays inside
        return {"dict": {str(key): _encode_arg(item) for key, item in value.items()}}
    if isinstance(value, list | tuple) and _holds_array(value):  # a list of arrays (the heads, say)
        return [_encode_arg(item) for item in value]
    return value


def _holds_array(value: Any) -> bool:
    if isinstance(value, np.ndarray | dict):
        return True
    return isinstance(value, list | tuple) and any(_holds_array(item) for item in value)


def _output(raw: RawRun) -> str:
    if raw.stdout and raw.stderr:
        return raw.stdout.rstrip("\n") + "\n" + raw.stderr
    return raw.stdout or raw.stderr
