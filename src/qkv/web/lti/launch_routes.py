"""``/lti/login`` (OIDC third-party initiation), ``/lti/launch`` (the id token) and ``/lti/jwks.json``.

The login answers with a page that sends the browser on to the LMS's auth URL (a ``<meta>`` refresh,
since every ``Location`` this server sends is kept on this server; or, when the LMS offers its
postMessage storage, after storing the state there: ``frame_login``); the launch answers with a page that
opens the lesson (or, for an instructor, the class's LTI page) from this site, so the cookies it set are
sent with that first request; inside an LMS's iframe, a button opens it in a new window
(``framed_launch``). The LTI pages may be framed by the registered platform only (``framing``). Every
refusal is a 4xx with a sentence, and nothing is logged as a traceback.
"""

from __future__ import annotations

import logging
from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import urlencode

import jwt
from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, JSONResponse, Response

from qkv.store import StoreError
from qkv.store.instructor.courses import CourseRecord, MembershipSource
from qkv.store.lti.logins import LoginsFull, state_digest
from qkv.store.lti.platforms import PlatformRecord
from qkv.web.http.clients import request_client_key
from qkv.web.http.forms import parse_form
from qkv.web.lesson_progress import build_progress
from qkv.web.lti import accounts_bridge, frame_login, framed_launch, framing, line_items, state_cookie
from qkv.web.lti.claims import DEEP_LINKING_REQUEST, LESSON_PARAMETER, CourseRole, Launch
from qkv.web.lti.deep_link_routes import offered_lessons, picker_page
from qkv.web.lti.frame_login import split_state
from qkv.web.lti.id_token import MAX_TOKEN_CHARS, state_refusal
from qkv.web.lti.instructor_launch import sign_in_instructor
from qkv.web.lti.login_limits import LoginLimits
from qkv.web.lti.login_params import check_login_params
from qkv.web.lti.origin import origin_of
from qkv.web.lti.refusal import LaunchRefused
from qkv.web.lti.scores import queue_lesson_score
from qkv.web.lti.service_tokens import ServiceUnavailable
from qkv.web.lti.targets import lesson_target
from qkv.web.lti.tool import LtiTool
from qkv.web.services import AppServices, Services

log = logging.getLogger("qkv.web.lti")
router = APIRouter(include_in_schema=False)
_NO_STORE = {"Cache-Control": "no-store"}
_MAX_FORM_BYTES = 96 * 1024  # an id token with roles, context and service claims is a few KiB
_MAX_FORM_FIELDS = 40  # LMSs add fields of their own (Canvas: canvas_region, lti_storage_target, ...)


def tool_of(request: Request) -> LtiTool:
    """The server's LTI tool."""
    found: LtiTool = request.app.state.qkv_lti
    return found


async def _params(request: Request) -> dict[str, str]:
    if request.method == "GET":
        return {key: value for key, value in request.query_params.items()}
    body = await request.body()
    content_type = request.headers.get("content-type", "")
    return parse_form(body, content_type, max_fields=_MAX_FORM_FIELDS, max_bytes=_MAX_FORM_BYTES)


def _continue_page(url: str, title: str, text: str, status: int = 200) -> HTMLResponse:
    """A page that sends the browser on to ``url`` at once (with a link for when refresh is off)."""
    link = escape(url, quote=True)
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={link}"><title>{escape(title)}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml"></head>'
        f'<body><main><p>{escape(text)} <a href="{link}">Continue</a>.</p></main></body></html>'
    )
    return HTMLResponse(body, status_code=status, headers=_NO_STORE)


def _refused(refusal: LaunchRefused, framers: list[PlatformRecord] | None = None) -> HTTPException:
    """The refusal as an HTTP error; its page may be framed by ``framers`` (registered platforms of the
    request's issuer), so a teacher reads the sentence inside the LMS's iframe."""
    log.info("LTI request refused (%d): %s", refusal.status, refusal)
    retry = getattr(refusal, "retry_after_s", None)
    headers = {"Retry-After": str(retry)} if retry else {}
    origins = framing.platform_origins(framers or [])
    if origins:
        headers["content-security-policy"] = framing.policy(origins)
    return HTTPException(refusal.status, str(refusal), headers=headers or None)


