"""``qkv serve``: run the lesson server on uvicorn."""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

import click

from qkv.cli.options import (
    after_hint_credit_option,
    after_solution_credit_option,
    json_logging,
    log_format_option,
    log_level_option,
    say,
    start_logging,
)

if TYPE_CHECKING:
    from fastapi import FastAPI

    from qkv.grading.sandbox.cgroups import CgroupHost
    from qkv.web.runs.backend import RemoteGrading
    from qkv.web.settings import Settings

SECRET_KEY_ENV = "QKV_SECRET_KEY"
BUBBLEWRAP_MISSING = (
    "bubblewrap (bwrap) is not installed, so submitted code cannot be run in the sandbox. "
    "Install it with 'apt-get install bubblewrap'."
)


def _sandbox_available() -> bool:
    from qkv.grading import sandbox_available  # here, not at the top: other commands need not load the grader

    return sandbox_available()


def cgroup_line(host: CgroupHost | None = None) -> str:
    """Which cgroups bound each sandbox on this host (or ``host``), and why: printed at start-up, as it is
    what an operator checks first when limits differ between machines."""
    from qkv.grading.sandbox.cgroups import HOST, CgroupKind, choose

    choice = choose(host or HOST)
    if choice.kind is CgroupKind.NONE:
        return (
            f"qkv: sandboxes get no cgroup of their own here ({choice.reason}); processes and memory are "
            "bounded per process by rlimits and the seccomp filter only (see docs/grading.md, Cgroups)."
        )
    kind = "v1 (pids and memory)" if choice.kind is CgroupKind.V1 else "v2 (memory and pids)"
    return f"qkv: each sandbox gets its own cgroup {kind}: {choice.reason}"


def _secret_key(file: Path | None) -> str | None:
    """The cookie-signing key from ``file``, else from $QKV_SECRET_KEY (None: the key in the database)."""
    if file is None:
        return os.environ.get(SECRET_KEY_ENV) or None
    try:
        key = file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise click.BadParameter(
            f"{str(file)!r} could not be read: {error}.", param_hint="--secret-key-file"
        ) from None
    if not key:
        raise click.BadParameter(
            f"{str(file)!r} is empty; put the key in it.", param_hint="--secret-key-file"
        )
    return key


def _remote_grading(database_url: str, capacity: int, per_client: int) -> RemoteGrading:
    """The web server's side of ``--grading remote``, or a usage error in a sentence (SQLite, a bad bound)."""
    try:
        from qkv.remote_grading import QueueSubmitter, RemoteGradingError
    except ModuleNotFoundError as missing:
        raise click.UsageError(
            f"--grading remote needs the '{missing.name}' package, which is not installed; install the "
            "grader extra with: pip install 'qkv[grader]'"
        ) from None
    try:
        return QueueSubmitter(database_url, capacity=capacity, per_client=per_client)
    except (RemoteGradingError, ValueError) as error:
        raise click.UsageError(str(error)) from None


def _exit_cleanly(signum: int, _frame: object) -> None:
    raise SystemExit(0)


