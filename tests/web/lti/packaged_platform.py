"""A second LMS that we did not write: the ``lti1p3platform`` package (platform-side LTI 1.3, with AGS
and NRPS claims and a token endpoint that checks the tool's client assertion), served on a local port.

Only the glue a host application writes is here: where the registration lives, the four HTTP endpoints,
and the page that posts the launch. The package builds and signs the id token, validates the tool's
preflight answer, issues access tokens and checks them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration

from tests.web.lti.fake_platform import LEARNER, SCORE_SCOPE, auto_post_form

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


@dataclass
class PackagedPlatform:
    url: str = ""
    tool_url: str = ""
    target: str = ""
    keys: tuple[str, str] = field(default_factory=_key_pair)
    scores: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Who launches: login hint -> (name, roles, course); anyone else is Emmy Noether, a learner of
    # "packaged-course". Each course has its line item; ``received`` holds the scores by course.
    people: dict[str, tuple[str, list[str], str]] = field(default_factory=dict)
    received: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def person(self, hint: str) -> tuple[str, list[str], str]:
        return self.people.get(hint, ("Emmy Noether", [LEARNER], "packaged-course"))

    def registration(self) -> Registration:
        return (
            Registration()
            .set_iss(self.url)
            .set_client_id(CLIENT_ID)
            .set_deployment_id(DEPLOYMENT_ID)
            .set_oidc_login_url(f"{self.tool_url}/lti/login")
            .set_launch_url(self.target)
            .set_tool_key_set_url(f"{self.tool_url}/lti/jwks.json")
            .set_platform_private_key(self.keys[0])
            .set_platform_public_key(self.keys[1])
        )

    def register_with(self, platforms: Any) -> None:
        platforms.add(
            self.url, CLIENT_ID, [DEPLOYMENT_ID], f"{self.url}/auth", f"{self.url}/token", f"{self.url}/jwks"
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
        self.set_user_data(
            preflight_response["login_hint"],
            roles,
            full_name=name,
            email_address="someone@school.example",
        )
        self.set_resource_link_claim("link-1")
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
    def start(user: str) -> Response:
        login = _Login(None, config())
        login.set_lti_message_hint(hint="link-1")
        response: Response = login.initiate_login(user)
        return response

    @app.get("/auth")
    def auth(request: Request) -> Response:
        launch = _Launch(request, config())  # type: ignore[arg-type]
        launch.person = platform.person(request.query_params.get("login_hint", ""))
        course = launch.person[2]
        item = "1" if course == "packaged-course" else course
        launch.set_ags(
            lineitems_url=f"{platform.url}/lineitems", lineitem_url=f"{platform.url}/lineitems/{item}"
        )
        launch.set_nrps(f"{platform.url}/memberships/{course}")
        response: Response = launch.lti_launch()
        return response

    @app.post("/token")
    async def token(request: Request) -> Response:
        form = dict((await request.form()).items())
        conf = config()
        conf.get_registration()
        return JSONResponse(dict(conf.get_access_token(form)))

    @app.post("/lineitems/{item}/scores")
    async def scores(item: str, request: Request) -> Response:
        conf = config()
        conf.get_registration()
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if not conf.validate_token(bearer, allowed_scopes=[SCORE_SCOPE]):
            return JSONResponse({"error": "scope"}, status_code=403)
        score = await request.json()
        with platform.lock:
            platform.scores.append(score)
            platform.received.setdefault(item, []).append(score)
        return Response(status_code=200)

    return app
