"""The sandbox every run of submission code gets: what a run can see, and what ol says of it.

The bubblewrap tests skip, with the reason, where bubblewrap cannot start (no user
namespaces); the uid sandbox is tested where ol runs as root and the sandbox user can read
the interpreter, as in a grading container.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest
from support import CONTRACT, DS07, RUNS, WRITABLE, worker_function

import ol
from harness.chapter import ROOT
from harness.run import sandbox
from harness.run.engine import Engine
from harness.run.judge import RunResult
from harness.run.layout import Suite

SANDBOX = RUNS.sandbox
needs_bwrap = pytest.mark.sandboxed("bwrap")

INSIDE = f"""
import os, socket, sys
import pytest

def test_runs_as_an_unprivileged_user_without_proc_or_network():
    assert os.getuid() == {sandbox.NOBODY}
    assert os.listdir("/proc") == []
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", 22), timeout=1)

def test_sees_neither_the_checkout_nor_ol_nor_other_runs():
    assert not os.path.exists({str(ROOT)!r})
    assert not os.path.exists(os.path.join({str(ROOT)!r}, "impl", "radix.py"))
    for name in ("harness", "ol", "impl"):
        with pytest.raises(ImportError):
            __import__(name)
    run = os.path.dirname(os.path.dirname(os.getcwd()))  # the cwd is run/test/home
    runs = os.path.dirname(run)
    assert os.listdir(runs) == [os.path.basename(run)]
    assert os.listdir(run) == ["test"]
    assert os.listdir("/tmp") in ([], [os.path.basename(runs)])

def test_has_a_home_of_its_own():
    assert os.environ["HOME"].endswith("/test/home")
    with open(os.path.join(os.environ["HOME"], "scratch"), "w") as out:
        out.write("mine")
"""


def sandboxed_run(tmp_path: Path, body: str, engine: Engine = RUNS) -> RunResult:
    tmp_path.mkdir(parents=True, exist_ok=True)
    test = tmp_path / "test_inside.py"
    test.write_text(textwrap.dedent(body), encoding="utf-8")
    return engine.run(Suite(contract=CONTRACT, files=(test,), proxy=()),
                      DS07.reference_source(), timeout=120, trusted=True)


@needs_bwrap
def test_a_sandboxed_run_sees_only_its_own_folder_and_no_process_or_network(tmp_path):
    run = sandboxed_run(tmp_path, INSIDE)
    assert run.all_passed, run.output


@needs_bwrap
def test_the_tree_runs_beside_the_tests_not_under_them(tmp_path):
    run = sandboxed_run(tmp_path, """
        import os
        import pytest
        from tl_ds.radix import RadixTree

        def test_the_tree_is_no_child_of_the_tests():
            tree = RadixTree(1)
            tree.insert([1], [os.getpid()])
            # the tests run as the one child of their namespace's init (PID 1), which
            # reaps whatever they leave
            assert tree.values(1) == [2] and os.getppid() == 1
            with pytest.raises(ChildProcessError):  # the live tree is no child of ours
                os.waitpid(-1, os.WNOHANG)
            assert os.listdir("/proc") == []
        """)
    assert run.all_passed, run.output


def test_a_sandbox_that_cannot_start_is_said_in_one_line(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_binary", lambda: "/bin/false")
    with pytest.raises(ol.OlError, match="cannot start here") as raised:
        sandbox.choose("bwrap")
    assert "\n" not in str(raised.value)
    assert sandbox.choose("auto").mode in ("uid", "none")


@pytest.fixture
def unsandboxed(monkeypatch):
    monkeypatch.setenv("OL_SANDBOX", "none")


def test_ol_grade_refuses_where_no_sandbox_can_start(unsandboxed, tmp_path, capsys):
    code = ol.main(["grade", "ds.07", str(ROOT / "examples" / "passing"), "--out",
                    str(tmp_path / "out")])
    assert code == ol.ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "grades only in a sandbox" in err and "bubblewrap" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_ol_check_says_in_one_line_that_it_ran_unsandboxed(unsandboxed, tmp_path, capsys):
    workspace = tmp_path / "ws"
    assert ol.main(["start", "ds.07", "--workspace", str(workspace)]) == 0
    (workspace / "tests" / "test_ds07_radix.py").write_text(
        "from tl_ds.radix import RadixTree\n\ndef test_split_by_hand():\n"
        "    assert RadixTree(1).is_empty()\n")
    ol.main(["check", "ds.07", "--workspace", str(workspace)])
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("note: ran unsandboxed")]


def test_check_with_require_sandbox_refuses_without_one(unsandboxed, capsys):
    code = ol.main(["check", "ds.07", "--workspace", str(ROOT / "examples" / "passing"),
                    "--require-sandbox"])
    assert code == ol.ExitCode.BAD_INPUT
    assert "grades only in a sandbox" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.sandboxed("uid")
def test_the_uid_sandbox_runs_tests_as_another_user_and_ends_all_they_started(tmp_path):
    with Engine("uid") as engine:
        marker = f"ol-uid-{tmp_path.name}"
        run = sandboxed_run(tmp_path, f"""
            import os, subprocess
            import pytest
            from tl_ds.radix import RadixTree

            def test_runs_as_the_sandbox_user_and_cannot_read_the_tree():
                assert os.getuid() == {sandbox.NOBODY}
                run = os.path.dirname(os.path.dirname(os.getcwd()))
                with pytest.raises(PermissionError):
                    os.listdir(os.path.join(run, "tree"))
                assert RadixTree(1).is_empty()

            def test_leaves_a_process_and_a_file():
                subprocess.Popen(["sleep", "309.5"], start_new_session=True)
                open("/tmp/{marker}", "w").write("x")
            """, engine)
        assert run.all_passed, run.output
        assert not (Path("/tmp") / marker).exists()
        import subprocess
        assert subprocess.run(["pgrep", "-f", "sleep 309.5"], capture_output=True).stdout == b""


@pytest.mark.slow
@pytest.mark.sandboxed("uid")
def test_in_the_uid_sandbox_a_run_cannot_read_what_the_grader_keeps_beside_the_submission(
        tmp_path):
    """As on PrairieLearn: the grader's data folder, closed to others, next to the student's
    files; and the folder the interpreter lies under, which only root may enter."""
    grade = Path(tempfile.mkdtemp(prefix="ol-grade-"))  # in /tmp: every user may enter
    (grade / "data").mkdir()
    (grade / "data" / "data.json").write_text('{"secret": "the answers"}')
    (grade / "data").chmod(0o700)
    grade.chmod(0o755)
    with Engine("uid") as engine, contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, grade)
        run = sandboxed_run(tmp_path, f"""
            import os
            import pytest

            def test_cannot_read_the_graders_data():
                assert os.getuid() == {sandbox.NOBODY}
                with pytest.raises(PermissionError):
                    open({str(grade / "data" / "data.json")!r}).read()
                with pytest.raises(PermissionError):
                    os.listdir({str(grade / "data")!r})
                assert os.listdir({str(grade)!r}) == ["data"]

            def test_sees_no_more_of_a_root_only_folder_than_the_way_to_the_interpreter():
                import sys
                top = "/" + sys.executable.split("/")[1]
                if os.stat(top).st_mode & 0o001:
                    return  # the interpreter is not under a root-only folder here
                assert len(os.listdir(top)) == 1, os.listdir(top)
            """, engine)
    assert run.all_passed, run.output


@pytest.mark.slow
@pytest.mark.sandboxed("uid")
def test_in_the_uid_sandbox_the_trees_coverage_is_measured(tmp_path):
    test = tmp_path / "test_inside.py"
    test.write_text(textwrap.dedent("""
        from tl_ds.radix import RadixTree

        def test_inserts_and_matches():
            tree = RadixTree(1)
            tree.insert([1, 2, 3], [10, 20, 30])
            assert tree.match_prefix([1, 2])[0] == 2
        """), encoding="utf-8")
    with Engine("uid") as engine:
        run = engine.run(Suite(contract=CONTRACT, files=(test,), proxy=(), ours=False,
                               measure=True), DS07.reference_source(), timeout=120,
                         trusted=False)
    assert run.all_passed, run.output
    assert run.coverage is not None and not run.coverage.error, run.coverage
    assert 0 < run.coverage.covered_lines < run.coverage.statements


@pytest.mark.slow
@pytest.mark.sandboxed("uid")
def test_in_the_uid_sandbox_a_suite_counting_its_runs_in_every_writable_place_finds_none(
        tmp_path):
    """The uid sandbox shares the host's /tmp, /dev/shm, /run/lock: whatever a run leaves
    there is gone before the next run starts."""
    counter = WRITABLE + f"""
