"""Schemathesis fuzzes every operation of the app's own OpenAPI spec against a real ``qkv serve``.

The spec learners can read leaves the instructor's routes out, so those that take a body (the sign-in and
sign-out forms) are described by a second spec built from the app's own routes here: every route that
takes a body is fuzzed, and a route added later is picked up without editing this file.
Each operation gets a bounded, derandomised set of examples, both inside its schema (positive) and
outside it (negative), twice over: as a learner with a valid cookie and CSRF token, so the requests
reach the handlers and the grader, and as a stranger without them, so they stop at the guard.
None may ever produce a 5xx, and a stranger never gets to change anything.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation.modes import GenerationMode

from qkv.web.app import create_app
from qkv.web.settings import Settings
from tests.reliability.reliability_support import Server, require_bubblewrap
from tests.time_scale import scaled
from tests.web.backend_fixtures import app_routes

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.timeout(300)]

EXAMPLES_PER_OPERATION = 25
WITH_BODY = {"POST", "PUT", "PATCH", "DELETE"}


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    require_bubblewrap()
    workdir: Path = tmp_path_factory.mktemp("fuzz")
    running = Server(f"sqlite:///{workdir / 'qkv.sqlite3'}", workdir).start()
    yield running
    running.kill()


def every_route(app: FastAPI) -> list[Any]:
    """Every route of the app, those of included routers too, as it was declared."""
    return [getattr(route, "original_route", route) for route in app_routes(app)]


def hidden_body_operations(app: FastAPI, base_url: str) -> list[Any]:
    """The operations that take a body but are left out of ``/openapi.json``, in a spec of their own."""
    hidden = []
    for route in every_route(app):
        if isinstance(route, APIRoute) and route.methods & WITH_BODY and not route.include_in_schema:
            shown = copy.copy(route)
            shown.include_in_schema = True
            hidden.append(shown)
    schema = get_openapi(title="qkv: the routes left out of /openapi.json", version="0", routes=hidden)
    loaded = schemathesis.openapi.from_dict(schema)
    loaded.config.update(base_url=base_url)  # a spec from a dict has no address of its own
    return [result.ok() for result in loaded.get_all_operations()]


@pytest.fixture(scope="module")
def operations(fuzz_server: Server) -> list[Any]:
    schema = schemathesis.openapi.from_url(fuzz_server.url + "/openapi.json", timeout=scaled(30))
    found = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in found} >= {"/api/lessons/{lesson_id}/answers", "/api/lessons/{lesson_id}/code"}
    app = create_app(Settings(database_url="sqlite://", secret_key="fuzz-spec-" * 4))
    found += hidden_body_operations(app, fuzz_server.url)
    takes_body = {
        (method, route.path)
        for route in every_route(app)
        for method in (getattr(route, "methods", None) or set()) & WITH_BODY
    }
    assert takes_body <= {(op.method.upper(), op.path) for op in found}, takes_body
    return found


@pytest.fixture(scope="module")
def learner_credentials(fuzz_server: Server) -> tuple[dict[str, str], dict[str, str]]:
    """The learner cookie and the CSRF header a browser gets from the lesson page."""
    with httpx.Client(base_url=fuzz_server.url, timeout=scaled(30)) as client:
        index = client.get("/")
        link = re.search(r'href="(/[^"]*L4\.1[^"]*)"', index.text)
        page = client.get(link.group(1) if link else "/lessons/L4.1")
        token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text)
        assert token is not None, page.text[:300]
        return dict(client.cookies.items()), {"X-CSRF-Token": token.group(1)}


def can_be_fuzzed(operation: Any, fixed: dict[str, str]) -> bool:
    """Whether the operation has an input that the fuzz run does not fix (a body, a free parameter).

    An operation without one has nothing to make invalid, so negative mode cannot fuzz it.
    """
    free_path = [p.name for p in operation.path_parameters if p.name not in fixed]
    inputs = (operation.query, operation.headers, operation.cookies, operation.body)
    return bool(free_path) or any(len(part) for part in inputs)


def describe(case: Any, response: Any) -> str:
    return f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]!r}"


def fuzz(
    operation: Any, mode: GenerationMode, check: Any, path_parameters: dict[str, str] | None = None
) -> bool:
    """Run ``check(case)`` on a bounded, reproducible set of generated cases for one operation.

    Returns False when the operation has nothing that can be made invalid (negative mode on an
    operation whose only input is a free-form string, say).
    """

    fixed = {k: v for k, v in (path_parameters or {}).items() if "{" + k + "}" in operation.path}

    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=fixed or None))
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        check(case)

    try:
        run()
    except Unsatisfiable:
        if mode is GenerationMode.POSITIVE:
            raise
        return False
    return True


# The learner's operations that answer 2xx to some input drawn from their schema alone.
ACCEPT_GENERATED_INPUT = {
    "GET /api/lessons/{lesson_id}/code/queue",
    "GET /api/lessons/{lesson_id}/progress",
    "POST /api/attention",
    "POST /api/learner",
    "POST /api/lessons/{lesson_id}/attention",
    "POST /api/lessons/{lesson_id}/code/cancel",
    "POST /api/lessons/{lesson_id}/project",
    "POST /api/lessons/{lesson_id}/variant",
    "POST /api/project",
}


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_server_error_for_a_learner(
    operations: list[Any], learner_credentials: tuple[dict[str, str], dict[str, str]], mode: GenerationMode
) -> None:
    cookies, headers = learner_credentials
    statuses: dict[int, int] = {}
    succeeded: set[str] = set()

    def check(case: Any) -> None:
        response = case.call(headers=headers, cookies=cookies, timeout=scaled(60))
        assert response.status_code < 500, describe(case, response)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        if response.status_code < 300:
            succeeded.add(case.operation.label)

    # The real lesson id, so the requests get past routing into the handlers.
    lesson = {"lesson_id": "L4.1"}
    fuzzed = {op.label for op in operations if fuzz(op, mode, check, lesson)}
    assert fuzzed >= {op.label for op in operations if can_be_fuzzed(op, lesson)}, fuzzed
    if mode is GenerationMode.POSITIVE:
        # Generated input gets past validation on these; the rest need a real answer, program or token.
        assert succeeded >= ACCEPT_GENERATED_INPUT, (sorted(succeeded), statuses)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_server_error_for_a_stranger(operations: list[Any], mode: GenerationMode) -> None:
    def check(case: Any) -> None:
        response = case.call(timeout=scaled(60))
        assert response.status_code < 500, describe(case, response)
        state_changing = case.path.startswith(("/api/lessons/", "/instructor/", "/api/instructor/")) or (
            case.path == "/api/learner"
        )
        if case.method.upper() == "POST" and state_changing:
            assert 400 <= response.status_code < 500, describe(case, response)

    fuzzed = {operation.label for operation in operations if fuzz(operation, mode, check)}
    assert fuzzed >= {op.label for op in operations if can_be_fuzzed(op, {})}, fuzzed
