"""The script and the styles of each widget, served from its folder: ``/widgets/NAME/widget.js`` and ``.css``.

Only the widgets the catalog found are served, and of each only those two files (never its ``widget.py``);
the path is looked up by name, not joined onto a folder, so ``..`` or a symlink leads nowhere. Responses
are those of the app's other static files: content type, ``ETag``, ``Last-Modified`` and 304 answers.
"""

from __future__ import annotations

import os

from fastapi.staticfiles import StaticFiles

from qkv.lessons.widgets import ASSET_FILES, WidgetSet

__all__ = ["WidgetFiles"]


class WidgetFiles(StaticFiles):
    """A static-files app whose files are the assets of the given widgets.

    Examples
    --------
    >>> from pathlib import Path
    >>> from qkv.lessons.widgets import Widget
    >>> hooks = (lambda s, n: [], lambda s, n: {}, lambda s, n: "")
    >>> files = WidgetFiles(WidgetSet({"dots": Widget("dots", Path("/content/L9/widgets/dots"), *hooks)}))
    >>> files.asset_path("dots/widget.js"), files.asset_path("dots/widget.py"), files.asset_path("../dots")
    ('/content/L9/widgets/dots/widget.js', None, None)
    """

    def __init__(self, widgets: WidgetSet) -> None:
        super().__init__(directory=None, check_dir=False)
        self.widgets = widgets

    def asset_path(self, path: str) -> str | None:
        """The file of ``NAME/widget.js`` or ``NAME/widget.css`` of a known widget; None for all else."""
        name, _, file_name = path.partition(os.sep)
        widget = self.widgets.get(name)
        if widget is None or file_name not in ASSET_FILES:
            return None
        return str(widget.asset(file_name))

    def lookup_path(self, path: str) -> tuple[str, os.stat_result | None]:
        """StaticFiles' hook from a request path to a file: here, only through :meth:`asset_path`."""
        full_path = self.asset_path(path)
        if full_path is None:
            return "", None
        try:
            return full_path, os.stat(full_path)
        except (FileNotFoundError, NotADirectoryError):
            return "", None
