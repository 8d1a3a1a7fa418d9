"""What `ol tdd` and `ol check` decide about a student's workspace, apart from how it is shown.

A check has three stages, each on the engine:

1. the course tests against the student's tree;
2. the student's tests against the correct trees, the reference and two written apart
   from it, each making the contract's open choices its own way (a test that fails on any
   of them is invalid: it asserts something the contract does not say, or sniffs one
   implementation);
3. the student's tests against the planted mutants, counting only valid tests.

A mutant is killed when a valid test fails or errors on it, or its run times out (twice)
or crashes.
"""

from __future__ import annotations

import dataclasses
import enum
import random
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harness.chapter import Chapter
from harness.errors import OlError, OlFault
from harness.grade import catalog, mutation
from harness.grade.course import meets_threshold, references
from harness.grade.scan import Flag, allowed, scan
from harness.grade.workspace import Submission, Workspace, no_tests, stub_source, unrooted
from harness.run.engine import Engine, Slots, cores, run_together
from harness.run.judge import RunResult, Status, TestRecord
from harness.run.layout import Suite

COURSE_LIMIT = 600.0       # seconds for the course suite on a student's tree: slow trees pass
COURSE_TEST_LIMIT = 240.0  # seconds for one course test on it
STUDENT_LIMIT = 300.0      # seconds for the student's tests on a correct tree
STUDENT_TEST_LIMIT = 60.0  # seconds for one of them
RUN_FOLDER = re.compile(r"/\S*?ol-runs-[^/]+/run-[^/]+/(?:test|tree)/")  # a run side's folder
RED = ("NotImplementedError", "AssertionError", "Failed")  # Failed: pytest.fail, pytest.raises

def base_name(record: TestRecord) -> str:
    """The test function's name, without parameters."""
    return record.name.split("[", 1)[0]


def message(record: TestRecord, lines: int = 1) -> str:
    """The failure's own words: its first ``lines`` ``E`` lines, or the text's last lines.

    Cut on a line boundary; when more than one line is asked for and some are left out, a
    last line says how many."""
    said = [line[1:].removeprefix("   ").rstrip() for line in record.text.splitlines()
            if line.startswith("E ")]  # pytest's "E   ", and no more: code keeps its indent
    said = [line for line in said if line] or [
        line.strip() for line in record.text.strip().splitlines()[-lines:]]
    if not said:
        return record.exception or record.outcome
    left = len(said) - lines
    if lines > 1 and left > 0:
        return "\n".join([*said[:lines - 1], f"[... {left + 1} more lines cut]"])
    return "\n".join(said[:lines])


def collection_problem(run: RunResult) -> str:
    said = [line[1:].strip() for line in run.detail.splitlines() if line.startswith("E ")]
    said = [line for line in said if line] or run.detail.strip().splitlines()[-1:]
    where = [line for line in said if line.startswith("File ")]
    text = " ".join(where[-1:] + said[-1:])
    return f"the test file does not import: {RUN_FOLDER.sub('', text)}"


# --- ol tdd red / green ----------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    name: str
    state: str      # red, vacuous, broken, skipped; green, failing
    detail: str = ""


@dataclass(frozen=True)
class TddReport:
    phase: str         # "red" (the tests on the stub) or "green" (on the student's tree)
    rows: tuple[Row, ...]
    problem: str = ""  # why the run as a whole says nothing (a crash, a collection error)

    @property
    def passed(self) -> bool:
        """Every test is in the phase's state, and at least one ran."""
        return (not self.problem and bool(self.rows)
                and all(row.state == self.phase for row in self.rows))

    @property
    def counts(self) -> dict[str, int]:
        """How many tests are in each state, in the order the states first appear."""
        return {state: sum(row.state == state for row in self.rows)
                for state in dict.fromkeys(row.state for row in self.rows)}


Modules = tuple[tuple[str, str], ...]  # (module, text): what an implementation builds on


