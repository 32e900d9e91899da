"""Where a launch meets learner accounts: the account of an LMS user, and signing a browser in to it."""

from __future__ import annotations

import uuid

from fastapi import Request
from starlette.responses import Response

from qkv.web.services import Services


def account_for(services: Services, issuer: str, subject: str, name: str | None, email: str | None) -> str:
    """The learner id of the account of ``subject`` at ``issuer`` (made on first launch)."""
    # Until learner accounts land: a fixed id per LMS user, and the learner cookie.
    learner_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{issuer}\n{subject}"))
    if name:
        services.store.learners.set_display_name(learner_id, name[:80])
    return learner_id


def sign_in(services: Services, request: Request, response: Response, learner_id: str) -> None:
    """Sign this browser in as ``learner_id``."""
    response.headers.append("set-cookie", services.identity.cookie_header(learner_id).decode("latin-1"))
