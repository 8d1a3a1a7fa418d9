"""The staff's commands: the kill matrix, the audit, and grading a class."""

from __future__ import annotations

import argparse
import time

from harness.chapter import Chapter
from harness.commands.student import check_and_report, require_sandbox
from harness.errors import OlError
from harness.grade import audit, catalog, grading, mutation
from harness.grade import workspace as workspace_module
from harness.report import audit as audit_report
from harness.report import batch, console
from harness.report import files as reports_module
from harness.report.progress import Display, per_submission
from harness.report.render import show_matrix
from harness.run.engine import Engine, cores


def cmd_mutants(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    """The course suite against every planted mutant: who kills what."""
    mutants = catalog.load_catalog(chapter)
    suite = mutation.course_suite(chapter, "verdict")
    console.show_mutants_heading(chapter, len(mutants))
    baseline = mutation.prove_wiring(engine, suite, chapter.reference_source(), chapter)
    console.show_wiring(baseline)
    limits = mutation.Limits.from_reference(baseline)

    progress = Display()
    try:
        results = mutation.run_mutants(
            engine, suite, mutants, limits, mutation.course_ids(chapter),
            lambda done: progress(f"mutant {done.mutant.id}: "
                                  f"{'killed' if done.killed else 'survived'}"))
    finally:
        progress.close()
    rows = mutation.kill_matrix(results)
    show_matrix(rows)
    return all(row.complete for row in rows)


def cmd_audit(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    """The audit catalog (or the seeds), then mutmut and coverage of the reference."""
    if chapter.audit_catalog is None or chapter.equivalents is None:
        raise OlError(f"{chapter.id} has no audit catalog or equivalents file: its manifest "
                      f"({chapter.manifest}) names none, so there is nothing to audit. Add "
                      "them under [material] (audit_catalog, equivalents) first.")
    audit_mutants = catalog.load_audit_catalog(chapter)
    progress = Display()
    try:
        if args.seeds is not None:
            console.show_seeds_heading(chapter, args.seeds)
            seeded = audit.run_seeds(engine, chapter, catalog.load_catalog(chapter),
                                     audit_mutants, args.seeds, args.jobs,
                                     lambda done: progress(f"mutant {done.mutant.id}"))
            progress.close()
            audit_report.report_seeds(seeded)
            return not seeded.weak
        run = audit.run_catalog(engine, chapter, audit_mutants, args.jobs,
                                lambda done: progress(f"mutant {done.mutant.id}: "
                                                      f"{'killed' if done.killed else 'survived'}"))
    finally:
        progress.close()
    audit_report.report_catalog(run)
    if args.catalog_only:
        return not run.survivors
    label = chapter.shown(chapter.reference)
    target = audit.Target(chapter.reference_source(), mutation.course_suite(chapter, "verdict"),
                          chapter.equivalents, label, chapter)
    console.show_audit_heading(chapter, label)
    result = audit.audit(engine, target, args.jobs or cores(),
                         lambda line: print(f"  {line}", flush=True), audit_report.tallies())
    audit_report.report(result, target)
    return result.complete and not run.survivors


def cmd_grade(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> bool:
    missing = [str(path) for path in args.submissions if not path.is_dir()]
    if missing:
        raise OlError(f"not a folder: {', '.join(missing)}. Pass ol grade the workspaces to "
                      f"grade, e.g. `ol grade {chapter.id} submissions/*`")
    jobs = args.jobs or max(1, cores() // 2)
    require_sandbox(engine, chapter, "ol grade", args.submissions)  # none reads another
    progress = Display()
    started = time.monotonic()
    try:
        def check(submission: workspace_module.Submission,
                  reports: reports_module.ReportFolder, runs: int) -> tuple[grading.Check, str]:
            # a worker of its own: nothing one submission's runs do reaches another's
            with engine.sibling() as own:
                # read beside the submission, not where ol runs: its files as it names
                # them, and no command to run
                return check_and_report(own, submission, reports,
                                        per_submission(progress, reports.name), runs,
                                        args.refuse_flagged, audience=args.audience,
                                        platform=True)

        rows = batch.grade_all(check, args.submissions, args.out, jobs, chapter, args.audience,
                               progress, args.scoring)
    finally:
        progress.close()
    console.show_grades(rows, chapter, len(catalog.load_catalog(chapter)),
                        time.monotonic() - started, args.out)
    return True
