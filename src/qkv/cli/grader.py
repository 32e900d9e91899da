"""``qkv grader``: grade the programs that ``qkv serve --grading remote`` servers put in the job queue."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from qkv.cli.options import log_format_option, log_level_option, say, start_logging
from qkv.cli.serve import cgroup_line

if TYPE_CHECKING:
    from qkv.grading import Grader
    from qkv.remote_grading import WorkerSettings


def _default_concurrency() -> int:
    """One grading per core this process may use: a grading is mostly CPU."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@click.command()
@click.option(
    "--database-url",
    envvar="QKV_DATABASE_URL",
    required=True,
    help="The course's PostgreSQL database, as the web servers have it: postgresql+psycopg://user:password@host/db.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=None,
    help="Programs graded at once [default: one per core].",
)
@click.option(
    "--warm-spares",
    type=click.IntRange(0, 64),
    default=None,
    help="Sandboxes kept started in advance [default: as many as --concurrency].",
)
@click.option(
    "--heartbeat",
    "heartbeat_s",
    type=click.FloatRange(0.5, 600.0),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="How often this grader tells the queue it is alive.",
)
@click.option(
    "--stalled-after",
    "stalled_after_s",
    type=click.FloatRange(1.0, 3600.0),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="A grader silent this long (killed, frozen, cut off) has its programs graded again elsewhere.",
)
@click.option(
    "--content",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The lessons the web servers serve, if not the ones shipped with qkv (the same folder).",
)
@click.option(
    "--metrics-listen",
    default=None,
    metavar="HOST:PORT",
    help="Serve this grader's metrics (gradings by lesson and outcome, verdict latency, queue wait) for "
    "Prometheus at http://HOST:PORT/metrics; give a loopback or private address: it has no token. "
    "Without it: no metrics.",
)
@log_level_option
@log_format_option
def grader(
    database_url: str,
    concurrency: int | None,
    warm_spares: int | None,
    heartbeat_s: float,
    stalled_after_s: float,
    content: Path | None,
    metrics_listen: str | None,
    log_level: str,
    log_format: str,
) -> None:
    """Take programs from the job queue in PostgreSQL, grade each in the sandbox, write its verdict.

    Run one per grader machine (as many as the class needs); stop it with SIGTERM, which lets the
    gradings in progress finish. It refuses to start without bubblewrap.
    """
    # Imported here, not at the top: other qkv commands need neither the grader nor procrastinate.
    from qkv.lessons import LessonError, load_catalog
    from qkv.store import Store, StoreError, describe_url

    start_logging(log_level, log_format)
    settings = _worker_settings(database_url, concurrency, heartbeat_s, stalled_after_s)
    from qkv.remote_grading import GraderWorker, RemoteGradingError  # there: _worker_settings checked

    if metrics_listen is not None:  # before the sandbox: a bad address leaves nothing to close
        _serve_metrics(metrics_listen)

    workers = settings.concurrency
    sandboxed = _sandboxed_grader(workers if warm_spares is None else warm_spares)
    try:
        store = Store(database_url)
        catalog = load_catalog(content)
    except (StoreError, LessonError, ValueError) as error:
        sandboxed.close()
        raise click.ClickException(str(error)) from None
    say(
        f"qkv grader {settings.name}: grading {workers} program(s) at once in the bubblewrap sandbox, "
        f"jobs from {describe_url(database_url)} (a heartbeat every {heartbeat_s:g} s; a grader silent for "
        f"{stalled_after_s:g} s has its programs graded again elsewhere)"
    )
    say(cgroup_line())
    worker = GraderWorker(settings, grader=sandboxed, store=store, catalog=catalog)
    try:
        asyncio.run(worker.run())
    except RemoteGradingError as error:
        raise click.ClickException(str(error)) from None
    finally:
        sandboxed.close()
        store.close()


def _worker_settings(
    database_url: str, concurrency: int | None, heartbeat_s: float, stalled_after_s: float
) -> WorkerSettings:
    """The worker's settings, or a usage error in a sentence (no grader extra, a bad URL or bound)."""
    try:
        from qkv.remote_grading import RemoteGradingError, WorkerSettings, queue_conninfo
    except ModuleNotFoundError as missing:
        raise click.UsageError(
            f"qkv grader needs the '{missing.name}' package, which is not installed; install the grader "
            "extra with: pip install 'qkv[grader]'"
        ) from None

    try:
        queue_conninfo(database_url)
    except RemoteGradingError as error:
        raise click.UsageError(str(error)) from None
    workers = concurrency or _default_concurrency()
    try:
        return WorkerSettings(
            database_url, concurrency=workers, heartbeat_s=heartbeat_s, stalled_after_s=stalled_after_s
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None


def _sandboxed_grader(warm_spares: int) -> Grader:
    """The sandboxed grader, first of all: a machine that cannot sandbox must take no job, not take one and
    fail it."""
    from qkv.grading import Grader, SandboxUnavailable

    try:
        return Grader(require_sandbox=True, warm_spares=warm_spares)
    except SandboxUnavailable as error:
        raise click.ClickException(
            f"This machine cannot grade: {error} qkv grader takes no programs without the sandbox, so it "
            "stops here; install bubblewrap and start it again."
        ) from None


def _serve_metrics(listen: str) -> None:
    """Serve the metrics at ``listen`` (``HOST:PORT``) from a thread, or a usage error in a sentence."""
    from prometheus_client import start_http_server

    from qkv.web.metrics import REGISTRY

    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.UsageError(f"--metrics-listen takes HOST:PORT (127.0.0.1:9101), not {listen!r}.")
    try:
        start_http_server(int(port), addr=host.strip("[]"), registry=REGISTRY)
    except OSError as error:
        raise click.UsageError(
            f"The metrics cannot be served at {listen}: {error.strerror or error}."
        ) from None
    say(f"qkv grader: metrics at http://{listen}/metrics")
