"""Submissions that try to trick the grader, each with the verdict it must get.

Every trick is a purpose-made submission: a tree for the course tests, or a test file for
the mutation grade. Each gets the verdict of the same submission without the trick, none
may stop the grader or print a traceback of ol's, and none leaves anything behind: no
process, no file outside its run, nothing in the checkout. What holds them is the
sandbox (harness/run/), not the static scan, which is a lint.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest
from support import (
    DS07,
    REFERENCE,
    RUNS,
    SECOND_TREE,
    WEAK_TESTS,
    git_status,
    grade,
    killed,
    student_workspace,
)

import ol
from harness.chapter import ROOT
from harness.grade import grading
from harness.grade.scan import scan
from harness.run import layout
from harness.run.judge import RunResult, Status, judge
from harness.run.process import OUTPUT_LIMIT

MODULES = (DS07.module,)  # what a test of ds.07 may import of students' code

PASSING_TESTS = (Path(__file__).parent.parent / "examples" / "passing" / "tests"
                 / "test_ds07_radix.py").read_text(encoding="utf-8")
BROKEN = "\n\nRadixTree.lock = lambda self, id: None  # locks nothing: a broken tree\n"
SANDBOXED = RUNS.sandbox.mode == "bwrap"
needs_sandbox = pytest.mark.sandboxed("bwrap")

# What a trick does with the text it manages to read: fail (so kill) on any tree whose
# source is neither correct tree, once it has seen a tree's source at all.
RECOGNISE = f"""
import hashlib as _hashlib

_CORRECT = {{{hashlib.sha256(REFERENCE.encode()).hexdigest()!r},
             {hashlib.sha256(SECOND_TREE.encode()).hexdigest()!r}}}


def _judge(texts):
    for text in texts:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if "def _re" + "list" in text or "_TOKEN" + "_BYTES" in text:  # the reference's lines
            assert _hashlib.sha256(text.encode()).hexdigest() in _CORRECT, "a mutant"