def login_limits(request: Request) -> LoginLimits:
    """The server's bounds on LTI logins per address (made on first use)."""
    found: LoginLimits | None = getattr(request.app.state, "qkv_lti_login_limits", None)
    if found is None:
        found = request.app.state.qkv_lti_login_limits = LoginLimits()
    return found


def _issuer_platforms(tool: LtiTool, issuer: object) -> list[PlatformRecord]:
    """The registrations of an issuer a request names (unverified: only registered origins come back)."""
    if not isinstance(issuer, str) or not issuer or len(issuer) > 1000:
        return []
    try:
        return tool.platforms.for_issuer(issuer)
    except StoreError:
        return []


def _token_issuer(id_token: str) -> object:
    try:
        return jwt.decode(id_token, options={"verify_signature": False}).get("iss")
    except jwt.PyJWTError:
        return None


# -- the tool's keys --------------------------------------------------------------------------------


@router.get("/lti/jwks.json", name="lti_jwks")
def jwks(request: Request) -> JSONResponse:
    """The tool's public keys, for the LMS to check what qkv signs."""
    return JSONResponse(tool_of(request).key.jwks(), headers={"Cache-Control": "public, max-age=300"})


# -- login ------------------------------------------------------------------------------------------


# Two routes, not one with two methods: each needs its own operation id in the OpenAPI document.
@router.get("/lti/login", name="lti_login", operation_id="lti_login_get")
@router.post("/lti/login", name="lti_login_post", operation_id="lti_login_post")
async def login(request: Request, services: AppServices) -> Response:
    """OIDC third-party login initiation: remember a state and nonce, send the browser to the LMS."""
    params = await _params(request)
    tool = tool_of(request)
    address = request_client_key(request)
    try:
        check_login_params(params)
        login_limits(request).admit(address)
        platform = await run_in_threadpool(_login_platform, tool, params)
        target = params.get("target_link_uri", "")
        lesson_id = lesson_target(
            target, origin_of(services, request), [lesson.id for lesson in services.catalog.lessons]
        )
        login_hint = params.get("login_hint", "")
        if not login_hint:
            raise LaunchRefused(400, "The login request has no login_hint; the LMS must send one (LTI 1.3).")
        # Only what the target names is kept (the launch reads its own target from the id token).
        kept = origin_of(services, request) + (f"/lessons/{lesson_id}" if lesson_id else "/")
        stored_state, nonce = await run_in_threadpool(
            tool.logins.begin, platform.issuer, platform.client_id, kept
        )
    except LaunchRefused as refusal:
        framers = await run_in_threadpool(_issuer_platforms, tool, params.get("iss"))
        raise _refused(refusal, framers) from None
    except LoginsFull as full:
        raise HTTPException(
            503, f"{full} Launch again from the LMS in a minute.", headers={"Retry-After": "60"}
        ) from None
    except ValueError as unstorable:  # a field the store cannot keep (a Host far longer than any name)
        raise HTTPException(400, str(unstorable)) from None
    login_limits(request).begun(address, state_digest(stored_state))
    storage = frame_login.storage_target(params.get("lti_storage_target"))
    state = frame_login.with_target(stored_state, storage)
    query = {
        "scope": "openid",
        "response_type": "id_token",
        "response_mode": "form_post",
        "prompt": "none",
        "client_id": platform.client_id,
        "redirect_uri": origin_of(services, request) + "/lti/launch",
        "login_hint": login_hint,
        "state": state,
        "nonce": nonce,
    }
    if params.get("lti_message_hint"):
        query["lti_message_hint"] = params["lti_message_hint"]
    separator = "&" if "?" in platform.auth_url else "?"
    auth_request = platform.auth_url + separator + urlencode(query)
    if storage is None:
        page = _continue_page(auth_request, "qkv: signing in", "Signing you in through your LMS.")
    else:
        again = {key: value for key, value in params.items() if key != "lti_storage_target"}
        new_window = origin_of(services, request) + "/lti/login?" + urlencode(again)
        platform_origin = framing.origin(platform.auth_url) or ""
        page = frame_login.login_page(auth_request, platform_origin, storage, state, new_window)
    for header in state_cookie.set_headers(state, secure=services.settings.secure_cookies):
        page.headers.append("set-cookie", header)
    return framing.allow_framing(page, [platform])


