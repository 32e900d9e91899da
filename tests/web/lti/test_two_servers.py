"""Two qkv servers on one PostgreSQL database behind one public address: the login begins on one, the
launch lands on the other, and the learner is signed in; both publish the same tool key; racing on a
course's first launches of a lesson, they make one column."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from qkv.web.lti import line_items
from qkv.web.lti.deep_linking import PickedLesson
from tests.time_scale import scaled
from tests.web.lti.conftest import served_platform, tool_server
from tests.web.lti.fake_platform import CLIENT_ID
from tests.web.lti.launching import LmsBrowser

pytestmark = pytest.mark.postgres
PUBLIC = "http://qkv.school.test"  # the load balancer's address, which both servers are told


def test_login_on_one_server_and_launch_on_the_other(postgres_url: str) -> None:
    with (
        served_platform() as platform,
        tool_server(postgres_url, public_url=PUBLIC) as (first_url, first_app),
        tool_server(postgres_url, public_url=PUBLIC) as (second_url, _),
    ):
        platform.tool_url = first_url
        platform.register_with(first_app.state.qkv_lti.platforms)
        platform.add_user("learner-1", "Ada Lovelace")
        first = LmsBrowser(first_url)
        answer = first.launch(
            platform, f"{PUBLIC}/lessons/L4.4", "learner-1", launch_url=f"{second_url}/lti/launch"
        )
        assert answer.status_code == 200, answer.text
        second = LmsBrowser(second_url)
        second.client.cookies = first.client.cookies  # the same browser, reaching the other server
        lesson = second.open(answer)
        assert lesson.status_code == 200 and "Ada Lovelace" in lesson.text
        keys = [
            b.client.get(f"{u}/lti/jwks.json").json() for b, u in ((first, first_url), (second, second_url))
        ]
        assert keys[0] == keys[1]  # one tool key, kept in the database, whichever server signs
        first.close(), second.close()


def test_two_servers_racing_on_first_launches_make_one_column_per_lesson(postgres_url: str) -> None:
    """Both servers look up and make a course's line item for the same lesson at the same moment (a
    barrier starts each pair), many times over: the database's lock lets one make it, the other finds it."""
    rounds = 12
    with (
        served_platform() as platform,
        tool_server(postgres_url, public_url=PUBLIC) as (first_url, first_app),
        tool_server(postgres_url, public_url=PUBLIC) as (_, second_app),
    ):
        platform.tool_url = first_url
        tools = [first_app.state.qkv_lti, second_app.state.qkv_lti]
        platform.register_with(tools[0].platforms)
        record = tools[0].platforms.find(platform.issuer, CLIENT_ID)
        assert record is not None
        barrier = threading.Barrier(2, timeout=scaled(30))
        found: dict[int, list[str]] = {}

        def launch(tool: Any, resource: PickedLesson) -> str:
            barrier.wait()
            return line_items.find_or_create(
                tool.client, tool.tokens, record, platform.lineitems_url(), resource, links=tool.links
            )

        with ThreadPoolExecutor(max_workers=2) as pool:
            for n in range(rounds):
                resource = PickedLesson(f"R{n}", f"Race {n}", 5)
                futures = [pool.submit(launch, tool, resource) for tool in tools]
                found[n] = [future.result(timeout=scaled(60)) for future in futures]
        for n, urls in found.items():
            made = [item for item in platform.line_items.values() if item["resourceId"] == f"R{n}"]
            assert len(made) == 1, f"round {n}: {len(made)} columns for one lesson"
            assert urls == [made[0]["id"]] * 2  # both servers send the lesson's scores to that one column
