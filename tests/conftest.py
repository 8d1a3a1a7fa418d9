"""The project's own test run: ``tl_ds.radix`` is the reference, ``impl/radix.py``.

The course tests import ``tl_ds.radix`` and nothing else. Graders choose which file that
import yields for each run; in this project's own run it is the reference, loaded from
``impl/radix.py`` under the module name ``tl_ds.radix`` without writing any file.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import types
from pathlib import Path

import pytest
from support import (
    AUDIENCE,
    DS07,
    PASSING,
    RUNS,
    TREE,
    WEAK_TESTS,
    git_status,
    grade,
    killed,
    ol_run,
)

import ol
from harness.grade import grading
from harness.run import cgroups, sandbox

REFERENCE = DS07.reference  # loaded as tl_ds.radix, in process


def _load_reference_as_tl_ds() -> None:
    package = types.ModuleType("tl_ds")
    package.__path__ = []
    spec = importlib.util.spec_from_file_location("tl_ds.radix", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["tl_ds"] = package
    sys.modules["tl_ds.radix"] = module
    spec.loader.exec_module(module)
    package.radix = module


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "sandboxed(mode): needs that sandbox (bwrap or uid); skipped, with the "
        "reason, only where it cannot start, and a failure of the run where OL_SANDBOX_TESTS "
        "names that mode (as .ci/run does for each sandbox ol says starts here)")
    config.addinivalue_line(
        "markers", "slow: runs whole checks, grading batches or hostile workspaces (seconds to "
        "minutes each); `-m \"not slow\"` leaves them out while working, CI runs them all")
    _load_reference_as_tl_ds()
    # every run of the project's tests runs: results kept by content are tested on purpose
    # (test_cache.py), never met by chance
    os.environ["OL_CACHE"] = "off"
    # Ctrl-C during an ol called in process stops the whole session, as anywhere else
    ol.PASS_ON_INTERRUPTS = True


# fixtures that grade whole submissions or run a kill matrix once per module: a test that
# uses one is slow whatever its own body costs, so `-m "not slow"` never builds them
HEAVY_FIXTURES = {"checked", "reports", "kill_matrix", "audit_matrix", "replays",
                  "on_gradescope"}


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if HEAVY_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def pytest_unconfigure(config) -> None:
    RUNS.close()


def sandbox_problem(mode: str) -> str | None:
    """None when the ``mode`` sandbox starts here, else why not (probed once per mode)."""
    if mode not in SANDBOX_PROBLEMS:
        if mode == "uid":
            SANDBOX_PROBLEMS[mode] = sandbox.uid_problem()
        elif mode == "cgroup":
            groups = cgroups.make(64, 1 << 30)
            SANDBOX_PROBLEMS[mode] = None if groups else "no control groups can be made here"
            if groups is not None:
                groups.remove()
        else:
            chosen = sandbox.choose("auto")
            SANDBOX_PROBLEMS[mode] = None if chosen.mode == mode else (
                chosen.reason or f"the sandbox here is {chosen.mode}")
    return SANDBOX_PROBLEMS[mode]


SANDBOX_PROBLEMS: dict[str, str | None] = {}


def pytest_runtest_setup(item) -> None:
    for mark in item.iter_markers("sandboxed"):
        mode = mark.args[0] if mark.args else "bwrap"
        problem = sandbox_problem(mode)
        if problem is not None:
            pytest.skip(f"needs the {mode} sandbox, which cannot start here: {problem}")


def pytest_sessionfinish(session, exitstatus) -> None:
    """A test of a sandbox named in OL_SANDBOX_TESTS (as .ci/run names the ones ol says start
    here) that skipped fails the run: no silent skips where the sandbox works."""
    required = [mode for mode in os.environ.get("OL_SANDBOX_TESTS", "").split(",") if mode]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = [report.nodeid for report in (reporter.stats.get("skipped", []) if reporter
                                            else [])
               if any(f"needs the {mode} sandbox" in str(report.longrepr) for mode in required)]
    if skipped:
        print(f"\n{len(skipped)} sandbox test(s) skipped on a machine where ol says that "
              f"sandbox starts (OL_SANDBOX_TESTS={','.join(required)}):\n  "
              + "\n  ".join(skipped))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> grading.TestsGrade:
    result = grade(tmp_path_factory.mktemp("honest"), WEAK_TESTS)
    assert result.graded and not result.invalid and not result.rate_met
    assert "s15" in killed(result) and len(killed(result)) < 5
    return result


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A fresh workspace from `ol start`, with the passing example's tests and tree."""
    root = tmp_path / "ws"
    assert ol_run("start", "ds.07", "--workspace", root)[0] == ol.ExitCode.PASSED
    shutil.copy(PASSING / "tests" / "test_ds07_radix.py", root / "tests" / "test_ds07_radix.py")
    (root / "tl_ds" / "radix.py").write_text(TREE, encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def reports(tmp_path_factory) -> dict[str, Path]:
    """Where `checked` writes each example's reports: staff for passing, student for failing."""
    root = tmp_path_factory.mktemp("reports")
    return {name: root / name for name in AUDIENCE}


@pytest.fixture(scope="session")
def checked(reports) -> dict[str, tuple[int, str, str]]:
    before = git_status()
    runs = {name: ol_run("check", "ds.07", "--workspace", DS07.examples / name,
                         "--report", reports[name], "--audience", audience)
            for name, audience in AUDIENCE.items()}
    assert git_status() == before
    return runs
