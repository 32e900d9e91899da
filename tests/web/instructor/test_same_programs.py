"""The similarity report: per code exercise, the course's learners whose newest programs are the same program
(names, layout, comments and docstrings aside), side by side; the reference solution's group is marked; no
other course's learner or program shows."""

from __future__ import annotations

import html
from collections.abc import Callable

from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.lessons import load_catalog
from qkv.store import MembershipSource, StaffRole
from tests.web.backend_fixtures import LESSON, sign_in_instructor

HTML = {"accept": "text/html"}
PASS = {"status": "pass", "tests": [{"name": "a", "status": "pass"}]}
FAIL = {"status": "fail", "tests": [{"name": "a", "status": "fail"}]}
ADA = "def param_count(d_model, d_k, d_v):\n    total = d_model * (2 * d_k + d_v)\n    return total\n"
BEA = "def param_count(d_model, d_k, d_v):\n    # mine\n    n = d_model*(2*d_k + d_v)\n    return n\n"
CAL = "def param_count(d_model, d_k, d_v):\n    return d_model * (d_k + d_k + d_v)\n"


def test_the_report_groups_the_course_learners_with_the_same_program(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app()
    store = app.state.qkv.store
    ours, theirs = store.courses.create("Attention 101"), store.courses.create("Attention 102")
    people = {}
    for name, course in (("Ada", ours), ("Bea", ours), ("Cal", ours), ("Dov", ours), ("Eve", theirs)):
        people[name] = store.accounts.find_or_create(None, f"s-{name}", f"{name} Example")
        store.courses.enrol(course.id, people[name], MembershipSource.ROSTER)
    solution = load_catalog().lesson(LESSON).exercises["functions"].solution
    assert solution is not None
    sent = {"Ada": [CAL, ADA], "Bea": [BEA], "Cal": [CAL], "Dov": [solution + "\n# done\n"], "Eve": [ADA]}
    for name, programs in sent.items():
        for program in programs:
            store.code.record(people[name], LESSON, "functions", program, PASS if program != CAL else FAIL)
    grace, token = store.instructors.add("Grace")
    store.courses.set_staff(ours.id, grace.id, StaffRole.INSTRUCTOR)
    client = TestClient(app)
    sign_in_instructor(app, client, token)
    page = client.get(f"/instructor/lessons/{LESSON}/same-programs", headers=HTML)
    assert page.status_code == 200, page.text
    text = html.unescape(page.text)
    assert "4 learners sent a program; 2 groups of the same program." in text
    assert "Group 1: 2 learners" in text and "Group 2: 1 learner, the reference solution" in text
    first = text[text.index("Group 1:") : text.index("Group 2:")]
    assert "Ada Example" in first and "Bea Example" in first and "Cal Example" not in first  # Ada's newest
    assert ADA.strip() in first and "# mine" in first  # each program as it was sent, side by side
    assert "Dov Example" in text[text.index("Group 2:") :]
    assert "Eve Example" not in text and people["Eve"] not in text  # another course's learner
    # Its instructor sees only Eve's group-less program: no group at all.
    other, other_token = store.instructors.add("Hal")
    store.courses.set_staff(theirs.id, other.id, StaffRole.INSTRUCTOR)
    hal = TestClient(app)
    sign_in_instructor(app, hal, other_token)
    theirs_page = html.unescape(hal.get(f"/instructor/lessons/{LESSON}/same-programs", headers=HTML).text)
    assert "1 learner sent a program; 0 groups" in theirs_page and "Ada Example" not in theirs_page
    assert (
        hal.get(f"/instructor/lessons/{LESSON}/same-programs", params={"course": ours.id}).status_code == 404
    )
    assert client.get("/instructor/lessons/L9.9/same-programs", headers=HTML).status_code == 404
