"""The real Prometheus (Debian's ``prometheus``) scrapes a running ``qkv serve`` (and, with remote grading,
a ``qkv grader``), and the figures come back through Prometheus's own query API: the count of gradings by
outcome, and a latency quantile.

The server is a real process grading in the sandbox; Prometheus scrapes it every second from loopback (the
only address ``/metrics`` answers by default). The test waits on states that persist (the count reaching
the number of programs graded, the quantile becoming a number), under scaled deadlines.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.reliability.reliability_support import REPO, Server, free_port, require_bubblewrap
from tests.time_scale import scaled, wait_for
from tests.web.backend_fixtures import CORRECT_SOLUTION, WRONG_SOLUTION

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.timeout(300)]

CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: qkv
    static_configs:
      - targets: [{targets}]
"""


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``(its URL, the folder of its configuration)``: a Prometheus started once the config is written."""
    if shutil.which("prometheus") is None:
        pytest.skip(
            "Prometheus is not installed (apt-get install prometheus; scripts/setup-system.sh --test)"
        )
    yield f"http://127.0.0.1:{free_port()}", tmp_path


def _start_prometheus(url: str, folder: Path, *ports: int) -> subprocess.Popen[bytes]:
    config = folder / "prometheus.yml"
    config.write_text(CONFIG.format(targets=", ".join(f'"127.0.0.1:{port}"' for port in ports)))
    listen = url.removeprefix("http://")
    command = [
        "prometheus",
        f"--config.file={config}",
        f"--storage.tsdb.path={folder / 'tsdb'}",
        f"--web.listen-address={listen}",
    ]
    with open(folder / "prometheus.log", "wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def _query(url: str, promql: str) -> list[dict[str, Any]]:
    try:
        answer = httpx.get(f"{url}/api/v1/query", params={"query": promql}, timeout=scaled(5))
    except httpx.HTTPError:
        return []  # not listening yet
    if answer.status_code != 200:
        return []
    result: list[dict[str, Any]] = answer.json()["data"]["result"]
    return result


def _number(url: str, promql: str) -> float | None:
    result = _query(url, promql)
    if not result:
        return None
    value = float(result[0]["value"][1])
    return value if math.isfinite(value) else None


def _run_programs(server_url: str, programs: list[str]) -> None:
    """One learner runs each program in turn and waits for its verdict (asking again after a 202)."""
    with httpx.Client(base_url=server_url, timeout=scaled(60)) as learner:
        page = learner.get("/lessons/L4.1")
        token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
        assert token is not None
        for program in programs:
            ran = learner.post(
                "/api/lessons/L4.1/code",
                json={"exercise_id": "functions", "code": program},
                headers={"X-CSRF-Token": token.group(1)},
            )
            while ran.status_code == 202:  # remote grading: the verdict has not come yet
                ran = learner.get(ran.json()["poll"])
            assert ran.status_code == 200, ran.text


def test_prometheus_scrapes_qkv_and_answers_a_grading_count_and_a_latency_quantile(
    start_server: type[Server], sqlite_url: str, prometheus: tuple[str, Path]
) -> None:
    require_bubblewrap()
    url, folder = prometheus
    server = start_server(sqlite_url, "--warm-spares", "1").start()
    scraper = _start_prometheus(url, folder, server.port)
    try:
        wait_for(lambda: _number(url, 'up{job="qkv"}') == 1, "Prometheus to scrape qkv serve", 90, poll_s=0.2)
        _run_programs(server.url, [CORRECT_SOLUTION, WRONG_SOLUTION, CORRECT_SOLUTION])

        passed = 'sum(qkv_gradings_total{job="qkv", lesson="L4.1", outcome="pass"})'
        wait_for(
            lambda: _number(url, passed) == 2, "Prometheus to count two passing gradings", 60, poll_s=0.2
        )
        assert _number(url, 'sum(qkv_gradings_total{job="qkv", outcome="fail"})') == 1
        median = "histogram_quantile(0.5, sum(rate(qkv_verdict_latency_seconds_bucket[1m])) by (le))"
        wait_for(
            lambda: _number(url, median) is not None,
            "a median verdict latency from Prometheus",
            60,
            poll_s=0.2,
        )
        latency = _number(url, median)
        assert latency is not None and 0 < latency <= 120  # within the histogram's buckets
        assert _number(url, 'qkv_learners_active{job="qkv"}') == 1
    finally:
        scraper.terminate()
        scraper.wait(timeout=scaled(30))
        assert server.terminate() == 0


@pytest.mark.postgres
def test_prometheus_scrapes_a_remote_grader_and_its_web_server(
    start_server: type[Server], postgres_url: str, prometheus: tuple[str, Path], tmp_path: Path
) -> None:
    require_bubblewrap()
    url, folder = prometheus
    server = start_server(postgres_url, "--grading", "remote", "--grading-wait", "5").start()
    metrics_port = free_port()
    command = [sys.executable, "-m", "qkv", "grader", "--database-url", postgres_url, "--concurrency", "1"]
    command += ["--warm-spares", "1", "--metrics-listen", f"127.0.0.1:{metrics_port}"]
    with open(tmp_path / "grader.log", "wb") as log:
        grader = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    scraper = _start_prometheus(url, folder, server.port, metrics_port)
    try:
        wait_for(lambda: _number(url, 'sum(up{job="qkv"})') == 2, "Prometheus to scrape both", 90, poll_s=0.2)
        _run_programs(server.url, [CORRECT_SOLUTION, WRONG_SOLUTION])

        graded = 'sum(qkv_gradings_total{job="qkv", lesson="L4.1"})'
        wait_for(
            lambda: _number(url, graded) == 2, "Prometheus to count the grader's two gradings", 60, poll_s=0.2
        )
        done = f'qkv_remote_jobs{{instance="127.0.0.1:{server.port}", state="done"}}'
        wait_for(lambda: _number(url, done) == 2, "the web server's count of jobs done", 60, poll_s=0.2)
        p90 = "histogram_quantile(0.9, sum(rate(qkv_verdict_latency_seconds_bucket[1m])) by (le))"
        wait_for(
            lambda: _number(url, p90) is not None,
            "a verdict latency quantile from the grader",
            60,
            poll_s=0.2,
        )
        assert _number(url, "qkv_remote_graders_seen") == 1
    finally:
        scraper.terminate()
        scraper.wait(timeout=scaled(30))
        grader.terminate()
        grader.wait(timeout=scaled(60))
        assert server.terminate() == 0
