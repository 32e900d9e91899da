"""A plain HTML reference of the JSON API, built from the OpenAPI document.

FastAPI's interactive docs load Swagger UI from a CDN, which breaks offline and under our
Content-Security-Policy; this page needs nothing but the server. ``/openapi.json`` has the rest.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any


def render_api_reference(spec: dict[str, Any]) -> str:
    """HTML listing every operation with its summary, description, request body and responses.

    Parameters
    ----------
    spec : dict
        An OpenAPI 3 document.

    Returns
    -------
    str
        A complete HTML page.

    Examples
    --------
    >>> page = render_api_reference({"info": {"title": "T", "version": "1"}, "paths": {
    ...     "/api/x": {"get": {"summary": "Get x", "responses": {"200": {"description": "OK"}}}}}})
    >>> "<code>GET /api/x</code>" in page and "Get x" in page
    True
    """
    schemas = spec.get("components", {}).get("schemas", {})
    info = spec.get("info", {})
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{escape(str(info.get('title', 'API')))}: API reference</title>",
        "<link rel='stylesheet' href='/static/lesson.css'></head>",
        "<body><main id='main' class='api-reference'>",
        f"<h1>{escape(str(info.get('title', 'API')))} {escape(str(info.get('version', '')))}: JSON API</h1>",
        "<p>Requests that change anything need the header <code>X-CSRF-Token</code> with the token "
        "from a page's "
        "<code>csrf-token</code> meta tag, and the learner cookie that page set. Every error answers "
        '<code>{"detail": "a sentence"}</code>. The machine-readable document is '
        "<a href='/openapi.json'>/openapi.json</a>.</p>",
    ]
    for path, operations in spec.get("paths", {}).items():
        for method, operation in operations.items():
            anchor = f"{method}-{path}".replace("/", "-").replace("{", "").replace("}", "")
            parts.append(
                f"<section id='{escape(anchor)}'>"
                f"<h2><code>{escape(method.upper())} {escape(path)}</code></h2>"
            )
            if operation.get("summary"):
                parts.append(f"<p><strong>{escape(operation['summary'])}</strong></p>")
            if operation.get("description"):
                parts.append(f"<p>{escape(operation['description'])}</p>")
            body = (
                operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            )
            if body:
                parts.append("<h3>Request body</h3>" + _schema_html(body, schemas))
            parts.append("<h3>Responses</h3><ul>")
            for status, response in operation.get("responses", {}).items():
                parts.append(
                    f"<li><code>{escape(str(status))}</code>: "
                    f"{escape(str(response.get('description', '')))}</li>"
                )
            parts.append("</ul></section>")
    parts.append("</main></body></html>")
    return "".join(parts)


def _schema_html(schema: dict[str, Any], schemas: dict[str, Any]) -> str:
    ref = schema.get("$ref", "")
    resolved = schemas.get(ref.rsplit("/", 1)[-1], schema) if ref else schema
    rows = []
    for name, field in resolved.get("properties", {}).items():
        example = field.get("examples", [None])[0] if field.get("examples") else field.get("default")
        shown = escape(json.dumps(example)) if example is not None else ""
        rows.append(
            f"<tr><td><code>{escape(name)}</code></td><td>{escape(str(field.get('type', 'see schema')))}</td>"
            f"<td><code>{shown}</code></td></tr>"
        )
    if not rows:
        return "<p>An empty JSON object: <code>{}</code>.</p>"
    return (
        "<table><thead><tr><th>field</th><th>type</th><th>example</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
