"""The sandbox runs as a real unprivileged uid, even when the grader itself runs as root."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest

from qkv.grading import Grader, SandboxStart
from qkv.grading.sandbox.process import SANDBOX_UIDS
from qkv.grading.sandbox.runtime import others_can_read, reachable_copy
from tests.builtin_lessons import L41_SUITE
from tests.time_scale import scaled

SLEEPY = "import time\ntime.sleep(1.5)\n"


def _descendants(root: int) -> list[int]:
    """Pids of every process below ``root`` (a snapshot of /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _harness_uids() -> set[int]:
    uids = set()
    for pid in _descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            is_python = Path(f"/proc/{pid}/comm").read_text().startswith("python")
            # The harness started by bubblewrap, or the zygote and the sandboxes forked from it.
            if is_python and (b"/grader/harness.pyc" in command or b"/grader/zygote.pyc" in command):
                uids.add(Path(f"/proc/{pid}").stat().st_uid)
        except OSError:
            continue
    return uids


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
@pytest.mark.skipif(os.geteuid() != 0, reason="only a root grader drops to another uid")
@pytest.mark.parametrize("start", list(SandboxStart), ids=lambda start: start.name.lower())
def test_a_root_grader_runs_submissions_as_an_unprivileged_uid(start: SandboxStart) -> None:
    seen: set[int] = set()
    with Grader(require_sandbox=True, zygote=start is SandboxStart.FORKED) as grader:
        assert grader.start_mode is start
        worker = threading.Thread(target=grader.grade, args=(SLEEPY, L41_SUITE))
        worker.start()
        deadline = time.monotonic() + scaled(10)
        while worker.is_alive() and not seen and time.monotonic() < deadline:
            seen = _harness_uids()
            time.sleep(0.05)
        worker.join()
    assert seen, "no sandboxed harness process was seen"
    assert all(uid in SANDBOX_UIDS for uid in seen), seen


def test_paths_in_a_private_directory_are_staged_readable() -> None:
    tmp_path = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's own tmp_path sits in a private directory
    private = tmp_path / "private"
    (private / "pkg").mkdir(parents=True)
    (private / "pkg" / "module.py").write_text("VALUE = 1\n")
    (private / "pkg" / "module.py").chmod(0o644)
    (private / "pkg").chmod(0o755)
    private.chmod(0o700)
    tmp_path.chmod(0o755)
    assert others_can_read(str(tmp_path))
    assert not others_can_read(str(private / "pkg"))
    staged = Path(reachable_copy(str(private / "pkg")))
    assert staged != private / "pkg"
    assert (staged / "module.py").read_text() == "VALUE = 1\n"
    for part in (staged, *staged.parents):
        assert part.stat().st_mode & stat.S_IXOTH, part
    assert not staged.stat().st_mode & stat.S_IWOTH
    assert reachable_copy(str(tmp_path)) == str(tmp_path)  # already readable: used as it is
    shutil.rmtree(tmp_path)


def test_staging_from_many_threads_at_once_makes_one_copy() -> None:
    tmp_path = Path(tempfile.mkdtemp(dir="/tmp"))
    private = tmp_path / "private"
    (private / "lib").mkdir(parents=True)
    for i in range(200):
        (private / "lib" / f"m{i}.py").write_text(f"VALUE = {i}\n")
    private.chmod(0o700)
    tmp_path.chmod(0o755)
    results: list[str] = []
    errors: list[BaseException] = []

    def stage() -> None:
        try:
            results.append(reachable_copy(str(private / "lib")))
        except BaseException as error:  # pragma: no cover - the failure this test is about
            errors.append(error)

    threads = [threading.Thread(target=stage) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shutil.rmtree(tmp_path)
    assert errors == []
    assert len(set(results)) == 1 and len(results) == 8
    assert (Path(results[0]) / "m199.py").read_text() == "VALUE = 199\n"


def test_a_spare_pool_keeps_refilling_after_an_unexpected_start_failure() -> None:
    from qkv.grading.sandbox.limits import Limits
    from qkv.grading.sandbox.pool import SparePool
    from qkv.grading.sandbox.process import SandboxProcess

    calls = {"n": 0}

    def start() -> SandboxProcess:
        calls["n"] += 1
        if calls["n"] == 1:
            raise FileExistsError("a race while staging")  # not a SandboxStartError
        return SandboxProcess(Limits(), use_bwrap=shutil.which("bwrap") is not None)

    pool = SparePool(1, start)
    try:
        assert pool.wait_until_full(timeout=scaled(30)), "the pool stopped refilling after the failure"
        assert pool.failures == 1
    finally:
        pool.close()
