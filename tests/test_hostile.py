"""Submissions that try to trick the grader, each with the verdict it must get.

Every trick is a purpose-made submission: a tree for the course tests, or a test file for
the mutation grade. None may pass what it should not, none may stop the grader, and the
checkout stays as it was.
"""

from __future__ import annotations

import hashlib
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import git_status

from harness import engine, grading
from harness.engine import OUTPUT_LIMIT, Status
from harness.project import SECOND, reference_source
from harness.scan import scan
from harness.workspace import Workspace

REFERENCE = reference_source()
SECOND_TREE = SECOND.read_text(encoding="utf-8")
PASSING_TESTS = (Path(__file__).parent.parent / "examples" / "passing" / "tests"
                 / "test_ds07_radix.py").read_text(encoding="utf-8")
BROKEN = "\n\nRadixTree.lock = lambda self, id: None  # locks nothing: a broken tree\n"


@pytest.fixture(autouse=True)
def checkout_untouched():
    before = git_status()
    yield
    assert git_status() == before


def course(tree: str, call_limit: float | None = None) -> engine.RunResult:
    return grading.course_run(tree, call_limit=call_limit)


def workspace(tmp_path: Path, tests: str, tree: str = SECOND_TREE) -> Workspace:
    root = tmp_path / "ws"
    (root / "tl_ds").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tl_ds" / "__init__.py").write_text("")
    (root / "tl_ds" / "radix.py").write_text(tree)
    (root / "tests" / "test_ds07_radix.py").write_text(textwrap.dedent(tests))
    return Workspace(root)


def grade(tmp_path: Path, tests: str) -> grading.Check:
    """The student's tests graded as `ol check` grades them, without the course stage."""
    ws = workspace(tmp_path, tests)
    return grading.grade_tests(ws, ws.suite(), ws.read(ws.tests),
                               (REFERENCE, SECOND_TREE, ws.implementation()),
                               workers=2, progress=None)


def refused(result: grading.Check) -> bool:
    return not result.graded and not result.passed


# --- the course tests: the student's tree --------------------------------------------------

def test_a_tree_that_patches_pytest_at_import_still_fails_the_course_tests():
    patching = REFERENCE + BROKEN + textwrap.dedent("""
        import _pytest.reports
        _pytest.reports.TestReport.outcome = property(lambda self: "passed", lambda s, v: None)
        _pytest.reports.TestReport.passed = property(lambda self: True)
        _pytest.reports.TestReport.failed = property(lambda self: False)
        """)
    run = course(patching)
    assert run.status is Status.OK
    assert "test_locks_pin_the_path" in [record.name for record in run.failures]


def test_a_package_root_that_patches_pytest_never_runs(tmp_path):
    ws = workspace(tmp_path, PASSING_TESTS, tree=REFERENCE + BROKEN)
    (ws.package / "__init__.py").write_text(
        "import _pytest.runner\n_pytest.runner.call_and_report = lambda *a, **k: None\n")
    run = course(ws.implementation())
    assert run.status is Status.OK and not run.all_passed


def test_a_tree_that_ends_the_interpreter_at_import_fails_every_course_test():
    run = course("import os\nos._exit(0)\n")
    assert run.status is not Status.OK or len(run.failures) == len(run.records)


def test_a_tree_that_ends_its_process_in_a_call_fails_the_tests_that_call_it():
    run = course(REFERENCE + "\n\nRadixTree.evict = lambda self, n, f: __import__('os')._exit(0)\n")
    assert run.status is Status.OK
    assert "test_lru_order_follows_last_use" in [record.name for record in run.failures]
    assert "TreeStopped" in {record.exception for record in run.failures}


def test_a_tree_that_loops_forever_fails_at_its_call_limit():
    run = course(REFERENCE + "\n\ndef _spin(self, n, f):\n    while True:\n        pass\n"
                 "RadixTree.evict = _spin\n", call_limit=1.0)
    assert run.status is Status.OK
    failed = {record.name: record for record in run.failures}
    assert "test_lru_order_follows_last_use" in failed
    assert "did not answer within 1 s" in failed["test_lru_order_follows_last_use"].text
    assert "test_granule_matches_whole_runs_only" not in failed


def test_a_tree_that_allocates_without_end_fails_at_the_memory_limit(monkeypatch):
    monkeypatch.setitem(engine.LIMITS, "memory", 1 << 30)
    run = course(REFERENCE + "\n\ndef _grow(self, n, f):\n    hoard = []\n    while True:\n"
                 "        hoard.append(bytearray(1 << 28))\nRadixTree.evict = _grow\n")
    assert run.status is Status.OK
    failed = {record.name: record for record in run.failures}
    assert "test_lru_order_follows_last_use" in failed
    assert failed["test_lru_order_follows_last_use"].exception == "MemoryError"


