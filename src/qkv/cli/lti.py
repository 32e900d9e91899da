"""``qkv lti``: register the LMS platforms qkv accepts launches from (LTI 1.3), by hand or by a one-time
Dynamic Registration URL; list and remove them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from qkv.cli.options import database_url_option, public_url_option

if TYPE_CHECKING:
    from qkv.store.lti.platforms import LtiPlatforms

_DATABASE = database_url_option
_URL = public_url_option("Where the LMS reaches this server (the printed URL's start; HTTPS for a real LMS).")


def _platforms(database_url: str | None) -> LtiPlatforms:
    from qkv.store import StoreError, default_database_url
    from qkv.store.lti.platforms import LtiPlatforms
    from qkv.store.sql.database import Database

    try:
        return LtiPlatforms(Database(database_url or default_database_url()))
    except StoreError as error:
        raise click.ClickException(str(error)) from None


@click.group()
def lti() -> None:
    """LTI 1.3: the LMS platforms (Moodle, Canvas, ...) that may launch qkv. See docs/lms.md."""


@lti.command("add-platform")
@click.option(
    "--issuer", required=True, help="The platform's issuer (iss), e.g. https://moodle.school.example."
)
@click.option("--client-id", required=True, help="The client id the LMS gave qkv.")
@click.option(
    "--deployment-id",
    "deployment_ids",
    required=True,
    multiple=True,
    help="A deployment id (repeat for more).",
)
@click.option("--auth-url", required=True, help="The LMS's OIDC authentication request URL.")
@click.option("--token-url", required=True, help="The LMS's OAuth 2 access token URL.")
@click.option("--jwks-url", required=True, help="The LMS's public keyset URL.")
@_DATABASE
def add_platform(
    issuer: str,
    client_id: str,
    deployment_ids: tuple[str, ...],
    auth_url: str,
    token_url: str,
    jwks_url: str,
    database_url: str | None,
) -> None:
    """Register an LMS so that its launches are accepted."""
    platforms = _platforms(database_url)
    try:
        record = platforms.add(issuer, client_id, deployment_ids, auth_url, token_url, jwks_url)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    finally:
        platforms.database.close()
    click.echo(
        f"Registered {record.issuer} (client id {record.client_id}, "
        f"deployment{'s' if len(record.deployment_ids) > 1 else ''} {', '.join(record.deployment_ids)})."
    )


@lti.command("registration-link")
@click.option(
    "--valid-hours",
    type=click.IntRange(1, 24 * 14),
    default=1,
    show_default=True,
    help="How long the URL may be used (once). Keep it short: whoever holds an unused URL may use it.",
)
@_URL
@_DATABASE
def registration_link(valid_hours: int, url: str, database_url: str | None) -> None:
    """Print a one-time LTI Dynamic Registration URL to paste into Moodle or Canvas (see docs/lms.md)."""
    from datetime import timedelta

    from qkv.store import StoreError, default_database_url
    from qkv.store.lti.platforms import check_url
    from qkv.store.lti.registrations import RegistrationLinks
    from qkv.store.sql.database import Database

    try:
        check_url(url, "The server URL (--url)")
        database = Database(database_url or default_database_url())
    except (ValueError, StoreError) as error:
        raise click.ClickException(str(error)) from None
    try:
        token = RegistrationLinks(database).issue(timedelta(hours=valid_hours))
    finally:
        database.close()
    click.echo(f"{url.rstrip('/')}/lti/register/{token}")
    click.echo(
        f"Paste this URL into the LMS's LTI Dynamic Registration within {valid_hours} hour"
        f"{'' if valid_hours == 1 else 's'}; it works once.",
        err=True,
    )


@lti.command("list")
@_DATABASE
def list_platforms(database_url: str | None) -> None:
    """List the registered platforms."""
    platforms = _platforms(database_url)
    try:
        records = platforms.all()
    finally:
        platforms.database.close()
    if not records:
        click.echo("No LMS platform is registered; add one with 'qkv lti add-platform'.")
        return
    for record in records:
        click.echo(f"{record.issuer}  client id {record.client_id}")
        click.echo(f"  deployments: {', '.join(record.deployment_ids)}")
        click.echo(f"  auth: {record.auth_url}\n  token: {record.token_url}\n  jwks: {record.jwks_url}")


@lti.command("remove")
@click.option("--issuer", required=True, help="The platform's issuer.")
@click.option(
    "--client-id", default=None, help="Only this client id (default: every registration of the issuer)."
)
@_DATABASE
def remove(issuer: str, client_id: str | None, database_url: str | None) -> None:
    """Forget a platform: its launches are refused from now on (its scores waiting stay queued)."""
    platforms = _platforms(database_url)
    try:
        removed = platforms.remove(issuer, client_id)
    finally:
        platforms.database.close()
    if not removed:
        raise click.ClickException(
            f"No platform {issuer!r} is registered; 'qkv lti list' shows those that are."
        )
    click.echo(f"Removed {removed} registration{'s' if removed > 1 else ''} of {issuer}.")
