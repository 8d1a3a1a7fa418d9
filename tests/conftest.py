"""The project's own test run: ``tl_ds.radix`` is the reference, ``impl/radix.py``.

The course tests import ``tl_ds.radix`` and nothing else. Graders choose which file that
import yields for each run; in this project's own run it is the reference, loaded from
``impl/radix.py`` under the module name ``tl_ds.radix`` without writing any file.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

import ol
from harness.chapter import find
from harness.grade import catalog
from harness.report import batch
from harness.run import cgroups, sandbox
from harness.run.engine import Engine

DS07 = find("ds.07")  # the chapter these tests are about, as ol loads it from its manifest
CONTRACT = DS07.contract  # what its runs import: tl_ds.radix, a RadixTree
REFERENCE = DS07.reference


def _load_reference_as_tl_ds() -> None:
    package = types.ModuleType("tl_ds")
    package.__path__ = []
    spec = importlib.util.spec_from_file_location("tl_ds.radix", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["tl_ds"] = package
    sys.modules["tl_ds.radix"] = module
    spec.loader.exec_module(module)
    package.radix = module


# The runs the project's own tests make in process (ol.main makes an engine of its own).
RUNS = Engine()


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


def git_status() -> str:
    """The checkout's changes and untracked files: what a run of ``ol`` must never add to."""
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                          cwd=REFERENCE.parent.parent, capture_output=True, text=True)
    return done.stdout


def listen_to_ctrl_c() -> None:
    """Undo an ignored SIGINT inherited from a shell that started the suite in the background."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(argv: list[str], scratch: Path, cwd: Path) -> tuple[int, str]:
    """Start ``ol argv``, press Ctrl-C once a run's folder exists; (exit code, stderr).

    The runs' temporary folders go to ``scratch``, which must be empty afterwards.
    """
    env = {**os.environ, "TMPDIR": str(scratch)}
    process = subprocess.Popen([sys.executable, str(REFERENCE.parent.parent / "ol.py"), *argv],
                               cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=listen_to_ctrl_c)
    deadline = time.monotonic() + 60
    while not list(scratch.glob("ol-runs-*/run-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    return process.returncode, err


# --- the commands, as a student runs them: shared by test_ol, test_reports, test_platforms

PASSING = DS07.examples / "passing"
FAILING = DS07.examples / "failing"
DATA = Path(__file__).with_name("data")
TREE = (PASSING / "tl_ds" / "radix.py").read_text(encoding="utf-8")

TOTAL = len(catalog.load_catalog(DS07))
PERCENT = DS07.threshold_percent  # the planted mutants, as many as the catalog lists


def ol_run(*argv: str | Path, shared: bool = True) -> tuple[int, str, str]:
    """``ol argv`` in process: (exit code, stdout, stderr). The command runs in the
    session's engine when its settings are the session's (ol.main checks), so the suite
    starts one sandbox and one worker, not one per command; with ``shared`` False it makes
    its own, as the command line does."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = ol.main([str(arg) for arg in argv], engine=RUNS if shared else None)
    return code, out.getvalue(), err.getvalue()


def verdict_line(out: str) -> str:
    """The verdict of `ol check`'s output (a line about reports may follow it)."""
    return [line for line in out.splitlines() if line.startswith(("PASSED", "NOT PASSED"))][-1]


def bad_input(*argv: str | Path) -> str:
    """Run ``ol argv``, which must refuse it with exit 2 and no traceback; its message."""
    code, out, err = ol_run(*argv)
    assert code == ol.ExitCode.BAD_INPUT, (out, err)
    assert "Traceback" not in out + err
    said = [line for line in err.splitlines() if not line.startswith("[")]  # progress lines
    assert said and said[0].startswith("ol: "), err
    return "\n".join(said)


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A fresh workspace from `ol start`, with the passing example's tests and tree."""
    root = tmp_path / "ws"
    assert ol_run("start", "ds.07", "--workspace", root)[0] == ol.ExitCode.PASSED
    shutil.copy(PASSING / "tests" / "test_ds07_radix.py", root / "tests" / "test_ds07_radix.py")
    (root / "tl_ds" / "radix.py").write_text(TREE, encoding="utf-8")
    return root


def write_tests(root: Path, body: str) -> None:
    (root / "tests" / "test_ds07_radix.py").write_text(body, encoding="utf-8")


AUDIENCE = {"passing": "staff", "failing": "student"}


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


def a_class(mutants: tuple) -> list[batch.Row]:
    """Five submissions: two passes (18 and 13 kills), a fail that misses s11, a refused
    suite that killed everything, and one that could not be graded."""
    ids = [mutant.id for mutant in mutants]
    without_s11 = tuple(id for id in ids if id != "s11")
    return [
        batch.Row("ann", "passed", 11, 18, 1.0, "killed", (), 50.0, "", graded=True,
                  killed=tuple(ids)),
        batch.Row("ben", "passed", 11, 13, 0.7222, "killed", (), 50.0, "", graded=True,
                  killed=tuple(ids[:13]) if "s11" in ids[:13] else (*ids[:12], "s11")),
        batch.Row("cy", "not passed", 11, 17, 0.9444, "survived", (), 50.0, "", graded=True,
                  killed=without_s11),
        batch.Row("dee", "not passed", 11, None, None, "", ("test_x",), 50.0, "",
                  graded=False, refusal="invalid tests: test_x"),
        batch.Row("eve", "error", None, None, None, "", (), 1.0, "missing",
                  refusal="tl_ds/radix.py missing"),
    ]


def class_html(tmp_path: Path) -> str:
    mutants = catalog.load_catalog(DS07)
    rows = a_class(mutants)
    for row in rows:  # the files ol grade leaves for each
        (tmp_path / row.submission).mkdir()
        (tmp_path / row.submission / "check.txt").write_text("")
        if row.verdict != "error":
            (tmp_path / row.submission / "reports").mkdir()
            (tmp_path / row.submission / "reports" / "mutation.html").write_text("")
    batch.write_summary(tmp_path, rows, DS07)
    return (tmp_path / "class.html").read_text()
