"""What crosses the boundary as data: every byte a submission controls that ol reads.

A submission can write into every channel a run hands back (the records socket, the import
probe's answer, the tree's coverage file) and can shape every file and name ol reads from
it. None of it may make ol fault (exit 3): each ends in a verdict of the submission's own
(exit 1 or 2), with a reason. The fuzzer in test_fuzz.py throws arbitrary bytes at the
same doors; these are the attacks that made ol fault before, one per door.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from support import DS07, FAILING, RUNS, listen_to_ctrl_c, ol_run

import ol
from harness.errors import OlFault
from harness.grade import grading
from harness.grade.workspace import gather
from harness.run import accounts, cgroups, intake
from harness.run.judge import Status, judge

DEEP = "[" * 200_000
RECORD = ('{"kind": "test", "nodeid": "tests/t.py::test_a", "outcome": "passed", '
          '"exception": null, "text": "", "seconds": 0.5}')


def failing_copy(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(FAILING, root)
    return root


def add_to(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def check(root: Path, *more: str) -> tuple[int, str, str]:
    code, out, err = ol_run("check", "ds.07", "--workspace", root, *more)
    assert code != ol.ExitCode.INTERNAL, err
    assert "Traceback" not in out + err
    return code, out, err


# --- the records a run writes -------------------------------------------------------------

@pytest.mark.parametrize("line", [
    DEEP, "{" * 50 + "}" * 50, RECORD.replace("0.5", "Infinity"),
    RECORD.replace("0.5", "NaN"), RECORD.replace("0.5", "1e999"),
    RECORD.replace('"passed"', '["passed"]'), RECORD.replace("null", "7"),
    '{"kind": "coverage", "executed_lines": [Infinity], "missing_lines": [], '
    '"executed_branches": [], "missing_branches": []}',
    '{"kind": "coverage", "executed_lines": [1e300], "missing_lines": [], '
    '"executed_branches": [], "missing_branches": []}',
    '{"kind": "coverage", "executed_lines": [], "missing_lines": [], '
    '"executed_branches": [[1, 2, 3]], "missing_branches": []}',
    '{"kind": "finish", "exitstatus": ' + "9" * 5000 + ', "plugins": []}',
    '{"kind": "collected", "ids": ["a", 5], "plugins": []}',
    "\ud800", "",
], ids=lambda line: line[:30])
def test_a_record_line_that_is_not_a_record_makes_the_run_a_crash_with_a_reason(line):
    result = judge([line], 0, None, 0.0, "")
    assert result.status is Status.CRASH
    assert result.detail.startswith("the run's records are malformed (its record 1 ")


def test_well_formed_records_still_make_a_run_that_is_judged():
    lines = ['{"kind": "collected", "ids": ["tests/t.py::test_a"], "plugins": []}', RECORD,
             '{"kind": "finish", "exitstatus": 0, "plugins": []}']
    result = judge(lines, 0, ["tests/t.py::test_a"], 1.0, "")
    assert result.status is Status.OK and result.all_passed
    assert result.records[0].seconds == 0.5


def test_deep_json_on_the_records_socket_is_the_runs_crash_never_a_fault_of_ol(tmp_path):
    root = failing_copy(tmp_path)
    add_to(root / "tests" / "test_ds07_radix.py",
           f"\n\ndef test_writes_to_the_records_socket():\n"
           f"    __import__('os').write(3, b'{DEEP}\\n')\n")
    code, out, _ = ol_run("tdd", "red", "ds.07", "--workspace", root)
    assert code == ol.ExitCode.NOT_PASSED
    assert "records are malformed" in out and "nests deeper than" in out


# --- the import probe's answer ------------------------------------------------------------

def test_deep_json_on_the_probes_channel_at_import_is_the_trees_failure(tmp_path):
    root = failing_copy(tmp_path)
    add_to(root / "tl_ds" / "radix.py", f"\n\n__import__('os').write(3, b'{DEEP}\\n')\n")
    code, _, err = check(root)
    assert code == ol.ExitCode.BAD_INPUT
    assert "writes into the grader's channel" in err


def test_an_answer_of_the_probe_that_is_not_one_is_never_an_import():
    for lines in ([DEEP], ['{"ok": true, "error": ""}', '{"ok": true, "error": ""}'],
                  ['{"ok": 1, "error": ""}'], ['{"ok": true}'], ['[true]'], ['{"ok": NaN}']):
        assert intake.probe_answer(lines, 0) == "importing it writes into the grader's channel"
    assert intake.probe_answer([], 0).startswith("importing it ends the interpreter")
    assert intake.probe_answer(['{"ok": true, "error": ""}'], 0) is None


def test_a_tree_that_defines_no_root_is_told_so_in_its_own_terms(tmp_path):
    root = failing_copy(tmp_path)
    add_to(root / "tl_ds" / "radix.py", "\n\ndel ROOT\n")
    code, _, err = check(root)
    assert code == ol.ExitCode.BAD_INPUT
    assert "it defines no ROOT" in err and "reinstall" not in err
    assert "python -c" not in err  # importing it by hand would show nothing wrong


def test_a_tree_whose_import_raises_is_shown_how_to_see_the_whole_error(tmp_path):
    root = failing_copy(tmp_path)
    add_to(root / "tl_ds" / "radix.py", "\n\nraise RuntimeError('half-written')\n")
    code, _, err = check(root)
    assert code == ol.ExitCode.BAD_INPUT
    assert "RuntimeError: half-written" in err and "python -c 'import tl_ds.radix'" in err


def test_a_tree_whose_root_cannot_cross_to_the_tests_is_told_so(tmp_path):
    root = failing_copy(tmp_path)
    add_to(root / "tl_ds" / "radix.py", "\n\nROOT = object()\n")
    code, _, err = check(root)
    assert code == ol.ExitCode.BAD_INPUT
    assert "its ROOT (of type object) cannot cross to the tests" in err


@pytest.mark.slow
def test_a_tree_that_breaks_the_course_tests_import_after_the_probe_fails_them_all(tmp_path):
    """The probe is fooled (the tree tells it apart by its stack), the course tests are not:
    their collection error is the tree's, since they import and pass on the reference."""
    root = failing_copy(tmp_path)
    radix = root / "tl_ds" / "radix.py"
    radix.write_text(radix.read_text(encoding="utf-8").replace("\nROOT", "\n_ROOT")
                     + "\n\ndef __getattr__(name):\n    import traceback\n"
                     "    if name == 'ROOT' and any(frame.name == 'probe' for frame in\n"
                     "                              traceback.extract_stack()):\n"
                     "        return _ROOT\n    raise AttributeError(name)\n", encoding="utf-8")
    code, out, _ = check(root)
    assert code == ol.ExitCode.NOT_PASSED
    assert out.count("collection error") >= len(DS07.course_test_names)


