"""A fake LMS written for the tests (as PrairieLearn's tests have one): an LTI 1.3 platform served on a
local port, with its JWKS, the OIDC auth endpoint, a token endpoint that checks the tool's client assertion
against the tool's /lti/jwks.json, AGS line items that record the scores posted to them, and NRPS
memberships. It is deliberately small and strict: a request an LMS would refuse, it refuses.

Its gradebook keeps scores as Moodle's or Canvas's do (``mode``), as read in their sources: a score
whose gradingProgress is not FullyGraded is stored with a *null* grade; Moodle answers 409 to a score
whose timestamp (whole seconds) is not newer than the last it stored, and 400 to one for a person who is
no learner of the course; Canvas answers 400 to a timestamp older than the last one, 422 to a non-learner.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from html import escape
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from jwt.algorithms import RSAAlgorithm

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
TEACHING_ASSISTANT = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
DEEP_LINK_HINT = "deep-link"  # lti_message_hint of a deep-linking launch; "link:ID" launches a link
MEMBERSHIP_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
CLIENT_ID = "qkv-client"
DEPLOYMENT_ID = "deployment-1"
CONTEXT_ID = "course-7"


@dataclass
class SigningKey:
    kid: str
    private: Any

    @classmethod
    def new(cls) -> SigningKey:
        return cls(secrets.token_hex(8), rsa.generate_private_key(public_exponent=65537, key_size=2048))

    def public_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = RSAAlgorithm.to_jwk(self.private.public_key(), as_dict=True)
        return {**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}


@dataclass
class User:
    sub: str
    name: str
    email: str
    roles: list[str]
    context: str = CONTEXT_ID  # the course they launch from (and are a member of)


@dataclass
class GradeCell:
    """What the gradebook shows for one learner on one line item: a number, or None (no grade)."""

    grade: float | None
    timestamp: datetime
    activity: str


@dataclass
class Link:
    """A resource link the LMS made from a deep-linking response's content item."""

    id: str
    title: str
    url: str
    custom: dict[str, str]
    lineitem: str | None  # the line item id the LMS made for it, if the item carried a lineItem
    # The end of its submission window as the instructor set it in the LMS (ISO 8601), if any.
    submission_end: str | None = None