"""

# Independent ways for a test to read the module under test: its source, its file, its
# bytecode, and whatever the process or the file system shows of it.
READERS = {
    "inspect_getsource": """
        import inspect
        import tl_ds.radix
        _judge([inspect.getsource(tl_ds.radix), inspect.getsource(tl_ds.radix.RadixTree)])
        """,
    "open_the_module_file": """
        import tl_ds.radix
        with open(tl_ds.radix.__file__, "rb") as source:
            _judge([source.read()])
        """,
    "the_loader": """
        import tl_ds.radix
        loader = tl_ds.radix.__loader__
        _judge([loader.get_data(tl_ds.radix.__spec__.origin), loader.get_source("tl_ds.radix")])
        """,
    "bytecode_constants": """
        import marshal, types
        from tl_ds.radix import RadixTree
        def consts(code):
            for const in code.co_consts:
                yield repr(const)
                if isinstance(const, types.CodeType):
                    yield from consts(const)
        codes = [value.__code__ for value in vars(RadixTree).values() if hasattr(value, "__code__")]
        _judge(["".join(text for code in codes for text in consts(code))
                + " ".join(name for code in codes for name in code.co_names),
                *(marshal.dumps(code) for code in codes)])
        """,
    "an_inspect_reached_through_another_module": """
        from dataclasses import inspect as hidden
        import operator, sys
        module = sys.modules["tl_ds.radix"]
        opener = __builtins__["open"] if isinstance(__builtins__, dict) else __builtins__.open
        take = getattr
        code = operator.attrgetter("__code__")(take(module.RadixTree, "insert"))
        _judge([hidden.getsource(module), opener(code.co_filename).read()])
        """,
    "every_module_and_object_in_memory": """
        import gc, sys
        texts = []
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None) or ""
            if path.endswith(".py"):
                try:
                    texts.append(open(path, encoding="utf-8").read())
                except OSError:
                    pass
        texts += [item for item in gc.get_objects() if isinstance(item, str) and len(item) > 500]
        _judge(texts)
        """,
    "the_file_system_and_other_processes": """
        import glob, os
        texts = []
        for pattern in ("/*/radix.py", "/*/*/radix.py", "/*/*/*/radix.py", "/*/*/*/*/radix.py",
                        "/tmp/**/*.py", "/work/**/radix.py", "/root/**/radix.py",
                        "/proc/*/cwd/**/radix.py", "/proc/*/root/*/*/radix.py",
                        "/proc/*/cmdline", "/proc/*/environ"):
            for path in glob.glob(pattern, recursive=True)[:2000]:
                try:
                    with open(path, "rb") as source:
                        texts.append(source.read(1 << 20))
                except OSError:
                    pass
        for path in glob.glob("/proc/*/maps")[:200]:
            texts.append(path)
        _judge(texts)
        """,
    "the_tree_channel": """
        import json, socket
        control = socket.socket(fileno=4)
        control.sendall(b"start\\n")
        _, fds, _, _ = socket.recv_fds(control, 64, 1)
        data = socket.socket(fileno=fds[0])
        said = []
        for request in ({"new": 1}, {"tree": 0, "call": "_check", "args": []},
                        {"tree": 0, "call": "__class__", "args": []},
                        {"tree": 0, "view": "observe", "args": [0]},
                        {"tree": 0, "call": "insert", "args": [[1], [{"__class__": 1}]]}):
            data.sendall((json.dumps(request) + "\\n").encode())
            said.append(data.recv(1 << 16))
        assert b'"ok"' not in said[1] and b'"ok"' not in said[2] and b'"ok"' not in said[3]
        _judge(said)
        """,
}


@pytest.fixture(autouse=True)
def checkout_untouched():
    before = git_status()
    yield
    assert git_status() == before


def course(tree: str, call_limit: float | None = None) -> RunResult:
    return grading.course_run(RUNS, tree, DS07, call_limit=call_limit)


def refused(result: grading.TestsGrade) -> bool:
    return not result.graded


def processes_matching(text: str) -> str:
    return subprocess.run(["pgrep", "-f", text], capture_output=True, text=True).stdout


# --- reading the module under test: every way in reads only the proxy ---------------------

@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("way", sorted(READERS))
def test_a_test_that_reads_the_module_under_test_gets_the_grade_of_the_same_suite_without_it(
        tmp_path, honest, way):
    trick = WEAK_TESTS + RECOGNISE + "\n\ndef test_reads():\n" + textwrap.indent(
        textwrap.dedent(READERS[way]), "    ")
    result = grade(tmp_path, trick)
    assert not result.invalid and not result.problem
    assert killed(result) == killed(honest)
    assert not result.rate_met


@needs_sandbox
def test_the_proxy_offers_exactly_the_contracts_names(tmp_path):
    result = grade(tmp_path, WEAK_TESTS + textwrap.dedent("""

        import tl_ds.radix

        def test_names():
            assert {name for name in dir(tl_ds.radix) if not name.startswith("_")} == {
                "RadixTree", "NodeId", "ROOT"}
            assert {name for name in dir(tl_ds.radix.RadixTree) if not name.startswith("_")} == {
                "granule", "is_empty", "node_count", "key", "values", "parent", "children",
                "child_count", "lock_count", "lru_order", "match_prefix", "insert", "lock",
                "unlock", "evict"}
            assert tl_ds.radix.ROOT == 0 and tl_ds.radix.NodeId is int
        """))
    assert not result.invalid and not result.problem


# --- values cross as plain data -------------------------------------------------------------

@needs_sandbox
def test_values_cross_as_plain_data_and_anything_else_is_refused_with_the_rule(tmp_path):
    result = grade(tmp_path, WEAK_TESTS + textwrap.dedent("""

        def test_plain_values_come_back_as_they_went():
            tree = RadixTree(1)
            values = [None, True, 3, 2.5, "s", b"b", (1, (2,)), [1, [2]], {1: "a", "k": (3,)}]
            tree.insert(list(range(len(values))), values)
            count, path = tree.match_prefix(list(range(len(values))))
            assert [v for node in path for v in tree.values(node)] == values
            stored = tree.values(path[-1])
            assert type(stored[6]) is tuple and type(stored[6][1]) is tuple
            assert type(stored[8]) is dict and set(stored[8]) == {1, "k"}
            freed = []
            assert tree.evict(100, freed.append) == len(values)
            assert freed == values

        def test_other_values_are_refused_naming_the_rule():
            tree = RadixTree(1)
            with pytest.raises(TypeError, match="plain data"):
                tree.insert([1], [object()])
            with pytest.raises(KeyError) as raised:
                tree.key(12345)
            assert raised.value.args == (12345,)
        """))
    assert not result.invalid and not result.problem


# --- the student's tree: it cannot reach the reference ------------------------------------

FIND_THE_REFERENCE = """

