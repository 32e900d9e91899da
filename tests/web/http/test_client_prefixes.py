"""Every per-address bound counts an IPv6 client by its prefix (a /64 unless set otherwise).

One subscriber is usually given a whole /64, so addresses of one /64 share the bounds of one address: the
grading line, the new learners an address may start, the storage budget and the request rates all count by
``qkv.web.http.clients.client_key``. Addresses of different /64s are different clients.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.grading.results import GradeResult, TestResult
from qkv.web.http.clients import client_key
from qkv.web.lti.login_limits import LoginLimits
from qkv.web.runs.local_queue import GradingClosed, GradingQueue
from qkv.web.settings import Settings
from tests.web.backend_fixtures import CORRECT_SOLUTION, Browser

ONE_64 = [f"2001:db8:1:2:{n:x}:{n * 7:x}::{n + 1:x}" for n in range(50)]
OTHER_64S = [f"2001:db8:1:{n + 3:x}::1" for n in range(50)]


def _learner(app: FastAPI, host: str) -> Browser:
    """A learner's browser whose requests come from ``host``."""
    learner = Browser(app)
    learner.client = TestClient(app, client=(host, 50000), raise_server_exceptions=False)
    return learner.open_lesson()


def test_one_helper_maps_every_address_to_its_bound_key() -> None:
    assert {client_key(host) for host in ONE_64} == {"2001:db8:1:2::/64"}
    assert len({client_key(host) for host in OTHER_64S}) == len(OTHER_64S)
    assert client_key("::ffff:198.51.100.4") == client_key("198.51.100.4") == "198.51.100.4"
    assert client_key("198.51.100.4") != client_key("198.51.100.5")  # IPv4: the whole address
    assert len({client_key(host, 128) for host in ONE_64}) == len(ONE_64)  # --ipv6-prefix 128
    assert {client_key(host, 48) for host in ONE_64 + OTHER_64S} == {"2001:db8:1::/48"}


@pytest.mark.parametrize("prefix", [31, 129, True, "64"])
def test_a_prefix_out_of_range_is_refused_with_a_sentence(prefix: Any) -> None:
    with pytest.raises(ValueError, match=r"ipv6_prefix must be an int|a whole number from 32 to 128"):
        Settings(ipv6_prefix=prefix)


