"""The student's commands, called as ``ol.main([...])`` in this process.

Each test reads what a student reads: the exit code and the lines on stdout and stderr.
The slow runs (`ol check` on the two bundled examples) happen once per module.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
import zipfile
import zlib
from collections import Counter
from pathlib import Path
from types import NoneType

import pytest
from conftest import CONTRACT, DS07, git_status, interrupt

import ol
from harness.chapter import ROOT
from harness.grade import catalog
from harness.grade import score as score_module
from harness.grade.course import meets_threshold, needed
from harness.grade.grading import COURSE_STAGE, MUTANT_STAGE, Event
from harness.report import batch
from harness.report.class_page import class_page, class_summary
from harness.report.progress import Display
from harness.report.render import counted, print_course
from harness.run import judge
from harness.run.engine import Engine

PASSING = DS07.examples / "passing"
FAILING = DS07.examples / "failing"
DATA = Path(__file__).with_name("data")
TREE = (PASSING / "tl_ds" / "radix.py").read_text(encoding="utf-8")

TOTAL = len(catalog.load_catalog(DS07))
PERCENT = DS07.threshold_percent  # the planted mutants, as many as the catalog lists


def ol_run(*argv: str | Path) -> tuple[int, str, str]:
    """``ol argv`` in process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = ol.main([str(arg) for arg in argv])
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


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    """Where `checked` writes each example's reports: staff for passing, student for failing."""
    root = tmp_path_factory.mktemp("reports")
    return {name: root / name for name in AUDIENCE}


@pytest.fixture(scope="module")
def checked(reports) -> dict[str, tuple[int, str, str]]:
    before = git_status()
    runs = {name: ol_run("check", "ds.07", "--workspace", DS07.examples / name,
                         "--report", reports[name], "--audience", audience)
            for name, audience in AUDIENCE.items()}
    assert git_status() == before
    return runs


# --- ol start ---------------------------------------------------------------------------------

def test_start_writes_the_stub_the_package_and_a_test_file_naming_the_six_tests(tmp_path):
    root = tmp_path / "ws"
    code, out, _ = ol_run("start", "ds.07", "--workspace", root)
    assert code == ol.ExitCode.PASSED
    assert (root / "tl_ds" / "__init__.py").read_text() == ""
    stub = (root / "tl_ds" / "radix.py").read_text()
    assert "class RadixTree" in stub and "NotImplementedError" in stub
    tests = (root / "tests" / "test_ds07_radix.py").read_text()
    assert all(name in tests for name in DS07.required_tests) and "def test" not in tests
    assert out.count("created") == 3
    assert out.splitlines()[-1].startswith("Next: write the six tests")
    assert f"`ol tdd red ds.07 --workspace {root}`" in out


def test_start_never_overwrites_a_file_and_names_what_it_kept(tmp_path):
    root = tmp_path / "ws"
    (root / "tl_ds").mkdir(parents=True)
    (root / "tl_ds" / "radix.py").write_text("# my work\n")
    code, out, _ = ol_run("start", "ds.07", "--workspace", root)
    assert code == ol.ExitCode.PASSED
    assert (root / "tl_ds" / "radix.py").read_text() == "# my work\n"
    assert f"kept     {root / 'tl_ds' / 'radix.py'}" in out
    assert out.count("created") == 2


def test_the_stub_constructs_checking_nothing_and_every_other_method_raises_not_implemented(
        tmp_path):
    root = tmp_path / "ws"
    ol_run("start", "ds.07", "--workspace", root)
    namespace: dict = {}
    exec((root / "tl_ds" / "radix.py").read_text(), namespace)
    tree = namespace["RadixTree"](2)
    namespace["RadixTree"](0)  # checking the granule is the student's to write: a red test
    for call in (lambda: len(tree), lambda: tree.insert([1, 2], ["a"]), lambda: tree.granule,
                 lambda: tree.match_prefix([1]), lambda: tree.evict(1, print),
                 lambda: tree.lru_order(), lambda: tree.lock(1), lambda: tree.key(1)):
        with pytest.raises(NotImplementedError):
            call()


# --- ol tests ---------------------------------------------------------------------------------

def test_tests_lists_the_eleven_course_tests_and_the_rung():
    code, out, _ = ol_run("tests", "ds.07")
    assert code == ol.ExitCode.PASSED
    for name in DS07.course_test_names:
        assert f"{name.removeprefix('test_')}  [" in out
    assert "[property]" in out and "why:" in out
    assert all(name in out for name in DS07.required_tests)
    assert "kill s11" in out
    least = needed(TOTAL, PERCENT)
    assert f"at least 70% of the {TOTAL} planted mutants, that is {least} of {TOTAL}" in out


# --- ol tdd -----------------------------------------------------------------------------------

