"""The commands of a student's own workspace: start, tests, tdd, check, diff."""

from __future__ import annotations

import argparse
import dataclasses
import io
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.chapter import Chapter
from harness.errors import OlError
from harness.grade import grading
from harness.grade import workspace as workspace_module
from harness.grade.course import load_course_tests
from harness.report import console
from harness.report import files as reports_module
from harness.report.progress import Display
from harness.report.render import show_check, show_course_tests, show_tdd, verdict
from harness.run.engine import Engine


def open_workspace(args: argparse.Namespace, chapter: Chapter) -> workspace_module.Workspace:
    """The workspace a command names, keeping the flags its suggestions must repeat."""
    found = workspace_module.locate(args.workspace, chapter)
    return dataclasses.replace(found, flags=" --ref-deps" if getattr(args, "ref_deps", False)
                               else "")


def cmd_start(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    workspace = open_workspace(args, chapter)
    created, kept = workspace.start()
    console.show_started(workspace, created, kept)
    return True


def cmd_tests(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    show_course_tests(chapter, load_course_tests(chapter))
    return True


def cmd_tdd(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    workspace = open_workspace(args, chapter)
    engine.close_to_runs(chapter.kept_from_runs)
    if args.phase == "red":
        report = grading.tdd_red(engine, workspace.snapshot(tree=False, tests=True))
    else:
        submission = workspace.snapshot(tree=True, tests=True, builds=not args.ref_deps)
        report = grading.tdd_green(engine, submission, args.ref_deps)
    show_tdd(report, workspace)
    return report.passed


def require_sandbox(engine: Engine, chapter: Chapter, command: str,
                    private: Sequence[Path] = ()) -> None:
    """OlError where no sandbox confines submission code, or its runs could read ol or a
    ``private`` path (the grader's files beside a submission, classmates' work)."""
    engine.sandbox.require_confined(command)
    engine.close_to_runs((*chapter.kept_from_runs, *private))


def cmd_check(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    workspace = open_workspace(args, chapter)
    reports = (reports_module.ReportFolder(args.report, args.audience,
                                           workspace.root.resolve().name, args.scoring)
               if args.report else None)
    progress = Display()
    try:
        submission = workspace.snapshot(tree=True, tests=True, builds=not args.ref_deps)
        if args.require_sandbox:
            # closes ol to runs as well
            require_sandbox(engine, chapter, "ol check --require-sandbox")
        else:
            engine.close_to_runs(chapter.kept_from_runs)
        result, text = check_and_report(engine, submission, reports, progress, args.jobs,
                                        args.refuse_flagged, args.missed, args.audience,
                                        args.platform, args.ref_deps)
    except OlError as error:
        if reports is not None and args.platform and error.platform:
            reports.write_ungraded(error.platform)  # the platform says why: no score of 0 unsaid
        raise
    finally:
        progress.close()
    sys.stdout.write(text)
    console.show_unsandboxed(engine.sandbox)
    if reports is not None:
        console.show_written(reports.folder, reports.written)
    return result.passed


def check_and_report(engine: Engine, submission: workspace_module.Submission,
                     reports: reports_module.ReportFolder | None,
                     progress: Callable[[str], None] | None = None, jobs: int | None = None,
                     refuse_flagged: bool = False, missed: bool = False,
                     audience: str = "student", platform: bool = False,
                     ref_deps: bool = False) -> tuple[grading.Check, str]:
    """`ol check` of one submission, as read once: the result and its text, written to
    ``reports`` if any. With ``platform`` the text is for a course platform's student (see
    show_check), and so are the reports' texts."""
    started = time.monotonic()
    workspace = submission.workspace
    result = grading.check(engine, submission, progress, jobs, refuse_flagged, ref_deps)
    text = io.StringIO()
    show_check(result, workspace, text, missed, audience, platform)
    if reports is not None:
        reports.write(result, text.getvalue(), verdict(result, workspace.option(), platform),
                      time.monotonic() - started)
    return result, text.getvalue()


def cmd_diff(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    workspace = open_workspace(args, chapter)
    submission = workspace.snapshot(tree=True, tests=False, builds=not args.ref_deps)
    theirs = grading.their_builds(engine, submission, args.ref_deps)
    implementation = grading.tree_source(engine, submission, theirs)
    course = grading.course_run(engine, implementation, chapter, beside=theirs)
    if not course.all_passed:
        failed = len(course.failures) or len(chapter.course_test_names)
        console.show_diff_refused(workspace, failed)
        return False
    console.show_diff(workspace, implementation, chapter.reference_source(),
                      colour=sys.stdout.isatty())
    return True
