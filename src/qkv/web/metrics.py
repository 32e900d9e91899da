"""``GET /metrics``: the server's figures in Prometheus's text format, for allowed addresses or a token.

Two kinds of figures, told apart by where they come from:

- **This process's events**, counted as they happen (prometheus-client counters and histograms):
  ``qkv_gradings_total`` (by lesson and outcome), ``qkv_verdict_latency_seconds`` (a Run's wait plus its
  grading, as the learner waited), ``qkv_queue_wait_seconds`` (a program's wait for its first run),
  ``qkv_http_requests_total`` (by route template, method and status) and ``qkv_database_errors_total``.
  ``qkv serve`` is one process with one uvicorn worker; more workers are more ``qkv serve`` processes
  (the systemd template of docs/operations.md), each on its own port and each its own Prometheus target,
  so these need no multiprocess mode: sum them over targets. ``qkv grader --metrics-listen`` serves the
  same registry for the jobs it grades (``qkv.remote_grading.worker`` counts them).
- **Gauges read at scrape time**: from this process (``qkv_programs_waiting``, ``qkv_programs_running``,
  ``qkv_sandboxes_warm``, ``qkv_sandboxes_busy``), and from the database, which every server shares, so
  the same on every target (aggregate them with ``max``, not ``sum``): ``qkv_remote_jobs`` by state,
  ``qkv_remote_graders_seen``, ``qkv_lti_outbox_scores`` (pending, sent, failed),
  ``qkv_lti_outbox_oldest_pending_age_seconds`` and ``qkv_learners_active`` (saved work in the last 5
  minutes).

Who may read them: a client at an address of ``Settings.metrics_allow`` (loopback by default), or one
that sends ``Authorization: Bearer`` with ``Settings.metrics_token``. A request that came through a proxy
(it carries ``X-Forwarded-For`` or ``Forwarded``) is not taken to be from the proxy's address: behind a
proxy on the same machine, every learner's request would otherwise look like loopback. Labels hold only
bounded values (lesson ids of the catalog, route templates, known methods), never a learner.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qkv.store.sql.clock import utc_now
from qkv.web.http.jsonsafe import SafeJSONResponse
from qkv.web.http.request_log import route_template
from qkv.web.services import Services

__all__ = [
    "DATABASE_ERRORS",
    "REGISTRY",
    "HttpMetricsMiddleware",
    "graded",
    "observe_queue_wait",
    "router",
]

REGISTRY = CollectorRegistry()
_SECONDS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
GRADINGS = Counter(
    "qkv_gradings",
    "Programs graded by this server, by lesson and outcome.",
    ["lesson", "outcome"],
    registry=REGISTRY,
)
VERDICT_LATENCY = Histogram(
    "qkv_verdict_latency_seconds",
    "From a Run reaching this server to its verdict: the wait for a grader and the grading.",
    buckets=_SECONDS,
    registry=REGISTRY,
)
QUEUE_WAIT = Histogram(
    "qkv_queue_wait_seconds",
    "A program's wait in line for its first run.",
    buckets=_SECONDS,
    registry=REGISTRY,
)
HTTP_REQUESTS = Counter(
    "qkv_http_requests", "HTTP requests answered, by route template, method and status.",
    ["route", "method", "status"], registry=REGISTRY,
)  # fmt: skip
DATABASE_ERRORS = Counter(
    "qkv_database_errors", "Requests answered 503 because the database failed.", registry=REGISTRY
)
_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
_OUTCOMES = {"pass", "fail", "error", "timeout"}
ACTIVE_WINDOW = timedelta(minutes=5)
TEXT_FORMAT = (
    "text/plain; version=0.0.4; charset=utf-8"  # the classic text format, which generate_latest writes
)
router = APIRouter()


def graded(lesson_id: str, outcome: object, seconds: float) -> None:
    """Count one verdict of this server's grader and the time the learner waited for it."""
    GRADINGS.labels(lesson=lesson_id, outcome=outcome if outcome in _OUTCOMES else "other").inc()
    VERDICT_LATENCY.observe(seconds)


def observe_queue_wait(seconds: float) -> None:
    """One program's wait for its first run (the grading line calls it)."""
    QUEUE_WAIT.observe(seconds)


