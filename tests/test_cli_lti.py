"""``qkv lti``: register, list and remove the LMS platforms, as an administrator runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
    token = link.rsplit("/", 1)[-1]
    database = Database(url)
    try:
        links = RegistrationLinks(database)
        assert links.check(token) is LinkState.FRESH
        assert links.use(token, "https://moodle.school.example") and not links.use(token, "x")
    finally:
        database.close()
    refused = run("registration-link", "--url", "qkv.school.example", "--database-url", url)
    assert refused.returncode != 0 and "is not an absolute http(s) URL" in refused.stderr
