"""The student's commands (ol start, tests, tdd, check, diff) and how ol refuses bad input,
called as ``ol.main([...])`` in this process.

Each test reads what a student reads: the exit code and the lines on stdout and stderr.
The slow runs (`ol check` on the two bundled examples) happen once per session (conftest).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import (
    DS07,
    FAILING,
    PASSING,
    PERCENT,
    TOTAL,
    bad_input,
    git_status,
    interrupt,
    ol_run,
    verdict_line,
    write_tests,
)

import ol
from harness.chapter import ROOT
from harness.commands import student as student_commands
from harness.grade.course import meets_threshold, needed
from harness.run.engine import Engine

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


def test_ctrl_c_during_an_ol_called_in_process_stops_the_session_not_just_ol(monkeypatch,
                                                                            capsys):
    def pressed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(student_commands, "show_course_tests", pressed)
    with pytest.raises(KeyboardInterrupt):  # pytest ends the session on it
        ol.main(["tests", "ds.07"])
    assert "ol: interrupted" in capsys.readouterr().err
    monkeypatch.setattr(ol, "PASS_ON_INTERRUPTS", False)  # ol as a command: an exit code
    assert ol.main(["tests", "ds.07"]) == ol.ExitCode.INTERRUPTED


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




def test_a_reader_that_stops_reading_is_no_fault_of_ol():
    # the reader is gone before ol writes a byte, however the two are scheduled
    shell = subprocess.run(f"{{ sleep 1; {sys.executable} ol.py tests ds.07; }} | true; "
                           'echo "exit ${PIPESTATUS[0]}"', shell=True, executable="/bin/bash",
                           capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert shell.stdout.splitlines()[-1] == "exit 141" and "fault" not in shell.stderr