def _login_platform(tool: LtiTool, params: dict[str, str]) -> PlatformRecord:
    issuer, client_id = params.get("iss", ""), params.get("client_id", "")
    if not issuer:
        raise LaunchRefused(400, "The login request has no 'iss'; it must come from an LTI 1.3 platform.")
    registered = tool.platforms.for_issuer(issuer)
    if not registered:
        raise LaunchRefused(
            403,
            f"The LMS {issuer!r} is not registered with this qkv server; an administrator registers it with "
            "'qkv lti add-platform --issuer ...' (see docs/lms.md).",
        )
    if client_id:
        for platform in registered:
            if platform.client_id == client_id:
                return platform
        known = ", ".join(repr(p.client_id) for p in registered)
        raise LaunchRefused(
            403,
            f"The LMS {issuer!r} sent the client id {client_id!r}, but qkv knows it with {known}; check the "
            "client id given to 'qkv lti add-platform'.",
        )
    if len(registered) > 1:
        raise LaunchRefused(
            400,
            f"qkv has {len(registered)} registrations of {issuer!r}, and the login request does not say "
            "which (no client_id); have the LMS send client_id, or keep one registration.",
        )
    return registered[0]


# -- launch -----------------------------------------------------------------------------------------


@router.post("/lti/launch", name="lti_launch")
async def launch(request: Request, services: AppServices) -> Response:
    """Check the id token, sign the person in, open the lesson (or the instructor's class page); a
    deep-linking request opens the picker. Inside an LMS's iframe, the login may be tied to the browser by
    the LMS's storage instead of a cookie, and the page opens qkv in a new window (``frame_login``,
    ``framed_launch``)."""
    params = await _params(request)
    tool = tool_of(request)
    state = params.get("state", "")
    # Whatever the launch's fate, its login is pending no more (the state as stored, without a target).
    login_limits(request).ended(state_digest(split_state(state)[0]))
    course: CourseRecord | None = None
    try:
        if not state:
            raise LaunchRefused(400, "The launch has no state; it must complete a login begun at /lti/login.")
        by_storage = not state_cookie.came_back(state, request.cookies)
        if by_storage:
            first_pass = await run_in_threadpool(_storage_binding, services, tool, request, state, params)
            if first_pass is not None:
                return first_pass
        checked = await run_in_threadpool(_check, tool, split_state(state)[0], params.get("id_token", ""))
        lesson_id = lesson_target(
            checked.target_link_uri,
            origin_of(services, request),
            [lesson.id for lesson in services.catalog.lessons],
        )
        lesson_id = _custom_lesson(checked, services) or lesson_id
        if checked.message_type == DEEP_LINKING_REQUEST:
            page = await run_in_threadpool(picker_page, request, services, tool, checked)
            return _cleared(page, state)
        learner_id = None
        if checked.is_instructor:
            course = await run_in_threadpool(_staff_course, services, tool, checked)
        else:
            learner_id = await run_in_threadpool(_launch_learner, services, tool, checked, lesson_id)
    except LaunchRefused as refusal:
        issuer = _token_issuer(params.get("id_token", "")[:MAX_TOKEN_CHARS])
        raise _refused(refusal, await run_in_threadpool(_issuer_platforms, tool, issuer)) from None
    if by_storage or framed_launch.is_framed(request):
        page = await run_in_threadpool(_new_window, tool, checked, lesson_id, learner_id, course)
        return _cleared(page, state)
    if course is not None:
        try:
            session_cookie = await run_in_threadpool(sign_in_instructor, request, checked, course)
        except LaunchRefused as refusal:
            raise _refused(refusal) from None
        page = _continue_page(
            staff_page(checked), "qkv: instructor", "Opening the class in the instructor's view."
        )
        page.headers.append("set-cookie", session_cookie)
    else:
        assert learner_id is not None  # not course staff: the learner's part of the launch ran
        url = f"/lessons/{lesson_id}" if lesson_id else "/"
        page = _continue_page(url, "qkv: opening the lesson", "Opening the lesson.")
        await run_in_threadpool(accounts_bridge.sign_in, request, page, learner_id)
    return _cleared(page, state)


