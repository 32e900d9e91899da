"""The page templates and static assets, checked without a browser: real Jinja2 rendering of the templates
with the contexts the web app passes, and the rules the pages' Content-Security-Policy relies on."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

jinja2 = pytest.importorskip("jinja2", reason="Jinja2 (the web extra) is not installed")

WEB = Path(__file__).resolve().parents[2] / "src" / "qkv" / "web"
TEMPLATES = WEB / "templates"
STATIC = WEB / "static"
FRONTEND = WEB.parents[2] / "frontend"
# The built-in widgets (of a chapter, or of one lesson): their scripts and styles are served to the same pages.
WIDGET_ASSETS = [
    *(WEB.parent / "lessons" / "content").glob("*/widgets/*/widget.js"),
    *(WEB.parent / "lessons" / "content").glob("*/widgets/*/widget.css"),
    *(WEB.parent / "lessons" / "content").glob("*/*/widgets/*/widget.js"),
    *(WEB.parent / "lessons" / "content").glob("*/*/widgets/*/widget.css"),
]


class _Scan(HTMLParser):
    """Collects every tag with its attributes, and the text of each <script>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)


def _scan(html: str) -> _Scan:
    scan = _Scan()
    scan.feed(html)
    return scan


def _env() -> Any:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)


# The contexts below are made up (a chapter of three lessons, a lesson of seven exercises): the templates
# show whatever they are given, so these tests name no count of the built-in chapter.
def _progress(last_answer: str | None = None) -> dict[str, Any]:
    return {
        "lesson_id": "L4.1",
        "variant_seed": None,
        "done": 2,
        "total": 7,
        "parts": [
            {
                "id": "part1",
                "title": "Part 1: by hand",
                "done": 1,
                "total": 2,
                "exercise_ids": ["q", "k"],
                "complete": False,
            },
            {
                "id": "part2",
                "title": "Part 2: in code",
                "done": 1,
                "total": 1,
                "exercise_ids": ["code"],
                "complete": True,
            },
            {
                "id": "empty",
                "title": "Reading only",
                "done": 0,
                "total": 0,
                "exercise_ids": [],
                "complete": False,
            },
            {
                "id": "quiz",
                "title": "Check your understanding",
                "done": 0,
                "total": 1,
                "exercise_ids": ["quiz"],
                "complete": False,
            },
        ],
        "exercises": {
            "q": {
                "kind": "numeric",
                "status": "correct",
                "done": True,
                "attempts": 1,
                "last_answer": "[3, 2]",
                "feedback": {"correct": True, "message": "Right.", "counted_as_attempt": True},
            },
            "k": {
                "kind": "numeric",
                "status": "untouched",
                "done": False,
                "attempts": 0,
                "last_answer": last_answer,
                "feedback": None,
            },
            "quiz": {
                "kind": "choice",
                "status": "untouched",
                "done": False,
                "attempts": 0,
                "last_answer": None,
                "feedback": None,
            },
        },
        "code": {"code": {"source": "print(1)", "result": {"status": "pass", "tests": []}}},
    }


def _lesson_context(progress: dict[str, Any]) -> dict[str, Any]:
    exercises = {
        "q": SimpleNamespace(id="q", part="part1", kind="numeric"),
        "k": SimpleNamespace(id="k", part="part1", kind="numeric"),
        "code": SimpleNamespace(id="code", part="part2", kind="code"),
        "quiz": SimpleNamespace(id="quiz", part="quiz", kind="choice"),
    }
    lesson = SimpleNamespace(
        id="L4.1",
        title="Queries, keys and values",
        place="L4.1 · lesson 1 of 3",
        goal="Learn Q, K, V.",
        exercises=exercises,
    )
    sections = [
        SimpleNamespace(
            id="idea",
            title="The idea",
            html='<section class="lesson-section" id="idea"><h2>Idea</h2></section>',
        ),
        SimpleNamespace(
            id="part1",
            title="Part 1",
            html='<section class="lesson-section" id="part1"><h2>P1</h2></section>',
        ),
    ]
    return {
        "request": None,
        "lesson": lesson,
        "sections": sections,
        "progress": progress,
        "csrf_token": "token-123",
        "learner": {"display_name": "Ada <b>"},
        "variant": {},
        "variant_sections": ["part1"],
        "sandbox": "bubblewrap",
    }