@dataclass
class FakePlatform:
    """The LMS's state; ``app`` serves it. ``url`` is set once it is served."""

    url: str = ""
    tool_url: str = ""  # where the tool is; its JWKS is read from {tool_url}/lti/jwks.json
    keys: list[SigningKey] = field(default_factory=lambda: [SigningKey.new()])
    users: dict[str, User] = field(default_factory=dict)
    scores: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # line item id -> scores
    down: bool = False  # the AGS and token endpoints answer 503
    mode: str = "moodle"  # how the gradebook keeps scores: "moodle" or "canvas"
    # Whether a link's custom parameters have the LTI substitution variables it knows replaced at a launch
    # (Canvas-like); otherwise each variable is sent as the tool asked for it, as the spec says of unknown ones.
    substitutes: bool = False
    gradebook: dict[str, dict[str, GradeCell]] = field(default_factory=dict)  # item -> user -> cell
    refuse_next: list[tuple[int, str]] = field(default_factory=list)  # the next scores' refusals, in turn
    links: dict[str, Link] = field(default_factory=dict)
    line_items: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> the line item's JSON
    item_contexts: dict[str, str] = field(default_factory=dict)  # line item id -> its course
    deep_linking_context: str = CONTEXT_ID  # the course of the last deep-linking request
    deep_linking: dict[str, Any] = field(default_factory=dict)  # overrides of deep_linking_settings
    deep_link_answers: list[dict[str, Any]] = field(default_factory=list)  # verified response claims
    # What a link's launch offers of AGS: its scopes, and whether it names the course's line-items container
    # (an LMS that lets a tool read its line item but make none sends the read scope and no container).
    link_scopes: list[str] = field(default_factory=lambda: [LINEITEM_SCOPE, SCORE_SCOPE])
    link_container: bool = True
    registration_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    config_issuer: str | None = None  # the issuer its OpenID configuration names (default: its own)
    registration_requests: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, set[str]] = field(default_factory=dict)
    assertions_checked: int = 0
    jwks_fetches: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def issuer(self) -> str:
        return self.url

    def register_with(self, platforms: Any) -> None:
        """Register this platform with the tool (as ``qkv lti add-platform`` would)."""
        platforms.add(
            self.issuer,
            CLIENT_ID,
            [DEPLOYMENT_ID],
            f"{self.url}/auth",
            f"{self.url}/token",
            f"{self.url}/jwks",
        )

    def add_user(
        self, sub: str, name: str, roles: list[str] | None = None, context: str = CONTEXT_ID
    ) -> User:
        user = User(sub, name, f"{sub}@school.example", roles or [LEARNER], context)
        self.users[sub] = user
        return user

    def rotate(self) -> None:
        """Publish a new key and sign with it from now on (the old one stays published)."""
        self.keys.insert(0, SigningKey.new())

    def lineitem_url(self, item: str) -> str:
        return f"{self.url}/lineitems/{item}"

    @staticmethod
    def item_of(context: str, lesson: str) -> str:
        """The line item of a lesson in a course: the lesson's id in the first course, else both."""
        return lesson if context == CONTEXT_ID else f"{context}--{lesson}"

    def login_url(
        self,
        target: str,
        sub: str,
        *,
        client_id: bool = True,
        hint: str | None = None,
        storage_target: str | None = None,
    ) -> str:
        """Where the LMS sends a browser to start a launch (the tool's OIDC login initiation)."""
        params = {
            "iss": self.issuer,
            "login_hint": sub,
            "target_link_uri": target,
            "lti_message_hint": hint or target,
        }
        if client_id:
            params |= {"client_id": CLIENT_ID, "lti_deployment_id": DEPLOYMENT_ID}
        if storage_target:
            params["lti_storage_target"] = storage_target
        return f"{self.tool_url}/lti/login?" + httpx.QueryParams(params).__str__()

    def claims_for(self, sub: str, target: str, nonce: str) -> dict[str, Any]:
        """The id token's claims for a launch of ``sub`` to ``target``: a resource link with AGS and NRPS."""
        user = self.users[sub]
        lesson = target.rstrip("/").rsplit("/", 1)[-1]
        now = int(time.time())
        return {
            "iss": self.issuer,
            "aud": CLIENT_ID,
            "azp": CLIENT_ID,
            "sub": sub,
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
            "name": user.name,
            "email": user.email,
            LTI + "message_type": "LtiResourceLinkRequest",
            LTI + "version": "1.3.0",
            LTI + "deployment_id": DEPLOYMENT_ID,
            LTI + "target_link_uri": target,
            LTI + "roles": user.roles,
            LTI + "resource_link": {"id": f"link-{lesson}"},
            LTI + "context": {
                "id": user.context,
                "title": "Attention, autumn term"
                if user.context == CONTEXT_ID
                else f"Attention {user.context}",
            },
            AGS: {"scope": [SCORE_SCOPE], "lineitem": self.lineitem_url(self.item_of(user.context, lesson))},
            NRPS: {
                "context_memberships_url": f"{self.url}/memberships/{user.context}",
                "service_versions": ["2.0"],
            },
        }

    def deep_linking_claims(self, sub: str, target: str, nonce: str) -> dict[str, Any]:
        """A deep-linking request from the course (with the line-items service, as Moodle sends it)."""
        claims = self.claims_for(sub, target, nonce)
        claims[LTI + "message_type"] = "LtiDeepLinkingRequest"
        del claims[LTI + "resource_link"]
        context = self.users[sub].context
        claims[AGS] = {"scope": [LINEITEM_SCOPE, SCORE_SCOPE], "lineitems": self.lineitems_url(context)}
        self.deep_linking_context = context
        settings = {
            "deep_link_return_url": f"{self.url}/deep-link-return",
            "accept_types": ["ltiResourceLink"],
            "accept_presentation_document_targets": ["iframe", "window"],
            "accept_multiple": True,
            "accept_lineitem": True,
            "auto_create": True,
            "data": f"csrf-{secrets.token_hex(4)}",
        }
        settings.update(self.deep_linking)
        claims[DL + "deep_linking_settings"] = {k: v for k, v in settings.items() if v is not None}
        return claims

    def link_claims(self, sub: str, link_id: str, nonce: str) -> dict[str, Any]:
        """A launch of a link made by deep linking: its custom parameters, its line item if it has one."""
        link = self.links[link_id]
        claims = self.claims_for(sub, link.url, nonce)
        claims[LTI + "resource_link"] = {"id": link.id, "title": link.title}
        claims[LTI + "custom"] = self.substituted(link)
        context = self.users[sub].context
        ags: dict[str, Any] = {"scope": list(self.link_scopes)}
        if self.link_container:
            ags["lineitems"] = self.lineitems_url(context)
        if link.lineitem:
            ags["lineitem"] = self.lineitem_url(link.lineitem)
        claims[AGS] = ags
        return claims

    def substituted(self, link: Link) -> dict[str, str]:
        """A link's custom parameters as a launch sends them: with ``$ResourceLink.submission.endDateTime``
        replaced by its submission window's end when this LMS substitutes it and the link has one."""
        known = {"$ResourceLink.submission.endDateTime": link.submission_end}
        if not self.substitutes:
            return dict(link.custom)
        return {name: known.get(value) or value for name, value in link.custom.items()}

    def registration_start(self, registration_url: str) -> str:
        """Where the LMS opens a tool's registration URL (LTI Dynamic Registration's initiation)."""
        query = httpx.QueryParams(
            {
                "openid_configuration": f"{self.url}/.well-known/openid-configuration",
                "registration_token": self.registration_token,
            }
        )
        return f"{registration_url}?{query}"

    def lineitems_url(self, context: str = CONTEXT_ID) -> str:
        """A course's line-items container (each course has its own, as in an LMS)."""
        return f"{self.url}/contexts/{context}/lineitems"

    def make_line_item(self, body: dict[str, Any], context: str = CONTEXT_ID) -> dict[str, Any]:
        with self.lock:
            item_id = f"li-{len(self.line_items) + 1}"
            item = {**body, "id": self.lineitem_url(item_id)}
            self.line_items[item_id] = item
            self.item_contexts[item_id] = context
            return item

    def context_of_item(self, lineitem_url: str) -> str | None:
        """The course a line item (by its URL) belongs to."""
        return self.item_contexts.get(lineitem_url.rsplit("/", 1)[-1])

    def sign(
        self, claims: dict[str, Any], *, key: SigningKey | None = None, headers: dict[str, Any] | None = None
    ) -> str:
        key = key or self.keys[0]
        return jwt.encode(claims, key.private, algorithm="RS256", headers={"kid": key.kid, **(headers or {})})

    def received(self, item: str) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.scores.get(item, []))

    def grade(self, item: str, sub: str) -> float | None:
        """The grade the gradebook shows (None: an empty cell, or no score at all)."""
        with self.lock:
            cell = self.gradebook.get(item, {}).get(sub)
            return cell.grade if cell else None

    def keep_score(self, item: str, score: dict[str, Any]) -> tuple[int, str] | None:
        """Store a posted score as the LMS's gradebook would; the refusal ``(status, sentence)`` or None."""
        sub = str(score.get("userId", ""))
        user = self.users.get(sub)
        if user is None or LEARNER not in user.roles:
            if self.mode == "canvas":
                return 422, "User not found in course or is not a student"
            return 400, f"The user {sub!r} is not a student of this course, so no grade can be stored."
        at = datetime.fromisoformat(str(score.get("timestamp", "")))
        with self.lock:
            cells = self.gradebook.setdefault(item, {})
            last = cells.get(sub)
            if last is not None:
                if self.mode == "moodle" and int(at.timestamp()) <= int(last.timestamp.timestamp()):
                    return 409, "Refusing score with an earlier timestamp for item and user"
                if self.mode == "canvas" and at < last.timestamp:
                    return 400, f"Provided timestamp of {at.isoformat()} before last updated timestamp"
            graded = score.get("gradingProgress") == "FullyGraded" and "scoreGiven" in score
            value = float(score["scoreGiven"]) if graded else None
            cells[sub] = GradeCell(value, at, str(score.get("activityProgress", "")))
        return None