def staff_page(checked: Launch) -> str:
    """Where course staff's launch opens: an instructor's the LMS page; a teaching assistant, who has no
    LMS page (no roster pulls, no platform settings), the class."""
    return "/instructor/lti" if checked.course_role is CourseRole.INSTRUCTOR else "/instructor"


def _cleared(page: Response, state: str) -> Response:
    """``page`` with the login's state cookies removed (the launch used them up)."""
    for header in state_cookie.clear_headers(state):
        page.headers.append("set-cookie", header)
    return page


def _storage_binding(
    services: Services, tool: LtiTool, request: Request, state: str, params: dict[str, str]
) -> Response | None:
    """Without the state cookie: the page that reads the state back from the LMS's storage (first pass),
    or None once qkv's own page posted it back and it matches; a refusal when the login asked for no
    storage."""
    base, target = split_state(state)
    platform = _platform_of_login(tool, base)
    if target is None or platform is None:
        raise LaunchRefused(
            401,
            "This browser did not bring back the cookie qkv set when the login began, so the launch "
            "cannot be tied to it. Open qkv in a new window (not inside the LMS page), serve qkv over "
            "HTTPS (--public-url https://..., --secure-cookies), allow cookies for it, and launch again.",
        )
    if "storage_value" not in params:
        platform_origin = framing.origin(platform.auth_url) or ""
        page = frame_login.launch_page(platform_origin, target, state, params.get("id_token", ""))
        return framing.allow_framing(page, [platform])
    frame_login.check_proof(state, params["storage_value"], request, origin_of(services, request))
    return None


def _platform_of_login(tool: LtiTool, state: str) -> PlatformRecord | None:
    login = tool.logins.peek(state)
    return tool.platforms.find(login[0], login[1]) if login else None


def _new_window(
    tool: LtiTool,
    checked: Launch,
    lesson_id: str | None,
    learner_id: str | None,
    course: CourseRecord | None,
) -> Response:
    """A framed launch's answer: the button that opens qkv, signed in, in a window of its own (course
    staff's ticket names the launch's course, where the new window's session opens)."""
    if learner_id is None:
        url, what = staff_page(checked), "the class"
    else:
        url, what = (f"/lessons/{lesson_id}", "the lesson") if lesson_id else ("/", "the lessons")
    course_id = course.id if course is not None else None
    page = framed_launch.new_window_page(
        framed_launch.ticket(tool, checked, url, learner_id, course_id), what
    )
    found = tool.platforms.find(checked.issuer, checked.client_id)
    return framing.allow_framing(page, [found] if found else [])


def _check(tool: LtiTool, state: str, id_token: str) -> Launch:
    login = tool.logins.consume(state)
    refusal = state_refusal(login)
    if refusal is not None:
        raise refusal
    return tool.checker.check(id_token, login)


def _custom_lesson(checked: Launch, services: Services) -> str | None:
    """The lesson the launch's custom claim names (a deep-linked link), checked; None when it names none."""
    named = checked.custom_lesson
    if named is None:
        return None
    known = [lesson.id for lesson in services.catalog.lessons]
    if named not in known:
        raise LaunchRefused(
            400,
            f"The link's custom parameter {LESSON_PARAMETER}={named[:40]!r} names no lesson of this server "
            f"(the lessons are {', '.join(known)}); add the lesson again through qkv's picker.",
        )
    return named


def _staff_course(services: Services, tool: LtiTool, checked: Launch) -> CourseRecord:
    """Course staff's launch's course; a refusal when the launch names none (qkv gives instructors rights
    on their launch's course only)."""
    course = _course_of(services, tool, checked)
    if course is None:
        raise LaunchRefused(
            400,
            "This instructor's launch names no course (the id token has no context claim), and "
            "qkv gives instructors rights on their launch's course only; launch from a course.",
        )
    return course