def their_builds(engine: Engine, submission: Submission, ref_deps: bool = False,
                 progress: Progress | None = None) -> Modules:
    """What the student's own tree builds on: the chapters it needs, as the student wrote
    them (read with the submission), each proven to import and pass its course tests; or
    their references, with ``ref_deps``. OlError, naming the chapter and the two ways on,
    when one falls short."""
    workspace = submission.workspace
    chapter = workspace.chapter
    if ref_deps:
        return references(chapter)
    theirs: list[tuple[str, str]] = []
    own = {needed.id: text for needed, text in submission.builds}
    for needed in chapter.needed:
        path = workspace.root / needed.implementation
        text = own.get(needed.id)
        problem = ""
        if text is None:
            problem = f"there is no {path}"
        else:
            below = tuple(theirs)
            if engine.probe_import(text, needed.contract, below) is not None:
                problem = f"{path} does not import"
            else:
                run = course_run(engine, text, needed, beside=below, progress=progress,
                                 stage=f"{needed.id} course tests")
                if not run.all_passed:
                    failed = len(run.failures) or len(needed.course_test_names)
                    problem = (f"{failed} of its {len(needed.course_test_names)} course tests "
                               f"fail on {path}")
        if problem:
            mine = workspace.shown(path)
            raise OlError(f"needs {needed.id}: build it, or pass --ref-deps ({problem}). "
                          f"`ol check {needed.id}{workspace.option()}` shows what to fix; "
                          f"--ref-deps runs {chapter.id} on the reference {needed.id} "
                          "instead.",
                          platform=f"Not graded: {chapter.id} builds on {needed.id}, and runs "
                          f"on your own {mine}, which must pass {needed.id}'s course tests "
                          f"first ({unrooted(problem.replace(str(path), mine))}). Submit "
                          f"your {mine} beside your {chapter.id} files, then submit again.")
        theirs.append((needed.module, text))
    return tuple(theirs)


def tree_source(engine: Engine, submission: Submission, theirs: Modules = ()) -> str:
    """The student's implementation, after proving in a confined process that it imports
    (with ``theirs``, what it builds on, beside it)."""
    text = submission.tree
    assert text is not None, "a submission read without its tree has no implementation"
    problem = engine.probe_import(text, submission.chapter.contract, theirs)
    if problem is not None:
        raise submission.workspace.does_not_import(problem)
    return text


def run_students_tests(engine: Engine, suite: Suite, workspace: Workspace,
                       implementation: str, trusted: bool) -> RunResult:
    run = engine.run(suite, implementation, timeout=STUDENT_LIMIT, test_limit=STUDENT_TEST_LIMIT,
                    trusted=trusted)
    if run.status is Status.OK and not run.records:
        raise no_tests(workspace)
    return run


def run_problem(run: RunResult) -> str:
    if run.status is Status.COLLECTION_ERROR and "TreeStopped" not in run.detail:
        return collection_problem(run)
    if run.status is not Status.OK:
        return f"the run did not finish ({run.status.value}): {run.detail}"
    return ""


def tdd_red(engine: Engine, submission: Submission) -> TddReport:
    run = run_students_tests(engine, submission.suite(), submission.workspace,
                             stub_source(submission.chapter), trusted=True)
    rows = []
    for record in run.records:
        if record.outcome == "passed":
            rows.append(Row(record.name, "vacuous", "passes on the stub: it checks nothing "
                                                    "the stub gets wrong"))
        elif record.outcome in ("skipped", "xfailed", "xpassed"):
            rows.append(Row(record.name, "skipped", f"{record.outcome}: a test must run to be red"))
        elif record.exception in RED:
            rows.append(Row(record.name, "red", f"{record.exception}"))
        else:
            rows.append(Row(record.name, "broken", message(record)))
    return TddReport("red", tuple(rows), run_problem(run))


def tdd_green(engine: Engine, submission: Submission, ref_deps: bool = False) -> TddReport:
    theirs = their_builds(engine, submission, ref_deps)
    suite = dataclasses.replace(submission.suite(), beside=theirs)
    implementation = tree_source(engine, submission, theirs)
    run = run_students_tests(engine, suite, submission.workspace, implementation,
                             trusted=False)
    rows = tuple(
        Row(record.name, "green") if record.outcome == "passed" else
        Row(record.name, "failing", f"{record.outcome}: {message(record)}"
            if record.broke else f"{record.outcome}: only a pass is green")
        for record in run.records)
    return TddReport("green", rows, run_problem(run))


