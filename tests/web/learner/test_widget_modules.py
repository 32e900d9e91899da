"""Every widget's script, read as text: one ``mount`` export and the shared kit instead of private copies of
its helpers. That no function of a widget or of the kit is longer than a screen (60 lines) is held, with every
other script's, by ``tests/test_function_lengths.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import lesson_contract as contract

STATIC = Path(__file__).resolve().parents[3] / "src" / "qkv" / "web" / "static"
KIT = STATIC / "js" / "widget-kit.js"


def widget_scripts() -> list[Path]:
    return [widget.asset("widget.js") for widget in contract.catalog().widgets]


@pytest.mark.content
@pytest.mark.parametrize("path", widget_scripts(), ids=lambda path: path.parent.name)
def test_each_widget_exports_mount_and_uses_the_shared_kit(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert re.search(r"^export function mount\(element(, ctx = \{\})?\) \{$", text, re.M), (
        f"{path} exports no mount(element) or mount(element, ctx = {{}})."
    )
    imports = re.findall(r'^import .* from "([^"]+)";$', text, re.M)
    assert "/static/js/widget-kit.js" in imports
    # Other widgets' files are not its business: it imports the page's shared modules only.
    assert all(re.fullmatch(r"/static/js/[a-z-]+\.js", source) for source in imports), imports
    # The kit's helpers are not written again: no private SVG factory, config parsing or id counter.
    assert "createElementNS" not in text
    assert "JSON.parse" not in text
    assert "dataset.mounted" not in text


@pytest.mark.content
def test_the_kit_exports_what_the_widgets_import() -> None:
    kit = KIT.read_text(encoding="utf-8")
    exported = set(re.findall(r"^export function (\w+)", kit, re.M))
    exported |= {
        name.strip() for group in re.findall(r"^export \{([^}]*)\}", kit, re.M) for name in group.split(",")
    }
    for path in widget_scripts():
        (names,) = re.findall(
            r'^import \{([^}]*)\} from "/static/js/widget-kit.js";$', path.read_text(), re.M
        )
        assert {name.strip() for name in names.split(",")} <= exported, path


@pytest.mark.content
def test_lesson_js_loads_each_widget_from_its_folder_and_names_none() -> None:
    lesson_js = (STATIC / "lesson.js").read_text(encoding="utf-8")
    assert "import(`/widgets/${name}/widget.js`)" in lesson_js
    assert not any(name in lesson_js for name in contract.catalog().widgets.names())
    assert not (STATIC / "js" / "widgets").exists()
