"""``qkv learners``: a roster becomes accounts and a private CSV of one-time links, as a teacher runs it."""

from __future__ import annotations

import csv
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from qkv.store import Store


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qkv", *args], capture_output=True, text=True, timeout=120)


def _links(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def test_import_writes_private_links_that_sign_in_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    roster = tmp_path / "period-3.csv"
    # As a spreadsheet saves "CSV UTF-8": with a byte-order mark, CRLF lines.
    roster.write_bytes(
        "\ufeffName,External ID,Email\r\nAda Lovelace,s-1001,ada@school.example\r\n=Grace,s-1002,\r\n".encode()
    )
    done = run("learners", "import", str(roster), "--database-url", url, "--url", "https://qkv.example/")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "period-3-links.csv"
    assert f"Imported 2 learners from {roster}." in done.stdout and str(out) in done.stdout
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    rows = _links(out)
    assert [(r["name"], r["external_id"], r["email"]) for r in rows] == [
        ("Ada Lovelace", "s-1001", "ada@school.example"),
        ("'=Grace", "s-1002", ""),  # a spreadsheet shows it as text, never runs it
    ]
    token = re.fullmatch(r"https://qkv\.example/sign-in#token=([A-Za-z0-9_-]{43})", rows[0]["sign_in_link"])
    assert token is not None and rows[0]["expires_at_utc"]
    store = Store(url)
    try:
        ada = store.accounts.find(None, "s-1001")
        assert ada is not None and store.accounts.redeem(token.group(1)) == ada.learner_id
        assert store.accounts.redeem(token.group(1)) is None
    finally:
        store.close()
    listed = run("learners", "list", "--database-url", url)
    assert "Ada Lovelace  s-1001" in listed.stdout and "=Grace  s-1002" in listed.stdout


def test_a_bad_roster_is_refused_by_line_and_nothing_is_imported(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    roster = tmp_path / "roster.csv"
    roster.write_text("name,external id\nAda,s-1\nGrace,\nKatherine,s-1\n", encoding="utf-8")
    done = run("learners", "import", str(roster), "--database-url", url)
    assert done.returncode == 1
    assert (
        f"Error: {roster}: The roster has 2 bad rows, so nothing was imported: line 3: 'Grace' has no external id; "
        "line 4: the external id 's-1' is on line 2 already." in done.stderr
    )
    assert not (tmp_path / "roster-links.csv").exists()
    listed = run("learners", "list", "--database-url", url)
    assert "No learner accounts yet" in listed.stdout
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"name,external id\nJos\xe9,s-9\n")
    refused = run("learners", "import", str(latin), "--database-url", url)
    assert refused.returncode == 1 and "is not UTF-8 text (line 2 has the byte 0xe9)" in refused.stderr
    missing = run("learners", "import", str(tmp_path / "nope.csv"), "--database-url", url)
    assert missing.returncode == 1 and "Cannot read the roster" in missing.stderr


def test_link_makes_a_new_link_for_one_learner(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    roster = tmp_path / "roster.csv"
    roster.write_text("name,external id\nAda,s-1\n", encoding="utf-8")
    assert (
        run(
            "learners", "import", str(roster), "--database-url", url, "--out", str(tmp_path / "l.csv")
        ).returncode
        == 0
    )
    made = run("learners", "link", "s-1", "--database-url", url, "--days", "2")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("Sign-in link for Ada (works once, for 2 days; keep it private):\n")
    assert re.search(r"http://127\.0\.0\.1:8000/sign-in#token=[A-Za-z0-9_-]{43}\n", made.stdout)
    unknown = run("learners", "link", "s-404", "--database-url", url)
    assert (
        unknown.returncode == 1 and "No learner of the roster has the external id 's-404'" in unknown.stderr
    )


def test_help_lists_the_learners_command() -> None:
    result = run("--help")
    assert "  learners " in result.stdout
