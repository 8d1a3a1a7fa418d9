"""The uid sandbox (no user namespaces, ol as root): a run reads nothing of the grader's, and
everything it could leave anywhere on the machine is found and removed after it.

These need root (to become the sandbox user), not a working uid sandbox: they test the
checks ol makes before grading and the search the worker makes when it starts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from support import DS07, worker_function

import ol
from harness.chapter import ROOT
from harness.commands import student
from harness.errors import OlError
from harness.run import sandbox
from harness.run.engine import Engine
from harness.run.sandbox import PAYLOAD, UidSandbox

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can become another user")
NOBODY = sandbox.NOBODY


@needs_root
def test_the_worker_finds_every_folder_the_sandbox_user_could_write(tmp_path):
    tmp_path.chmod(0o755)
    open_to_all = tmp_path / "open"
    open_to_all.mkdir(mode=0o777)
    open_to_all.chmod(0o1777)
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o755)
    found = worker_function("writable_places")(NOBODY)
    assert str(open_to_all) in found and str(theirs) in found
    assert str(closed) not in found and str(tmp_path) not in found
    for usual in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        if os.path.isdir(usual) and os.stat(usual).st_mode & 0o002:
            assert usual in found, usual


@pytest.fixture
def open_folder():
    """A folder every user can enter (pytest's own temporary folders are closed)."""
    folder = Path(tempfile.mkdtemp(prefix="ol-uid-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@needs_root
def test_readable_by_tells_what_the_sandbox_user_could_read(open_folder):
    tmp_path = open_folder
    shown = tmp_path / "shown.json"
    shown.write_text("{}")
    shown.chmod(0o644)
    hidden = tmp_path / "hidden"
    hidden.mkdir(mode=0o700)
    (hidden / "data.json").write_text("{}")
    paths = [shown, hidden, hidden / "data.json"]
    assert sandbox.readable_by(NOBODY, paths) == [str(shown)]


class UidEngine:
    """What require_sandbox reads of an engine: its sandbox, and its cache by close_to_runs."""

    sandbox = UidSandbox()
    cache = None
    close_to_runs = Engine.close_to_runs


@needs_root
def test_the_uid_sandbox_refuses_to_grade_where_its_user_could_read_the_grader(tmp_path):
    grader = tmp_path / "grade" / "data"
    grader.mkdir(parents=True)
    (grader / "data.json").write_text('{"secret": 1}')
    exposed = sandbox.readable_by(NOBODY, [ROOT / "impl" / "radix.py", grader])
    if not exposed:
        pytest.skip("this checkout and the folder are closed to other users here")
    with pytest.raises(OlError, match=r"could read .*: run `chmod 700 ") as refused:
        student.require_sandbox(UidEngine(), DS07, "ol grade", [grader])
    assert str(refused.value).split("could read ")[1].split(":")[0] in map(str, [
        ROOT, DS07.manifest, DS07.reference, ROOT / "mutants", grader])


def test_a_sandbox_of_none_asked_for_says_so():
    assert "no sandbox was asked for" in sandbox.choose("none").reason


def test_ol_grade_with_sandbox_none_refuses_with_the_reason(tmp_path, capsys):
    code = ol.main(["grade", "ds.07", str(ROOT / "examples" / "passing"), "--sandbox", "none",
                    "--out", str(tmp_path / "out")])
    assert code == ol.ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "()" not in err and "no sandbox was asked for" in err


def test_the_worker_files_are_not_writable_by_the_sandbox_user():
    assert not Path(PAYLOAD).stat().st_mode & 0o002
