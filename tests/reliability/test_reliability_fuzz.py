"""Schemathesis fuzzes every operation of the app's own OpenAPI spec against a real ``qkv serve``.

Each operation gets a bounded, derandomised set of examples, both inside its schema (positive) and
outside it (negative), twice over: as a learner with a valid cookie and CSRF token, so the requests
reach the handlers and the grader, and as a stranger without them, so they stop at the guard.
None may ever produce a 5xx, and a stranger never gets to change anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from reliability_support import Server, require_bubblewrap
from schemathesis.generation.modes import GenerationMode

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.timeout(300)]

EXAMPLES_PER_OPERATION = 25


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    require_bubblewrap()
    workdir: Path = tmp_path_factory.mktemp("fuzz")
    running = Server(f"sqlite:///{workdir / 'qkv.sqlite3'}", workdir).start()
    yield running
    running.kill()


@pytest.fixture(scope="module")
def operations(fuzz_server: Server) -> list[Any]:
    schema = schemathesis.openapi.from_url(fuzz_server.url + "/openapi.json", timeout=30)
    found = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in found} >= {"/api/lessons/{lesson_id}/answers", "/api/lessons/{lesson_id}/code"}
    return found


@pytest.fixture(scope="module")
def learner_credentials(fuzz_server: Server) -> tuple[dict[str, str], dict[str, str]]:
    """The learner cookie and the CSRF header a browser gets from the lesson page."""
    with httpx.Client(base_url=fuzz_server.url, timeout=30) as client:
        index = client.get("/")
        link = re.search(r'href="(/[^"]*L4\.1[^"]*)"', index.text)
        page = client.get(link.group(1) if link else "/lessons/L4.1")
        token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text)
        assert token is not None, page.text[:300]
        return dict(client.cookies.items()), {"X-CSRF-Token": token.group(1)}


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


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_server_error_for_a_learner(
    operations: list[Any], learner_credentials: tuple[dict[str, str], dict[str, str]], mode: GenerationMode
) -> None:
    cookies, headers = learner_credentials
    statuses: dict[int, int] = {}

    def check(case: Any) -> None:
        response = case.call(headers=headers, cookies=cookies, timeout=60)
        assert response.status_code < 500, describe(case, response)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    # The real lesson id, so the requests get past routing into the handlers.
    lesson = {"lesson_id": "L4.1"}
    fuzzed = [op.label for op in operations if fuzz(op, mode, check, lesson)]
    assert len(fuzzed) >= len(operations) - 2, fuzzed
    if mode is GenerationMode.POSITIVE:
        assert sum(n for status, n in statuses.items() if status < 300) >= len(operations), statuses


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_server_error_for_a_stranger(operations: list[Any], mode: GenerationMode) -> None:
    def check(case: Any) -> None:
        response = case.call(timeout=60)
        assert response.status_code < 500, describe(case, response)
        state_changing = case.path.startswith("/api/lessons/") or case.path == "/api/learner"
        if case.method.upper() == "POST" and state_changing:
            assert 400 <= response.status_code < 500, describe(case, response)

    fuzzed = [operation.label for operation in operations if fuzz(operation, mode, check)]
    assert len(fuzzed) >= len(operations) - 2, fuzzed
