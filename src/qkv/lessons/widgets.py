"""Widgets: plug-in folders that a chapter ships, found by name, checked and rendered by the engine.

A chapter folder may hold a ``widgets`` folder with one folder per widget, named after it
(``widgets/NAME/``, lowercase letters, digits and dashes), for widgets its lessons share; a lesson folder
may hold one too, for widgets of its own. Each widget folder holds three files:

* ``widget.py``: ``check(settings, names) -> list[str]``, the problems with a ``{widget} NAME`` block as
  sentences; ``config(settings, names) -> dict``, the JSON the script reads; and
  ``render(settings, names) -> str``, the HTML the page shows before (and without) JavaScript.
  ``settings`` is the block's TOML body, ``names`` the variant's values;
* ``widget.js``: an ES module exporting ``mount(element, ctx)``, which makes the element live;
* ``widget.css``: its styles, loaded by the pages that show it.

On the page a widget is ``<div class="widget" data-widget="NAME" data-config='JSON'>fallback</div>``.
The engine names no widget: it knows the ones it found in the loaded chapters.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qkv.lessons.model import LessonError, Problem
from qkv.lessons.pyfiles import import_lesson_file, line_in

__all__ = [
    "ASSET_FILES",
    "NAME_PATTERN",
    "WIDGETS_FOLDER",
    "Widget",
    "WidgetSet",
    "check_widget",
    "load_widgets",
]

WIDGETS_FOLDER = "widgets"
PYTHON_FILE = "widget.py"
ASSET_FILES = ("widget.js", "widget.css")  # what the web app may serve from a widget's folder
NAME_PATTERN = re.compile(r"[a-z][a-z0-9-]*")  # lesson.js accepts the same names
_HOOKS = ("check", "config", "render")

CheckFunction = Callable[[Mapping[str, Any], Mapping[str, Any]], list[str]]
ConfigFunction = Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]
RenderFunction = Callable[[Mapping[str, Any], Mapping[str, Any]], str]


@dataclass(frozen=True)
class Widget:
    """One widget folder: its name, where it is, and the three functions of its ``widget.py``.

    Examples
    --------
    >>> widget = Widget("dots", Path("widgets/dots"), lambda s, n: [], lambda s, n: {}, lambda s, n: "")
    >>> widget.asset("widget.css")
    PosixPath('widgets/dots/widget.css')
    """

    name: str
    folder: Path
    check_function: CheckFunction = field(repr=False)
    config_function: ConfigFunction = field(repr=False)
    render_function: RenderFunction = field(repr=False)

    @property
    def source(self) -> Path:
        """The widget's ``widget.py``."""
        return self.folder / PYTHON_FILE

    def asset(self, file_name: str) -> Path:
        """The path of ``widget.js`` or ``widget.css`` in the widget's folder.

        Raises
        ------
        LessonError
            For any other name: nothing else of the folder is served.
        """
        if file_name not in ASSET_FILES:
            raise LessonError(f"A widget serves only {' and '.join(ASSET_FILES)}, not {file_name!r}.")
        return self.folder / file_name

    def check(self, settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
        """The problems its ``check`` finds, or one sentence saying how ``check`` itself failed."""
        try:
            problems = self.check_function(settings, names)
        except Exception as error:  # the author's code may raise anything; it becomes a sentence
            return [f"{self._failure('check', error)}."]
        if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
            return [f"{self.source}: check() must return a list of sentences, not {problems!r}."]
        return problems

    def html(self, settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
        """The widget's element: its JSON config in ``data-config`` and its fallback HTML inside.

        Raises
        ------
        LessonError
            If ``config`` or ``render`` fails or returns the wrong kind of value.
        """
        config = self._call(self.config_function, "config", settings, names)
        fallback = self._call(self.render_function, "render", settings, names)
        if not isinstance(config, dict) or not isinstance(fallback, str):
            raise LessonError(
                f"{self.source}: config() must return a dict and render() a str, not a "
                f"{type(config).__name__} and a {type(fallback).__name__}."
            )
        try:
            config_json = json.dumps(config, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as error:
            raise LessonError(f"{self.source}: config() returned something not JSON-able: {error}.") from None
        return (
            f'<div class="widget" data-widget="{html.escape(self.name)}" '
            f"data-config='{html.escape(config_json, quote=True)}'>{fallback}</div>\n"
        )

    def _call(self, function: Callable[..., Any], hook: str, *arguments: Any) -> Any:
        try:
            return function(*arguments)
        except Exception as error:  # the author's code may raise anything; it becomes a LessonError
            raise LessonError(self._failure(hook, error)) from error

    def _failure(self, hook: str, error: Exception) -> str:
        line = line_in(error, self.source)
        return f"{self.source}:{line}: {hook}() failed with {type(error).__name__}: {error}"


@dataclass(frozen=True)
class WidgetSet:
    """The widgets a catalog (or a chapter) knows, by name.

    Examples
    --------
    >>> WidgetSet().check("sparkles", {}, {})
    ["There is no widget called 'sparkles' (known: none)."]
    >>> dots = Widget("dots", Path("dots"), lambda s, n: [], lambda s, n: {"n": 2}, lambda s, n: "··")
    >>> WidgetSet({"dots": dots}).html("dots", {}, {})
    '<div class="widget" data-widget="dots" data-config=\\'{&quot;n&quot;:2}\\'>··</div>\\n'
    """

    widgets: Mapping[str, Widget] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Widget]:
        return iter(self.widgets[name] for name in sorted(self.widgets))

    def __len__(self) -> int:
        return len(self.widgets)

    def __contains__(self, name: object) -> bool:
        return name in self.widgets

    def names(self) -> list[str]:
        """The names, sorted."""
        return sorted(self.widgets)

    def get(self, name: str) -> Widget | None:
        """The widget called ``name``, or None."""
        return self.widgets.get(name)

    def check(self, name: str, settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
        """Problems with a ``{widget} NAME`` block, as sentences (empty when it is fine)."""
        widget = self.widgets.get(name)
        if widget is None:
            known = ", ".join(self.names()) or "none"
            return [f"There is no widget called {name!r} (known: {known})."]
        return widget.check(settings, names)

    def html(self, name: str, settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
        """The element of the widget ``name`` (see :meth:`Widget.html`).

        Raises
        ------
        LessonError
            If there is no such widget, or it fails.
        """
        widget = self.widgets.get(name)
        if widget is None:
            raise LessonError(self.check(name, settings, names)[0])
        return widget.html(settings, names)

    def joined(self, others: Iterable[WidgetSet]) -> tuple[WidgetSet, list[Problem]]:
        """These widgets and the others' together; a name found in two folders is a problem.

        Examples
        --------
        >>> a = Widget("dots", Path("a/dots"), lambda s, n: [], lambda s, n: {}, lambda s, n: "")
        >>> b = Widget("dots", Path("b/dots"), lambda s, n: [], lambda s, n: {}, lambda s, n: "")
        >>> joined, problems = WidgetSet({"dots": a}).joined([WidgetSet({"dots": b})])
        >>> joined.names(), [p.message for p in problems]
        (['dots'], ["The widget 'dots' is also defined in a/dots; widget names are shared by all chapters."])
        """
        found = dict(self.widgets)
        problems = []
        for other in others:
            for widget in other:
                if widget.name in found:
                    message = (
                        f"The widget {widget.name!r} is also defined in {found[widget.name].folder}; "
                        "widget names are shared by all chapters."
                    )
                    problems.append(Problem(widget.source, 1, message))
                    continue
                found[widget.name] = widget
        return WidgetSet(found), problems


def load_widgets(chapter_folder: Path) -> tuple[WidgetSet, list[Problem]]:
    """Find the widget folders of a chapter (or of a lesson) and import each one's ``widget.py``.

    Parameters
    ----------
    chapter_folder : Path
        The folder of ``chapter.toml`` (or of a ``lesson.md``); its widgets are in ``widgets/NAME/``.

    Returns
    -------
    widgets : WidgetSet
        Every widget whose folder is complete and whose ``widget.py`` provides the three functions.
    problems : list of Problem
        Why a folder is not a widget: a bad name, a missing file, a failing import or a missing function.

    Examples
    --------
    >>> load_widgets(Path("/nonexistent"))
    (WidgetSet(widgets={}), [])
    """
    folder = chapter_folder / WIDGETS_FOLDER
    if not folder.is_dir():
        return WidgetSet(), []
    widgets: dict[str, Widget] = {}
    problems: list[Problem] = []
    for candidate in sorted(child for child in folder.iterdir() if child.is_dir()):
        if candidate.name == "__pycache__":
            continue
        widget = _load_widget(candidate, problems)
        if widget is not None:
            widgets[widget.name] = widget
    return WidgetSet(widgets), problems


def _load_widget(folder: Path, problems: list[Problem]) -> Widget | None:
    if not NAME_PATTERN.fullmatch(folder.name):
        message = f"A widget folder is named in lowercase letters, digits and dashes, not {folder.name!r}."
        problems.append(Problem(folder, 1, message))
        return None
    missing = [name for name in (PYTHON_FILE, *ASSET_FILES) if not (folder / name).is_file()]
    if missing:
        problems.append(
            Problem(folder, 1, f"The widget folder {folder.name!r} lacks {' and '.join(missing)}.")
        )
        return None
    module, import_problems = import_lesson_file(folder / PYTHON_FILE)
    problems += import_problems
    if module is None:
        return None
    hooks: dict[str, Any] = {name: getattr(module, name, None) for name in _HOOKS}
    lacking = [name for name, function in hooks.items() if not callable(function)]
    if lacking:
        wanted = ", ".join(f"{name}(settings, names)" for name in lacking)
        problems.append(Problem(folder / PYTHON_FILE, 1, f"A widget's widget.py defines {wanted}."))
        return None
    return Widget(folder.name, folder, hooks["check"], hooks["config"], hooks["render"])


def check_widget(
    name: str, settings: Mapping[str, Any], names: Mapping[str, Any], widgets: WidgetSet
) -> list[str]:
    """Problems with a ``{widget} NAME`` block, as sentences (empty when it is fine).

    Parameters
    ----------
    name : str
        The widget the block names.
    settings, names : mapping
        The block's TOML body; the variant's values.
    widgets : WidgetSet
        The widgets to look in (a chapter's, or ``load_catalog().widgets`` for the built-in ones).

    Examples
    --------
    >>> check_widget("sparkles", {}, {}, WidgetSet())
    ["There is no widget called 'sparkles' (known: none)."]
    """
    return widgets.check(name, settings, names)
