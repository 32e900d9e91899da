"""``qkv lti``: register, list and remove the LMS platforms, as an administrator runs it."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from qkv.store.lti.platforms import LtiPlatforms
from qkv.store.sql.database import Database

ARGS = [
    "--issuer", "https://moodle.school.example",
    "--client-id", "AbC123",
    "--deployment-id", "1",
    "--deployment-id", "2",
    "--auth-url", "https://moodle.school.example/mod/lti/auth.php",
    "--token-url", "https://moodle.school.example/mod/lti/token.php",
    "--jwks-url", "https://moodle.school.example/mod/lti/certs.php",
]  # fmt: skip


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qkv", "lti", *args], capture_output=True, text=True, timeout=120
    )


def test_add_list_and_remove_a_platform(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    assert run("list", "--database-url", url).stdout.startswith("No LMS platform is registered")
    added = run("add-platform", *ARGS, "--database-url", url)
    assert added.returncode == 0, added.stderr
    assert added.stdout == "Registered https://moodle.school.example (client id AbC123, deployments 1, 2).\n"
    database = Database(url)
    try:
        record = LtiPlatforms(database).find("https://moodle.school.example", "AbC123")
        assert record is not None and record.deployment_ids == ("1", "2")
    finally:
        database.close()
    again = run("add-platform", *ARGS, "--database-url", url)
    assert again.returncode == 1 and "is registered already" in again.stderr
    listed = run("list", "--database-url", url)
    assert "https://moodle.school.example  client id AbC123" in listed.stdout
    assert "jwks: https://moodle.school.example/mod/lti/certs.php" in listed.stdout
    removed = run("remove", "--issuer", "https://moodle.school.example", "--database-url", url)
    assert (
        removed.returncode == 0
        and removed.stdout == "Removed 1 registration of https://moodle.school.example.\n"
    )
    gone = run("remove", "--issuer", "https://moodle.school.example", "--database-url", url)
    assert gone.returncode == 1 and "No platform 'https://moodle.school.example' is registered" in gone.stderr


def test_a_bad_url_is_refused_with_a_sentence(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    bad = [a if a != "https://moodle.school.example/mod/lti/certs.php" else "moodle/certs.php" for a in ARGS]
    refused = run("add-platform", *bad, "--database-url", url)
    assert refused.returncode == 1
    assert "The JWKS URL 'moodle/certs.php' is not an absolute http(s) URL" in refused.stderr


def test_a_registration_link_is_printed_once_made_and_works_once(tmp_path: Path) -> None:
    from qkv.store.lti.registrations import LinkState, RegistrationLinks

    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    made = run("registration-link", "--url", "https://qkv.school.example/", "--database-url", url)
    assert made.returncode == 0, made.stderr
    link = made.stdout.strip()
    assert link.startswith("https://qkv.school.example/lti/register/") and "works once" in made.stderr
    assert "within 1 hour;" in made.stderr  # short by default
    longer = run(
        "registration-link",
        "--url",
        "https://qkv.school.example/",
        "--valid-hours",
        "5",
        "--database-url",
        url,
    )
    assert longer.returncode == 0 and "within 5 hours;" in longer.stderr, longer.stderr
    token = link.rsplit("/", 1)[-1]
    database = Database(url)
    try:
        links = RegistrationLinks(database)
        lifetimes = [row.expires_at - row.created_at for row in _link_rows(database)]
        assert sorted(lifetimes) == [timedelta(hours=1), timedelta(hours=5)]
        assert links.check(token) is LinkState.FRESH
        assert links.use(token, "https://moodle.school.example") and not links.use(token, "x")
    finally:
        database.close()
    refused = run("registration-link", "--url", "qkv.school.example", "--database-url", url)
    assert refused.returncode != 0 and "is not an absolute http(s) URL" in refused.stderr


def _link_rows(database: Database) -> list[Any]:
    from sqlalchemy import select

    from qkv.store.sql.tables import LtiRegistrationLink as Link

    with database.read() as conn:
        return list(conn.execute(select(Link.created_at, Link.expires_at)))