def test_new_learners_of_one_64_are_bounded_together(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(identities_per_address=3)
    savers = [_learner(app, host) for host in ONE_64[:3]]
    assert [learner.answer("q", "3, 2").status_code for learner in savers] == [200, 200, 200]
    for host in ONE_64[3:8]:  # any other address of that /64 is the same client
        refused = _learner(app, host).answer("q", "3, 2")
        assert refused.status_code == 429, refused.text
        assert refused.json()["detail"].startswith("This address has started 3 new learners")
    # Addresses of other /64s are other clients, each with the whole bound.
    assert [_learner(app, host).answer("q", "3, 2").status_code for host in OTHER_64S[:6]] == [200] * 6


def test_with_a_longer_prefix_the_addresses_of_a_64_are_separate(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(identities_per_address=1, ipv6_prefix=128)
    assert [_learner(app, host).answer("q", "3, 2").status_code for host in ONE_64[:5]] == [200] * 5


def test_storage_of_one_64_is_counted_together(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    budgets = app.state.qkv.store.budgets
    for host in ONE_64[:4]:
        assert _learner(app, host).answer("q", "3, 2").status_code == 200
    shared = budgets.spent_today("2001:db8:1:2::/64")
    assert shared > 0
    assert _learner(app, ONE_64[10]).answer("q", "3, 2").status_code == 200
    assert budgets.spent_today("2001:db8:1:2::/64") > shared  # a fifth address adds to the same count
    assert _learner(app, OTHER_64S[0]).answer("q", "3, 2").status_code == 200
    assert budgets.spent_today("2001:db8:1:3::/64") > 0  # another /64: a count of its own


class _LineRecorder:
    """Stands in for the grading queue: records whose turn each program takes, and takes none (503)."""

    def __init__(self) -> None:
        self.clients: list[str] = []

    def submit(self, source: str, suite: Any, owner: str | None = None, client: str = "") -> Any:
        self.clients.append(client)
        raise GradingClosed("This test grades nothing.")


def test_the_grading_line_counts_a_64_as_one_client(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    line = _LineRecorder()
    services = app.state.qkv
    queue, services.queue = services.queue, line
    try:
        for host in ONE_64[:5] + OTHER_64S[:3] + ["::ffff:192.0.2.9", "192.0.2.9"]:
            assert _learner(app, host).submit_code(CORRECT_SOLUTION).status_code == 503
    finally:
        services.queue = queue
    assert line.clients[:5] == ["2001:db8:1:2::/64"] * 5
    assert line.clients[5:8] == ["2001:db8:1:3::/64", "2001:db8:1:4::/64", "2001:db8:1:5::/64"]
    assert line.clients[8:] == ["192.0.2.9", "192.0.2.9"]


def test_lti_logins_of_one_64_share_one_rate(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    app.state.qkv_lti.platforms.add(
        "https://lms.example",
        "c",
        ["d"],
        "https://lms.example/auth",
        "https://lms.example/token",
        "https://lms.example/jwks",
    )
    app.state.qkv_lti_login_limits = LoginLimits(per_minute=3, pending=100)
    query = {
        "iss": "https://lms.example",
        "login_hint": "u",
        "target_link_uri": "http://testserver/lessons/L4.1",
    }

    def login(host: str) -> int:
        return TestClient(app, client=(host, 50000)).get("/lti/login", params=query).status_code

    assert [login(host) for host in ONE_64[:3]] == [200, 200, 200]
    assert [login(host) for host in ONE_64[3:6]] == [429, 429, 429]  # the same /64: the same rate
    assert [login(host) for host in OTHER_64S[:3]] == [200, 200, 200]


def test_the_grading_line_bounds_the_addresses_of_a_64_together(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    gate = threading.Event()
    gate.set()

    def grade(source: str, suite: Any, seed: int | None = None) -> GradeResult:
        assert gate.wait(30), "the test never let the grading finish"
        return GradeResult("fail", "Not graded in this test.", [TestResult("t", "fail", "No.")], 1, 1, "test")

    queue = GradingQueue(grade, concurrency=1, capacity=50, per_client=2)
    services = app.state.qkv
    original, services.queue = services.queue, queue
    try:
        same = [_learner(app, host) for host in ONE_64[:4]]  # four addresses of one /64
        other = _learner(app, OTHER_64S[0])
        for learner in [*same, other]:  # a first program each: their next ones count against the bound
            assert learner.submit_code("x = 1").status_code == 200
        gate.clear()
        answers: list[Any] = []
        # One at a time: the first must be running before the others wait, or (on a busy machine whose
        # grader thread has not yet taken it) three would wait and the third be refused.
        threads = [_send(same[0], answers)]
        _until(lambda: queue.counts() == (0, 1))
        threads += [_send(learner, answers) for learner in same[1:3]]
        _until(lambda: queue.admitted == 3)  # one graded, two waiting: the /64's share is full
        refused = same[3].submit_code("x = 2")
        assert refused.status_code == 429, refused.text
        assert refused.json()["detail"].startswith("Your network already has 2 programs waiting")
        threads.append(_send(other, answers))  # another /64 is another client
        _until(lambda: queue.admitted == 4)
        gate.set()
        for thread in threads:
            thread.join(30)
        assert [answer.status_code for answer in answers] == [200] * 4
    finally:
        gate.set()
        queue.close(timeout_s=10)
        services.queue = original


def _send(learner: Browser, answers: list[Any]) -> threading.Thread:
    thread = threading.Thread(target=lambda: answers.append(learner.submit_code("while True: pass")))
    thread.start()
    return thread


def _until(condition: Callable[[], bool]) -> None:
    """Poll the queue's own state (30 s only bounds a test that would otherwise hang)."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "waited 30 s for the programs in line"
        time.sleep(0.05)
