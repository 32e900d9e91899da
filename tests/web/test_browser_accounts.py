"""Learner accounts in Chromium: a roster's link signs in, progress follows to a second browser, the device
link and its QR code, signing out, all by keyboard, at 375 px, in dark mode, and axe-clean. Before its
button, the page a link opens names the account and says what becomes of this browser's work; the link's
token (in the URL's fragment) leaves the address bar at once.

One uvicorn server per module on a SQLite file that ``qkv learners`` (run as a teacher runs it) writes to.
Screenshots go to ``test-artifacts/accounts-*.png``.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser_support import (
    BROWSER,
    LiveServer,
    live_app,
    new_page,
    page_progress,
    screenshot,
    tab_to,
)

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"  # bundled; nothing is fetched

pytestmark = BROWSER


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Path]]:
    folder = tmp_path_factory.mktemp("accounts-browser")
    with live_app(folder) as live:
        yield live, folder


def _qkv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qkv", *args], capture_output=True, text=True, timeout=120)


def _roster_links(server: tuple[LiveServer, Path], rows: str) -> dict[str, str]:
    """Import a roster with the real command; each external id's link from the CSV it writes."""
    live, folder = server
    roster = folder / f"roster-{abs(hash(rows))}.csv"
    roster.write_text("name,external id\n" + rows, encoding="utf-8")
    imported = _qkv(
        "learners",
        "import",
        str(roster),
        "--database-url",
        f"sqlite:///{folder / 'qkv.db'}",
        "--url",
        live.url,
    )
    assert imported.returncode == 0, imported.stderr
    with roster.with_name(f"{roster.stem}-links.csv").open(encoding="utf-8", newline="") as stream:
        return {row["external_id"]: row["sign_in_link"] for row in csv.DictReader(stream)}


def _open_link(page: Any, link: str) -> str:
    """Open a sign-in link; the page posts its fragment's token to be checked. The confirmation's text."""
    from playwright.sync_api import expect

    page.goto(link)
    expect(page.locator("h1")).to_contain_text("Sign in as")
    assert "token" not in page.url  # the token left the address bar (and the history)
    assert page.evaluate("() => window.location.hash") == ""
    return str(page.locator("main").inner_text())


def _sign_in_by_keyboard(page: Any, link: str) -> str:
    confirmation = _open_link(page, link)
    tab_to(page, "el => el.tagName === 'BUTTON' && el.textContent.trim().startsWith('Sign in as')", limit=40)
    page.keyboard.press("Enter")
    page.wait_for_selector("h1:has-text('You are signed in')")
    return confirmation


