"""The sandbox's view of the runtime is staged once and shared by grader processes, never trusted blindly.

Each test gives its grader processes a temporary directory of their own (``TMPDIR``), so that the view
other processes on this machine use is never touched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qkv.grading.sandbox.runtime import HARNESS, SANDBOX_HARNESS, SANDBOX_ZYGOTE, find_runtime, inside_paths
from qkv.grading.sandbox.shared_view import identity, publish, trusted, view_name
from tests.time_scale import scaled

SHARED = re.compile(r"sandbox-view-[0-9a-f]{32}")
PRIVATE = re.compile(r"sandbox-view-\d+-\w+")

# A grader process's staging: where the standard library and the harness are bound from.
STAGE = """
import json, sys
from pathlib import Path
from qkv.grading.sandbox import runtime
{before}
here = runtime.find_runtime()
stdlib = runtime.reachable_copy(here.stdlib, runtime.inside_paths(here)[1])
found = {{"stdlib": stdlib, "harness": runtime.compiled_harness(), "zygote": runtime.compiled_zygote()}}
print(json.dumps({{**found, "has os.py": Path(stdlib, "os.py").is_file()}}))
"""


@pytest.fixture
def parent() -> Iterator[Path]:
    """A temporary directory for the views, reachable by the sandbox's unprivileged uid."""
    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="qkv-view-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def start(parent: Path, before: str = "") -> subprocess.Popen[str]:
    env = {**os.environ, "TMPDIR": str(parent)}
    return subprocess.Popen(
        [sys.executable, "-c", STAGE.format(before=before)], env=env, stdout=subprocess.PIPE, text=True
    )


def staged(parent: Path, before: str = "") -> dict[str, Any]:
    process = start(parent, before)
    out, _ = process.communicate(timeout=scaled(120))
    assert process.returncode == 0, out
    return dict(json.loads(out))


def view_of(path: str, parent: Path) -> Path:
    """The staging directory (directly in ``parent``) that ``path`` lies in."""
    relative = Path(path).relative_to(parent)
    return parent / relative.parts[0]


def test_processes_share_one_view_and_racing_builders_both_get_a_complete_one(parent: Path) -> None:
    racing = [start(parent), start(parent)]
    outputs = [process.communicate(timeout=scaled(120))[0] for process in racing]
    assert [process.returncode for process in racing] == [0, 0], outputs
    first, second = (json.loads(out) for out in outputs)
    assert first == second
    view = view_of(first["stdlib"], parent)
    assert SHARED.fullmatch(view.name), view
    assert Path(first["harness"]) == view / SANDBOX_HARNESS.lstrip("/")
    assert Path(first["zygote"]) == view / SANDBOX_ZYGOTE.lstrip("/")
    built_at = identity(str(view))
    assert staged(parent) == first  # a later process finds it
    assert identity(str(view)) == built_at  # and does not rebuild it
    # Nothing else is left: not the loser's half of the race, not a per-process copy.
    assert [path.name for path in parent.iterdir()] == [view.name]
    stdlib = Path(first["stdlib"])
    original = Path(find_runtime().stdlib)
    assert (stdlib / "os.py").stat().st_ino == (original / "os.py").stat().st_ino  # a hard link
    assert set(os.listdir(stdlib)) == set(
        os.listdir(original)
    )  # site-packages and test stay, as empty mount points
    assert os.listdir(stdlib / "site-packages") == []
    assert trusted(view, [first["stdlib"].removeprefix(f"{view}/")])


