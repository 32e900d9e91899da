"""How routes reach the app's shared parts."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI

from qkv.web.services import Services
from tests.web.backend_fixtures import app_routes


def _dependencies(dependant: Any) -> Iterator[Any]:
    for dependency in dependant.dependencies:
        yield dependency
        yield from _dependencies(dependency)


def _returns_services(call: Any) -> bool:
    try:
        hints = typing.get_type_hints(call)
    except Exception:  # a class or a callable object without hints: not the services lookup
        return False
    return hints.get("return") is Services


def test_no_route_hands_a_worker_thread_the_services_lookup(app: FastAPI) -> None:
    # A plain ``def`` dependency runs on the thread pool: a wake-up and a hop on every request.
    lookups = [
        (route.path, dependency.call)
        for route in app_routes(app)
        if hasattr(route, "dependant")
        for dependency in _dependencies(route.dependant)
        if _returns_services(dependency.call)
    ]
    assert len({path for path, _ in lookups}) > 20  # most routes take the services
    on_threads = sorted({path for path, call in lookups if not inspect.iscoroutinefunction(call)})
    assert on_threads == []
