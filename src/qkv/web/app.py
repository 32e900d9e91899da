"""The app factory: ``create_app(settings)`` wires the store, lessons, grader and routes together.

>>> from qkv.web.app import create_app
>>> from qkv.web.settings import Settings
>>> app = create_app(Settings(database_url="sqlite://", secret_key="k" * 32))
>>> sorted(path for path in app.openapi()["paths"] if path.startswith("/api/lessons"))[:2]
['/api/lessons/{lesson_id}/answers', '/api/lessons/{lesson_id}/attention']
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from qkv import __version__
from qkv.grading import Grader, SandboxUnavailable
from qkv.store import Store, default_database_url
from qkv.store.learner.accounts import SESSION_LIFETIME as LEARNER_SESSION_LIFETIME
from qkv.web import lti, metrics, readiness
from qkv.web.http.body_limits import BodyLimitMiddleware
from qkv.web.http.error_responses import install_error_handlers
from qkv.web.http.identity_limits import MintLimit
from qkv.web.http.jsonsafe import SafeJSONResponse
from qkv.web.http.parameter_limits import ParameterLimitMiddleware
from qkv.web.http.redirects import SafeLocationMiddleware
from qkv.web.http.request_log import RequestLogMiddleware
from qkv.web.http.security import LearnerIdentity, SecurityHeadersMiddleware
from qkv.web.instructor import class_mistakes, learner_links
from qkv.web.instructor import dates as instructor_dates
from qkv.web.instructor import routes as instructor_routes
from qkv.web.learner import api, due_notice, message_feedback, pages, sign_in, widget_api
from qkv.web.learner.widget_files import WidgetFiles
from qkv.web.retention import prune_forever
from qkv.web.runs.backend import RemoteGrading
from qkv.web.runs.local_queue import GradingQueue
from qkv.web.services import Services
from qkv.web.settings import Settings

if TYPE_CHECKING:
    from qkv.web.lti.tool import LtiTool

log = logging.getLogger("qkv.web")
MINT_WINDOW_S = 600.0  # the window of Settings.identities_per_address (new learners who save work)

PACKAGE_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = PACKAGE_DIR / "templates"
STATIC_DIR = PACKAGE_DIR / "static"


def create_app(
    settings: Settings | None = None, *, catalog: Any = None, remote: RemoteGrading | None = None
) -> FastAPI:
    """Build the lesson server.

    The database is opened (and its schema upgraded) here, so a bad URL fails at once; the
    grader starts in the app's lifespan and stops there, after in-flight gradings finish.

    Parameters
    ----------
    settings : Settings, optional
        Defaults to ``Settings()``.
    catalog : qkv.lessons.Catalog, optional
        The lessons to serve; the built-in ones by default.
    remote : RemoteGrading, optional
        Graders on other machines (``qkv serve --grading remote``); without it this server grades
        programs in its own processes.

    Returns
    -------
    fastapi.FastAPI

    Raises
    ------
    qkv.store.StoreError
        If the database cannot be opened.
    """
    settings = settings or Settings()
    if catalog is None:
        from qkv.lessons import load_catalog

        catalog = load_catalog()
    services, secret = _open_services(settings, catalog)
    store = services.store

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if remote is not None:
            await start_remote_grading(services, remote)
        else:
            await run_in_threadpool(start_grading, services)
        lti_tool.sender.start()
        pruning = None
        if settings.retain_days is not None:
            pruning = asyncio.create_task(prune_forever(store.personal_data, settings.retain_days))
        try:
            yield
        finally:
            if pruning is not None:
                pruning.cancel()
            if services.remote is not None:
                await services.remote.stop()
                services.remote = None
            await run_in_threadpool(stop_grading, services)
            await run_in_threadpool(lti_tool.close)
            store.close()

    app = FastAPI(
        title="qkv",
        version=__version__,
        summary="Queries, keys and values: the lesson's JSON API.",
        lifespan=lifespan,
        default_response_class=SafeJSONResponse,
        docs_url=None,
        redoc_url=None,
    )
    app.state.qkv = services
    lti_tool = _install_routes(app, services, secret)
    _install_middleware(app, settings)
    return app


def _open_services(settings: Settings, catalog: Any) -> tuple[Services, str]:
    """The store (opened, its schema upgraded), the learners' identity and the templates, with the
    cookie-signing secret (the settings' own, or the one kept in the database)."""
    store = Store(
        settings.database_url or default_database_url(),
        keep=settings.keep_submissions,
        client_bytes_per_day=settings.client_storage_per_day,
    )
    secret = settings.secret_key or store.shared_secret("cookie-signing")
    services = Services(
        settings=settings,
        store=store,
        catalog=catalog,
        identity=LearnerIdentity(
            secret,
            secure=settings.secure_cookies,
            mint_limit=MintLimit(settings.identities_per_address, MINT_WINDOW_S),
            has_saved_work=store.learners.has_saved_work,
            session_learner=store.accounts.learner_for_session,
            session_max_age_s=int(LEARNER_SESSION_LIFETIME.total_seconds()),
            require_sign_in=settings.require_sign_in,
        ),
        templates=Jinja2Templates(directory=str(settings.templates_dir or TEMPLATES_DIR)),
    )
    return services, secret


def _install_routes(app: FastAPI, services: Services, secret: str) -> LtiTool:
    """Every router, the static files and the widgets' folders; the LTI tool, which the lifespan starts."""
    app.include_router(api.router)
    app.include_router(message_feedback.router)  # "Did this help?"
    app.include_router(widget_api.router)
    app.include_router(pages.router)
    app.include_router(sign_in.router)  # /sign-in, /sign-out, /account/devices
    app.include_router(readiness.router)  # /readyz
    app.include_router(metrics.router)  # /metrics, for allowed addresses or a bearer token
    instructor_routes.install(app, services, secret)  # /instructor pages and /api/instructor
    class_mistakes.install(app)  # /instructor/mistakes: the class's mistakes and the notes
    learner_links.install(app, services)  # the sign-in-link button on a learner's page
    instructor_dates.install(app, services)  # /instructor/dates and a learner's extensions
    due_notice.install(app, services)  # a lesson's dates on the learner's pages
    lti_tool = lti.install(app, services)  # /lti/login, /lti/launch, /lti/jwks.json, /instructor/lti
    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    # Each widget's files from its chapter's (or lesson's) folder.
    app.mount("/widgets", WidgetFiles(services.catalog.widgets), name="widgets")
    return lti_tool


def _install_middleware(app: FastAPI, settings: Settings) -> None:
    """The error handlers, then the middleware from the innermost (compression) to the outermost."""
    install_error_handlers(app)
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
    app.add_middleware(
        BodyLimitMiddleware, max_bytes=settings.max_body_bytes, timeout_s=settings.body_timeout_s
    )
    # Outside the body limit: a path or query that no route takes is refused before the body is read.
    app.add_middleware(ParameterLimitMiddleware)
    # Outside the router, so Starlette's own trailing-slash redirect is rewritten too.
    app.add_middleware(SafeLocationMiddleware, public_url=settings.public_url)
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(metrics.HttpMetricsMiddleware)  # counts every answer, refusals above included
    if settings.request_log:  # outermost: it times and logs the whole answer, errors included
        app.add_middleware(RequestLogMiddleware)


def start_grading(services: Services) -> None:
    """Start the grader and its queue, or record in a sentence why code cannot be graded."""
    settings = services.settings
    try:
        grader = Grader(
            require_sandbox=not settings.allow_unsandboxed,
            warm_spares=settings.warm_spares,
            judge_workers=1,  # reports judged off the grading threads, fairly by client (qkv.grading.judging)
        )
    except SandboxUnavailable as error:
        services.grading_off_reason = f"Code cannot be graded on this server. {error}"
        services.sandbox = "grading is off: bubblewrap is missing"
        log.warning(services.grading_off_reason)
        return
    services.grader = grader
    services.sandbox = str(grader.sandbox)
    # A probe is worth its pause only where a paused program goes on from where it was: elsewhere every
    # program past it (honest ones too, on a loaded machine's wall clock) would run twice.
    probe_s = settings.grading_probe_s if grader.slices_pause else 0.0
    first_s, later_slices = grading_slices(settings.grading_slice_s, probe_s)
    services.queue = GradingQueue(
        lambda source, suite, seed=None: grader.grade(source, suite, seed=seed),
        concurrency=settings.grading_concurrency,
        reserved=settings.grading_reserved,
        capacity=settings.grading_queue,
        per_client=settings.grading_per_client,
        first_slice=(
            None
            if first_s is None
            else lambda source, suite, seed=None: grader.grade_first_slice(
                source, suite, seed=seed, slice_s=first_s
            )
        ),
        later_slices=later_slices,
        on_start=metrics.observe_queue_wait,
    )
    services.grading_off_reason = None


def grading_slices(slice_s: float, probe_s: float) -> tuple[float | None, tuple[float | None, ...]]:
    """The queue's first slice and later ones from the server's settings (CPU seconds).

    With a probe, a program's first slice is cut in two: the probe, then the rest in a line of its own
    (behind every newer program's probe); after that, whole slices until its limit. Without a slice
    (0), every program is graded whole, in turn.

    Examples
    --------
    >>> grading_slices(0.5, 0.1)
    (0.1, (0.4, 0.5))
    >>> grading_slices(0.5, 0)
    (0.5, (0.5,))
    >>> grading_slices(0, 0.1)
    (None, (None,))
    """
    if not slice_s:
        return None, (None,)
    if not 0 < probe_s < slice_s:
        return slice_s, (slice_s,)
    return probe_s, (round(slice_s - probe_s, 6), slice_s)


async def start_remote_grading(services: Services, remote: RemoteGrading) -> None:
    """Connect to the remote graders' job queue; this server then grades nothing itself."""
    await remote.start(services.store)
    services.remote = remote
    services.sandbox = remote.description
    services.grading_off_reason = None


def stop_grading(services: Services) -> None:
    """Let admitted gradings finish (up to ``shutdown_grace_s``), then stop the grader."""
    if services.queue is not None:
        finished = services.queue.close(services.settings.shutdown_grace_s)
        if not finished:
            log.warning(
                "some gradings were still running after %.0f s; stopping anyway",
                services.settings.shutdown_grace_s,
            )
    if services.grader is not None:
        services.grader.close()
    services.queue = None
    services.grader = None
