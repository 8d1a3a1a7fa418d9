"""What the project's tests share: the chapter, the session's engine, and helpers that run
ol and build workspaces. Fixtures and pytest's hooks are in conftest.py; a test module
imports from here, never from conftest or another test module.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import ol
from harness.chapter import ROOT, find
from harness.grade import catalog, grading
from harness.grade.workspace import Workspace
from harness.report import batch
from harness.run.engine import Engine
from harness.run.layout import Suite
from harness.run.sandbox import PAYLOAD

DS07 = find("ds.07")  # the chapter these tests are about, as ol loads it from its manifest
CONTRACT = DS07.contract  # what its runs import: tl_ds.radix, a RadixTree
REFERENCE = DS07.reference_source()  # the reference tree's text
SECOND_TREE = DS07.correct_trees[1][1].read_text(encoding="utf-8")


# The runs the project's own tests make in process (ol.main makes an engine of its own).
RUNS = Engine()


def git_status() -> str:
    """The checkout's changes and untracked files: what a run of ``ol`` must never add to."""
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                          cwd=ROOT, capture_output=True, text=True)
    return done.stdout


def listen_to_ctrl_c() -> None:
    """Undo an ignored SIGINT inherited from a shell that started the suite in the background."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(argv: list[str], scratch: Path, cwd: Path) -> tuple[int, str]:
    """Start ``ol argv``, press Ctrl-C once a run's folder exists; (exit code, stderr).

    The runs' temporary folders go to ``scratch``, which must be empty afterwards.
    """
    env = {**os.environ, "TMPDIR": str(scratch)}
    process = subprocess.Popen([sys.executable, str(ROOT / "ol.py"), *argv],
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


AUDIENCE = {"passing": "staff", "failing": "student"}  # who reads each example's reports


def write_tests(root: Path, body: str) -> None:
    (root / "tests" / "test_ds07_radix.py").write_text(body, encoding="utf-8")


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


# A weak but honest suite: it kills the mutants that accept a wrong number of values, and
# no other. Each trick below is added to it and must leave its grade exactly as it is.
WEAK_TESTS = """
import pytest
from tl_ds.radix import RadixTree


def test_insert_rejects_a_wrong_number_of_values():
    tree = RadixTree(2)
    with pytest.raises(ValueError):
        tree.insert([1, 2, 3, 4], [10])
"""

def student_workspace(tmp_path: Path, tests: str, tree: str = SECOND_TREE) -> Workspace:
    """A workspace of ``tests`` and ``tree`` (the second correct tree by default)."""
    root = tmp_path / "ws"
    (root / "tl_ds").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tl_ds" / "__init__.py").write_text("")
    (root / "tl_ds" / "radix.py").write_text(tree)
    (root / "tests" / "test_ds07_radix.py").write_text(textwrap.dedent(tests))
    return Workspace(root, DS07)


def grade(tmp_path: Path, tests: str) -> grading.TestsGrade:
    """The student's tests graded as `ol check` grades them, without the course stage."""
    ws = student_workspace(tmp_path, tests)
    submission = ws.snapshot(tree=True, tests=True)
    return grading.grade_tests(RUNS, ws, submission.suite(), grading.correct_trees(DS07),
                               grading.tree_source(RUNS, submission), workers=2,
                               progress=None)


def killed(result: grading.TestsGrade) -> list[str]:
    return sorted(done.mutant.id for done in result.mutants if result.killed(done))


def inside_run(tmp_path: Path, body: str, tree: str = REFERENCE, ours: bool = True,
               prelude: str = ""):
    test = tmp_path / "test_inside.py"
    test.write_text(prelude + textwrap.dedent(body), encoding="utf-8")
    return RUNS.run(Suite(contract=CONTRACT, files=(test,), proxy=(), ours=ours), tree, timeout=120,
                    trusted=tree == REFERENCE)


# Every directory a process can create a file in, found by trying (access() can be wrong
# about a read-only mount); /proc and /sys are skipped (kernel views, not storage).
WRITABLE = '''
import os

def writable_places():
    found = []
    for top, folders, _ in os.walk("/", topdown=True):
        folders[:] = [name for name in folders
                      if os.path.join(top, name) not in ("/proc", "/sys")]
        probe = os.path.join(top, ".ol-can-write")
        try:
            with open(probe, "w") as out:
                out.write("x")
        except OSError:
            continue
        os.unlink(probe)
        found.append(top)
    return sorted(found)
'''


def worker_function(name: str):
    """A function of the runs' worker (which reads its arguments when imported), alone."""
    tree = ast.parse((PAYLOAD / "fork_worker.py").read_text(encoding="utf-8"))
    node = next(node for node in tree.body
                if isinstance(node, ast.FunctionDef) and node.name == name)
    namespace = {"os": os, "VIEWS": {"proc", "sysfs", "cgroup", "cgroup2", "devpts"}}
    exec(compile(ast.Module([node], []), "fork_worker.py", "exec"), namespace)
    return namespace[name]


def autograder(tmp_path: Path, submission: dict[str, str], module: str = "ds.07") -> dict:
    """Unpack a fresh bundle of ``module`` as Gradescope does, grade ``submission`` (path:
    text) with nothing of this checkout's settings (no OL_CHAPTERS); results."""
    root = tmp_path / "autograder"
    code, out, _ = ol_run("gradescope-bundle", module, tmp_path / "bundle.zip")
    assert code == ol.ExitCode.PASSED and "run_autograder" in out
    with zipfile.ZipFile(tmp_path / "bundle.zip") as archive:
        archive.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
        assert subprocess.run(["bash", "-n", root / "source" / name]).returncode == 0
    for path, text in submission.items():
        (root / "submission" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / path).write_text(text)
    (root / "submission").mkdir(exist_ok=True)
    env = {**{name: value for name, value in os.environ.items() if name != "OL_CHAPTERS"},
           "OL_AUTOGRADER_ROOT": str(root), "OL_PYTHON": sys.executable}
    subprocess.run([root / "source" / "run_autograder"], env=env, timeout=600, check=True)
    return json.loads((root / "results" / "results.json").read_text())