def test_lesson_template_embeds_progress_csrf_and_a_module_script_only() -> None:
    html = _env().get_template("lesson.html").render(**_lesson_context(_progress()))
    scan = _scan(html)
    metas = [attrs for tag, attrs in scan.tags if tag == "meta" and attrs.get("name") == "csrf-token"]
    assert metas == [{"name": "csrf-token", "content": "token-123"}]
    scripts = [attrs for attrs, _ in scan.scripts]
    assert scripts == [
        {"type": "application/json", "id": "progress-data"},
        {"type": "module", "src": "/static/lesson.js"},
    ]
    assert json.loads(scan.scripts[0][1]) == _progress()
    # Sections appear in the order given, unescaped; the learner's name is escaped.
    assert html.index('id="idea"') < html.index('id="part1"')
    assert "Ada &lt;b&gt;" in html
    # How code is graded is said in words; the sandbox's program name is not the learner's business.
    assert "graded on this machine, in a sandbox" in html and "bubblewrap" not in html


def test_lesson_template_progress_panel_shows_what_the_progress_document_says() -> None:
    progress = _progress()
    html = _env().get_template("lesson.html").render(**_lesson_context(progress))
    parts = re.findall(
        r'<li class="progress-part( is-done)?" data-part="([\w-]+)">\s*<a href="#([\w-]+)">([^<]*)</a>\s*'
        r'<span class="part-status">([^<]*)</span>',
        html,
    )
    assert parts == [
        ("", "part1", "part1", "Part 1: by hand", "1 of 2"),
        (" is-done", "part2", "part2", "Part 2: in code", "✓ done"),
        ("", "quiz", "quiz", "Check your understanding", "0 of 1"),
    ]  # a part without exercises is not listed
    assert re.search(r"2 of 7 exercises done", html)
    assert 'data-variant-sections="part1"' in html
    # The template counts nothing itself: whatever the document says is what the panel shows.
    progress["parts"][0].update(done=2, complete=True)
    progress.update(done=5, total=9)
    html = _env().get_template("lesson.html").render(**_lesson_context(progress))
    assert '<li class="progress-part is-done" data-part="part1">' in html
    assert "5 of 9 exercises done" in html


def test_a_saved_answer_cannot_close_the_progress_script() -> None:
    hostile = "</script><script>alert(1)</script>"
    html = _env().get_template("lesson.html").render(**_lesson_context(_progress(last_answer=hostile)))
    scan = _scan(html)
    assert len(scan.scripts) == 2
    assert json.loads(scan.scripts[0][1])["exercises"]["k"]["last_answer"] == hostile


def test_index_and_error_templates_render_their_contexts() -> None:
    env = _env()
    index = env.get_template("index.html").render(
        request=None,
        chapters=[
            {
                "id": "L4",
                "title": "Attention",
                "lessons": [
                    {
                        "id": "L4.1",
                        "title": "Queries, keys and values",
                        "place": "L4.1 · lesson 1 of 3",
                        "goal": "Learn Q, K, V.",
                        "url": "/lessons/L4.1",
                        "done": 5,
                        "total": 5,
                    },
                ],
            }
        ],
        learner={"display_name": None},
        csrf_token="t",
    )
    assert '<a href="/lessons/L4.1">' in index
    assert "5 of 5 exercises done" in index and "✓ complete" in index
    assert [attrs.get("src") for attrs, _ in _scan(index).scripts] == ["/static/index.js"]
    error = env.get_template("error.html").render(
        request=None, status_code=404, message="There is no lesson 'L9.9'."
    )
    assert "Page not found" in error
    assert "There is no lesson &#39;L9.9&#39;." in error


def test_every_form_control_in_the_templates_is_labelled() -> None:
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text()
        for control_id in re.findall(r'<(?:input|select|textarea)[^>]*\sid="([^"]+)"', text):
            assert f'for="{control_id}"' in text, f"{template.name}: #{control_id} has no <label for>."


