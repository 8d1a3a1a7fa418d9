"""A fault of ol is never a student's grade: the worker outlives its callers, a worker that
dies is replaced and its runs run again, and a fault that persists is said to be ol's.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from support import CONTRACT, PASSING, ol_run, verdict_line

import ol
from harness.commands import student as student_commands
from harness.report import bundle
from harness.run.engine import Engine

needs_worker_sandbox = pytest.mark.sandboxed("bwrap")


def workers() -> list[int]:
    """The pids of this process's runs' workers (its children that run fork_worker.py)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent = next(line.split()[1] for line in status.splitlines()
                      if line.startswith("PPid:"))
        if int(parent) == os.getpid() and b"fork_worker.py" in command:
            found.append(int(entry))
    return found


class Killer(threading.Thread):
    """Kills each worker of this process started after it (not the session's), once it has
    been up ``after`` seconds, ``times`` times in all."""

    def __init__(self, times: int, after: float) -> None:
        super().__init__(daemon=True)
        self.times, self.after = times, after
        self.killed: list[int] = []
        self.done = threading.Event()
        self.spared = set(workers())  # the workers already running belong to other tests

    def run(self) -> None:
        seen: dict[int, float] = {}
        while len(self.killed) < self.times and not self.done.is_set():
            for pid in set(workers()) - self.spared - set(self.killed):
                seen.setdefault(pid, time.monotonic())
                if time.monotonic() - seen[pid] >= self.after and len(self.killed) < self.times:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
            time.sleep(0.02)