def test_a_directory_someone_else_made_under_the_name_is_not_used(parent: Path) -> None:
    name = view_of(staged(parent)["stdlib"], parent).name
    other = Path(tempfile.mkdtemp(dir="/tmp", prefix="qkv-view-test-"))
    try:
        other.chmod(0o755)
        squatted = other / name
        squatted.mkdir(mode=0o755)
        (squatted / "planted").write_text("not the standard library")
        if os.geteuid() == 0:
            os.chown(squatted, 65534, 65534)
        else:
            squatted.chmod(0o777)
        got = staged(other)
        for path in (got["stdlib"], got["harness"], got["zygote"]):
            assert PRIVATE.fullmatch(view_of(path, other).name), path  # a private copy instead
        assert got["has os.py"]
        assert [path.name for path in squatted.iterdir()] == ["planted"]  # and theirs left alone
        assert [path.name for path in other.iterdir()] == [name]  # the private copy removed at exit
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_qkv_check_removes_its_private_copy_when_it_ends(parent: Path) -> None:
    # Where the shared name is taken, `qkv check` stages a private copy; its exit handler removes it,
    # although the command ends without Python's shutdown.
    name = view_of(staged(parent)["stdlib"], parent).name
    shutil.rmtree(parent / name)
    (parent / name).mkdir(mode=0o777)
    (parent / name).chmod(0o777)
    solution = Path(__file__).parents[1] / "correct" / "reference_style.py"
    done = subprocess.run(
        [sys.executable, "-m", "qkv", "check", str(solution), "--seed", "1"],
        env={**os.environ, "TMPDIR": str(parent)},
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert [path.name for path in parent.iterdir()] == [name]


def test_a_builder_killed_halfway_leaves_nothing_that_is_used(parent: Path) -> None:
    # The first process is killed after hard-linking a hundred files of the standard library.
    dies = """
import os, signal
linked = [0]
real_link = runtime._link_or_copy
def link_then_die(source, destination):
    linked[0] += 1
    if linked[0] == 100:
        os.kill(os.getpid(), signal.SIGKILL)
    real_link(source, destination)
runtime._link_or_copy = link_then_die
"""
    killed = start(parent, dies)
    killed.communicate(timeout=scaled(120))
    assert killed.returncode == -signal.SIGKILL
    leftovers = [path.name for path in parent.iterdir()]
    assert len(leftovers) == 1 and leftovers[0].startswith(f"sandbox-view-{killed.pid}-"), leftovers
    got = staged(parent)
    view = view_of(got["stdlib"], parent)
    assert SHARED.fullmatch(view.name)
    assert [path.name for path in parent.iterdir()] == [view.name]  # the half-built one removed
    assert set(os.listdir(got["stdlib"])) == set(os.listdir(find_runtime().stdlib))  # whole


def test_a_changed_harness_gets_a_view_of_its_own(parent: Path) -> None:
    changed = parent / "harness.py"
    changed.write_text(HARNESS.read_text())
    first = staged(parent)
    with changed.open("a") as file:
        file.write("\nCHANGED = True\n")
    use_changed = f"""
runtime.HARNESS = Path({str(changed)!r})
runtime.SANDBOX_PROGRAMS[runtime.SANDBOX_HARNESS] = runtime.HARNESS
"""
    second = staged(parent, use_changed)
    assert view_of(second["harness"], parent) != view_of(first["harness"], parent)
    assert SHARED.fullmatch(view_of(second["harness"], parent).name)
    assert b"CHANGED" in Path(second["harness"]).read_bytes()
    assert b"CHANGED" not in Path(first["harness"]).read_bytes()


def test_the_sandbox_shows_binds_from_the_shared_view_only() -> None:
    from qkv.grading import Grader
    from tests.builtin_lessons import L41_SUITE

    source = (Path(__file__).parents[1] / "hostile" / "proc_view.py").read_text()
    with Grader(require_sandbox=True) as grader:
        output = grader.grade(source, L41_SUITE, seed=1).output
    mounts = output.split("/proc/self/mountinfo: ", 1)[1].split("\n\n", 1)[0].splitlines()
    # Each line: id, parent, device, the bind's source within its file system, where it is mounted, ...
    binds = {line.split()[4]: line.split()[3] for line in mounts}
    views = {
        match.group() for source in binds.values() if (match := re.search(r"sandbox-view-[^/]+", source))
    }
    assert len(views) == 1 and SHARED.fullmatch(views.pop()), binds
    python, stdlib, _ = inside_paths(find_runtime())
    for inside in (python, stdlib, SANDBOX_HARNESS):
        assert binds[inside].endswith(inside) and "sandbox-view-" in binds[inside], binds


def test_publish_builds_once_then_finds_it(tmp_path: Path) -> None:
    calls = []

    def build(view: Path) -> None:
        calls.append(view)
        (view / "lib").mkdir(mode=0o755)
        (view / "lib" / "module.py").write_text("VALUE = 1\n")

    view = publish(tmp_path, "view-a", ["lib/module.py"], build, "building-")
    assert view == tmp_path / "view-a" and len(calls) == 1
    assert calls[0] != view  # built under another name, then renamed
    assert publish(tmp_path, "view-a", ["lib/module.py"], build, "building-") == view
    assert len(calls) == 1


def test_a_failed_build_leaves_nothing(tmp_path: Path) -> None:
    def build(view: Path) -> None:
        (view / "half").write_text("")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        publish(tmp_path, "view-a", [], build, "building-")
    assert list(tmp_path.iterdir()) == []


# Only root can make a directory owned by another user.
SQUATS = ["group-writable", "world-writable", "a link", "a file"] + (["foreign"] if os.geteuid() == 0 else [])


@pytest.mark.parametrize("squat", SQUATS)
def test_a_name_taken_by_something_untrusted_is_refused_and_left_alone(tmp_path: Path, squat: str) -> None:
    taken = tmp_path / "view-a"
    if squat == "a link":
        (tmp_path / "elsewhere").mkdir()
        taken.symlink_to(tmp_path / "elsewhere")
    elif squat == "a file":
        taken.write_text("")
    else:
        taken.mkdir()
        taken.chmod({"group-writable": 0o775, "world-writable": 0o777}.get(squat, 0o755))
        if squat == "foreign":
            os.chown(taken, 65534, 65534)
    before = os.lstat(taken)
    assert publish(tmp_path, "view-a", [], lambda view: None, "building-") is None
    assert os.lstat(taken) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["view-a", *(["elsewhere"] if squat == "a link" else [])]
    )


def test_a_writable_or_missing_part_inside_makes_a_view_untrusted(tmp_path: Path) -> None:
    view = tmp_path / "view"
    (view / "usr" / "lib").mkdir(parents=True, mode=0o755)
    (view / "usr" / "lib" / "libpython.so").write_text("")
    (view / "usr" / "lib" / "libpython.so").chmod(0o644)
    view.chmod(0o755)
    assert trusted(view, ["usr/lib/libpython.so"])
    assert not trusted(view, ["usr/lib/missing.so"])
    (view / "usr").chmod(0o777)
    assert not trusted(view, ["usr/lib/libpython.so"])
    (view / "usr").chmod(0o755)
    (view / "usr" / "lib" / "libpython.so").chmod(0o666)
    assert not trusted(view, ["usr/lib/libpython.so"])


def test_the_name_covers_every_part() -> None:
    runtime = find_runtime()
    base = [("/usr/lib/python3.11", identity(runtime.stdlib))]
    assert view_name("v-", base) == view_name("v-", list(base))
    moved = [("/usr/lib/python3.11", (*identity(runtime.stdlib)[:3], 0))]  # another mtime
    assert view_name("v-", moved) != view_name("v-", base)
