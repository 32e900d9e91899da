"""No token of a path reaches the access log: every path parameter of every route of the app, read from the
app itself, is either one the log may show (a lesson, an exercise, an export's name, an id that opens
nothing by itself) or written as ``[redacted]`` — so a route added later with a token in its path is
redacted without anyone listing it. The records are shaped as uvicorn writes them and go through the filter
``qkv serve`` installs (``tests/reliability/test_reliability_token_logs.py`` reads a real server's log).
"""

from __future__ import annotations

import logging
import re

from fastapi import FastAPI

from qkv.web.http.access_log import LOGGED_PATH_PARAMETERS, install
from tests.web.backend_fixtures import app_routes

_PARAMETER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z]+)?\}")
_SECRET_LOOKING = re.compile(r"token|secret|key|nonce|session|code|password|link", re.IGNORECASE)


def _logged(app: FastAPI, target: str) -> str:
    """The access log's line for a GET of ``target``, as the installed filter leaves it."""
    logger = logging.getLogger("test.access_log_routes")
    redactor = install(logger.name, app=app)
    record = logger.makeRecord(
        logger.name,
        logging.INFO,
        __file__,
        0,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", target, "1.1", 200),
        None,
    )
    assert redactor.filter(record)
    return record.getMessage()


def test_every_path_parameter_of_every_route_is_logged_only_when_it_opens_nothing(app: FastAPI) -> None:
    seen: set[str] = set()
    for route in app_routes(app):
        template = getattr(route, "path", "")
        names = _PARAMETER.findall(template)
        if not names:
            continue
        values = {name: f"v{n}Zq8Rk2{name}" for n, name in enumerate(names)}
        target = template
        for name, value in values.items():
            target = re.sub(r"\{" + name + r"(?::[A-Za-z]+)?\}", value, target)
        for suffix in ("", "/", "?x=1"):
            line = _logged(app, target + suffix)
            for name, value in values.items():
                if name in LOGGED_PATH_PARAMETERS:
                    assert value in line, (template, line)
                else:
                    assert value not in line and "[redacted]" in line, (template, line)
        seen.update(names)
    assert "token" in seen and not seen <= LOGGED_PATH_PARAMETERS  # the registration link's route was read
    assert not [name for name in LOGGED_PATH_PARAMETERS if _SECRET_LOOKING.search(name)]


def test_the_registration_link_and_its_query_are_redacted(app: FastAPI) -> None:
    token = "Xk3Jt0p_secret-registration-link-token-0123"
    line = _logged(
        app,
        f"/lti/register/{token}?openid_configuration=https%3A%2F%2Flms.example%2Fopenid&registration_token=abc",
    )
    assert token not in line and "abc" not in line
    assert '"GET /lti/register/[redacted]?openid_configuration=https%3A%2F%2Flms.example%2Fopenid' in line
    assert "registration_token=[redacted]" in line
    assert _logged(app, "/lessons/L4.1?x=1").endswith('"GET /lessons/L4.1?x=1 HTTP/1.1" 200')