def posted_form_fields(page: str) -> dict[str, str]:
    """The hidden fields of the self-posting form ``auto_post_form`` made."""
    import re
    from html import unescape

    pairs = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page)
    return {unescape(k): unescape(v) for k, v in pairs}


_LMS_SCRIPT = """
const toolOrigin = %s, closeSubject = %s, store = {};
const log = document.getElementById("log");
window.addEventListener("message", (event) => {
  const m = event.data;
  if (!m || typeof m.subject !== "string") return;
  if (closeSubject && m.subject === closeSubject) { document.getElementById("status").textContent = "closed"; }
  if (!toolOrigin || event.origin !== toolOrigin) return;
  log.textContent += m.subject + " " + (m.key || "") + "; ";
  if (m.subject === "lti.put_data") {
    store[m.key] = m.value;
    event.source.postMessage({subject: "lti.put_data.response", message_id: m.message_id, key: m.key,
                              value: m.value}, event.origin);
  } else if (m.subject === "lti.get_data") {
    event.source.postMessage({subject: "lti.get_data.response", message_id: m.message_id, key: m.key,
                              value: store[m.key]}, event.origin);
  }
});
"""


def lms_page(frame_url: str, close_subject: str, storage_for: str = "") -> str:
    """An LMS page with a tool in an iframe; it answers the tool's storage messages when asked to."""
    import json

    script = _LMS_SCRIPT % (json.dumps(storage_for), json.dumps(close_subject))
    return (
        '<!doctype html><title>LMS</title><link rel="icon" href="data:,"><p id="status">open</p>'
        f'<iframe id="tool" name="tool" src="{escape(frame_url)}" width="900" height="600"></iframe>'
        f'<pre id="log"></pre><script>{script}</script>'
    )