# --- the coverage file a tree side writes ---------------------------------------------------

@pytest.mark.parametrize("content", [
    DEEP.encode(), b'{"executed_lines": [Infinity], "missing_lines": [], '
    b'"executed_branches": [], "missing_branches": []}', b"\xff\xfe" * 100, b"{}", b"",
    b'{"executed_lines": "1", "missing_lines": [], "executed_branches": [], '
    b'"missing_branches": []}'])
def test_a_coverage_file_that_is_not_coverage_measures_nothing_and_says_why(tmp_path, content):
    path = tmp_path / "coverage.json"
    path.write_bytes(content)
    measured = intake.coverage_file(path)
    assert measured.error.startswith("the tree's coverage ") and not measured.statements


def test_a_coverage_file_past_its_cap_is_refused_without_being_read_whole(tmp_path):
    path = tmp_path / "coverage.json"
    with open(path, "wb") as out:
        out.truncate(256 << 20)  # the file-size cap of a run: sparse, so the test is cheap
    assert intake.coverage_file(path).error == "the tree's coverage is larger than 8 MiB"


def test_a_coverage_file_that_is_a_pipe_or_a_link_is_never_opened_as_one(tmp_path):
    fifo, link = tmp_path / "fifo.json", tmp_path / "link.json"
    os.mkfifo(fifo)  # opened as a file, it would block ol until a writer came
    link.symlink_to("/etc/passwd")
    assert intake.coverage_file(fifo).error == "the tree's coverage is not a file"
    assert intake.coverage_file(link).error == "the tree's coverage was not written"


@pytest.mark.slow
def test_a_tree_that_writes_deep_json_as_its_coverage_is_graded_on_without_it(tmp_path):
    root = failing_copy(tmp_path)
    add_to(root / "tl_ds" / "radix.py",
           "\n\nimport json as _json\n_json.dump = lambda obj, fp, *a, **k: "
           f"fp.write('{DEEP[:1000]}' * 200)\n")
    code, out, _ = check(root)
    assert code == ol.ExitCode.NOT_PASSED
    assert "not measured: the tree's coverage is damaged" in out


def test_infinity_in_a_coverage_record_of_the_students_tests_is_their_runs_crash(tmp_path):
    root = failing_copy(tmp_path)
    add_to(root / "tests" / "test_ds07_radix.py",
           "\n\ndef test_writes_coverage():\n    __import__('os').write(3, b'"
           '{"kind": "coverage", "executed_lines": [Infinity], "missing_lines": [], '
           '"executed_branches": [], "missing_branches": []}' "\\n')\n")
    code, out, _ = ol_run("tdd", "red", "ds.07", "--workspace", root)
    assert code == ol.ExitCode.NOT_PASSED and "records are malformed" in out