import sys

def test_counts_its_runs():
    places = [place for place in writable_places()
              if not place.startswith({str(tmp_path)!r})]
    assert places, "nothing shared to write to: the test proves nothing"
    seen = 0
    for place in places:
        try:
            seen = max(seen, int(open(os.path.join(place, ".ol-count")).read()))
        except (OSError, ValueError):
            pass
    for place in places:
        open(os.path.join(place, ".ol-count"), "w").write(str(seen + 1))
    assert seen == 0, seen
"""
    try:
        with Engine("uid") as engine:
            runs = [sandboxed_run(tmp_path / str(round_), counter, engine)
                    for round_ in range(2)]
    finally:
        for place in worker_function("writable_places")(sandbox.NOBODY):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(place, ".ol-count"))
    for run in runs:
        assert run.all_passed, run.output


# --- a backend is one subclass ----------------------------------------------------------------

class Wrapped(sandbox.Sandbox):
    """A backend written here, as a container runtime's would be: it starts the worker
    under a program of its own (``env``, standing in for the runtime's command) and
    confines each side as the worker does without a sandbox."""

    mode = "wrapped"
    started: list = []  # noqa: RUF012 - the workers it started, for the test to count

    def worker_command(self, fd, runs, groups=None, host_uid=None) -> list[str]:
        self.started.append(runs)
        return ["env", "OL_WRAPPED=1", *sandbox.direct_worker(fd, runs, self.handover),
                sandbox.groups_argument(groups)]


def test_a_new_sandbox_backend_is_one_subclass_that_the_engine_runs_as_it_is(tmp_path):
    with Engine(chosen=Wrapped(reason="a test's own backend")) as engine:
        assert engine.sandbox.mode == "wrapped" and engine.sandbox.confined
        run = sandboxed_run(tmp_path, """
            import os
            def test_runs_under_the_backends_own_program():
                assert os.environ.get("OL_WRAPPED") is None  # each side's environment is clean
                from tl_ds.radix import RadixTree
                assert len(RadixTree(1)) == 0
            """, engine)
    assert run.all_passed, run.output
    assert len(Wrapped.started) == 1
