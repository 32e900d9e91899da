"""The cross-course matrix: every instructor and instructor-API route, read from the app, tried by every
person of a school with two LMSs (the project's fake LMS and the ``lti1p3platform`` package), two
courses on each, and a course made by hand with a roster.

Each LMS course has an instructor, a teaching assistant and two learners, all launched from that course;
the roster course has an instructor and a teaching assistant (granted as ``qkv instructor --course``
grants them) and two roster learners; an anonymous learner (no course) and a stranger (no cookie) come
too: 22 people. The app has 27 instructor and instructor-API routes (``test_every_route_is_in_the_matrix``
fails when one is added and not tried here); all but the public sign-in page and its form, 25, are tried
by every person to whom they apply: the view routes with every export, with and without ``?course=`` of
every other course; the object routes with every learner, every LMS class and every course. Each person
gets their own course's objects and a 404 for any other's, a teaching assistant a 403 for what only
instructors may do, a learner 403 (or 401) and a stranger 401 everywhere. 22 people × 25 routes, about
2,100 requests per database (counted as they run and printed with ``-s``).

Then the scores: every learner's launch score lands on its own course's line item only, and no score is
ever sent for an instructor or a teaching assistant. The attack of issue 35 fails at each step (the
second LMS's instructor sees, links and pulls nothing of the first LMS's class).

One server (uvicorn in a thread, as the LMSs must reach it) and plain HTTP clients: bounded by the
number of requests, not by any timing. The whole module runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from qkv.store import MembershipSource, StaffRole, parse_roster
from tests.web.backend_fixtures import app_routes
from tests.web.browser_support import serve
from tests.web.lti.conftest import served_platform, tool_server
from tests.web.lti.fake_platform import INSTRUCTOR, LEARNER, TEACHING_ASSISTANT, FakePlatform
from tests.web.lti.launching import LmsBrowser, posted_form, refresh_target, solvable, wait_for
from tests.web.lti.packaged_platform import PackagedPlatform, packaged_app

HTML = {"accept": "text/html"}
EXPORTS = ("gradebook.csv", "gradebook.json", "lms.csv", "events.csv", "items.csv")
ROLES = {"instructor": [INSTRUCTOR], "ta": [INSTRUCTOR, TEACHING_ASSISTANT], "learner": [LEARNER]}


@dataclass
class Person:
    """Someone of the school, with their own HTTP client (their browser's cookies)."""

    key: str
    kind: str  # stranger, anonymous, learner, instructor, ta
    course: str | None  # the course key: A1, A2 (fake LMS), B1, B2 (packaged LMS), R (roster)
    client: httpx.Client
    learner_id: str | None = None
    sub: str | None = None
    csrf: str = ""
    name: str = ""


@dataclass
class School:
    url: str
    app: Any
    fake: FakePlatform
    packaged: PackagedPlatform
    people: list[Person] = field(default_factory=list)
    course_ids: dict[str, str] = field(default_factory=dict)  # course key -> qkv course id
    contexts: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # course key -> LMS class key

    def learners(self) -> list[Person]:
        return [p for p in self.people if p.learner_id is not None]

    def staff(self) -> list[Person]:
        return [p for p in self.people if p.kind in {"instructor", "ta"}]


def _launch_fake(school: School, person: Person) -> httpx.Response:
    browser = LmsBrowser(school.url)
    browser.client = person.client
    return browser.launch(school.fake, f"{school.url}/lessons/L4.1", person.key)


def _launch_packaged(school: School, person: Person) -> httpx.Response:
    client = person.client
    login = client.get(f"{school.packaged.url}/start", params={"user": person.key}, follow_redirects=True)
    assert login.status_code == 200, login.text
    form_page = client.get(refresh_target(login), follow_redirects=True)
    action, fields = posted_form(form_page)
    return client.post(action, data=fields, headers=HTML)


def _csrf_of(person: Person) -> str:
    page = person.client.get("/instructor", headers=HTML)
    assert page.status_code == 200, f"{person.key}: {page.status_code} {page.text[:300]}"
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found, page.text[:300]
    return found.group(1)


def _lms_people(school: School) -> None:
    """Two courses on each LMS, each with an instructor, a teaching assistant and two learners."""
    for lms, launch in (("A", _launch_fake), ("B", _launch_packaged)):
        for number in (1, 2):
            course = f"{lms}{number}"
            for kind, index in (("instructor", 1), ("ta", 1), ("learner", 1), ("learner", 2)):
                key = f"{course}-{kind}-{index}"
                name = f"Person {key}"
                if lms == "A":
                    school.fake.add_user(key, name, ROLES[kind], context=course)
                else:
                    school.packaged.people[key] = (name, ROLES[kind], course)
                client = httpx.Client(base_url=school.url, timeout=30)
                person = Person(key, kind, course, client, sub=key, name=name)
                launched = launch(school, person)
                assert launched.status_code == 200, f"{key}: {launched.text[:300]}"
                school.people.append(person)
            issuer = school.fake.issuer if lms == "A" else school.packaged.url
            found = [c for c in school.app.state.qkv_lti.links.contexts() if c.context_id == course]
            assert len(found) == 1 and found[0].issuer == issuer
            school.course_ids[course] = str(found[0].course_id)
            school.contexts[course] = (found[0].issuer, found[0].client_id, found[0].context_id)
    accounts = school.app.state.qkv.store.accounts
    for person in school.people:
        if person.kind == "learner":
            issuer = school.fake.issuer if person.course and person.course[0] == "A" else school.packaged.url
            found = accounts.find(issuer, person.key)
            assert found is not None, person.key
            person.learner_id = found.learner_id


def _roster_people(school: School) -> None:
    """A course made by hand: its roster's two learners, an instructor and a teaching assistant."""
    store = school.app.state.qkv.store
    course = store.courses.create("Roster course")
    school.course_ids["R"] = course.id
    made = store.accounts.import_roster(parse_roster("name,external id\nPerson R-1,r-1\nPerson R-2,r-2\n"))
    for record, token in made:
        store.courses.enrol(course.id, record.learner_id, MembershipSource.ROSTER)
        person = Person(f"R-learner-{record.external_id}", "learner", "R", httpx.Client(base_url=school.url))
        person.learner_id, person.name = record.learner_id, str(record.display_name)
        assert person.client.post("/sign-in", data={"token": token}).status_code in {200, 303}
        school.people.append(person)
    for kind, role in (("instructor", StaffRole.INSTRUCTOR), ("ta", StaffRole.TEACHING_ASSISTANT)):
        instructor, token = store.instructors.add(f"Roster {kind}")
        store.courses.set_staff(course.id, instructor.id, role)
        person = Person(f"R-{kind}", kind, "R", httpx.Client(base_url=school.url))
        assert person.client.post("/instructor/sign-in", data={"token": token}).status_code == 303
        school.people.append(person)


def _answer_right(school: School, client: httpx.Client, page: httpx.Response) -> None:
    """Answer an exercise of L4.1 right with the CSRF token of ``page``, as that page would."""
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert token
    exercise, right = solvable(school.app)
    answered = client.post(
        "/api/lessons/L4.1/answers",
        json={"exercise_id": exercise, "answer": right},
        headers={"X-CSRF-Token": token.group(1)},
    )
    assert answered.status_code == 200, answered.text


def _others(school: School) -> None:
    anonymous = Person("anonymous", "anonymous", None, httpx.Client(base_url=school.url))
    _answer_right(school, anonymous.client, anonymous.client.get("/lessons/L4.1", headers=HTML))
    store = school.app.state.qkv.store
    (anonymous.learner_id,) = {r.id for r in store.instructors.learners()} - {
        p.learner_id for p in school.people
    }
    school.people.append(anonymous)
    school.people.append(Person("stranger", "stranger", None, httpx.Client(base_url=school.url)))


@contextmanager
def _database(request: pytest.FixtureRequest, folder: Path) -> Iterator[str]:
    """A SQLite file, or a fresh PostgreSQL schema dropped afterwards (as the store tests' own)."""
    if request.param == "sqlite":
        yield f"sqlite:///{folder / 'qkv.db'}"
        return
    admin_url = str(request.getfixturevalue("postgres_admin_url"))
    schema = f"qkv_school_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        separator = "&" if "?" in admin_url else "?"
        yield f"{admin_url}{separator}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def school(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[School]:
    """The school, on SQLite and on PostgreSQL."""
    folder: Path = tmp_path_factory.mktemp("school")
    packaged = PackagedPlatform()
    with (
        _database(request, folder) as database_url,
        served_platform() as fake,
        serve(packaged_app(packaged), name="packaged-lms") as packaged_url,
        tool_server(database_url) as (url, app),
    ):
        fake.tool_url = url
        fake.register_with(app.state.qkv_lti.platforms)
        packaged.url, packaged.tool_url, packaged.target = packaged_url, url, f"{url}/lessons/L4.1"
        packaged.register_with(app.state.qkv_lti.platforms)
        built = School(url, app, fake, packaged)
        _lms_people(built)
        _roster_people(built)
        _others(built)
        for person in built.staff():
            person.csrf = _csrf_of(person)
        yield built
        for person in built.people:
            person.client.close()


# -- the routes ------------------------------------------------------------------------------------


def _app_routes(app: Any) -> set[tuple[str, str]]:
    return {
        (method, route.path)
        for route in app_routes(app)
        for method in getattr(route, "methods", None) or ()
        if method != "HEAD" and route.path.startswith(("/instructor", "/api/instructor"))
    }


# The course's views: each a GET of the chosen course's learners (path parameters filled in).
VIEWS = {
    ("GET", "/instructor"): ["/instructor"],
    ("GET", "/instructor/class"): ["/instructor/class"],
    ("GET", "/instructor/live/lessons"): ["/instructor/live/lessons"],
    ("GET", "/instructor/live/stuck"): ["/instructor/live/stuck"],
    ("GET", "/instructor/live/grid"): ["/instructor/live/grid"],
    ("GET", "/instructor/lessons/{lesson_id}"): ["/instructor/lessons/L4.1"],
    ("GET", "/instructor/lessons/{lesson_id}/items"): ["/instructor/lessons/L4.1/items"],
    ("GET", "/instructor/lessons/{lesson_id}/same-programs"): ["/instructor/lessons/L4.1/same-programs"],
    ("GET", "/instructor/export/items.csv"): ["/instructor/export/items.csv"],
    ("GET", "/instructor/export/{name}"): [f"/instructor/export/{name}" for name in EXPORTS[:4]],
    ("GET", "/api/instructor/dashboard"): ["/api/instructor/dashboard"],
    ("GET", "/api/instructor/class"): ["/api/instructor/class"],
    ("GET", "/api/instructor/lessons/{lesson_id}"): ["/api/instructor/lessons/L4.1"],
    ("GET", "/instructor/lti"): ["/instructor/lti"],
    ("GET", "/instructor/mistakes"): ["/instructor/mistakes", "/instructor/mistakes?lesson=L4.1"],
    ("GET", "/api/instructor/mistakes"): ["/api/instructor/mistakes"],
    ("GET", "/instructor/dates"): ["/instructor/dates"],
}
# Views that list the course's learners by id (the others give numbers or nothing of theirs yet).
LISTING = {
    "/instructor/class",
    "/instructor/live/grid",
    "/api/instructor/class",
    "/instructor/export/gradebook.csv",
}
INSTRUCTORS_ONLY = {"/instructor/lti"}
OBJECTS = {
    ("GET", "/instructor/learners/{learner_id}"),
    ("POST", "/instructor/learners/{learner_id}/sign-in-link"),
    ("POST", "/instructor/lti/roster"),
    ("POST", "/instructor/course"),
    ("POST", "/instructor/mistakes/{group_id}"),  # test_a_class_s_mistakes_and_notes_stay_in_their_course
    ("POST", "/instructor/dates"),
    ("POST", "/instructor/learners/{learner_id}/extension"),
}
DUE_FORM = {"lesson": "L4.1", "due": "2030-01-01 12:00", "late_credit": "0.5"}
PUBLIC = {("GET", "/instructor/sign-in"), ("POST", "/instructor/sign-in")}  # a sign-in link's page
SIGN_OUT = {("POST", "/instructor/sign-out"), ("POST", "/api/instructor/sign-out")}


class Tally:
    def __init__(self) -> None:
        self.requests = 0
        self.forms: set[str] = set()

    def get(self, person: Person, form: str, path: str, **kwargs: Any) -> httpx.Response:
        self.requests += 1
        self.forms.add(form)
        return person.client.get(path, headers=HTML, **kwargs)

    def post(self, person: Person, form: str, path: str, data: dict[str, str]) -> httpx.Response:
        self.requests += 1
        self.forms.add(form)
        return person.client.post(path, data={"csrf_token": person.csrf, **data}, headers=HTML)


def _secrets_of(school: School, person: Person) -> list[str]:
    """What of another course's learners must never show: their ids and names."""
    found = []
    for other in school.learners():
        if other.course != person.course:
            assert other.learner_id is not None
            found.append(other.learner_id)
            if other.name:
                found.append(other.name)
    return found


def test_every_route_is_in_the_matrix(school: School) -> None:
    routes = _app_routes(school.app)
    covered = set(VIEWS) | OBJECTS | PUBLIC | SIGN_OUT
    assert routes == covered, f"routes not in the matrix: {routes - covered}; gone: {covered - routes}"


def test_strangers_and_learners_get_no_instructor_route(school: School) -> None:
    tally = Tally()
    for person in school.people:
        if person.kind not in {"stranger", "learner", "anonymous"}:
            continue
        # A stranger is asked to sign in (401); a learner's browser is refused (403 with a learner cookie,
        # 401 with only an LMS or roster learner's session): never an instructor's answer, never a 404.
        expected = {401} if person.kind == "stranger" else {401, 403}
        for paths in VIEWS.values():
            for path in paths:
                assert tally.get(person, path, path).status_code in expected, (person.key, path)
        for learner in school.learners():
            path = f"/instructor/learners/{learner.learner_id}"
            assert tally.get(person, "learner page", path).status_code in expected
            made = tally.post(person, "sign-in link", f"{path}/sign-in-link", {})
            assert made.status_code in expected
            extended = tally.post(person, "extension", f"{path}/extension", {"lesson": "L4.1", "days": "2"})
            assert extended.status_code in expected
        assert tally.post(person, "dates", "/instructor/dates", DUE_FORM).status_code in expected
        for course_id in school.course_ids.values():
            chosen = tally.post(person, "picker", "/instructor/course", {"course": course_id})
            assert chosen.status_code in expected
        for issuer, client_id, context_id in school.contexts.values():
            form = {"issuer": issuer, "client_id": client_id, "context_id": context_id}
            assert tally.post(person, "roster", "/instructor/lti/roster", form).status_code in expected
        for _, path in sorted(SIGN_OUT):
            assert tally.post(person, path, path, {}).status_code in expected
    print(f"strangers and learners: {tally.requests} requests over {len(tally.forms)} route forms")


def test_each_staff_member_sees_only_their_course(school: School) -> None:
    tally = Tally()
    for person in school.staff():
        secrets = _secrets_of(school, person)
        mine = school.course_ids[str(person.course)]
        own = [p.learner_id for p in school.learners() if p.course == person.course]
        for paths in VIEWS.values():
            for path in paths:
                answer = tally.get(person, path, path)
                if person.kind == "ta" and path in INSTRUCTORS_ONLY:
                    assert answer.status_code == 403, (person.key, path)
                    continue
                assert answer.status_code == 200, (person.key, path, answer.text[:300])
                leaked = [secret for secret in secrets if secret in answer.text]
                assert not leaked, f"{person.key} saw {leaked} on {path}"
                if path in LISTING:
                    assert all(str(i) in answer.text for i in own), (person.key, path)
                for key, course_id in school.course_ids.items():
                    if course_id != mine:
                        other = tally.get(person, path, path, params={"course": course_id})
                        assert other.status_code == 404, (person.key, path, key)
                assert tally.get(person, path, path, params={"course": mine}).status_code in {200, 403}
    print(f"staff views: {tally.requests} requests over {len(tally.forms)} route forms")


def test_another_courses_objects_answer_404(school: School) -> None:
    tally = Tally()
    for person in school.staff():
        for learner in school.learners():
            path = f"/instructor/learners/{learner.learner_id}"
            page = tally.get(person, "learner page", path)
            made = tally.post(person, "sign-in link", f"{path}/sign-in-link", {})
            extended = tally.post(person, "extension", f"{path}/extension", {"lesson": "L4.1", "days": "2"})
            if learner.course != person.course:
                assert (page.status_code, made.status_code) == (404, 404), (person.key, learner.key)
                assert extended.status_code == 404, (person.key, learner.key)
                continue
            # A teaching assistant gives no extension; an instructor is told L4.1 has no due date here yet.
            assert extended.status_code == (403 if person.kind == "ta" else 400), (
                person.key,
                extended.text[:300],
            )
            assert page.status_code == 200, (person.key, learner.key)
            if person.kind == "ta":
                assert made.status_code == 403  # a teaching assistant acts for nobody
            elif learner.course == "R":
                assert made.status_code == 200 and "sign-in#token=" in made.text
            else:
                assert made.status_code == 403 and "signs in through it" in made.text  # an LMS learner
        for key, (issuer, client_id, context_id) in school.contexts.items():
            form = {"issuer": issuer, "client_id": client_id, "context_id": context_id}
            pulled = tally.post(person, "roster", "/instructor/lti/roster", form)
            if key != person.course:
                assert pulled.status_code == 404, (person.key, key)
            elif person.kind == "ta":
                assert pulled.status_code == 403
            else:  # the fake LMS serves its roster; the packaged one has none to pull
                assert pulled.status_code == (303 if key[0] == "A" else 502), (person.key, pulled.text[:300])
        for key, course_id in school.course_ids.items():
            chosen = tally.post(person, "picker", "/instructor/course", {"course": course_id})
            assert chosen.status_code == (303 if key == person.course else 404), (person.key, key)
            dated = person.client.post(
                "/instructor/dates",
                params={"course": course_id},
                data={"csrf_token": person.csrf, **DUE_FORM, "clear": "1"},
                headers=HTML,
            )
            tally.requests += 1
            wanted = 404 if key != person.course else (403 if person.kind == "ta" else 303)
            assert dated.status_code == wanted, (person.key, key, dated.text[:300])
    print(f"staff objects: {tally.requests} requests over {len(tally.forms)} route forms")


def test_a_roster_pull_fills_only_its_course_with_its_learners(school: School) -> None:
    store = school.app.state.qkv.store
    for key in ("A1", "A2"):
        members = {r.id for r in store.instructors.within(_scope(school, key)).learners()}
        expected = {p.learner_id for p in school.learners() if p.course == key}
        assert members == expected, key  # the pull added nobody else, and no instructor or assistant


def _scope(school: School, key: str) -> Any:
    from qkv.store import LearnerScope

    return LearnerScope(school.course_ids[key])


def test_scores_land_only_on_their_own_courses_line_items(school: School) -> None:
    fake, packaged = school.fake, school.packaged
    for key in ("A1", "A2"):
        item = fake.item_of(key, "L4.1")
        learners = {p.sub for p in school.learners() if p.course == key}
        wanted = len(learners)
        wait_for(lambda item=item, n=wanted: len(fake.received(item)) >= n, f"the scores of {key}")
        assert {score["userId"] for score in fake.received(item)} == learners
    for key in ("B1", "B2"):
        learners = {p.sub for p in school.learners() if p.course == key}
        wanted = len(learners)
        wait_for(lambda key=key, n=wanted: len(packaged.received.get(key, [])) >= n, f"the scores of {key}")
        assert {score["userId"] for score in packaged.received[key]} == learners
    staff = {p.sub for p in school.staff()}
    every_score = [s for item in fake.scores.values() for s in item] + packaged.scores
    assert not staff & {score["userId"] for score in every_score}  # never a score for staff


def test_the_attack_of_issue_35_fails_at_every_step(school: School) -> None:
    attacker = next(p for p in school.staff() if p.key == "B1-instructor-1")
    victim = next(p for p in school.learners() if p.key == "A1-learner-1")
    listed = attacker.client.get("/api/instructor/class")
    assert listed.status_code == 200 and str(victim.learner_id) not in listed.text
    link = attacker.client.post(
        f"/instructor/learners/{victim.learner_id}/sign-in-link", data={"csrf_token": attacker.csrf}
    )
    assert link.status_code == 404
    issuer, client_id, context_id = school.contexts["A1"]
    form = {"csrf_token": attacker.csrf, "issuer": issuer, "client_id": client_id, "context_id": context_id}
    assert attacker.client.post("/instructor/lti/roster", data=form).status_code == 404
    # Even the victim's own course's instructor cannot act as an LMS learner: they sign in through the LMS.
    teacher = next(p for p in school.staff() if p.key == "A1-instructor-1")
    own = teacher.client.post(
        f"/instructor/learners/{victim.learner_id}/sign-in-link", data={"csrf_token": teacher.csrf}
    )
    assert own.status_code == 403


def _seed_mistakes(school: School) -> dict[str, str]:
    """A failing function of one behaviour per course, made by each of its learners: the group of each."""
    from qkv.store.work.mistake_signatures import group_key, record_signatures_in

    store = school.app.state.qkv.store
    groups = {}
    for key in school.course_ids:
        signature = _signature_of(key)
        groups[key] = group_key("L4.1", "functions", "project_qkv", signature)
        failed = {"status": "fail", "signatures": {"project_qkv": signature}, "tests": []}
        with store.database.write() as conn:
            for learner in (p for p in school.learners() if p.course == key):
                record_signatures_in(conn, str(learner.learner_id), "L4.1", "functions", f"# {key}", failed)
    return groups


def test_a_class_s_mistakes_and_notes_stay_in_their_course(school: School) -> None:
    """Each course's groups are its own: listed, named and noted in it alone; a learner or a stranger
    names none."""
    groups = _seed_mistakes(school)
    tally = Tally()
    for person in school.people:
        for key, group in groups.items():
            answer = tally.post(
                person, "name a group", f"/instructor/mistakes/{group}", {"sentence": f"{key}."}
            )
            if person.kind in {"stranger", "learner", "anonymous"}:
                assert answer.status_code in ({401} if person.kind == "stranger" else {401, 403}), person.key
            elif key != person.course:
                assert answer.status_code == 404, (person.key, key)
            elif person.kind == "instructor":
                assert answer.status_code == 303, (person.key, key, answer.text[:300])
            else:  # a teaching assistant's proposal; refused once an instructor has named the group
                assert answer.status_code in {303, 422}, (person.key, key, answer.text[:300])
        if person.kind in {"instructor", "ta"}:
            listed = person.client.get("/api/instructor/mistakes").json()
            assert [g["id"] for g in listed] == [groups[str(person.course)]], person.key
    store = school.app.state.qkv.store
    failed = {"status": "fail", "tests": []}
    for learner in school.learners():
        own = store.mistakes.notes_for(str(learner.learner_id), "L4.1", "functions", failed)
        assert own == []  # no signature, no note
        for key in groups:
            signed = store.mistakes.notes_for(
                str(learner.learner_id),
                "L4.1",
                "functions",
                {"status": "fail", "signatures": {"project_qkv": _signature_of(key)}, "tests": []},
            )
            expected = [f"{key}."] if key == learner.course else []
            assert [note.sentence for note in signed] == expected, (learner.key, key)
    print(f"class mistakes: {tally.requests} requests")


def _signature_of(key: str) -> str:
    import hashlib

    return hashlib.sha256(key.encode()).hexdigest()[:32]


def test_a_learner_of_two_courses_gets_the_score_on_each_and_a_mentor_gets_none(school: School) -> None:
    """Last: it adds people to A1 and A2. Progress is one per person: one solved exercise is the score of
    the lesson in every course the learner launched it from, each on its own line item."""
    fake, store = school.fake, school.app.state.qkv.store
    both = Person("A-both", "learner", "A1", httpx.Client(base_url=school.url, timeout=30), sub="A-both")
    fake.add_user("A-both", "Person A-both", [LEARNER], context="A1")
    assert _launch_fake(school, both).status_code == 200
    fake.users["A-both"].context = "A2"
    _answer_right(
        school, both.client, both.client.get(refresh_target(_launch_fake(school, both)), headers=HTML)
    )
    for key in ("A1", "A2"):
        item = fake.item_of(key, "L4.1")
        wait_for(
            lambda item=item: any(
                s["userId"] == "A-both" and s["scoreGiven"] > 0 for s in fake.received(item)
            ),
            f"the solved score on {key}'s line item",
        )
    mentor = Person("A-mentor", "other", "A1", httpx.Client(base_url=school.url, timeout=30), sub="A-mentor")
    fake.add_user(
        "A-mentor", "Person A-mentor", ["http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"], "A1"
    )
    assert _launch_fake(school, mentor).status_code == 200
    found = store.accounts.find(fake.issuer, "A-mentor")
    assert found is not None and store.courses.courses_of(found.learner_id) == []
    assert school.app.state.qkv_lti.links.line_items(found.learner_id, "L4.1") == []
    for client in (both.client, mentor.client):
        client.close()
