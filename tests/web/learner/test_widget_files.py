"""Each widget's script and styles are served from its folder, to the pages that show it, and nothing else is.

The app is the real one (``create_app``) on a temporary SQLite file; requests go through Starlette's test
client, middleware included, without starting the grader (no route here grades).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from qkv.lessons import load_catalog
from qkv.web.app import create_app
from qkv.web.http.security import CONTENT_SECURITY_POLICY
from qkv.web.settings import Settings

WIDGETS = load_catalog().widgets


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'web.sqlite3'}", secret_key="k" * 32)
    return TestClient(create_app(settings))


@pytest.mark.parametrize("name", WIDGETS.names())
def test_each_widget_serves_its_script_and_styles_from_its_folder(client: TestClient, name: str) -> None:
    widget = WIDGETS.get(name)
    assert widget is not None
    for file_name, content_type in (("widget.js", "text/javascript"), ("widget.css", "text/css")):
        response = client.get(f"/widgets/{name}/{file_name}")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith(content_type)
        assert response.content == widget.asset(file_name).read_bytes()
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"


def test_widget_files_are_cached_like_the_other_static_files(client: TestClient) -> None:
    name = WIDGETS.names()[0]
    for path in ("/static/lesson.js", f"/widgets/{name}/widget.js"):
        first = client.get(path)
        assert first.headers["etag"] and first.headers["last-modified"]
        again = client.get(path, headers={"if-none-match": first.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
    assert client.head(f"/widgets/{name}/widget.css").status_code == 200
    assert client.post(f"/widgets/{name}/widget.css").status_code == 405


@pytest.mark.parametrize(
    "path",
    [
        "/widgets/{name}/widget.py",  # the widget's Python stays on the server
        "/widgets/{name}/",
        "/widgets/{name}",
        "/widgets/{name}/__pycache__",
        "/widgets/sparkles/widget.js",  # no such widget
        "/widgets/{name}/%2e%2e/%2e%2e/chapter.toml",
        "/widgets/%2e%2e/chapter.toml",
        "/widgets/{name}/..%2f..%2fchapter.toml",
        "/widgets/{name}/..%2f..%2fL4.1-queries-keys-values%2flesson.py",
        "/widgets/{name}/widget.js%00",
        "/widgets/{name}/widget.js/x",
    ],
)
def test_nothing_else_is_served_under_widgets(client: TestClient, path: str) -> None:
    response = client.get(path.format(name=WIDGETS.names()[0]))
    # A NUL in the path is refused before any route or folder (400); anything else finds nothing (404).
    assert response.status_code == (400 if "%00" in path else 404), (path, response.text[:200])


def test_the_lesson_page_links_the_styles_of_the_widgets_it_shows(client: TestClient) -> None:
    for lesson in load_catalog().lessons:
        page = client.get(f"/lessons/{lesson.id}").text
        linked = re.findall(r'<link rel="stylesheet" href="/widgets/([a-z0-9-]+)/widget\.css">', page)
        shown = re.findall(r'<div class="widget" data-widget="([a-z0-9-]+)"', page)
        assert linked == list(lesson.widget_names)
        assert set(linked) == set(shown)
        for name in linked:
            assert client.get(f"/widgets/{name}/widget.css").status_code == 200


def test_the_widget_kit_is_a_static_module(client: TestClient) -> None:
    response = client.get("/static/js/widget-kit.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert "export function claim(" in response.text
