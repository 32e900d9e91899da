"""A class of simulated learners doing the whole L4.1 lesson against running ``qkv serve`` instances.

Each learner is a separate browser (its own cookie): it opens the lesson page for the CSRF token and
its learner cookie, answers Part 1 (one wrong answer first, as people do), takes the quiz, moves the
sliders and the explorer once, and sends three programs to the grader: one that loops forever, one
that grabs memory without end, and a correct solution. A 503 from a full grading queue is retried
after the server's ``Retry-After``. Afterwards every learner's progress is read back and compared with
every write the server acknowledged; a write that is missing is a *lost write*.

Requests go round-robin over every ``--url`` given, so two servers on one database look like one
class behind a load balancer. Only loopback addresses are accepted, and the run is bounded: at most
``--max-seconds`` of wall time and ``--max-retries`` retries per request.

Usage::

    .venv/bin/python benchmarks/load.py --url http://127.0.0.1:8000 --learners 50
    .venv/bin/python benchmarks/load.py --url http://127.0.0.1:8001 --url http://127.0.0.1:8002 --strict

It prints p50/p95/p99 latency per endpoint, gradings per second, errors and lost writes; with
``--strict`` it exits 1 when a target is missed (0 errors other than 503s, 0 lost writes, grading p99
at most ``--grading-p99-target`` seconds), and with ``--json PATH`` it also writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import itertools
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

import httpx

# How long a learner's client keeps an idle connection for reuse: shorter than the server's keep-alive
# (uvicorn closes an idle connection after 5 s). With equal limits a request sent on a connection just as
# the server closed it failed with ReadError (seen once in CI: a learner's connection to one server sat
# idle through a 5.7 s grading on the other). That race remains possible on a loaded machine, so a request
# that fails on a reused connection before any answer arrives is sent again once, on a new connection, as
# browsers do (``send_like_a_browser``); the report counts these retries.
KEEPALIVE_SECONDS = 2.0

# The three programs every learner sends, in this order (so the correct one is the last saved).
LOOP_FOREVER = "def project_qkv(X, Wq, Wk, Wv):\n    while True:\n        pass\n"
HOG_MEMORY = (
    "chunks = []\n"
    "while True:\n"
    "    chunks.append(bytearray(64 * 1024 * 1024))\n"
    "    for i in range(0, len(chunks[-1]), 4096):\n"
    "        chunks[-1][i] = 1\n"
)
CORRECT_SOLUTION = """import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    X, Wq, Wk, Wv = (np.asarray(a, dtype=float) for a in (X, Wq, Wk, Wv))
    d_model = X.shape[1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.ndim != 2 or W.shape[0] != d_model:
            raise ValueError(f"{name} has shape {W.shape} but needs {d_model} rows, one per input feature.")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError(f"Wq has {Wq.shape[1]} columns but Wk has {Wk.shape[1]}; they must match.")
    return X @ Wq, X @ Wk, X @ Wv


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
"""
PROGRAMS = (("loop", LOOP_FOREVER), ("memory hog", HOG_MEMORY), ("correct", CORRECT_SOLUTION))

# The seed page's own numbers, used when the page has no slider configuration to read them from.
SEED_NUMBERS: dict[str, Any] = {
    "x": [1, 2],
    "Wq": [[1, 0], [1, 1]],
    "Wk": [[0, 1], [1, 0]],
    "Wv": [[2, 0], [0, 2]],
}


class LoadError(Exception):
    """The run cannot start or a learner cannot continue; the message is a sentence."""


@dataclass
class LoadConfig:
    """What to run: against which servers, how many learners, and the bounds of the run."""

    base_urls: list[str]
    learners: int = 50
    lesson_id: str = "L4.1"
    max_seconds: float = 600.0
    request_timeout: float = 120.0
    max_retries: int = 200
    think_seconds: float = 1.0
    ramp_seconds: float = 5.0
    grading_p99_target: float = 3.0
    seed: int = 0


@dataclass
class LoadReport:
    """Everything measured in one run."""

    learners: int
    base_urls: list[str]
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    rejected_503: int = 0
    gradings: int = 0
    grading_window: tuple[float, float] | None = None
    grading_statuses: dict[str, dict[str, int]] = field(default_factory=dict)
    wrong_feedback: list[str] = field(default_factory=list)
    lost_writes: list[str] = field(default_factory=list)
    acknowledged_writes: int = 0
    requests_per_target: dict[str, int] = field(default_factory=dict)
    connection_retries: int = 0  # requests sent again after a reused connection closed under them
    finished_learners: int = 0
    elapsed_seconds: float = 0.0

    def record(self, endpoint: str, seconds: float) -> None:
        """Add one request's latency under its endpoint label."""
        self.latencies.setdefault(endpoint, []).append(seconds)

    def note_grading(self, started: float, finished: float) -> None:
        """Widen the window in which gradings happened, for gradings per second."""
        if self.grading_window is None:
            self.grading_window = (started, finished)
        else:
            first, last = self.grading_window
            self.grading_window = (min(first, started), max(last, finished))

    @property
    def gradings_per_second(self) -> float:
        """Accepted gradings divided by the time from the first submission to the last result."""
        if not self.grading_window or self.gradings == 0:
            return 0.0
        first, last = self.grading_window
        return self.gradings / max(last - first, 1e-9)

    def percentiles(self, endpoint: str) -> dict[str, float]:
        """p50/p95/p99/max in seconds of one endpoint (nearest-rank), or {} without samples."""
        samples = sorted(self.latencies.get(endpoint, []))
        if not samples:
            return {}

        def rank(p: float) -> float:
            index = max(0, min(len(samples) - 1, int(-(-p * len(samples) // 100)) - 1))
            return samples[index]

        return {"n": len(samples), "p50": rank(50), "p95": rank(95), "p99": rank(99), "max": samples[-1]}

    def misses(self, grading_p99_target: float) -> list[str]:
        """Each target the run missed, as a sentence; empty when all were met."""
        missed = []
        if self.errors:
            missed.append(f"{len(self.errors)} requests failed with something other than a 503.")
        if self.lost_writes:
            missed.append(f"{len(self.lost_writes)} acknowledged writes were missing when read back.")
        if self.finished_learners < self.learners:
            missed.append(f"Only {self.finished_learners} of {self.learners} learners finished the lesson.")
        grading = self.grading_p99()
        if grading is None:
            missed.append("No grading was accepted, so the grading p99 is unknown.")
        elif grading > grading_p99_target:
            missed.append(
                f"Grading p99 was {grading:.2f} s, above the target of {grading_p99_target:g} s "
                "(programs that end before the grader's time limit)."
            )
        return missed

    def grading_p99(self) -> float | None:
        """p99 of accepted gradings of the programs that end on their own or by the memory limit.

        The endless loop is left out: the grader stops it at its time limit, so its latency is that
        limit by design (it is reported on its own line).
        """
        samples = sorted(
            self.latencies.get("POST code: correct", []) + self.latencies.get("POST code: memory hog", [])
        )
        if not samples:
            return None
        return samples[max(0, -(-99 * len(samples) // 100) - 1)]

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain JSON types."""
        return {
            "learners": self.learners,
            "base_urls": self.base_urls,
            "finished_learners": self.finished_learners,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
            "endpoints": {name: self.percentiles(name) for name in sorted(self.latencies)},
            "gradings": self.gradings,
            "gradings_per_second": round(self.gradings_per_second, 3),
            "grading_p99_seconds": self.grading_p99(),
            "grading_statuses": self.grading_statuses,
            "rejected_503": self.rejected_503,
            "errors": self.errors,
            "wrong_feedback": self.wrong_feedback,
            "acknowledged_writes": self.acknowledged_writes,
            "requests_per_target": self.requests_per_target,
            "connection_retries": self.connection_retries,
            "lost_writes": self.lost_writes,
        }

    def format(self) -> str:
        """A short human-readable summary."""
        lines = [
            f"{self.finished_learners}/{self.learners} learners finished in {self.elapsed_seconds:.1f} s "
            f"against {', '.join(self.base_urls)}",
            f"{'endpoint':<24}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'max ms':>10}",
        ]
        for name in sorted(self.latencies):
            p = self.percentiles(name)
            lines.append(
                f"{name:<24}{p['n']:>6}{p['p50'] * 1e3:>10.1f}{p['p95'] * 1e3:>10.1f}"
                f"{p['p99'] * 1e3:>10.1f}{p['max'] * 1e3:>10.1f}"
            )
        lines.append(
            f"gradings: {self.gradings} accepted, {self.gradings_per_second:.2f}/s; 503s: {self.rejected_503}"
        )
        p99 = self.grading_p99()
        if p99 is not None:
            lines.append(f"grading p99 (correct and memory-hog programs): {p99 * 1e3:.1f} ms")
        for program, statuses in sorted(self.grading_statuses.items()):
            counts = ", ".join(f"{status} {n}" for status, n in sorted(statuses.items()))
            lines.append(f"  {program}: {counts}")
        lines.append(f"errors (other than 503): {len(self.errors)}")
        lines.extend(f"  {error}" for error in self.errors[:10])
        if self.wrong_feedback:
            lines.append(f"answers the lesson did not accept as intended: {len(self.wrong_feedback)}")
            lines.extend(f"  {note}" for note in self.wrong_feedback[:5])
        spread = ", ".join(f"{url} {n}" for url, n in self.requests_per_target.items())
        lines.append(f"requests per server: {spread}")
        lines.append(
            f"requests sent again on a new connection (a reused one closed before answering): "
            f"{self.connection_retries}"
        )
        lines.append(f"writes acknowledged: {self.acknowledged_writes}; lost: {len(self.lost_writes)}")
        lines.extend(f"  {lost}" for lost in self.lost_writes[:10])
        return "\n".join(lines)


def check_loopback(url: str) -> str:
    """Return ``url`` without its trailing slash if it is on a loopback address; raise LoadError if not."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise LoadError(f"The target {url!r} is not an http:// or https:// URL with a host.")
    host = parts.hostname
    loopback = host == "localhost"
    if not loopback:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
    if not loopback:
        raise LoadError(
            f"The target {url!r} is not on a loopback address; the load script only targets this machine."
        )
    return url.rstrip("/")


class _PageParser(HTMLParser):
    """Collects what a learner's browser uses from the lesson page."""

    def __init__(self) -> None:
        super().__init__()
        self.csrf_token: str | None = None
        self.exercises: list[tuple[str, str]] = []  # (exercise id, kind) in page order
        self.slider_config: dict[str, Any] | None = None
        self.lesson_links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {name: value or "" for name, value in attrs}
        if tag == "meta" and a.get("name") == "csrf-token":
            self.csrf_token = a.get("content")
        if tag == "a" and "href" in a:
            self.lesson_links.append(a["href"])
        if "data-exercise-id" in a:
            kind = "code" if "code-exercise" in a.get("class", "").split() else a.get("data-kind", "")
            self.exercises.append((a["data-exercise-id"], kind))
        if a.get("data-widget") == "projection-sliders" and "data-config" in a:
            try:
                self.slider_config = json.loads(a["data-config"])
            except ValueError:
                self.slider_config = None


def _right_letters(lesson_id: str) -> dict[str, str]:
    """The right letter of each letter and choice exercise of the lesson, read from the lesson itself."""
    from qkv.lessons import LessonError, load_catalog

    try:
        lesson = load_catalog().lesson(lesson_id)
    except LessonError:
        return {}
    return {ex.id: ex.answer for ex in lesson.exercises.values() if ex.kind in ("letter", "choice")}


def _vector_text(x: Sequence[float], matrix: Sequence[Sequence[float]]) -> str:
    """x @ matrix written the way a learner types it, e.g. "[3, 2]"."""
    result = [sum(x[i] * matrix[i][j] for i in range(len(x))) for j in range(len(matrix[0]))]
    return "[" + ", ".join(f"{value:g}" for value in result) + "]"


async def send_like_a_browser(
    client: httpx.AsyncClient, method: str, url: str, **kwargs: Any
) -> tuple[httpx.Response, bool]:
    """Send a request; if it fails on a reused connection before any answer, send it once more on a new one.

    A kept-alive connection can be closed by the server just as the client sends on it: the request fails
    with nothing answered (ReadError, WriteError, or "disconnected without sending a response"). Browsers
    send such a request again on a new connection, and so does this. A failure on a new connection, or
    after the answer began, is raised as it is. Returns the response and whether it took the retry.
    """
    events: list[str] = []

    async def trace(name: str, _info: dict[str, Any]) -> None:
        events.append(name)

    try:
        return await client.request(method, url, extensions={"trace": trace}, **kwargs), False
    except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as failure:
        reused = not any(name.startswith("connection.connect_tcp") for name in events)
        answered = any(name.startswith("http11.receive_response_headers.complete") for name in events)
        unanswered = not isinstance(
            failure, httpx.RemoteProtocolError
        ) or "without sending a response" in str(failure)
        if not (reused and unanswered) or answered:
            raise
    fresh = httpx.AsyncClient(
        timeout=client.timeout,
        follow_redirects=client.follow_redirects,
        limits=httpx.Limits(max_keepalive_connections=0),  # a new connection, closed afterwards
    )
    async with fresh:
        return await fresh.request(method, url, **kwargs), True


def _retry_after_seconds(value: str | None) -> float:
    """Seconds to wait from a Retry-After header (delta seconds or an HTTP date); 1 s if absent or odd."""
    if not value:
        return 1.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return 1.0


def _busy_answer_problem(response: httpx.Response) -> str | None:
    """What is wrong with a 503 answer, if anything: it must say when to retry, and why, in a sentence."""
    if not response.headers.get("retry-after"):
        return "a 503 came without a Retry-After header."
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    if not isinstance(detail, str) or not detail.endswith("."):
        return f"a 503 came without a sentence in 'detail': {response.text[:200]!r}."
    return None


class Learner:
    """One simulated browser: its own cookies and CSRF token, requests spread over the servers."""

    def __init__(self, number: int, config: LoadConfig, report: LoadReport, deadline: float) -> None:
        self.number = number
        self.config = config
        self.report = report
        self.deadline = deadline
        self.rng = random.Random(config.seed * 100_003 + number)
        self.cookies: dict[str, str] = {}
        self.csrf_token = ""
        # What the server acknowledged, to compare with the progress read back at the end.
        self.acked_answers: dict[str, list[tuple[str, bool]]] = {}  # ex id -> [(answer, counted_as_attempt)]
        self.acked_correct: set[str] = set()
        self.acked_code: dict[str, str] = {}
        self.client = httpx.AsyncClient(
            timeout=config.request_timeout,
            follow_redirects=True,
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_SECONDS),
        )

    def _base(self) -> str:
        urls = self.config.base_urls
        return urls[next(_round_robin) % len(urls)]

    async def request(
        self, endpoint: str, method: str, path: str, body: Any = None, *, retry_503: bool = False
    ) -> httpx.Response:
        """Send one request (retrying 503s if asked), record its latency, and raise LoadError on failure."""
        headers = {"Accept": "application/json"}
        if method != "GET":
            headers["X-CSRF-Token"] = self.csrf_token
        for _attempt in range(self.config.max_retries + 1):
            if self.cookies:
                headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            base = self._base()
            url = base + path
            self.report.requests_per_target[base] = self.report.requests_per_target.get(base, 0) + 1
            started = time.monotonic()
            try:
                response, retried = await send_like_a_browser(
                    self.client, method, url, json=body, headers=headers
                )
                self.report.connection_retries += retried
            except httpx.HTTPError as failure:
                raise LoadError(f"{method} {url} failed: {type(failure).__name__}: {failure}") from None
            finally:
                self.client.cookies.clear()  # cookies are kept by hand so every server sees the same ones
            elapsed = time.monotonic() - started
            for header in response.headers.get_list("set-cookie"):
                jar: SimpleCookie = SimpleCookie()
                jar.load(header)
                for name, morsel in jar.items():
                    self.cookies[name] = morsel.value
            if response.status_code == 503 and retry_503:
                self.report.rejected_503 += 1
                self.report.record(f"{endpoint} (503)", elapsed)
                problem = _busy_answer_problem(response)
                if problem:
                    self.report.errors.append(f"learner {self.number}: {method} {path}: {problem}")
                wait = _retry_after_seconds(response.headers.get("retry-after"))
                wait *= 1 + self.rng.random() * 0.5  # spread the retries out
                if time.monotonic() + wait > self.deadline:
                    raise LoadError(f"{method} {path} was still refused with 503 when the run's time was up.")
                await asyncio.sleep(wait)
                continue
            if not 200 <= response.status_code < 300:
                raise LoadError(f"{method} {path} answered {response.status_code}: {response.text[:200]!r}")
            self.report.record(endpoint, elapsed)
            return response
        raise LoadError(f"{method} {path} was refused with 503 {self.config.max_retries + 1} times in a row.")

    async def think(self) -> None:
        """Pause like a person reading and typing (uniform between 0 and twice the mean)."""
        if self.config.think_seconds > 0:
            await asyncio.sleep(self.rng.uniform(0, 2 * self.config.think_seconds))

    async def do_lesson(self, lesson_path: str) -> None:
        """The whole lesson, start to finish."""
        api = f"/api/lessons/{self.config.lesson_id}"
        page = await self.request("GET page", "GET", lesson_path)
        parser = _PageParser()
        parser.feed(page.text)
        if not parser.csrf_token:
            raise LoadError(f"The lesson page {lesson_path} has no <meta name='csrf-token'>.")
        self.csrf_token = parser.csrf_token
        exercises = parser.exercises
        if not exercises:
            progress = (await self.request("GET progress", "GET", f"{api}/progress")).json()
            exercises = [(ex, info["kind"]) for ex, info in progress["exercises"].items()]
            exercises += [(ex, "code") for ex in progress["code"]]
        numbers = parser.slider_config or SEED_NUMBERS
        x = numbers.get("x", SEED_NUMBERS["x"])
        expected = [_vector_text(x, numbers.get(name, SEED_NUMBERS[name])) for name in ("Wq", "Wk", "Wv")]

        await self.think()
        await self.request(
            # The widget's own route: the lesson's numbers are withheld there, not refused.
            "POST project",
            "POST",
            f"{api}/project",
            {k: numbers.get(k, SEED_NUMBERS[k]) for k in SEED_NUMBERS},
        )
        numeric = [ex for ex, kind in exercises if kind == "numeric"]
        for ex, right in zip(numeric, expected, strict=False):
            await self.answer(api, ex, "[0, 0]" if right != "[0, 0]" else "[1, 1]", expect_correct=False)
            await self.answer(api, ex, right, expect_correct=True)
        letters = _right_letters(self.config.lesson_id)
        for ex, kind in exercises:
            if kind == "letter":
                await self.answer(api, ex, letters.get(ex, "V"), expect_correct=True)
        await self.request(
            "POST attention",
            "POST",
            "/api/attention",
            {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]], "causal": True, "causal_index": 0},
        )
        for ex, kind in exercises:
            if kind == "code":
                for program, source in PROGRAMS:
                    await self.think()
                    await self.submit_code(api, ex, program, source)
        for ex, kind in exercises:
            if kind == "choice":
                await self.answer(api, ex, letters.get(ex, "A"), expect_correct=True)

    async def answer(self, api: str, exercise_id: str, answer: str, *, expect_correct: bool) -> None:
        body = {"exercise_id": exercise_id, "answer": answer}
        feedback = (await self.request("POST answers", "POST", f"{api}/answers", body)).json()["feedback"]
        self.report.acknowledged_writes += 1
        self.acked_answers.setdefault(exercise_id, []).append((answer, bool(feedback["counted_as_attempt"])))
        if feedback["correct"]:
            self.acked_correct.add(exercise_id)
        if bool(feedback["correct"]) != expect_correct:
            self.report.wrong_feedback.append(
                f"learner {self.number}: {exercise_id} = {answer!r} came back correct={feedback['correct']}: "
                f"{feedback['message']}"
            )

    async def submit_code(self, api: str, exercise_id: str, program: str, source: str) -> None:
        started = time.monotonic()
        body = {"exercise_id": exercise_id, "code": source}
        response = await self.request("POST code", "POST", f"{api}/code", body, retry_503=True)
        finished = time.monotonic()
        self.report.record(f"POST code: {program}", self.report.latencies["POST code"][-1])
        self.report.record("code incl. retries", finished - started)
        self.report.gradings += 1
        self.report.acknowledged_writes += 1
        self.report.note_grading(started, finished)
        status = str(response.json()["result"].get("status"))
        counts = self.report.grading_statuses.setdefault(program, {})
        counts[status] = counts.get(status, 0) + 1
        self.acked_code[exercise_id] = source

    async def verify(self) -> None:
        """Read this learner's progress back and count every acknowledged write that is missing."""
        progress = (
            await self.request("GET progress", "GET", f"/api/lessons/{self.config.lesson_id}/progress")
        ).json()
        who = f"learner {self.number}"
        for ex, acked in self.acked_answers.items():
            saved = progress.get("exercises", {}).get(ex)
            if saved is None:
                self.report.lost_writes.extend(
                    f"{who}: answer {a!r} to {ex} (exercise missing)" for a, _ in acked
                )
                continue
            counted = sum(1 for _, counts in acked if counts)
            if saved.get("attempts", 0) < counted:
                self.report.lost_writes.append(
                    f"{who}: {ex} shows {saved.get('attempts')} attempts, {counted} were acknowledged"
                )
            if saved.get("last_answer") != acked[-1][0]:
                self.report.lost_writes.append(
                    f"{who}: {ex} last answer is {saved.get('last_answer')!r}, "
                    f"{acked[-1][0]!r} was acknowledged"
                )
            if ex in self.acked_correct and saved.get("status") != "correct":
                self.report.lost_writes.append(
                    f"{who}: {ex} was answered correctly but shows {saved.get('status')!r}"
                )
        for ex, source in self.acked_code.items():
            saved_code = progress.get("code", {}).get(ex) or {}
            if saved_code.get("source") != source or saved_code.get("result") is None:
                self.report.lost_writes.append(f"{who}: the last acknowledged program for {ex} is not saved")


_round_robin = itertools.count()


async def discover_lesson_path(config: LoadConfig) -> str:
    """Find the lesson page's path from the index page's links (``/lessons/<id>`` if none matches)."""
    async with httpx.AsyncClient(
        timeout=config.request_timeout, limits=httpx.Limits(keepalive_expiry=KEEPALIVE_SECONDS)
    ) as client:
        try:
            index = await client.get(config.base_urls[0] + "/")
        except httpx.HTTPError as failure:
            raise LoadError(f"The server at {config.base_urls[0]} could not be reached: {failure}.") from None
    parser = _PageParser()
    parser.feed(index.text)
    for href in parser.lesson_links:
        if config.lesson_id in href and href.startswith("/") and not href.startswith("/api/"):
            return href.split("#")[0]
    return f"/lessons/{config.lesson_id}"


async def run_load(config: LoadConfig) -> LoadReport:
    """Run every learner through the lesson, then read back and check everyone's progress."""
    config.base_urls = [check_loopback(url) for url in config.base_urls]
    if not config.base_urls:
        raise LoadError("No target URL was given; pass at least one --url.")
    if config.learners < 1:
        raise LoadError(f"The number of learners must be at least 1, not {config.learners}.")
    report = LoadReport(learners=config.learners, base_urls=list(config.base_urls))
    started = time.monotonic()
    deadline = started + config.max_seconds
    lesson_path = await discover_lesson_path(config)
    learners = [Learner(n, config, report, deadline) for n in range(config.learners)]

    async def one(learner: Learner) -> None:
        await asyncio.sleep(config.ramp_seconds * learner.number / max(1, config.learners))
        try:
            await asyncio.wait_for(
                learner.do_lesson(lesson_path), timeout=max(0.0, deadline - time.monotonic())
            )
            report.finished_learners += 1
        except LoadError as failure:
            report.errors.append(f"learner {learner.number}: {failure}")
        except TimeoutError:
            report.errors.append(f"learner {learner.number}: did not finish within --max-seconds.")

    try:
        await asyncio.gather(*(one(learner) for learner in learners))
        for learner in learners:
            try:
                await learner.verify()
            except LoadError as failure:
                report.errors.append(f"learner {learner.number}: reading progress back failed: {failure}")
    finally:
        for learner in learners:
            await learner.client.aclose()
    report.elapsed_seconds = time.monotonic() - started
    return report


def parse_args(argv: Sequence[str] | None) -> tuple[LoadConfig, argparse.Namespace]:
    parser = argparse.ArgumentParser(description="Simulate a class doing the L4.1 lesson against qkv serve.")
    parser.add_argument(
        "--url", action="append", dest="urls", help="a server's base URL; repeat for round-robin"
    )
    parser.add_argument("--learners", type=int, default=50, help="simulated learners (default 50)")
    parser.add_argument("--lesson", default="L4.1", help="lesson id (default L4.1)")
    parser.add_argument(
        "--max-seconds", type=float, default=600.0, help="wall-time bound of the run (default 600)"
    )
    parser.add_argument(
        "--request-timeout", type=float, default=120.0, help="seconds per request (default 120)"
    )
    parser.add_argument("--max-retries", type=int, default=200, help="503 retries per request (default 200)")
    parser.add_argument("--think", type=float, default=1.0, help="mean pause between a learner's steps, s")
    parser.add_argument(
        "--ramp", type=float, default=5.0, help="seconds over which learners arrive (default 5)"
    )
    parser.add_argument("--grading-p99-target", type=float, default=3.0, help="seconds (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the learners' random pauses")
    parser.add_argument("--json", dest="json_path", help="also write the figures to this JSON file")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    config = LoadConfig(
        base_urls=args.urls or ["http://127.0.0.1:8000"],
        learners=args.learners,
        lesson_id=args.lesson,
        max_seconds=args.max_seconds,
        request_timeout=args.request_timeout,
        max_retries=args.max_retries,
        think_seconds=args.think,
        ramp_seconds=args.ramp,
        grading_p99_target=args.grading_p99_target,
        seed=args.seed,
    )
    return config, args


def main(argv: Sequence[str] | None = None) -> int:
    config, args = parse_args(argv)
    try:
        report = asyncio.run(run_load(config))
    except LoadError as failure:
        print(f"load: {failure}", file=sys.stderr)
        return 2
    print(report.format())
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as out:
            json.dump(report.to_dict(), out, indent=2)
    misses = report.misses(config.grading_p99_target)
    for miss in misses:
        print(f"target missed: {miss}")
    if not misses:
        print("all targets met")
    return 1 if args.strict and misses else 0


if __name__ == "__main__":
    sys.exit(main())