def _course_of(services: Services, tool: LtiTool, checked: Launch) -> CourseRecord | None:
    """The launch's course (made on its first launch) with its LMS class remembered; None without a
    context claim."""
    if not checked.context_id:
        return None
    title = (checked.context_title or checked.context_id)[:255]
    try:
        course = services.store.courses.for_lti_context(
            checked.issuer, checked.deployment_id, checked.context_id, title
        )
    except ValueError as error:
        raise LaunchRefused(400, f"The LMS's course cannot be used: {error}") from None
    tool.links.remember_context(
        checked.issuer, checked.client_id, checked.context_id, title, checked.memberships_url, course.id
    )
    return course


def _launch_learner(services: Services, tool: LtiTool, checked: Launch, lesson_id: str | None) -> str:
    """The launching person's learner account; a learner joins the launch's course and, with a line item
    (the launch's own, or the course's found by resourceId or made), has their score on the lesson sent
    there. Any other role (Mentor, ...) opens the lessons and gets no course membership and no score."""
    learner_id = accounts_bridge.account_for(
        services, checked.issuer, checked.subject, checked.name, checked.email
    )
    course = _course_of(services, tool, checked)
    if checked.course_role is not CourseRole.LEARNER:
        return learner_id
    if course is not None:
        services.store.courses.enrol(course.id, learner_id, MembershipSource.LTI)
    column = _lessons_column(services, tool, checked, lesson_id, course) if lesson_id is not None else None
    if lesson_id is not None and course is not None:
        lms_end = column.ends_at if column is not None else None
        _due_from_the_lms(services, course.id, lesson_id, lms_end or checked.submission_ends_at)
    if lesson_id is not None and column is not None:
        tool.links.remember_line_item(
            learner_id,
            lesson_id,
            checked.issuer,
            checked.client_id,
            checked.subject,
            column.url,
            course.id if course is not None else "",
            column.refusal,
        )
        record_score(services, tool, learner_id, lesson_id)
    return learner_id


def _due_from_the_lms(services: Services, course_id: str, lesson_id: str, ends_at: object) -> None:
    """The LMS's date for the lesson (its line item's ``endDateTime``, the launch's own or the one found by
    its resourceId, else the deep-linked link's submission window's end) becomes the lesson's due date in
    the course unless the instructor set one in qkv; a later, different date from the LMS moves a due date
    that came from the LMS. Late work then counts in full in qkv (marked late), and the LMS's own late
    rules act on the scores' timestamps."""
    if not isinstance(ends_at, datetime):
        return
    try:
        services.store.due_dates.follow_lms(course_id, lesson_id, ends_at)
    except (StoreError, ValueError) as error:  # the learner still gets the lesson
        log.warning("the LMS's end date of %s could not be kept as its due date: %s", lesson_id, error)


def _lessons_column(
    services: Services, tool: LtiTool, checked: Launch, lesson_id: str, course: CourseRecord | None
) -> line_items.Column | None:
    """The lesson's line item in the launch's course: the launch's own once checked to be the lesson's,
    else the course's found by resourceId or made, ending at the lesson's due date in the course (see
    ``line_items.lessons_column``); None when the launch has none or the LMS cannot be asked now (the
    learner still gets the lesson; a later launch tries again, and a line item remembered before stays)."""
    platform = tool.platforms.find(checked.issuer, checked.client_id)
    if platform is None or (checked.lineitem_url is None and checked.lineitems_url is None):
        return None
    offered = offered_lessons(services)
    due = None if course is None else services.store.due_dates.due(course.id, lesson_id)
    try:
        return line_items.lessons_column(
            tool.client,
            tool.tokens,
            platform,
            checked,
            offered[lesson_id],
            offered.keys(),
            tool.links,
            due_at=None if due is None else due.due_at,
        )
    except (ServiceUnavailable, StoreError) as error:
        log.warning("no line item for %s from %s: %s", lesson_id, checked.issuer, error)
        return None


def record_score(services: Services, tool: LtiTool, learner_id: str, lesson_id: str) -> None:
    """Queue the learner's score on the lesson for their LMS, if it changed (see ``scores``)."""
    lesson = services.catalog.lesson(lesson_id)
    progress: dict[str, Any] = build_progress(
        lesson, services.store.progress.lesson_activity(learner_id, lesson_id)
    )
    policy = services.settings.help_policy
    queue_lesson_score(tool.scores, services.store.due_dates, learner_id, lesson_id, progress, policy)
