"""ol: the grading harness of a course's chapters, each described by a manifest in chapters/.

A thin command line: it parses, dispatches to ``cmd_<name>``, and formats. The work is in
the ``harness`` package. Every error a user can cause is an ``OlError``, which ``main``
turns into one paragraph and exit code 2; nothing below ``main`` exits.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import io
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness import chapter as chapters
from harness.chapter import ROOT as PROJECT
from harness.chapter import Chapter
from harness.errors import Blame, OlError, OlFault, blame
from harness.grade import audit, catalog, grading, mutation
from harness.grade import workspace as workspace_module
from harness.grade.course import load_course_tests
from harness.grade.score import SCORINGS
from harness.report import audit as audit_report
from harness.report import batch, bundle, console
from harness.report import files as reports_module
from harness.report.progress import Display, per_submission
from harness.report.render import (
    show_check,
    show_course_tests,
    show_matrix,
    show_tdd,
    verdict,
)
from harness.run import sandbox
from harness.run.cache import RunCache, ol_version
from harness.run.engine import Engine, cores


class ExitCode(enum.IntEnum):
    PASSED = 0       # everything the command checks holds
    NOT_PASSED = 1   # it ran, and what it checks does not hold
    BAD_INPUT = 2    # bad usage or input: unknown module, missing file, a file that will not import
    INTERNAL = 3     # a fault of ol itself (its worker died twice, a bug): nothing was graded
    INTERRUPTED = 130  # stopped by Ctrl-C, after cleaning up
    TERMINATED = 143   # stopped by SIGTERM (a platform's time limit), after cleaning up
    PIPE_CLOSED = 141  # what read its output stopped reading (`ol tests | head`): said nothing


class Parser(argparse.ArgumentParser):
    """argparse that raises OlError instead of printing usage and exiting."""

    def error(self, message: str) -> None:
        raise OlError(f"{message}. Run `ol --help` for the commands and their options.")


@dataclass(frozen=True)
class Argument:
    """One argument of a command, as argparse's add_argument takes it."""

    flags: tuple[str, ...]
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Command:
    """One command: its name, its help, its arguments in order, and its handler."""

    name: str
    help: str
    handler: Callable[[argparse.Namespace, Engine, Chapter], int]
    arguments: tuple[Argument, ...]
    description: str = ""  # the help, unless the command says more on its own page


def argument(*flags: str, **options) -> Argument:
    return Argument(flags, options)


MODULE = argument("module", help=f"the module id: {', '.join(chapters.known())}")
WORKSPACE = argument("--workspace", type=Path, default=None, metavar="DIR",
                     help="your workspace (default: ./workspace, or the workspace you are in)")
SANDBOX = argument("--sandbox", choices=sandbox.MODES, default=None,
                   help="how runs of submission code are confined: auto (default: the "
                        "strongest that starts here), bwrap, uid (as root, a separate user) "
                        "or none")
ISOLATION = argument("--isolation", choices=("fast", "strict"), default=None,
                     help="fast: fork each run from a warm worker (the default where fork "
                          "exists); strict: a fresh interpreter per run")
FRESH = argument("--fresh", action="store_true",
                 help="run everything again, ignoring the results kept from earlier runs")
CACHE = argument("--cache", type=Path, default=None, metavar="DIR",
                 help="where results are kept by content (default: OL_CACHE, else "
                      "~/.cache/ol); never inside a submission")
AUDIENCE = argument("--audience", choices=reports_module.AUDIENCES, default="student",
                    help="what reports show: student (default): statuses, killing tests and "
                         "hints; staff: also the reference source and the diffs")
SCORING = argument("--scoring", choices=SCORINGS, default="pass",
                   help="staff: how results.json scores a submission: pass (default): full "
                        "marks when ol check passes, none otherwise; rate: a pass earns 30 of "
                        "40 at the threshold and the rest with the kills beyond it")
