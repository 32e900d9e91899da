"""Where a launch meets learner accounts: the account of an LMS user, and signing a browser in to it.

An LMS user's account is keyed by the LMS's issuer and its id for them (``sub``), so the same person
launching from two LMSs has two accounts, and two LMSs' ids never collide.
"""

from __future__ import annotations

import logging

from fastapi import Request
from starlette.responses import Response

from qkv.web.http.learner_sessions import sign_in as open_learner_session
from qkv.web.lti.refusal import LaunchRefused
from qkv.web.services import Services

log = logging.getLogger("qkv.web.lti")


def account_for(services: Services, issuer: str, subject: str, name: str | None, email: str | None) -> str:
    """The learner id of the account of ``subject`` at ``issuer`` (made on its first launch or roster pull).

    A name or email the accounts refuse is left out (the LMS's id alone still makes the account).

    Parameters
    ----------
    services : Services
        The app's store.
    issuer : str
        The LMS's issuer (``iss``).
    subject : str
        The LMS's id of the person (``sub``).
    name, email : str or None
        What the LMS says of them.

    Returns
    -------
    str
        The account's learner id.

    Raises
    ------
    LaunchRefused
        When the accounts refuse the LMS's id (their sentence says why).
    """
    accounts = services.store.accounts
    try:
        return accounts.find_or_create(issuer, subject, display_name=name, email=email)
    except ValueError as error:
        log.info("the LMS's name or email for %r was not kept: %s", subject, error)
    try:
        return accounts.find_or_create(issuer, subject)
    except ValueError as error:
        raise LaunchRefused(400, f"The LMS's id for this person cannot be used: {error}") from None


def sign_in(request: Request, response: Response, learner_id: str) -> None:
    """Sign this browser in to the account (a fresh database session; see
    ``qkv.web.http.learner_sessions``)."""
    open_learner_session(request, response, learner_id)