def _answer_q(page: Any, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    box = page.locator("#answer-q")
    box.fill("3, 2")
    box.press("Enter")
    expect(page.locator("#feedback-q")).to_have_class(re.compile("is-correct"))


@pytest.mark.timeout(240)
def test_roster_link_signs_in_and_progress_follows_to_a_second_browser(
    server: tuple[LiveServer, Path], chromium: Any
) -> None:
    from playwright.sync_api import expect

    live, folder = server
    links = _roster_links(server, "Ada Lovelace,s-1001\nGrace Hopper,s-1002\n")
    errors: list[str] = []
    laptop = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    # Some work before signing in: it is merged, and the page says so.
    laptop.goto(live.lesson_url)
    laptop.locator("#answer-averaged").fill("K")
    laptop.locator("#answer-averaged").press("Enter")
    expect(laptop.locator("#feedback-averaged")).to_have_class(re.compile("is-wrong"))
    assert links["s-1001"].startswith(f"{live.url}/sign-in#token=")
    confirmation = _open_link(laptop, links["s-1001"])
    assert confirmation.startswith("Sign in as Ada Lovelace (s-1001)?")
    # The personal link says which account receives this browser's work, before the button.
    assert (
        "Anything done in this browser without signing in becomes part of the account of Ada Lovelace "
        "(s-1001)." in confirmation
    )
    screenshot(laptop, "accounts-personal-link-desktop")
    laptop.get_by_role("button", name="Sign in as Ada Lovelace (s-1001)").click()
    expect(laptop.locator(".merge-note")).to_contain_text("1 answer and 0 programs on 1 exercise")
    expect(laptop.locator(".account-nav")).to_contain_text("Ada Lovelace")
    screenshot(laptop, "accounts-signed-in-desktop")
    _answer_q(laptop, live.lesson_url)

    # A second browser: a new link from the command line, and the same progress.
    again = _qkv(
        "learners", "link", "s-1001", "--database-url", f"sqlite:///{folder / 'qkv.db'}", "--url", live.url
    )
    assert again.returncode == 0, again.stderr
    second_link = re.search(r"(http://\S+/sign-in#token=\S+)", again.stdout)
    assert second_link is not None
    tablet = new_page(chromium, errors, viewport={"width": 390, "height": 844})
    tablet.goto(live.lesson_url)
    assert not page_progress(tablet)["exercises"]["q"]["done"]
    _sign_in_by_keyboard(tablet, second_link.group(1))
    tablet.goto(live.lesson_url)
    progress = page_progress(tablet)
    assert progress["exercises"]["q"]["done"]
    assert progress["exercises"]["averaged"]["attempts"] == 1  # the merged attempt, on every device
    expect(tablet.locator("#feedback-q")).to_have_class(re.compile("is-correct"))

    # Signing out by keyboard: this browser is anonymous again, the other one stays signed in.
    tab_to(tablet, "el => el.tagName === 'BUTTON' && el.textContent.includes('Sign out')", limit=40)
    tablet.keyboard.press("Enter")
    tablet.wait_for_url(re.compile(r"/$"))
    expect(tablet.locator(".account-nav")).to_have_count(0)
    tablet.goto(live.lesson_url)
    assert not page_progress(tablet)["exercises"]["q"]["done"]
    laptop.goto(live.lesson_url)
    assert page_progress(laptop)["exercises"]["q"]["done"]
    assert errors == []
    # The used link does not sign anyone in again: its page says so.
    stranger = new_page(chromium, errors)
    stranger.goto(links["s-1001"])
    expect(stranger.locator("main")).to_contain_text("This sign-in link was already used")
    assert errors == ["Failed to load resource: the server responded with a status of 401 (Unauthorized)"]
    response = stranger.request.post(
        live.url + "/sign-in", form={"token": links["s-1001"].split("token=")[1]}
    )
    assert response.status == 401


@pytest.mark.timeout(240)
def test_sign_in_on_another_device_with_the_link_and_its_qr_code(
    server: tuple[LiveServer, Path], chromium: Any
) -> None:
    from playwright.sync_api import expect

    live, _ = server
    links = _roster_links(server, "Katherine Johnson,s-2001\n")
    errors: list[str] = []
    laptop = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    _sign_in_by_keyboard(laptop, links["s-2001"])
    _answer_q(laptop, live.lesson_url)
    laptop.get_by_role("link", name="Sign in on another device").click()
    laptop.get_by_role("button", name="Make a sign-in link").click()
    qr = laptop.get_by_role("img", name="QR code of the sign-in link above")
    expect(qr).to_be_visible()
    assert (qr.get_attribute("src") or "").startswith("data:image/svg+xml;base64,")
    assert qr.evaluate("img => img.naturalWidth") > 0  # the SVG decodes under the page's CSP
    device_link = laptop.locator(".device-link a").get_attribute("href")
    assert device_link and device_link.startswith(live.url + "/sign-in#token=")
    screenshot(laptop, "accounts-device-link-desktop")

    # Whoever presses the link (here a phone with anonymous work of its own) first reads whose account it
    # opens, and that their work is not added to it.
    phone = new_page(chromium, errors, viewport={"width": 375, "height": 800}, is_mobile=True)
    phone.goto(live.lesson_url)
    phone.locator("#answer-averaged").fill("K")
    phone.locator("#answer-averaged").press("Enter")
    expect(phone.locator("#feedback-averaged")).to_have_class(re.compile("is-wrong"))
    confirmation = _open_link(phone, device_link)
    assert confirmation.startswith("Sign in as Katherine Johnson (s-2001)?")
    assert "made on a device signed in as Katherine Johnson (s-2001)" in confirmation
    assert "Nothing done in this browser without signing in is added to that account." in confirmation
    expect(phone.get_by_role("button", name="Sign in as Katherine Johnson (s-2001)")).to_be_visible()
    screenshot(phone, "accounts-device-link-confirm-phone")
    tab_to(phone, "el => el.tagName === 'BUTTON' && el.textContent.trim().startsWith('Sign in as')", limit=40)
    phone.keyboard.press("Enter")
    expect(phone.locator(".merge-note")).to_contain_text("with a link from another device")
    phone.goto(live.lesson_url)
    progress = page_progress(phone)
    assert progress["exercises"]["q"]["done"]
    assert progress["exercises"]["averaged"]["attempts"] == 0  # the phone's own answer stayed out

    # The laptop signs out on every device, by keyboard: the phone's session ends as well.
    laptop.goto(live.url + "/account/devices")
    tab_to(
        laptop,
        "el => el.tagName === 'BUTTON' && el.textContent.trim() === 'Sign out on every device'",
        limit=40,
    )
    laptop.keyboard.press("Enter")
    laptop.wait_for_url(re.compile(r"/$"))
    for browser in (laptop, phone):
        browser.goto(live.lesson_url)
        expect(browser.locator(".account-nav")).to_have_count(0)
        assert not page_progress(browser)["exercises"]["q"]["done"]
    assert errors == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1100, 375], ids=["desktop", "phone"])