def test_a_tree_that_prints_megabytes_is_judged_on_its_answers_and_its_output_is_cut():
    run = course(REFERENCE + "\n\n_insert = RadixTree.insert\n"
                 "def _loud(self, key, values):\n    print('x' * 100_000)\n"
                 "    return _insert(self, key, values)\nRadixTree.insert = _loud\n")
    assert run.all_passed
    assert len(run.output) <= OUTPUT_LIMIT


def test_a_tree_that_forks_leaves_no_process_behind():
    marker = "317.25"
    run = course(REFERENCE + textwrap.dedent(f"""
        import os
        _insert = RadixTree.insert
        _forked = []
        def _fork(self, key, values):
            if len(_forked) < 3:
                _forked.append(True)
                if os.fork() == 0:
                    os.execvp("sleep", ["sleep", "{marker}"])
            return _insert(self, key, values)
        RadixTree.insert = _fork
        """))
    assert run.status is Status.OK
    left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert left.stdout == ""


# --- the mutation grade: the student's tests -----------------------------------------------

def test_os_exit_at_import_of_the_tests_is_flagged_and_never_graded(tmp_path):
    tests = "import os\nos._exit(0)\ndef test_split_by_hand():\n    pass\n"
    assert [flag.line for flag in scan(tests)] == [1]
    assert refused(grade(tmp_path, tests))


def test_os_exit_in_a_test_gets_no_grade(tmp_path):
    result = grade(tmp_path, PASSING_TESTS + "\n\ndef test_leaves():\n"
                   "    __import__('os')._exit(0)\n")
    assert refused(result) and "did not finish (crash)" in result.problem


def test_pytest_exit_with_return_code_zero_gets_no_grade(tmp_path):
    result = grade(tmp_path, PASSING_TESTS + "\n\ndef test_leaves():\n"
                   "    pytest.exit('done', returncode=0)\n")
    assert refused(result) and "crash" in result.problem
    assert "pytest.exit" in " ".join(map(str, scan(PASSING_TESTS + "pytest.exit()\n")))


def test_sys_exit_in_a_test_makes_it_invalid(tmp_path):
    result = grade(tmp_path, PASSING_TESTS + "\n\ndef test_leaves():\n"
                   "    raise SystemExit(0)\n")
    assert refused(result)
    assert "leaves" in {entry.name.removeprefix("test_") for entry in result.invalid} or \
        result.problem


def test_a_conftest_that_turns_failures_into_passes_is_never_loaded(tmp_path):
    ws = workspace(tmp_path, PASSING_TESTS + "\n\ndef test_always_fails():\n    assert False\n")
    (ws.root / "tests" / "conftest.py").write_text(textwrap.dedent("""
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            outcome.get_result().outcome = "passed"
        """))
    result = grading.grade_tests(ws, ws.suite(), ws.read(ws.tests),
                               (REFERENCE, SECOND_TREE, ws.implementation()),
                                 workers=2, progress=None)
    assert refused(result)
    assert "test_always_fails" in {entry.name for entry in result.invalid}


def test_pytest_plugins_that_turn_failures_into_passes_are_flagged_and_refused(tmp_path):
    tests = PASSING_TESTS + "\n\npytest_plugins = ['helper']\n"
    assert any("pytest_plugins" in str(flag) for flag in scan(tests))
    assert refused(grade(tmp_path, tests))


def test_a_suite_that_passes_its_first_run_and_fails_later_ones_gets_no_grade(tmp_path):
    counter = tmp_path / "runs.txt"
    result = grade(tmp_path, PASSING_TESTS + textwrap.dedent(f"""

        def test_first_run_only():
            with open({str(counter)!r}, "a+") as runs:
                runs.seek(0)
                seen = runs.read()
                runs.write("x")
            assert seen == ""
        """))
    assert refused(result)
    assert result.problem or "test_first_run_only" in {entry.name for entry in result.invalid}


def test_a_suite_that_hashes_the_implementation_source_is_flagged_and_invalid(tmp_path):
    digest = hashlib.sha256(REFERENCE.encode()).hexdigest()
    tests = PASSING_TESTS + textwrap.dedent(f"""

        import hashlib, inspect
        import tl_ds.radix

        def test_is_the_reference():
            source = inspect.getsource(tl_ds.radix)
            assert hashlib.sha256(source.encode()).hexdigest() == {digest!r}
        """)
    assert any("inspect" in str(flag) for flag in scan(tests))
    result = grade(tmp_path, tests)
    assert refused(result)
    assert {(entry.name, entry.where) for entry in result.invalid} == {
        ("test_is_the_reference", "the reference"), ("test_is_the_reference",
                                                    "the second correct tree")}


def test_a_test_that_deletes_files_in_its_working_directory_harms_only_its_own_run(tmp_path):
    tests = PASSING_TESTS + textwrap.dedent("""

        import shutil
        def test_wipes():
            for path in __import__("pathlib").Path("..").iterdir():
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()
        """)
    assert any("shutil" in str(flag) for flag in scan(tests))
    assert refused(grade(tmp_path, tests))