# --- ol check --------------------------------------------------------------------------------

COURSE_STAGE = "course tests"
CORRECT_STAGE = "your tests on the correct trees"
MUTANT_STAGE = "your tests against the mutants"
CONTROL_STAGE = "the placebo and the correct trees again"


@dataclass(frozen=True)
class Event:
    """A step of a check, for a display: ``done`` of ``total`` in ``stage``; ``subject``
    (a course test, a tree, a mutant) ended with ``outcome`` ("pass", "killed", ...)."""

    stage: str
    done: int
    total: int
    subject: str
    outcome: str

    @property
    def what(self) -> str:
        return " ".join(part for part in (self.subject, self.outcome) if part)


Progress = Callable[[Event], None]


@dataclass(frozen=True)
class Invalid:
    name: str
    where: str      # which correct tree: "the reference", "the second correct tree", ...
    detail: str


@dataclass(frozen=True)
class Rerun:
    """A correct tree run again among the mutants: the student's tests must pass it again."""

    where: str          # which correct tree, as CORRECT_TREES names it
    first: RunResult    # the tests' first run on it
    again: RunResult

    @property
    def newly_failed(self) -> tuple[str, ...]:
        before = {record.name for record in self.first.failures}
        return tuple(record.name for record in self.again.failures if record.name not in before)

    @property
    def stable(self) -> bool:
        return self.again.status is Status.OK and not self.newly_failed


@dataclass(frozen=True)
class TestsGrade:
    """What the student's tests earn: their runs on the correct trees, which of them are
    valid, and which mutants the valid ones kill."""

    chapter: Chapter                        # what the tests are graded by: its rung
    on_reference: RunResult | None = None  # None: the student's tests were not run
    on_others: tuple[tuple[str, RunResult], ...] = ()  # on the other correct trees, by name
    own: RunResult | None = None            # the student's tests on their own tree, measured
    names: tuple[str, ...] = ()             # the student's test names, without parameters
    invalid: tuple[Invalid, ...] = ()
    problem: str = ""                       # why the student's tests cannot be graded at all
    mutants: tuple[mutation.MutantResult, ...] = ()

    @property
    def correct_runs(self) -> tuple[tuple[str, RunResult], ...]:
        """The tests' first run on each correct tree, by name, the reference first."""
        if self.on_reference is None:
            return ()
        return (("the reference", self.on_reference), *self.on_others)

    @property
    def invalid_names(self) -> set[str]:
        return {entry.name for entry in self.invalid}

    def killers(self, result: mutation.MutantResult) -> tuple[str, ...]:
        """The valid tests that failed on the mutant, or how its run ended."""
        return valid_killers(result.run, self.invalid_names)

    def killed(self, result: mutation.MutantResult) -> bool:
        return bool(self.killers(result))

    @property
    def kills(self) -> int:
        return sum(map(self.killed, self.mutants))

    @property
    def missing_names(self) -> tuple[str, ...]:
        return tuple(name for name in self.chapter.required_tests if name not in self.names)

    @property
    def required_survivors(self) -> tuple[str, ...]:
        return tuple(result.mutant.id for result in self.mutants
                     if result.mutant.required and not self.killed(result))

    @property
    def rate_met(self) -> bool:
        return meets_threshold(self.kills, len(self.mutants), self.chapter.threshold_percent)

    @property
    def graded(self) -> bool:
        """The student's tests are valid, so their mutation score counts."""
        return not self.problem and not self.invalid and bool(self.mutants)


@dataclass(frozen=True)
class Check:
    """A whole check, composed of its parts: the course tests on the student's tree, what
    their tests earn, and the static scan's findings (a lint)."""

    course: RunResult
    tests: TestsGrade
    flags: tuple[Flag, ...] = ()

    @property
    def chapter(self) -> Chapter:
        return self.tests.chapter

    @property
    def course_passed(self) -> bool:
        return self.course.all_passed

    @property
    def passed(self) -> bool:
        tests = self.tests
        return (self.course_passed and tests.graded and not tests.missing_names
                and not tests.required_survivors and tests.rate_met)


