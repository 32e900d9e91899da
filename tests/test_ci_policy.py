"""The CI policy itself: a skip must fail under CI=true."""

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent


def test_a_skip_fails_under_ci(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text((TESTS / "plugin.py").read_text())
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\ndef test_needs_a_thing():\n    pytest.skip('bubblewrap is not installed')\n"
    )
    # The copied plugin imports the tests' own helpers (tests.time_scale): the repository root on the path.
    root = str(TESTS.parent)
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")]))
    ci = _pytest(tmp_path, {**os.environ, "CI": "true", "PYTHONPATH": path})
    assert ci.returncode == 1, ci.stdout
    assert "bubblewrap is not installed" in ci.stdout
    local = _pytest(tmp_path, {**os.environ, "CI": "", "PYTHONPATH": path})
    assert local.returncode == 0, local.stdout
    assert "1 skipped" in local.stdout


def _pytest(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """pytest run on ``folder`` in a process of its own, with the environment ``env``."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
    )