def test_the_sign_in_pages_are_axe_clean_and_fit_a_phone(
    server: tuple[LiveServer, Path], chromium: Any, width: int, scheme: str
) -> None:
    live, _ = server
    links = _roster_links(server, f"Axe {width} {scheme},axe-{width}-{scheme}\n")
    errors: list[str] = []
    page = new_page(
        chromium, errors, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True
    )

    def check(name: str, within: str = "html") -> None:
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate(
            """async (within) => (await axe.run(within, {resultTypes: ['violations']})).violations.map(
                (v) => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}))""",
            within,
        )
        assert violations == [], f"{name}: {violations}"
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"{name} is {scroll} px wide at a {width} px viewport"
        if scheme == "dark":
            background = page.evaluate("getComputedStyle(document.body).backgroundColor")
            assert sum(int(n) for n in re.findall(r"\d+", background)[:3]) < 150, background
        screenshot(page, f"accounts-{name}-{width}-{scheme}")

    page.goto(live.url + "/sign-in")
    check("sign-in-without-link")
    _open_link(page, links[f"axe-{width}-{scheme}"])
    check("sign-in")
    page.get_by_role("button", name="Sign in as").click()
    page.wait_for_selector("h1:has-text('You are signed in')")
    check("signed-in")
    page.goto(live.url + "/account/devices")
    page.get_by_role("button", name="Make a sign-in link").click()
    page.wait_for_selector(".device-qr img")
    check("device-link")
    page.goto(live.lesson_url)
    check("lesson-signed-in", within=".site-header")  # the lesson itself is checked by test_browser_walk
    assert errors == []


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("width", "scheme"), [(1100, "light"), (375, "dark")], ids=["desktop", "phone-dark"])
def test_the_instructor_makes_a_learners_link_by_keyboard(
    server: tuple[LiveServer, Path], chromium: Any, width: int, scheme: str
) -> None:
    from playwright.sync_api import expect

    live, _ = server
    name = f"Mary Jackson {width}"
    _roster_links(server, f"{name},mj-{width}\n")
    _, token = live.app.state.qkv.store.instructors.add(f"Teacher {width}")
    errors: list[str] = []
    page = new_page(
        chromium, errors, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True
    )
    page.goto(f"{live.url}/instructor/sign-in#token={token}")
    assert page.evaluate("() => window.location.hash") == ""  # the token left the address bar
    page.get_by_role("button", name="Sign in as instructor").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    page.goto(f"{live.url}/instructor/class")  # who is where: every learner, the roster's too
    tab_to(page, f"el => el.tagName === 'A' && el.textContent.trim() === {name!r}", limit=400)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/instructor/learners/"))
    label = f"Make a sign-in link for {name}"
    tab_to(page, f"el => el.getAttribute('aria-label') === {label!r}", limit=400)
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text(f"Sign-in link for {name}")
    link = page.locator(".device-link a").get_attribute("href")
    assert link and link.startswith(live.url + "/sign-in#token=")
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations.map((v) => v.id)"
    )
    assert violations == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"accounts-instructor-link-{width}-{scheme}")

    learner = new_page(chromium, errors)
    _sign_in_by_keyboard(learner, link)
    expect(learner.locator(".account-nav")).to_contain_text(name)
    assert errors == []