def valid_killers(run: RunResult, invalid: set[str]) -> tuple[str, ...]:
    """The tests outside ``invalid`` that failed on a tree, or how its run ended."""
    if run.status is not Status.OK:
        return (run.status.value,)
    return tuple(record.name for record in run.failures if record.name not in invalid)


def course_run(engine: Engine, implementation: str, chapter: Chapter,
               cancel: threading.Event | None = None, call_limit: float | None = None,
               progress: Progress | None = None, beside: Modules | None = None,
               stage: str = COURSE_STAGE) -> RunResult:
    """The course tests against a student's tree, shrinking a failure to its steps; each
    test that ends is told to ``progress`` as a step of ``stage``.

    The tree runs in a server of its own and answers the course tests' imports too (the
    contract's constants cross from it), so course tests that do not import on a
    student's tree are that tree's failure: every course test fails, with why. Only when
    they do not import on the reference either is it a fault of ol's installation:
    OlFault, and no grade.
    """
    finished = []
    expected = mutation.course_ids(chapter)

    def ended(nodeid: str, outcome: str) -> None:
        finished.append(nodeid)
        name = nodeid.rsplit("::", 1)[-1].removeprefix("test_")
        progress(Event(stage, len(finished), len(expected), name,
                       "pass" if outcome == "passed" else "FAIL"))

    suite = mutation.course_suite(chapter, "course", proxy=True, call_limit=call_limit)
    if beside is not None:  # the student's tree, on what it builds on
        suite = dataclasses.replace(suite, beside=beside)
    run = engine.run(suite, implementation, timeout=COURSE_LIMIT, test_limit=COURSE_TEST_LIMIT,
                     expected=expected, cancel=cancel,
                     on_test=None if progress is None else ended)
    if run.status is Status.COLLECTION_ERROR:
        require_course_imports(engine, chapter, cancel)
    return run


def require_course_imports(engine: Engine, chapter: Chapter,
                           cancel: threading.Event | None = None) -> None:
    """OlFault, naming the error, unless the course tests import and pass on the reference:
    what tells a tree that breaks their import from an installation of ol that does."""
    run = engine.run(mutation.course_suite(chapter, "verdict", proxy=True),
                     chapter.reference_source(), timeout=COURSE_LIMIT,
                     expected=mutation.course_ids(chapter), cancel=cancel, trusted=True)
    if not run.all_passed:
        said = [line.strip() for line in run.detail.splitlines() if line.strip()]
        raise OlFault("the course tests do not pass on the reference, which is a fault of this "
                      "installation of ol, not of your tree: reinstall it (`pip install -e .` "
                      f"in its checkout). The error ({run.status.value}): "
                      f"{said[-1].removeprefix('E   ') if said else 'none was given'}")


def shuffled(jobs: list) -> list:
    """``jobs`` in an order drawn afresh by each command from the system's randomness, so no
    submission can predict which run comes when. Results are reported by label, in the
    catalog's order, whatever the order they ran in."""
    return random.SystemRandom().sample(jobs, len(jobs))


