"""Rosters (NRPS): from an instructor's launch, the instructor pulls the class's membership, and every
enrolled learner is in the class list, also those who never opened a lesson."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from tests.web.lti.fake_platform import CONTEXT_ID, FakePlatform
from tests.web.lti.launching import LmsBrowser


def test_pulling_the_roster_lists_learners_who_never_launched(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    platform.add_user("learner-2", "Charles Babbage")
    platform.add_user("learner-3", "Mary Somerville")  # five members: the LMS answers in three pages
    platform.add_user(
        "teacher-2", "Alan Turing", roles=["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"]
    )
    page = lms_browser.open(lms_browser.launch(platform, f"{url}/lessons/L4.1", "teacher-1"))
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert token, page.text
    pulled = lms_browser.client.post(
        f"{url}/instructor/lti/roster",
        data={
            "csrf_token": token.group(1),
            "issuer": platform.issuer,
            "client_id": "qkv-client",
            "context_id": CONTEXT_ID,
        },
    )
    assert pulled.status_code == 303, pulled.text
    shown = lms_browser.client.get(url + pulled.headers["location"], headers={"accept": "text/html"})
    assert "Roster pulled: 3 learners in the class list." in shown.text
    names = {learner.display_name for learner in app.state.qkv.store.instructors.learners()}
    assert {"Ada Lovelace", "Charles Babbage", "Mary Somerville"} <= names
    assert "Alan Turing" not in names and "Grace Hopper" not in names  # instructors are not learners
    export = lms_browser.client.get(f"{url}/instructor/export/lms.csv")
    assert export.status_code == 200, export.text
    rows = {row["display_name"]: row for row in csv.DictReader(io.StringIO(export.text.lstrip("\ufeff")))}
    assert {name: rows[name]["external_id"] for name in ("Ada Lovelace", "Charles Babbage")} == {
        "Ada Lovelace": "learner-1",
        "Charles Babbage": "learner-2",
    }  # the gradebook file is keyed by the LMS's ids


def test_a_roster_pull_needs_the_instructor_pages_token(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    lms_browser.open(lms_browser.launch(platform, f"{url}/lessons/L4.1", "teacher-1"))
    forged = lms_browser.client.post(
        f"{url}/instructor/lti/roster",
        data={
            "csrf_token": "forged",
            "issuer": platform.issuer,
            "client_id": "qkv-client",
            "context_id": CONTEXT_ID,
        },
        headers={"accept": "text/html"},
    )
    assert forged.status_code == 403
    assert "CSRF token does not match" in forged.text