# --- the worker's messages and the test file itself --------------------------------------

def test_a_worker_message_that_is_not_one_is_read_as_a_lost_worker():
    for data in (DEEP.encode(), b"\xff", b"[]", b'{"id": "7", "exit": 0}',
                 b'{"id": 7, "exit": 1e999}', b'{"id": 7}', b""):
        assert intake.worker_message(data) is None
    assert intake.worker_message(b'{"id": 7, "exit": 1}') == intake.WorkerSaid(7, exit=1)


def test_a_test_file_too_deep_for_the_compiler_is_bad_input_not_a_fault(tmp_path):
    root = failing_copy(tmp_path)
    add_to(root / "tests" / "test_ds07_radix.py", "\nX = " + "+".join(["1"] * 100_000) + "\n")
    code, _, err = check(root)
    assert code == ol.ExitCode.BAD_INPUT
    assert "nests too deeply for Python's compiler" in err



def test_course_tests_that_do_not_import_on_the_reference_either_are_a_fault_of_ol(tmp_path):
    """The other side of laying a collection error at the tree's door: when the course tests
    are what is broken (an installation of ol missing a module), no tree is blamed."""
    course = tmp_path / "course"
    shutil.copytree(DS07.course_tests, course)
    add_to(course / DS07.course_machine.name, "\nimport a_module_this_installation_lacks\n")
    broken = dataclasses.replace(
        DS07, course_tests=course, course_test_file=course / DS07.course_test_file.name,
        course_machine=course / DS07.course_machine.name,
        course_views=course / DS07.course_views.name)
    with pytest.raises(OlFault, match="a fault of this installation of ol, not of your tree"):
        grading.course_run(RUNS, DS07.reference_source(), broken)


# --- lifetimes: nothing of a run outlives the ol that made it -----------------------------

LEASED = range(accounts.FIRST_UID, accounts.FIRST_UID + accounts.UIDS)


