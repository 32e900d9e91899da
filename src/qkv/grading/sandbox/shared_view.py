"""A directory that grader processes share: built once, published whole, and used only if it is safe.

What a sandbox is shown of the runtime (a hard-linked copy of the standard library, NumPy, the compiled
harness) is the same for every grader process of one user on one installation. Staged per process, it
cost about a third of a second of every ``qkv check``; shared, the first process builds it and the others
find it.

It lives in a world-writable directory (``/tmp``), where anyone may have made a directory of the same
name first, so a name proves nothing: a directory found there is used only if it is a real directory (not
a link) owned by this process's effective user, and neither it nor any directory on the way to what is
bound from it, nor that itself, is writable by group or others. A view is built under a fresh temporary
name and renamed into place whole: a process killed while building leaves no half-built view under the
shared name, and when two processes race, the second's rename fails and it uses the first's view.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["identity", "publish", "trusted", "view_name"]


def identity(path: str) -> tuple[int, int, int, int]:
    """What tells one file or directory from another: its device, inode, size and modification time.

    A file replaced (a reinstalled NumPy, an upgraded interpreter) has a new identity, so a view named
    after its identity is never taken for the view of the file that replaced it.

    Examples
    --------
    >>> identity("/") == identity("/.")
    True
    """
    status = os.stat(path)
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def view_name(prefix: str, parts: Iterable[object]) -> str:
    """``prefix`` and a digest of ``parts`` (whose ``repr`` must not vary between processes).

    Examples
    --------
    >>> view_name("view-", [("/usr/lib/python3.11", (1, 2, 3, 4))])
    'view-9bc701fc13b1e47196071aee5bd8de98'
    >>> view_name("view-", ["a"]) == view_name("view-", ["b"])
    False
    """
    return prefix + hashlib.sha256(repr(list(parts)).encode()).hexdigest()[:32]


def trusted(view: Path, inner: Iterable[str]) -> bool:
    """Whether ``view`` is safe to bind from: ours, complete, and not writable by anyone else.

    Parameters
    ----------
    view : Path
        The shared directory.
    inner : iterable of str
        The paths inside it that will be bound (``"usr/lib/python3.11"``); each must exist, be a
        directory or a regular file, and neither it nor a directory on the way to it may be a link or
        writable by group or others. Directories must be owned by this process's effective user.

    Examples
    --------
    >>> trusted(Path("/nonexistent"), [])
    False
    """
    euid = os.geteuid()
    try:
        if not _safe_directory(os.lstat(view), euid):
            return False
        for path in inner:
            here, *parts = [view, *Path(path).parts]
            for part in parts[:-1]:
                here = here / part
                if not _safe_directory(os.lstat(here), euid):
                    return False
            last = os.lstat(here / parts[-1]) if parts else os.lstat(here)
            # A staged file is a hard link to the original, so its owner is the original's (root's
            # interpreter for a grader run as another user): only the directories say who could replace it.
            if not (_safe_directory(last, euid) or (stat.S_ISREG(last.st_mode) and _not_writable(last))):
                return False
    except OSError:  # missing, or unreadable: not a view we can use
        return False
    return True


def _safe_directory(status: os.stat_result, euid: int) -> bool:
    return stat.S_ISDIR(status.st_mode) and status.st_uid == euid and _not_writable(status)


def _not_writable(status: os.stat_result) -> bool:
    """Neither group nor others may write it."""
    return not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def publish(
    parent: Path, name: str, inner: Iterable[str], build: Callable[[Path], None], building_prefix: str
) -> Path | None:
    """The shared directory ``parent/name``: found if it is :func:`trusted`, else built and renamed there.

    Parameters
    ----------
    parent : Path
        Where shared directories live (the temporary directory).
    name : str
        The directory's name, a digest of everything it holds (:func:`view_name`): what it holds never
        changes, so a directory found under the name needs no rebuilding.
    inner : iterable of str
        The paths inside it that will be bound (see :func:`trusted`).
    build : callable
        Fills an empty directory (mode 0755, owned by this process's user) with the view.
    building_prefix : str
        The name a directory under construction starts with; it should let a later process recognise and
        remove the leftovers of a builder that was killed.

    Returns
    -------
    Path or None
        None when the name is taken by something that is not trusted (someone else's directory, a link, a
        writable directory): it is not ours to remove, and the caller stages a private copy instead.

    Raises
    ------
    OSError
        If building fails (the directory under construction is removed).

    Examples
    --------
    >>> import tempfile
    >>> parent = Path(tempfile.mkdtemp())
    >>> view = publish(parent, "view-1", ["data"], lambda d: (d / "data").write_text("x"), "building-")
    >>> view == parent / "view-1", (view / "data").read_text()
    (True, 'x')
    >>> publish(parent, "view-1", ["data"], lambda d: None, "building-") == view  # found, not rebuilt
    True
    >>> sorted(path.name for path in parent.iterdir())
    ['view-1']
    >>> import shutil; shutil.rmtree(parent)
    """
    inner = list(inner)
    view = parent / name
    if trusted(view, inner):
        return view
    if os.path.lexists(view):
        return None
    building = Path(tempfile.mkdtemp(prefix=building_prefix, dir=parent))
    try:
        building.chmod(0o755)
        build(building)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    try:
        os.rename(building, view)  # a non-empty directory is never replaced: a racing builder's stays
    except OSError:
        shutil.rmtree(building, ignore_errors=True)
    return view if trusted(view, inner) else None