def _port_in_use(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


class ServeOptions(TypedDict):
    """What ``qkv serve`` is given, one key per option (click passes them by name)."""

    host: str
    port: int
    database_url: str | None
    allow_unsandboxed: bool
    grading_mode: str
    grading_wait: float
    grading_concurrency: int
    grading_reserved: int
    grading_queue: int | None
    grading_per_client: int
    grading_slice: float
    grading_probe: float
    identities_per_address: int
    ipv6_prefix: int
    keep_submissions: int
    client_storage_per_day: int
    stuck_attempts: int
    stuck_minutes: int
    forwarded_allow_ips: str | None
    warm_spares: int
    secret_key_file: Path | None
    secure_cookies: bool
    require_sign_in: bool
    public_url: str | None
    content: Path | None
    log_level: str
    log_format: str
    metrics_token: str | None
    metrics_allow: str | None
    after_solution_credit: str
    after_hint_credit: str
    retain_days: int | None
    allow_private_lms: bool


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option(
    "--database-url",
    envvar="QKV_DATABASE_URL",
    help="sqlite:///path or postgresql+psycopg://user:password@host/db "
    "(default: a SQLite file in the user data dir).",
)
@click.option(
    "--allow-unsandboxed",
    is_flag=True,
    help="When bubblewrap is missing, grade code with resource limits only (unsafe for untrusted learners).",
)
@click.option(
    "--grading",
    "grading_mode",
    type=click.Choice(["local", "remote"]),
    default="local",
    show_default=True,
    help="local: grade programs in this server's processes. remote (PostgreSQL only): only put them in the "
    "job queue in the database, for 'qkv grader' processes on any machine to grade.",
)
@click.option(
    "--grading-wait",
    default=25.0,
    show_default=True,
    type=click.FloatRange(0.5, 120.0),
    metavar="SECONDS",
    help="With --grading remote: how long a Run request waits for its verdict before answering 202 (the "
    "page then asks again, from any server).",
)
@click.option(
    "--grading-concurrency",
    default=4,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Programs graded at once.",
)
@click.option(
    "--grading-reserved",
    default=1,
    show_default=True,
    type=click.IntRange(0, 64),
    help="Graders beyond --grading-concurrency kept for a client with no program running, so that another "
    "client's many programs never make its first wait for a grader.",
)
@click.option(
    "--grading-queue",
    default=None,
    type=click.IntRange(0, 100_000),
    help="Programs that may wait for a grader, served fairly across client addresses; more get 503. "
    "[default: set from the machine's memory and open files, at 320 KiB a waiting program: 819 on 4 GiB]",
)
@click.option(
    "--grading-per-client",
    default=64,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Programs one client address may have waiting (a classroom behind a NAT shares one); more: 429.",
)
@click.option(
    "--grading-slice",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="CPU seconds of every program's first run; one still running then finishes behind every program "
    "waiting for its first run (0: grade each program whole, in turn).",
)
@click.option(
    "--grading-probe",
    default=0.1,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="CPU seconds at the start of every program's first run; one still running then gets the rest of "
    "its first run only when no newer program waits for its start (0: no such start).",
)
@click.option(
    "--identities-per-address",
    default=200,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    help="New learners one client address may start saving work for in 10 minutes (counted at their first "
    "save; reading pages is free); more get 429 on their first save.",
)
@click.option(
    "--ipv6-prefix",
    default=64,
    show_default=True,
    type=click.IntRange(32, 128),
    metavar="BITS",
    help="The prefix an IPv6 client counts by in every per-address bound (grading line, new learners, "
    "storage, request rates); IPv4 clients count by their whole address.",
)
@click.option(
    "--keep-submissions",
    default=20,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Answers and programs kept per learner and exercise (plus the first right one and the best); "
    "the gradebook's counts stay exact.",
)
@click.option(
    "--client-storage-per-day",
    default=128,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    metavar="MIB",
    help="MiB one client address may store in a day (programs, results, drafts, answers). Past it only "
    "the best and last program of each learner and exercise are kept; past a quarter more, nothing more.",
)
@click.option(
    "--forwarded-allow-ips",
    default=None,
    metavar="IPS",
    help="Behind a reverse proxy: the proxy addresses (comma-separated, or *) whose X-Forwarded-For "
    "gives the client address. Without it, the connection's own address is the client's.",
)
@click.option(
    "--warm-spares",
    default=2,
    show_default=True,
    type=click.IntRange(0, 16),
    help="Sandboxes kept started in advance.",
)
@click.option(
    "--secret-key-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A file holding the key for signing learner cookies (or set QKV_SECRET_KEY; default: a random key "
    "kept in the database). Never on the command line, where every local user can read it.",
)
@click.option(
    "--secure-cookies",
    is_flag=True,
    envvar="QKV_SECURE_COOKIES",
    help="Mark cookies Secure (HTTPS only): set this when learners reach the server through HTTPS.",
)
@click.option(
    "--require-sign-in",
    is_flag=True,
    envvar="QKV_REQUIRE_SIGN_IN",
    help="Ask every learner to sign in (a roster link from 'qkv learners', or an LMS launch) before the "
    "lessons open and their work is saved. Without it learners may stay anonymous.",
)
@click.option(
    "--public-url",
    envvar="QKV_PUBLIC_URL",
    default=None,
    metavar="URL",
    help="Where learners reach the server (https://qkv.example): redirects point there. Without it they "
    "are relative paths; the Host header is never used.",
)
@click.option(
    "--content",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A folder of lessons to serve instead of the lessons shipped with qkv.",
)
@log_level_option
@log_format_option
@click.option(
    "--metrics-token",
    envvar="QKV_METRICS_TOKEN",
    default=None,
    metavar="TOKEN",
    help="A bearer token (16 characters or more) with which any address may read /metrics; prefer "
    "QKV_METRICS_TOKEN in the environment, which other local users cannot read. Without it: none.",
)
@click.option(
    "--metrics-allow",
    envvar="QKV_METRICS_ALLOW",
    default=None,
    metavar="NETWORKS",
    help="Addresses or networks, comma-separated (10.0.0.5,192.0.2.0/24), that may read /metrics without "
    "a token [default: loopback only]. A request through a proxy never counts as the proxy's address.",
)
@click.option(
    "--stuck-attempts",
    default=3,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="The instructor's view flags a learner as stuck after this many failed attempts on one exercise.",
)
@click.option(
    "--stuck-minutes",
    default=10,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="The instructor's view flags a learner as stuck after this many minutes on one exercise unsolved.",
)
@after_solution_credit_option
@after_hint_credit_option
@click.option(
    "--retain-days",
    default=None,
    type=click.IntRange(1, 36_500),
    metavar="N",
    help="Erase anonymous learners (no account, no LMS identity) inactive for N days, checked hourly. "
    "Without it they are kept. Accounts go on request: 'qkv learners erase'.",
)
@click.option(
    "--allow-private-lms",
    is_flag=True,
    envvar="QKV_ALLOW_PRIVATE_LMS",
    help="Let LTI Dynamic Registration fetch from loopback and private addresses (an LMS on the school's "
    "own network). Without it, registration fetches only public addresses.",
)
def serve(**options: Unpack[ServeOptions]) -> None:
    """Serve the interactive lesson at http://HOST:PORT/ until stopped (Ctrl+C or SIGTERM)."""
    # Imported here, not at the top: every other qkv command would pay for SQLAlchemy and FastAPI.
    from qkv.store import default_database_url
    from qkv.web.runs.line_bound import raise_open_files_limit

    start_logging(options["log_level"], options["log_format"])
    url = options["database_url"] or default_database_url()
    raise_open_files_limit()  # every program waiting in line holds a connection open
    remote, grading = _choose_grading(url, options)
    settings, app = _build_app(url, remote, options)
    _announce(url, grading, options)
    _run_server(app, settings, options)


def _choose_grading(url: str, options: ServeOptions) -> tuple[RemoteGrading | None, str]:
    """The remote grading (or None: local) and how programs are graded, in words; warns when not sandboxed."""
    if options["grading_mode"] == "remote":
        remote = _remote_grading(url, _line_bound(options), options["grading_per_client"])
        return remote, remote.description
    if _sandbox_available():
        return None, "in the bubblewrap sandbox"
    if options["allow_unsandboxed"]:
        say(
            f"Warning: {BUBBLEWRAP_MISSING} Because of --allow-unsandboxed, code is graded with resource "
            "limits only, which does not keep hostile code away from this machine.",
            err=True,
        )
        return None, "with resource limits only (no bubblewrap)"
    say(
        f"{BUBBLEWRAP_MISSING} Grading is turned off: the lesson is served, but the Run button will say "
        "so. To grade without the sandbox anyway, restart with --allow-unsandboxed.",
        err=True,
    )
    return None, "off (bubblewrap is missing)"


def _build_app(url: str, remote: RemoteGrading | None, options: ServeOptions) -> tuple[Settings, FastAPI]:
    """The settings and the app they make, or a usage error in a sentence (a bad value, a busy port)."""
    from qkv.lessons import LessonError, load_catalog
    from qkv.store import StoreError
    from qkv.web.app import create_app

    try:
        settings = _settings(url, options)
        host, port = options["host"], options["port"]
        if port and _port_in_use(host, port):
            raise click.ClickException(
                f"Port {port} on {host} is already in use; choose another with --port."
            )
        app = create_app(settings, catalog=load_catalog(options["content"]), remote=remote)
    except (StoreError, ValueError, LessonError) as error:
        raise click.ClickException(str(error)) from None
    return settings, app


def _settings(url: str, options: ServeOptions) -> Settings:
    """The server's settings from the options (a ValueError in a sentence for a bad one)."""
    from qkv.web.settings import Settings
    from qkv.web.solution_credit import AfterSolutionCredit

    return Settings(
        database_url=url,
        secret_key=_secret_key(options["secret_key_file"]),
        allow_unsandboxed=options["allow_unsandboxed"],
        grading_concurrency=options["grading_concurrency"],
        grading_reserved=options["grading_reserved"],
        grading_queue=_line_bound(options),
        grading_per_client=options["grading_per_client"],
        grading_slice_s=options["grading_slice"],
        grading_probe_s=options["grading_probe"],
        remote_wait_s=options["grading_wait"],
        identities_per_address=options["identities_per_address"],
        ipv6_prefix=options["ipv6_prefix"],
        keep_submissions=options["keep_submissions"],
        client_storage_per_day=options["client_storage_per_day"] * 1024 * 1024,
        warm_spares=options["warm_spares"],
        stuck_attempts=options["stuck_attempts"],
        stuck_minutes=options["stuck_minutes"],
        secure_cookies=options["secure_cookies"],
        require_sign_in=options["require_sign_in"],
        public_url=options["public_url"],
        retain_days=options["retain_days"],
        allow_private_lms=options["allow_private_lms"],
        after_solution_credit=AfterSolutionCredit(options["after_solution_credit"]),
        after_hint_credit=AfterSolutionCredit(options["after_hint_credit"]),
        request_log=options["log_format"] == "json",
        metrics_token=options["metrics_token"] or None,
        metrics_allow=_metrics_allow(options["metrics_allow"]),
    )


def _line_bound(options: ServeOptions) -> int:
    """``--grading-queue``, or the bound this machine's memory and open files set (its default)."""
    from qkv.web.runs.line_bound import waiting_line_bound

    given = options["grading_queue"]
    return waiting_line_bound() if given is None else given


def _metrics_allow(value: str | None) -> tuple[str, ...]:
    """``--metrics-allow``'s networks for the settings (none given: loopback only).

    Examples
    --------
    >>> _metrics_allow("10.0.0.5, 192.0.2.0/24")
    ('10.0.0.5', '192.0.2.0/24')
    >>> _metrics_allow(None)
    ('127.0.0.0/8', '::1/128')
    """
    from qkv.web.settings import LOOPBACK

    if value is None:
        return LOOPBACK
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _announce(url: str, grading: str, options: ServeOptions) -> None:
    """Where the lesson is served, from which database, how programs are graded (and their cgroups)."""
    from qkv.store import describe_url

    say(
        f"qkv: serving the lesson at http://{options['host']}:{options['port']}/ "
        f"(database {describe_url(url)}; grading {grading})"
    )
    if grading.startswith("in the bubblewrap sandbox"):
        say(cgroup_line())


def _run_server(app: FastAPI, settings: Settings, options: ServeOptions) -> None:
    """Run uvicorn until it is stopped; exit status 1 when it never started (a port taken since)."""
    import uvicorn

    from qkv.web.http import access_log
    from qkv.web.http.protocol import HeadTimeoutH11Protocol

    log_level, forwarded_allow_ips = options["log_level"], options["forwarded_allow_ips"]
    json_lines = json_logging()
    config = uvicorn.Config(
        app,
        host=options["host"],
        port=options["port"],
        log_level=log_level,
        # JSON lines: uvicorn's records go to the root logger's JSON handler, and the app's request log
        # (route templates, no query string) replaces uvicorn's access line.
        log_config=None if json_lines else uvicorn.config.LOGGING_CONFIG,
        access_log=not json_lines,
        lifespan="on",
        # On SIGTERM uvicorn stops accepting, lets requests in flight (gradings included) finish
        # for up to this long, then the lifespan stops the grader.
        timeout_graceful_shutdown=int(settings.shutdown_grace_s),
        server_header=False,
        http=HeadTimeoutH11Protocol,  # a client that never finishes its headers is cut off
        # The client address (fair grading, per-client limits) comes from X-Forwarded-For only when the
        # connection comes from a proxy named here.
        proxy_headers=forwarded_allow_ips is not None,
        forwarded_allow_ips=forwarded_allow_ips,
    )
    access_log.install(app=app)  # after uvicorn.Config, which configures its loggers afresh
    server = uvicorn.Server(config)
    # uvicorn handles SIGTERM/SIGINT itself, then re-raises the signal once it has shut down; by then
    # the shutdown was clean, so these handlers turn it into exit status 0 instead of a kill or traceback.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _exit_cleanly)
    server.run()
    if not server.started:
        raise SystemExit(1)