def uids_with_processes() -> set[int]:
    """The host uids among the leased range that own a process now (zombies included)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                uid = os.stat(f"/proc/{entry}").st_uid
                if uid in LEASED:
                    found.add(uid)
    return found


def groups_of(pid: int) -> list[str]:
    """The control groups ol process ``pid`` made (named ol-<pid>-...), in every hierarchy."""
    found = []
    for mount in Path("/proc/self/mounts").read_text().splitlines():
        kind, point = mount.split()[2], mount.split()[1]
        if kind in ("cgroup", "cgroup2"):
            found += [folder for folder, _, _ in os.walk(point)
                      if f"/{cgroups.PREFIX}{pid}-" in folder]
    return found


def left_behind(pid: int, scratch: Path, before: set[int]) -> list[str]:
    said = []
    if uids_with_processes() - before:
        said.append(f"processes of leased uids {sorted(uids_with_processes() - before)}")
    said += [f"the control group {group}" for group in groups_of(pid)]
    said += [f"the folder {path}" for path in scratch.iterdir()]
    return said


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_nothing_of_a_check_outlives_ol_whenever_a_signal_ends_it(tmp_path, stop):
    """`ol check` stopped at 20 moments drawn from a fixed seed, from its first moments to
    past its end: within a few seconds no process of the uid it leased, no control group it
    made and no run folder is left, whether ol cleaned up (SIGINT, SIGTERM) or was killed
    outright (SIGKILL: its janitor does it)."""
    moments = random.Random(stop).sample([step / 20 for step in range(1, 80)], 20)
    before = uids_with_processes()
    for number, moment in enumerate(sorted(moments)):
        scratch = tmp_path / f"moment-{number}"
        scratch.mkdir()
        process = subprocess.Popen(
            [sys.executable, str(Path(ol.__file__)), "check", "ds.07", "--workspace",
             str(FAILING)], env={**os.environ, "TMPDIR": str(scratch), "OL_CACHE": "off"},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            preexec_fn=listen_to_ctrl_c)
        time.sleep(moment)
        process.send_signal(getattr(signal, stop))
        _, err = process.communicate(timeout=120)
        assert "Traceback" not in err or (stop == "SIGINT" and moment < 1), err
        deadline = time.monotonic() + 10
        while left_behind(process.pid, scratch, before) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left_behind(process.pid, scratch, before) == [], (moment, process.returncode)


# --- names and files of a submission ------------------------------------------------------

def test_a_hard_linked_radix_py_is_refused_without_showing_a_line_of_it(tmp_path):
    root = failing_copy(tmp_path)
    secret = tmp_path / "secret.py"
    secret.write_text("SECRET_FIRST_LINE = (\n")
    (root / "tl_ds" / "radix.py").unlink()
    os.link(secret, root / "tl_ds" / "radix.py")
    code, out, err = ol_run("check", "ds.07", "--workspace", root)
    assert code == ol.ExitCode.BAD_INPUT
    assert "is a hard link (one of 2 names of one file)" in err
    assert "SECRET_FIRST_LINE" not in out + err


@pytest.mark.parametrize("kind", ["a folder", "a named pipe"])
def test_a_path_that_is_no_file_is_called_what_it_is_never_missing(tmp_path, kind):
    root = failing_copy(tmp_path)
    for path in (root / "tl_ds" / "radix.py", root / "tests" / "test_ds07_radix.py"):
        path.unlink()
        path.mkdir() if kind == "a folder" else os.mkfifo(path)
        code, _, err = ol_run("check", "ds.07", "--workspace", root)
        assert code == ol.ExitCode.BAD_INPUT
        assert f"{path} is {kind}, not a file" in err and "missing" not in err
        assert "writes the stub where nothing is" in err
        path.rmdir() if kind == "a folder" else path.unlink()
        shutil.copy(FAILING / path.relative_to(root), path)


def autograder(tmp_path: Path, make) -> dict:
    """A Gradescope autograder folder with a fresh bundle, a submission ``make(folder)``
    lays out, graded by the bundle's run_autograder; its results."""
    root = tmp_path / "autograder"
    assert ol_run("gradescope-bundle", "ds.07", tmp_path / "bundle.zip")[0] == ol.ExitCode.PASSED
    with zipfile.ZipFile(tmp_path / "bundle.zip") as archive:
        archive.extractall(root / "source")
    (root / "source" / "run_autograder").chmod(0o755)
    (root / "submission").mkdir()
    make(root / "submission")
    subprocess.run([root / "source" / "run_autograder"], timeout=600, check=True,
                   env={**os.environ, "OL_AUTOGRADER_ROOT": str(root),
                        "OL_PYTHON": sys.executable})
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.slow
def test_a_folder_name_with_a_newline_cannot_make_gradescope_grade_a_file_of_the_graders(
        tmp_path):
    """A submission once named the grader's reference as the student's tree with newlines
    in a folder name (run_autograder parsed `find | sort | head`), and a stub scored 40 of
    40. The files are found in Python now, and such a name is refused, not parsed."""
    reference = tmp_path / "autograder" / "source" / "ol" / "impl"

    def make(folder: Path) -> None:
        forged = folder / f"a\n{reference}\n"
        (forged / "tl_ds").mkdir(parents=True)
        (forged / "tl_ds" / "radix.py").write_text((DS07.stub).read_text())
        (forged / "tests").mkdir()
        shutil.copy(FAILING / "tests" / "test_ds07_radix.py", forged / "tests")

    results = autograder(tmp_path, make)
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith("Not graded: your submission holds a file or folder "
                                        "whose name is not printable text ('a\\n")


@pytest.mark.slow
@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_gradescope_refuses_a_tree_that_is_a_link_of_either_kind(tmp_path, link):
    def make(folder: Path) -> None:
        (folder / "tl_ds").mkdir()
        shutil.copy(FAILING / "tests" / "test_ds07_radix.py", folder)
        target = tmp_path / "theirs.py"
        shutil.copy(FAILING / "tl_ds" / "radix.py", target)
        (os.symlink if link == "symbolic" else os.link)(target, folder / "tl_ds" / "radix.py")

    results = autograder(tmp_path, make)
    assert results["score"] == 0 and results["tests"] == []
    assert f"tl_ds/radix.py is a {link} link" in results["output"]


def test_a_submission_nested_deeper_than_python_recurses_is_read_without_recursion(tmp_path):
    upload = deep = tmp_path / "upload"
    upload.mkdir()
    levels = [upload]
    for _ in range(1_200):  # os.walk would recurse once per level
        levels.append(levels[-1] / "d")
        levels[-1].mkdir()
    deep = levels[-1]
    shutil.copy(FAILING / "tl_ds" / "radix.py", deep / "radix.py")
    shutil.copy(FAILING / "tests" / "test_ds07_radix.py", deep / "test_ds07_radix.py")
    try:
        workspace = gather(upload, tmp_path / "ws", DS07)
        assert workspace.radix.read_text() == (FAILING / "tl_ds" / "radix.py").read_text()
    finally:  # pytest's own clean-up recurses once per level too
        for path in deep.iterdir():
            path.unlink()
        for level in reversed(levels):
            level.rmdir()
