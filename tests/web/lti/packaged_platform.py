"""A second LMS that we did not write: the ``lti1p3platform`` package (platform-side LTI 1.3, with AGS
and NRPS claims and a token endpoint that checks the tool's client assertion), served on a local port.

Only the glue a host application writes is here: where the registration lives, the HTTP endpoints, and
the page that posts the launch. The package builds and signs the id token (a deep-linking request too),
validates the tool's preflight answer and its deep-linking response, issues access tokens and checks
them. The package has no Dynamic Registration, so its two endpoints (the OpenID configuration and the
registration) are glue written here, as a host application adds them.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration

from tests.web.lti.fake_platform import LEARNER, LINEITEM_SCOPE, SCORE_SCOPE, auto_post_form, lms_page

CLIENT_ID = "qkv-at-packaged-lms"
DEPLOYMENT_ID = "packaged-deployment"


def _key_pair() -> tuple[str, str]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private_pem, public_pem


INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


@dataclass
class PackagedPlatform:
    url: str = ""
    tool_url: str = ""
    target: str = ""
    keys: tuple[str, str] = field(default_factory=_key_pair)
    scores: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    client_id: str = CLIENT_ID
    deployment_id: str = DEPLOYMENT_ID
    deep_link_url: str = ""  # the tool's deep-linking launch URL (from its registration)
    registration_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    registration_requests: list[dict[str, Any]] = field(default_factory=list)
    teachers: set[str] = field(default_factory=set)  # login hints of instructors of "packaged-course"
    links: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> url, custom, lineitem
    line_items: dict[str, dict[str, Any]] = field(default_factory=dict)
    item_scores: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    deep_link_answers: list[list[dict[str, Any]]] = field(default_factory=list)
    # Who launches: login hint -> (name, roles, course); a teacher is Sofia Kovalevskaya, an instructor,
    # anyone else Emmy Noether, a learner, both of "packaged-course". Each course has its line item;
    # ``received`` holds the scores by course.
    people: dict[str, tuple[str, list[str], str]] = field(default_factory=dict)
    received: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def person(self, hint: str) -> tuple[str, list[str], str]:
        if hint in self.teachers:
            return ("Sofia Kovalevskaya", [INSTRUCTOR], "packaged-course")
        return self.people.get(hint, ("Emmy Noether", [LEARNER], "packaged-course"))

    def registration(self) -> Registration:
        registration = (
            Registration()
            .set_iss(self.url)
            .set_client_id(self.client_id)
            .set_deployment_id(self.deployment_id)
            .set_oidc_login_url(f"{self.tool_url}/lti/login")
            .set_launch_url(self.target)
            .set_tool_key_set_url(f"{self.tool_url}/lti/jwks.json")
            .set_platform_private_key(self.keys[0])
            .set_platform_public_key(self.keys[1])
        )
        if self.deep_link_url:
            registration.set_deeplink_launch_url(self.deep_link_url)
        return registration

    def registration_start(self, registration_url: str) -> str:
        query = urlencode(
            {
                "openid_configuration": f"{self.url}/.well-known/openid-configuration",
                "registration_token": self.registration_token,
            }
        )
        return f"{registration_url}?{query}"

    def register_with(self, platforms: Any) -> None:
        platforms.add(
            self.url,
            self.client_id,
            [self.deployment_id],
            f"{self.url}/auth",
            f"{self.url}/token",
            f"{self.url}/jwks",
        )


class _Config(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs: Any) -> None:
        self.platform: PackagedPlatform = kwargs["platform"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        return self.platform.registration()


class _Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> RedirectResponse:
        return RedirectResponse(url)


class _Launch(LTIAdvantageMessageLaunchAbstract):
    def get_preflight_response(self) -> dict[str, Any]:
        return dict(self._request.query_params)  # type: ignore[union-attr]

    person: tuple[str, list[str], str] = ("Emmy Noether", [LEARNER], "packaged-course")

    def prepare_launch(self, preflight_response: dict[str, Any]) -> None:
        name, roles, course = self.person
        user = preflight_response["login_hint"]
        self.set_user_data(user, roles, full_name=name, email_address=f"{user}@school.example")
        hint = preflight_response.get("lti_message_hint", "")
        self.set_resource_link_claim(hint.removeprefix("link:") if hint.startswith("link:") else "link-1")
        title = "Attention (packaged LMS)" if course == "packaged-course" else f"Attention {course}"
        self.set_launch_context_claim(course, context_title=title)

    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> HTMLResponse:
        fields = {"id_token": launch_data["id_token"], "state": launch_data["state"]}
        return HTMLResponse(auto_post_form(launch_data["launch_url"], fields))


def packaged_app(platform: PackagedPlatform) -> FastAPI:
    app = FastAPI()

    def config() -> _Config:
        return _Config(platform=platform)

    @app.get("/jwks")
    def jwks() -> dict[str, Any]:
        conf = config()
        conf.get_registration()
        return dict(conf.get_jwks())

    @app.get("/start")
    def start(user: str, hint: str = "link-1", storage: bool = False) -> Response:
        login = _Login(None, config())
        login.set_lti_message_hint(hint=hint)
        if hint == "deep-link":
            login.set_deeplinking_launch_url()
        elif hint.startswith("link:"):
            login.set_launch_url(platform.links[hint.removeprefix("link:")]["url"])
        response: Response = login.initiate_login(user)
        if storage:  # the LMS offers its client-side storage to a tool in its frame
            response.headers["location"] += "&lti_storage_target=_parent"
        return response

    @app.get("/auth")
    def auth(request: Request) -> Response:
        launch = _Launch(request, config())  # type: ignore[arg-type]
        launch.person = platform.person(request.query_params.get("login_hint", ""))
        course = launch.person[2]
        hint = request.query_params.get("lti_message_hint", "")
        lineitems = f"{platform.url}/lineitems"
        if hint == "deep-link":
            launch.set_dl(f"{platform.url}/deep-link-return", title="Add an activity", extra_data={"c": 7})
            launch.set_ags(lineitems_url=lineitems)
        elif hint.startswith("link:"):
            link = platform.links[hint.removeprefix("link:")]
            launch.set_launch_url(link["url"])
            launch.set_custom_parameters_claim(link["custom"])
            launch.set_ags(lineitems_url=lineitems, lineitem_url=link["lineitem"])
        else:
            item = "1" if course == "packaged-course" else course
            launch.set_ags(lineitems_url=lineitems, lineitem_url=f"{platform.url}/lineitems/{item}")
        launch.set_nrps(f"{platform.url}/memberships/{course}")
        response: Response = launch.lti_launch()
        return response

    @app.get("/admin/register")
    def admin_register(tool: str) -> HTMLResponse:
        return HTMLResponse(lms_page(platform.registration_start(tool), "org.imsglobal.lti.close"))

    @app.get("/course")
    def course(user: str, hint: str) -> HTMLResponse:
        start_url = f"{platform.url}/start?" + urlencode({"user": user, "hint": hint, "storage": "true"})
        return HTMLResponse(lms_page(start_url, "", storage_for=platform.tool_url))

    def registration_bearer(request: Request) -> None:
        if request.headers.get("authorization", "") != f"Bearer {platform.registration_token}":
            raise HTTPException(401, "the registration token is missing or wrong")

    @app.get("/.well-known/openid-configuration")
    def openid_configuration(request: Request) -> dict[str, Any]:
        registration_bearer(request)
        return {
            "issuer": platform.url,
            "authorization_endpoint": f"{platform.url}/auth",
            "token_endpoint": f"{platform.url}/token",
            "jwks_uri": f"{platform.url}/jwks",
            "registration_endpoint": f"{platform.url}/register",
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "lti1p3platform"
            },
        }

    @app.post("/register")
    async def register(request: Request) -> Response:
        registration_bearer(request)
        body = await request.json()
        tool = body["https://purl.imsglobal.org/spec/lti-tool-configuration"]
        messages = {m["type"]: m for m in tool["messages"]}
        platform.registration_requests.append(body)
        platform.client_id, platform.deployment_id = "packaged-dynamic-client", "packaged-dynamic-deployment"
        platform.target = tool["target_link_uri"]
        platform.deep_link_url = messages["LtiDeepLinkingRequest"]["target_link_uri"]
        answer = {**body, "client_id": platform.client_id}
        answer["https://purl.imsglobal.org/spec/lti-tool-configuration"] = {
            **tool,
            "deployment_id": platform.deployment_id,
        }
        return JSONResponse(answer)

    @app.post("/deep-link-return")
    async def deep_link_return(request: Request) -> HTMLResponse:
        form = dict((await request.form()).items())
        conf = config()
        conf.get_registration()
        items = conf.validate_deeplinking_resp(form)  # the package checks the tool's signature
        platform.deep_link_answers.append(items)
        for item in items:
            lineitem = None
            if "lineItem" in item:
                lineitem = make_line_item(item["lineItem"])["id"]
            link_id = f"link-{len(platform.links) + 1}"
            platform.links[link_id] = {"url": item["url"], "custom": item["custom"], "lineitem": lineitem}
        return HTMLResponse(f"<!doctype html><title>LMS</title><p>Added {len(items)} links.</p>")

    def make_line_item(body: dict[str, Any]) -> dict[str, Any]:
        with platform.lock:
            item = {**body, "id": f"{platform.url}/lineitems/{len(platform.line_items) + 2}"}
            platform.line_items[item["id"]] = item
            return item

    def allowed(request: Request, scope: str) -> bool:
        conf = config()
        conf.get_registration()
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        return bool(conf.validate_token(bearer, allowed_scopes=[scope]))

    @app.get("/lineitems")
    def list_line_items(request: Request, resource_id: str | None = None) -> Response:
        if not allowed(request, LINEITEM_SCOPE):
            return JSONResponse({"error": "scope"}, status_code=403)
        found = [i for i in platform.line_items.values() if resource_id in (None, i.get("resourceId"))]
        return JSONResponse(found)

    @app.get("/lineitems/{item}")
    def read_line_item(item: str, request: Request) -> Response:
        if not allowed(request, LINEITEM_SCOPE):
            return JSONResponse({"error": "scope"}, status_code=403)
        found = platform.line_items.get(f"{platform.url}/lineitems/{item}")
        if found is None:
            return JSONResponse({"error": "no such line item"}, status_code=404)
        return JSONResponse(found)

    @app.post("/lineitems")
    async def create_line_item(request: Request) -> Response:
        if not allowed(request, LINEITEM_SCOPE):
            return JSONResponse({"error": "scope"}, status_code=403)
        return JSONResponse(make_line_item(await request.json()), status_code=201)

    @app.post("/token")
    async def token(request: Request) -> Response:
        form = dict((await request.form()).items())
        conf = config()
        conf.get_registration()
        return JSONResponse(dict(conf.get_access_token(form)))

    @app.post("/lineitems/{item}/scores")
    async def scores(item: str, request: Request) -> Response:
        if not allowed(request, SCORE_SCOPE):
            return JSONResponse({"error": "scope"}, status_code=403)
        score = await request.json()
        with platform.lock:
            platform.scores.append(score)
            platform.received.setdefault(item, []).append(score)
            platform.item_scores.setdefault(f"{platform.url}/lineitems/{item}", []).append(score)
        return Response(status_code=200)

    return app