REF_DEPS = argument("--ref-deps", action="store_true",
                    help="run a chapter that builds on others on their references instead of "
                         "your own (which must otherwise pass their course tests first)")
REFUSE_FLAGGED = argument("--refuse-flagged", action="store_true",
                          help="staff: refuse to grade a test file the static scan flags (the "
                               "scan is a lint; the sandbox is what contains the tests)")


def cmd_mutants(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
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
    return ExitCode.PASSED if all(row.complete for row in rows) else ExitCode.NOT_PASSED


def open_workspace(args: argparse.Namespace, chapter: Chapter) -> workspace_module.Workspace:
    """The workspace a command names, keeping the flags its suggestions must repeat."""
    found = workspace_module.locate(args.workspace, chapter)
    return dataclasses.replace(found, flags=" --ref-deps" if getattr(args, "ref_deps", False)
                               else "")


def cmd_audit(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
    """The audit catalog (or the seeds), then mutmut and coverage of the reference."""
    if args.jobs is not None and args.jobs < 1:
        raise OlError(f"--jobs must be at least 1, got {args.jobs}.")
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
            return ExitCode.NOT_PASSED if seeded.weak else ExitCode.PASSED
        run = audit.run_catalog(engine, chapter, audit_mutants, args.jobs,
                                lambda done: progress(f"mutant {done.mutant.id}: "
                                                      f"{'killed' if done.killed else 'survived'}"))
    finally:
        progress.close()
    audit_report.report_catalog(run)
    if args.catalog_only:
        return ExitCode.NOT_PASSED if run.survivors else ExitCode.PASSED
    label = chapter.shown(chapter.reference)
    target = audit.Target(chapter.reference_source(), mutation.course_suite(chapter, "verdict"),
                          chapter.equivalents, label, chapter)
    console.show_audit_heading(chapter, label)
    result = audit.audit(engine, target, args.jobs or cores(),
                         lambda line: print(f"  {line}", flush=True), audit_report.tallies())
    audit_report.report(result, target)
    return ExitCode.PASSED if result.complete and not run.survivors else ExitCode.NOT_PASSED


def cmd_start(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
    workspace = open_workspace(args, chapter)
    created, kept = workspace.start()
    console.show_started(workspace, created, kept)
    return ExitCode.PASSED


def cmd_tests(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
    show_course_tests(chapter, load_course_tests(chapter))
    return ExitCode.PASSED


def cmd_tdd(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
    workspace = open_workspace(args, chapter)
    close_to_runs(engine, chapter)
    if args.phase == "red":
        report = grading.tdd_red(engine, workspace.snapshot(tree=False, tests=True))
    else:
        submission = workspace.snapshot(tree=True, tests=True, builds=not args.ref_deps)
        report = grading.tdd_green(engine, submission, args.ref_deps)
    show_tdd(report, workspace)
    return ExitCode.PASSED if report.passed else ExitCode.NOT_PASSED


def require_sandbox(engine: Engine, chapter: Chapter, command: str,
                    private: Sequence[Path] = ()) -> None:
    """OlError where no sandbox confines submission code, or the sandbox user could read ol
    or a ``private`` path."""
    used = engine.sandbox
    if not used.confined:
        raise OlError(f"{command} grades only in a sandbox, and none can start here "
                      f"({used.reason}). Install bubblewrap (`apt-get install bubblewrap`, "
                      "or `pip install -e .` for the bundled bwrap) on a system that allows "
                      "user namespaces, or run ol as root so submissions run as another user")
    close_to_runs(engine, chapter, private)


def close_to_runs(engine: Engine, chapter: Chapter, private: Sequence[Path] = ()) -> None:
    """In the uid sandbox: OlError, naming the path and the chmod that fixes it, when the
    sandbox user could read ol's checkout (the reference, the mutants), the cache, or one
    of the ``private`` paths (the grader's files beside a submission, classmates' work)."""
    if engine.sandbox.mode != "uid":
        return
    guarded = [PROJECT, chapter.manifest, chapter.reference, chapter.catalog.parent,
               *private, *([engine.cache.folder] if engine.cache is not None else [])]
    exposed = sandbox.readable_by(engine.sandbox.uid, [path for path in guarded
                                                       if path.exists()])
    if exposed:
        raise OlError(f"the uid sandbox runs submissions as uid {engine.sandbox.uid}, which "
                      f"could read {exposed[0]}: run `chmod 700 {exposed[0]}` (or close a "
                      "folder above it to other users) and grade again")


def cmd_check(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
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
            close_to_runs(engine, chapter)
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
    return ExitCode.PASSED if result.passed else ExitCode.NOT_PASSED


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


def cmd_diff(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
    workspace = open_workspace(args, chapter)
    submission = workspace.snapshot(tree=True, tests=False, builds=not args.ref_deps)
    theirs = grading.their_builds(engine, submission, args.ref_deps)
    implementation = grading.tree_source(engine, submission, theirs)
    course = grading.course_run(engine, implementation, chapter, beside=theirs)
    if not course.all_passed:
        failed = len(course.failures) or len(chapter.course_test_names)
        console.show_diff_refused(workspace, failed)
        return ExitCode.NOT_PASSED
    console.show_diff(workspace, implementation, chapter.reference_source(),
                      colour=sys.stdout.isatty())
    return ExitCode.PASSED


def cmd_grade(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
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
    return ExitCode.PASSED


# what a platform's student reads when the grader's own setup stops a grade (staff read why)
SETUP_PROBLEM = ("Not graded: the grader could not run here, a problem of its setup and not of "
                 "your work. No score was recorded; tell the course staff, who will grade it "
                 "again.")
# what a platform's student reads of a fault of ol (the grader's own code)
PLATFORM_FAULT = ("Not graded: the grader met a fault of its own ({what}), not of your work. "
                  "No score was recorded; the course staff will grade it again.")

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
            require_sandbox(engine, chapter, command, private)
            workspace = workspace_module.gather(upload, Path(scratch) / "ws", chapter)
            submission = workspace.snapshot(tree=True, tests=True, builds=True)
            result, text = check_and_report(engine, submission, None, platform=True)
            return graded(result, text, time.monotonic() - started)
        except OlError as error:
            return error


def cmd_prairielearn(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
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
    return ExitCode.PASSED


def cmd_gradescope(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
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
    return ExitCode.PASSED


def cmd_gradescope_bundle(args: argparse.Namespace, engine: Engine, chapter: Chapter) -> int:
    names = bundle.write_bundle(args.out, chapter, args.scoring)
    console.show_bundle(args.out, len(names) - 2, chapter)
    return ExitCode.PASSED


JOBS = "runs at once (default: one per core)"
COMMANDS = (
    Command("start", "create a workspace: the stub tree and a test file to fill",
            cmd_start, (MODULE, WORKSPACE)),
    Command("tests", "the course tests and what your own tests must do", cmd_tests,
            (MODULE,)),
    Command("tdd", "run your tests: red against the stub, green against your tree", cmd_tdd,
            (argument("phase", choices=("red", "green"),
                      help="red: your tests against the stub; green: against your tree"),
             MODULE, WORKSPACE, REF_DEPS, SANDBOX, FRESH)),
    Command("check", "grade: the course tests on your tree, your tests on the mutants",
            cmd_check,
            (MODULE, WORKSPACE, argument("--jobs", type=int, default=None, metavar="N", help=JOBS),
             argument("--report", type=Path, default=None, metavar="DIR",
                      help="also write results.json (Gradescope), junit.xml, mutation.html "
                           "and, for staff, mutation.json (Stryker) into DIR, a new or empty "
                           "folder"),
             argument("--missed", action="store_true",
                      help="list the lines and branches of your tree your tests never run"),
             argument("--require-sandbox", action="store_true",
                      help="staff: refuse to grade (exit 2) where no sandbox can start"),
             argument("--platform", action="store_true",
                      help="staff: texts for a course platform's student (files named as "
                           "submitted, no local command; a submission that cannot be graded "
                           "still gets a results.json saying why); run_autograder passes it"),
             AUDIENCE, SCORING, REFUSE_FLAGGED, REF_DEPS, SANDBOX, ISOLATION, FRESH)),
    Command("diff", "your tree against the reference, once the course tests pass", cmd_diff,
            (MODULE, WORKSPACE, REF_DEPS, SANDBOX, FRESH)),
    Command("grade", "staff: grade many workspaces, a report folder each and a summary",
            cmd_grade,
            (MODULE,
             argument("submissions", nargs="+", type=Path, metavar="DIR",
                      help="the workspaces to grade (each laid out as ol start makes one)"),
             argument("--jobs", type=int, default=None, metavar="N",
                      help="submissions graded at once (default: one per two cores)"),
             argument("--out", type=Path, default=Path("ol-grades"), metavar="DIR",
                      help="a new or empty folder for the reports and the summary "
                           "(default: ./ol-grades)"),
             AUDIENCE, SCORING, REFUSE_FLAGGED, SANDBOX, ISOLATION, FRESH, CACHE)),
    Command("mutants", "staff: the kill matrix of the course suite against the planted "
            "mutants", cmd_mutants,
            (MODULE, SANDBOX, ISOLATION)),
    Command("audit", "staff: the course suite against the audit catalog, then mutmut and "
            "coverage of the reference, survivors explained by the chapter's equivalent "
            "mutants", cmd_audit,
            (MODULE, argument("--jobs", type=int, default=None, metavar="N",
                              help="mutants run at once (default: one per core)"),
             argument("--catalog-only", action="store_true",
                      help="only the audit catalog, without mutmut and coverage"),
             argument("--seeds", type=int, default=None, metavar="K",
                      help="instead: the model test under K seeds (the named tests once) "
                           "against the chapter's mutants and the audit catalog, the share "
                           "of seeds under which each is killed"))),
    Command("prairielearn", "staff: grade a PrairieLearn submission (the external grader's "
            "entry point): /grade/student into /grade/results/results.json",
            cmd_prairielearn,
            (MODULE, argument("--root", type=Path, default=Path("/grade"), metavar="DIR",
                              help="the grading folder PrairieLearn mounts (default: /grade)"),
             SCORING, SANDBOX)),
    Command("gradescope", "staff: grade a Gradescope submission (the bundle's run_autograder "
            "calls it): /autograder/submission into /autograder/results/results.json",
            cmd_gradescope,
            (MODULE, argument("--root", type=Path, default=Path("/autograder"), metavar="DIR",
                              help="Gradescope's autograder folder (default: /autograder)"),
             SCORING, SANDBOX)),
    Command("gradescope-bundle", "staff: write the Gradescope autograder zip",
            cmd_gradescope_bundle,
            (MODULE, argument("out", type=Path, metavar="OUT.zip", help="a file that does not "
                              "exist yet"), SCORING),
            description="staff: write the Gradescope autograder zip (setup.sh, run_autograder "
                        "and ol itself) to a new file"),
)


def build_parser() -> Parser:
    parser = Parser(prog="ol", description=f"The grading harness of "
                    f"{', '.join(chapters.known())}: start, tdd, check, diff.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for record in COMMANDS:
        sub = commands.add_parser(record.name, help=record.help,
                                  description=record.description or record.help)
        for entry in record.arguments:
            sub.add_argument(*entry.flags, **entry.options)
    return parser


@dataclass(frozen=True)
class Settings:
    """What a command is told besides its inputs, read once here from its flags and the
    environment, and passed down: nothing below ol.py reads a setting of ol from the
    environment."""

    sandbox: str                # --sandbox, else OL_SANDBOX, else auto
    strict: bool                # a fresh worker per run: --isolation strict or OL_ISOLATION
    cache: Path | None          # where results are kept; None: kept nowhere
    chapters: tuple[Path, ...] = ()  # folders of further chapter manifests: OL_CHAPTERS
    sandbox_uid: int = sandbox.NOBODY  # who submission code runs as in the uid sandbox:
    # OL_SANDBOX_UID (the Gradescope bundle sets it to a dedicated user)

    @classmethod
    def read(cls, args: argparse.Namespace, environ: Mapping[str, str]) -> Settings:
        isolation = getattr(args, "isolation", None) or environ.get("OL_ISOLATION") or "fast"
        return cls(sandbox=getattr(args, "sandbox", None) or environ.get("OL_SANDBOX") or "auto",
                   strict=isolation == "strict", cache=cache_folder(args, environ),
                   chapters=tuple(Path(folder) for folder in
                                  environ.get("OL_CHAPTERS", "").split(os.pathsep) if folder),
                   sandbox_uid=sandbox_uid(environ))

    def serves(self, engine: Engine, cache: RunCache | None) -> bool:
        """Whether ``engine`` was made as these settings (with ``cache``) would make one."""
        return (engine.sandbox_mode, engine.fresh, engine.sandbox_uid, engine.cache) == (
            self.sandbox, self.strict, self.sandbox_uid, cache)

    def chapter(self, args: argparse.Namespace) -> Chapter:
        """The chapter the command names; the course's first for one that names none."""
        module = getattr(args, "module", None)
        return chapters.default() if module is None else chapters.find(module, self.chapters)


def sandbox_uid(environ: Mapping[str, str]) -> int:
    said = environ.get("OL_SANDBOX_UID", "").strip()
    if not said:
        return sandbox.NOBODY
    if not said.isdigit() or int(said) == 0:
        raise OlError(f"OL_SANDBOX_UID is {said!r}: name the numeric uid of an unprivileged "
                      "user that owns nothing (not 0), or unset it for nobody (65534).")
    return int(said)


def cache_folder(args: argparse.Namespace, environ: Mapping[str, str]) -> Path | None:
    """Where a command keeps results: none for --fresh or a command without a cache; else
    --cache, else OL_CACHE (``off``: none), else the user's cache folder
    (``$XDG_CACHE_HOME/ol`` or ``~/.cache/ol``)."""
    if not hasattr(args, "fresh") or args.fresh:
        return None
    if getattr(args, "cache", None):
        return args.cache
    said = environ.get("OL_CACHE", "")
    if said == "off":
        return None
    if said:
        return Path(said)
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ol"


def run_cache(args: argparse.Namespace, folder: Path | None,
              chapter: Chapter) -> RunCache | None:
    """The cache at ``folder``, refused where it overlaps a submission."""
    if folder is None:
        return None
    folder = folder.resolve()
    given = list(getattr(args, "submissions", ()))
    if hasattr(args, "workspace"):
        given.append(workspace_module.locate(args.workspace, chapter).root)
    for root in map(Path.resolve, given):
        if folder.is_relative_to(root) or root.is_relative_to(folder):
            raise OlError(f"the cache folder {folder} and the submission {root} overlap: a "
                          "submission must never be able to write what ol reads as a kept "
                          "result. Pass --cache a folder outside every submission")
    return RunCache(folder)


# True where ol runs inside another program's process (the project's test session): Ctrl-C
# then ends that program too, after ol has stopped and removed its runs, rather than
# becoming an exit code that program would read as a result
PASS_ON_INTERRUPTS = False


class Terminated(BaseException):
    """SIGTERM arrived: the command stops as after Ctrl-C, every run stopped and removed."""


def terminate(signum: int, frame) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None, engine: Engine | None = None) -> int:
    """``ol argv``; its exit code. ``engine``: one to run in, kept open (a test session's),
    used only when it was made with the settings this command reads; else (and by
    default) the command makes its own and closes it. SIGTERM stops it as Ctrl-C does."""
    on_main_thread = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, terminate) if on_main_thread else None
    try:
        return command(argv, engine)
    finally:
        if on_main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if before is None else before)


def command(argv: Sequence[str] | None, engine: Engine | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return ExitCode.BAD_INPUT
        if getattr(args, "jobs", None) is not None and args.jobs < 1:
            raise OlError(f"--jobs must be at least 1, not {args.jobs}")
        handler = next(record.handler for record in COMMANDS if record.name == args.command)
        settings = Settings.read(args, os.environ)
        chapter = settings.chapter(args)
        cache = run_cache(args, settings.cache, chapter)
        if engine is not None and settings.serves(engine, cache):
            code = handler(args, engine, chapter)
            console.show_reused(engine.cache)
            return code
        with Engine(settings.sandbox, settings.strict, cache, settings.sandbox_uid) as own:
            code = handler(args, own, chapter)
            console.show_reused(own.cache)
            return code
    except (Exception, KeyboardInterrupt, Terminated) as error:  # whose it is: one rule
        return stopped_by(error, argv)


def stopped_by(error: BaseException, argv: Sequence[str] | None) -> int:
    """What `ol` says of the exception that stopped it, and its exit code, by whose it is."""
    if isinstance(error, BrokenPipeError):  # the reader left: nobody to tell, nothing wrong
        with contextlib.suppress(OSError, ValueError, AttributeError):  # nor at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.PIPE_CLOSED
    whose = blame(error)
    if whose is Blame.INPUT:
        print(f"ol: {error}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    if whose is Blame.STOPPED:
        print("\nol: interrupted; every run was stopped and its files removed.", file=sys.stderr)
        if PASS_ON_INTERRUPTS and isinstance(error, KeyboardInterrupt):
            raise error  # an ol called in process by a session that Ctrl-C must stop too
        return ExitCode.TERMINATED if isinstance(error, Terminated) else ExitCode.INTERRUPTED
    # ol's own fault: said to be ours, never a verdict
    if on_platform(argv):  # a log file on the grader's machine helps no one there
        what = str(error) if isinstance(error, OlFault) else \
            "".join(traceback.format_exception_only(type(error), error)).strip()
        print(f"ol: {PLATFORM_FAULT.format(what=workspace_module.unrooted(what))}",
              file=sys.stderr)
    else:
        print(f"ol: {fault_paragraph(error, argv)}", file=sys.stderr)
    return ExitCode.INTERNAL


def on_platform(argv: Sequence[str] | None) -> bool:
    """Whether the command grades for a course platform, whose student reads what it says."""
    given = list(sys.argv[1:] if argv is None else argv)
    return "--platform" in given or given[:1] in (["prairielearn"], ["gradescope"])


def fault_paragraph(error: BaseException, argv: Sequence[str] | None) -> str:
    """What ol says of a fault of its own: that it is ol's, and the log to send."""
    what = str(error) if isinstance(error, OlFault) else \
        "".join(traceback.format_exception_only(type(error), error)).strip()
    log = write_fault_log(error, argv)
    where = f"the log {log}" if log else "the lines above"
    return (f"this is a fault of ol itself, not of your work: {what}. Nothing was graded. Run "
            f"the command again; if it fails again, send {where} to the course staff with a bug "
            f"report (it holds the command, ol's version and what failed).")


def write_fault_log(error: BaseException, argv: Sequence[str] | None) -> str:
    """A log of a fault of ol, in the temporary folder; its path, or "" when none was written."""
    text = (f"command: ol {' '.join(sys.argv[1:] if argv is None else argv)}\n"
            f"ol: {ol_version()}\npython: {sys.version.split()[0]}\n\n"
            + "".join(traceback.format_exception(error)))
    try:
        handle, path = tempfile.mkstemp(prefix="ol-fault-", suffix=".log")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError:
        return ""
    return path


if __name__ == "__main__":
    raise SystemExit(main())
