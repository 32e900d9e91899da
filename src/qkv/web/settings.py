"""The web server's settings: one frozen object, checked when it is made."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from qkv.store import DEFAULT_CLIENT_BYTES_PER_DAY
from qkv.web.http.clients import DEFAULT_IPV6_PREFIX, check_ipv6_prefix
from qkv.web.http.redirects import public_origin
from qkv.web.runs.line_bound import waiting_line_bound
from qkv.web.solution_credit import (
    DEFAULT_CREDIT,
    DEFAULT_HINT_CREDIT,
    AfterSolutionCredit,
    HelpPolicy,
)

LOOPBACK = ("127.0.0.0/8", "::1/128")  # who reads /metrics without a token, unless told otherwise


@dataclass(frozen=True)
class Settings:
    """Everything ``create_app`` needs to know.

    Parameters
    ----------
    database_url : str or None
        SQLAlchemy URL; None means ``$QKV_DATABASE_URL`` or the SQLite file in the user data dir.
    secret_key : str or None
        Key that signs the learner cookie; None means a random key kept in the database (shared
        by every server on that database).
    allow_unsandboxed : bool
        Grade with resource limits only when bubblewrap is missing (otherwise grading is turned off).
    grading_concurrency : int
        Gradings that run at once.
    grading_reserved : int
        Graders beyond ``grading_concurrency`` kept for a client with no program running, so that one
        client's programs holding every grader never make another's first wait for one of them to end
        (0: none).
    grading_queue : int
        Programs that may wait for a grader, served fairly across client addresses; beyond that the API
        answers 503. The default is set from what a waiting program costs and the machine's memory
        (``qkv.web.runs.line_bound.waiting_line_bound``: 819 on a machine of 4 GiB), so a lecture hall
        pressing Run at once waits in line rather than being refused.
    grading_per_client : int
        Programs one client address may have waiting; beyond that the API answers 429. A classroom behind
        one NAT shares an address, so the default holds a class of 64.
    grading_slice_s : float
        CPU seconds of every program's first run; one still running then is set aside and finishes its full
        limit only when no program waits for its first run (0: grade every program whole, in turn). The
        default is well above every lesson's reference solution.
    grading_probe_s : float
        CPU seconds of the very start of that first run: a program still running then (a few honest ones,
        every endless loop) is paused and gets the rest of its first slice only when no newer program
        waits for its start, so that loops hold graders a moment, not a whole slice, while a class presses
        Run. The default is about twice the slowest reference solution's; 0 (or not less than the slice):
        no such start.
    keep_submissions : int
        Answers and programs kept per learner and exercise (the last ones, plus the first right answer and
        the best program); the gradebook's counts stay exact whatever is pruned.
    client_storage_per_day : int
        Bytes one client address may store in a day (UTC): programs, results, drafts and answers. Past it,
        programs are still graded and counted but only the best and the last of each learner and exercise
        are kept, and drafts may not grow; past a quarter more, nothing more is stored for that address
        that day. The default (128 MiB) holds a class of 50 behind one NAT several times over.
    identities_per_address : int
        New learners one address may start saving work for in 10 minutes (a learner is counted at their
        first write, not when a page gives them a cookie); beyond that a new learner's first save answers
        429, while pages are always served. The default allows a class behind one NAT several times over.
    ipv6_prefix : int
        The prefix length an IPv6 client counts by in every per-address bound (the grading line, new
        learners, storage, request rates): 64 by default, since one subscriber is usually given a /64;
        32 to 128. IPv4 clients count by their whole address.
    warm_spares : int
        Sandboxes the grader keeps started in advance.
    stuck_attempts, stuck_minutes : int
        The instructor's view flags a learner as stuck on the exercise they are working on after this
        many failed attempts on it, or this many minutes on it without solving it.
    max_body_bytes, max_code_bytes : int
        Request bodies and submitted programs over these sizes are refused with 413.
    body_timeout_s : float
        A client that takes longer than this to send its request body gets 408.
    shutdown_grace_s : float
        How long shutting down waits for gradings in progress.
    remote_wait_s : float
        With remote graders (``qkv serve --grading remote``): how long a request waits for a verdict
        before answering 202 and where to ask again.
    templates_dir : Path or None
        Where the Jinja2 templates are; None means the ones shipped in ``qkv/web/templates``.
    secure_cookies : bool
        Mark the learner cookie ``Secure`` (serve over HTTPS behind a proxy).
    require_sign_in : bool
        Learners must sign in (a roster or device link, or an LMS launch): the lesson pages ask them to,
        and an anonymous learner's writes answer 401. False keeps anonymous learning, the default.
    public_url : str or None
        Where learners reach the server (``https://qkv.example``): redirects point there. None makes
        every redirect a relative path; neither ever takes the host from the request's ``Host`` header.
    lti_score_poll_s : float
        How often the LMS score sender looks for due scores when no new score wakes it.
    allow_private_lms : bool
        Let LTI Dynamic Registration fetch from loopback and private addresses (an LMS on the school's own
        network; tests). False, the default, fetches from public addresses only.
    lti_registration_deadline_s : float
        Seconds one Dynamic Registration attempt may take, every fetch of it together (at most 10).
    after_solution_credit : AfterSolutionCredit
        What a solve after the reference solution was shown counts in the LMS score and the LMS gradebook
        file: full, reduced (half, the default) or none; such solves are marked either way.
    after_hint_credit : AfterSolutionCredit
        What a solve after hints (and not after the solution) counts there: full (the default), reduced or
        none; such solves are marked either way.
    retain_days : int or None
        Anonymous learners (no account, no LMS identity) inactive for this many days are erased, checked
        once an hour; None keeps them (the default).
    metrics_token : str or None
        A bearer token that lets any address read ``/metrics`` (at least 16 characters); None: none does.
    metrics_allow : tuple of str
        Networks (``10.0.0.0/8``, ``::1``) whose clients read ``/metrics`` without a token; loopback by
        default, so the metrics are never served to the world unless asked.
    request_log : bool
        Log one record per request on the ``qkv.request`` logger (its id, route template, status, time,
        hashed learner; ``qkv serve --log-format json``), and send the request id back in ``X-Request-ID``.

    Raises
    ------
    ValueError
        If a number is out of range.

    Examples
    --------
    >>> Settings(grading_queue=300).grading_queue
    300
    >>> Settings().grading_queue == waiting_line_bound()
    True
    >>> Settings(grading_concurrency=0)
    Traceback (most recent call last):
    ...
    ValueError: grading_concurrency must be at least 1, but it is 0.
    >>> Settings(grading_slice_s=-0.5)
    Traceback (most recent call last):
    ...
    ValueError: grading_slice_s must be 0 (off) or a positive number of seconds, not -0.5.
    """

    database_url: str | None = None
    secret_key: str | None = None
    allow_unsandboxed: bool = False
    # Measured best for a class on 2 cores (docs/operations.md): a grader is mostly waiting on its sandbox.
    grading_concurrency: int = 4
    grading_reserved: int = 1
    grading_queue: int = field(default_factory=waiting_line_bound)
    grading_per_client: int = 64
    grading_slice_s: float = 0.5
    grading_probe_s: float = 0.1
    identities_per_address: int = 200
    ipv6_prefix: int = DEFAULT_IPV6_PREFIX
    keep_submissions: int = 20
    client_storage_per_day: int = DEFAULT_CLIENT_BYTES_PER_DAY
    warm_spares: int = 2
    stuck_attempts: int = 3
    stuck_minutes: int = 10
    max_body_bytes: int = 128 * 1024
    max_code_bytes: int = 64 * 1024
    body_timeout_s: float = 10.0
    shutdown_grace_s: float = 20.0
    remote_wait_s: float = 25.0
    templates_dir: Path | None = None
    secure_cookies: bool = False
    require_sign_in: bool = False
    public_url: str | None = None
    lti_score_poll_s: float = 2.0
    allow_private_lms: bool = False
    lti_registration_deadline_s: float = 10.0
    retain_days: int | None = None
    after_solution_credit: AfterSolutionCredit = DEFAULT_CREDIT
    after_hint_credit: AfterSolutionCredit = DEFAULT_HINT_CREDIT
    request_log: bool = False
    metrics_token: str | None = None
    metrics_allow: tuple[str, ...] = LOOPBACK

    @property
    def help_policy(self) -> HelpPolicy:
        """What solves after help count: the one policy of the class grid, the exports and the LMS."""
        return HelpPolicy(self.after_solution_credit, self.after_hint_credit)

    @property
    def metrics_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        """``metrics_allow`` as networks.

        Examples
        --------
        >>> [str(n) for n in Settings(metrics_allow=("10.1.2.3", "fd00::/8")).metrics_networks]
        ['10.1.2.3/32', 'fd00::/8']
        """
        return tuple(ipaddress.ip_network(net, strict=False) for net in self.metrics_allow)

    def __post_init__(self) -> None:
        minimums = {
            "grading_concurrency": 1,
            "grading_queue": 0,
            "grading_reserved": 0,
            "grading_per_client": 1,
            "identities_per_address": 1,
            "keep_submissions": 1,
            "client_storage_per_day": 1024 * 1024,
            "warm_spares": 0,
            "stuck_attempts": 1,
            "stuck_minutes": 1,
            "max_body_bytes": 1024,
            "max_code_bytes": 1,
        }
        for name, least in minimums.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an int, not the {type(value).__name__} {value!r}.")
            if value < least:
                raise ValueError(f"{name} must be at least {least}, but it is {value}.")
        for name in ("grading_slice_s", "grading_probe_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e6:
                raise ValueError(f"{name} must be 0 (off) or a positive number of seconds, not {value!r}.")
        for name in ("body_timeout_s", "shutdown_grace_s", "lti_score_poll_s", "remote_wait_s"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}.")
        deadline = self.lti_registration_deadline_s
        if isinstance(deadline, bool) or not isinstance(deadline, int | float) or not 0 < deadline <= 10:
            raise ValueError(
                "lti_registration_deadline_s must be a number of seconds above 0 and at most 10, "
                f"not {deadline!r}."
            )
        if isinstance(self.ipv6_prefix, bool) or not isinstance(self.ipv6_prefix, int):
            raise ValueError(f"ipv6_prefix must be an int, not {self.ipv6_prefix!r}.")
        check_ipv6_prefix(self.ipv6_prefix)
        days = self.retain_days
        if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 1):
            raise ValueError(f"retain_days must be a whole number of days of at least 1, not {days!r}.")
        if self.public_url is not None:
            public_origin(self.public_url)  # a sentence saying what is wrong with it
        self._check_metrics()
        if self.secret_key is not None and len(self.secret_key) < 16:
            raise ValueError(
                f"secret_key must have at least 16 characters, but it has {len(self.secret_key)}; "
                "leave it unset to use a random key kept in the database."
            )

    def _check_metrics(self) -> None:
        if self.metrics_token is not None and len(self.metrics_token) < 16:
            raise ValueError(
                f"The metrics token must have at least 16 characters, but it has {len(self.metrics_token)}."
            )
        for net in self.metrics_allow:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise ValueError(
                    f"{net!r} in --metrics-allow is not an address or a network (10.0.0.0/8, 192.0.2.7, ::1)."
                ) from None