import glob as _glob, os as _os, sys as _sys

def _found():
    texts = []
    try:  # the installed grader
        import harness.chapter
        texts.append(harness.chapter.REFERENCE.read_text())
    except Exception:
        pass
    try:
        from importlib import metadata
        for file in metadata.distribution("ol-ds07").files or ():
            texts.append(open(file.locate_file("").joinpath("impl/radix.py")).read())
    except Exception:
        pass
    for pattern in ("/proc/*/cwd/impl/radix.py", "/proc/*/root/*/*/impl/radix.py",
                    "/*/*/impl/radix.py", "/*/*/*/impl/radix.py", "/work/**/impl/radix.py",
                    "/proc/*/cwd/../../impl/radix.py"):
        for path in _glob.glob(pattern, recursive=True)[:50]:
            try:
                texts.append(open(path).read())
            except OSError:
                pass
    for path in _glob.glob("/proc/*/environ") + _glob.glob("/proc/*/cmdline"):
        try:
            for part in open(path, "rb").read().split(b"\\0"):
                folder = part.decode(errors="replace").split("=", 1)[-1]
                candidate = _os.path.join(folder, "impl", "radix.py")
                if _os.path.isfile(candidate):
                    texts.append(open(candidate).read())
        except OSError:
            pass
    return [text for text in texts if "class RadixTree" in text]

for _text in _found()[:1]:
    exec(compile(_text, "reference", "exec"), globals())  # the broken tree is replaced
