"""Grading for a course platform: PrairieLearn's external grader, Gradescope's
run_autograder, and the Gradescope bundle that calls it."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.chapter import Chapter
from harness.commands import student
from harness.errors import OlError
from harness.grade import grading
from harness.grade import workspace as workspace_module
from harness.report import bundle, console
from harness.report import files as reports_module
from harness.report.render import verdict
from harness.run.engine import Engine

# what a platform's student reads when the grader's own setup stops a grade (staff read why)
SETUP_PROBLEM = ("Not graded: the grader could not run here, a problem of its setup and not of "
                 "your work. No score was recorded; tell the course staff, who will grade it "
                 "again.")
# what PrairieLearn mounts beside the student's files, for the grader alone
PRAIRIELEARN_PRIVATE = ("data", "tests", "serverFilesCourse")


def grade_upload(engine: Engine, chapter: Chapter, command: str, upload: Path,
                 private: Sequence[Path], graded: Callable[[grading.Check, str, float], dict],
                 ) -> dict | OlError:
    """A platform's upload folder, found in Python (no name is parsed as text), graded in
    the sandbox: the platform's results, or the OlError that stopped the grade (its
    ``platform`` text is the student's; without one, the grader's setup is at fault)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ol-upload-") as scratch:
        try:
            student.require_sandbox(engine, chapter, command, private)
            workspace = workspace_module.gather(upload, Path(scratch) / "ws", chapter)
            submission = workspace.snapshot(tree=True, tests=True, builds=True)
            result, text = student.check_and_report(engine, submission, None, platform=True)
            return graded(result, text, time.monotonic() - started)
        except OlError as error:
            return error


def cmd_prairielearn(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    """Grade PrairieLearn's upload folder into its results file. A fault of ol leaves no
    results file (PrairieLearn then marks the grading failed, for staff to grade again) and
    exit code 3: never a score the student did not earn."""
    results = reports_module.prepare_results(args.root / "results", "ol prairielearn")
    said = grade_upload(engine, chapter, "ol prairielearn", args.root / "student",
                        [args.root / name for name in PRAIRIELEARN_PRIVATE],
                        lambda result, text, seconds: reports_module.prairielearn(
                            result, text, verdict(result, "", True), seconds, args.scoring))
    if isinstance(said, OlError):
        if not said.platform:  # the grader's setup, not the submission: staff read this
            print(f"ol: {said}", file=sys.stderr)
        said = reports_module.ungradable(said.platform or SETUP_PROBLEM)
    console.show_platform_result(said, reports_module.write_results(results, said))
    return True


def cmd_gradescope(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    """Grade Gradescope's submission folder into its results file, as run_autograder asks.
    A submission that cannot be graded gets a score of 0 and why; a grader that cannot run
    here (exit 2) and a fault of ol (exit 3) leave no results file, so Gradescope says the
    autograder failed and staff grade it again: never a score the student did not earn."""
    results = reports_module.prepare_results(args.root / "results", "ol gradescope")
    said = grade_upload(engine, chapter, "ol gradescope", args.root / "submission", (),
                        lambda result, text, seconds: reports_module.gradescope(
                            result, text, verdict(result, "", True), seconds, args.scoring))
    if isinstance(said, OlError):
        if not said.platform:
            raise said
        said = reports_module.not_graded(said.platform)
    console.show_platform_result(said, reports_module.write_results(results, said))
    return True


def cmd_gradescope_bundle(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    names = bundle.write_bundle(args.out, chapter, args.scoring)
    console.show_bundle(args.out, len(names) - 2, chapter)
    return True
