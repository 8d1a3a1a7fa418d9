"""Grading reads a submission once, at the edge: every part of a verdict sees one version."""

from __future__ import annotations

import hashlib
import shutil

import pytest
from support import DS07, RUNS

from harness.grade import grading
from harness.grade.workspace import Workspace

PASSING = DS07.examples / "passing"


def copied(tmp_path) -> Workspace:
    root = tmp_path / "ws"
    shutil.copytree(PASSING, root, symlinks=False)
    return Workspace(root, DS07)


def test_a_snapshot_hashes_each_file_it_read_by_its_path_in_the_submission(tmp_path):
    workspace = copied(tmp_path)
    submission = workspace.snapshot(tree=True, tests=True)
    assert submission.hashes == {
        "tl_ds/radix.py": hashlib.sha256(workspace.radix.read_bytes()).hexdigest(),
        "tests/test_ds07_radix.py": hashlib.sha256(workspace.tests.read_bytes()).hexdigest()}
    assert list(workspace.snapshot(tree=False, tests=True).hashes) == [
        "tests/test_ds07_radix.py"]


def test_tdd_red_runs_the_tests_as_read_at_its_start_even_when_the_file_is_gone(tmp_path):
    workspace = copied(tmp_path)
    submission = workspace.snapshot(tree=False, tests=True)
    shutil.rmtree(workspace.root)
    report = grading.tdd_red(RUNS, submission)
    assert report.rows and all(row.state == "red" for row in report.rows)


@pytest.mark.slow
def test_a_check_grades_the_files_as_read_at_its_start_whatever_happens_to_them_after(
        tmp_path):
    workspace = copied(tmp_path)
    submission = workspace.snapshot(tree=True, tests=True)
    workspace.radix.write_text("raise SystemExit('a later version')\n")
    workspace.tests.write_text("def test_later():\n    assert False\n")
    result = grading.check(RUNS, submission, jobs=2)
    assert result.passed and result.tests.kills == len(result.tests.mutants)
