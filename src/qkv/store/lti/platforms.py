"""LMS platforms registered with the tool (LTI 1.3): issuer, client id, deployments and their URLs.

A platform is known by its issuer and the client id it gave qkv; ``qkv lti add-platform`` registers one.

    >>> from qkv.store.sql.database import Database
    >>> platforms = LtiPlatforms(Database("sqlite://"))
    >>> record = platforms.add("https://lms.example", "qkv-1", ["d1"], "https://lms.example/auth",
    ...                        "https://lms.example/token", "https://lms.example/jwks")
    >>> platforms.find("https://lms.example", "qkv-1").deployment_ids
    ('d1',)
    >>> platforms.database.close()
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy import Table, delete, insert, select
from sqlalchemy.exc import IntegrityError

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import LtiPlatform

_PLATFORMS: Table = LtiPlatform.__table__  # type: ignore[assignment]
MAX_ID = 255
MAX_URL = 1000


@dataclass(frozen=True)
class PlatformRecord:
    """One registration of qkv in an LMS."""

    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    auth_url: str
    token_url: str
    jwks_url: str
    created_at: datetime


def check_url(value: str, what: str) -> str:
    """An absolute http(s) URL of at most 1000 characters; ValueError with a sentence otherwise.

    Examples
    --------
    >>> check_url("https://lms.example/auth", "The auth URL")
    'https://lms.example/auth'
    >>> check_url("lms.example/auth", "The auth URL")
    Traceback (most recent call last):
    ...
    ValueError: The auth URL 'lms.example/auth' is not an absolute http(s) URL such as https://lms.example/path.
    """
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ValueError(f"{what} {value!r} is not an absolute http(s) URL such as https://lms.example/path.")
    if len(value) > MAX_URL:
        raise ValueError(f"{what} may have at most {MAX_URL} characters, but it has {len(value)}.")
    return value


def check_identifier(value: str, what: str) -> str:
    """A non-empty identifier of at most 255 printable characters; ValueError with a sentence otherwise.

    Examples
    --------
    >>> check_identifier("", "The client id")
    Traceback (most recent call last):
    ...
    ValueError: The client id cannot be empty.
    """
    if not value or not value.strip():
        raise ValueError(f"{what} cannot be empty.")
    if len(value) > MAX_ID:
        raise ValueError(f"{what} may have at most {MAX_ID} characters, but it has {len(value)}.")
    if not value.isprintable():
        raise ValueError(f"{what} {value!r} contains control characters.")
    return value


def _record(row: object) -> PlatformRecord:
    ids = json.loads(row.deployment_ids)  # type: ignore[attr-defined]
    return PlatformRecord(
        issuer=row.issuer,  # type: ignore[attr-defined]
        client_id=row.client_id,  # type: ignore[attr-defined]
        deployment_ids=tuple(str(item) for item in ids),
        auth_url=row.auth_url,  # type: ignore[attr-defined]
        token_url=row.token_url,  # type: ignore[attr-defined]
        jwks_url=row.jwks_url,  # type: ignore[attr-defined]
        created_at=row.created_at,  # type: ignore[attr-defined]
    )


class LtiPlatforms:
    """The registered platforms.

    Parameters
    ----------
    database : Database
        The database the servers share.
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def add(
        self,
        issuer: str,
        client_id: str,
        deployment_ids: Sequence[str],
        auth_url: str,
        token_url: str,
        jwks_url: str,
    ) -> PlatformRecord:
        """Register a platform.

        Raises
        ------
        ValueError
            If a value is not acceptable, no deployment id is given, or the issuer and client id are
            registered already.

        Examples
        --------
        >>> platforms = LtiPlatforms(Database("sqlite://"))
        >>> platforms.add("https://lms.example", "c", [], "https://a", "https://t", "https://j")
        Traceback (most recent call last):
        ...
        ValueError: Give at least one deployment id (--deployment-id); the LMS shows it when qkv is added.
        >>> platforms.database.close()
        """
        check_url(issuer, "The issuer")
        check_identifier(client_id, "The client id")
        if not deployment_ids:
            raise ValueError(
                "Give at least one deployment id (--deployment-id); the LMS shows it when qkv is added."
            )
        deployments = tuple(dict.fromkeys(check_identifier(d, "A deployment id") for d in deployment_ids))
        record = PlatformRecord(
            issuer,
            client_id,
            deployments,
            check_url(auth_url, "The auth URL"),
            check_url(token_url, "The token URL"),
            check_url(jwks_url, "The JWKS URL"),
            utc_now(),
        )
        try:
            with self.database.write() as conn:
                conn.execute(
                    insert(_PLATFORMS).values(
                        issuer=record.issuer,
                        client_id=record.client_id,
                        deployment_ids=json.dumps(list(record.deployment_ids)),
                        auth_url=record.auth_url,
                        token_url=record.token_url,
                        jwks_url=record.jwks_url,
                        created_at=record.created_at,
                    )
                )
        except IntegrityError:
            raise ValueError(
                f"The platform {issuer!r} with client id {client_id!r} is registered already; "
                "remove it first with 'qkv lti remove' to change it."
            ) from None
        return record

    def all(self) -> list[PlatformRecord]:
        """Every registered platform, by issuer and client id.

        Examples
        --------
        >>> LtiPlatforms(Database("sqlite://")).all()
        []
        """
        with self.database.read() as conn:
            rows = conn.execute(select(_PLATFORMS).order_by(_PLATFORMS.c.issuer, _PLATFORMS.c.client_id))
            return [_record(row) for row in rows]

    def for_issuer(self, issuer: str) -> list[PlatformRecord]:
        """The registrations of one issuer (usually one; an LMS may register qkv more than once).

        Examples
        --------
        >>> LtiPlatforms(Database("sqlite://")).for_issuer("https://lms.example")
        []
        """
        with self.database.read() as conn:
            rows = conn.execute(select(_PLATFORMS).where(_PLATFORMS.c.issuer == issuer))
            return [_record(row) for row in rows]

    def find(self, issuer: str, client_id: str) -> PlatformRecord | None:
        """The registration of this issuer and client id, or None.

        Examples
        --------
        >>> LtiPlatforms(Database("sqlite://")).find("https://lms.example", "c") is None
        True
        """
        with self.database.read() as conn:
            row = conn.execute(
                select(_PLATFORMS).where(_PLATFORMS.c.issuer == issuer, _PLATFORMS.c.client_id == client_id)
            ).first()
        return _record(row) if row else None

    def remove(self, issuer: str, client_id: str | None = None) -> int:
        """Forget a platform's registrations (one client id, or all of the issuer's); how many went.

        Examples
        --------
        >>> platforms = LtiPlatforms(Database("sqlite://"))
        >>> _ = platforms.add("https://lms.example", "c", ["d"], "https://a", "https://t", "https://j")
        >>> platforms.remove("https://lms.example"), platforms.remove("https://lms.example")
        (1, 0)
        >>> platforms.database.close()
        """
        query = delete(_PLATFORMS).where(_PLATFORMS.c.issuer == issuer)
        if client_id is not None:
            query = query.where(_PLATFORMS.c.client_id == client_id)
        with self.database.write() as conn:
            return int(conn.execute(query).rowcount)


__all__ = ["LtiPlatforms", "PlatformRecord", "check_identifier", "check_url"]