def auto_post_form(action: str, fields: dict[str, str]) -> str:
    """The page an LMS answers the auth request with: a form that posts itself to the tool."""
    inputs = "".join(
        f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in fields.items()
    )
    return (
        f'<!doctype html><title>LMS</title><link rel="icon" href="data:,"><form id="launch" method="post" action="{escape(action)}">{inputs}'
        '<button type="submit">Continue</button></form>'
        "<script>document.getElementById('launch').submit()</script>"
    )


def platform_app(platform: FakePlatform) -> FastAPI:
    """The LMS's endpoints."""
    app = FastAPI()

    @app.get("/jwks")
    def jwks() -> dict[str, Any]:
        platform.jwks_fetches += 1
        return {"keys": [key.public_jwk() for key in platform.keys]}

    @app.get("/auth")
    def auth(request: Request) -> HTMLResponse:
        q = request.query_params
        problems = [
            name
            for name, ok in [
                ("scope", q.get("scope") == "openid"),
                ("response_type", q.get("response_type") == "id_token"),
                ("response_mode", q.get("response_mode") == "form_post"),
                ("client_id", q.get("client_id") == CLIENT_ID),
                ("redirect_uri", q.get("redirect_uri", "").endswith("/lti/launch")),
                ("nonce", bool(q.get("nonce"))),
                ("state", bool(q.get("state"))),
                ("login_hint", q.get("login_hint") in platform.users),
            ]
            if not ok
        ]
        if problems:
            raise HTTPException(400, f"bad auth request: {problems}")
        hint = q.get("lti_message_hint", "")
        sub, nonce = q["login_hint"], q["nonce"]
        if hint == DEEP_LINK_HINT:
            claims = platform.deep_linking_claims(sub, f"{platform.tool_url}/lti/launch", nonce)
        elif hint.startswith("link:"):
            claims = platform.link_claims(sub, hint.removeprefix("link:"), nonce)
        else:
            claims = platform.claims_for(sub, hint, nonce)
        token = platform.sign(claims)
        return HTMLResponse(auto_post_form(q["redirect_uri"], {"id_token": token, "state": q["state"]}))

    @app.post("/token")
    async def token(request: Request) -> Response:
        if platform.down:
            return JSONResponse({"error": "temporarily_unavailable"}, status_code=503)
        form = await request.form()
        if form.get("grant_type") != "client_credentials" or form.get("client_assertion_type") != (
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        ):
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        assertion = str(form.get("client_assertion", ""))
        tool_keys = jwt.PyJWKSet.from_dict(httpx.get(f"{platform.tool_url}/lti/jwks.json").json())
        kid = jwt.get_unverified_header(assertion).get("kid")
        key = next((k for k in tool_keys.keys if k.key_id == kid), None)
        if key is None:
            return JSONResponse({"error": "invalid_client", "detail": "unknown kid"}, status_code=401)
        try:
            claims = jwt.decode(assertion, key.key, algorithms=["RS256"], audience=f"{platform.url}/token")
        except jwt.PyJWTError as error:
            return JSONResponse({"error": "invalid_client", "detail": str(error)}, status_code=401)
        if claims.get("iss") != CLIENT_ID or claims.get("sub") != CLIENT_ID:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        platform.assertions_checked += 1
        access = secrets.token_urlsafe(16)
        platform.tokens[access] = set(str(form.get("scope", "")).split())
        return JSONResponse({"access_token": access, "token_type": "bearer", "expires_in": 3600})

    def scopes_of(request: Request) -> set[str]:
        given = request.headers.get("authorization", "").removeprefix("Bearer ")
        if given not in platform.tokens:
            raise HTTPException(401, "unknown token")
        return platform.tokens[given]

    @app.post("/lineitems/{item}/scores")
    async def scores(item: str, request: Request) -> Response:
        if platform.down:
            return JSONResponse({"error": "down"}, status_code=503)
        if SCORE_SCOPE not in scopes_of(request):
            raise HTTPException(403, "no score scope")
        if request.headers.get("content-type") != "application/vnd.ims.lis.v1.score+json":
            raise HTTPException(415, "wrong content type")
        score = await request.json()
        with platform.lock:
            platform.scores.setdefault(item, []).append(score)
            told = platform.refuse_next.pop(0) if platform.refuse_next else None
        refused = told or platform.keep_score(item, score)
        if refused is not None:
            return JSONResponse({"status": refused[0], "message": refused[1]}, status_code=refused[0])
        return Response(status_code=200)

    def registration_bearer(request: Request) -> None:
        given = request.headers.get("authorization", "").removeprefix("Bearer ")
        if given != platform.registration_token:
            raise HTTPException(401, "the registration token is missing or wrong")

    @app.get("/.well-known/openid-configuration")
    def openid_configuration(request: Request) -> dict[str, Any]:
        registration_bearer(request)  # as Moodle and Canvas, only with the registration token
        return {
            "issuer": platform.config_issuer or platform.issuer,
            "authorization_endpoint": f"{platform.url}/auth",
            "token_endpoint": f"{platform.url}/token",
            "jwks_uri": f"{platform.url}/jwks",
            "registration_endpoint": f"{platform.url}/register",
            "scopes_supported": ["openid", SCORE_SCOPE, LINEITEM_SCOPE, MEMBERSHIP_SCOPE],
            "response_types_supported": ["id_token"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "iss", "name", "given_name", "family_name", "email"],
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "fake-lms",
                "version": "1.0",
                "messages_supported": [
                    {"type": "LtiResourceLinkRequest"},
                    {"type": "LtiDeepLinkingRequest"},
                ],
            },
        }

    @app.post("/register")
    async def register(request: Request) -> Response:
        """Take a tool's client registration as an LMS does: check it, give a client and deployment id."""
        registration_bearer(request)
        body = await request.json()
        tool = body.get("https://purl.imsglobal.org/spec/lti-tool-configuration", {})
        problems = [
            name
            for name, ok in [
                ("initiate_login_uri", str(body.get("initiate_login_uri", "")).endswith("/lti/login")),
                ("redirect_uris", bool(body.get("redirect_uris"))),
                ("jwks_uri", str(body.get("jwks_uri", "")).endswith("/lti/jwks.json")),
                ("grant_types", "client_credentials" in body.get("grant_types", [])),
                ("token_endpoint_auth_method", body.get("token_endpoint_auth_method") == "private_key_jwt"),
                ("target_link_uri", bool(tool.get("target_link_uri"))),
                (
                    "messages",
                    {m.get("type") for m in tool.get("messages", [])}
                    >= {"LtiResourceLinkRequest", "LtiDeepLinkingRequest"},
                ),
                ("scope", SCORE_SCOPE in str(body.get("scope", "")).split()),
            ]
            if not ok
        ]
        if problems:
            raise HTTPException(400, f"bad registration: {problems}")
        platform.registration_requests.append(body)
        platform.registration_token = secrets.token_urlsafe(24)  # each registration token works once
        answer = {**body, "client_id": CLIENT_ID}
        answer["https://purl.imsglobal.org/spec/lti-tool-configuration"] = {
            **tool,
            "deployment_id": DEPLOYMENT_ID,
        }
        return JSONResponse(answer)

    @app.get("/admin/register")
    def admin_register(tool: str) -> HTMLResponse:
        """The administrator's page: the tool's registration URL in an iframe, closed by its message."""
        return HTMLResponse(lms_page(platform.registration_start(tool), "org.imsglobal.lti.close"))

    @app.get("/course")
    def course(sub: str, hint: str) -> HTMLResponse:
        """A course page that embeds a launch (deep linking or a link) in an iframe, and answers the
        tool's client-side storage messages (lti.put_data / lti.get_data) for it."""
        target = f"{platform.tool_url}/lti/launch"
        login = platform.login_url(target, sub, hint=hint, storage_target="_parent")
        return HTMLResponse(lms_page(login, "", storage_for=platform.tool_url))

    @app.post("/deep-link-return")
    async def deep_link_return(request: Request) -> Response:
        """Check the tool's LtiDeepLinkingResponse as a platform must, and make a link per content item."""
        form = await request.form()
        token = str(form.get("JWT", ""))
        tool_keys = jwt.PyJWKSet.from_dict(httpx.get(f"{platform.tool_url}/lti/jwks.json").json())
        kid = jwt.get_unverified_header(token).get("kid")
        key = next((k for k in tool_keys.keys if k.key_id == kid), None)
        if key is None:
            raise HTTPException(401, "the response is signed with a key the tool does not publish")
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=["RS256"],
                audience=platform.issuer,
                issuer=CLIENT_ID,
                options={"require": ["iat", "exp", "nonce", "aud", "iss"]},
            )
        except jwt.PyJWTError as error:
            raise HTTPException(400, f"bad deep-linking response: {error}") from None
        problems = [
            name
            for name, ok in [
                ("message_type", claims.get(LTI + "message_type") == "LtiDeepLinkingResponse"),
                ("version", claims.get(LTI + "version") == "1.3.0"),
                ("deployment_id", claims.get(LTI + "deployment_id") == DEPLOYMENT_ID),
                ("content_items", isinstance(claims.get(DL + "content_items"), list)),
            ]
            if not ok
        ]
        if problems:
            raise HTTPException(400, f"bad deep-linking response: {problems}")
        platform.deep_link_answers.append(claims)
        for item in claims[DL + "content_items"]:
            if item.get("type") != "ltiResourceLink":
                raise HTTPException(400, f"unexpected content item type {item.get('type')!r}")
            lineitem = None
            if isinstance(item.get("lineItem"), dict):
                made = platform.make_line_item(item["lineItem"], platform.deep_linking_context)
                lineitem = made["id"].rsplit("/", 1)[-1]
            link_id = f"link-{len(platform.links) + 1}"
            platform.links[link_id] = Link(
                link_id, str(item["title"]), str(item["url"]), dict(item.get("custom", {})), lineitem
            )
        return HTMLResponse(f"<!doctype html><title>LMS</title><p>Added {len(platform.links)} links.</p>")

    @app.get("/contexts/{context}/lineitems")
    def list_line_items(context: str, request: Request, resource_id: str | None = None) -> Response:
        if not {LINEITEM_SCOPE, LINEITEM_SCOPE + ".readonly"} & scopes_of(request):
            raise HTTPException(403, "no line-item scope")
        with platform.lock:
            items = [
                item
                for item_id, item in platform.line_items.items()
                if platform.item_contexts.get(item_id) == context
                and resource_id in (None, item.get("resourceId"))
            ]
        return JSONResponse(items, media_type="application/vnd.ims.lis.v2.lineitemcontainer+json")

    @app.get("/lineitems/{item}")
    def read_line_item(item: str, request: Request) -> Response:
        if not {LINEITEM_SCOPE, LINEITEM_SCOPE + ".readonly"} & scopes_of(request):
            raise HTTPException(403, "no line-item scope")
        with platform.lock:
            found = platform.line_items.get(item)
        if found is None:
            raise HTTPException(404, f"no line item {item}")
        return JSONResponse(found, media_type="application/vnd.ims.lis.v2.lineitem+json")

    @app.post("/contexts/{context}/lineitems")
    async def create_line_item(context: str, request: Request) -> Response:
        if LINEITEM_SCOPE not in scopes_of(request):
            raise HTTPException(403, "no line-item scope")
        body = await request.json()
        if not isinstance(body.get("scoreMaximum"), int | float) or not body.get("label"):
            raise HTTPException(400, "a line item needs scoreMaximum and label")
        made = platform.make_line_item(body, context)
        return JSONResponse(made, status_code=201, media_type="application/vnd.ims.lis.v2.lineitem+json")

    @app.get("/memberships/{context}")
    def memberships(context: str, request: Request, page: int = 0) -> Response:
        if MEMBERSHIP_SCOPE not in scopes_of(request):
            raise HTTPException(403, "no membership scope")
        people = sorted((u for u in platform.users.values() if u.context == context), key=lambda u: u.sub)
        chunk = people[page * 2 : page * 2 + 2]  # two per page, so the tool must follow rel="next"
        body = {
            "id": f"{platform.url}/memberships/{context}",
            "context": {"id": context},
            "members": [
                {"status": "Active", "user_id": u.sub, "name": u.name, "email": u.email, "roles": u.roles}
                for u in chunk
            ],
        }
        headers = {}
        if (page + 1) * 2 < len(people):
            headers["Link"] = f'<{platform.url}/memberships/{context}?page={page + 1}>; rel="next"'
        return JSONResponse(body, headers=headers)

    return app