class HttpMetricsMiddleware:
    """Count every HTTP request by its route's template, method and status once it is answered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer through the app; count the answer (500 if the app failed before answering)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            method = scope["method"] if scope["method"] in _METHODS else "other"
            HTTP_REQUESTS.labels(route=route_template(scope), method=method, status=str(status)).inc()


def _gauge(name: str, documentation: str, value: float, labels: dict[str, str] | None = None) -> Metric:
    family = GaugeMetricFamily(name, documentation, labels=list(labels or {}))
    family.add_metric(list((labels or {}).values()), value)
    return family


def _local_figures(services: Services) -> Iterator[Metric]:
    """The grading line and the sandbox pool of this process, now."""
    waiting, running = services.queue.counts() if services.queue is not None else (0, 0)
    yield _gauge("qkv_programs_waiting", "Programs waiting for this server's graders.", waiting)
    yield _gauge("qkv_programs_running", "Programs being graded by this server now.", running)
    spares = services.grader.spares if services.grader is not None else None
    yield _gauge(
        "qkv_sandboxes_warm",
        "Sandboxes started in advance, waiting for a program.",
        spares.ready if spares else 0,
    )
    yield _gauge("qkv_sandboxes_busy", "Sandboxes running a program now.", running)
    judges = services.grader.judges if services.grader is not None else None
    yield _gauge(
        "qkv_judging_waiting",
        "Programs' reports waiting in the judging line.",
        judges.waiting if judges else 0,
    )


def _database_figures(services: Services) -> Iterator[Metric]:
    """What every server reads alike from the database: the LMS outbox, active learners, remote jobs."""
    from qkv.store.lti.outbox import ScoreOutbox

    store = services.store
    outbox = ScoreOutbox(store.database).figures()
    scores = GaugeMetricFamily(
        "qkv_lti_outbox_scores", "Scores for the LMS by state (the whole course).", labels=["state"]
    )
    for state in ("pending", "sent", "failed"):
        scores.add_metric([state], getattr(outbox, state))
    yield scores
    yield _gauge(
        "qkv_lti_outbox_oldest_pending_age_seconds",
        "How long the oldest score waiting for its LMS has waited (0: none waits).",
        outbox.oldest_pending_age_s or 0.0,
    )
    active = store.learners.active_since(utc_now() - ACTIVE_WINDOW)
    yield _gauge(
        "qkv_learners_active", "Learners who saved work in the last 5 minutes (the whole course).", active
    )
    if services.remote is not None:
        jobs = GaugeMetricFamily(
            "qkv_remote_jobs", "Remote grading jobs in the database by state.", labels=["state"]
        )
        for state, count in store.grading_jobs.counts_by_state().items():
            jobs.add_metric([state], count)
        yield jobs


class _Snapshot:
    """The gauges of one scrape, as a collector for a registry of their own."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self.families = list(families)

    def collect(self) -> Iterator[Metric]:
        yield from self.families


async def _scrape(services: Services) -> bytes:
    families = list(_local_figures(services))
    families += await run_in_threadpool(lambda: list(_database_figures(services)))
    if services.remote is not None:
        health = await services.remote.health()
        families.append(
            _gauge(
                "qkv_remote_graders_seen",
                "Graders whose heartbeat is recent (the whole cluster).",
                health["graders_alive"],
            )
        )
    snapshot = CollectorRegistry(auto_describe=False)
    snapshot.register(_Snapshot(families))
    return generate_latest(REGISTRY) + generate_latest(snapshot)


def _proxied(request: Request) -> bool:
    return "x-forwarded-for" in request.headers or "forwarded" in request.headers


def refusal(request: Request, settings: Any) -> Response | None:
    """None when the request may read the metrics; else the answer that says why not (401 or 403)."""
    header = request.headers.get("authorization", "")
    token = settings.metrics_token
    if token and header.startswith("Bearer "):
        if hmac.compare_digest(header[7:].strip().encode(), token.encode()):
            return None
        return SafeJSONResponse(
            {"detail": "The bearer token for /metrics is not the one this server was given."}, 401
        )
    host = request.client.host if request.client else ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    allowed = (
        address is not None
        and not _proxied(request)
        and any(address in net for net in settings.metrics_networks)
    )
    if allowed:
        return None
    sentence = (
        "The metrics are served only to the addresses --metrics-allow names (loopback unless given), "
        "or with the bearer token --metrics-token sets."
    )
    headers = {"WWW-Authenticate": "Bearer"} if token else {}
    return SafeJSONResponse({"detail": sentence}, 401 if token else 403, headers=headers)


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Prometheus's text format; only for allowed addresses or with the bearer token."""
    services: Services = request.app.state.qkv
    refused = refusal(request, services.settings)
    if refused is not None:
        return refused
    body = await _scrape(services)
    return Response(body, media_type=TEXT_FORMAT, headers={"Cache-Control": "no-store"})