@pytest.mark.parametrize(
    "path",
    sorted([*TEMPLATES.glob("*.html"), *STATIC.rglob("*.js"), *STATIC.glob("*.css"), *WIDGET_ASSETS]),
)
def test_assets_need_no_network_and_no_inline_code(path: Path) -> None:
    text = path.read_text()
    # Nothing is fetched from another host (the SVG namespace is a name, not a request).
    urls = set(re.findall(r"https?://[^\s\"')]+", text)) - {"http://www.w3.org/2000/svg"}
    assert urls == set(), f"{path.name} refers to {sorted(urls)}"
    if path.suffix == ".html":
        assert not re.search(r"\son[a-z]+\s*=", text), f"{path.name} has an inline event handler."
        assert not re.search(r'style="', text), f"{path.name} has an inline style attribute."
        for attrs, _body in _scan(text).scripts:
            assert attrs.get("src") or attrs.get("type") == "application/json", (
                f"{path.name} has an inline script."
            )


def test_editor_bundle_is_built_from_the_committed_source() -> None:
    bundle = (STATIC / "vendor" / "editor.js").read_text()
    assert re.search(r"export\s*\{[^}]*\bmountEditor\b", bundle), "The bundle does not export mountEditor."
    assert "Mod-Enter" in bundle
    source = (FRONTEND / "src" / "editor.js").read_text()
    assert 'indentUnit.of("    ")' in source
    assert "Prec.highest(" in source
    package = json.loads((FRONTEND / "package.json").read_text())
    lock = json.loads((FRONTEND / "package-lock.json").read_text())
    for name in ("@codemirror/view", "@codemirror/lang-python", "@codemirror/language"):
        assert name in package["dependencies"]
        assert f"node_modules/{name}" in lock["packages"]


def test_lesson_template_says_when_the_lesson_is_complete_and_where_to_go_next() -> None:
    template = _env().get_template("lesson.html")
    unfinished = template.render(**_lesson_context(_progress()))
    assert re.search(r'<p class="lesson-complete" id="lesson-complete" role="status" hidden>', unfinished)
    finished = {**_progress(), "done": 7}
    onward = {"title": "Scaled dot-product scores", "place": "L4.2 · lesson 2 of 3", "url": "/lessons/L4.2"}
    page = template.render(**{**_lesson_context(finished), "onward": onward})
    assert '<p class="lesson-complete" id="lesson-complete" role="status">' in page
    assert 'Next: <a href="/lessons/L4.2">L4.2 · lesson 2 of 3, Scaled dot-product scores</a>.' in page
    planned = template.render(**{**_lesson_context(finished), "onward": {**onward, "url": None}})
    assert "Next in the chapter: Scaled dot-product scores (not written yet)." in planned
    assert '<a href="/">Back to all lessons</a>' in planned


def test_every_script_of_ours_is_type_checked_by_make_lint_with_the_pinned_typescript() -> None:
    """Our scripts and the widgets opt in with ``// @ts-check``; ``make lint`` runs the pinned tsc over the
    files ``frontend/tsconfig.json`` includes, which are all of them (the bundle only through its types)."""
    ours = [path for path in STATIC.rglob("*.js") if "vendor" not in path.relative_to(STATIC).parts]
    scripts = [*ours, *(path for path in WIDGET_ASSETS if path.suffix == ".js")]
    template = WEB.parent / "lessons" / "new_lesson" / "widget" / "widget.js.tmpl"
    assert [path for path in [*scripts, template] if not path.read_text().startswith("// @ts-check\n")] == []
    config = json.loads((FRONTEND / "tsconfig.json").read_text())
    included = {path.resolve() for pattern in config["include"] for path in FRONTEND.glob(pattern)}
    assert {path.resolve() for path in scripts} <= included
    assert (STATIC / "vendor" / "editor.d.ts").is_file()
    version = json.loads((FRONTEND / "package.json").read_text())["devDependencies"]["typescript"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), "TypeScript is pinned to one version."
    lock = json.loads((FRONTEND / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/typescript"]["version"] == version
    makefile = (WEB.parents[2] / "Makefile").read_text()
    lint = makefile.split("\nlint:")[1].split("\n\n")[0]
    assert "$(TSC) -p $(FRONTEND)/tsconfig.json --checkJs --noEmit" in lint
    assert "$(TSC) -p $(FRONTEND)/tsconfig.kit.json --checkJs --noEmit" in lint
    # The modules every widget imports, under TypeScript's strict rules as well.
    kit = json.loads((FRONTEND / "tsconfig.kit.json").read_text())
    assert kit["compilerOptions"]["strict"] is True
    assert {(FRONTEND / name).resolve() for name in kit["files"]} == {
        STATIC / "js" / name for name in ("format.js", "api.js", "widget-kit.js")
    }
