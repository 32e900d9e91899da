"""Redirects point at the configured public URL or are relative paths; a ``Host`` header never shows up."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.cli.serve import serve
from qkv.web.settings import Settings

EVIL = {"Host": "evil.example"}
# Each one is answered by Starlette's trailing-slash redirect, which is built from the request's Host.
SLASHED = ["/instructor/", "/lessons/L4.1/", "/api/instructor/dashboard/", "/docs/"]


@pytest.mark.parametrize("path", SLASHED)
def test_the_trailing_slash_redirect_is_relative_whatever_the_host(
    make_app: Callable[..., FastAPI], path: str
) -> None:
    response = TestClient(make_app()).get(path, headers=EVIL, follow_redirects=False)
    assert response.status_code in {307, 308}, response.text
    assert response.headers["location"] == path.rstrip("/")


@pytest.mark.parametrize("path", SLASHED)
def test_with_a_public_url_redirects_go_there(make_app: Callable[..., FastAPI], path: str) -> None:
    app = make_app(public_url="https://qkv.school.example/")
    response = TestClient(app).get(path + "?a=1", headers=EVIL, follow_redirects=False)
    assert response.headers["location"] == f"https://qkv.school.example{path.rstrip('/')}?a=1"


def test_the_instructor_sign_in_and_out_redirects_are_built_the_same_way(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(public_url="https://qkv.school.example")
    _, token = app.state.qkv.store.instructors.add("Grace")
    client = TestClient(app, base_url="http://evil.example")
    signed_in = client.post("/instructor/sign-in", data={"token": token}, follow_redirects=False)
    assert (signed_in.status_code, signed_in.headers["location"]) == (
        303,
        "https://qkv.school.example/instructor",
    )
    csrf = app.state.qkv_instructor.csrf_token(
        app.state.qkv_instructor.unsign(client.cookies["qkv_instructor"])
    )
    out = client.post("/instructor/sign-out", data={"csrf_token": csrf}, follow_redirects=False)
    assert (out.status_code, out.headers["location"]) == (
        303,
        "https://qkv.school.example/instructor/sign-in",
    )


def test_a_path_that_names_another_host_is_folded_into_this_site(make_app: Callable[..., FastAPI]) -> None:
    # '/\\evil.example/' would be read by a browser as '//evil.example/', another host.
    response = TestClient(make_app()).get("/\\evil.example/", headers=EVIL, follow_redirects=False)
    location = response.headers.get("location", "")
    assert "evil.example" not in location.split("/")[:3], location
    assert response.status_code < 500


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("qkv.example", "must start with http:// or https://"),
        ("ftp://qkv.example", "must start with http:// or https://"),
        ("https://", "names no host"),
        ("https://user:pw@qkv.example", "must not hold a user name or password"),
        ("https://qkv.example/course", "must be only scheme, host and port"),
        ("https://qkv.example:99999", "has a port that is not a number"),
    ],
)
def test_a_bad_public_url_is_refused_with_a_sentence(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as refused:
        Settings(public_url=url)
    assert repr(url) in str(refused.value)
    result = CliRunner().invoke(serve, ["--public-url", url, "--database-url", "sqlite://", "--port", "0"])
    assert result.exit_code == 1 and f"Error: The public URL {url!r}" in result.output, result.output
    assert "Traceback" not in result.output
