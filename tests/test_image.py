"""`make image`'s OCI image, built here from Debian packages and PyPI wheels, serves the course and grades in
its bubblewrap sandbox under `podman run` with the options of ``scripts/image/podman-flags.sh``; and
deploy/qkv-pod.yaml with deploy/qkv-graders.sh runs PostgreSQL, two web servers and two graders from it.

The module builds the image once (a few minutes the first time; later builds reuse build/image/ and the
tagged image of an unchanged tree). A learner then runs a right and a wrong program through the served
course: the verdicts are the sandbox's ("pass" and "fail"), not the "error" a sandbox unable to start gives.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.reliability.reliability_support import REPO, free_port
from tests.time_scale import scaled, wait_for
from tests.web.backend_fixtures import CORRECT_SOLUTION, WRONG_SOLUTION

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.timeout(1500)]

IMAGE = "localhost/qkv:test"


@pytest.fixture(scope="module")
def image() -> str:
    """The image's name, once ``scripts/build-image.sh`` has built it (or found it up to date)."""
    missing = [tool for tool in ("podman", "mmdebstrap") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (scripts/setup-system.sh --test installs them)")
    if os.geteuid() != 0:
        pytest.skip("building the image needs root (mmdebstrap's root mode, rootful podman)")
    built = subprocess.run(
        ["bash", "scripts/build-image.sh", IMAGE], cwd=REPO, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return IMAGE


def podman_flags(folder: Path) -> list[str]:
    """The ``podman run`` options the sandbox needs on this host (see ``scripts/image/podman-flags.sh``)."""
    printed = subprocess.run(
        ["bash", "scripts/image/podman-flags.sh", str(folder / "seccomp.json")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return printed.stdout.split()


@pytest.fixture
def container(image: str, tmp_path: Path) -> Iterator[str]:
    """The URL of one running container of the image, serving on a loopback port; removed afterwards."""
    name, port = f"qkv-test-{uuid.uuid4().hex[:8]}", free_port()
    command = ["podman", "run", "--detach", "--rm", "--name", name, *podman_flags(tmp_path)]
    command += ["--publish", f"127.0.0.1:{port}:8000", image]
    subprocess.run(command, check=True, capture_output=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _ready(url), "the container's /readyz to answer ready", 120, poll_s=0.2)
        yield url
    finally:
        logs = subprocess.run(["podman", "logs", name], capture_output=True, text=True)
        print(logs.stdout, logs.stderr)
        subprocess.run(["podman", "rm", "--force", "--time", "5", name], capture_output=True)


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=scaled(5)).status_code == 200
    except httpx.HTTPError:
        return False  # not listening yet


def _run(learner: httpx.Client, token: str, program: str) -> dict[str, object]:
    """The verdict of one Run of ``program`` (asking again after a 202, as the page does)."""
    ran = learner.post(
        "/api/lessons/L4.1/code",
        json={"exercise_id": "functions", "code": program},
        headers={"X-CSRF-Token": token},
    )
    while ran.status_code == 202:  # remote grading: the verdict has not come yet
        ran = learner.get(ran.json()["poll"])
    assert ran.status_code == 200, ran.text
    result: dict[str, object] = ran.json()["result"]
    return result


def test_the_image_serves_the_course_and_grades_in_its_sandbox(container: str) -> None:
    with httpx.Client(base_url=container, timeout=scaled(120)) as learner:
        page = learner.get("/lessons/L4.1")
        assert page.status_code == 200
        token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
        assert token is not None
        right = _run(learner, token.group(1), CORRECT_SOLUTION)
        assert (right["status"], right["sandbox"]) == ("pass", "bubblewrap"), right
        wrong = _run(learner, token.group(1), WRONG_SOLUTION)
        assert wrong["status"] == "fail", wrong


def test_the_image_holds_python_qkv_and_bubblewrap_from_debian(image: str) -> None:
    shown = subprocess.run(
        [
            "podman",
            "run",
            "--rm",
            *podman_flags_no_sandbox(),
            "--entrypoint",
            "/bin/sh",
            image,
            "-c",
            "dpkg-query -W -f='${Package}\\n' python3 bubblewrap; /opt/qkv/bin/qkv --help | head -n 1",
        ],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert sorted(lines[:2]) == ["bubblewrap", "python3"]
    assert lines[2] == "Usage: qkv [OPTIONS] COMMAND [ARGS]..."


@pytest.fixture
def pod(image: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The URLs of the two web servers of deploy/qkv-pod.yaml, played on free loopback ports as a pod of
    its own name, with two graders of deploy/qkv-graders.sh in it; the pod is removed afterwards."""
    name, ports = f"qkv-test-{uuid.uuid4().hex[:8]}", (free_port(), free_port())
    text = (REPO / "deploy" / "qkv-pod.yaml").read_text().replace("localhost/qkv:latest", image)
    text = text.replace("  name: qkv\n", f"  name: {name}\n", 1)
    for default, port in zip((8001, 8002), ports, strict=True):
        text = text.replace(f"hostPort: {default}", f"hostPort: {port}")
    (tmp_path / "pod.yaml").write_text(text)
    conf = tmp_path / "containers.conf"
    subprocess.run(
        ["bash", "scripts/image/podman-flags.sh", "--containers-conf", str(conf)], cwd=REPO, check=True
    )
    env = {**os.environ, "CONTAINERS_CONF": str(conf), "QKV_IMAGE": image, "QKV_POD": name}
    try:
        played = subprocess.run(
            ["podman", "kube", "play", str(tmp_path / "pod.yaml")], env=env, capture_output=True, text=True
        )
        assert played.returncode == 0, played.stderr
        graders = subprocess.run(
            ["bash", "deploy/qkv-graders.sh", "2"], cwd=REPO, env=env, capture_output=True, text=True
        )
        assert graders.returncode == 0, graders.stderr
        urls = (f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}")
        for url in urls:
            wait_for(lambda url=url: _ready(url), f"{url}/readyz to answer ready", 180, poll_s=0.5)
        yield urls
    finally:
        for container in ("web-1", "grader-1"):
            logs = subprocess.run(["podman", "logs", f"{name}-{container}"], capture_output=True, text=True)
            print(logs.stdout[-3000:], logs.stderr[-3000:])
        subprocess.run(["podman", "pod", "rm", "--force", "--time", "5", name], env=env, capture_output=True)


def test_the_pod_serves_from_two_web_servers_and_grades_on_its_graders(pod: tuple[str, str]) -> None:
    """A program run through either web server is queued in the pod's PostgreSQL and graded by a grader."""
    for url, program, status in zip(pod, (CORRECT_SOLUTION, WRONG_SOLUTION), ("pass", "fail"), strict=True):
        with httpx.Client(base_url=url, timeout=scaled(120)) as learner:
            page = learner.get("/lessons/L4.1")
            token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
            assert token is not None
            result = _run(learner, token.group(1), program)
            assert result["status"] == status, result


def podman_flags_no_sandbox() -> list[str]:
    """The options any container needs on this host (limits, runtime), without the sandbox's."""
    flags = podman_flags(Path(REPO / "build" / "image"))
    return [flag for flag in flags if not flag.startswith("--security-opt")]
