"""The project's own hygiene: what CI holds it to besides behaviour."""

from __future__ import annotations

import shutil
import subprocess

from harness.chapter import ROOT


def test_the_code_is_ruff_clean():
    ruff = shutil.which("ruff")
    assert ruff, "ruff is missing: install the project with `pip install -e '.[dev]'`"
    done = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_quick_start_is_the_command_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[dev]' && ol check ds.07 --workspace examples/passing" in readme
    assert "\n    python -m pytest\n" in readme
    assert "python -m pip install --quiet -e '.[dev]'" in ci and ci.endswith("python -m pytest\n")