"""


@pytest.mark.slow
@needs_sandbox
def test_a_tree_that_looks_for_the_reference_finds_nothing_and_still_fails():
    run = course(REFERENCE + BROKEN + FIND_THE_REFERENCE)
    assert run.status is Status.OK
    assert "test_locks_pin_the_path" in [record.name for record in run.failures]


# --- the channels the engine reads: nothing a run writes can forge them --------------------

def test_malformed_records_make_the_run_a_crash_never_an_error_of_ol():
    cases = [["{"], ['{"kind": "test"}'], ['[1, 2]'], ['{"kind": "collected", "ids": 5}'],
             ['{"kind": "test", "nodeid": 1, "outcome": "passed", "exception": null, '
              '"text": "", "seconds": 0}'], ['{"kind": "finish", "exitstatus": "0"}'],
             ['{"kind": "nonsense"}']]
    for lines in cases:
        result = judge(lines, 0, None, 0.0, "")
        assert result.status is Status.CRASH, lines


@pytest.mark.slow
@needs_sandbox
def test_a_test_that_writes_into_every_channel_it_can_open_changes_no_other_run(tmp_path):
    forger = PASSING_TESTS + textwrap.dedent("""

        import glob, json, os

        def test_forges_messages():
            junk = (json.dumps({"id": 1, "exit": 0}) + "\\n").encode()
            for path in glob.glob("/proc/*/fd/*"):
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                    os.write(fd, junk)
                    os.close(fd)
                except OSError:
                    pass
            for fd in range(5, 64):
                try:
                    os.write(fd, junk)
                except OSError:
                    pass
        """)
    hostile = student_workspace(tmp_path / "hostile", forger)
    out = tmp_path / "grades"
    code = ol.main(["grade", "ds.07", str(hostile.root), str(ROOT / "examples" / "passing"),
                    "--jobs", "2", "--out", str(out)])
    assert code == ol.ExitCode.PASSED
    rows = {row["submission"]: row
            for row in json.loads((out / "summary.json").read_text())["submissions"]}
    assert rows["passing"]["verdict"] == "passed"
    assert rows["ws"]["verdict"] in ("passed", "not passed"), rows["ws"]


# --- what a submission leaves: nothing ----------------------------------------------------

@pytest.mark.slow
@needs_sandbox
def test_a_test_that_starts_detached_processes_and_writes_outside_its_run_leaves_nothing(
        tmp_path, honest):
    marker = f"ol-hostile-{os.getpid()}"
    tests = WEAK_TESTS + textwrap.dedent(f"""

        import os, subprocess

        def test_leaves_traces():
            subprocess.Popen(["sleep", "311.5"], start_new_session=True)
            if os.fork() == 0:
                os.setsid()
                os.execvp("sleep", ["sleep", "311.5"])
            for folder in ("/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~"), ".."):
                try:
                    open(os.path.join(folder, {marker!r}), "w").write("x")
                except OSError:
                    pass
        """)
    result = grade(tmp_path, tests)
    assert killed(result) == killed(honest)
    assert processes_matching("sleep 311.5") == ""
    for folder in ("/tmp", "/var/tmp", "/dev/shm", str(Path.home())):
        assert not (Path(folder) / marker).exists()


# --- what reaches a student: no reference text, no file of the workspace's links ----------

REFERENCE_LINES = [line.strip() for line in REFERENCE.splitlines()
                   if "_relist" in line or "_TOKEN_BYTES" in line]


@pytest.mark.slow
def test_an_invalid_test_that_prints_the_tree_shows_no_line_of_the_reference(tmp_path, capsys):
    ws = student_workspace(tmp_path, PASSING_TESTS + textwrap.dedent("""

        import inspect
        import tl_ds.radix

        def test_prints_the_tree():
            print(open(tl_ds.radix.__file__).read())
            assert False, inspect.getsource(tl_ds.radix)
        """))
    code = ol.main(["check", "ds.07", "--workspace", str(ws.root)])
    out, err = capsys.readouterr()
    assert code == ol.ExitCode.NOT_PASSED
    assert "INVALID prints_the_tree" in out
    assert REFERENCE_LINES and not any(line in out + err for line in REFERENCE_LINES)
    assert "Traceback" not in err


def test_a_radix_py_that_is_a_link_is_refused_without_showing_its_target(tmp_path, capsys):
    ws = student_workspace(tmp_path, PASSING_TESTS)
    secret = tmp_path / "secret.py"
    secret.write_text("SECRET_FIRST_LINE = 42\n")
    ws.radix.unlink()
    ws.radix.symlink_to(secret)
    code = ol.main(["check", "ds.07", "--workspace", str(ws.root)])
    out, err = capsys.readouterr()
    assert code == ol.ExitCode.BAD_INPUT
    assert "symbolic link" in err and "SECRET_FIRST_LINE" not in out + err


def test_a_linked_package_folder_or_a_device_is_refused(tmp_path, capsys):
    ws = student_workspace(tmp_path, PASSING_TESTS)
    real = tmp_path / "elsewhere"
    (ws.root / "tl_ds").rename(real)
    (ws.root / "tl_ds").symlink_to(real)
    assert ol.main(["tdd", "green", "ds.07", "--workspace", str(ws.root)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    (ws.root / "tl_ds").unlink()
    (ws.root / "tl_ds").mkdir()
    os.symlink("/dev/zero", ws.root / "tl_ds" / "radix.py")
    assert ol.main(["tdd", "green", "ds.07", "--workspace", str(ws.root)]) == 2


def test_a_workspace_file_past_the_size_cap_is_refused(tmp_path, capsys):
    ws = student_workspace(tmp_path, PASSING_TESTS)
    ws.radix.write_text(REFERENCE + "#" * 1_000_001)
    assert ol.main(["tdd", "green", "ds.07", "--workspace", str(ws.root)]) == 2
    assert "larger than" in capsys.readouterr().err


# --- the Gradescope bundle: results written after the submission is gone -----------------

@pytest.mark.slow
@needs_sandbox
def test_a_detached_process_cannot_rewrite_gradescopes_results(tmp_path):
    root = tmp_path / "autograder"
    results = root / "results" / "results.json"
    rewrite = textwrap.dedent(f"""

        import json as _json, os as _os, time as _time
        if _os.fork() == 0:
            _os.setsid()
            if _os.fork() == 0:
                for _ in range(40):
                    _time.sleep(0.25)
                    try:
                        with open({str(results)!r}, "w") as _out:
                            _json.dump({{"score": 40, "output": "forged"}}, _out)
                    except OSError:
                        pass
            _os._exit(0)
        """)
    (root / "submission" / "tl_ds").mkdir(parents=True)
    (root / "submission" / "tests").mkdir()
    (root / "submission" / "tl_ds" / "radix.py").write_text(REFERENCE + BROKEN + rewrite)
    (root / "submission" / "tests" / "test_ds07_radix.py").write_text(PASSING_TESTS)
    assert ol.main(["gradescope-bundle", "ds.07", str(tmp_path / "b.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "b.zip") as archive:
        archive.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):
        (root / "source" / name).chmod(0o755)
    env = {**os.environ, "OL_AUTOGRADER_ROOT": str(root), "OL_PYTHON": sys.executable}
    subprocess.run([root / "source" / "run_autograder"], env=env, timeout=900, check=True)
    time.sleep(3)
    graded = json.loads(results.read_text())
    assert graded["score"] < 40 and "forged" not in graded["output"]


# --- the course tests: the student's tree --------------------------------------------------

@pytest.mark.slow
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


@pytest.mark.slow
def test_a_package_root_that_patches_pytest_never_runs(tmp_path):
    ws = student_workspace(tmp_path, PASSING_TESTS, tree=REFERENCE + BROKEN)
    (ws.package / "__init__.py").write_text(
        "import _pytest.runner\n_pytest.runner.call_and_report = lambda *a, **k: None\n")
    run = course(grading.tree_source(RUNS, ws.snapshot(tree=True, tests=False)))
    assert run.status is Status.OK and not run.all_passed


def test_a_tree_that_ends_the_interpreter_at_import_fails_every_course_test():
    run = course("import os\nos._exit(0)\n")
    assert run.status is not Status.OK or len(run.failures) == len(run.records)


def test_a_tree_that_ends_its_process_in_a_call_fails_the_tests_that_call_it():
    run = course(REFERENCE + "\n\nRadixTree.evict = lambda self, n, f: __import__('os')._exit(0)\n")
    assert run.status is Status.OK
    assert "test_lru_order_follows_last_use" in [record.name for record in run.failures]
    assert "TreeStopped" in {record.exception for record in run.failures}


@pytest.mark.slow
def test_a_tree_that_loops_forever_fails_at_its_call_limit():
    run = course(REFERENCE + "\n\ndef _spin(self, n, f):\n    while True:\n        pass\n"
                 "RadixTree.evict = _spin\n", call_limit=1.0)
    assert run.status is Status.OK
    failed = {record.name: record for record in run.failures}
    assert "test_lru_order_follows_last_use" in failed
    assert "did not answer within 1 s" in failed["test_lru_order_follows_last_use"].text
    assert "test_granule_matches_whole_runs_only" not in failed


@pytest.mark.slow
def test_a_tree_that_allocates_without_end_fails_at_the_memory_limit(monkeypatch):
    monkeypatch.setitem(layout.LIMITS, "memory", 1 << 30)
    run = course(REFERENCE + "\n\ndef _grow(self, n, f):\n    hoard = []\n    while True:\n"
                 "        hoard.append(bytearray(1 << 28))\nRadixTree.evict = _grow\n")
    assert run.status is Status.OK
    failed = {record.name: record for record in run.failures}
    assert "test_lru_order_follows_last_use" in failed
    assert failed["test_lru_order_follows_last_use"].exception == "MemoryError"


@pytest.mark.slow
def test_a_tree_that_prints_megabytes_is_judged_on_its_answers_and_its_output_is_cut():
    run = course(REFERENCE + "\n\n_insert = RadixTree.insert\n"
                 "def _loud(self, key, values):\n    print('x' * 100_000)\n"
                 "    return _insert(self, key, values)\nRadixTree.insert = _loud\n")
    assert run.all_passed
    assert len(run.output) <= OUTPUT_LIMIT


@pytest.mark.slow
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
    assert [flag.line for flag in scan(tests, MODULES)] == [1]
    assert refused(grade(tmp_path, tests))


def test_os_exit_in_a_test_gets_no_grade(tmp_path):
    result = grade(tmp_path, PASSING_TESTS + "\n\ndef test_leaves():\n"
                   "    __import__('os')._exit(0)\n")
    assert refused(result) and "did not finish (crash)" in result.problem


def test_pytest_exit_with_return_code_zero_gets_no_grade(tmp_path):
    result = grade(tmp_path, PASSING_TESTS + "\n\ndef test_leaves():\n"
                   "    pytest.exit('done', returncode=0)\n")
    assert refused(result) and "crash" in result.problem
    flags = scan(PASSING_TESTS + "pytest.exit()\n", MODULES)
    assert "pytest.exit" in " ".join(map(str, flags))


@pytest.mark.slow
def test_sys_exit_in_a_test_makes_it_invalid(tmp_path):
    result = grade(tmp_path, PASSING_TESTS + "\n\ndef test_leaves():\n"
                   "    raise SystemExit(0)\n")
    assert refused(result)
    assert "leaves" in {entry.name.removeprefix("test_") for entry in result.invalid} or \
        result.problem


@pytest.mark.slow
def test_a_conftest_that_turns_failures_into_passes_is_never_loaded(tmp_path):
    ws = student_workspace(tmp_path,
                           PASSING_TESTS + "\n\ndef test_always_fails():\n    assert False\n")
    (ws.root / "tests" / "conftest.py").write_text(textwrap.dedent("""
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            outcome.get_result().outcome = "passed"
        """))
    submission = ws.snapshot(tree=True, tests=True)
    result = grading.grade_tests(RUNS, ws, submission.suite(), grading.correct_trees(DS07),
                                 grading.tree_source(RUNS, submission), workers=2,
                                 progress=None)
    assert refused(result)
    assert "test_always_fails" in {entry.name for entry in result.invalid}


def test_pytest_plugins_that_turn_failures_into_passes_are_flagged_and_refused(tmp_path):
    tests = PASSING_TESTS + "\n\npytest_plugins = ['helper']\n"
    assert any("pytest_plugins" in str(flag) for flag in scan(tests, MODULES))
    assert refused(grade(tmp_path, tests))


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_suite_that_hashes_the_implementation_source_is_flagged_and_invalid(tmp_path):
    digest = hashlib.sha256(REFERENCE.encode()).hexdigest()
    tests = PASSING_TESTS + textwrap.dedent(f"""

        import hashlib, inspect
        import tl_ds.radix

        def test_is_the_reference():
            source = inspect.getsource(tl_ds.radix)
            assert hashlib.sha256(source.encode()).hexdigest() == {digest!r}
        """)
    assert any("inspect" in str(flag) for flag in scan(tests, MODULES))
    result = grade(tmp_path, tests)
    assert refused(result)
    assert {(entry.name, entry.where) for entry in result.invalid} == {
        ("test_is_the_reference", "the reference"),
        ("test_is_the_reference", "the second correct tree"),
        ("test_is_the_reference", "the third correct tree")}


@pytest.mark.slow
def test_a_test_that_deletes_files_in_its_working_directory_harms_only_its_own_run(tmp_path):
    tests = PASSING_TESTS + textwrap.dedent("""

        import shutil
        def test_wipes():
            for path in __import__("pathlib").Path("..").iterdir():
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()
        """)
    assert any("shutil" in str(flag) for flag in scan(tests, MODULES))
    assert refused(grade(tmp_path, tests))