@pytest.fixture
def passing(tmp_path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(PASSING, root)
    return root


@pytest.mark.slow
@needs_worker_sandbox
def test_a_worker_first_started_from_a_short_lived_thread_outlives_that_thread(tmp_path):
    """bwrap's parent-death signal belongs to the thread that started it (the cause of the
    worker dying under a re-check whose first run came from a pool thread)."""
    with Engine("bwrap", fresh=False) as engine:
        first = threading.Thread(target=engine.probe_now, args=("X = 1\n", CONTRACT))
        first.start()
        first.join()
        time.sleep(0.3)  # time for a parent-death signal to land, were there one
        worker = engine.current().worker
        assert worker.process.poll() is None, "the worker died with the thread that started it"
        assert engine.probe_now("X = 1\n", CONTRACT) == "it defines no class RadixTree"
        assert worker.generation == 1, "the worker had to be started again"


@pytest.mark.slow
@needs_worker_sandbox
def test_a_tests_only_change_after_a_cached_check_is_graded_every_time(passing, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setenv("OL_CACHE", str(tmp_path / "cache"))
    code, out, err = ol_run("check", "ds.07", "--workspace", passing)
    assert code == ol.ExitCode.PASSED, err
    tests = passing / "tests" / "test_ds07_radix.py"
    for round_ in range(3):
        tests.write_text(tests.read_text() + f"\n# round {round_}\n")
        code, out, err = ol_run("check", "ds.07", "--workspace", passing)
        assert code == ol.ExitCode.PASSED, err
        assert "worker" not in out + err and verdict_line(out).startswith("PASSED")


@pytest.mark.slow
@needs_worker_sandbox
def test_ol_grade_with_a_cache_grades_a_tests_only_change_without_a_fault(tmp_path):
    subs = [tmp_path / name for name in ("ann", "bob")]
    for sub in subs:
        shutil.copytree(PASSING, sub)
    cache = tmp_path / "cache"
    for round_ in range(2):
        for sub in subs:
            tests = sub / "tests" / "test_ds07_radix.py"
            tests.write_text(tests.read_text() + f"\n# round {round_}\n")
        out = tmp_path / f"grades-{round_}"
        code, _, err = ol_run("grade", "ds.07", *subs, "--out", out, "--cache", cache,
                                 "--jobs", "2")
        assert code == ol.ExitCode.PASSED, err
        rows = (out / "summary.csv").read_text().splitlines()[1:]
        assert [row.split(",")[1] for row in rows] == ["passed", "passed"], rows


def check_while_killing(workspace: Path, times: int, after: float) -> tuple[int, str, str, int]:
    """`ol check` while its workers are killed: (exit code, stdout, stderr, workers killed)."""
    killer = Killer(times, after)
    killer.start()
    try:
        # a worker of the command's own, which the killer tells from the session's
        code, out, err = ol_run("check", "ds.07", "--workspace", workspace, shared=False)
    finally:
        killer.done.set()
    return code, out, err, len(killer.killed)


@pytest.mark.slow
@needs_worker_sandbox
def test_a_worker_killed_once_in_a_check_changes_nothing_of_the_verdict(passing):
    undisturbed = ol_run("check", "ds.07", "--workspace", passing)
    code, out, err, killed = check_while_killing(passing, times=1, after=2.0)
    assert killed == 1, "the worker was never killed: the test proves nothing"
    assert code == undisturbed[0] == ol.ExitCode.PASSED, err
    assert verdict_line(out) == verdict_line(undisturbed[1])
    assert [line for line in out.splitlines() if "killed by" in line or "survived" in line] \
        == [line for line in undisturbed[1].splitlines()
            if "killed by" in line or "survived" in line]


@needs_worker_sandbox
def test_a_worker_that_dies_twice_under_a_run_is_a_fault_of_ol_with_its_own_exit_code(passing):
    code, out, err, killed = check_while_killing(passing, times=2, after=0.0)
    assert killed == 2 and code == ol.ExitCode.INTERNAL == 3
    assert "Traceback" not in out + err and "PASSED" not in out
    said = err.strip().splitlines()[-1]
    assert said.startswith("ol: this is a fault of ol itself, not of your work: the runs' "
                           "worker died twice")
    log = said.split("send the log ", 1)[1].split(" to the course staff")[0]
    assert "WorkerLost" in Path(log).read_text() or "died twice" in Path(log).read_text()
    Path(log).unlink()


def test_an_exception_of_ol_itself_is_exit_3_with_a_log_never_exit_2(monkeypatch, capsys):
    def broken(args, engine, chapter):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(ol, "COMMANDS", tuple(
        ol.Command(record.name, record.help, broken, record.arguments)
        if record.name == "tests" else record for record in ol.COMMANDS))
    assert ol.main(["tests", "ds.07"]) == ol.ExitCode.INTERNAL
    err = capsys.readouterr().err
    assert "fault of ol itself, not of your work: ZeroDivisionError: division by zero" in err
    assert "Traceback" not in err
    log = Path(err.split("send the log ", 1)[1].split(" to the course staff")[0])
    assert "Traceback" in log.read_text() and "command: ol tests ds.07" in log.read_text()
    log.unlink()


# --- the course platforms' bundles install -------------------------------------------------

def install_arguments(script: str) -> list[str]:
    """The arguments bash hands ``pip install`` in a setup script, as bash parses them (the
    last install: the first may bring pip itself up to date)."""
    line = [line for line in script.splitlines() if " pip install " in line][-1]
    done = subprocess.run(["bash", "-c", 'set -- ' + line.split(" pip install ", 1)[1]
                           + '; printf "%s\\0" "$@"'], capture_output=True, check=True)
    return [word.decode() for word in done.stdout.split(b"\0") if word]


def test_every_pin_of_the_gradescope_setup_reaches_pip_whole(tmp_path):
    assert ol.main(["gradescope-bundle", "ds.07", str(tmp_path / "b.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "b.zip") as archive:
        setup = archive.read("setup.sh").decode()
        for name in ("setup.sh", "run_autograder"):
            (tmp_path / name).write_bytes(archive.read(name))
            assert subprocess.run(["bash", "-n", tmp_path / name]).returncode == 0
    pins = [word for word in install_arguments(setup) if not word.startswith("-")]
    assert pins == bundle.pins()
    for pin in pins:
        Requirement(pin)  # raises InvalidRequirement (InvalidMarker) when bash cut it
    assert any(";" in pin for pin in pins), "no pin with a marker: the test proves little"


def test_single_quoted_pins_would_have_been_cut_by_bash():
    """The old setup.sh's quoting, parsed the same way, fails: the test above can fail."""
    old = "python3 -m pip install " + " ".join(f"'{pin}'" for pin in bundle.pins())
    cut = [pin for pin in install_arguments(old) if ";" in pin]
    with pytest.raises(Exception, match=r"(?i)marker|invalid"):
        for pin in cut:
            Requirement(pin)
    assert shlex.split(" ".join(shlex.quote(pin) for pin in bundle.pins())) == bundle.pins()


# --- a fault of ol on the course platforms: no score, the platform says the grader failed ---

def test_a_fault_of_ol_on_gradescope_writes_no_results_and_fails_the_autograder(tmp_path):
    root = tmp_path / "autograder"
    assert ol.main(["gradescope-bundle", "ds.07", str(tmp_path / "b.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "b.zip") as archive:
        archive.extractall(root / "source")
    (root / "source" / "run_autograder").chmod(0o755)
    (root / "submission").mkdir(parents=True)
    (root / "results").mkdir()
    (root / "results" / "results.json").write_text('{"score": 40}')  # planted earlier
    faulty = tmp_path / "python-with-a-fault"
    faulty.write_text("#!/bin/sh\necho 'ol: this is a fault of ol itself, not of your work'"
                      " >&2\nexit 3\n")
    faulty.chmod(0o755)
    env = {**os.environ, "OL_AUTOGRADER_ROOT": str(root), "OL_PYTHON": str(faulty)}
    done = subprocess.run([root / "source" / "run_autograder"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert not (root / "results" / "results.json").exists()
    assert "fault of ol itself" in done.stdout


def test_a_fault_of_ol_on_prairielearn_writes_no_score_and_exits_3(tmp_path, monkeypatch,
                                                                  capsys):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(student_commands, "check_and_report", broken)
    monkeypatch.setattr(student_commands, "require_sandbox", lambda *args, **kwargs: None)
    student = tmp_path / "grade" / "student"
    shutil.copytree(PASSING, student)
    code = ol.main(["prairielearn", "ds.07", "--root", str(tmp_path / "grade")])
    assert code == ol.ExitCode.INTERNAL
    assert not (tmp_path / "grade" / "results" / "results.json").exists()
    err = capsys.readouterr().err
    assert "a fault of its own (ZeroDivisionError: division by zero), not of your work" in err
    assert "No score was recorded" in err and "Traceback" not in err
    assert "log" not in err and str(tmp_path) not in err  # no file of the grader's machine