@pytest.mark.slow
def test_tdd_red_passes_when_every_test_fails_on_the_stub(workspace):
    code, out, _ = ol_run("tdd", "red", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.PASSED, out
    assert "RED: all 12 tests fail on the stub." in out
    assert f"`ol tdd green ds.07 --workspace {workspace}`" in out


@pytest.mark.slow
def test_tdd_red_names_vacuous_broken_and_skipped_tests(workspace):
    write_tests(workspace, (
        "import pytest\nfrom tl_ds.radix import RadixTree\n"
        "def test_split_by_hand(): RadixTree(1).insert([1], ['a'])\n"
        "def test_fails_by_hand(): pytest.fail('not yet')\n"
        "def test_asserts_nothing(): RadixTree(1)\n"
        "def test_misspelt(): RadixTre(1)\n"
        "def test_wrong_call(): RadixTree()\n"
        "@pytest.mark.skip\ndef test_skipped(): pass\n"))
    code, out, _ = ol_run("tdd", "red", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.NOT_PASSED
    lines = {line.split()[1]: line.split()[0] for line in out.splitlines()[2:8]}
    assert lines == {"split_by_hand": "red", "fails_by_hand": "red", "asserts_nothing": "vacuous",
                     "misspelt": "broken", "wrong_call": "broken", "skipped": "skipped"}
    assert "NameError: name 'RadixTre' is not defined" in out
    assert "NOT RED (2 red, 1 vacuous, 2 broken, 1 skipped)" in out


@pytest.mark.slow
def test_tdd_red_calls_a_test_file_that_does_not_import_broken(workspace):
    write_tests(workspace, "import not_a_module_here\n\ndef test_split_by_hand():\n    pass\n")
    code, out, _ = ol_run("tdd", "red", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.NOT_PASSED
    assert "BROKEN: the test file does not import" in out and "not_a_module_here" in out


@pytest.mark.parametrize("command", [("tdd", "red"), ("tdd", "green"), ("check",)])
def test_a_test_file_that_does_not_compile_stops_the_command_with_a_caret_before_any_run(
        workspace, monkeypatch, command):
    write_tests(workspace, "def test_split_by_hand(:\n    pass\n")
    monkeypatch.setattr(Engine, "run", lambda *args, **kwargs: pytest.fail("a run started"))
    monkeypatch.setattr(Engine, "probe_import", lambda *args: pytest.fail("a probe started"))
    err = bad_input(*command, "ds.07", "--workspace", workspace)
    assert "test_ds07_radix.py does not compile" in err
    assert "    def test_split_by_hand(:" in err and "SyntaxError" in err and "^" in err


@pytest.mark.slow
def test_a_test_for_the_granule_check_is_red_on_the_stub_which_checks_nothing(workspace):
    write_tests(workspace, "import pytest\nfrom tl_ds.radix import RadixTree\n\n"
                           "def test_split_by_hand():\n"
                           "    with pytest.raises(ValueError):\n        RadixTree(0)\n")
    code, out, _ = ol_run("tdd", "red", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.PASSED, out
    assert "RED: the test fails on the stub." in out


@pytest.mark.slow
def test_a_command_run_inside_a_workspace_works_on_that_workspace(workspace, monkeypatch):
    monkeypatch.chdir(workspace / "tests")
    code, out, _ = ol_run("start", "ds.07")
    assert code == ol.ExitCode.PASSED and "created" not in out
    assert not (workspace / "tests" / "workspace").exists()
    assert not (workspace / "workspace").exists()
    monkeypatch.chdir(workspace)
    code, out, _ = ol_run("tdd", "green", "ds.07")
    assert code == ol.ExitCode.PASSED and "GREEN" in out


@pytest.mark.parametrize("inside", [".", "tests"])
def test_hints_given_inside_a_workspace_never_name_it_with_workspace(workspace, monkeypatch,
                                                                      inside):
    monkeypatch.chdir(workspace / inside)
    code, out, _ = ol_run("tdd", "green", "ds.07")
    assert code == ol.ExitCode.PASSED and "Next: `ol check ds.07`." in out
    assert "--workspace" not in out


@pytest.mark.slow
def test_tdd_green_passes_when_every_test_passes_on_the_students_tree(workspace):
    code, out, _ = ol_run("tdd", "green", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.PASSED, out
    assert "GREEN: all 12 tests pass on your tree." in out


@pytest.mark.slow
def test_tdd_green_does_not_count_a_skip_or_a_failure_as_green(workspace):
    write_tests(workspace, (
        "import pytest\nfrom tl_ds.radix import RadixTree\n"
        "def test_split_by_hand(): assert len(RadixTree(1)) == 0\n"
        "def test_wrong(): assert len(RadixTree(1)) == 1\n"
        "@pytest.mark.skip\ndef test_skipped(): pass\n"))
    code, out, _ = ol_run("tdd", "green", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.NOT_PASSED
    assert "NOT GREEN (1 green, 2 failing)" in out
    assert "skipped: only a pass is green" in out


# --- ol check ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_check_passes_the_passing_example_with_every_table(checked):
    code, out, err = checked["passing"]
    assert code == ol.ExitCode.PASSED, out + err
    assert out.count("\npass    ") == len(DS07.course_test_names)
    assert ("12 tests; on the reference: 12 pass, 0 fail; "
            "on the second correct tree: 12 pass, 0 fail") in out
    assert "required tests missing: none" in out
    least = needed(TOTAL, PERCENT)
    assert (f"kill rate {TOTAL} of {TOTAL} = 100% (needs 70%: {least} of {TOTAL}); "
            "s11 killed") in out
    assert verdict_line(out).startswith("PASSED: the course tests pass")
    assert "Traceback" not in out + err


def test_check_says_how_much_of_the_students_tree_their_tests_run(checked):
    _, out, _ = checked["passing"]
    line = next(line for line in out.splitlines() if "coverage of" in line)
    assert "tl_ds/radix.py by your tests (not graded): lines " in line
    assert "branches " in line and "%" in line
    assert "--missed` lists what they never run" in out


@pytest.mark.slow
def test_check_with_missed_lists_the_lines_the_tests_never_run(capsys):
    code, out, err = ol_run("check", "ds.07", "--workspace", DS07.examples / "passing", "--missed")
    assert code == ol.ExitCode.PASSED, out + err
    assert "    lines never run: " in out and "    branches never taken: " in out


def test_check_fails_the_failing_example_and_says_why(checked):
    code, out, err = checked["failing"]
    assert code == ol.ExitCode.NOT_PASSED, out + err
    assert "FAIL    locks_pin_the_path" in out
    assert "model_based_against_a_naive_map failed" in out
    assert "def test_replay_of_the_model_test():" in out
    lines = out.splitlines()
    loop = next(index for index, line in enumerate(lines) if "for child in tree" in line)
    indent = len(lines[loop]) - len(lines[loop].lstrip())
    assert lines[loop + 2] == " " * (indent + 4) + "yield from nodes(child)"  # indents kept
    assert "on the reference: 4 pass, 0 fail; on the second correct tree: 3 pass, 1 fails" in out
    assert "INVALID new_nodes_take_the_next_ids fails on the second correct tree" in out
    assert "when run again" not in out
    assert "(provisional: without the invalid tests)" in out
    assert ("required tests missing: test_insert_hands_back_the_stored_part, "
            "test_locks_pin_ancestors, test_parent_becomes_evictable") in out
    assert "SURVIVED (required)" in out
    assert any(line.startswith("s11 ") and "SURVIVED  hint:" in line
               for line in out.splitlines())
    last = verdict_line(out)
    assert last.startswith("NOT PASSED: course tests fail; grade refused")
    assert "Next: fix your tree until the course tests pass" in last


@pytest.mark.slow
def test_a_test_that_fails_on_the_reference_is_invalid_and_refuses_the_grade(workspace):
    with (workspace / "tests" / "test_ds07_radix.py").open("a") as out:
        out.write("\n\ndef test_asks_too_much():\n    assert len(RadixTree(1)) == 1\n")
    code, out, _ = ol_run("check", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.NOT_PASSED
    assert "INVALID asks_too_much fails on the reference" in out
    assert "INVALID asks_too_much fails on the second correct tree" in out
    assert f"kill rate {TOTAL} of {TOTAL}" in out and "(provisional" in out
    assert "grade refused: your tests are invalid" in out.splitlines()[-1]


@pytest.mark.slow
def test_a_test_that_asserts_the_first_nodes_id_is_invalid(workspace):
    """Which id a new node gets is the contract's open choice: the reference and the second
    tree both start at 1, the third does not, so such a test is named invalid."""
    with (workspace / "tests" / "test_ds07_radix.py").open("a") as out:
        out.write("\n\ndef test_first_node_is_one():\n    tree = RadixTree(1)\n"
                  "    tree.insert([1, 2], [10, 20])\n"
                  "    assert tree.children(ROOT) == [1]\n")
    code, out, _ = ol_run("check", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.NOT_PASSED
    assert "INVALID first_node_is_one fails on the third correct tree" in out
    assert "INVALID first_node_is_one fails on the reference" not in out
    assert "grade refused: your tests are invalid" in out.splitlines()[-1]


@pytest.mark.slow
def test_tests_that_never_reach_the_tree_refuse_the_grade(workspace):
    write_tests(workspace, "".join(f"def {name}():\n    pass\n" for name in DS07.required_tests))
    code, out, _ = ol_run("check", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.NOT_PASSED
    assert "your tests pass on a tree whose every method raises" in out
    assert f"kill rate 0 of {TOTAL}" in out


@pytest.mark.parametrize("killed", range(19))
def test_the_threshold_is_13_of_18(killed):
    assert meets_threshold(killed, 18, PERCENT) is (killed >= 13)


def test_the_threshold_boundary_holds_for_other_totals():
    assert needed(18, PERCENT) == 13 and needed(10, PERCENT) == 7 and needed(20, PERCENT) == 14
    assert not meets_threshold(0, 0, PERCENT)


# --- ol diff ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_diff_shows_the_reference_once_the_course_tests_pass(workspace):
    code, out, _ = ol_run("diff", "ds.07", "--workspace", workspace)
    assert code == ol.ExitCode.PASSED
    lines = out.splitlines()
    assert lines[0] == f"--- {workspace / 'tl_ds' / 'radix.py'} (yours)"
    assert lines[1] == "+++ reference tl_ds/radix.py"
    assert "+class _Node:" in lines and "\033[" not in out


@pytest.mark.slow
def test_diff_refuses_before_the_course_tests_pass():
    code, out, _ = ol_run("diff", "ds.07", "--workspace", FAILING)
    assert code == ol.ExitCode.NOT_PASSED
    assert out.startswith("ol diff refuses: 7 course tests fail on your tree")
    assert "+++" not in out


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ("start", "ds.7"), ("tests", "ds.08"), ("tdd", "red", "m07"), ("check", "ds07"),
    ("diff", "DS.07"), ("mutants", "ds.99")])
def test_an_unknown_module_id_is_bad_input(argv):
    assert "unknown module id" in bad_input(*argv)


@pytest.mark.parametrize("argv", [("frobnicate", "ds.07"), ("tdd", "blue", "ds.07"),
                                  ("check", "ds.07", "--jobz", "2"), ("check",), ()])
def test_an_unknown_command_or_flag_is_bad_input(argv):
    code, out, err = ol_run(*argv)
    assert code == ol.ExitCode.BAD_INPUT and "Traceback" not in out + err


@pytest.mark.parametrize("command", [("tdd", "red"), ("tdd", "green"), ("check",), ("diff",)])
def test_a_missing_workspace_is_bad_input(tmp_path, command):
    error = bad_input(*command, "ds.07", "--workspace", tmp_path / "nowhere")
    assert "there is no workspace at" in error and "ol start ds.07 --workspace" in error


@pytest.mark.parametrize("command", [("tdd", "green"), ("check",), ("diff",)])
def test_a_missing_radix_py_is_bad_input(workspace, command):
    (workspace / "tl_ds" / "radix.py").unlink()
    assert "radix.py missing from the workspace" in bad_input(*command, "ds.07",
                                                               "--workspace", workspace)


@pytest.mark.parametrize("command", [("tdd", "red"), ("tdd", "green"), ("check",)])
def test_a_missing_test_file_is_bad_input(workspace, command):
    (workspace / "tests" / "test_ds07_radix.py").unlink()
    error = bad_input(*command, "ds.07", "--workspace", workspace)
    assert "test_ds07_radix.py missing from the workspace" in error


@pytest.mark.parametrize(("source", "said"), [
    ("def insert(:\n", "SyntaxError"),
    ("import numpy_that_is_not_installed\n", "ModuleNotFoundError"),
    ("raise RuntimeError('at import')\n", "RuntimeError: at import"),
    ("class Tree:\n    pass\n", "it defines no class RadixTree"),
    ("import os\nos._exit(0)\n", "ends the interpreter"),
])
@pytest.mark.slow
def test_a_radix_py_that_does_not_import_is_bad_input(workspace, source, said):
    (workspace / "tl_ds" / "radix.py").write_text(source)
    for command in (("tdd", "green"), ("check",), ("diff",)):
        error = bad_input(*command, "ds.07", "--workspace", workspace)
        assert "does not import as tl_ds.radix" in error and said in error


@pytest.mark.parametrize("body", ["", '"""Only a docstring."""\n', "def helper():\n    pass\n"])
def test_a_test_file_with_no_tests_is_bad_input(workspace, body):
    write_tests(workspace, body)
    for command in (("tdd", "red"), ("tdd", "green"), ("check",)):
        assert "holds no tests" in bad_input(*command, "ds.07", "--workspace", workspace)


@pytest.mark.slow
def test_ctrl_c_in_the_middle_of_ol_check_leaves_nothing_behind(tmp_path):
    before = git_status()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code, err = interrupt(["check", "ds.07", "--workspace", str(PASSING)], scratch, ROOT)
    assert code == ol.ExitCode.INTERRUPTED, err
    assert "interrupted" in err and "Traceback" not in err
    assert list(scratch.iterdir()) == []
    assert git_status() == before


# --- reports (ol check --report) and ol grade -------------------------------------------------

GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
GRADESCOPE_FORMATS = {"text", "html", "simple_format", "md", "ansi"}
REFERENCE_LINE = "A radix tree over token ids: the prefix cache of an LLM server"


def test_the_staff_mutation_json_is_valid_against_the_published_schema(checked, reports):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((DATA / "mutation-testing-report-schema-3.8.4.json").read_text())
    report = json.loads((reports["passing"] / "mutation.json").read_text())
    jsonschema.validate(report, schema)
    mutants = report["files"]["impl/radix.py"]["mutants"]
    planted = catalog.load_catalog(DS07)
    assert [mutant["id"] for mutant in mutants] == [mutant.id for mutant in planted]
    assert {mutant["status"] for mutant in mutants} == {"Killed"}
    assert all(mutant["killedBy"] and mutant["description"] for mutant in mutants)
    assert REFERENCE_LINE in report["files"]["impl/radix.py"]["source"]


def test_results_json_has_the_fields_gradescope_reads_and_scores_the_rows(checked, reports):
    for name in AUDIENCE:
        results = json.loads((reports[name] / "results.json").read_text())
        assert isinstance(results["score"], int | float)
        assert isinstance(results["execution_time"], int | float)
        assert results["visibility"] in GRADESCOPE_VISIBILITY
        assert results["output_format"] in GRADESCOPE_FORMATS
        for test in results["tests"]:
            assert isinstance(test["name"], str) and test["output"]
            assert 0 <= test.get("score", 0) <= test.get("max_score", 0)
            assert test["status"] in ("passed", "failed")
            assert test["visibility"] in GRADESCOPE_VISIBILITY
        assert results["score"] == sum(test.get("score", 0) for test in results["tests"])
        assert numbers_written_as_text({key: value for key, value in results.items()
                                        if key != "output"}) == []
        assert len(results["tests"]) == len(DS07.course_test_names) + 1 + TOTAL + 1
    passing = json.loads((reports["passing"] / "results.json").read_text())
    assert passing["score"] == 40 == sum(test.get("max_score", 0) for test in passing["tests"])
    failed = json.loads((reports["failing"] / "results.json").read_text())
    assert failed["score"] == 0
    failing = {test["name"]: test for test in failed["tests"]}
    assert failing["course test test_locks_pin_the_path"]["status"] == "failed"
    assert "missing: test_insert_hands_back" in failing["the six required test names"]["output"]
    assert failing["mutant s11: Leaving locked leaves on the list"]["status"] == "failed"
    assert failing["verdict of ol check"]["output"].startswith("NOT PASSED")


@pytest.mark.parametrize(("passed", "kills", "scoring", "earned"), [
    (True, 13, "pass", 40), (True, 18, "pass", 40), (False, 17, "pass", 0),
    (True, 13, "rate", 30), (True, 14, "rate", 32), (True, 17, "rate", 38),
    (True, 18, "rate", 40), (False, 18, "rate", 0)])
def test_a_pass_earns_full_marks_by_default_and_the_rate_scheme_pays_kills_beyond_the_bar(
        passed, kills, scoring, earned):
    assert score_module.points(passed, kills, 18, PERCENT, scoring) == earned


def test_the_rate_scheme_never_falls_below_the_pass_mark_nor_passes_the_full_marks():
    for total in range(1, 30):
        for kills in range(needed(total, PERCENT), total + 1):
            assert 30 <= score_module.points(True, kills, total, PERCENT, "rate") <= 40


def test_student_reports_never_show_the_reference_or_a_diff(checked, reports):
    folder = reports["failing"]
    assert sorted(path.name for path in folder.iterdir()) == [
        "junit.xml", "mutation.html", "results.json"]
    for path in folder.iterdir():
        text = path.read_text()
        assert REFERENCE_LINE not in text and "\n@@ -" not in text and "+++ " not in text
    page = (folder / "mutation.html").read_text()
    assert "Staff only" not in page and "hint" in page.lower()


def test_the_student_page_names_the_submission_its_course_failures_and_invalid_tests(
        checked, reports):
    page = (reports["failing"] / "mutation.html").read_text()
    assert "<h1>failing: NOT PASSED</h1>" in page
    assert "<td class='FAIL'>FAIL</td><td>test_locks_pin_the_path</td><td>assert" in page
    assert "Invalid: your tests that fail on a correct tree" in page
    invalid = checked["failing"][1]  # the terminal names the same invalid tests
    assert "the second correct tree" in page and "the submission's tests" not in page
    assert "invalid" in invalid.lower()


def test_the_staff_page_speaks_of_the_submission_and_links_each_mutant_to_its_coloured_diff(
        checked, reports):
    page = (reports["passing"] / "mutation.html").read_text()
    assert "<h1>passing: PASSED</h1>" in page
    assert "the submission's tests against the planted mutants" in page
    assert "your tests" not in page
    for id in [mutant.id for mutant in catalog.load_catalog(DS07)]:
        assert f"<a href='#diff-{id}'>{id}</a>" in page and f"<h3 id='diff-{id}'>" in page
    assert "<span class='add'>+" in page and "<span class='del'>-" in page


def test_junit_xml_lists_every_course_test_and_its_failure(checked, reports):
    suite = ElementTree.parse(reports["failing"] / "junit.xml").getroot()
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == list(DS07.course_test_names)
    assert cases["test_locks_pin_the_path"].find("failure") is not None
    assert cases["test_hand_example_split_and_match"].find("failure") is None
    assert int(suite.get("failures")) == sum(
        case.find("failure") is not None for case in cases.values())


def test_report_refuses_a_folder_that_already_holds_reports(tmp_path):
    (tmp_path / "results.json").write_text("{}")
    err = bad_input("check", "ds.07", "--workspace", PASSING, "--report", tmp_path)
    assert "already holds results.json" in err and "never overwrites" in err
    assert (tmp_path / "results.json").read_text() == "{}"


@pytest.mark.slow
def test_ol_grade_grades_each_submission_and_a_broken_one_does_not_stop_the_batch(tmp_path):
    good = tmp_path / "class" / "alice"
    shutil.copytree(PASSING, good, symlinks=False)
    broken = tmp_path / "class" / "bob"
    shutil.copytree(PASSING, broken, symlinks=False)
    (broken / "tl_ds" / "radix.py").write_text("class RadixTree(:\n")
    empty = tmp_path / "class" / "carol"
    (empty / "tl_ds").mkdir(parents=True)
    out = tmp_path / "grades"
    code, text, err = ol_run("grade", "ds.07", good, broken, empty, "--out", out)
    assert code == ol.ExitCode.PASSED, text + err
    assert "3 submissions in" in text and "1 passed, 0 not passed, 2 error" in text
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert [row["submission"] for row in rows] == ["alice", "bob", "carol"]
    assert [row["verdict"] for row in rows] == ["passed", "error", "error"]
    assert rows[0]["course_tests_passed"] == "11" and rows[1]["course_tests_passed"] == ""
    assert rows[0]["mutants_killed"] == str(TOTAL) and rows[0]["kill_rate"] == "1.0"
    assert "does not import" in rows[1]["note"] and "missing" in rows[2]["note"]
    alice = json.loads((out / "summary.json").read_text())["submissions"][0]
    assert alice["s11"] == "killed"
    assert alice["files"] == {  # what was graded, as read at the start of alice's check
        name: hashlib.sha256((good / name).read_bytes()).hexdigest()
        for name in ("tl_ds/radix.py", "tests/test_ds07_radix.py")}
    assert (out / "alice" / "reports" / "results.json").exists()
    assert "not graded" in (out / "bob" / "check.txt").read_text()


NUMBER_AS_TEXT = re.compile(r"-?\d+(\.\d+)?( ?%| of \d+| s)?")


LABELS = {"number", "schemaVersion"}  # strings by their formats' definitions ("1.1", "2")


def numbers_written_as_text(data, where: str = "") -> list[str]:
    """Where ``data`` (parsed JSON) holds a count, a share or a time as a string."""
    if isinstance(data, dict):
        return [found for key, value in data.items() if key not in LABELS
                for found in numbers_written_as_text(value, f"{where}.{key}")]
    if isinstance(data, list):
        return [found for number, value in enumerate(data)
                for found in numbers_written_as_text(value, f"{where}[{number}]")]
    return [f"{where} = {data!r}"] if isinstance(data, str) and NUMBER_AS_TEXT.fullmatch(
        data.strip()) else []


SUBMISSION_TYPES = {"submission": str, "verdict": str, "course_tests_passed": (int, NoneType),
                    "mutants_killed": (int, NoneType), "kill_rate": (float, int, NoneType),
                    "s11": str, "invalid_tests": list, "seconds": (float, int), "note": str,
                    "graded": bool, "killed": list, "course_failed": list, "refusal": str,
                    "files": dict}


def test_summary_json_holds_counts_shares_and_times_as_json_numbers(tmp_path):
    mutants = catalog.load_catalog(DS07)
    rows = [batch.Row("alice", "passed", 11, 15, 0.8333, "killed", (), 61.5, "PASSED",
                      graded=True, killed=tuple(mutant.id for mutant in mutants[:15])),
            batch.Row("bob", "not passed", 9, 4, 0.2222, "survived", ("test_x",), 40.0,
                      "NOT PASSED", graded=False, refusal="invalid tests: test_x"),
            batch.Row("carol", "error", None, None, None, "", (), 0.4, "missing",
                      refusal="missing")]
    batch.write_summary(tmp_path, rows, DS07)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert numbers_written_as_text(summary) == []
    for row in summary["submissions"]:
        assert set(row) == set(SUBMISSION_TYPES)
        for key, kind in SUBMISSION_TYPES.items():
            assert isinstance(row[key], kind), (key, row[key])
    aggregates = summary["class"]
    assert isinstance(aggregates["submissions"], int)
    assert all(isinstance(entry["share"], float | int) for entry in aggregates["mutants"])
    cells = list(csv.DictReader((tmp_path / "summary.csv").open()))
    assert [cell["course_tests_passed"] for cell in cells] == ["11", "9", ""]
    assert cells[1]["invalid_tests"] == "test_x"


def from_reports(out: Path, names: list[str]) -> dict:
    """What the class's aggregates must say, read off each submission's own results.json."""
    graded, killed, trees, failed = 0, Counter(), 0, Counter()
    for name in names:
        report = out / name / "reports" / "results.json"
        if not report.exists():
            continue  # not graded at all: no tree ran
        tests = json.loads(report.read_text())["tests"]
        trees += 1
        failed.update(test["name"].removeprefix("course test ") for test in tests
                      if test["tags"] == ["course"] and test["status"] == "failed")
        mutants = [test for test in tests if test["tags"] == ["mutants"]]
        if mutants and not mutants[0]["output"].startswith("not graded"):
            graded += 1
            killed.update(test["name"].split(":")[0].removeprefix("mutant ")
                          for test in mutants if test["status"] == "passed")
    return {"graded": graded, "killed": killed, "trees": trees, "failed": failed}


@pytest.mark.slow
def test_the_class_summary_agrees_with_the_submissions_own_reports(tmp_path):
    names = ["alice", "dave", "erin"]
    for name, example in zip(names, (PASSING, DS07.examples / "failing", PASSING), strict=True):
        shutil.copytree(example, tmp_path / "class" / name, symlinks=False)
    (tmp_path / "class" / "erin" / "tests" / "test_ds07_radix.py").write_text(
        "from tl_ds.radix import RadixTree\n\n"
        "def test_split_by_hand():\n    assert RadixTree(1).is_empty()\n")
    out = tmp_path / "grades"
    code, text, err = ol_run("grade", "ds.07", *(tmp_path / "class" / name for name in names),
                             "--out", out, "--jobs", "2")
    assert code == ol.ExitCode.PASSED, text + err
    summary = json.loads((out / "summary.json").read_text())["class"]
    truth = from_reports(out, names)
    assert summary["submissions"] == 3 and summary["graded_suites"] == truth["graded"] == 2
    for entry in summary["mutants"]:
        assert (entry["killed_by"], entry["suites"]) == (truth["killed"][entry["id"]], 2)
    shares = [entry["share"] for entry in summary["mutants"]]
    assert shares == sorted(shares)  # most missed first
    for entry in summary["course_tests"]:
        assert (entry["failed_by"], entry["trees"]) == (truth["failed"][entry["name"]], 3)
    assert [(entry["submission"], entry["verdict"]) for entry in summary["refused"]] == [
        ("dave", "not passed")]
    assert sum(entry["suites"] for entry in summary["scores"]) == 2
    page = (out / "class.html").read_text()
    assert "1 of 3 submissions passed." in page and "2 not passed, 0 could not be graded" in page
    assert "<a href='dave/reports/mutation.html'>dave</a>" in page
    assert "<script" not in page and "http:" not in page.replace(SVG_NAMESPACE, "")
    for link in re.findall(r"href='([^']+)'", page):
        assert (out / link).is_file(), link


SVG_NAMESPACE = "xmlns='http://www.w3.org/2000/svg'"  # a name, never fetched


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
        batch.Row("dee", "not passed", 11, 18, 1.0, "killed", ("test_x",), 50.0, "",
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


def test_class_html_opens_with_how_many_passed_then_the_pitfalls_missed_most(tmp_path):
    page = class_html(tmp_path)
    order = [page.index(text) for text in (
        "2 of 5 submissions passed.", "The pitfalls the class missed most",
        "How the graded suites' kill rates spread", "The course tests, most failed first",
        "Every submission")]
    assert order == sorted(order)


def test_class_html_sets_the_required_mutant_apart_and_lists_misses_most_first(tmp_path):
    page = class_html(tmp_path)
    box = page[page.index("<div class='required'"):]
    assert box.startswith("<div class='required' id='required'><h3>Required: s11")
    assert "Missed by 1 of 3 graded suites (33%)" in box
    table = page[page.index("suites that miss it"):page.index("How the graded suites")]
    misses = [int(count) for count in re.findall(r"<td class='n'>(\d+) of 3</td>", table)]
    assert len(misses) == TOTAL - 1 and misses == sorted(misses, reverse=True)
    assert "<td>s11</td>" not in table


def test_class_html_bars_show_the_share_their_heading_names(tmp_path):
    page = class_html(tmp_path)
    table = page[page.index("suites that miss it"):page.index("How the graded suites")]
    for count, share, shown in re.findall(
            r"<td class='n'>(\d+) of 3</td><td class='n'>(\d+)%</td><td><span class='track'>"
            r"<span class='bar missed' style='width:([\d.]+)%'", table):
        assert round(float(shown)) == int(share) == round(int(count) * 100 / 3)


def test_class_html_draws_the_kill_rates_with_the_threshold_marked(tmp_path):
    page = class_html(tmp_path)
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert f"threshold: {needed(TOTAL, PERCENT)} of {TOTAL}" in svg and "id='threshold'" in svg
    bars = re.findall(r"<title>(\d+) suites killed (\d+) of", svg)
    assert sum(int(suites) for suites, _ in bars) == 3  # the refused suite is not drawn
    assert "<title>1 suites killed 18 of" in svg and "<title>1 suites killed 13 of" in svg


def test_class_html_counts_nothing_for_a_refused_suite_and_links_only_what_exists(tmp_path):
    page = class_html(tmp_path)
    dee = page[page.rindex("<tr><td><a href='dee/"):].split("</tr>")[0]
    assert "<td class='n refused'>refused</td><td></td>" in dee and "18 of 18" not in dee
    assert "<a href='eve/check.txt'>eve</a>" in page and "eve/reports" not in page
    for link in re.findall(r"href='([^']+)'", page):
        assert (tmp_path / link).is_file(), link
    assert "<script" not in page and "http:" not in page.replace(SVG_NAMESPACE, "")


def test_ol_grade_refuses_an_out_folder_with_files_in_it(tmp_path):
    (tmp_path / "old.csv").write_text("kept")
    err = bad_input("grade", "ds.07", PASSING, "--out", tmp_path)
    assert "not an empty folder" in err
    assert (tmp_path / "old.csv").read_text() == "kept"


# --- ol gradescope-bundle ----------------------------------------------------------------------

def autograder(tmp_path: Path, submission: dict[str, str]) -> dict:
    """Unpack a fresh bundle as Gradescope does, grade ``submission`` (path: text); results."""
    root = tmp_path / "autograder"
    code, out, _ = ol_run("gradescope-bundle", tmp_path / "bundle.zip")
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
    env = {**os.environ, "OL_AUTOGRADER_ROOT": str(root), "OL_PYTHON": sys.executable}
    subprocess.run([root / "source" / "run_autograder"], env=env, timeout=600, check=True)
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.slow
def test_the_gradescope_bundle_grades_a_submission_in_a_folder_of_its_own(tmp_path):
    tests = (PASSING / "tests" / "test_ds07_radix.py").read_text()
    results = autograder(tmp_path, {"my-work/tl_ds/radix.py": TREE,
                                    "my-work/tests/test_ds07_radix.py": tests})
    assert results["score"] == sum(test.get("max_score", 0) for test in results["tests"]) == 40
    assert results["tests"][-1]["output"].startswith("PASSED")


def test_the_gradescope_bundle_writes_results_for_a_submission_it_cannot_grade(tmp_path):
    results = autograder(tmp_path, {"notes.txt": "I ran out of time"})
    assert results["score"] == 0 and results["tests"] == []
    output = results["output"]
    assert output.startswith("Not graded: your submission holds no tl_ds/radix.py and no "
                             "tests/test_ds07_radix.py. Upload your tree, tl_ds/radix.py")
    assert grader_paths(output, tmp_path) == []


@pytest.mark.parametrize("scoring", ["pass", "rate"])
def test_the_gradescope_bundle_grades_with_the_scoring_staff_chose(tmp_path, scoring):
    code, _, _ = ol_run("gradescope-bundle", tmp_path / "bundle.zip", "--scoring", scoring)
    assert code == ol.ExitCode.PASSED
    with zipfile.ZipFile(tmp_path / "bundle.zip") as archive:
        script = archive.read("run_autograder").decode()
    assert f"--scoring {scoring} " in script and "@SCORING@" not in script


def test_the_gradescope_bundle_never_overwrites_a_file(tmp_path):
    (tmp_path / "bundle.zip").write_text("mine")
    assert "never overwrites" in bad_input("gradescope-bundle", tmp_path / "bundle.zip")
    assert (tmp_path / "bundle.zip").read_text() == "mine"


@pytest.mark.slow
def test_course_tests_that_do_not_import_are_the_graders_fault_not_the_students(workspace,
                                                                               monkeypatch,
                                                                               tmp_path):
    from harness.grade import mutation
    from harness.run.layout import Suite
    broken = tmp_path / "test_ds07_radix.py"
    broken.write_text("import tree_wire_that_is_not_installed\n")
    monkeypatch.setattr(mutation, "course_suite",
                        lambda *args, **kwargs: Suite(contract=CONTRACT, files=(broken,), proxy=()))
    for command in ("check", "diff"):
        code, out, err = ol_run(command, "ds.07", "--workspace", workspace)
        assert code == ol.ExitCode.INTERNAL and "Traceback" not in out + err
        assert "fault of ol itself, not of your work" in err
        assert "fault of this installation of ol, not of your tree" in err
        assert "tree_wire_that_is_not_installed" in err


# --- how failures read -----------------------------------------------------------------------

def failed_course_run(text: str, exception: str = "NotImplementedError") -> judge.RunResult:
    records = tuple(judge.TestRecord(f"tests/test_ds07_radix.py::{name}", "passed")
                    for name in DS07.course_test_names[1:])
    broken = judge.TestRecord(f"tests/test_ds07_radix.py::{DS07.course_test_names[0]}", "failed",
                        exception, text)
    return judge.RunResult(judge.Status.OK, (broken, *records))


def test_a_course_failure_names_its_exception_once():
    out = io.StringIO()
    print_course(failed_course_run("E   NotImplementedError: RadixTree.insert\n"), DS07, out)
    said = out.getvalue()
    assert "hand_example_split_and_match failed:\n    NotImplementedError: RadixTree.insert" in said
    assert said.count("NotImplementedError") == 1


def test_a_long_failure_is_cut_on_a_line_boundary_and_says_so():
    text = "E   AssertionError: assert [1] == [2]\n" + "".join(
        f"E     line {number} of the diff\n" for number in range(20))
    out = io.StringIO()
    print_course(failed_course_run(text, "AssertionError"), DS07, out)
    shown = out.getvalue().splitlines()[-6:]
    assert shown[0] == "    AssertionError: assert [1] == [2]"
    assert shown[-2] == "      line 3 of the diff"
    assert shown[-1] == "    [... 16 more lines cut]"


def test_counts_read_in_the_singular_and_the_plural():
    assert counted(1, "required test") == "1 required test"
    assert counted(3, "required test") == "3 required tests"
    assert counted(0, "course test") == "0 course tests"


# --- progress while a check runs -------------------------------------------------------------

def test_piped_progress_is_plain_lines_with_every_stage_counted(checked):
    err = checked["failing"][2]
    assert "\r" not in err and "\033" not in err
    lines = err.splitlines()
    assert sum(" course tests " in line for line in lines) == len(DS07.course_test_names)
    assert any(f"your tests against the mutants {TOTAL} of {TOTAL}: mutant " in line
               for line in lines)
    assert any("the placebo (every method raises) killed" in line for line in lines)
    assert any("the reference again: as before" in line for line in lines)
    assert not any("mutant reference" in line or "mutant placebo" in line for line in lines)


def test_a_terminal_gets_one_status_line_with_the_course_tests_printed_above_it():
    screen = io.StringIO()
    ticks = iter(range(100))
    display = Display(screen, live=True, clock=lambda: float(next(ticks)))
    display(Event(COURSE_STAGE, 1, 11, "hand_example_split_and_match", "pass"))
    display(Event(MUTANT_STAGE, 12, 18, "mutant s07", "killed"))
    display.close()
    said = screen.getvalue()
    assert "\r\033[K  pass  hand_example_split_and_match\n" in said
    assert "  2 s · course tests 1 of 11 · mutants 12 of 18 · mutant s07 killed" in said
    assert said.endswith("\r\033[K")


# --- PrairieLearn -----------------------------------------------------------------------------

def prairielearn(tmp_path: Path, files: dict[str, str]) -> tuple[int, dict]:
    """A /grade folder laid out as PrairieLearn lays it out, graded; (exit code, results)."""
    root = tmp_path / "grade"
    for name, text in files.items():
        (root / "student" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "student" / name).write_text(text)
    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text('{"gradable": true, "score": 1}')  # forged
    code, out, err = ol_run("prairielearn", "ds.07", "--root", root)
    assert "Traceback" not in out + err
    results = (root / "results" / "results.json").read_text()
    assert len(results.encode()) <= 1_000_000
    assert [path.name for path in (root / "results").iterdir()] == ["results.json"]
    return code, json.loads(results)


@pytest.mark.slow
def test_prairielearn_scores_a_passing_submission_one(tmp_path):
    tests = (PASSING / "tests" / "test_ds07_radix.py").read_text()
    code, results = prairielearn(tmp_path, {"radix.py": TREE, "test_ds07_radix.py": tests})
    assert code == ol.ExitCode.PASSED
    assert results["gradable"] is True and results["score"] == 1.0
    assert all(test["points"] == test["max_points"] for test in results["tests"])
    assert results["message"].startswith("PASSED")
    assert grader_paths(platform_texts(results), tmp_path) == []


@pytest.mark.slow
def test_prairielearn_gives_a_fail_zero_with_what_is_missing_and_the_file_cannot_be_forged(
        tmp_path):
    results_path = tmp_path / "grade" / "results" / "results.json"
    failing = DS07.examples / "failing"
    tests = (failing / "tests" / "test_ds07_radix.py").read_text() + textwrap.dedent(f"""

        def test_forges_the_results():
            with open({str(results_path)!r}, "w") as out:
                out.write('{{"gradable": true, "score": 1}}')
        """)
    tree = (DS07.examples / "failing" / "tl_ds" / "radix.py").read_text()
    _, results = prairielearn(tmp_path, {"tl_ds/radix.py": tree,
                                         "tests/test_ds07_radix.py": tests})
    assert results["gradable"] is True and results["score"] == 0
    assert results["message"].startswith("NOT PASSED")
    course = [test for test in results["tests"] if test["name"].startswith("course test")]
    assert len(course) == len(DS07.course_test_names)
    assert any(test["message"] == "failed" for test in course)
    assert results["message"].endswith("then submit again.")
    assert grader_paths(results["output"] + results["message"], tmp_path) == []


def test_prairielearn_says_why_a_submission_cannot_be_graded(tmp_path):
    _, results = prairielearn(tmp_path, {"notes.txt": "I ran out of time"})
    assert results["gradable"] is False and results["score"] == 0
    assert "tl_ds/radix.py" in results["format_errors"][0]
    assert grader_paths(platform_texts(results), tmp_path) == []


# --- what a student reads on a course platform ----------------------------------------------

GRADER_ONLY = ("/autograder", "/grade/", "/tmp/", "ol-runs-", "ol-pl-", "--workspace", "ol diff",
               "ol start", "ol check ds.07 --", "python -c", "send the log")
SYNTAX_ERROR = "from tl_ds.radix import RadixTree\n\ndef test_split_by_hand(:\n    pass\n"
AS_PYTHON_SHOWS_IT = ('  File "tests/test_ds07_radix.py", line 3\n'
                      '    def test_split_by_hand(:\n'
                      '                           ^\n'
                      "SyntaxError: invalid syntax")


def grader_paths(text: str, *roots: Path) -> list[str]:
    """What of the grader's machine, or of a local command line, ``text`` shows."""
    return [found for found in (*GRADER_ONLY, *map(str, roots)) if found in text]


def platform_texts(results: dict) -> str:
    """Every text of a platform's results file a student can read."""
    return "\n".join(str(value) for value in (
        results.get("output"), results.get("message"), *results.get("format_errors", []),
        *(test.get(key, "") for test in results["tests"] for key in ("output", "message"))))


@pytest.fixture(scope="module")
def on_gradescope(tmp_path_factory) -> tuple[Path, dict]:
    """The failing example (course tests fail, one test invalid) graded as the Gradescope
    bundle grades it: ``ol check --report --platform``; (its folder, results.json)."""
    root = tmp_path_factory.mktemp("gradescope")
    shutil.copytree(FAILING, root / "ws")
    code, _, _ = ol_run("check", "ds.07", "--workspace", root / "ws", "--report",
                        root / "report", "--platform")
    assert code == ol.ExitCode.NOT_PASSED
    return root, json.loads((root / "report" / "results.json").read_text())


def test_gradescope_tells_a_failing_invalid_suite_what_to_fix_without_the_graders_paths(
        on_gradescope):
    root, results = on_gradescope
    text = platform_texts(results)
    assert grader_paths(text, root) == []
    assert "1. The course tests against your tree (tl_ds/radix.py):" in results["output"]
    assert "2. Your tests (tests/test_ds07_radix.py) on 3 correct trees:" in results["output"]
    said = results["tests"][-1]["output"]
    assert said.startswith("NOT PASSED: course tests fail; grade refused: your tests are "
                           "invalid") and said.endswith("then submit again.")
    assert "not graded: your tests are invalid" in text


@pytest.mark.slow
def test_gradescope_shows_a_pass_without_a_next_command_or_the_graders_paths(tmp_path):
    tests = (PASSING / "tests" / "test_ds07_radix.py").read_text()
    results = autograder(tmp_path, {"tl_ds/radix.py": TREE, "tests/test_ds07_radix.py": tests})
    assert results["score"] == 40
    assert grader_paths(platform_texts(results), tmp_path) == []
    assert results["tests"][-1]["output"].endswith("s11 among them.")


def test_gradescope_shows_a_syntax_error_as_python_does_and_what_to_do(tmp_path):
    results = autograder(tmp_path, {"tl_ds/radix.py": TREE,
                                    "tests/test_ds07_radix.py": SYNTAX_ERROR})
    output = results["output"]
    assert results["score"] == 0 and AS_PYTHON_SHOWS_IT in output
    assert output.endswith("Fix that line, then submit again.")
    assert grader_paths(output, tmp_path) == []


def test_a_fault_of_ol_on_gradescope_says_so_without_a_log_or_the_graders_paths(
        workspace, monkeypatch, tmp_path):
    def broken(*args, **kwargs):
        raise ZeroDivisionError(f"division by zero in {tmp_path}/harness/x.py")

    monkeypatch.setattr(ol.grading, "check", broken)
    code, out, err = ol_run("check", "ds.07", "--workspace", workspace, "--report",
                            tmp_path / "report", "--platform")
    assert code == ol.ExitCode.INTERNAL and not (tmp_path / "report" / "results.json").exists()
    assert "the grader met a fault of its own (ZeroDivisionError: division by zero in x.py)" in err
    assert grader_paths(out + err, tmp_path) == [] and "Traceback" not in err


def test_prairielearn_shows_a_syntax_error_as_python_does_without_the_graders_paths(tmp_path):
    code, results = prairielearn(tmp_path, {"radix.py": TREE,
                                            "test_ds07_radix.py": SYNTAX_ERROR})
    assert code == ol.ExitCode.PASSED and results["gradable"] is False
    assert AS_PYTHON_SHOWS_IT in results["format_errors"][0]
    assert grader_paths(platform_texts(results), tmp_path) == []


def test_prairielearn_says_a_fault_of_ol_without_a_log_or_the_graders_paths(
        tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError(f"division by zero in {tmp_path}/harness/x.py")

    monkeypatch.setattr(ol.grading, "check", broken)
    root = tmp_path / "grade"
    shutil.copytree(PASSING, root / "student")
    code, out, err = ol_run("prairielearn", "ds.07", "--root", root)
    assert code == ol.ExitCode.INTERNAL and not (root / "results" / "results.json").exists()
    assert "fault of its own" in err and grader_paths(out + err, tmp_path) == []


# --- real browsers: class.html and the submission pages in headless Chromium ----------------

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome"))), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found on PATH "
                                    "(chromium, chromium-browser or google-chrome): install it "
                                    "with `apt-get install -y chromium`, as .ci/run does")
WIDTHS = (390, 1280)  # a phone and a desktop


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """An 8-bit RGB or RGBA PNG without interlace: (width, height, rows of RGB(A) bytes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    position, chunks, header = 8, [], b""
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        header = body if kind == b"IHDR" else header
        chunks += [body] if kind == b"IDAT" else []
        position += 12 + length
    width, height = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big")
    depth, colour, interlace = header[8], header[9], header[12]
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    size = 3 if colour == 2 else 4
    raw, stride, rows = zlib.decompress(b"".join(chunks)), width * size, []
    previous = bytearray(stride)
    for number in range(height):
        start = number * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up),
                           (abs(guess - corner), 2, corner))[2]
                line[i] = (line[i] + near) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, [row if size == 3 else bytes(b for i, b in enumerate(row)
                                                       if i % 4 != 3) for row in rows]


def looks_like_a_page(shot: Path, width: int) -> None:
    """The screenshot is ``width`` wide, not blank (many colours), with dark text at the top."""
    shot_width, height, rows = png_pixels(shot)
    assert shot_width == width, (shot, shot_width)
    colours = {row[i:i + 3] for row in rows[::7] for i in range(0, len(row), 21)}
    assert len(colours) > 8, f"{shot} is blank: {len(colours)} colours"
    top = rows[:min(height, 120)]
    dark = sum(sum(row[i:i + 3]) < 240 for row in top for i in range(0, len(row), 3))
    assert dark > 200, f"{shot} shows no text at the top ({dark} dark pixels)"


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where the screenshots are kept: OL_SCREENSHOTS, else pytest's own kept temporary
    folders (the last three runs)."""
    kept = os.environ.get("OL_SCREENSHOTS")
    folder = Path(kept) if kept else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def rendered(page: Path, shots: Path, name: str) -> str:
    """The DOM headless Chromium builds from ``page``, after keeping a screenshot at each of
    WIDTHS as ``name``-WIDTH.png and checking that each shows a page with text; every link
    of the page is followed (a file that exists, or an element of the page)."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", f"--user-data-dir={shots / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=120).stdout
    assert "</html>" in dom, f"Chromium rendered nothing of {page}"
    for width in WIDTHS:
        shot = shots / f"{name}-{width}.png"
        subprocess.run([CHROMIUM, *flags, f"--window-size={width},1400",
                        f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
        looks_like_a_page(shot, width)
        print(f"screenshot: {shot}")
    for link in re.findall(r'href="([^"]+)"', dom):
        if link.startswith("#"):
            assert f'id="{link[1:]}"' in dom, f"{page.name}: {link} names no element"
        else:
            assert "://" not in link and (page.parent / link).is_file(), f"{page.name}: {link}"
    return dom


@needs_chromium
def test_class_html_shows_its_headline_threshold_and_s11_in_a_browser_at_both_widths(
        tmp_path, shots):
    class_html(tmp_path)
    dom = rendered(tmp_path / "class.html", shots, "class")
    assert "2 of 5 submissions passed." in dom and "Required: s11" in dom
    assert "threshold: 13 of 18" in dom


@needs_chromium
def test_class_html_of_fifty_submissions_renders_every_row_and_aggregate(tmp_path, shots):
    mutants = catalog.load_catalog(DS07)
    rows = [batch.Row(f"student-{number:02d}", "passed" if number % 3 else "not passed",
                      11, number % (len(mutants) + 1), 0.5, "killed", (), 30.0, "",
                      graded=number % 5 != 0,
                      killed=tuple(mutant.id for mutant in mutants[:number % len(mutants)]),
                      course_failed=("test_locks_pin_the_path",) if number % 4 == 0 else (),
                      refusal="" if number % 5 else "invalid tests: test_x")
            for number in range(50)]
    for row in rows:
        (tmp_path / row.submission / "reports").mkdir(parents=True)
        (tmp_path / row.submission / "reports" / "mutation.html").write_text("")
    page = tmp_path / "class.html"
    page.write_text(class_page(class_summary(rows, mutants, DS07), rows, DS07))
    dom = rendered(page, shots, "class-of-fifty")
    assert dom[dom.index("Every submission"):].count("/reports/mutation.html") == 50
    assert "33 of 50 submissions passed." in dom and "The pitfalls the class missed most" in dom


@needs_chromium
def test_the_staff_and_student_pages_render_with_their_headings_and_every_mutant(
        checked, reports, shots):
    staff = rendered(reports["passing"] / "mutation.html", shots, "staff")
    student = rendered(reports["failing"] / "mutation.html", shots, "student")
    for id in [mutant.id for mutant in catalog.load_catalog(DS07)]:
        assert f"<tr id=\"{id}\">" in staff and f"<tr id=\"{id}\">" in student
    assert "<h1>passing: PASSED</h1>" in staff and "Staff only: the reference" in staff
    assert "<h1>failing: NOT PASSED</h1>" in student and "Staff only" not in student


def test_a_blank_screenshot_is_told_apart_from_a_page(tmp_path):
    blank = tmp_path / "blank.png"
    row = b"\x00" + b"\xff\xff\xff" * 390
    header = (390).to_bytes(4, "big") + (200).to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (len(body).to_bytes(4, "big") + kind + body
                + zlib.crc32(kind + body).to_bytes(4, "big"))

    blank.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                      + chunk(b"IDAT", zlib.compress(row * 200)) + chunk(b"IEND", b""))
    assert png_pixels(blank)[:2] == (390, 200)
    with pytest.raises(AssertionError, match="blank"):
        looks_like_a_page(blank, 390)
