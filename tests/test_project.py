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


def readme_layout() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    return done.stdout.split()


def test_every_path_the_readme_layout_names_exists():
    named = [line.split()[0] for line in readme_layout().splitlines()
             if line.startswith("    ") and not line.startswith("     ")]
    assert named, "the README's layout section names no paths"
    missing = [path for path in named if not (ROOT / path).exists()]
    assert missing == [], f"the README's layout names paths the checkout does not have: {missing}"


def test_the_readme_layout_names_every_top_folder_and_every_module_of_the_engine():
    layout = readme_layout()
    files = tracked_files()
    folders = {path.split("/")[0] + "/" for path in files
               if "/" in path and not path.startswith(".")}
    modules = {path.rsplit("/", 1)[-1] for path in files
               if path.startswith("harness/") and path.endswith(".py")} - {"__init__.py"}
    unnamed = sorted(name for name in folders | modules if name not in layout)
    assert unnamed == [], f"the README's layout does not say what these are: {unnamed}"