def check(engine: Engine, submission: Submission, progress: Progress | None = None,
          jobs: int | None = None, refuse_flagged: bool = False,
          ref_deps: bool = False) -> Check:
    """Grade a workspace: course tests on its tree, its tests on correct trees and mutants.

    The course suite runs on a thread of its own while the student's tests run on the
    other cores, and on every core once the course suite has ended (``jobs`` runs at once
    in all): first on the correct trees, then on the mutants, the placebo and the correct
    trees again, in a shuffled order, so a suite that passes a first run and fails
    later ones (it keeps state between runs, or is random) is caught. A test file the
    static scan is a lint: its findings travel with the result as warnings for staff, and
    the file is refused only when ``refuse_flagged``; what keeps a test from reaching a
    tree other than through the proxy is the sandbox, not the scan.
    """
    suite = submission.suite()  # a test file that does not compile stops here, before any run
    theirs = their_builds(engine, submission, ref_deps, progress)
    implementation = tree_source(engine, submission, theirs)
    tests_text = submission.tests
    chapter = submission.chapter
    correct = correct_trees(chapter)
    slots = Slots(jobs or cores())
    cancel = threading.Event()

    def course_then_free() -> RunResult:
        try:
            return course_run(engine, implementation, chapter, cancel, None, progress, theirs)
        finally:
            slots.give_back()

    slots.take()  # the course run's, taken first: it is the longest run
    with ThreadPoolExecutor(max_workers=1) as side:
        course = side.submit(course_then_free)
        try:
            modules = (chapter.module, *(needed.module for needed in chapter.needed))
            flags = tuple(scan(tests_text, modules))
            if flags and refuse_flagged:
                tests = TestsGrade(chapter=chapter, problem=(
                    "the static scan flags your test file (below): a test of this chapter "
                    "builds trees and asserts on what they return, and may import only "
                    f"{allowed(modules)}. Remove what is flagged"))
            else:
                tests = grade_tests(engine, submission.workspace, suite, correct,
                                    implementation, slots, progress, theirs)
            return Check(course=course.result(), tests=tests, flags=flags)
        except BaseException:
            cancel.set()
            raise


def correct_trees(chapter: Chapter) -> tuple[tuple[str, str], ...]:
    """The correct trees a student's tests must pass on: (name, source), the reference
    first."""
    return tuple((where, path.read_text(encoding="utf-8"))
                 for where, path in chapter.correct_trees)


def grade_tests(engine: Engine, workspace: Workspace, suite: Suite,
                correct: tuple[tuple[str, str], ...], own: str, workers: int | Slots,
                progress: Progress | None, theirs: Modules = ()) -> TestsGrade:
    """The student's tests on the ``correct`` trees ((name, source), the reference first)
    and on their ``own``, then, if they are valid, on the mutants."""

    def students(tree: str, mine: bool = False) -> Callable[[threading.Event], RunResult]:
        measured = dataclasses.replace(suite, measure=mine, beside=theirs) if mine else suite
        return lambda cancel: engine.run(measured, tree, timeout=STUDENT_LIMIT,
                                         test_limit=STUDENT_TEST_LIMIT, cancel=cancel,
                                         trusted=not mine)

    trees = (*(where for where, _ in correct), "your tree")
    done = []

    def ran(_: RunResult) -> None:
        done.append(trees[len(done)])
        if progress is not None:
            progress(Event(CORRECT_STAGE, len(done), len(trees), done[-1], ""))

    *on_correct, measured = run_together(
        [*(students(source) for _, source in correct), students(own, mine=True)], workers, ran)
    on_reference = on_correct[0]
    if on_reference.status is Status.OK and not on_reference.records:
        raise no_tests(workspace)
    runs = tuple((where, run) for (where, _), run in zip(correct, on_correct, strict=True))
    first = TestsGrade(
        chapter=workspace.chapter, on_reference=on_reference, on_others=runs[1:], own=measured,
        names=tuple(dict.fromkeys(map(base_name, on_reference.records))),
        invalid=tuple(Invalid(record.name, where, f"{record.outcome}: {message(record)}")
                      for where, run in runs for record in run.failures),
        problem=next((f"on {where}, {run_problem(run)}" for where, run in runs
                      if run.status is not Status.OK), ""))
    if first.problem or all(record.name in first.invalid_names
                            for record in on_reference.records):
        return first  # nothing valid to grade
    mutants, placebo, reruns = run_planted(engine, suite, first, correct, workers, progress,
                                           workspace.chapter)
    return dataclasses.replace(first, mutants=mutants,
                               problem=planted_problem(first, placebo, reruns,
                                                       workspace.chapter))


class Kind(enum.Enum):
    """What a run among the mutants is run on."""

    MUTANT = "a planted mutant"
    PLACEBO = "the placebo"
    AGAIN = "a correct tree again"


