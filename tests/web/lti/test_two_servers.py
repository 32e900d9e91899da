"""Two qkv servers on one PostgreSQL database behind one public address: the login begins on one, the
launch lands on the other, and the learner is signed in; both publish the same tool key."""

from __future__ import annotations

import pytest

from tests.web.lti.conftest import served_platform, tool_server
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