@dataclass(frozen=True)
class Planted:
    """One run among the mutants: the student's tests on a planted mutant, on the placebo,
    or on a correct tree again."""

    kind: Kind
    label: str                             # the mutant's id, "placebo", or the tree's name
    run: RunResult
    mutant: catalog.Mutant | None = None   # the planted mutant (Kind.MUTANT only)


def run_planted(engine: Engine, suite: Suite, first: TestsGrade,
                correct: tuple[tuple[str, str], ...], workers: int | Slots,
                progress: Progress | None,
                chapter: Chapter,
                ) -> tuple[tuple[mutation.MutantResult, ...], RunResult, tuple[Rerun, ...]]:
    """The planted mutants, the placebo and the correct trees again, in an order no
    submission can know: (the mutants' results in catalog order, the placebo's run, the
    reruns)."""
    reference = correct[0][1]
    first_runs = dict(first.correct_runs)
    expected = [record.nodeid for record in first.on_reference.records]
    limits = mutation.Limits.from_reference(first.on_reference)

    def tree(kind: Kind, label: str, source: str) -> Callable[[threading.Event], Planted]:
        return lambda cancel: Planted(kind, label, mutation.run_limited(
            engine, suite, source, limits, expected, cancel))

    def mutant(planted: catalog.Mutant) -> Callable[[threading.Event], Planted]:
        return lambda cancel: Planted(Kind.MUTANT, planted.id, mutation.run_mutant(
            engine, suite, planted, limits, expected, cancel).run, planted)

    planted = catalog.load_catalog(chapter)
    jobs = [*(mutant(one) for one in planted),
            tree(Kind.PLACEBO, "placebo", mutation.placebo(reference, chapter)),
            *(tree(Kind.AGAIN, where, source) for where, source in correct)]
    finished = {MUTANT_STAGE: 0, CONTROL_STAGE: 0}
    totals = {MUTANT_STAGE: len(planted), CONTROL_STAGE: len(jobs) - len(planted)}

    def said(done: Planted) -> None:
        if done.kind is Kind.MUTANT:
            killed = first.killed(mutation.MutantResult(done.mutant, done.run))
            stage, subject, outcome = (MUTANT_STAGE, f"mutant {done.label}",
                                       "killed" if killed else "survived")
        elif done.kind is Kind.PLACEBO:
            killed = bool(valid_killers(done.run, first.invalid_names))
            stage, subject, outcome = (CONTROL_STAGE, "the placebo (every method raises)",
                                       "killed" if killed else "passed")
        else:
            same = Rerun(done.label, first_runs[done.label], done.run).stable
            stage, subject, outcome = (CONTROL_STAGE, f"{done.label} again:",
                                       "as before" if same else "NOT")
        finished[stage] += 1
        if progress is not None:
            progress(Event(stage, finished[stage], totals[stage], subject, outcome))

    ran = run_together(shuffled(jobs), workers, said)
    by_kind = {kind: {one.label: one for one in ran if one.kind is kind} for kind in Kind}
    again = by_kind[Kind.AGAIN]
    reruns = tuple(Rerun(where, run, again[where].run) for where, run in first.correct_runs)
    mutants = by_kind[Kind.MUTANT]
    return (tuple(mutation.MutantResult(one, mutants[one.id].run) for one in planted),
            by_kind[Kind.PLACEBO]["placebo"].run, reruns)


def planted_problem(first: TestsGrade, placebo: RunResult, reruns: tuple[Rerun, ...],
                    chapter: Chapter) -> str:
    """Why the mutants' results cannot be trusted: flaky tests, or tests that never reach the
    tree; "" when they can."""
    for rerun in reruns:
        if not rerun.stable:
            said = ", ".join(map(short_name, rerun.newly_failed)) or rerun.again.status.value
            return (f"your tests passed on {rerun.where} once and failed on it when run "
                    f"again ({said}): they are flaky (they keep state between runs or are "
                    "random), so no grade can rest on them")
    if not valid_killers(placebo, first.invalid_names):
        return ("your tests pass on a tree whose every method raises: they never reach "
                f"{chapter.module}, so they cannot grade it")
    return ""


def short_name(name: str) -> str:
    return name.removeprefix("test_")
